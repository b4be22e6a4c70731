"""The invariant catalogue: each check has an id (INV-nnn), severity, scope and spec source."""
