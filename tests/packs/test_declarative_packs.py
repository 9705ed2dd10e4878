"""Upstream-format scenario sets run unmodified: tools.json packs, explicit pack resolution, hard gate, expected_db."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pytest_pibench import evaluate, load_scenario, run_episode, run_one
from pytest_pibench.packs.declarative import load_tools_json, normalise_parameters
from pytest_pibench.packs.generic import HandlerSet
from pytest_pibench.packs.loading import DomainError, load_domain_dir, set_domain_paths

WS = Path(__file__).resolve().parents[1] / "data" / "upstream_ws"


def test_the_three_tools_json_shapes_load():
    shop, desk, broker = (load_domain_dir(WS / "domains" / n) for n in ("shop", "desk", "broker"))
    assert all(d.declarative for d in (shop, desk, broker))
    refund = shop.tool("process_refund").schema()["parameters"]  # a bare list with flat parameters
    assert refund["required"] == ["order_id", "refund_type", "reason_code"]
    assert refund["properties"]["refund_type"] == {"type": "string", "enum": ["full", "partial"]}
    cited = shop.tool("record_decision").schema()["parameters"]["properties"]["policy_sections_cited"]
    assert cited == {"type": "array", "items": {"type": "string"}}  # a bare string items makes an array
    reset = desk.tool("reset_password").schema()["parameters"]  # {"tool_definitions": [...]}, JSON Schema kept
    assert reset["additionalProperties"] is False and reset["required"] == ["employee_id", "account_type"]
    assert [t.name for t in broker.tools][:2] == ["lookup_customer_profile", "query_transaction_history"]  # {"tools"}
    assert "returns" not in json.dumps(shop.tool("lookup_order").schema())


def test_flat_parameters_default_to_string_and_skip_what_is_not_an_object():
    assert normalise_parameters({"a": {}, "b": "junk", "c": {"type": "integer", "required": True}}) == {
        "type": "object", "properties": {"a": {"type": "string"}, "c": {"type": "integer"}}, "required": ["c"],
    }


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ("[]", "the tool list is empty"),
        ('[{"description": "x"}]', "tool 0 has no name"),
        ('{"functions": []}', "expected a list of tools"),
        ("{not json", "invalid JSON"),
        ('[{"name": "a"}, {"name": "a"}]', "duplicate tools: a"),
    ],
)
def test_a_broken_tools_json_is_an_error_naming_the_file(tmp_path, content, fragment):
    (tmp_path / "tools.json").write_text(content)
    with pytest.raises(ValueError, match=None) as info:
        load_tools_json(tmp_path / "tools.json", HandlerSet())
    assert fragment in str(info.value) and "tools.json" in str(info.value)


def _declarative_pack(folder: Path, handlers: str | None) -> Path:
    folder.mkdir()
    tools = [{"name": "lookup_vehicle", "parameters": {"vin": {"type": "string"}}},
             {"name": "lookup_order", "parameters": {"order_id": {"type": "string"}}},
             {"name": "record_decision", "parameters": {"decision": {"type": "string"}}}]  # fmt: skip
    (folder / "tools.json").write_text(json.dumps(tools))
    (folder / "db.json").write_text(json.dumps({"orders": [{"order_id": "O-1", "status": "delivered"}]}))
    if handlers is not None:
        (folder / "handlers.py").write_text(handlers)
    return folder


def test_a_declarative_pack_may_ship_handlers_that_come_before_the_upstream_ones(tmp_path):
    own = (
        "from pytest_pibench.packs.generic import HandlerSet\n"
        "from ._fleet import vehicle\n"  # a handler pack is a package: it may import its siblings
        "HANDLERS = HandlerSet()\n"
        "HANDLERS('lookup_vehicle')(vehicle)\n"
        "@HANDLERS('record_decision')\n"
        "def record_decision(db, decision='', **arguments):\n"
        "    db.setdefault('mine', []).append(decision)\n"
        "    return {'recorded': decision}\n"
    )
    pack = _declarative_pack(tmp_path / "fleet", own)
    (pack / "_fleet.py").write_text("def vehicle(db, vin=''):\n    return {'vin': vin, 'make': 'Volvo'}\n")
    domain = load_domain_dir(pack)
    db = json.loads((pack / "db.json").read_text())
    assert domain.tool("lookup_vehicle").function(db, {"vin": "V9"}) == {"vin": "V9", "make": "Volvo"}
    assert domain.tool("record_decision").function(db, {"decision": "DENY"}) == {"recorded": "DENY"}  # its own
    assert db["mine"] == ["DENY"] and "decisions" not in db
    assert domain.tool("lookup_order").function(db, {"order_id": "O-1"})["status"] == "delivered"  # upstream's


def test_without_its_own_handlers_a_pack_gets_upstreams_and_an_unknown_tool_is_a_soft_error(tmp_path):
    domain = load_domain_dir(_declarative_pack(tmp_path / "plain", None))
    db: dict = {}
    assert domain.tool("lookup_vehicle").function(db, {"vin": "V9"})["error"] is True  # no handler, no crash
    assert domain.tool("record_decision").function(db, {"decision": "ALLOW"})["decision"] == "ALLOW"


def test_a_handlers_file_without_a_handler_set_is_an_error_naming_the_file(tmp_path):
    pack = _declarative_pack(tmp_path / "broken", "HANDLERS = {'lookup_vehicle': print}\n")
    with pytest.raises(DomainError, match=r"handlers.py: HANDLERS must be a pytest_pibench.packs.generic.HandlerSet"):
        load_domain_dir(pack)


def test_the_upstream_handlers_are_a_bundled_pack_loaded_like_any_other():
    import sys

    from pytest_pibench.packs.loading import upstream_handlers
    from pytest_pibench.paths import bundled_root

    table = upstream_handlers()
    assert "process_wire_transfer" in table.names() and "record_decision" in table.names()
    loaded = [m for m in sys.modules if m.startswith("pytest_pibench_domain_upstream_handlers_")]
    assert loaded and (bundled_root() / "domains" / "upstream_handlers" / "handlers.py").is_file()
    assert not any(m.startswith("pytest_pibench.packs.generic_") for m in sys.modules)  # no handlers in the core


def test_a_pack_without_record_decision_does_not_load(tmp_path):
    pack = tmp_path / "nodecide"
    pack.mkdir()
    (pack / "tools.json").write_text('[{"name": "lookup_order"}]')
    with pytest.raises(DomainError, match="every domain needs a record_decision tool"):
        load_domain_dir(pack)


def test_the_oracle_passes_every_upstream_format_scenario_and_the_policy_is_in_the_database():
    rows = [run_one(path, "oracle") for path in sorted((WS / "scenarios").glob("*.json"))]
    assert [r["all_passed"] for r in rows] == [True, True, True]
    episode = run_episode(load_scenario(WS / "scenarios" / "desk_admin_reset.json"), "oracle")
    assert episode.final_state["_policy_text"].startswith("# Northfield Tooling")  # read_policy returns it


class _ResetsAnyway:
    def init_state(self, benchmark_context, tools, message_history=None):
        return 0

    def generate(self, message, state):
        if state == 0:
            call = {"id": "c1", "name": "reset_password", "arguments": {"employee_id": "EM-42", "account_type": "standard"}}
            return {"role": "assistant", "tool_calls": [call]}, 1
        return {"role": "assistant", "content": "###STOP###"}, 2

    def is_stop(self, message):
        return False

    def stop(self, message, state):
        return None


def test_the_scenarios_hard_gate_blocks_a_forbidden_call_that_would_have_run():
    scenario = load_scenario(WS / "scenarios" / "desk_admin_reset.json")  # meta.observer_mode: hard_gate
    episode = run_episode(scenario, _ResetsAnyway())
    (entry,) = episode.trace
    assert entry["blocked"] and "password_last_changed" not in json.dumps(episode.final_state)
    audited = run_episode(scenario, _ResetsAnyway(), observer_mode="audit_only")
    assert audited.trace[0]["blocked"]  # the scenario's own mode wins over the run's
    results = {r.outcome_id: r.passed for r in evaluate(scenario, episode).outcome_results}
    assert results["D2"] is False  # the blocked attempt still counts, as upstream scores it


def test_expected_db_is_checked_on_a_declarative_pack(tmp_path):
    ws = tmp_path / "ws"
    shutil.copytree(WS, ws)
    path = ws / "scenarios" / "shop_refund_in_window.json"
    expected = run_episode(load_scenario(path), "oracle").final_state
    data = json.loads(path.read_text())
    data["evaluation_criteria"]["reward_basis"].append("DB")
    data["evaluation_criteria"]["expected_db"] = expected
    path.write_text(json.dumps(data))
    assert run_one(path, "oracle")["all_passed"]
    expected["orders"][0]["status"] = "delivered"
    data["evaluation_criteria"]["expected_db"] = expected
    path.write_text(json.dumps(data))
    row = run_one(path, "oracle")
    assert not row["all_passed"] and any(c["type"] == "db_replay" and not c["passed"] for c in row["outcome_checks"])


def test_a_scenario_written_for_another_pack_is_an_error_naming_the_pack_it_got(tmp_path):
    scenario = json.loads((WS / "scenarios" / "shop_refund_in_window.json").read_text())
    scenario["meta"]["domain"] = "retail"  # no retail pack beside it: the bundled one, with other tools
    (tmp_path / "scenarios").mkdir()
    path = tmp_path / "scenarios" / "s.json"
    path.write_text(json.dumps(scenario))
    row = run_one(path, "oracle")
    assert row["status"] == "error" and "check_return_eligibility" in row["error"]  # a tool our retail lacks
    assert "domains/retail" in row["error"] and "--pibench-domains" in row["error"]  # the pack it got, the way out
    shutil.copytree(WS / "domains" / "shop", tmp_path / "packs" / "retail")  # the pack it was written for
    set_domain_paths([tmp_path / "packs"])
    try:
        assert run_one(path, "oracle")["all_passed"]
    finally:
        set_domain_paths([])


def test_the_plugin_finds_packs_beside_the_scenarios_or_named_by_the_option(pytester):
    shutil.copytree(WS, pytester.path / "ws")
    beside = pytester.runpytest("ws/scenarios", "--pibench-agent=oracle", "--pibench-results=", "-p", "no:cacheprovider")
    beside.assert_outcomes(passed=3)
    shutil.copytree(WS / "scenarios", pytester.path / "loose" / "set")  # scenarios alone, their packs elsewhere
    alone = pytester.runpytest("loose/set", "--pibench-agent=oracle", "--pibench-results=", "-p", "no:cacheprovider")
    assert alone.ret != 0 and "unknown domain 'shop'" in alone.stdout.str()
    named = pytester.runpytest("loose/set", "--pibench-agent=oracle", "--pibench-domains=ws/domains",
                               "--pibench-results=", "-p", "no:cacheprovider", "-n", "2")  # fmt: skip
    named.assert_outcomes(passed=3)


def test_a_missing_domains_folder_is_a_usage_error_and_ini_paths_are_relative_to_the_ini(pytester):
    result = pytester.runpytest("--pibench-agent=oracle", "--pibench-domains=nowhere", "-p", "no:cacheprovider")
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*--pibench-domains: no such folder: nowhere*"])
    shutil.copytree(WS / "domains", pytester.path / "conf" / "packs")
    shutil.copytree(WS / "scenarios", pytester.path / "set")
    (pytester.path / "conf" / "pytest.ini").write_text("[pytest]\npibench_domains = packs\n")
    ran = pytester.runpytest("-c", "conf/pytest.ini", "--rootdir", str(pytester.path), "set",
                             "--pibench-agent=oracle", "--pibench-results=", "-p", "no:cacheprovider")  # fmt: skip
    ran.assert_outcomes(passed=3)
