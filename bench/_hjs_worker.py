"""Measure hypothesis-jsonschema on a set of definitions (run by bench_strategies.py).

Runs in a *separate* virtualenv that has `hypothesis-jsonschema` (it is not a project
dependency): ``<venv>/bin/python bench/_hjs_worker.py DEFS.json OUT.json --examples N --budget S``.
DEFS.json is ``{"draft": ..., "defs": {...}, "names": [...]}``; OUT.json gets one record per name:
``{"ok", "examples", "first_s", "rate", "invalid", "error"}``. Standard library + hypothesis,
hypothesis-jsonschema and jsonschema only.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import time
from typing import Any


def measure(schema: dict[str, Any], n: int, budget: float) -> dict[str, Any]:
    import jsonschema
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis_jsonschema import from_schema

    validator = jsonschema.Draft202012Validator(schema)
    times: list[float] = []
    invalid = 0
    start = time.perf_counter()
    try:
        strategy = from_schema(schema)

        @settings(
            max_examples=n,
            database=None,
            deadline=None,
            suppress_health_check=list(HealthCheck),
            derandomize=True,
            phases=[Phase.generate],
        )
        @given(strategy)
        def run(value: Any) -> None:
            nonlocal invalid
            times.append(time.perf_counter())
            if not validator.is_valid(value):
                invalid += 1
            if time.perf_counter() - start > budget:
                raise TimeoutError

        with contextlib.suppress(TimeoutError):
            run()
    except Exception as e:  # record why the engine cannot generate this definition
        return {
            "ok": False,
            "examples": len(times),
            "error": f"{type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''}",
        }
    if not times:
        return {"ok": False, "examples": 0, "error": "no example"}
    first = times[0] - start
    rate = (
        (len(times) - 1) / (times[-1] - times[0])
        if len(times) > 1 and times[-1] > times[0]
        else None
    )
    return {
        "ok": True,
        "examples": len(times),
        "first_s": first,
        "rate": rate,
        "invalid": invalid,
        "error": None,
    }


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("defs")
    p.add_argument("out")
    p.add_argument("--examples", type=int, default=20)
    p.add_argument("--budget", type=float, default=8.0)
    args = p.parse_args()
    with open(args.defs, encoding="utf-8") as f:
        spec = json.load(f)
    out = {}
    for name in spec["names"]:
        schema = {"$schema": spec["draft"], "$defs": spec["defs"], "$ref": f"#/$defs/{name}"}
        out[name] = measure(schema, args.examples, args.budget)
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(out, f)


if __name__ == "__main__":
    main()
