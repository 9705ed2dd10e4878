"""Where the bundled domains and scenarios live (a checkout or an installed wheel)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

__all__ = ["bundled_root", "bundled_scenarios_dir", "is_scenario_file", "workspace_root_for"]

_SCHEMA_TAG = b'"pibench_scenario_v1"'

_PACKAGE_DIR = Path(__file__).resolve().parent


@cache
def bundled_root() -> Path:
    """The directory holding ``domains/`` and ``scenarios/``.

    In a source checkout (and an editable install) that is the repository root;
    the wheel carries copies under ``pytest_pibench/_bundled``.
    """
    for candidate in (_PACKAGE_DIR / "_bundled", _PACKAGE_DIR.parent):
        if (candidate / "domains").is_dir() and (candidate / "scenarios").is_dir():
            return candidate
    raise FileNotFoundError(
        f"pytest-pibench data not found next to {_PACKAGE_DIR}: the installation is incomplete "
        "(expected domains/ and scenarios/); reinstall the package"
    )


def bundled_scenarios_dir() -> Path:
    return bundled_root() / "scenarios"


def workspace_root_for(scenario_file: Path) -> Path | None:
    """The parent of the nearest enclosing ``scenarios`` directory (at most 5 levels up).

    A scenario's ``policy_text_ref`` and its own ``domains/`` are resolved from
    there, as upstream does.
    """
    for parent in list(scenario_file.resolve().parents)[:5]:
        if parent.name == "scenarios":
            return parent.parent
    return None


def is_scenario_file(path: Path) -> bool:
    """True for a JSON file whose top-level ``schema_version`` is ``pibench_scenario_v1``.

    Files that are not JSON objects or that fail to parse are not scenario files.
    Cheap: files without the version string are never parsed (pytest asks this
    for every ``*.json`` it collects).
    """
    try:
        raw = path.read_bytes()
    except OSError:
        return False
    if _SCHEMA_TAG not in raw:
        return False
    try:
        data = json.loads(raw)
    except ValueError:
        return False
    return isinstance(data, dict) and data.get("schema_version") == "pibench_scenario_v1"
