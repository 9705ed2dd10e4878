"""``--pibench-shard I/N`` and ``pi report`` merging (issue 13): the merged shards equal the unsharded run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ARGS = ["scenarios", "--pibench-agent=oracle", "--pibench-agent=baseline:deny", "--pibench-trials=3"]


def pi(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest_pibench.cli", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=300)


def comparable(path: Path) -> dict:
    data = json.loads(path.read_text())
    rows = [{k: v for k, v in r.items() if k not in ("duration", "nodeid")} for r in data["rows"]]
    return {"rows": sorted(rows, key=lambda r: (r["agent"], r["scenario_id"], r["trial"])),
            "agents": data["agents"], "validity": data["validity"], "complete": data["complete"]}


@pytest.mark.slow
def test_shards_partition_the_items_and_merge_into_the_unsharded_run(toy_project):
    whole = toy_project.runpytest_subprocess(*ARGS, "--pibench-results=whole.json")
    first = toy_project.runpytest_subprocess(*ARGS, "--pibench-shard=1/2", "--pibench-results=s1.json")
    second = toy_project.runpytest_subprocess(*ARGS, "-n", "2", "--pibench-shard=2/2", "--pibench-results=s2.json")
    first.stdout.fnmatch_lines(["*SHARD 1 of 2: these numbers cover this shard only*"])
    s1 = json.loads((toy_project.path / "s1.json").read_text())
    s2 = json.loads((toy_project.path / "s2.json").read_text())
    assert s1["shard"] == {"index": 1, "count": 2} and not s1["validity"]["valid"]
    nodes = [r["nodeid"] for r in s1["rows"]] + [r["nodeid"] for r in s2["rows"]]
    assert len(nodes) == len(set(nodes)) == 12 and abs(len(s1["rows"]) - len(s2["rows"])) <= 1
    assert whole.ret == first.ret == second.ret == 1  # baseline:deny fails: a shard exits like the run would

    merged = pi("report", "s1.json", "s2.json", "--results", "merged.json", "-o", "lb.json", cwd=toy_project.path)
    assert merged.returncode == 0, merged.stderr
    assert comparable(toy_project.path / "merged.json") == comparable(toy_project.path / "whole.json")
    assert pi("report", "whole.json", "-o", "whole_lb.json", cwd=toy_project.path).returncode == 0
    for agent in ("oracle", "baseline_deny"):
        a = json.loads((toy_project.path / f"lb.{agent}.json").read_text())["results"][0]["metrics"]
        b = json.loads((toy_project.path / f"whole_lb.{agent}.json").read_text())["results"][0]["metrics"]
        assert a == b


@pytest.mark.slow
def test_a_missing_shard_or_a_duplicate_is_never_merged_silently(toy_project):
    toy_project.runpytest_subprocess(*ARGS, "--pibench-shard=1/3", "--pibench-results=s1.json")
    toy_project.runpytest_subprocess(*ARGS, "--pibench-shard=2/3", "--pibench-results=s2.json")
    partial = pi("report", "s1.json", "s2.json", cwd=toy_project.path)
    assert partial.returncode == 9 and "shard 3 of 3 is missing" in partial.stderr
    alone = pi("report", "s1.json", cwd=toy_project.path)
    assert alone.returncode == 9 and "shard 1 of 3 only" in alone.stderr
    twice = pi("report", "s1.json", "s1.json", cwd=toy_project.path)
    assert twice.returncode == 4 and "both hold" in twice.stderr
    toy_project.runpytest_subprocess(*ARGS, "--pibench-seed=7", "--pibench-shard=3/3", "--pibench-results=s3.json")
    other = pi("report", "s1.json", "s2.json", "s3.json", cwd=toy_project.path)
    assert other.returncode == 4 and "other settings" in other.stderr


@pytest.mark.parametrize("value", ["0/2", "3/2", "1", "a/b", "1/0"])
def test_a_bad_shard_is_a_usage_error(toy_project, value):
    result = toy_project.runpytest("scenarios", "--pibench-agent=oracle", f"--pibench-shard={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--pibench-shard: expected I/N with 1 <= I <= N*"])


def test_a_gate_on_a_shard_says_it_saw_the_shard_only(toy_project):
    result = toy_project.runpytest("scenarios", "--pibench-agent=oracle", "--pibench-shard=1/2",
                                   "--pibench-fail-under=overall=0.5", "-p", "no:cacheprovider")  # fmt: skip
    assert result.ret == 0
    result.stdout.fnmatch_lines(["Gate: PASSED", "*this gate saw this shard only: gate the merged run with 'pi gate*"])
    whole = toy_project.runpytest("scenarios", "--pibench-agent=oracle", "--pibench-fail-under=overall=0.5",
                                  "-p", "no:cacheprovider")  # fmt: skip
    assert "shard only" not in whole.stdout.str()
