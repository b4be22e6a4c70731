"""The one profile rule: which reducer behaviour `run`, `replay` and `conformance` model.

In order, the first that applies (docs/profiles.md, "Which profile a command uses"):

1. `--profile` (conformance also takes its old spelling `--version`);
2. for `replay`, the profile the finding records (a finding is data: it replays as it was found);
3. the spec folder's CHANGELOG (`--spec` / `$AHP_SPEC_DIR`): the newest released version, and
   when a newer one is listed as Unreleased, "main after that release" (`0.7.0-main`);
4. the CHANGELOG of the `ts:` target's checkout;
5. the version the adapter announces (`profile`, else `protocolVersion`, in its first line);
6. the pinned version.

A profile is not a bug: when the target announces a different profile than the one in use,
the command says so when it starts (`mismatch`), so that a difference in behaviour is read
against the right rules.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from harness.spec.specdir import SpecDir, SpecDirError
from harness.spec.versions import KNOWN_VERSIONS, PINNED_VERSION, format_version

from .profile import NAMED_PROFILES, Profile, unknown_profile


@dataclass(frozen=True)
class ProfileChoice:
    profile: Profile
    why: str  # e.g. "CHANGELOG of /…/0.7.0: 0.7.0 released, 0.8.0 pending …"
    source: str  # "--profile" | "finding" | "spec" | "checkout" | "announcement" | "pinned"


def from_changelog(spec: SpecDir) -> tuple[Profile, str] | None:
    """The profile a spec folder's CHANGELOG implies, and why; None without a CHANGELOG."""
    release = spec.release
    if release.released is None:
        return None
    released = format_version(release.released)
    if released not in KNOWN_VERSIONS:  # a version without rules is a usage error, not a silent profile
        raise ValueError(unknown_profile(released, f"version in the CHANGELOG of {spec.path}:")
                         + ": pass --profile with one of them")
    base = Profile.for_version(release.released)
    if release.pending is not None and release.pending >= (0, 8, 0) > release.released:
        return (
            replace(base, client_execution_blocks=False),
            f"CHANGELOG of {spec.path}: {format_version(release.released)} released, "
            f"{format_version(release.pending)} pending — main after the release, so the "
            "0.8.0 InputNeeded rule (§7b row 10) is on",
        )
    return base, f"CHANGELOG of {spec.path}: {format_version(release.released)}"


def announced(announcement: Mapping[str, Any] | None) -> str | None:
    """The profile (or version) an adapter announces, if any."""
    if not announcement:
        return None
    for key in ("profile", "protocolVersion"):
        v = announcement.get(key)
        if isinstance(v, str) and v:
            return v
    return None


def choose_profile(
    explicit: str | None = None,
    *,
    recorded: str | None = None,
    spec: SpecDir | None = None,
    target: str | None = None,
    announcement: Mapping[str, Any] | None = None,
) -> ProfileChoice:
    """Apply the rule. Raises ValueError for a profile name that does not exist."""
    if explicit:
        return ProfileChoice(Profile.named(explicit), f"--profile {explicit}", "--profile")
    if recorded:
        return ProfileChoice(Profile.named(recorded), f"recorded in the finding ({recorded})", "finding")
    if spec is not None:
        found = from_changelog(spec)
        if found is not None:
            return ProfileChoice(found[0], found[1], "spec")
    checkout = _checkout(target)
    if checkout is not None:
        found = from_changelog(checkout)
        if found is not None:
            return ProfileChoice(found[0], found[1], "checkout")
    said = announced(announcement)
    if said is not None:
        if said not in NAMED_PROFILES:
            raise ValueError(unknown_profile(said, "profile announced by the target:") + ": pass --profile with one of them")
        return ProfileChoice(Profile.named(said), f"announced by the target ({said})", "announcement")
    folders = [f for f in (spec, checkout) if f is not None]
    if folders:  # a folder was given, and its CHANGELOG names no released version: say so
        unread = " and ".join(dict.fromkeys(_changelog_words(f) for f in folders))
        why = f"pinned {PINNED_VERSION}: {unread} (and no --profile or announcement)"
    else:
        why = f"pinned {PINNED_VERSION} (no --profile, spec folder, checkout CHANGELOG or announcement)"
    return ProfileChoice(Profile.named(PINNED_VERSION), why, "pinned")


def _changelog_words(folder: SpecDir) -> str:
    """Why a spec folder's CHANGELOG chose no profile, in words."""
    if not (folder.path / "CHANGELOG.md").is_file():
        return f"the spec folder {folder.path} has no CHANGELOG.md"
    return f"the CHANGELOG of {folder.path} names no released version"


def mismatch(choice: ProfileChoice, announcement: Mapping[str, Any] | None) -> str | None:
    """A line to print when the target announces another profile than the one in use."""
    said = announced(announcement)
    if said is None:
        return None
    try:
        theirs = Profile.named(said)
    except ValueError:
        return f"note: the target announces profile {said!r}, which this harness does not know; modelling {choice.profile.label} ({choice.why})"
    if theirs == choice.profile or (said == announcement.get("protocolVersion") and theirs.version == choice.profile.version and "profile" not in announcement):  # type: ignore[union-attr]
        return None
    return (
        f"note: the target announces profile {theirs.label} but this run models {choice.profile.label} "
        f"({choice.why}); differences between the two profiles are not bugs — pass --profile to choose"
    )


def _checkout(target: str | None) -> SpecDir | None:
    if not target or not target.strip().startswith("ts:"):
        return None
    try:
        return SpecDir(target.strip()[3:])
    except SpecDirError:
        return None
