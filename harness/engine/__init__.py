"""Stateful machines, differential stepping and campaign orchestration."""
