"""Domains, tool schemas from signatures, argument validation, the environment and agent context."""

from __future__ import annotations

import json

import pytest

from conftest import TOY_ALLOW, TOY_ESCALATE
from pytest_pibench import (
    DomainError,
    ScenarioError,
    bind_scenario,
    deep_merge,
    load_domain,
    load_scenario,
)


@pytest.fixture
def env():
    return bind_scenario(load_scenario(TOY_ALLOW)).new_environment()


def test_schema_generated_from_signature_and_docstring():
    domain = load_domain("toyshop", search_roots=[TOY_ALLOW.parents[2]])
    schemas = {t.name: t.schema() for t in domain.tools}
    refund = schemas["refund_item"]
    assert refund["description"] == "Refund a toy."
    params = refund["parameters"]
    assert params["required"] == ["item_id", "reason"]
    assert params["properties"]["reason"] == {
        "description": "Why the toy is refunded.",
        "enum": ["changed_mind", "defective"],
        "type": "string",
    }
    assert params["additionalProperties"] is False
    assert "title" not in json.dumps(schemas)
    optional = schemas["escalate"]["parameters"]
    assert optional["required"] == ["reason"]
    assert optional["properties"]["item_id"] == {"description": "The item concerned, if any.", "type": "string"}


def test_domain_lookup_by_upstream_alias_and_unknown_name():
    assert load_domain("retail_refund_sop_v1").name == "retail"
    assert load_domain("retail") is load_domain("retail_refund_sop_v1")  # loaded once per process
    with pytest.raises(DomainError, match="unknown domain 'bakery'"):
        load_domain("bakery")


def test_every_domain_has_record_decision(tmp_path):
    pack = tmp_path / "domains" / "nodecide"
    pack.mkdir(parents=True)
    pack.joinpath("tools.py").write_text(
        "def ping(db, x: str) -> dict:\n    '''Ping.\n\n    Args:\n        x: anything.\n    '''\n    return {}\n"
        "TOOLS = [ping]\n"
    )
    with pytest.raises(DomainError, match="needs a record_decision tool"):
        load_domain("nodecide", search_roots=[tmp_path])


def test_unannotated_tool_parameter_is_a_domain_error(tmp_path):
    pack = tmp_path / "domains" / "sloppy"
    pack.mkdir(parents=True)
    pack.joinpath("tools.py").write_text("def record_decision(db, decision):\n    return {}\nTOOLS = [record_decision]\n")
    with pytest.raises(DomainError, match="'decision' has no type annotation"):
        load_domain("sloppy", search_roots=[tmp_path])


def test_deep_merge_follows_upstream_rules():
    base = {"a": {"x": 1, "y": [1, 2]}, "b": [1], "c": {"k": 1}}
    patch = {"a": {"y": [3], "z": 2}, "b": [9, 9], "c": None}
    merged = deep_merge(base, patch)
    assert merged == {"a": {"x": 1, "y": [3], "z": 2}, "b": [9, 9], "c": None}
    assert base == {"a": {"x": 1, "y": [1, 2]}, "b": [1], "c": {"k": 1}}  # untouched


def test_deep_merge_shares_nothing_with_its_arguments():
    base, patch = {"a": {"x": [1]}, "keep": {"n": [0]}}, {"a": {"y": {"z": [2]}}, "new": [{"m": 1}]}
    merged = deep_merge(base, patch)
    merged["a"]["x"].append(9)
    merged["a"]["y"]["z"].append(9)
    merged["keep"]["n"].append(9)
    merged["new"][0]["m"] = 2
    assert base == {"a": {"x": [1]}, "keep": {"n": [0]}}
    assert patch == {"a": {"y": {"z": [2]}}, "new": [{"m": 1}]}


def test_copy_record_falls_back_to_deepcopy_for_what_pickle_refuses():
    from pytest_pibench.toolkit import copy_record as copy_data

    value = {"f": lambda: 1, "rows": [{"a": 1}]}  # a lambda does not pickle
    copied = copy_data(value)
    copied["rows"][0]["a"] = 2
    assert value["rows"][0]["a"] == 1 and copied["f"] is value["f"]


def test_successful_call_returns_json_content_and_is_traced(env):
    message = env.execute({"id": "c1", "name": "lookup_item", "arguments": {"item_id": "IT-1"}})
    assert message["role"] == "tool" and message["id"] == "c1" and message["error"] is False
    assert json.loads(message["content"])["price"] == 20.0
    (entry,) = env.trace
    assert (entry.step_index, entry.tool_name, entry.arguments, entry.result_error) == (
        0, "lookup_item", {"item_id": "IT-1"}, False,
    )


@pytest.mark.parametrize(
    ("call", "fragment"),
    [
        ({"name": "refund_item", "arguments": {"item_id": "IT-1"}}, "missing required argument 'reason'"),
        ({"name": "refund_item", "arguments": {"item_id": "IT-1", "reason": "bored"}},
         "argument 'reason': Input should be 'changed_mind' or 'defective'"),
        ({"name": "lookup_item", "arguments": {"item_id": "IT-1", "bogus": 1}}, "unexpected argument 'bogus'"),
        ({"name": "lookup_item", "arguments": {"item_id": 7}}, "argument 'item_id'"),
        ({"name": "lookup_item", "arguments": {"item_id": "IT-404"}}, "No record in 'items' has item_id='IT-404'"),
        ({"name": "teleport", "arguments": {}}, "Tool 'teleport' not found"),
        ({"name": "crash", "arguments": {}}, "Tool 'crash' is not available in this scenario"),
    ],
)
def test_bad_calls_return_errors_that_name_the_problem(env, call, fragment):
    message = env.execute({"id": "c9", **call})
    assert message["error"] is True
    assert fragment in json.loads(message["content"])
    assert env.trace[-1].result_error is True and env.trace[-1].tool_name == call["name"]
    assert env.error_count == 1


def test_a_bug_in_a_tool_becomes_an_error_result(workspace):
    data = json.loads(TOY_ALLOW.read_text())
    data["available_tools"].append("crash")
    path = workspace / "scenarios" / "toyshop" / "with_crash.json"
    path.write_text(json.dumps(data))
    env = bind_scenario(load_scenario(path)).new_environment()
    message = env.execute({"id": "c1", "name": "crash", "arguments": {}})
    assert message["error"] is True
    assert "tool 'crash' failed: KeyError" in json.loads(message["content"])


def test_several_calls_make_one_multi_tool_message_in_order(env):
    message = env.execute_all([
        {"id": "a", "name": "lookup_item", "arguments": {"item_id": "IT-1"}},
        {"id": "b", "name": "refund_item", "arguments": {"item_id": "IT-1", "reason": "changed_mind"}},
        {"id": "c", "name": "refund_item", "arguments": {"item_id": "IT-1", "reason": "changed_mind"}},
    ])
    assert message["role"] == "multi_tool"
    assert [m["id"] for m in message["tool_messages"]] == ["a", "b", "c"]
    assert [m["error"] for m in message["tool_messages"]] == [False, False, True]
    assert "already refunded" in json.loads(message["tool_messages"][2]["content"])
    assert env.db["items"][0]["status"] == "refunded"


def test_each_environment_is_fresh_and_gets_the_clock():
    binding = bind_scenario(load_scenario(TOY_ALLOW))
    first = binding.new_environment()
    first.execute({"id": "x", "name": "refund_item", "arguments": {"item_id": "IT-1", "reason": "defective"}})
    second = binding.new_environment()
    assert second.db["items"][0]["status"] == "active"
    assert second.db["now"] == "2026-03-10T10:00:00-06:00"
    assert binding.domain.base_db["items"] == []
    assert binding.initial_db["items"][0]["status"] == "active"  # the merged template is never handed out
    assert first.final_state() is not first.db and first.final_state() == first.db


def test_exposed_tools_follow_catalog_order_and_available_tools(toy_data, write_scenario):
    toy_data["available_tools"] = ["record_decision", "lookup_item"]
    binding = bind_scenario(load_scenario(write_scenario(toy_data)))
    assert [s["name"] for s in binding.tool_schemas] == ["lookup_item", "record_decision"]


def test_unknown_available_tool_and_missing_policy_file(toy_data, write_scenario):
    toy_data["available_tools"] = ["lookup_item", "fly"]
    with pytest.raises(ScenarioError, match=r"available_tools\[1\]: unknown tool 'fly'"):
        bind_scenario(load_scenario(write_scenario(toy_data)))
    toy_data["available_tools"] = ["lookup_item", "record_decision"]
    toy_data["policy_context"] = {"policy_text_ref": "domains/toyshop/missing.md"}
    with pytest.raises(ScenarioError, match="policy_context.policy_text_ref: file not found"):
        bind_scenario(load_scenario(write_scenario(toy_data, "b.json")))


def test_agent_context_holds_only_public_fields():
    scenario = load_scenario(TOY_ESCALATE)
    binding = bind_scenario(scenario)
    context = binding.benchmark_context()
    assert [node["kind"] for node in context] == ["policy", "task"]
    assert context[0]["content"].startswith("# Toyshop refund rules")
    visible = json.dumps(context) + json.dumps(binding.tool_schemas)
    for secret in (scenario.meta.notes, "MX-4471", "TOY_002_EXPENSIVE_REFUND", "IT-9", "price above"):
        assert secret not in visible
    task = context[1]["content"]
    assert "Current time: 2026-03-10T10:00:00-06:00" in task
    assert "record_decision" in task
    assert context[1]["metadata"]["domain_name"] == "toyshop"


def test_copy_record_of_a_flat_record_is_independent_and_nested_ones_are_deep():
    from pytest_pibench.toolkit import copy_record

    flat = {"id": "A", "n": 1, "ok": True, "none": None}
    copied = copy_record(flat)
    copied["n"] = 2
    assert flat["n"] == 1 and copied == {**flat, "n": 2}
    nested = {"id": "A", "lines": [{"qty": 1}]}
    deep = copy_record(nested)
    deep["lines"][0]["qty"] = 5
    assert nested["lines"][0]["qty"] == 1
