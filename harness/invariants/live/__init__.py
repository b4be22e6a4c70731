"""The live checks: wire and live-host properties a reducer step cannot show (docs/live.md).

* `catalogue` — their catalogue entries (INV-041…048, 052, the INV-H… wild-host additions): id,
  severity, source, statement; the registry collects them like every catalogue module;
* `base` — what a live run records (`LiveObservation`, `ClientView`, `Envelope`, `Dispatch`, …);
* `checks` — `LIVE_CHECKS` and `check_live`, the one entry point the live machine calls;
* `wire`, `state`, `scenarios`, `handshake` — the check functions, one module per idea.

This package imports nothing at import time: the registry imports `catalogue`, and `checks`
looks the entries up in the registry.
"""
