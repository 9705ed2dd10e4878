"""The sample outputs in README.md, made by real runs: regenerate them, or check that they still hold.

    python docs/readme_samples.py            # rewrite every sample block of README.md from fresh runs
    python docs/readme_samples.py --check    # exit 1, with a diff, when a block differs from a fresh run

A sample block sits between ``<!-- sample: NAME -->`` and ``<!-- /sample -->`` in the README;
:data:`SAMPLES` says how each is made (the commands run in a scratch folder, with the installed
``pytest`` and ``pi``). What differs from run to run by nature, wall times and the scratch folder's
path, is normalised before comparing (:func:`comparable`), so the check fails only when a number,
a line or a message changed. ``tests/docs/test_readme_samples.py`` runs the check.
"""

from __future__ import annotations

import difflib
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
SHOWN_FOLDER = "/home/me/project"
"""The scratch folder's path as the README shows it."""

_BLOCK = re.compile(r"(<!-- sample: (?P<name>[\w-]+) -->\n```\n)(?P<body>.*?)(```\n<!-- /sample -->)", re.DOTALL)


def _run(argv: list[str], work: Path) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "PIBENCH"))}
    env.update(COLUMNS="80", PYTHONDONTWRITEBYTECODE="1")
    head = [sys.executable, "-m", "pytest"] if argv[0] == "pytest" else [sys.executable, "-m", "pytest_pibench"]
    done = subprocess.run([*head, *argv[1:]], cwd=work, env=env, capture_output=True, text=True, timeout=600)
    return (done.stdout + done.stderr).replace(str(work), SHOWN_FOLDER)


def _summary(work: Path) -> str:
    """The oracle and baseline:deny on the retail and finra scenarios: the table, two failures, the last line."""
    out = _run(["pytest", "--pibench-agent=oracle", "--pibench-agent=baseline:deny", "-m", "retail or finra",
                "-p", "no:cacheprovider", "--pibench-results="], work)  # fmt: skip
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if "pi-bench summary" in line)
    failed = lines.index(next(line for line in lines if line.startswith("Failed scenarios (")))
    paired = next(i for i, line in enumerate(lines) if line.startswith("Paired comparison"))
    last = next(line for line in reversed(lines) if line.startswith("=") and " failed" in line)
    return "\n".join([*lines[start : failed + 3], "  ...", *lines[paired : paired + 2], "...", last]) + "\n"


def _gate(work: Path) -> str:
    """``baseline:deny -k RET_00`` gated against an oracle run of the retail scenarios: the verdict's first lines."""
    _run(["pytest", "--pibench-agent=oracle", "-m", "retail", "-p", "no:cacheprovider", "--pibench-results=main.json"],
         work)  # fmt: skip
    out = _run(["pytest", "--pibench-agent=baseline:deny", "-m", "retail", "-k", "RET_00", "-p", "no:cacheprovider",
                "--pibench-results=", "--pibench-baseline=main.json::oracle"], work)  # fmt: skip
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Gate: "))
    first_scenario = next(i for i in range(start, len(lines)) if "passed in the baseline and fails now" in lines[i])
    return "\n".join([*lines[start : first_scenario + 1], "  ..."]) + "\n"


_AGENT_FILES = {
    "myagent.py": (
        "class Agent:\n"
        "    def init_state(self, benchmark_context, tools, message_history=None):\n        return {}\n"
        "    def generate(self, message):\n        return {'role': 'assistant', 'content': 'Hello'}, None\n\n"
        "class Helper:\n    pass\n"
    ),
    "llmagent.py": "import json\nimport acme_llm_sdk\n\nclass Agent:\n    pass\n",
}


def _start_up_errors(work: Path) -> str:
    """What a broken agent gets before any episode: one usage error each (exit 4)."""
    for name, text in _AGENT_FILES.items():
        (work / name).write_text(text)
    lines = []
    for spec in ("myagent:Agent", "llmagent:Agent", "myagent:Agnet", "myagnet:Agent"):
        out = _run(["pytest", f"--pibench-agent={spec}", "-p", "no:cacheprovider"], work)
        lines += [line for line in out.splitlines() if line.strip()][: 3 if spec == "llmagent:Agent" else 1]
    return "\n".join(lines) + "\n"


SAMPLES: dict[str, Callable[[Path], str]] = {
    "summary": _summary,
    "gate": _gate,
    "start-up-errors": _start_up_errors,
}


def comparable(text: str) -> str:
    """``text`` without what changes from run to run: wall times, and the ``=`` padding around pytest's last line."""
    text = re.sub(r"Wall time: \d+\.\d+s", "Wall time: <s>", text)
    text = re.sub(r" in \d+\.\d+s( \(\d+:\d+:\d+\))?", " in <s>", text)
    return re.sub(r"^=+ (.*?) =+$", r"= \1 =", text, flags=re.MULTILINE)


def fresh_samples() -> dict[str, str]:
    """Every sample, made now (each in its own scratch folder)."""
    made = {}
    for name, make in SAMPLES.items():
        with tempfile.TemporaryDirectory(prefix=f"pibench-sample-{name}-") as folder:
            made[name] = make(Path(folder))
    return made


def readme_samples(text: str) -> dict[str, str]:
    """The sample blocks of the README as it is: name -> body."""
    return {m["name"]: m["body"] for m in _BLOCK.finditer(text)}


def differences(text: str, fresh: dict[str, str]) -> list[str]:
    """A unified diff per sample whose README block differs from ``fresh`` (normalised); a missing block too."""
    found = readme_samples(text)
    problems = []
    for name, body in fresh.items():
        if name not in found:
            problems.append(f"README.md has no block <!-- sample: {name} -->")
            continue
        old, new = comparable(found[name]), comparable(body)
        if old != new:
            diff = difflib.unified_diff(old.splitlines(), new.splitlines(), f"README {name}", f"fresh {name}", lineterm="")
            problems.append("\n".join(diff))
    return problems


def main(argv: list[str]) -> int:
    text = README.read_text(encoding="utf-8")
    fresh = fresh_samples()
    if "--check" in argv:
        problems = differences(text, fresh)
        print("\n\n".join(problems) if problems else f"{len(fresh)} README samples hold")
        return 1 if problems else 0
    text = _BLOCK.sub(lambda m: m[1] + fresh.get(m["name"], m["body"]) + m[4], text)
    README.write_text(text, encoding="utf-8")
    print(f"rewrote {len(fresh)} sample blocks of {README}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
