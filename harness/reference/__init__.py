"""The executable reference model: pure AHP reducers over plain JSON dicts.

Public surface: `reduce`, `Model`, `Profile`, `MalformedAction`, plus `status` helpers and
`collections` (the collection-attachment draft).
"""

from .dispatch import NO_STATE_EFFECT, TABLES, MalformedAction, Model, reduce
from .profile import DEFAULT_PROFILE, Ctx, Profile, iso_ms

__all__ = ["DEFAULT_PROFILE", "NO_STATE_EFFECT", "TABLES", "Ctx", "MalformedAction", "Model", "Profile", "iso_ms", "reduce"]
