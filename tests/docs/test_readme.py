"""Every command in README.md stays true.

Each line of every fenced ``bash`` block (continuations joined, split on ``&&``)
and every fenced ``python`` block is *classified* by pattern:

- ``run``: executed for real, in README order, in one scratch folder holding
  copies of ``scenarios/`` and ``domains/`` (so nothing is written into the
  repository). ``mymod:Agent`` / ``mymod:NewAgent`` resolve to a small real
  agent module put on ``PYTHONPATH``; ``-n``/``--concurrency`` are lowered to 2;
  ``path/to/...`` placeholders become the toy workspace's scenarios.
- ``parse``: checked without running, because it needs an API key or the
  network (``litellm:``, ``OPENAI_*``), installs packages (``pip install``),
  sets the environment (``export``) or is a lint tool CI runs anyway: the
  options it uses exist (``pytest --help``, ``pi CMD --help``), the extras it
  installs exist, the paths it names exist.

A line that matches no pattern fails the test, so a new README command is
either covered or the test is taught about it; never silently skipped.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
TOY_SCENARIOS = Path(__file__).resolve().parents[1] / "data" / "workspace"

_FENCE = re.compile(r"^```(?P<lang>[\w+-]*)[^\n]*\n(?P<body>.*?)^```", re.S | re.M)
_SHELL = {"bash", "sh", "shell", "console"}
_PYTHON = {"python", "py"}
_RUNNABLE_AGENTS = re.compile(r"^(oracle|baseline:[\w-]+|mymod:\w+)$")
_PI_RUNNABLE = {"list", "run", "run-domain", "validate", "report", "gate", "schema", "generate", "calibration"}
_LLM_MARKERS = ("litellm:", "a2a:", "--agent-llm", "--user-llm", "OPENAI", "ANTHROPIC", "API_KEY")

AGENT_MODULE = '''
"""A small real agent for the README's ``mymod:Agent``: looks the customer up, then denies."""


class Agent:
    def set_seed(self, seed):
        self.seed = seed

    def init_state(self, benchmark_context, tools, message_history=None):
        return {"step": 0, "tools": [t["name"] for t in tools]}

    def generate(self, message, state):
        step = state["step"]
        state = {**state, "step": step + 1}
        if step == 0:
            call = {"id": "c1", "name": "record_decision",
                    "arguments": {"decision": "DENY", "rationale": "not allowed by the policy"}}
            return {"role": "assistant", "tool_calls": [call]}, state
        return {"role": "assistant", "content": "I have to deny this request. ###STOP###"}, state

    def is_stop(self, message):
        return "###STOP###" in (message.get("content") or "")

    def stop(self, message, state):
        pass


NewAgent = Agent
'''


# ---------------------------------------------------------------- extraction and classification


@dataclass(frozen=True)
class Command:
    lang: str  # "bash" or "python"
    text: str  # one shell command (no comment, no '&&') or a whole python block
    tokens: tuple[str, ...] = ()

    def __str__(self) -> str:
        return self.text


def extract(markdown: str) -> list[Command]:
    """The commands of the fenced bash and python blocks, in order."""
    commands: list[Command] = []
    for match in _FENCE.finditer(markdown):
        lang, body = match["lang"].lower(), match["body"]
        if lang in _PYTHON:
            commands.append(Command("python", body))
        elif lang in _SHELL:
            for line in body.replace("\\\n", " ").splitlines():
                tokens = shlex.split(line, comments=True)
                segment: list[str] = []
                for token in [*tokens, "&&"]:
                    if token in ("&&", ";"):
                        if segment:
                            commands.append(Command("bash", shlex.join(segment), tuple(segment)))
                        segment = []
                    else:
                        segment.append(token)
    return commands


def _agents(tokens: tuple[str, ...]) -> list[str]:
    agents = []
    for i, token in enumerate(tokens):
        if token.startswith("--pibench-agent="):
            agents.append(token.split("=", 1)[1])
        elif token in ("--pibench-agent", "--agent") and i + 1 < len(tokens):
            agents.append(tokens[i + 1])
    return agents


def classify(command: Command) -> str | None:
    """``"run:<kind>"``, ``"parse:<kind>"``, or None for a command this test does not know."""
    if command.lang == "python":
        if command.text.lstrip().startswith("# conftest.py"):
            return "parse:conftest"  # needs the user's agent class and fixtures
        if "serve_forever(" in command.text:
            return "parse:server"  # serves until interrupted (and needs the user's agent class)
        if re.search(r"^from pytest_pibench import ", command.text, re.M):
            return "run:python"
        return None
    tokens = command.tokens
    if not tokens:
        return None
    head = tokens[0]
    if head == "pip" and tokens[1:2] == ("install",):
        return "parse:pip"
    if head == "export":
        return "parse:env"
    if any(marker in command.text for marker in _LLM_MARKERS):
        return "parse:llm" if head in ("pytest", "pi") else None
    if head in ("ruff", "mypy"):
        return "parse:lint"
    if head == "docker":
        return "parse:docker"  # no Docker daemon in CI: the Dockerfile is checked by tests/a2a
    if head == "pi-bench-green" or (head == "python" and tokens[-1] == "&"):
        return "parse:server"  # a server runs until stopped: its options are checked, it is not started
    if head == "python" and tokens[1:2] and tokens[1].startswith("examples/a2a_demo/"):
        return "parse:server"  # needs a model: tests/a2a/test_demo.py runs it against a local fake one
    if head == "pytest" and not _agents(tokens) and all(t == "-m" or tokens[i] == "-m" for i, t in enumerate(tokens[1:])):
        return "run:selftest"  # the project's own tests (`pytest`, `pytest -m slow`): they collect
    if head == "pytest" and tokens[-1] == "&":
        return None
    if any(a.startswith("replay:") for a in _agents(tokens)):
        return "parse:replay"  # needs play records made by a person: tests/play replays real ones
    if head == "pytest" and _agents(tokens):
        return "run:pytest" if all(_RUNNABLE_AGENTS.match(a) for a in _agents(tokens)) else None
    if head == "pi" and tokens[1:2] == ("play",):
        return "parse:play"  # a person's moves (interactive or step by step): tests/play runs real sessions
    if head == "pi" and tokens[1:2] and tokens[1] in _PI_RUNNABLE:
        return "run:pi" if all(_RUNNABLE_AGENTS.match(a) for a in _agents(tokens)) else None
    if tokens[:2] == ("python", "docs/readme_samples.py"):
        return "parse:samples"  # rewrites README.md: tests/docs/test_readme_samples.py runs its check
    if head == "python" and tokens[1:2] and tokens[1].endswith(".py") and (ROOT / tokens[1]).is_file():
        return "run:script"
    return None


COMMANDS = extract(README.read_text(encoding="utf-8"))


# ---------------------------------------------------------------- helpers


def _env(agent_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "OPENAI", "PIBENCH"))}
    env.update(PYTHONPATH=str(agent_dir), PYTEST_ADDOPTS="-p no:cacheprovider", PYTHONDONTWRITEBYTECODE="1")
    return env


def _argv(tokens: tuple[str, ...] | list[str]) -> list[str]:
    head, rest = tokens[0], list(tokens[1:])
    if head == "pytest":
        return [sys.executable, "-m", "pytest", *rest]
    if head == "pi":
        return [sys.executable, "-m", "pytest_pibench", *rest]
    if head == "python":
        return [sys.executable, *rest]
    raise AssertionError(f"no way to run {head!r}")


@cache
def _help(*argv: str) -> str:
    out = subprocess.run(_argv(argv), capture_output=True, text=True, cwd=ROOT, timeout=60,
                         env=_env(ROOT))
    assert out.returncode == 0, out.stderr
    return out.stdout


def _options(tokens: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """Options of the command itself and, for ``pi``, the pytest options after ``--``."""
    own, passed = [], []
    target = own
    for token in tokens[1:]:
        if token == "--":
            target = passed
        elif token.startswith("-") and token != "-":
            target.append(token.split("=", 1)[0])
    return own, passed


def _missing_options(options: list[str], help_text: str) -> list[str]:
    return [o for o in options if not re.search(rf"(^|[\s,\[]){re.escape(o)}(?=[\s,=\]]|$)", help_text, re.M)]


def check_options(command: Command) -> None:
    """Every option a ``pytest``/``pi`` command uses is in its ``--help``."""
    head = command.tokens[0]
    own, passed = _options(command.tokens)
    if head == "pytest":
        missing = _missing_options(own + passed, _help("pytest", "--help"))
    elif head == "pi":
        sub = command.tokens[1]
        assert re.search(rf"\b{re.escape(sub)}\b", _help("pi", "--help")), f"no pi command {sub!r}"
        missing = _missing_options(own, _help("pi", sub, "--help")) + _missing_options(
            passed, _help("pytest", "--help"))
    else:
        return
    assert not missing, f"{command}: unknown options {missing}"


# ---------------------------------------------------------------- the tests


def test_every_readme_command_is_classified():
    assert COMMANDS, "no fenced commands found in README.md"
    unknown = [str(c) for c in COMMANDS if classify(c) is None]
    assert not unknown, f"README commands this test does not know how to check (teach classify()): {unknown}"
    kinds = [classify(c) for c in COMMANDS]
    assert "run:python" in kinds  # the engine snippet
    assert sum(k.startswith("run:") for k in kinds if k) >= 10


def test_an_unknown_command_is_not_silently_accepted():
    text = "```bash\nfrobnicate --all\npytest --pibench-agent=othermod:Agent\n```\n```python\nprint(1)\n```\n"
    assert [classify(c) for c in extract(text)] == [None, None, None]
    joined = extract("```bash\npip install -e . && pytest --pibench-agent=oracle \\\n   -k RET   # note\n```\n")
    assert [(c.tokens, classify(c)) for c in joined] == [
        (("pip", "install", "-e", "."), "parse:pip"),
        (("pytest", "--pibench-agent=oracle", "-k", "RET"), "run:pytest"),
    ]


@pytest.mark.slow
def test_options_of_every_command_exist():
    for command in COMMANDS:
        if command.lang == "bash" and command.tokens[0] in ("pytest", "pi"):
            check_options(command)
    with pytest.raises(AssertionError, match="unknown options"):
        check_options(Command("bash", "pytest --pibench-agentt=oracle", ("pytest", "--pibench-agentt=oracle")))


def test_parse_only_commands_hold():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    extras = set(pyproject["project"]["optional-dependencies"])
    for command in COMMANDS:
        kind = classify(command)
        tokens = command.tokens
        if kind == "parse:pip":
            for target in tokens[2:]:
                if target.startswith("-"):
                    continue
                match = re.fullmatch(r"\.(?:\[(?P<extras>[\w,-]+)\])?", target)
                assert match, f"{command}: installs {target!r}, not this project"
                wanted = set((match["extras"] or "").split(",")) - {""}
                assert wanted <= extras, f"{command}: no extra {wanted - extras} in pyproject.toml"
        elif kind == "parse:env":
            assert all(re.fullmatch(r"[A-Z_][A-Z0-9_]*=\S*", t) for t in tokens[1:]), command
        elif kind == "parse:lint":
            assert shutil.which(tokens[0], path=str(Path(sys.executable).parent)), f"{tokens[0]} is not installed"
            assert tokens[0] in pyproject["tool"], f"no [tool.{tokens[0]}] in pyproject.toml"
            for path in tokens[1:]:
                assert path.startswith("-") or path == "check" or (ROOT / path).exists(), f"{command}: {path}"
        elif kind == "parse:server" and command.lang == "python":
            compile(command.text, "README server snippet", "exec")
            for module, names in re.findall(r"^from (pytest_pibench[\w.]*) import (.+)$", command.text, re.M):
                imported = __import__(module, fromlist=["x"])
                assert all(hasattr(imported, n.strip()) for n in names.split(",")), (module, names)
        elif kind == "parse:server":
            argv = [t for t in tokens if t != "&"]
            helper = ["pytest_pibench.a2a.green"] if argv[0] == "pi-bench-green" else [str(ROOT / argv[1])]
            out = subprocess.run([sys.executable, *(["-m"] if argv[0] == "pi-bench-green" else []), *helper,
                                  "--help"], capture_output=True, text=True, timeout=60, env=_env(ROOT),
                                 cwd=ROOT / (Path(argv[1]).parent if argv[0] == "python" else "."))
            assert out.returncode == 0, (command, out.stderr[-2000:])
            own = [t.split("=", 1)[0] for t in argv[1:] if t.startswith("-")]
            assert not _missing_options(own, out.stdout), f"{command}: unknown options"
        elif kind == "parse:samples":
            assert (ROOT / tokens[1]).is_file() and len(tokens) == 2, command
        elif kind == "parse:docker":
            assert (ROOT / "Dockerfile").is_file()
            assert "pi-bench-green" in tokens, command
        elif kind == "parse:conftest":
            compile(command.text, "README conftest.py", "exec")
            import pytest_pibench.plugin as plugin

            fixtures = re.findall(r"def (pibench_\w+)\(", command.text)
            assert fixtures and set(fixtures) <= set(plugin.__all__), fixtures


def test_supported_versions_match_pyproject():
    text = README.read_text(encoding="utf-8")
    section = text.split("## Supported versions", 1)[1].split("\n## ", 1)[0]
    table = dict(re.findall(r"^\| ([\w.-]+(?:\[[\w,-]+\])?)[^|]*\| `([^`]+)` \|", section, re.M))
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    pinned = {"Python": pyproject["requires-python"]}
    extras = pyproject["optional-dependencies"]
    for spec in [*pyproject["dependencies"], *extras["llm"], *extras["a2a"]]:
        match = re.match(r"([\w.-]+)(\[[\w,-]+\])?(.*)", spec)
        assert match, spec
        pinned[match[1] + (match[2] or "")] = match[3]
    assert table == pinned


@pytest.fixture
def scratch(tmp_path: Path) -> tuple[Path, Path]:
    """(work folder with copies of scenarios/ and domains/, folder of the mymod agent)."""
    work, agents = tmp_path / "work", tmp_path / "agents"
    agents.mkdir()
    (agents / "mymod.py").write_text(AGENT_MODULE, encoding="utf-8")
    shutil.copytree(ROOT / "scenarios", work / "scenarios")
    shutil.copytree(ROOT / "domains", work / "domains")
    shutil.copytree(TOY_SCENARIOS, work / "my_ws")
    return work, agents


def _prepare(tokens: tuple[str, ...], work: Path) -> tuple[list[str], Path | None]:
    """Argv to run (faster, placeholders filled) and the file a ``>`` redirects to."""
    argv: list[str] = []
    redirect = None
    items = list(tokens)
    while items:
        token = items.pop(0)
        if token == ">":
            redirect = work / items.pop(0)
        elif token in ("-n", "--concurrency") and items:
            argv += [token, str(min(int(items.pop(0)), 2))]
        elif token.startswith("path/to/"):
            argv.append(str(work / "my_ws" / ("domains" if token.rstrip("/").endswith("domains") else "scenarios")))
        else:
            argv.append(token)
    return argv, redirect


def _results_file(tokens: tuple[str, ...], work: Path) -> Path | None:
    for i, token in enumerate(tokens):
        if token.startswith("--pibench-results="):
            value = token.split("=", 1)[1]
            return work / value if value else None
        if token == "--results" and i + 1 < len(tokens):
            return work / tokens[i + 1]
    return work / "pibench-results.json"


def _run_bash(command: Command, work: Path, env: dict[str, str]) -> list[str]:
    """Run one command for real; the problems found (empty: it holds)."""
    kind = classify(command)
    tokens = command.tokens
    if kind == "run:selftest":  # the project's own tests: they collect (running them here would recurse)
        out = subprocess.run(_argv(["pytest", "--co", "-q", *tokens[1:]]), cwd=ROOT, env=env, capture_output=True,
                             text=True, timeout=120)
        ok = out.returncode == 0 and re.search(r"\d+ tests? collected", out.stdout)
        return [] if ok else [f"{command}: collection failed ({out.returncode}): {out.stdout[-2000:]}"]
    argv, redirect = _prepare(tokens, work)
    runs_agents = kind == "run:pytest" or (kind == "run:pi" and tokens[1] in ("run", "run-domain"))
    results = _results_file(tokens, work) if runs_agents else None
    before = results.stat().st_mtime_ns if results and results.exists() else None
    out = subprocess.run(_argv(argv), cwd=ROOT if kind == "run:script" else work, env=env, capture_output=True,
                         text=True, timeout=180)
    if redirect is not None:
        redirect.write_text(out.stdout, encoding="utf-8")
    text = out.stdout + out.stderr
    problems: list[str] = []
    agents = _agents(tokens) or (["oracle"] if kind == "run:pi" else [])
    gate = any(t.startswith(("--pibench-baseline", "--pibench-fail-under")) for t in tokens)
    if not runs_agents:
        allowed = {0}
    elif gate:
        allowed = {0, 8}
    elif set(agents) <= {"oracle"}:
        allowed = {0}  # the oracle passes every shipped scenario
    else:
        allowed = {0, 1}
    if out.returncode not in allowed:
        problems.append(f"{command}: exit code {out.returncode}, expected one of {sorted(allowed)}:\n{text[-3000:]}")
        return problems
    if runs_agents:
        if "pi-bench summary" not in text:
            problems.append(f"{command}: no pi-bench summary printed")
        if gate and "Gate: " not in text:
            problems.append(f"{command}: no gate verdict printed")
        if any(t.startswith("--pibench-baseline") for t in tokens) and "rows compared" not in text:
            problems.append(f"{command}: the baseline comparison compared nothing:\n{text[-2000:]}")
        if results is not None:
            if not results.exists() or results.stat().st_mtime_ns == before:
                problems.append(f"{command}: did not write {results.name}")
            else:
                rows = json.loads(results.read_text(encoding="utf-8"))["rows"]
                if not rows or {r["agent"] for r in rows} != set(agents):
                    problems.append(f"{command}: rows for {sorted({r['agent'] for r in rows})}, expected {agents}")
                errors = [r["error"] for r in rows if r["status"] != "completed"]
                if errors:
                    problems.append(f"{command}: error rows: {errors[:3]}")
    for target in [redirect, *(work / tokens[i + 1] for i, t in enumerate(tokens[:-1]) if t in ("-o", "--output"))]:
        if target is not None and target.suffix == ".json":
            try:
                json.loads(target.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                problems.append(f"{command}: {target.name} is not a JSON file: {exc}")
    if tokens[:2] == ("pi", "list") and not re.search(r"[A-Z]+_\d{3}", out.stdout):
        problems.append(f"{command}: listed no scenario: {out.stdout[-500:]}")
    return problems


@pytest.mark.slow
def test_readme_commands_run(scratch):
    """Every ``run`` command, in README order, in one scratch folder; all problems reported at once."""
    work, agent_dir = scratch
    env = _env(agent_dir)
    repo_outputs = {p for p in ("pibench-results.json", "main.json", "leaderboard.json") if (ROOT / p).exists()}
    problems: list[str] = []
    ran = 0
    for command in COMMANDS:
        kind = classify(command)
        if kind is None or not kind.startswith("run:"):
            continue
        ran += 1
        if kind == "run:python":  # the engine snippet, executed from the repository root
            out = subprocess.run([sys.executable, "-c", command.text], cwd=ROOT, env=env, capture_output=True,
                                 text=True, timeout=120)
            if out.returncode != 0 or not out.stdout.strip():
                problems.append(f"python block failed ({out.returncode}):\n{command.text}\n{out.stderr[-3000:]}")
        else:
            problems += _run_bash(command, work, env)
    assert ran >= 10
    assert not problems, "\n\n".join(problems)
    left = {p for p in ("pibench-results.json", "main.json", "leaderboard.json") if (ROOT / p).exists()}
    assert left <= repo_outputs, f"README commands wrote into the repository: {left - repo_outputs}"
