"""A domain pack may be a folder of several modules: ``tools.py`` imports its siblings (issue 25)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from pytest_pibench import evaluate, load_scenario, run_episode
from pytest_pibench.packs.loading import DomainError, load_domain_dir, load_pack_module
from pytest_pibench.participants.builtins import OracleAgent

TOYSHOP = Path(__file__).resolve().parents[1] / "data" / "workspace" / "domains" / "toyshop"

LOOKUP = '''"""The look-ups of the split toy pack."""

import copy
from typing import Any

from pytest_pibench.toolkit import DB, find_record


def lookup_item(db: DB, item_id: str) -> dict[str, Any]:
    """Look up a purchased toy.

    Args:
        item_id: The item id, e.g. "IT-1".
    """
    return copy.deepcopy(find_record(db, "items", "item_id", item_id))
'''


def split_pack(tmp_path: Path) -> Path:
    """The toy pack with ``lookup_item`` moved to ``_lookups.py`` and imported relatively."""
    pack = tmp_path / "domains" / "toyshop"
    shutil.copytree(TOYSHOP, pack)
    tools = (pack / "tools.py").read_text()
    start = tools.index("def lookup_item(")
    end = tools.index("def refund_item(")
    tools = tools[:start] + tools[end:]
    tools = tools.replace("from pytest_pibench.toolkit.routine import", "from ._lookups import lookup_item\n"
                          "from pytest_pibench.toolkit.routine import", 1)  # fmt: skip
    (pack / "tools.py").write_text(tools)
    (pack / "_lookups.py").write_text(LOOKUP)
    return pack


def test_a_pack_split_into_modules_loads_and_runs(tmp_path, workspace):
    pack = split_pack(tmp_path)
    domain = load_domain_dir(pack)
    assert "lookup_item" in domain.tool_names and "refund_item" in domain.tool_names
    assert domain.tool("lookup_item").description.startswith("Look up a purchased toy.")
    shutil.rmtree(workspace / "domains" / "toyshop")
    shutil.copytree(pack, workspace / "domains" / "toyshop")
    scenario = load_scenario(workspace / "scenarios" / "toyshop" / "toy_001_item_refund.json")
    assert evaluate(scenario, run_episode(scenario, OracleAgent(scenario))).all_passed


def test_two_copies_of_a_split_pack_do_not_share_modules(tmp_path):
    first = load_pack_module(split_pack(tmp_path / "a") / "tools.py")
    second = load_pack_module(split_pack(tmp_path / "b") / "tools.py")
    assert first.lookup_item is not second.lookup_item
    assert first.lookup_item.__module__ != second.lookup_item.__module__


def test_a_missing_sibling_is_the_packs_error_and_leaves_no_half_imported_modules(tmp_path):
    pack = split_pack(tmp_path)
    (pack / "_lookups.py").unlink()
    before = set(sys.modules)
    with pytest.raises(DomainError, match="import failed: ModuleNotFoundError"):
        load_pack_module(pack / "tools.py")
    assert {m for m in set(sys.modules) - before if "toyshop" in m} == set()
