"""The network mode end to end on 127.0.0.1: a purple agent, a user server, the benchmark both ways.

    python examples/a2a_demo/run_demo.py --model openai/gpt-4o-mini -k RET_00
    python examples/a2a_demo/run_demo.py --model openai/my-model --agent-arg api_base=http://127.0.0.1:8000/v1

1. starts ``purple_server.py`` (the litellm reference agent, bootstrap extension) and
   ``user_server.py`` (the scripted user) as processes on free ports;
2. runs ``pytest --pibench-agent=a2a:<purple> --pibench-user=a2a:<user>`` on the bundled
   scenarios (``-k`` selects), writing ``a2a-demo-results.json``;
3. starts ``pi-bench-green`` and sends it an AgentBeats-style assessment request for the
   same purple agent, printing its progress and the artifact's headline numbers.

Every server is stopped at the end. Exit code: pytest's (0 when every selected scenario passed).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

HERE = Path(__file__).resolve().parent


def start(command: list[str], name: str) -> tuple[subprocess.Popen[str], str]:
    """Start a server process that prints ``serving on URL``; wait for its /health or card."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, cwd=HERE)
    assert process.stdout is not None
    match = re.search(r"serving on (\S+)", process.stdout.readline())
    if not match:
        process.kill()
        raise SystemExit(f"{name} did not start")
    url = match.group(1)
    for _ in range(100):
        try:
            if httpx.get(url + "/.well-known/agent-card.json", timeout=1).status_code == 200:
                print(f"{name}: {url}")
                return process, url
        except httpx.TransportError:
            time.sleep(0.1)
    process.kill()
    raise SystemExit(f"{name} at {url} never answered")


async def assess(green: str, payload: dict[str, Any]) -> dict[str, Any]:
    from a2a.client import ClientConfig, create_client
    from a2a.types import a2a_pb2
    from google.protobuf.json_format import MessageToDict

    client = await create_client(green, client_config=ClientConfig(streaming=True))
    message = a2a_pb2.Message(message_id=uuid.uuid4().hex, role=a2a_pb2.Role.ROLE_USER)
    message.parts.add().text = json.dumps(payload)  # as the AgentBeats gateway sends it
    artifact: dict[str, Any] = {}
    async for event in client.send_message(a2a_pb2.SendMessageRequest(message=message)):
        data = MessageToDict(event)
        status = data.get("statusUpdate", {}).get("status", {})
        texts = [p["text"] for p in status.get("message", {}).get("parts", []) if "text" in p]
        if texts:
            print(f"  green: {status['state']}: {texts[0]}")
        for part in data.get("artifactUpdate", {}).get("artifact", {}).get("parts", []):
            if "text" in part:
                artifact = json.loads(part["text"])
    await client.close()
    return artifact


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="openai/gpt-4o-mini")
    parser.add_argument("--agent-arg", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("-k", dest="select", default="RET_00", help="pytest -k expression over the bundled scenarios")
    parser.add_argument("--skip-green", action="store_true", help="only the pytest direction")
    args = parser.parse_args()

    agent_args = [f"--agent-arg={a}" for a in args.agent_arg]
    servers = []
    try:
        purple_process, purple = start([sys.executable, "purple_server.py", "--port", "0", "--model", args.model,
                                        *agent_args], "purple agent")  # fmt: skip
        servers.append(purple_process)
        user_process, user = start([sys.executable, "user_server.py", "--port", "0"], "user simulator")
        servers.append(user_process)
        results = Path("a2a-demo-results.json").resolve()
        command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", f"--pibench-agent=a2a:{purple}",
                   f"--pibench-user=a2a:{user}", "-k", args.select, f"--pibench-results={results}"]  # fmt: skip
        print("$", " ".join(command))
        status = subprocess.run(command, cwd=os.getcwd(), check=False).returncode
        if not args.skip_green:
            green_process, green = start(["pi-bench-green", "--port", "0"], "green server")
            servers.append(green_process)
            ids = [r["scenario_id"] for r in json.loads(results.read_text())["rows"]]
            artifact = asyncio.run(assess(green, {"participants": {"agent": {"url": purple, "id": "demo-purple"}},
                                                  "config": {"scenario_ids": ids, "user_url": user}}))  # fmt: skip
            result = artifact["results"][0]
            print(f"green artifact: agent {artifact['participants']['agent']}, score {result['score']:.0f}/"
                  f"{result['max_score']:.0f}, compliance {result['metrics']['compliance_rate']:.2f}")
        raise SystemExit(status)
    finally:
        for process in servers:
            process.terminate()
            process.wait(10)


if __name__ == "__main__":
    main()
