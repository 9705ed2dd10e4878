"""``pi-bench-green`` as users start it (the console script, a real process) and the Dockerfile that ships it."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from a2a_servers import assess, bundled, serve  # skips this module without the a2a extra

ROOT = Path(__file__).resolve().parents[2]


def test_the_console_script_serves_and_assesses():
    command = shutil.which("pi-bench-green") or pytest.skip("pi-bench-green is not on PATH (pip install -e .)")
    process = subprocess.Popen([command, "--port", "0", "--max-concurrency", "2"], stdout=subprocess.PIPE, text=True)
    try:
        line = process.stdout.readline()
        match = re.search(r"serving on (http://127\.0\.0\.1:\d+)", line)
        assert match, line
        url = match.group(1)
        card = httpx.get(url + "/.well-known/agent-card.json").json()
        assert card["name"] == "pi-bench" and card["supportedInterfaces"][0]["url"] == url
        scenario = next(s for s in bundled() if s.meta.domain == "helpdesk")
        with serve() as purple:
            events = assess(url, {"participants": {"agent": purple},
                                   "config": {"scenario_ids": [scenario.scenario_id]}}, as_text=True)  # fmt: skip
        final = [e["statusUpdate"]["status"]["state"] for e in events if "statusUpdate" in e][-1]
        assert final == "TASK_STATE_COMPLETED"
    finally:
        process.terminate()
        process.wait(10)


@pytest.mark.slow
def test_the_start_command_agentbeats_generates_is_accepted_and_unknown_flags_still_fail():
    command = shutil.which("pi-bench-green") or pytest.skip("pi-bench-green is not on PATH (pip install -e .)")
    generated = [command, "--host", "127.0.0.1", "--port", "0", "--card-url", "http://green-agent:9009",
                 "--concurrency", "1"]  # the compose generator's command, on a free loopback port  # fmt: skip
    process = subprocess.Popen(generated, stdout=subprocess.PIPE, text=True)
    try:
        match = re.search(r"serving on (http://127\.0\.0\.1:\d+)", process.stdout.readline())
        assert match
        card = httpx.get(match.group(1) + "/.well-known/agent-card.json").json()
        assert card["supportedInterfaces"][0]["url"] == "http://green-agent:9009"
    finally:
        process.terminate()
        process.wait(10)
    refused = subprocess.run([sys.executable, "-m", "pytest_pibench.a2a.green", "--concurency", "1"],
                             capture_output=True, text=True, check=False)  # fmt: skip
    assert refused.returncode == 2 and "unrecognized arguments: --concurency" in refused.stderr
    capped = subprocess.run([sys.executable, "-m", "pytest_pibench.a2a.green", "--concurrency", "0"],
                            capture_output=True, text=True, check=False)  # fmt: skip
    assert capped.returncode == 2 and "--max-concurrency must be between 1 and 256" in capped.stderr


def test_the_console_script_refuses_a_bad_cap():
    result = subprocess.run([sys.executable, "-m", "pytest_pibench.a2a.green", "--max-concurrency", "0"],
                            capture_output=True, text=True, check=False)  # fmt: skip
    assert result.returncode == 2 and "--max-concurrency must be between 1 and 256" in result.stderr


def test_the_dockerfile_installs_the_server_and_starts_it():
    text = (ROOT / "Dockerfile").read_text()
    for source in re.findall(r"^COPY (.+) \S+$", text, flags=re.M):
        for path in source.split():
            assert (ROOT / path).exists(), f"the Dockerfile copies {path}, which is not in the repository"
    assert '".[a2a,llm]"' in text  # the server's extra, and the LLM user simulator's
    # the wheel force-includes these folders: a build without one of them fails (calibration/ was missing)
    copied = {path for source in re.findall(r"^COPY (.+) \S+$", text, flags=re.M) for path in source.split()}
    forced = re.findall(r'^"([^"]+)" = "pytest_pibench/_bundled/', (ROOT / "pyproject.toml").read_text(), flags=re.M)
    assert forced and set(forced) <= copied, f"the image does not copy {sorted(set(forced) - copied)}"
    entry = re.search(r'^ENTRYPOINT \["([^"]+)"', text, flags=re.M)
    assert entry and f'{entry.group(1)} = "pytest_pibench.a2a.entry:green_main"' in (ROOT / "pyproject.toml").read_text()
    assert "/health" in text and "USER green" in text
