"""``pytest --pibench-agent=a2a:<url>`` end to end: pytest-xdist workers assess a purple agent served here."""

from __future__ import annotations

import json
from typing import Any

import pytest
from a2a_servers import bundled, serve  # skips this module without the a2a extra


def bundled_count(domain: str) -> int:
    """How many scenarios of ``domain`` ship (the set grows; the tests should not need editing when it does)."""
    from pytest_pibench.paths import bundled_scenarios_dir
    from pytest_pibench.scenario.loading import discover_scenarios

    return sum(1 for f in discover_scenarios(bundled_scenarios_dir()) if domain in f.parts)


@pytest.mark.parametrize("extra", [["-n", "2"], ["--pibench-concurrency=4"]], ids=["xdist", "in-flight"])
@pytest.mark.slow
def test_the_plugin_assesses_a_purple_agent(pytester, extra):
    with serve() as url:
        result = pytester.runpytest_subprocess(
            f"--pibench-agent=a2a:{url}", "-k", "retail", "--pibench-results=r.json", "-p", "no:cacheprovider", *extra
        )
    assert result.ret == 0, result.stdout.str()[-3000:]
    document = json.loads((pytester.path / "r.json").read_text())
    rows = document["rows"]
    assert len(rows) == bundled_count("retail") and all(r["all_passed"] and r["agent"] == f"a2a:{url}" for r in rows)


def test_an_unreachable_agent_fails_the_run_as_error_rows_not_as_policy_failures(pytester):
    result = pytester.runpytest_subprocess(
        "--pibench-agent=a2a:http://127.0.0.1:9", "-k", "RET_001", "--pibench-results=r.json", "-p", "no:cacheprovider"
    )
    rows = json.loads((pytester.path / "r.json").read_text())["rows"]
    assert rows and all(r["termination_reason"] == "infra_error" for r in rows)
    assert result.ret == 9  # the error budget (--pibench-max-error-rate 0) is exceeded


def test_pi_run_assesses_a_purple_agent(tmp_path):
    import subprocess
    import sys

    with serve() as url:
        result = subprocess.run(
            [sys.executable, "-m", "pytest_pibench", "run", "--agent", f"a2a:{url}", "finra", "--concurrency", "4",
             "--results", str(tmp_path / "r.json")],
            capture_output=True, text=True, cwd=tmp_path, timeout=300, check=False,
        )  # fmt: skip
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    rows = json.loads((tmp_path / "r.json").read_text())["rows"]
    assert len(rows) == bundled_count("finra") and all(r["all_passed"] for r in rows)


def test_a_broken_episode_in_the_middle_does_not_stop_the_run(pytester):
    from a2a_servers import _BY_CONTEXT, _context_key, oracle_for

    chosen = sorted(s.scenario_id for s in bundled() if s.meta.domain == "retail")[:5]
    broken = chosen[2]

    def make(context: Any, tools: Any) -> Any:
        agent = oracle_for(context, tools)
        if _BY_CONTEXT[_context_key(context)].scenario_id == broken:
            agent.generate = lambda message, state: (_ for _ in ()).throw(RuntimeError("purple agent bug"))
        return agent

    with serve(make) as url:
        result = pytester.runpytest_subprocess(
            f"--pibench-agent=a2a:{url}", "-k", " or ".join(chosen), "--pibench-results=r.json", "-p", "no:cacheprovider"
        )
    rows = {r["scenario_id"]: r for r in json.loads((pytester.path / "r.json").read_text())["rows"]}
    assert sorted(rows) == chosen and result.ret == 1
    assert rows[broken]["termination_reason"] == "agent_error" and "purple agent bug" in rows[broken]["error"]
    assert all(rows[s]["all_passed"] for s in chosen if s != broken)
