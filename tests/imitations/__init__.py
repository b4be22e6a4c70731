"""Two imitation adapters for the conformance matrix (issue 26): small reducer implementations
that share one root cause and differ in another (docs/matrix.md)."""
