"""The green server driven by an a2a-sdk 0.3-series client (what AgentBeats' runner uses), in its own environment.

The environment is made once per test session with the package registry (the project itself pins
a2a-sdk 1.x); the client sends the AgentBeats request shape as a text part, streaming and not, and
reads the artifact: the same numbers the 1.x client reads.
"""

from __future__ import annotations

import json
import subprocess
import sys
import venv
from pathlib import Path

import pytest
from a2a_servers import assess, bundled, serve  # skips without the a2a extra

from pytest_pibench.a2a.green import green_app
from pytest_pibench.a2a.serving import ServerThread

CLIENT = Path(__file__).parent / "clients" / "a2a03_client.py"


@pytest.fixture(scope="session")
def a2a03_python(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A Python with a2a-sdk 0.3.x and httpx, apart from the project's environment."""
    where = tmp_path_factory.mktemp("a2a03") / "venv"
    venv.create(where, with_pip=True)
    python = str(where / ("Scripts" if sys.platform == "win32" else "bin") / "python")
    installed = subprocess.run([python, "-m", "pip", "install", "-q", "a2a-sdk>=0.3,<0.4", "httpx"],
                               capture_output=True, text=True, timeout=600, check=False)  # fmt: skip
    if installed.returncode != 0:
        pytest.skip(f"could not install a2a-sdk 0.3 from the package registry: {installed.stderr[-500:]}")
    return python


@pytest.mark.parametrize("mode", ["streaming", "blocking"])
@pytest.mark.slow
def test_a_0_3_client_assesses_and_reads_the_artifact_the_1_x_client_reads(a2a03_python, mode):
    ids = sorted(s.scenario_id for s in bundled() if s.meta.domain == "retail")[:2]
    with serve() as purple, ServerThread(lambda url: green_app(url)) as green:
        ran = subprocess.run([a2a03_python, str(CLIENT), green.url, purple, mode, ",".join(ids)],
                             capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
        assert ran.returncode == 0, ran.stderr[-3000:]
        answer = json.loads(ran.stdout)
        events = assess(green.url, {"participants": {"agent": purple}, "config": {"scenario_ids": ids}}, as_text=True)
    assert answer["state"] == "completed" and answer["card_url"] == green.url
    assert (answer["updates"] >= len(ids)) if mode == "streaming" else answer["updates"] == 0
    artifact = answer["artifact"]
    (reference,) = [json.loads(e["artifactUpdate"]["artifact"]["parts"][1]["text"]) for e in events
                    if "artifactUpdate" in e]  # fmt: skip
    assert artifact["participants"] == reference["participants"] == {"agent": purple}
    result, expected = artifact["results"][0], reference["results"][0]
    assert result["score"] == expected["score"] == 2.0 and result["metrics"] == expected["metrics"]
