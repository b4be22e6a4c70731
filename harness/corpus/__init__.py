"""Findings: the versioned JSON format, the store and replay."""
