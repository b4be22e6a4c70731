"""The embedded reference host (the default live target)."""
