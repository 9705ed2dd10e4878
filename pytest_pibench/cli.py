"""The ``pi`` command: thin wrappers over ``pytest.main`` (one engine for both paths) plus tools.

    pi list [--domain D] [PATH|NAME]       scenarios with label and capability column
    pi run SCENARIO... [--agent SPEC]      run scenarios (pytest underneath): files, folders,
                                           or a domain / file stem / scenario id by name
    pi run-domain DOMAIN [--num-trials N] [--concurrency N] [--workers N]
    pi validate [PATH...]                  the scenario validator; exit 1 on any problem
    pi report FILE... [-o OUT] [--results R]  results or pytest-json-report file -> leaderboard JSON;
                                           several files (the shards of one run) are merged first
    pi report FILE... --html PATH          the HTML report; several files: runs side by side
    pi compare A.json [B.json]             paired comparison of two agents, metric by metric
    pi plan RESULTS --difference D         trials or scenarios needed to detect D
    pi schema                              the JSON Schema of scenario files
    pi generate SCENARIO... [--style S] [--seed N] [--out DIR]
                                           certified pressure variants of hand-written scenarios
    pi play SCENARIO [--state F] [--act A] [--record R] | --score RECORD   play as the agent (see play/)
    pi calibration [DIR] [--json] [--check]   re-score blind-play records, issue 24's targets

Arguments after ``--`` go to pytest unchanged. ``pi run`` takes every
``--pibench-NAME`` option of the plugin as ``--NAME`` (one option table for
both). Upstream's flag names are accepted: ``--agent``, ``--agent-llm``,
``--user-llm``, ``--num-trials``, ``--concurrency``, ``--seed``.

A usage error (an unknown flag, a bad value, a path that does not exist, a
name that is no known domain, scenario file or scenario id) exits with 4, as
pytest's usage errors do.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from pytest_pibench.inputs import argument_type, finite_float, whole_number

__all__ = ["USAGE_ERROR", "main"]

USAGE_ERROR = 4
"""Exit code of a bad ``pi`` argument (pytest's ``ExitCode.USAGE_ERROR``)."""


class _UsageError(Exception):
    """A bad argument: ``pi: MESSAGE`` on standard error, exit code 4."""


class _Parser(argparse.ArgumentParser):
    """argparse with pytest's exit code for usage errors (argparse's own is 2)."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(USAGE_ERROR, f"{self.prog}: error: {message}\n")


def _number(low: float | None = None, high: float | None = None, *, low_open: bool = False, high_open: bool = False
            ) -> Callable[[str], float]:  # fmt: skip
    """An argparse type: a finite number in range; NaN, infinity or a value out of range is a usage error (exit 4)."""
    return argument_type(lambda text: finite_float(text, low, high, low_open=low_open, high_open=high_open), "number")


def _existing(path: str) -> str:
    if not Path(path).exists():
        raise _UsageError(f"no such file or directory: {path}")
    return path


def resolve_scenario_arg(arg: str) -> str:
    """What ``pi run``/``pi list`` run for ``arg`` (see :func:`~pytest_pibench.run.targets.resolve_target`).

    Raises:
        _UsageError: when ``arg`` names nothing.
    """
    from pytest_pibench.run.targets import TargetError, resolve_target  # the engine only when a name is looked up

    try:
        return resolve_target(arg)
    except TargetError as exc:
        raise _UsageError(str(exc)) from None


_UPSTREAM_ALIASES: dict[str, tuple[str, ...]] = {"trials": ("--num-trials",)}
"""Upstream's names for plugin options: ``pi run --num-trials N`` is ``--trials N``."""


def _run_options(parser: argparse.ArgumentParser) -> None:
    """The flags of ``pi run`` and ``pi run-domain``: every plugin option, plus upstream's shortcuts.

    Each ``--pibench-NAME`` of the plugin's option table is ``--NAME`` here, with
    the plugin's help text and value type, so the two never drift apart.
    """
    from pytest_pibench.plugin.settings import OPTIONS

    for option in OPTIONS:
        kwargs: dict[str, Any] = {
            "dest": option.dest,
            "action": "append" if option.repeatable else "store",
            "type": argument_type(option.parse, option.value_type.__name__) if option.bounds else option.value_type,
            "metavar": option.metavar,
        }
        default = "; pi's default: oracle" if option.name == "agent" else ""
        parser.add_argument(f"--{option.name}", help=option.help + default, **kwargs)
        for alias in _UPSTREAM_ALIASES.get(option.name, ()):  # its own argument: errors name the flag typed
            parser.add_argument(alias, help=f"upstream's name of --{option.name}", **kwargs)
    parser.add_argument("--agent-llm", metavar="MODEL", help="shortcut for --agent litellm:MODEL")
    parser.add_argument("--user-llm", metavar="MODEL", help="shortcut for --user litellm:MODEL")
    parser.add_argument("--workers", type=argument_type(lambda text: whole_number(text, 1), "int"), metavar="N",
                        help="parallel worker processes (pytest-xdist -n)")  # fmt: skip


def _pytest_args(args: argparse.Namespace, paths: list[str], extra: list[str]) -> list[str]:
    """pytest's arguments for a ``pi run``: each flag given becomes its ``--pibench-*`` option."""
    from pytest_pibench.plugin.settings import OPTIONS

    agents = list(getattr(args, "pibench_agent", None) or [])
    if args.agent_llm:
        agents.append(f"litellm:{args.agent_llm}")
    out = [f"--pibench-agent={a}" for a in agents or ["oracle"]]
    for option in OPTIONS:
        value = getattr(args, option.dest, None)
        if option.name == "agent":
            continue
        if option.name == "user" and args.user_llm:
            value = f"litellm:{args.user_llm}"
        values = (value or []) if option.repeatable else [value]
        out += [f"{option.flag}={v}" for v in values if v is not None]
    if args.workers and args.workers > 1:
        out += ["-n", str(args.workers)]
    return [*paths, *out, *extra]


def _domain_dir(domain: str) -> Path:
    from pytest_pibench.packs.loading import canonical_domain_name
    from pytest_pibench.paths import bundled_scenarios_dir

    for root in (Path.cwd() / "scenarios", bundled_scenarios_dir()):
        candidate = root / canonical_domain_name(domain)
        if candidate.is_dir():
            return candidate
    raise _UsageError(
        f"no scenarios for domain {domain!r} (looked in ./scenarios and the bundled set); `pi list` shows the domains"
    )


def _cmd_list(args: argparse.Namespace) -> int:
    from pytest_pibench.packs.loading import canonical_domain_name
    from pytest_pibench.paths import bundled_scenarios_dir
    from pytest_pibench.scenario.loading import ScenarioError, discover_scenarios, load_scenario

    root = Path(resolve_scenario_arg(args.path)) if args.path else bundled_scenarios_dir()
    wanted = canonical_domain_name(args.domain) if args.domain else None
    rows = []
    for file in discover_scenarios(root):
        try:
            scenario = load_scenario(file)
        except ScenarioError as exc:
            rows.append(("INVALID", "", "", "", f"{file.name}: {exc.problems[0][1]}"))
            continue
        domain = canonical_domain_name(scenario.meta.domain)
        if wanted and domain != wanted:
            continue
        rows.append((scenario.scenario_id, domain, scenario.label, scenario.leaderboard.primary, file.name))
    if not rows:
        print(f"no scenarios found under {root}" + (f" for domain {args.domain}" if args.domain else ""))
        return 1
    widths = [max(len(r[i]) for r in [*rows, ("scenario", "domain", "label", "column", "file")]) for i in range(5)]
    header = ("scenario", "domain", "label", "column", "file")
    for row in [header, *rows]:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
    print(f"\n{len(rows)} scenario(s)")
    return 0


def _cmd_validate(args: argparse.Namespace) -> int:
    from pytest_pibench.paths import bundled_scenarios_dir
    from pytest_pibench.validation import validate

    failed = False
    for path in [_existing(p) for p in args.paths] or [str(bundled_scenarios_dir())]:
        report = validate(path)
        print(report.format())
        failed = failed or not report.ok
    return 1 if failed else 0


def _cmd_report(args: argparse.Namespace) -> int:
    from pytest_pibench.report import ReportError, html_report, markdown_report, report_command

    files = [_existing(name) for name in args.file]
    try:
        if args.markdown:
            markdown_report(files, args.markdown)
        if args.html:
            print(f"wrote {html_report(files, args.html)}", file=sys.stderr if args.markdown == "-" else sys.stdout)
        if (args.markdown or args.html) and not (args.output or args.results):
            return 0
        return report_command(files, output=args.output, results=args.results, max_error_rate=args.max_error_rate)
    except ReportError as exc:
        raise _UsageError(f"report: {exc}") from None


def _cmd_generate(args: argparse.Namespace) -> int:
    from pytest_pibench.generation import STYLES, UnknownStyleError, get_style, write_variants
    from pytest_pibench.scenario.loading import ScenarioError, discover_scenarios, load_scenario

    if args.list_styles:
        for style in STYLES.values():
            print(f"{style.name:<14} {style.description}")
        return 0
    if not args.scenarios:
        raise _UsageError("name at least one scenario file, folder, domain or scenario id (or --list-styles)")
    try:
        styles = [get_style(name) for name in args.style or list(STYLES)]
    except UnknownStyleError as exc:
        raise _UsageError(str(exc)) from None
    bases: list[Path] = []
    skipped = 0
    for arg in args.scenarios:
        root = Path(resolve_scenario_arg(arg))
        for file in [root] if root.is_file() else discover_scenarios(root):
            try:  # a folder's generated variants are not bases; one named on its own is refused, with why
                if not root.is_file() and load_scenario(file).meta.variant is not None:
                    skipped += 1
                    continue
            except ScenarioError:
                pass  # write_variants reports it as a refused base
            bases.append(file)
    if skipped:
        print(f"{skipped} generated variant(s) in the folders are not bases: left as they are")
    outcomes = write_variants(bases, styles, args.seed, Path(args.out) if args.out else None)
    for outcome in outcomes:
        if outcome.problems:
            print(f"REFUSED {outcome.path} ({outcome.style} of {outcome.base.name}):")
            print("".join(f"  - {problem}\n" for problem in outcome.problems), end="")
        else:
            print(f"{'unchanged' if outcome.unchanged else 'wrote'} {outcome.path}")
    refused = sum(1 for o in outcomes if o.problems)
    print(f"\n{len(outcomes) - refused} variant(s) certified, {refused} refused")
    return 1 if refused else 0


def main(argv: Sequence[str] | None = None) -> int:
    """``pi``: exit code of the subcommand; a reader that went away (``pi list | head``) is not an error."""
    try:
        return _main(argv)
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit's flush
        return 0


def _main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    extra: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, extra = argv[:cut], argv[cut + 1 :]
    parser = _Parser(prog="pi", description="pi-bench policy-compliance benchmark")
    commands = parser.add_subparsers(dest="command", required=True)
    listing = commands.add_parser("list", help="list scenarios with label and capability column")
    listing.add_argument(
        "path", nargs="?", help="scenario file or folder, or a domain, file stem or scenario id (default: all bundled)"
    )
    listing.add_argument("--domain", help="only this domain (name or upstream alias)")
    run = commands.add_parser("run", help="run scenario files through pytest")
    run.add_argument(
        "scenarios", nargs="+", help="scenario files or folders, or bundled ones by domain, file stem or scenario id"
    )
    _run_options(run)
    run_domain = commands.add_parser("run-domain", help="run every scenario of a domain")
    run_domain.add_argument("domain")
    _run_options(run_domain)
    check = commands.add_parser("validate", help="validate scenarios (exit 1 on any problem)")
    check.add_argument("paths", nargs="*", help="files or folders (default: the bundled scenarios)")
    report = commands.add_parser(
        "report", help="leaderboard artifact from a results or json-report file (several: the shards of one run)"
    )
    report.add_argument("file", nargs="+", help="results files; several are merged (shards of one run)")
    report.add_argument("--results", help="also write the (merged) results document here")
    report.add_argument("-o", "--output", help="write here instead of standard output")
    report.add_argument(
        "--html",
        metavar="PATH",
        help="write the HTML report here instead (several files: runs side by side; shards of one run merged)",
    )
    report.add_argument(
        "--markdown",
        metavar="PATH",
        help="write a markdown summary here ('-': standard output): headline numbers with intervals, the gate's "
        "verdict, regressed and failed scenarios (for a CI job summary or a pull-request comment)",
    )
    report.add_argument(
        "--max-error-rate",
        type=_number(0, 1),
        help="error-row budget per agent (default: the run's own --pibench-max-error-rate)",
    )
    from pytest_pibench.report._gate_parser import add_gate_parser

    add_gate_parser(commands)
    compare = commands.add_parser("compare", help="paired comparison of two agents: better, worse, not distinguishable")
    compare.add_argument("file", nargs="+", help="two results files, or one holding two agents")
    compare.add_argument("--a", help="agent A (the reference)")
    compare.add_argument("--b", help="agent B (compared with A)")
    compare.add_argument(
        "--alpha",
        type=_number(0, 1, low_open=True, high_open=True),
        default=0.05,
        help="significance level (default 0.05)",
    )
    compare.add_argument("--json", help="also write the comparison here as JSON")
    plan = commands.add_parser("plan", help="trials or scenarios needed to detect a difference, from a results file")
    plan.add_argument("file", help="a results file (its observed variance)")
    plan.add_argument(
        "--difference", type=_number(0, 1, low_open=True), required=True, help="the difference to detect (e.g. 0.1)"
    )
    plan.add_argument("--power", type=_number(0.5, 1, high_open=True), default=0.8, help="power (default 0.8)")
    plan.add_argument(
        "--alpha",
        type=_number(0, 0.5, low_open=True, high_open=True),
        default=0.05,
        help="two-sided level (default 0.05)",
    )
    plan.add_argument("--agent", help="the agent of the file to plan from (default: its first)")
    plan.add_argument("--json", help="also write the plan here as JSON")
    commands.add_parser("schema", help="print the JSON Schema of scenario files")
    generate = commands.add_parser("generate", help="write certified pressure variants of hand-written scenarios")
    generate.add_argument("scenarios", nargs="*", help="base scenario files or folders, or bundled ones by name")
    generate.add_argument("--style", action="append", help="a pressure style (repeatable; default: every style)")
    generate.add_argument("--seed", type=int, default=0, help="generator seed (default 0); same seed, same files")
    generate.add_argument("--out", help="write the variants here (default: beside each base)")
    generate.add_argument("--list-styles", action="store_true", help="list the pressure styles and exit")
    from pytest_pibench.calibration.command import add_calibration_parser, calibration_command
    from pytest_pibench.play.command import add_play_parser, play_command

    add_play_parser(commands)
    add_calibration_parser(commands)
    args = parser.parse_args(argv)
    if args.command == "play":
        return play_command(args, resolve_scenario_arg)
    if args.command == "calibration":
        return calibration_command(args)
    try:
        return _dispatch(args, extra)
    except _UsageError as exc:
        print(f"pi: {exc}", file=sys.stderr)
        return USAGE_ERROR


def _dispatch(args: argparse.Namespace, extra: list[str]) -> int:
    if args.command == "list":
        return _cmd_list(args)
    if args.command == "validate":
        return _cmd_validate(args)
    if args.command == "report":
        return _cmd_report(args)
    if args.command == "gate":
        from pytest_pibench.report import ReportError
        from pytest_pibench.report._gate import run_gate

        try:
            return run_gate(args, [_existing(f) for f in args.file])
        except ReportError as exc:
            raise _UsageError(f"gate: {exc}") from None
    if args.command == "plan":
        from pytest_pibench.report import ReportError
        from pytest_pibench.report._plan import plan_command

        try:
            return plan_command(args.file, difference=args.difference, power=args.power, alpha=args.alpha,
                                agent=args.agent, output=args.json)  # fmt: skip
        except ReportError as exc:
            raise _UsageError(f"plan: {exc}") from None
    if args.command == "compare":
        from pytest_pibench.report import ReportError
        from pytest_pibench.report._compare import compare_command

        try:
            return compare_command(args.file, agent_a=args.a, agent_b=args.b, alpha=args.alpha, output=args.json)
        except ReportError as exc:
            raise _UsageError(f"compare: {exc}") from None
    if args.command == "generate":
        return _cmd_generate(args)
    if args.command == "schema":
        from pytest_pibench.scenario.loading import json_schema

        print(json.dumps(json_schema(), indent=2))
        return 0
    import pytest

    if args.command == "run":
        paths = [resolve_scenario_arg(arg) for arg in args.scenarios]
    else:
        paths = [str(_domain_dir(args.domain))]
    return int(pytest.main(_pytest_args(args, paths, extra)))


if __name__ == "__main__":
    sys.exit(main())
