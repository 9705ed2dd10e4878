"""The package's layers: imports point down only, and no module imports itself back through others.

Layers, bottom to top (a module may import from its own layer and the ones below):

0. ``vocab``, ``paths``, ``bounds``, ``toolkit``, ``transcript``, ``statediff``, ``inputs``: vocabulary, bundled
   files, the domain author's API, what a transcript is made of (trace entries, message text, state changes),
   checked user inputs (finite numbers in range, URLs)
1. ``checks``: the check registry, one declaration per check type (model, evaluator, dimension, tool
   roles), all pure; below ``scenario`` because the scenario schema is derived from the registry
2. ``scenario``: scenario models and loading
3. ``packs``: loading domain packs (folders, entry points, declarative ones) and typed tools
4. ``env``: one episode's environment and a scenario bound to its domain
5. ``episode``: messages, participant protocols, seeds, the loop
6. ``participants``: agents, users, judges
7. ``evaluation``: scoring one transcript
8. ``results``: rows, metrics, leaderboard, the results document
9. ``run`` (the config, the plan, one episode's row, the executor every front end shares), ``runner`` (its
   former name, re-exported), ``validation``, ``generation``: the scenario quality bar; pressure variants
10. ``plugin``, ``cli``, ``testing``, ``report``, ``a2a`` (the green and purple servers), ``play`` (``pi play``),
    ``calibration`` (``pi calibration``: blind-play records re-scored), the package facade
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "pytest_pibench"

LAYERS: dict[str, int] = {
    "vocab": 0, "paths": 0, "bounds": 0, "toolkit": 0, "transcript": 0, "statediff": 0, "inputs": 0,
    "checks": 1,
    "scenario": 2,
    "packs": 3,
    "env": 4,
    "episode": 5,
    "participants": 6,
    "evaluation": 7,
    "results": 8,
    "runner": 9, "run": 9, "validation": 9, "generation": 9,
    "plugin": 10, "cli": 10, "testing": 10, "report": 10, "a2a": 10, "play": 10, "calibration": 10, "__init__": 10, "__main__": 10,
}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer_of(module: str) -> int:
    parts = module.split(".")
    if len(parts) == 1:  # the package itself: the facade
        return LAYERS["__init__"]
    return LAYERS[parts[1]]


def imports_of(path: Path) -> Iterator[tuple[str, int, bool]]:
    """(imported pytest_pibench module, line, at module level?) for every import, function-level ones too."""
    tree = ast.parse(path.read_text())
    top_level = {id(node) for node in tree.body}
    for node in ast.walk(tree):
        guarded = False
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("pytest_pibench"):
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names if a.name.startswith("pytest_pibench")]
        else:
            continue
        for name in names:
            if (PACKAGE.parent / name.replace(".", "/")).with_suffix(".py").exists() or (
                PACKAGE.parent / name.replace(".", "/") / "__init__.py"
            ).exists():
                yield name, node.lineno, id(node) in top_level and not guarded


def all_modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "_bundled" not in p.parts)


def test_every_module_has_a_layer():
    for path in all_modules():
        layer_of(module_name(path))  # raises KeyError for a folder nobody placed


@pytest.mark.parametrize("path", all_modules(), ids=lambda p: module_name(p))
def test_imports_point_down(path):
    here = module_name(path)
    upward = [
        f"line {line}: {name} (layer {layer_of(name)})"
        for name, line, _ in imports_of(path)
        if layer_of(name) > layer_of(here) and not name.startswith(here + ".")
    ]
    assert not upward, f"{here} (layer {layer_of(here)}) imports from above: {upward}"


def _type_checking_lines(path: Path) -> set[int]:
    tree = ast.parse(path.read_text())
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in ast.walk(node):
                if hasattr(child, "lineno"):
                    lines.add(child.lineno)
    return lines


@pytest.mark.slow
def test_no_import_cycles():
    graph: dict[str, set[str]] = {}
    for path in all_modules():
        here = module_name(path)
        skip = _type_checking_lines(path)
        graph[here] = {
            name for name, line, _ in imports_of(path) if line not in skip and name != here and name in _modules()
        }
    cycles = []
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append([*stack[stack.index(nxt):], nxt])
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def _modules() -> set[str]:
    return {module_name(p) for p in all_modules()}


def test_no_module_is_over_400_lines():
    long = {module_name(p): n for p in all_modules() if (n := len(p.read_text().splitlines())) > 400}
    assert not long, long


LAZY_IMPORTS: dict[str, str] = {
    "pytest_pibench.cli": "`pi` starts fast: each subcommand imports what it runs",
    "pytest_pibench.play.command": "`pi play` subcommand",
    "pytest_pibench.calibration.command": "`pi calibration` subcommand",
    "pytest_pibench.plugin": "the plugin loads in every pytest run: nothing heavy at import (test_plugin_import_is_light)",
    "pytest_pibench.participants.builtins": "the llm extra (litellm) is optional",
    "pytest_pibench.participants.llm.client": "litellm is optional and slow to import",
    "pytest_pibench.participants.a2a_client.scheme": "the a2a extra is optional",
    "pytest_pibench.a2a.entry": "pi-bench-green names the a2a extra when it is missing, before importing it",
    "pytest_pibench.results.files": "platform modules (fcntl, msvcrt)",
}
"""The modules allowed imports inside functions, each for a reason; everywhere else imports are at the top."""


def test_imports_inside_functions_only_where_start_up_or_an_optional_extra_needs_them():
    found: dict[str, int] = {}
    for path in all_modules():
        name = module_name(path)
        if any(name == lazy or name.startswith(lazy + ".") for lazy in LAZY_IMPORTS):
            continue
        tree = ast.parse(path.read_text())
        inner = {
            node.lineno
            for function in ast.walk(tree) if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef)
            for node in ast.walk(function) if isinstance(node, ast.Import | ast.ImportFrom)
        }  # fmt: skip
        if inner:
            found[name] = len(inner)
    assert not found, f"imports inside functions (move them to the top, or say why in LAZY_IMPORTS): {found}"
