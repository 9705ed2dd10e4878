"""One line for a user who selects scenarios but names no agent: how to run the benchmark.

Without ``--pibench-agent`` the plugin collects no scenario (a project's own
test run must not turn into a benchmark run), so ``pytest -k finra`` in an
empty folder says "no tests ran" and inside a project runs the project's
tests. When the ``-k`` or ``-m`` expression names something only the
benchmark has (a bundled domain, a decision label, a capability column, a
pressure style), the terminal summary says how to run it.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

__all__ = ["RunHint", "benchmark_words", "register_run_hint", "run_hint"]


def benchmark_words() -> set[str]:
    """The names ``-k``/``-m`` select scenarios by: domains, labels, columns, ``pibench``; ``ret_``: an id prefix."""
    from pytest_pibench.paths import bundled_scenarios_dir
    from pytest_pibench.plugin.keys import LABEL_MARKS
    from pytest_pibench.vocab import COLUMNS, slug

    words = {"pibench", "variant", *LABEL_MARKS.values(), *(slug(c) for c in COLUMNS)}
    root = bundled_scenarios_dir()
    if root.is_dir():  # the domains, and the prefixes of their scenario ids (ret, fin, hd...)
        words |= {p.name for p in root.iterdir() if p.is_dir()}
        words |= {p.stem.split("_")[0] + "_" for p in root.glob("*/*.json")}
    return {w.lower() for w in words}


def run_hint(config: pytest.Config) -> str | None:
    """The line to print, or None when the selection names nothing of the benchmark's."""
    keyword = str(getattr(config.option, "keyword", "") or "")
    markexpr = str(getattr(config.option, "markexpr", "") or "")
    named = {w.lower() for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", f"{keyword} {markexpr}")}
    named -= {"and", "or", "not"}
    words = benchmark_words()
    prefixes = tuple(w for w in words if w.endswith("_"))
    if not any(w in words or w.startswith(("pressure_", *prefixes)) for w in named):
        return None
    flag = f"-k {keyword!r}" if keyword else f"-m {markexpr!r}"
    return (
        f"pi-bench: scenarios are collected only for an agent; run the benchmark with "
        f"pytest --pibench-agent=oracle {flag} (or --pibench-agent=mymod:Agent)"
    )


class RunHint:
    """Prints the hint at the end of the run (also with ``-q``, where the header is not shown)."""

    def __init__(self, line: str) -> None:
        self.line = line

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        terminalreporter.write_line(self.line, yellow=True, bold=True)


def register_run_hint(config: pytest.Config) -> None:
    """Register :class:`RunHint` when a ``-k``/``-m`` selection names the benchmark's scenarios."""
    line = run_hint(config) if (config.option.keyword or config.option.markexpr) else None
    if line:
        config.pluginmanager.register(RunHint(line), "pibench-run-hint")
