"""Root causes: what a target did, whichever invariant noticed it (docs/corpus.md, "Root causes").

A run reports one finding per root cause. The room speaks one vocabulary:

* **transformation** — the identity of a cause: what the target did to a value or an action
  (an int32 wrap, an empty value lost, a type turned into another, an action not applied …),
  never where it showed. `transformation.py` classifies the differences a step made between
  the model's state and the target's (`StepView`, `classify`), a target failure by its error
  class and a check by what its message says; `Cause` is the identity, hashed into `Cause.id`.
* **witnesses** — the invariants, action types and state kinds that noticed a cause, and how
  often (`Witnesses`, written with the cause as `cause_json`).
* **consequences** — what follows from an earlier cause is not a cause of its own: a difference
  inherited from an earlier step, a derived field that follows from another difference, a probe
  check that stays silent on the model's state (re-judged with the target's reducer); a target
  error the target does not show on the model's state is owed to an earlier cause too (the
  stepper asks, harness/engine/stepper.py). `signing.py` signs each violation with the cause it witnesses
  (`violation_cause`, `violation_causes`, `rejudger`), knowing which invariants are probe checks
  and which pseudo-invariants are target failures (`FAILURES`), and which causes are a note of
  the run rather than a finding (`NOTES`).

The fuzz machine, the campaign and replay all sign here, so a finding replays under the very
identity it was reported with. The room sits between the engine and the invariants: it reads
the invariants, `harness.targets.base`, `harness.spec` and `harness.diff`; the engine imports
it; it never imports the engine, the live half, a reporter or the command line, and the corpus
(findings as data) does not import it (tests/test_layering.py).
"""

from .signing import (
    ECHO_TYPE,
    FAILURES,
    NOTE_ISSUES,
    NOTES,
    SEVERITY_RANK,
    Rejudge,
    armed,
    rejudger,
    schema_modelled,
    violation_cause,
    violation_causes,
)
from .transformation import (
    DERIVED,
    MAX_DIFFS,
    PRIORITY,
    UNMODELLED,
    Cause,
    StepView,
    Witnesses,
    action_type,
    apply_differences,
    at_path,
    cause_json,
    check_cause,
    classify,
    error_class,
    failure_cause,
    key_name,
    message_presence,
    message_shape,
)

__all__ = [
    "DERIVED",
    "ECHO_TYPE",
    "FAILURES",
    "MAX_DIFFS",
    "NOTES",
    "NOTE_ISSUES",
    "PRIORITY",
    "SEVERITY_RANK",
    "UNMODELLED",
    "Cause",
    "Rejudge",
    "StepView",
    "Witnesses",
    "action_type",
    "apply_differences",
    "armed",
    "at_path",
    "cause_json",
    "check_cause",
    "classify",
    "error_class",
    "failure_cause",
    "key_name",
    "message_presence",
    "message_shape",
    "rejudger",
    "schema_modelled",
    "violation_cause",
    "violation_causes",
]
