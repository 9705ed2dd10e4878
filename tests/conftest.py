"""Shared fixtures: the toy workspace (a tiny domain + two scenarios) copied into tmp_path."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

DATA = Path(__file__).parent / "data"
TOY_WORKSPACE = DATA / "workspace"
TOY_ALLOW = TOY_WORKSPACE / "scenarios" / "toyshop" / "toy_allow_refund.json"
TOY_ESCALATE = TOY_WORKSPACE / "scenarios" / "toyshop" / "toy_escalate_expensive.json"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A private copy of the toy workspace (domains/toyshop + scenarios/toyshop)."""
    target = tmp_path / "ws"
    shutil.copytree(TOY_WORKSPACE, target)
    return target


@pytest.fixture
def toy_data() -> dict[str, Any]:
    """The ALLOW toy scenario as a dict, to mutate in a test."""
    return json.loads(TOY_ALLOW.read_text())


@pytest.fixture
def write_scenario(workspace: Path) -> Callable[..., Path]:
    """Write a scenario dict into the workspace copy and return its path."""

    def write(data: dict[str, Any], name: str = "case.json") -> Path:
        path = workspace / "scenarios" / "toyshop" / name
        path.write_text(json.dumps(data, indent=1))
        return path

    return write



@pytest.fixture
def toy_project(pytester: pytest.Pytester) -> pytest.Pytester:
    """A pytester folder holding the toy workspace (domains/ and scenarios/)."""
    shutil.copytree(TOY_WORKSPACE / "domains", pytester.path / "domains")
    shutil.copytree(TOY_WORKSPACE / "scenarios", pytester.path / "scenarios")
    return pytester
