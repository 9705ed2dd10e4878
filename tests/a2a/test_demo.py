"""examples/a2a_demo end to end: purple and user servers, pytest over A2A, the green server (no network)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
from a2a_servers import bundled  # skips this module without the a2a extra

from pytest_pibench.testing import FakeLLMServer, reply

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(importlib.util.find_spec("litellm") is None, reason="the llm extra is not installed")


@pytest.mark.slow
def test_the_demo_runs_both_directions(tmp_path):
    first = sorted(s.scenario_id for s in bundled() if s.meta.domain == "retail")[0]
    with FakeLLMServer(default=reply.text("I am sorry, I cannot help with that request.")) as model:
        result = subprocess.run(
            [sys.executable, str(ROOT / "examples" / "a2a_demo" / "run_demo.py"), "--model", "openai/demo-model",
             "--agent-arg", f"api_base={model.base_url}", "--agent-arg", "api_key=sk-demo", "-k", first],
            cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
        calls = len(model.requests)
    out = result.stdout + result.stderr
    assert "purple agent: http://127.0.0.1:" in out and "user simulator: http://127.0.0.1:" in out, out[-3000:]
    rows = json.loads((tmp_path / "a2a-demo-results.json").read_text())["rows"]
    assert [r["scenario_id"] for r in rows] == [first]
    assert rows[0]["status"] == "completed" and rows[0]["agent"].startswith("a2a:http://127.0.0.1:")
    assert result.returncode == 1 and not rows[0]["all_passed"]  # an agent that only apologises fails the policy
    assert "green artifact: agent demo-purple, score 0/1" in out, out[-3000:]
    assert calls >= 2  # the purple agent's model was asked, over A2A, in both directions
