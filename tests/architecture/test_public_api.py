"""The public surface: lazy top-level imports, the documented entry points, and the local demo end to end."""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import pytest_pibench

ROOT = Path(__file__).resolve().parents[2]


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)


VERSIONS = {"BENCHMARK_VERSION", "__version__"}


def top_level_assignments(module_file: str | None) -> set[str]:
    assert module_file is not None
    tree = ast.parse(Path(module_file).read_text(encoding="utf-8"))
    targets = [t for node in tree.body if isinstance(node, ast.Assign) for t in node.targets]
    targets += [node.target for node in tree.body if isinstance(node, ast.AnnAssign)]
    return {t.id for t in targets if isinstance(t, ast.Name)}


def submodule_names() -> set[str]:
    return {info.name for info in pkgutil.iter_modules(pytest_pibench.__path__)}


def test_all_is_the_export_table_plus_the_versions():
    assert len(pytest_pibench.__all__) == len(set(pytest_pibench.__all__))
    assert set(pytest_pibench.__all__) == set(pytest_pibench._EXPORTS) | VERSIONS
    assert sorted(dir(pytest_pibench)) == sorted(pytest_pibench.__all__)


def test_every_table_entry_names_the_module_that_defines_the_object():
    for name, where in pytest_pibench._EXPORTS.items():
        module = importlib.import_module(f"pytest_pibench.{where}")
        value = getattr(module, name)
        if inspect.isclass(value) or inspect.isfunction(value):
            assert value.__module__ == module.__name__, f"{name} is defined in {value.__module__}, not {where}"
        else:  # a constant: bound by an assignment in that module, not imported into it
            assert name in top_level_assignments(module.__file__), f"{name} is not assigned in {where}"
        if name not in submodule_names():  # a name shared with a submodule: see the test below
            assert getattr(pytest_pibench, name) is value, name


def test_no_exported_name_is_also_a_submodule_name():
    """A submodule named like an exported function would replace it on the package once imported."""
    assert set(pytest_pibench._EXPORTS).isdisjoint(submodule_names())


def test_the_type_checking_imports_are_the_export_table():
    """Type checkers see the lazy names through the ``TYPE_CHECKING`` block: it must say what the table says."""
    tree = ast.parse(Path(pytest_pibench.__file__).read_text(encoding="utf-8"))
    (block,) = [
        node for node in tree.body
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"
    ]
    seen: dict[str, str] = {}
    for node in block.body:
        assert isinstance(node, ast.ImportFrom) and node.module, ast.dump(node)
        for alias in node.names:
            assert alias.asname == alias.name, f"{alias.name}: write 'import {alias.name} as {alias.name}'"
            seen[alias.name] = node.module.removeprefix("pytest_pibench.")
    assert seen == pytest_pibench._EXPORTS


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        pytest_pibench.no_such_name  # noqa: B018


def test_documented_engine_imports_work_in_a_fresh_process():
    out = run_python(
        "from pytest_pibench import load_scenario, run_episode, evaluate, compute_metrics\n"
        "print(load_scenario.__module__, run_episode.__module__, evaluate.__module__, compute_metrics.__module__)"
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [
        "pytest_pibench.scenario.loading", "pytest_pibench.run.episode", "pytest_pibench.evaluation",
        "pytest_pibench.results.metrics",
    ]


def test_importing_the_package_is_light():
    out = run_python(
        "import sys, pytest_pibench\n"
        "heavy = [m for m in ('pydantic', 'litellm', 'a2a', 'rich', 'docstring_parser') if m in sys.modules]\n"
        "print(heavy)"
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


@pytest.mark.slow
def test_local_demo_runs_oracle_and_baselines_and_prints_metrics(tmp_path):
    artifact = tmp_path / "leaderboard.json"
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "local_demo" / "run_demo.py"), "--leaderboard", str(artifact)],
        capture_output=True, text=True, cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    lines = {
        line.split()[0]: line.split() for line in out.stdout.splitlines() if line.startswith(("oracle", "baseline"))
    }
    assert set(lines) == {"oracle", "baseline:allow", "baseline:deny", "baseline:escalate", "baseline:silent"}
    oracle = lines["oracle"]
    assert oracle[2] == "0" and oracle[3] == "1.00"  # no errors, full compliance
    assert lines["baseline:silent"][3] == "0.00"
    board = json.loads(artifact.read_text())
    result = board["results"][0]
    assert board["participants"] == {"agent": "oracle"}
    assert result["metrics"]["compliance_rate"] == 1.0
    assert result["max_score"] == len(result["scenario_details"]) >= 3
    assert '"overall_score"' in out.stdout


def test_a_saved_transcript_rescores_identically(tmp_path):
    from conftest import TOY_ALLOW
    from pytest_pibench import evaluate, load_scenario, run_one

    row = run_one(TOY_ALLOW, "baseline:allow")
    saved = json.loads(json.dumps(row["transcript"]))  # as read back from a results file
    again = evaluate(load_scenario(TOY_ALLOW), saved)
    rescored = [{**c.to_dict(), "tier": c.tier, "dimension": c.dimension} for c in again.outcome_results]
    assert rescored == row["outcome_checks"]
    assert again.event_flags == row["event_flags"] and again.all_passed == row["all_passed"]
