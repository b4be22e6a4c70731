"""Protocol facts: versions, the action registry, and loading a spec directory."""
