"""The CI recipes of examples/ci: valid for their CI systems, and their steps work together end to end.

Schemas: each workflow is checked against its CI system's published schema (the copies vendored
by check-jsonschema, offline), and a broken copy must fail the same check. End to end: the
workflows' own shell steps run here (ci_runner.py) with an LLM-free agent whose pass rate the test
sets, on a slice of the bundled scenarios: the main branch's baseline, then pull requests that
pass, regress and are inconclusive, with the exit codes, the job summary and the artifacts each
one leaves; and the sharded run, merged, against the same run unsharded.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from ci_runner import BIN, GitHubWorkflow, GitLabPipeline, base_env
from coin_agent import COIN_CONFTEST

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "ci"
GITHUB = EXAMPLES / "github-actions"
GITLAB = EXAMPLES / "gitlab" / ".gitlab-ci.yml"
SLICE = "-k RET_00 -p no:cacheprovider"  # 9 retail scenarios: enough for every gate outcome, quick



def _check_schema(schema: str, path: Path, *transform: str) -> subprocess.CompletedProcess[str]:
    command = [f"{BIN}/check-jsonschema", "--builtin-schema", schema, *transform, str(path)]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("path", sorted(GITHUB.glob("*.yml")), ids=lambda p: p.name)
def test_github_workflows_match_the_published_schema(path: Path, tmp_path: Path) -> None:
    assert _check_schema("vendor.github-workflows", path).returncode == 0
    broken = yaml.safe_load(path.read_text())
    job = next(iter(broken["jobs"].values()))
    job["runs_on"] = job.pop("runs-on")  # a misspelt required key
    (tmp_path / path.name).write_text(yaml.safe_dump(broken))
    failed = _check_schema("vendor.github-workflows", tmp_path / path.name)
    assert failed.returncode == 1 and "runs_on" in failed.stdout + failed.stderr


def test_the_gitlab_pipeline_matches_the_published_schema(tmp_path: Path) -> None:
    assert _check_schema("vendor.gitlab-ci", GITLAB, "--data-transform", "gitlab-ci").returncode == 0
    broken = yaml.safe_load(GITLAB.read_text())
    broken["pibench:shard"]["parallel"] = "four"
    (tmp_path / ".gitlab-ci.yml").write_text(yaml.safe_dump(broken))
    failed = _check_schema("vendor.gitlab-ci", tmp_path / ".gitlab-ci.yml", "--data-transform", "gitlab-ci")
    assert failed.returncode == 1


def test_every_workflow_uses_the_same_settings_and_names_its_steps() -> None:
    """The baseline and the gate must pair rows by (scenario, trial): the same agent, trials and arguments."""
    envs = [yaml.safe_load(p.read_text())["env"] for p in sorted(GITHUB.glob("*.yml"))]
    gitlab = yaml.safe_load(GITLAB.read_text())["variables"]
    for name in ("PIBENCH_INSTALL", "PIBENCH_AGENT", "PIBENCH_TRIALS"):
        assert len({env[name] for env in envs} | {gitlab[name]}) == 1, name
    for path in sorted(GITHUB.glob("*.yml")):
        for job in yaml.safe_load(path.read_text())["jobs"].values():
            assert all("uses" in step or "id" in step for step in job["steps"]), path.name  # the runner skips by id


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A user's repository: its agent is the ``coin`` scheme of its conftest (pass rate: ``COIN_P``)."""
    folder = tmp_path / "repo"
    folder.mkdir()
    (folder / "conftest.py").write_text(COIN_CONFTEST)
    return folder


def _github(name: str, repo: Path, tmp_path: Path, p: float) -> GitHubWorkflow:
    env = {"PIBENCH_AGENT": "coin", "PIBENCH_TRIALS": "2", "PIBENCH_ARGS": SLICE, "COIN_P": str(p)}
    return GitHubWorkflow(GITHUB / name, repo, tmp_path / "artifacts", env)


def _baseline_from(store: Path) -> object:
    def fetch(workdir: Path) -> None:  # what the "baseline" step downloads from the main branch's run
        (workdir / "baseline").mkdir()
        shutil.copy2(store / "pibench-main" / "pibench-results.json", workdir / "baseline")

    return fetch


def _no_install(workdir: Path) -> None:
    """The test environment has the package installed already."""


@pytest.mark.slow
def test_github_pull_requests_are_gated_against_main(repo: Path, tmp_path: Path) -> None:
    main = _github("pibench-main.yml", repo, tmp_path, p=1.0).run_job("baseline", skip={"install": _no_install},
                                                                       workdir=tmp_path / "main")  # fmt: skip
    assert main.status == "success", main.output
    assert sorted(p.name for p in (tmp_path / "artifacts" / "pibench-main").iterdir()) == [
        "pibench-report.html", "pibench-results.json"]  # fmt: skip
    assert "## pi-bench: 9 scenarios x 2 trials, 18 episodes" in main.summary

    outcomes = {}
    for p, expected in ((1.0, 0), (0.0, 8), (0.85, 10)):
        run = _github("pibench-pr.yml", repo, tmp_path, p).run_job(
            "gate", skip={"install": _no_install, "baseline": _baseline_from(tmp_path / "artifacts")},
            workdir=tmp_path / f"pr-{p}")  # fmt: skip
        outcomes[p] = run
        assert run.steps["gate"] == expected, run.output
        assert run.steps["summary"] == 0, run.output  # the summary and the upload run whatever the gate said
        uploaded = tmp_path / "artifacts" / "pibench-pr"
        assert (uploaded / "pibench-results.json").exists() and (uploaded / "pibench-report.html").exists()
        shutil.rmtree(uploaded)
        gate = json.loads((run.workdir / "pibench-results.json").read_text())["gate"]
        assert gate["exit_code"] == expected and gate["mode"] == "statistical"
    assert "### Gate: PASSED (exit code 0)" in outcomes[1.0].summary
    assert "Regressed scenarios" not in outcomes[1.0].summary
    failed = outcomes[0.0].summary
    assert "### Gate: FAILED" in failed and "regressed at confidence 0.95" in failed
    assert "#### Regressed scenarios (9)" in failed and "| `coin` | `RET_001_LAMP_RETURN` | 2/2 | 0/2 |" in failed
    unsure = outcomes[0.85].summary
    assert "### Gate: INCONCLUSIVE" in unsure and "inconclusive; the observed drop" in unsure  # more data to settle


@pytest.mark.slow
def test_github_shards_merge_into_the_unsharded_run(repo: Path, tmp_path: Path) -> None:
    workflow = _github("pibench-shards.yml", repo, tmp_path, p=0.5)
    entries = workflow.matrix("shard")
    assert [e["shard"] for e in entries] == [1, 2, 3, 4]
    for entry in entries:
        shard = workflow.run_job("shard", matrix=entry, skip={"install": _no_install},
                                 workdir=tmp_path / f"shard-{entry['shard']}")  # fmt: skip
        assert shard.status == "success", shard.output  # failing scenarios do not fail a shard's job
    merge = workflow.run_job("merge", skip={"install": _no_install}, workdir=tmp_path / "merge")
    assert merge.status == "success", merge.output
    run = tmp_path / "artifacts" / "pibench-run"
    assert sorted(p.name for p in run.iterdir()) == ["leaderboard.json", "pibench-report.html", "pibench-results.json"]
    merged = json.loads((run / "pibench-results.json").read_text())

    whole = subprocess.run([f"{BIN}/pytest", "--pibench-agent=coin", "--pibench-trials=2", *SLICE.split(),
                            "--pibench-results=whole.json"], cwd=repo, capture_output=True, text=True,
                           env=base_env({"COIN_P": "0.5"}), timeout=300)  # fmt: skip
    assert whole.returncode == 1, whole.stdout[-2000:]  # some scenarios fail at p = 0.5
    unsharded = json.loads((repo / "whole.json").read_text())
    key = ("scenario_id", "trial", "all_passed", "canonical_decision")
    assert sorted(tuple(r[k] for k in key) for r in merged["rows"]) == sorted(
        tuple(r[k] for k in key) for r in unsharded["rows"])  # fmt: skip
    assert merged["agents"]["coin"]["metrics"]["overall_score"] == pytest.approx(
        unsharded["agents"]["coin"]["metrics"]["overall_score"])  # fmt: skip
    assert "## pi-bench: 9 scenarios x 2 trials, 18 episodes" in merge.summary and "SHARD" not in merge.summary


@pytest.mark.slow
def test_a_missing_shard_makes_the_merge_partial_and_says_so(repo: Path, tmp_path: Path) -> None:
    workflow = _github("pibench-shards.yml", repo, tmp_path, p=1.0)
    for entry in workflow.matrix("shard")[:3]:  # shard 4 never uploaded (its job was cancelled)
        workflow.run_job("shard", matrix=entry, skip={"install": _no_install}, workdir=tmp_path / f"s{entry['shard']}")
    merge = workflow.run_job("merge", skip={"install": _no_install}, workdir=tmp_path / "merge")
    assert merge.steps["merge"] == 9 and merge.status == "failed", merge.output
    assert merge.steps["summary"] == 0 and merge.steps["html"] == 0
    assert "NOT VALID FOR THE LEADERBOARD" in merge.summary and "shard" in merge.summary.lower()


@pytest.mark.slow
def test_gitlab_merge_requests_are_gated_and_shards_merged(repo: Path, tmp_path: Path) -> None:
    def pipeline(p: float) -> GitLabPipeline:
        env = {"PIBENCH_AGENT": "coin", "PIBENCH_TRIALS": "2", "PIBENCH_ARGS": SLICE, "COIN_P": str(p)}
        return GitLabPipeline(GITLAB, repo, tmp_path / "artifacts", env)

    main = pipeline(1.0).run_job("pibench:main", workdir=tmp_path / "main")
    assert main.status == "success", main.output
    assert "## pi-bench: 9 scenarios x 2 trials" in main.summary and "## pi-bench" in main.output  # printed

    def fetch(workdir: Path) -> None:  # what the curl line downloads: the default branch's pibench:main results
        (workdir / "baseline").mkdir()
        shutil.copy2(tmp_path / "artifacts" / "pibench:main" / "pibench-results.json", workdir / "baseline")

    for p, code, status in ((1.0, 0, "success"), (0.0, 8, "failed"), (0.85, 10, "warning")):
        mr = pipeline(p).run_job("pibench:mr", skip_lines=lambda line: line.startswith("curl"), prepare=fetch,
                                 workdir=tmp_path / f"mr-{p}")  # fmt: skip
        assert (mr.steps["script"], mr.status) == (code, status), mr.output
        assert "### Gate:" in mr.summary

    shards = pipeline(0.5)
    assert shards.parallel("pibench:shard") == 4
    for index in range(1, 5):
        shard = shards.run_job("pibench:shard", index=index, workdir=tmp_path / f"shard-{index}")
        assert shard.status == "success", shard.output
    merge = shards.run_job("pibench:merge", workdir=tmp_path / "merge")
    assert merge.status == "success", merge.output
    merged = json.loads((tmp_path / "artifacts" / "pibench:merge" / "pibench-results.json").read_text())
    assert len(merged["rows"]) == 18 and merged["complete"] is True and "shard" not in merged
    assert (tmp_path / "artifacts" / "pibench:merge" / "leaderboard.json").exists()


def test_the_runner_refuses_what_it_does_not_know(tmp_path: Path) -> None:
    """A step the runner cannot run fails the test instead of being skipped silently."""
    (tmp_path / "w.yml").write_text(yaml.safe_dump({"on": "push", "jobs": {"j": {"runs-on": "x", "steps": [
        {"uses": "someone/deploy@v1"}]}}}))  # fmt: skip
    with pytest.raises(AssertionError, match="action the test runner does not know"):
        GitHubWorkflow(tmp_path / "w.yml", tmp_path, tmp_path / "a", {}).run_job("j", workdir=tmp_path / "wd")
