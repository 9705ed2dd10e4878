"""Where the bundled domains and scenarios live (a checkout or an installed wheel)."""

from __future__ import annotations

import codecs
import json
from functools import cache
from pathlib import Path

__all__ = [
    "SCENARIO_KEYS",
    "bundled_root",
    "bundled_scenarios_dir",
    "is_scenario_candidate",
    "is_scenario_nodeid",
    "workspace_root_for",
]

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


SCENARIO_KEYS = frozenset({"schema_version", "meta", "label", "evaluation_criteria", "user_simulation"})
"""Top-level keys that mark a JSON object as meant to be a scenario."""


def is_scenario_candidate(path: Path, root: Path) -> bool:
    """The one rule for which ``*.json`` files are scenarios, used by pytest collection, discovery and ``pi``.

    ``root`` is the collected path the file was found under: a folder, or the
    file itself when it was named explicitly. A file named explicitly is always
    a candidate. A ``*.json`` file found under a folder is a candidate unless

    - its name starts with ``_`` or ``.``, or a folder between ``root`` and the
      file is named ``archive`` (as upstream) or starts with ``.``; or
    - it is valid JSON that is clearly not a scenario: not an object, or an
      object with none of the keys ``schema_version``, ``meta``, ``label``,
      ``evaluation_criteria``, ``user_simulation``.

    So an empty file, a file that is not UTF-8 or not valid JSON, and an object
    with another ``schema_version`` are candidates: they are loaded and fail
    loudly (a failing item, a ``pi validate`` problem), never skipped.
    """
    if path == root:
        return True
    if path.name.startswith(("_", ".")):
        return False
    try:
        folders = path.parent.relative_to(root).parts
    except ValueError:
        folders = ()
    if any(part == "archive" or part.startswith(".") for part in folders):
        return False
    return not _clearly_not_a_scenario(path)


def _clearly_not_a_scenario(path: Path) -> bool:
    """Valid JSON that is not an object, or an object without any scenario key."""
    try:
        raw = path.read_bytes()
    except OSError:
        return False  # unreadable: the loader says why
    try:
        text = raw.removeprefix(codecs.BOM_UTF8).decode("utf-8")
    except ValueError:  # not UTF-8
        return False
    if _first_key(text) in SCENARIO_KEYS:
        return False  # an object naming a scenario key, if it is JSON at all: a candidate either way
    try:
        # Only the shape matters here: integers stay text, so a 5000-digit one is valid JSON, not a ValueError.
        data = json.loads(text, parse_int=str)
    except (ValueError, RecursionError):  # not JSON, empty
        return False
    return not (isinstance(data, dict) and not SCENARIO_KEYS.isdisjoint(data))


_JSON_SPACE = " \t\n\r"


def _first_key(text: str) -> str | None:
    """The first key of the object ``text`` starts with, read without decoding the rest; None if there is none.

    Scenario files name ``schema_version`` first: they need no second full decode besides the loader's.
    """
    body = text.lstrip(_JSON_SPACE)
    if not body.startswith("{"):
        return None
    start = len(text) - len(body) + 1
    while start < len(text) and text[start] in _JSON_SPACE:
        start += 1
    if not text.startswith('"', start):
        return None
    try:
        key, _ = json.decoder.scanstring(text, start + 1)  # type: ignore[attr-defined]
    except ValueError:
        return None
    return str(key)


def is_scenario_nodeid(nodeid: str) -> bool:
    """A scenario item's node id: its file part is a ``.json`` file (not a parametrize id holding ``.json::``)."""
    return nodeid.split("::", 1)[0].endswith(".json")
