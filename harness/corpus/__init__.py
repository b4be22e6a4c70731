"""Findings as data: the versioned JSON format and the atomic, de-duplicating store."""
