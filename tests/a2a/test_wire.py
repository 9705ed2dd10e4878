"""The pi-bench payloads over A2A: card detection, reply parsing, number narrowing (pure functions)."""

from __future__ import annotations

import pytest

from pytest_pibench.participants.a2a_client.wire import (
    BOOTSTRAP_EXTENSION,
    A2AReplyError,
    bootstrap_context_id,
    card_declares_bootstrap,
    narrow_numbers,
    openai_messages,
    reply_message,
    reply_payload,
)


@pytest.mark.parametrize(
    ("card", "declared"),
    [
        ({"capabilities": {"extensions": [{"uri": BOOTSTRAP_EXTENSION}]}}, True),
        ({"extensions": [BOOTSTRAP_EXTENSION]}, True),  # upstream's legacy top-level form
        ({"capabilities": {"extensions": [{"uri": "urn:other"}]}}, False),
        ({"capabilities": {"extensions": [BOOTSTRAP_EXTENSION]}}, False),  # a bare string is not an extension object
        ({"name": "x"}, False),
    ],
)
def test_card_declares_bootstrap(card, declared):
    assert card_declares_bootstrap(card) is declared


def test_reply_with_openai_style_and_flat_tool_calls():
    message = reply_message([{"data": {"content": "Checking.", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "lookup_order", "arguments": '{"order_id": "O-1"}'}},
        {"id": "c2", "name": "lookup_customer", "arguments": {"customer_id": "C-9"}},
        {"function": {"name": "no_args", "arguments": ""}},
    ]}}])
    assert message == {"role": "assistant", "content": "Checking.", "tool_calls": [
        {"id": "c1", "name": "lookup_order", "arguments": {"order_id": "O-1"}},
        {"id": "c2", "name": "lookup_customer", "arguments": {"customer_id": "C-9"}},
        {"id": "call_2", "name": "no_args", "arguments": {}},
    ]}


def test_reply_text_parts_and_empty_reply():
    assert reply_message([{"text": "Hello"}, {"text": "there"}]) == {"role": "assistant", "content": "Hello\nthere"}
    assert reply_message([{"data": {"content": ""}}])["content"] == "###STOP###"
    assert reply_message([{"text": "  "}])["content"] == "###STOP###"


@pytest.mark.parametrize(
    ("parts", "fragment"),
    [
        ([], "no text and no pi-bench data part (parts: none)"),
        ([{"url": "http://x"}], "parts: ['url']"),
        ([{"data": {"tool_calls": [{"name": "t", "arguments": "{not json"}]}}], "malformed JSON arguments"),
        ([{"data": {"tool_calls": [{"name": "t", "arguments": [1]}]}}], "non-object arguments"),
        ([{"data": {"tool_calls": [{"arguments": {}}]}}], "has no name"),
        ([{"data": {"tool_calls": "lookup"}}], "must be a list"),
        ([{"data": {"content": 5}}], "string or null"),
    ],
)
def test_unusable_replies_say_why(parts, fragment):
    with pytest.raises(A2AReplyError, match=None) as info:
        reply_message(parts)
    assert fragment in str(info.value)


def test_reply_payload_round_trips_through_reply_message():
    sent = {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "name": "t", "arguments": {"n": 2}}]}
    assert reply_message([{"data": reply_payload(sent)}]) == sent


def test_narrow_numbers_restores_whole_numbers_only():
    assert narrow_numbers({"qty": 2.0, "price": 19.5, "ids": [1.0, "a"], "flag": True}) == {
        "qty": 2, "price": 19.5, "ids": [1, "a"], "flag": True,
    }
    assert type(narrow_numbers(2.0)) is int and narrow_numbers(1e300) == 1e300


def test_bootstrap_context_id():
    assert bootstrap_context_id([{"text": "hi"}, {"data": {"bootstrapped": True, "context_id": "k"}}]) == "k"
    assert bootstrap_context_id([{"data": {"bootstrapped": False, "context_id": "k"}}]) is None


def test_openai_messages_flatten_multi_tool():
    multi = {"role": "multi_tool", "tool_messages": [
        {"role": "tool", "id": "a", "content": "1"}, {"role": "tool", "id": "b", "content": "2"}]}
    assert openai_messages(multi) == [
        {"role": "tool", "tool_call_id": "a", "content": "1"}, {"role": "tool", "tool_call_id": "b", "content": "2"}]
