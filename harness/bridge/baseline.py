"""The baseline every command example starts from: two sessions the fixture gives a folder each.

Shared by the fixture (its generation hints name them) and the command fuzzer (it creates them
and resets to them), so neither imports the other for it.
"""

from __future__ import annotations

BASELINE_SESSIONS = ("ahp-session:/base-alpha", "ahp-session:/base-beta")
