"""Unit tests of canonical decision resolution (pytest_pibench/_decision.py).

Reference: upstream-evaluation.md §6.
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_pibench.checks.decision import DecisionInfo, resolve_decision
from pytest_pibench.env.environment import TraceEntry


def call(decision: Any, *, index: int = 0, error: bool = False, blocked: bool = False, requestor: str = "assistant",
         name: str = "record_decision") -> TraceEntry:
    args = {} if decision is ... else {"decision": decision}
    return TraceEntry(index, name, args, "{}", error, requestor, blocked)


def decisions(*values: Any) -> list[TraceEntry]:
    return [call(v, index=i) for i, v in enumerate(values)]


def say(text: Any, role: str = "assistant") -> dict[str, Any]:
    return {"role": role, "content": text}


def block(body: str, opener: str = "```json") -> str:
    return f"Here is my decision.\n{opener}\n{body}\n```\nThanks."


DENY_JSON = '{"decision": "DENY", "reason": "policy"}'


def as_tuple(info: DecisionInfo) -> tuple[Any, ...]:
    return (info.canonical_decision, info.decision_channel, info.decision_valid, info.decision_error)


# --------------------------------------------------------------------------- tool channel


@pytest.mark.parametrize("label", ["ALLOW", "ALLOW-CONDITIONAL", "DENY", "ESCALATE"])
def test_tool_channel_accepts_each_label(label):
    info = resolve_decision(decisions(label), [])
    assert as_tuple(info) == (label, "tool", True, None)


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        (["DENY", "maybe"], "DENY"),
        (["maybe", "DENY"], "DENY"),
        (["ALLOW", "DENY"], "DENY"),
        (["DENY", "ALLOW"], "ALLOW"),
        (["ESCALATE", "deny", "ALLOW_CONDITIONAL", None, 3], "ESCALATE"),
    ],
)
def test_tool_channel_last_valid_call_wins(values, expected):
    info = resolve_decision(decisions(*values), [])
    assert as_tuple(info) == (expected, "tool", True, None)


@pytest.mark.parametrize(
    "value", ["deny", "Deny", " DENY", "DENY ", "ALLOW_CONDITIONAL", "allow-conditional", "", None, 1, ["DENY"], ...]
)
def test_tool_channel_invalid_values(value):
    info = resolve_decision([call(value)], [])
    assert as_tuple(info) == (None, None, False, "INVALID_DECISION")


def test_errored_record_decision_is_skipped():
    trace = [call("ALLOW", index=0), call("DENY", index=1, error=True)]
    assert resolve_decision(trace, []).canonical_decision == "ALLOW"


def test_blocked_record_decision_is_skipped():
    trace = [call("ALLOW", index=0), call("DENY", index=1, blocked=True)]
    assert resolve_decision(trace, []).canonical_decision == "ALLOW"


def test_only_errored_or_blocked_record_decisions_are_invalid():
    trace = [call("ALLOW", index=0, error=True), call("DENY", index=1, blocked=True)]
    assert as_tuple(resolve_decision(trace, [])) == (None, None, False, "INVALID_DECISION")


def test_user_requested_record_decision_counts():
    info = resolve_decision([call("ESCALATE", requestor="user")], [])
    assert as_tuple(info) == ("ESCALATE", "tool", True, None)


def test_other_tools_are_not_decisions():
    trace = [call("DENY", name="record_decisions"), call("DENY", name="Record_Decision", index=1)]
    assert as_tuple(resolve_decision(trace, [])) == (None, None, False, "MISSING_DECISION")


def test_invalid_record_decision_blocks_the_json_channel():
    info = resolve_decision(decisions("maybe"), [say(block(DENY_JSON))])
    assert as_tuple(info) == (None, None, False, "INVALID_DECISION")


def test_errored_record_decision_blocks_the_json_channel():
    info = resolve_decision([call("DENY", error=True)], [say(block(DENY_JSON))])
    assert as_tuple(info) == (None, None, False, "INVALID_DECISION")


def test_tool_channel_wins_over_json_block():
    info = resolve_decision(decisions("ALLOW"), [say(block(DENY_JSON))])
    assert as_tuple(info) == ("ALLOW", "tool", True, None)


# --------------------------------------------------------------------------- JSON channel


@pytest.mark.parametrize("opener", ["```json", "```", "```json  ", "``` "])
def test_json_channel_recognised_fences(opener):
    info = resolve_decision([], [say(block(DENY_JSON, opener))])
    assert as_tuple(info) == ("DENY", "json", True, None)


@pytest.mark.parametrize("label", ["ALLOW", "ALLOW-CONDITIONAL", "DENY", "ESCALATE"])
def test_json_channel_accepts_each_label(label):
    info = resolve_decision([], [say(block(f'{{"decision": "{label}"}}'))])
    assert as_tuple(info) == (label, "json", True, None)


def test_json_channel_multiline_body():
    text = '```json\n{\n  "decision": "ESCALATE",\n  "why": "needs review"\n}\n```'
    assert as_tuple(resolve_decision([], [say(text)])) == ("ESCALATE", "json", True, None)


def test_json_channel_with_a_trace_of_other_tools():
    trace = [call("x", name="lookup_order")]
    assert as_tuple(resolve_decision(trace, [say(block(DENY_JSON))])) == ("DENY", "json", True, None)


def test_two_identical_json_blocks_are_multiple():
    info = resolve_decision([], [say(block(DENY_JSON)), say(block(DENY_JSON))])
    assert as_tuple(info) == (None, None, False, "MULTIPLE_DECISIONS_JSON")


def test_two_json_blocks_in_one_message_are_multiple():
    text = block(DENY_JSON) + "\n" + block('{"decision": "ALLOW"}')
    assert as_tuple(resolve_decision([], [say(text)])) == (None, None, False, "MULTIPLE_DECISIONS_JSON")


def test_no_json_block_is_missing_decision():
    info = resolve_decision([], [say("I deny this request. DENY")])
    assert as_tuple(info) == (None, None, False, "MISSING_DECISION")


def test_no_messages_is_missing_decision():
    assert as_tuple(resolve_decision([], [])) == (None, None, False, "MISSING_DECISION")


def test_non_decision_json_blocks_are_ignored_next_to_one_decision():
    messages = [say(block('{"order_id": "A1"}')), say(block("not json")), say(block(DENY_JSON))]
    assert as_tuple(resolve_decision([], messages)) == ("DENY", "json", True, None)


@pytest.mark.parametrize(
    "text",
    [
        block(DENY_JSON, "```JSON"),
        block(DENY_JSON, "``` json"),
        block(DENY_JSON, "```python"),
        f"```{DENY_JSON}```",
        f"```json {DENY_JSON}```",
        f"```json\n{DENY_JSON}```",  # body does not end with a newline before the fence
        block('{"decision": "deny"}'),
        block('{"decision": "Deny"}'),
        block('{"decision": "ALLOW_CONDITIONAL"}'),
        block('{"decision": "DENY "}'),
        block('{"decision": "DE NY"}'),
        block('["DENY"]'),
        block('[{"decision": "DENY"}]'),
        block('{"result": {"decision": "DENY"}}'),
        block('{"decision": ["DENY"]}'),
        block('"DENY"'),
        block("{'decision': 'DENY'}"),
        '{"decision": "DENY"}',  # unfenced
    ],
    ids=[
        "upper-JSON", "space-json", "python", "single-line", "single-line-json", "no-newline-before-close",
        "lower-value", "title-value", "underscore", "trailing-space", "inner-space", "array", "array-of-object",
        "nested", "list-value", "string", "python-dict", "unfenced",
    ],
)
def test_json_channel_not_recognised(text):
    assert as_tuple(resolve_decision([], [say(text)])) == (None, None, False, "MISSING_DECISION")


def test_json_channel_accepts_crlf():
    text = "Decision:\r\n```json\r\n{\"decision\": \"ESCALATE\"}\r\n```\r\n"
    assert as_tuple(resolve_decision([], [say(text)])) == ("ESCALATE", "json", True, None)


def test_json_channel_scans_only_assistant_messages():
    messages = [say(block(DENY_JSON), role="user"), say(block(DENY_JSON), role="tool"), say("No decision here.")]
    assert as_tuple(resolve_decision([], messages)) == (None, None, False, "MISSING_DECISION")


def test_user_block_does_not_make_an_assistant_block_multiple():
    messages = [say(block('{"decision": "ALLOW"}'), role="user"), say(block(DENY_JSON))]
    assert as_tuple(resolve_decision([], messages)) == ("DENY", "json", True, None)


def test_json_channel_reads_list_content_blocks():
    message = {"role": "assistant", "content": [{"type": "text", "text": block(DENY_JSON)}]}
    assert as_tuple(resolve_decision([], [message])) == ("DENY", "json", True, None)


def test_json_channel_skips_assistant_messages_without_text():
    messages = [{"role": "assistant", "content": None, "tool_calls": [{"id": "1", "name": "x", "arguments": {}}]},
                say(block(DENY_JSON))]
    assert as_tuple(resolve_decision([], messages)) == ("DENY", "json", True, None)


# --------------------------------------------------------------------------- no trace and DecisionInfo


def test_no_trace():
    info = resolve_decision(None, [say(block(DENY_JSON))])
    assert info.to_dict() == {
        "canonical_decision": None,
        "decision_channel": None,
        "decision_valid": False,
        "decision_error": "NO_TRACE",
    }


def test_decision_info_values_for_flags_and_checks():
    valid = DecisionInfo("DENY", "tool", True, None)
    invalid = DecisionInfo(None, None, False, "MULTIPLE_DECISIONS_JSON")
    assert (valid.as_flag_input, valid.as_check_value) == ("DENY", "DENY")
    assert (invalid.as_flag_input, invalid.as_check_value) == ("NONE", "INVALID:MULTIPLE_DECISIONS_JSON")
