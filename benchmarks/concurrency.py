"""Throughput at high concurrency: LLM episodes in flight against a fixed-latency model server.

    python benchmarks/concurrency.py --latency 0.5 --in-flight 1 8 32 64 --trials 4 --repeats 1

For each in-flight total N it runs ``pytest scenarios/retail --pibench-concurrency
N/W -n W`` (W worker processes, default 1) with a litellm agent, a litellm user
and a litellm judge pointed at the scripted OpenAI-compatible server of
``pytest_pibench.testing`` on 127.0.0.1, which answers every call after L
seconds. It prints, as medians over the repeats: the wall time; the ideal
(calls x L / N: what a harness that costs nothing would take); their ratio;
CPU seconds of the whole process tree; CPU per LLM call; and the peak memory
of the process tree (the sum of the resident sizes of pytest and its workers,
sampled every 50 ms). Then a cached rerun of the largest N with
``--pibench-cache``: it must make no calls.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from pytest_pibench import bundled_scenarios_dir
from pytest_pibench.testing import FakeLLMServer, Reply, reply

MODEL = "litellm:openai/gpt-4o-mini"


def scripted_model(body: dict[str, Any]) -> Reply:
    """Agent: a look-up-free decision, then an answer; user: one follow-up, then stop; judge: YES."""
    messages = body["messages"]
    system = str(messages[0].get("content", "")) if messages else ""
    if "tools" in body:
        if messages[-1]["role"] == "user" and not any(m["role"] == "tool" for m in messages):
            return reply.tool_call("record_decision", {"decision": "ESCALATE", "rationale": "Needs a manager."})
        return reply.text("I have passed your request to a manager, who will contact you.")
    if '"answer"' in system:
        return reply.text('{"answer": "YES", "reasoning": "fine"}')
    said = sum(1 for m in messages if m["role"] == "assistant")
    return reply.text("###STOP###" if said >= 2 else "Could you confirm what happens next?")


def _tree_rss_bytes(root: int) -> int:
    """Resident memory of ``root`` and its descendants (Linux /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                parent = int(stat.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(parent, []).append(int(entry))
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        todo += children.get(pid, [])
        try:
            with open(f"/proc/{pid}/status") as status:
                for line in status:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1]) * 1024
        except OSError:
            continue
    return total


def run(server: FakeLLMServer, in_flight: int, workers: int, trials: int, workdir: Path,
        cache: Path | None = None, dist: str | None = None) -> dict[str, float]:
    before = len(server.requests)
    args = [sys.executable, "-m", "pytest", str(bundled_scenarios_dir() / "retail"), "-q", "-p", "no:cacheprovider",
            f"--pibench-agent={MODEL}", f"--pibench-user={MODEL}", f"--pibench-judge={MODEL}",
            f"--pibench-trials={trials}", f"--pibench-concurrency={max(1, in_flight // workers)}",
            "--pibench-results=r.json"]
    for role in ("agent", "user", "judge"):
        args += [f"--pibench-{role}-arg=api_base={server.base_url}", f"--pibench-{role}-arg=api_key=sk-bench"]
    if cache is not None:
        args.append(f"--pibench-cache={cache}")
    if workers > 1:
        args += ["-n", str(workers)] + ([f"--dist={dist}"] if dist else [])
    usage_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    process = subprocess.Popen(args, cwd=workdir, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    peak = [0]

    def sample() -> None:
        while process.poll() is None:
            peak[0] = max(peak[0], _tree_rss_bytes(process.pid))
            time.sleep(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    process.wait()
    wall = time.monotonic() - started
    sampler.join()
    usage_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (usage_after.ru_utime - usage_before.ru_utime) + (usage_after.ru_stime - usage_before.ru_stime)
    rows = json.loads((workdir / "r.json").read_text())["rows"]
    errors = sum(1 for r in rows if r["status"] == "error")
    if errors:
        raise SystemExit(f"{errors} error rows at N={in_flight}: the benchmark would not measure what it claims")
    calls = len(server.requests) - before
    return {"wall": wall, "calls": calls, "episodes": len(rows), "cpu": cpu, "peak_mb": peak[0] / 2**20}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.5, help="seconds per model call (default 0.5)")
    parser.add_argument("--in-flight", type=int, nargs="+", default=[1, 8, 32, 64])
    parser.add_argument("--workers", type=int, default=1, help="xdist processes sharing the in-flight total")
    parser.add_argument("--dist", help="xdist scheduling with --workers (default: the plugin's choice, worksteal)")
    parser.add_argument("--trials", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()

    header = f"{'N':>4} {'episodes':>8} {'calls':>6} {'wall s':>7} {'ideal s':>7} {'ratio':>6} {'CPU s':>6} " \
             f"{'CPU/call ms':>11} {'peak MB':>8}"
    dist = args.dist or "default dist"
    print(f"latency {args.latency}s, workers {args.workers} ({dist}), retail x {args.trials} trials; "
          f"medians of {args.repeats}")
    print(header)
    with FakeLLMServer(handler=scripted_model, latency=args.latency) as server, tempfile.TemporaryDirectory() as tmp:
        last: dict[str, float] = {}
        for n in args.in_flight:
            samples = [
                run(server, n, args.workers, args.trials, Path(tmp), dist=args.dist) for _ in range(args.repeats)
            ]
            median = {key: statistics.median(s[key] for s in samples) for key in samples[0]}
            ideal = median["calls"] * args.latency / n
            print(f"{n:>4} {int(median['episodes']):>8} {int(median['calls']):>6} {median['wall']:>7.1f} "
                  f"{ideal:>7.1f} {median['wall'] / ideal:>6.2f} {median['cpu']:>6.1f} "
                  f"{median['cpu'] / max(1, median['calls']) * 1000:>11.1f} {median['peak_mb']:>8.0f}")
            last = median
        n = args.in_flight[-1]
        cache = Path(tmp) / "cache"
        first = run(server, n, args.workers, args.trials, Path(tmp), cache, args.dist)
        again = run(server, n, args.workers, args.trials, Path(tmp), cache, args.dist)
        print(f"cached rerun at N={n}: first {first['wall']:.1f}s ({int(first['calls'])} calls), "
              f"rerun {again['wall']:.1f}s ({int(again['calls'])} calls), "
              f"{again['wall'] / first['wall']:.0%} of the first run")
        del last


if __name__ == "__main__":
    main()
