"""What a reducer run is configured by: the negotiated version and the version-gated rules."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from harness.spec.versions import (
    KNOWN_VERSIONS,
    PINNED_VERSION,
    Version,
    format_version,
    parse_version,
)

JSON = Any
State = dict[str, Any]
Action = Mapping[str, Any]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_PINNED: Version = parse_version(PINNED_VERSION)


#: The reducer rules that changed with a version, as data: rule -> (value before, the version
#: that changed it, value since). `Profile.for_version` reads them; a handler asks its rule by
#: name (`ctx.profile.durable_turn_errors`), never a version number. docs/profiles.md.
VERSION_RULES: dict[str, tuple[bool, str, bool]] = {
    # §7b row 10: inputNeeded entries of kind toolClientExecution do not raise InputNeeded.
    "client_execution_blocks": (True, "0.8.0", False),
    # 0.8.0: `session/customizationToggled {id, enablement[]}` replaces the decision set.
    "customization_enablement": (False, "0.8.0", True),
    # 0.9.0: chat `modifiedAt` derives from action data (turnStarted → startedAt; a turn's end →
    # startedAt + duration), never from the clock; other chat actions leave it alone.
    "clock_from_actions": (False, "0.9.0", True),
    # 0.9.0: `Turn.error` gone; `chat/error {part}` appends a durable ErrorResponsePart,
    # `chat/responsePart` cannot append one, `chat/turnResume` reopens a resumable turn.
    "durable_turn_errors": (False, "0.9.0", True),
    # 0.9.0: SessionLifecycle `creationFailed` renamed `failed`.
    "failed_lifecycle": (False, "0.9.0", True),
    # 0.9.0: terminal `lifecycle {status: running|exited, exitCode?}` replaces `exitCode`.
    "terminal_lifecycle": (False, "0.9.0", True),
    # 0.9.0: annotations carry `origin {session, chat?, turnId?}` instead of `turnId`.
    "annotation_origin": (False, "0.9.0", True),
    # 0.9.0 removed `error` from `changeset/contentChanged` (the state's error is kept).
    "changeset_content_error": (True, "0.9.0", False),
}


def rules_for(version: Version) -> dict[str, bool]:
    """Every rule of `VERSION_RULES` as it stands in `version`."""
    return {name: (since if version >= parse_version(v) else before)
            for name, (before, v, since) in VERSION_RULES.items()}


@dataclass(frozen=True)
class Profile:
    """The reducer behaviour to model.

    `version` is the negotiated protocol version: an action type introduced later is unknown
    (a no-op). The other fields are the rules of `VERSION_RULES` — each one what a version
    changed — so a named snapshot between releases (`0.7.0-main`) can take one rule early.
    """

    version: Version = _PINNED
    client_execution_blocks: bool = True
    #: `session/workingDirectoryReplaced` when `replacement` already sits before `directory`:
    #: True = released 0.8.0 (the earlier entry keeps its place, so index 0 cannot move);
    #: False = the pre-release draft at proposal commit c840a57 (fixture 270: the replacement
    #: takes the target's position and the earlier entry is removed).
    replace_keeps_earlier: bool = True
    customization_enablement: bool = False
    clock_from_actions: bool = False
    durable_turn_errors: bool = False
    failed_lifecycle: bool = False
    terminal_lifecycle: bool = False
    annotation_origin: bool = False
    changeset_content_error: bool = True

    @classmethod
    def for_version(cls, version: str | Version) -> Profile:
        v = parse_version(version) if isinstance(version, str) else version
        return cls(version=v, **rules_for(v))

    @classmethod
    def named(cls, name: str) -> Profile:
        """A profile by name: one of `NAMED_PROFILES` (`0.7.0`, `0.7.0-main`, …). A version the
        harness has no rules for (`9.9.9`, `0.5.0`) is a ValueError naming the ones it has: never
        a silent profile (issue 23)."""
        if name in NAMED_PROFILES:
            return NAMED_PROFILES[name]
        raise ValueError(unknown_profile(name))

    @property
    def label(self) -> str:
        for name, p in NAMED_PROFILES.items():
            if p == self:
                return name
        text = format_version(self.version)
        if self.client_execution_blocks != (self.version < (0, 8, 0)):
            text += "+exec-rule-0.8" if not self.client_execution_blocks else "+exec-rule-0.7"
        if not self.replace_keeps_earlier:
            text += "+replace-draft"
        usual = rules_for(self.version)
        for name in VERSION_RULES:
            if name != "client_execution_blocks" and getattr(self, name) != usual[name]:
                text += f"+{name}={'on' if getattr(self, name) else 'off'}"
        return text

    def at_least(self, version: str) -> bool:
        return self.version >= parse_version(version)

    def rule(self, name: str) -> bool:
        """The value of a `VERSION_RULES` rule in this profile."""
        return bool(getattr(self, name))


DEFAULT_PROFILE = Profile.for_version(PINNED_VERSION)

#: Named profiles: the released versions, plus two snapshots the spec data comes from.
NAMED_PROFILES: dict[str, Profile] = {
    **{v: Profile.for_version(v) for v in KNOWN_VERSIONS},
    # Upstream main just after the 0.7.0 release (the 0.7.0 spec folder): 0.7.0 plus the
    # queued 0.8.0 InputNeeded rule (REDUCERS.md §7b row 10).
    "0.7.0-main": Profile(version=parse_version("0.7.0"), client_execution_blocks=False),
    # The 0.8.0 draft at proposal commit c840a57 (fixture 270), before the released fix.
    "0.8.0-c840a57": replace(
        Profile.for_version("0.8.0"), replace_keeps_earlier=False
    ),
}


def unknown_profile(name: str, what: str = "profile") -> str:
    """The one line for a profile or version without rules here (`what`: where it came from)."""
    try:
        parse_version(name)
        kind = "a version ahp-fuzz has no reducer rules for"
    except ValueError:
        kind = "not a version or profile name"
    return (f"unknown {what} {name!r} ({kind}): the versions with rules are {', '.join(KNOWN_VERSIONS)} "
            f"(named profiles also {', '.join(n for n in NAMED_PROFILES if n not in KNOWN_VERSIONS)})")


_log = logging.getLogger("harness.reference")


@dataclass(frozen=True, slots=True)
class Ctx:
    """Everything a reducer may read besides state and action: the injected clock and profile."""

    now_ms: int
    profile: Profile = DEFAULT_PROFILE
    warn: Callable[[str], None] = field(default=_log.debug)

    @property
    def now_iso(self) -> str:
        return iso_ms(self.now_ms)


def iso_ms(now_ms: int) -> str:
    """ISO-8601 UTC with exactly three fractional digits and `Z` (e.g. 1970-01-01T00:00:09.999Z)."""
    t = _EPOCH + timedelta(milliseconds=now_ms)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


Handler = Callable[[State, Action, Ctx], State]


def no_state_effect(handler: Handler) -> Handler:
    """Marks a reducer the spec gives no effect on the state (a request the host answers with
    other actions, a side effect such as keystrokes): its action is never *effective*, and a
    run's coverage says so instead of counting it as unreached."""
    handler.no_state_effect = True  # type: ignore[attr-defined]
    return handler
#: (rule of `VERSION_RULES`, its value) -> action type -> the handler in force then.
RuleHandlers = dict[tuple[str, bool], dict[str, Handler]]


def merge_rule_handlers(*tables: RuleHandlers) -> RuleHandlers:
    """One `RuleHandlers` table from several channel modules' (the same rule may appear in each)."""
    out: RuleHandlers = {}
    for table in tables:
        for key, handlers in table.items():
            out[key] = {**out.get(key, {}), **handlers}
    return out
