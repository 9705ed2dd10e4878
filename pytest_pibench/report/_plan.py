"""``pi plan``: how many trials or scenarios a comparison needs, from a results file's observed variance."""

from __future__ import annotations

from pathlib import Path

from pytest_pibench.bounds import strict_dumps
from pytest_pibench.report._command import ReportError, read_run
from pytest_pibench.results.planning import plan_trials

__all__ = ["plan_command"]


def plan_command(
    path: str, *, difference: float, power: float = 0.8, alpha: float = 0.05, agent: str | None = None,
    output: str | None = None,
) -> int:  # fmt: skip
    """Print the plan for ``agent`` (the file's only or first agent by default); exit 0.

    Raises:
        ReportError: for a missing file, an unknown agent, or too little data to plan from.
    """
    if not Path(path).exists():
        raise ReportError(f"no such file or directory: {path}")
    rows = list(read_run(path)["rows"])
    agents = list(dict.fromkeys(str(r.get("agent")) for r in rows))
    chosen = agent or (agents[0] if agents else "")
    if chosen not in agents:
        raise ReportError(f"no agent {chosen!r} in {path} (has: {', '.join(agents) or 'none'})")
    try:
        plan = plan_trials([r for r in rows if r.get("agent") == chosen], difference, power=power, alpha=alpha)
    except ValueError as exc:
        raise ReportError(str(exc)) from None
    seen = plan["observed"]
    print(f"{chosen} in {path}: {int(seen['scenarios'])} scenarios x {seen['trials']:g} trials, "
          f"full compliance {seen['rate']:.3f}; between-scenario variance {seen['sb2']:.4f}, "
          f"within-scenario (trial) variance {seen['sw2']:.4f}")  # fmt: skip
    print(f"To detect a difference of {difference:g} in full compliance with power {power:g} at alpha {alpha:g} "
          f"(two agents, paired by scenario):")  # fmt: skip
    trials = plan["trials_needed"]
    print(f"  trials per scenario, with these {int(seen['scenarios'])} scenarios: "
          + (str(trials) if trials is not None else "none suffice (the scenarios differ too much; add scenarios)"))
    print(f"  scenarios, at {seen['trials']:g} trials each: {plan['scenarios_needed']}")
    if output:
        Path(output).write_text(strict_dumps({"agent": chosen, **plan}, indent=1) + "\n")
        print(f"wrote {output}")
    return 0
