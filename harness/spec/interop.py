"""What every conformant implementation must accept on the wire: the valid lane's value rules.

A valid-lane step is one every conformant implementation must accept (docs/profiles.md, "The
null policy and the valid lane"). The schema alone does not say enough, because JSON leaves
some values to the parser:

* **Integers within ±(2⁵³−1).** RFC 8259 §6 and I-JSON (RFC 7493 §2.2): integers beyond that
  range are not interoperable. Every JavaScript implementation reads 9007199254740993 as
  9007199254740992 before its reducer runs.
* **No integral float** (`88.0`) where an integer is meant: a JSON parser may keep it a float
  (Python), make it an integer (JavaScript) or refuse it for an integer field (typed decoders).
  Such a value is sent only as a labelled probe (`integral_floats` and `as_integers`): refusing
  `1.0` is a real, low-severity finding, reported once.
* **No `null` the schema does not allow.** The reducers read `null` as absent (the fixtures'
  rule, REDUCERS.md §7), but on the wire `null` and absent differ: a typed decoder stores a
  nil, a TypeScript reducer keeps the literal. Only a schema can say where `null` is allowed
  (`JsonPrimitive` values); `ActionSchema.wire_problem` checks the raw payload.

`scan(value)` walks a value once for both: the first integer or float that breaks the first two
rules, and whether it holds a `null` at all (the stepper asks it of every step's action).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

from harness.diff import fmt_path

#: The largest integer magnitude every JSON implementation reads exactly (2⁵³−1).
MAX_SAFE_INTEGER: Final = 2**53 - 1

Path = tuple[Any, ...]


def _leaves(value: Any, path: Path = ()) -> Iterator[tuple[Path, Any]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _leaves(v, (*path, i))
    else:
        yield path, value


def render_path(path: Path) -> str:
    return fmt_path(path, "")


def scan(value: Any) -> tuple[str | None, bool]:
    """(the first integer beyond ±(2⁵³−1) or integral float in `value`, in words — None: none;
    whether `value` holds a `null`), in one walk."""
    problem: str | None = None
    null = False
    for path, v in _leaves(value):
        if v is None:
            null = True
        elif problem is None and not isinstance(v, bool):
            if isinstance(v, int) and abs(v) > MAX_SAFE_INTEGER:
                problem = f"{render_path(path)}: integer {v} beyond ±(2^53−1) (RFC 8259 §6, I-JSON)"
            elif isinstance(v, float) and v.is_integer():
                problem = f"{render_path(path)}: integral float {v!r} (sent only as a labelled probe)"
        if problem is not None and null:
            break
    return problem, null


def number_problem(value: Any) -> str | None:
    """The first integer beyond ±(2⁵³−1) or integral float in `value`, in words (None: none)."""
    return scan(value)[0]


def has_null(value: Any) -> bool:
    """Some value in `value` is JSON `null` (a list item or an object's value)."""
    return any(v is None for _, v in _leaves(value))


def integral_floats(value: Any) -> list[Path]:
    """The paths of the integral floats in `value` (`1.0`, `88.0`)."""
    return [p for p, v in _leaves(value) if isinstance(v, float) and v.is_integer()]


def non_finite(value: Any) -> list[Path]:
    """The paths of `NaN`, `Infinity` and `-Infinity` in `value` (no JSON number: I-JSON §2.2)."""
    return [p for p, v in _leaves(value) if isinstance(v, float) and (v != v or v in (float("inf"), float("-inf")))]


def as_integers(value: Any) -> Any:
    """`value` with every integral float an integer (`1.0` → `1`): what the float probe means."""
    if isinstance(value, dict):
        return {k: as_integers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [as_integers(v) for v in value]
    if isinstance(value, float) and value.is_integer() and abs(value) <= MAX_SAFE_INTEGER:
        return int(value)
    return value
