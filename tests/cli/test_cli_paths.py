"""``pi`` arguments: usage errors exit 4, missing paths say so, bundled scenarios by name from anywhere."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import TOY_WORKSPACE

USAGE_ERROR = 4
RET_004 = "RET_004_TV_RETURN_BEFORE_MOVE"


def pi(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest_pibench", *args], capture_output=True, text=True, cwd=cwd)


@pytest.mark.parametrize(
    "args, message",
    [
        (["run"], "the following arguments are required: scenarios"),
        (["run", "retail", "--num-trials", "two"], "argument --num-trials: expected a whole number, got 'two'"),
        (["frobnicate"], "argument command: invalid choice: 'frobnicate'"),
        (["list", "--colour"], "unrecognized arguments: --colour"),
    ],
)
def test_bad_arguments_are_usage_errors(tmp_path, args, message):
    out = pi(*args, cwd=tmp_path)
    assert out.returncode == USAGE_ERROR
    assert out.stderr.startswith("usage: pi")
    assert f": error: {message}" in out.stderr
    assert "Traceback" not in out.stderr


@pytest.mark.parametrize("command", [["run"], ["list"], ["validate"], ["report"]])
def test_a_missing_path_says_so(tmp_path, command):
    out = pi(*command, "nowhere/missing.json", cwd=tmp_path)
    assert out.returncode == USAGE_ERROR
    assert out.stderr.strip() == "pi: no such file or directory: nowhere/missing.json"
    assert "no scenario files found" not in out.stdout + out.stderr


@pytest.mark.parametrize("command", [["run"], ["list"]])
def test_an_unknown_name_is_a_usage_error_pointing_to_pi_list(tmp_path, command):
    out = pi(*command, "bakery_101", cwd=tmp_path)
    assert out.returncode == USAGE_ERROR
    assert "'bakery_101' is neither a file or folder nor a domain, scenario file name or scenario id" in out.stderr
    assert "`pi list`" in out.stderr


def test_run_domain_of_an_unknown_domain_is_a_usage_error(tmp_path):
    out = pi("run-domain", "bakery", cwd=tmp_path)
    assert out.returncode == USAGE_ERROR
    assert "pi: no scenarios for domain 'bakery'" in out.stderr


@pytest.mark.parametrize("name", ["ret_004_tv_return_before_move", "ret_004_tv_return_before_move.json", RET_004])
def test_run_a_bundled_scenario_by_file_stem_or_id_from_any_directory(tmp_path, name):
    out = pi("run", name, "--results", "r.json", "--", "-q", "-p", "no:randomly", cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    rows = json.loads((tmp_path / "r.json").read_text())["rows"]
    assert [(r["scenario_id"], r["agent"], r["all_passed"]) for r in rows] == [(RET_004, "oracle", True)]


def test_run_a_bundled_domain_by_name_from_any_directory(tmp_path):
    out = pi("run", "retail", "--results", "r.json", "--", "-q", cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    rows = json.loads((tmp_path / "r.json").read_text())["rows"]
    assert len(rows) >= 8 and {r["domain_name"] for r in rows} == {"retail"} and all(r["all_passed"] for r in rows)


def test_list_by_domain_and_by_scenario_id(tmp_path):
    by_domain = pi("list", "retail", cwd=tmp_path)
    assert by_domain.returncode == 0, by_domain.stderr
    body = by_domain.stdout.splitlines()[1:-2]
    assert len(body) >= 8 and all(line.split()[1] == "retail" for line in body)
    one = pi("list", RET_004, cwd=tmp_path)
    assert one.returncode == 0, one.stderr
    assert [line.split()[0] for line in one.stdout.splitlines()[1:-2]] == [RET_004]


def test_a_workspace_scenarios_folder_is_searched_first(tmp_path):
    """In a workspace, ``pi run toyshop`` and ``pi run TOY_001_ITEM_REFUND`` find ./scenarios/ before the bundled set."""
    import shutil

    shutil.copytree(TOY_WORKSPACE, tmp_path / "ws")
    out = pi("list", "toyshop", cwd=tmp_path / "ws")
    assert out.returncode == 0, out.stderr
    assert {line.split()[0] for line in out.stdout.splitlines()[1:-2]} == {"TOY_001_ITEM_REFUND", "TOY_002_EXPENSIVE_REFUND"}
    run = pi("run", "TOY_001_ITEM_REFUND", "--results", "r.json", "--", "-q", cwd=tmp_path / "ws")
    assert run.returncode == 0, run.stdout + run.stderr
    assert [r["scenario_id"] for r in json.loads((tmp_path / "ws" / "r.json").read_text())["rows"]] == ["TOY_001_ITEM_REFUND"]


def test_existing_paths_still_win(tmp_path):
    """A file or folder that exists is taken as given, even when its name is also a bundled domain."""
    folder = tmp_path / "retail"
    folder.mkdir()
    out = pi("list", "retail", cwd=tmp_path)
    assert out.returncode == 1
    assert "no scenarios found under retail" in out.stdout
