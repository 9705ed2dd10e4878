"""Run the oracle and the naive baselines over the bundled scenarios and print leaderboard metrics.

    python examples/local_demo/run_demo.py                 # oracle + the four baselines
    python examples/local_demo/run_demo.py --agent mymod:Agent --scenarios path/to/scenarios

No API key and no network are needed: the oracle replays each scenario's gold
trajectory and the baselines always decide the same way.
"""

from __future__ import annotations

import argparse
import json
import time

from pytest_pibench import bundled_scenarios_dir, compute_metrics, run_suite, to_leaderboard

DEFAULT_AGENTS = ["oracle", "baseline:allow", "baseline:deny", "baseline:escalate", "baseline:silent"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agent", action="append", help="agent spec (repeatable); default: oracle + baselines")
    parser.add_argument("--scenarios", default=str(bundled_scenarios_dir()), help="scenario file or folder")
    parser.add_argument("--trials", type=int, default=1)
    parser.add_argument("--leaderboard", help="write the AgentBeats artifact of the first agent here")
    args = parser.parse_args()

    agents = args.agent or DEFAULT_AGENTS
    started = time.monotonic()
    rows = run_suite([args.scenarios], agents, trials=args.trials)
    elapsed = time.monotonic() - started
    if not rows:
        raise SystemExit(f"no scenario files found under {args.scenarios}")

    print(f"{'agent':<20}{'rows':>5}{'errors':>7}{'compliance':>12}{'overall':>9}  by group")
    for agent in agents:
        mine = [r for r in rows if r["agent"] == agent]
        m = compute_metrics(mine)
        groups = ", ".join(f"{g.split()[-1]} {v:.2f}" for g, v in m["by_group"].items())
        print(
            f"{agent:<20}{len(mine):>5}{m['errors']:>7}{m['compliance_rate']:>12.2f}"
            f"{m['overall_score']:>9.2f}  {groups}"
        )
        for row in mine:
            if row["status"] != "completed" or not row["all_passed"]:
                failing = next((c for c in row["outcome_checks"] if c["passed"] is False), None)
                why = row.get("error") or (f"{failing['outcome_id']}: {failing['detail']}" if failing else "")
                print(f"    FAIL {row['scenario_id']} [{row['label']} -> {row['canonical_decision']}] {why[:110]}")
    print(f"\n{len(rows)} episodes in {elapsed:.2f}s")
    first = [r for r in rows if r["agent"] == agents[0]]
    print(f"\nmetrics for {agents[0]}:")
    print(json.dumps({k: v for k, v in compute_metrics(first).items() if k != "extended"}, indent=2))
    if args.leaderboard:
        with open(args.leaderboard, "w", encoding="utf-8") as handle:
            json.dump(to_leaderboard(first, agent_id=agents[0], time_used=elapsed), handle, indent=2)
        print(f"leaderboard artifact written to {args.leaderboard}")


if __name__ == "__main__":
    main()
