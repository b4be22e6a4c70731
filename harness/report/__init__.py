"""Run reports: JSON, JUnit XML and self-contained HTML."""
