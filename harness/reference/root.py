"""Root channel reducer (`ahp-root://`, REDUCERS.md §3)."""

from __future__ import annotations

from .config import config_changed
from .keyed import field_handler
from .profile import Handler

HANDLERS: dict[str, Handler] = {
    "root/agentsChanged": field_handler("agents"),
    "root/activeSessionsChanged": field_handler("activeSessions"),
    "root/terminalsChanged": field_handler("terminals"),
    "root/configChanged": config_changed,
}
