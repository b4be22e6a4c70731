"""Hypothesis strategies for AHP: URIs, attachments, messages, states, actions, sequences, schema."""
