"""Harness overhead of LLM runs: the retail suite against a local model with a fixed latency.

    python benchmarks/llm_overhead.py --latency 0.2 --concurrency 1 4 --repeats 3

For each concurrency C it runs ``pytest <retail scenarios> -n C`` with a litellm
agent and a litellm user pointed at a scripted OpenAI-compatible server on
127.0.0.1 that answers every call after L seconds. It reports, as medians over
the repeats: the wall time, the ideal time (sum of call latencies / C), their
ratio, and the harness overhead per episode in worker-seconds ((wall - ideal)
x C / episodes), which includes pytest and xdist start-up and the one-off
litellm import of every worker (measured on its own below).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from pytest_pibench import bundled_scenarios_dir
from pytest_pibench.testing import FakeLLMServer, Reply, reply

MODEL = "litellm:openai/gpt-4o-mini"


def scripted_model(body: dict[str, Any]) -> Reply:
    """Agent: record a decision, then answer; user: one follow-up line, then stop."""
    messages = body["messages"]
    if "tools" in body:
        if messages[-1]["role"] == "user" and not any(m["role"] == "tool" for m in messages):
            return reply.tool_call("record_decision", {"decision": "ESCALATE", "rationale": "Needs a manager."})
        return reply.text("I have passed your request to a manager, who will contact you.")
    said = sum(1 for m in messages if m["role"] == "assistant")
    return reply.text("###STOP###" if said >= 2 else "Could you confirm what happens next?")


def run(server: FakeLLMServer, concurrency: int, workdir: Path) -> tuple[float, int, int]:
    before = len(server.requests)
    args = [sys.executable, "-m", "pytest", str(bundled_scenarios_dir() / "retail"), "-q", "-p", "no:cacheprovider",
            f"--pibench-agent={MODEL}", f"--pibench-user={MODEL}", "--pibench-results=r.json"]
    for role in ("agent", "user"):
        args += [f"--pibench-{role}-arg=api_base={server.base_url}", f"--pibench-{role}-arg=api_key=sk-bench"]
    if concurrency > 1:
        args += ["-n", str(concurrency)]
    started = time.monotonic()
    subprocess.run(args, cwd=workdir, capture_output=True, text=True, check=False)
    wall = time.monotonic() - started
    rows = json.loads((workdir / "r.json").read_text())["rows"]
    errors = sum(1 for r in rows if r["status"] == "error")
    if errors:
        raise SystemExit(f"{errors} error rows: the benchmark would not measure what it claims")
    return wall, len(server.requests) - before, len(rows)


def litellm_import_seconds() -> float:
    code = (
        "import os, time; os.environ['LITELLM_LOCAL_MODEL_COST_MAP'] = 'True'; "
        "t = time.monotonic(); import litellm; print(time.monotonic() - t)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per model call")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    print(f"litellm import: {statistics.median(litellm_import_seconds() for _ in range(3)):.2f}s (median of 3)")
    print(f"{'C':>3} {'episodes':>9} {'calls':>6} {'wall s':>8} {'ideal s':>8} {'wall/ideal':>11} {'overhead/ep':>12}")
    with FakeLLMServer(handler=scripted_model, latency=args.latency) as server, tempfile.TemporaryDirectory() as tmp:
        for concurrency in args.concurrency:
            samples = [run(server, concurrency, Path(tmp)) for _ in range(args.repeats)]
            wall = statistics.median(s[0] for s in samples)
            calls, episodes = samples[0][1], samples[0][2]
            ideal = calls * args.latency / concurrency
            overhead = (wall - ideal) * concurrency / episodes
            print(f"{concurrency:>3} {episodes:>9} {calls:>6} {wall:>8.2f} {ideal:>8.2f} {wall / ideal:>11.2f} "
                  f"{overhead:>11.3f}s")


if __name__ == "__main__":
    main()
