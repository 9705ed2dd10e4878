"""The ``pi play`` command syntax: every form, and every bad input answered with why."""

from __future__ import annotations

import pytest

from pytest_pibench.play.syntax import Action, CommandError, View, parse_line, split_outside

TOOLS = {
    "lookup_item": {"name": "lookup_item", "parameters": {"properties": {"item_id": {"type": "string"}}}},
    "refund_item": {
        "name": "refund_item",
        "parameters": {"properties": {"item_id": {"type": "string"}, "amount": {"type": "number"}}},
    },
    "record_decision": {
        "name": "record_decision",
        "parameters": {
            "properties": {
                "decision": {"type": "string"},
                "rationale": {"type": "string"},
                "item_id": {"type": "string"},
            }
        },
    },
}


def calls(line: str) -> list[dict]:
    action = parse_line(line, TOOLS)
    assert isinstance(action, Action)
    return action.message["tool_calls"]


@pytest.mark.parametrize("topic", ["policy", "task", "tools", "history", "help", "quit"])
def test_views(topic):
    assert parse_line(f"/{topic}", TOOLS) == View(topic)


def test_blank_line_is_nothing():
    assert parse_line("   \n", TOOLS) is None


def test_key_value_call_reads_json_values_and_keeps_declared_strings():
    assert calls('refund_item item_id=12345 amount=12.5') == [
        {"name": "refund_item", "arguments": {"item_id": "12345", "amount": 12.5}}
    ]
    assert calls('lookup_item item_id="IT 1"') == [{"name": "lookup_item", "arguments": {"item_id": "IT 1"}}]
    assert calls("lookup_item item_id='IT 2'") == [{"name": "lookup_item", "arguments": {"item_id": "IT 2"}}]
    assert calls("lookup_item item_id=IT-1") == [{"name": "lookup_item", "arguments": {"item_id": "IT-1"}}]
    assert calls('refund_item item_id=IT-1 amount=[1, 2]')[0]["arguments"]["amount"] == [1, 2]


def test_call_with_json_arguments_and_several_calls():
    assert calls('call lookup_item {"item_id": "a;b"}') == [{"name": "lookup_item", "arguments": {"item_id": "a;b"}}]
    assert [c["name"] for c in calls("lookup_item item_id=IT-1; refund_item item_id=IT-1 amount=3")] == [
        "lookup_item",
        "refund_item",
    ]
    assert calls("call lookup_item item_id=X") == [{"name": "lookup_item", "arguments": {"item_id": "X"}}]


def test_json_forms():
    assert calls('{"name": "lookup_item", "arguments": {"item_id": "IT-1"}}')[0]["arguments"] == {"item_id": "IT-1"}
    wire = '[{"name": "lookup_item"}, {"name": "lookup_item", "arguments": "{\\"item_id\\": \\"X\\"}"}]'
    assert calls(wire)[1]["arguments"] == {"item_id": "X"}
    assert parse_line('{"content": "hello"}', TOOLS) == Action({"content": "hello"})
    assert calls('{"tool_calls": [{"name": "lookup_item", "arguments": {}}]}') == [
        {"name": "lookup_item", "arguments": {}}
    ]


def test_say_stop_and_decide():
    assert parse_line("say  Your refund is on its way. ", TOOLS) == Action({"content": "Your refund is on its way."})
    assert parse_line("stop", TOOLS) == Action({"content": "###STOP###"})
    assert calls("decide allow-conditional item_id=IT-1 opened, so store credit") == [
        {
            "name": "record_decision",
            "arguments": {"decision": "ALLOW-CONDITIONAL", "item_id": "IT-1", "rationale": "opened, so store credit"},
        }
    ]
    assert calls('decide deny rationale="TOY-1: opened"')[0]["arguments"] == {
        "decision": "DENY",
        "rationale": "TOY-1: opened",
    }
    assert calls("decide ESCALATE; lookup_item item_id=X")[0]["arguments"] == {"decision": "ESCALATE"}


def test_apostrophes_inside_words_are_text_and_quotes_open_only_where_a_value_starts():
    """Blind players wrote rationales such as "the customer's item": that is text, not an unclosed quote."""
    assert calls("decide DENY item_id=IT-1 the customer's toy was opened, it's TOY-1")[0]["arguments"] == {
        "decision": "DENY", "item_id": "IT-1", "rationale": "the customer's toy was opened, it's TOY-1"}  # fmt: skip
    assert calls("lookup_item item_id='IT 1'")[0]["arguments"] == {"item_id": "IT 1"}
    assert calls("decide DENY 'opened; sealed'")[0]["arguments"]["rationale"] == "opened; sealed"
    assert split_outside("a b's; c 'd; e'", ";") == ["a b's", "c 'd; e'"]


def test_a_semicolon_in_a_rationale_says_how_to_write_it():
    with pytest.raises(CommandError, match="must use commas or be quoted"):
        parse_line("decide DENY item_id=IT-1 opened; no refund", TOOLS)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("/frobnicate", "unknown view"),
        ("frobnicate now", "unknown command or tool 'frobnicate'"),
        ("call nosuchtool {}", "no tool named 'nosuchtool'"),
        ('{"name": "nosuchtool"}', "no tool named"),
        ("decide MAYBE", "decide needs one of ALLOW"),
        ("decide", "decide needs one of"),
        ("say", "say what"),
        ("say   ", "say what"),
        ("stop now", "stop takes nothing"),
        ("lookup_item item_id", "expected key=value"),
        ('lookup_item item_id="IT-1', "unclosed quote"),
        ("lookup_item item_id=[1, 2", "unbalanced brackets"),
        ('call lookup_item {"item_id": ', "unbalanced brackets"),
        ("call lookup_item [1]", "expected key=value"),
        ("{not json", "not valid JSON"),
        ('{"name": "lookup_item", "arguments": [1]}', "must be a JSON object"),
        ("[]", "an empty list"),
        ('{"content": ""}', "non-empty"),
        ("[1]", '{"name": TOOL'),
    ],
)
def test_bad_input_says_why(line, message):
    with pytest.raises(CommandError, match=None) as caught:
        parse_line(line, TOOLS)
    assert message in str(caught.value)


def test_decide_needs_the_domain_tool():
    with pytest.raises(CommandError, match="no tool named 'record_decision'"):
        parse_line("decide ALLOW", {"lookup_item": TOOLS["lookup_item"]})


def test_split_outside_quotes_and_brackets():
    assert split_outside('a "b; c"; d {"e; f": 1}', ";") == ['a "b; c"', 'd {"e; f": 1}']
    assert split_outside("a   b\tc", " ") == ["a", "b", "c"]
