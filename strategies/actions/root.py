"""State-aware builders for the root channel (agents, active sessions, terminals, config)."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from hypothesis import strategies as st

from .. import states as sts
from .. import uris
from .._common import non_negative_ints, obj, short_text
from ._base import Builder
from .session import config_changed, simple

ROOT_BUILDERS: Final[Mapping[str, Builder]] = MappingProxyType(
    {
        "root/agentsChanged": simple(
            "root/agentsChanged", agents=st.lists(sts.agent_infos(), max_size=2)
        ),
        "root/activeSessionsChanged": simple(
            "root/activeSessionsChanged", activeSessions=non_negative_ints(20)
        ),
        "root/terminalsChanged": simple(
            "root/terminalsChanged",
            terminals=st.lists(
                obj(
                    {
                        "resource": st.sampled_from(uris.TERMINAL_URIS),
                        "title": short_text(6),
                        "claim": sts.terminal_claims(),
                    },
                    {"exitCode": st.integers(0, 2)},
                ),
                max_size=2,
            ),
        ),
        "root/configChanged": config_changed("root/configChanged"),
    }
)
