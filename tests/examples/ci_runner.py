"""Runs the shipped CI workflows' own shell steps on this machine, as their CI systems would.

Not a CI emulator: just enough of GitHub Actions and GitLab CI to execute the commands the example
workflows contain, in order, with their environment, matrix or parallel index, ``if: always()``
and artifacts passed between jobs, so a test proves that the steps users copy work together.
What only the CI system can do (checkout, installing Python, the install step, fetching the main
branch's results over the network) is named by the test and prepared by it instead. Anything else
the runner does not know (an action, an expression) fails the test rather than being skipped.
"""

from __future__ import annotations

import fnmatch
import glob
import itertools
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

BIN = str(Path(sys.executable).parent)  # pytest and pi of this environment come first on PATH


@dataclass
class JobRun:
    """One job (one matrix entry or parallel index): each step's exit code (None: not run), its output."""

    workdir: Path
    steps: dict[str, int | None] = field(default_factory=dict)
    output: str = ""
    summary: str = ""
    status: str = "success"  # success, failed, warning (GitLab allow_failure)


def _shell(script: str, cwd: Path, env: Mapping[str, str]) -> tuple[int, str]:
    done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script], cwd=cwd, env=dict(env),
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    return done.returncode, done.stdout + done.stderr


def base_env(extra: Mapping[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "PIBENCH_"))}
    env["PATH"] = BIN + os.pathsep + env.get("PATH", "")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update(extra)
    return env


def _copy(sources: Iterable[Path], target: Path) -> list[str]:
    target.mkdir(parents=True, exist_ok=True)
    copied = []
    for source in sources:
        shutil.copy2(source, target / source.name)
        copied.append(source.name)
    return copied


class GitHubWorkflow:
    """A workflow file of GitHub Actions, its jobs run one at a time with a shared artifact store."""

    def __init__(self, path: Path, repo: Path, store: Path, env: Mapping[str, str]) -> None:
        self.spec: dict[Any, Any] = yaml.safe_load(path.read_text())
        self.repo, self.store, self.env = repo, store, dict(env)

    def matrix(self, job: str) -> list[dict[str, Any]]:
        matrix = (self.spec["jobs"][job].get("strategy") or {}).get("matrix") or {}
        keys = list(matrix)
        return [dict(zip(keys, values, strict=True)) for values in itertools.product(*(matrix[k] for k in keys))]

    def _expand(self, text: str, context: Mapping[str, str]) -> str:
        def value(match: re.Match[str]) -> str:
            expression = match.group(1).strip()
            if expression not in context:
                raise AssertionError(f"expression the test runner does not know: {expression!r}")
            return context[expression]

        return re.sub(r"\$\{\{(.*?)\}\}", value, text)

    def run_job(self, job: str, *, matrix: Mapping[str, Any] | None = None, skip: Mapping[str, Callable[[Path], None]]
                = {}, workdir: Path) -> JobRun:  # fmt: skip
        """Run ``job``'s steps in ``workdir``; each step id in ``skip`` is replaced by the test's own preparation."""
        spec = self.spec["jobs"][job]
        entries = self.matrix(job)
        context = {f"matrix.{k}": str(v) for k, v in (matrix or {}).items()}
        context |= {"strategy.job-total": str(max(1, len(entries))), "github.token": "test-token"}
        result = JobRun(workdir)
        workdir.mkdir(parents=True, exist_ok=True)
        summary = workdir.parent / f"{workdir.name}.summary.md"
        summary.write_text("")
        declared = {**(self.spec.get("env") or {}), **(spec.get("env") or {})}
        env = base_env({**{k: str(v) for k, v in declared.items()}, **self.env, "GITHUB_STEP_SUMMARY": str(summary),
                        "GITHUB_REPOSITORY": "example/agent", "CI": "true"})  # fmt: skip
        failed = False
        for index, step in enumerate(spec["steps"]):
            name = step.get("id") or step.get("uses") or f"step {index}"
            condition = step.get("if")
            if condition not in (None, "always()"):
                raise AssertionError(f"condition the test runner does not know: {condition!r}")
            if failed and condition is None:
                result.steps[name] = None
                continue
            if name in skip:
                skip[name](workdir)
                result.steps[name] = 0
                continue
            if "uses" in step:
                self._action(step, context, workdir)
                result.steps[name] = 0
                continue
            step_env = env | {k: self._expand(str(v), context) for k, v in (step.get("env") or {}).items()}
            code, output = _shell(self._expand(step["run"], context), workdir, step_env)
            result.steps[name] = code
            result.output += f"--- {name} (exit {code})\n{output}"
            failed = failed or code != 0
        result.summary = summary.read_text()
        result.status = "failed" if failed else "success"
        return result

    def _action(self, step: Mapping[str, Any], context: Mapping[str, str], workdir: Path) -> None:
        action = step["uses"].split("@")[0]
        given = {k: self._expand(str(v), context) for k, v in (step.get("with") or {}).items()}
        if action == "actions/checkout":
            shutil.copytree(self.repo, workdir, dirs_exist_ok=True)
        elif action == "actions/setup-python":
            pass  # this interpreter's environment is on PATH
        elif action == "actions/upload-artifact":
            paths = [line.strip() for line in given["path"].splitlines() if line.strip()]
            found = [Path(p) for pattern in paths for p in sorted(glob.glob(str(workdir / pattern)))]
            _copy(found, self.store / given["name"])
        elif action == "actions/download-artifact":
            names = [p for p in sorted(self.store.iterdir()) if fnmatch.fnmatch(p.name, given["pattern"])]
            assert given.get("merge-multiple") == "True", "the runner merges artifacts (merge-multiple: true)"
            _copy((f for d in names for f in sorted(d.iterdir())), workdir / given["path"])
        else:
            raise AssertionError(f"action the test runner does not know: {action}")


class GitLabPipeline:
    """A .gitlab-ci.yml: each job's script (one shell, stops at the first failing line), then after_script."""

    def __init__(self, path: Path, repo: Path, store: Path, env: Mapping[str, str]) -> None:
        self.spec: dict[str, Any] = yaml.safe_load(path.read_text())
        self.repo, self.store, self.env = repo, store, dict(env)

    def parallel(self, job: str) -> int:
        return int(self.spec[job].get("parallel") or 1)

    def run_job(self, job: str, *, index: int | None = None, skip_lines: Callable[[str], bool] = lambda line: False,
                prepare: Callable[[Path], None] | None = None, workdir: Path) -> JobRun:  # fmt: skip
        """Run one job (``index``: its parallel index) from a fresh checkout; ``before_script`` (installing)
        is the test's to have done. Lines for which ``skip_lines`` is true are replaced by ``prepare``."""
        spec = self.spec[job]
        shutil.copytree(self.repo, workdir, dirs_exist_ok=True)
        for needed in spec.get("needs") or []:
            source = needed["job"] if isinstance(needed, dict) else needed
            for folder in sorted(self.store.glob(f"{glob.escape(source)}*")):
                _copy(sorted(folder.iterdir()), workdir)
        variables = {k: str(v) for k, v in (self.spec.get("variables") or {}).items()}
        total = self.parallel(job)
        env = base_env({**variables, **{k: str(v) for k, v in (spec.get("variables") or {}).items()}, **self.env,
                         "CI": "true", "CI_NODE_INDEX": str(index or 1), "CI_NODE_TOTAL": str(total)})  # fmt: skip
        lines = [line for line in spec["script"] if not skip_lines(line)]
        if len(lines) != len(spec["script"]) and prepare is not None:
            prepare(workdir)
        result = JobRun(workdir)
        code, output = _shell("\n".join(lines), workdir, env)
        result.steps["script"] = code
        result.output = output
        after_code, after_output = _shell("\n".join(spec.get("after_script") or []), workdir, env)
        result.steps["after_script"] = after_code
        result.output += after_output
        allowed = (spec.get("allow_failure") or {}).get("exit_codes", []) if isinstance(spec.get("allow_failure"),
                                                                                          dict) else []  # fmt: skip
        result.status = "success" if code == 0 else "warning" if code in allowed else "failed"
        artifacts = spec.get("artifacts") or {}
        if code == 0 or artifacts.get("when") == "always":
            patterns = artifacts.get("paths", [])
            found = [Path(p) for pattern in patterns for p in sorted(glob.glob(str(workdir / pattern)))]
            _copy(found, self.store / (job if total == 1 else f"{job} {index}"))
        summary = workdir / "pibench-summary.md"
        result.summary = summary.read_text() if summary.exists() else ""
        return result
