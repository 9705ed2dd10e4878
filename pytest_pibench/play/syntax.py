"""What a person types in ``pi play``: a line becomes a view request or one agent action.

Forms (see :data:`HELP`):

* ``/policy``, ``/task``, ``/tools``, ``/history``, ``/help``, ``/quit``: views (and abandoning the play);
* ``say TEXT``: a message to the user;
* ``TOOL key=value ...`` or ``call TOOL {"json": "args"}``: a tool call; several in one
  message separated by ``;`` (outside quotes and brackets);
* ``decide DECISION [key=value ...] [free text]``: the ``record_decision`` call; free text
  becomes its ``rationale``;
* ``stop``: end the conversation (``###STOP###``);
* a JSON object or list: ``{"name": ..., "arguments": {...}}``, a list of them, or a whole
  message ``{"content": ...}`` / ``{"tool_calls": [...]}``.

A value is read as JSON when it parses (``3``, ``true``, ``["a"]``, ``"quoted"``) and as
text otherwise, except that a parameter the tool declares as a string keeps the text as
typed (``order_id=12345`` stays ``"12345"``). Arguments are not checked here: the
environment answers a bad call as it answers any agent's.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pytest_pibench.episode.messages import STOP_SIGNALS
from pytest_pibench.vocab import LABELS

__all__ = ["HELP", "VIEWS", "Action", "CommandError", "View", "parse_line", "split_outside"]

VIEWS = ("policy", "task", "tools", "history", "help", "quit")

HELP = """\
Commands:
  /policy  /task  /tools  /history  /help     show the policy, the task, the tools, the conversation, this help
  /quit                                       abandon the play (nothing is recorded)
  say TEXT                                    a message to the customer
  TOOL key=value key2="a b"                   call a tool (values are JSON when they parse, else text)
  call TOOL {"key": "value"}                  call a tool with JSON arguments
  A ; B                                       several tool calls in one message
  decide DECISION [key=value ...] [rationale] record_decision (ALLOW, ALLOW-CONDITIONAL, DENY, ESCALATE)
  stop                                        end the conversation
  {"name": TOOL, "arguments": {...}}          JSON: a call, a list of calls, or {"content": TEXT}"""


class CommandError(ValueError):
    """A line that is no command: the message says why and what to type instead."""


@dataclass(frozen=True)
class View:
    """A request to show something (``/policy``...): no turn is taken."""

    topic: str


@dataclass(frozen=True)
class Action:
    """One agent message: ``{"content": TEXT}`` or ``{"tool_calls": [{"name", "arguments"}]}``."""

    message: dict[str, Any]


def split_outside(text: str, separator: str) -> list[str]:
    """``text`` cut at ``separator`` characters that are outside quotes and brackets.

    Raises:
        CommandError: an unclosed quote or bracket.
    """
    parts: list[str] = []
    current: list[str] = []
    quote, depth, escaped = "", 0, False
    for char in text:
        if escaped:
            escaped = False
        elif quote:
            if char == "\\":
                escaped = True
            elif char == quote:
                quote = ""
        elif char == '"' or (char == "'" and (not current or current[-1].isspace() or current[-1] in "=:,")):
            # An apostrophe inside a word ("customer's") is text; a quote opens only where a value starts.
            quote = char
        elif char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
        elif depth == 0 and (char == separator or (separator == " " and char.isspace())):
            parts.append("".join(current))
            current = []
            continue
        current.append(char)
    if quote:
        raise CommandError(f"unclosed quote {quote} in: {text}")
    if depth:
        raise CommandError(f"unbalanced brackets in: {text}")
    parts.append("".join(current))
    return [p for p in (p.strip() for p in parts) if p]


def _value(raw: str, declared: Mapping[str, Any] | None) -> Any:
    if raw.startswith("'") and raw.endswith("'") and len(raw) >= 2:
        return raw[1:-1]
    try:
        value = json.loads(raw)
    except ValueError:
        return raw
    if declared is not None and declared.get("type") == "string" and not isinstance(value, str):
        return raw  # the tool wants text: 12345 as typed, not the number
    return value


def _properties(tool: Mapping[str, Any]) -> dict[str, Any]:
    return dict((tool.get("parameters") or {}).get("properties") or {})


def _pairs(tokens: list[str], tool: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """``key=value`` tokens as arguments, and the tokens that are not such pairs."""
    properties = _properties(tool)
    arguments: dict[str, Any] = {}
    rest = []
    for token in tokens:
        key, sep, raw = token.partition("=")
        if sep and key.isidentifier():
            arguments[key] = _value(raw, properties.get(key))
        else:
            rest.append(token)
    return arguments, rest


def _tool(name: str, tools: Mapping[str, Mapping[str, Any]]) -> Mapping[str, Any]:
    if name not in tools:
        raise CommandError(
            f"no tool named {name!r}: /tools lists them (or /help for the commands); a ';' separates actions, "
            "so text after one (a rationale) must use commas or be quoted: rationale=\"a; b\""
        )
    return tools[name]


def _call(segment: str, tools: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """One tool call from ``TOOL key=value ...``, ``call TOOL {json}`` or ``decide ...``."""
    head, _, tail = segment.partition(" ")
    tail = tail.strip()
    if head == "decide":
        return _decision(tail, tools)
    if head == "call":
        name, _, tail = tail.partition(" ")
        tail = tail.strip()
        if tail.startswith("{"):
            _tool(name, tools)
            try:
                arguments = json.loads(tail)
            except ValueError as exc:
                raise CommandError(f"the arguments of {name} are not a JSON object: {exc}") from None
            if not isinstance(arguments, dict):
                raise CommandError(f"the arguments of {name} must be a JSON object")
            return {"name": name, "arguments": arguments}
        head = name
    tool = _tool(head, tools)
    arguments, rest = _pairs(split_outside(tail, " "), tool)
    if rest:
        raise CommandError(f"expected key=value after {head}, got {' '.join(rest)!r}")
    return {"name": head, "arguments": arguments}


def _decision(tail: str, tools: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    tool = _tool("record_decision", tools)
    word, _, rest = tail.partition(" ")
    decision = word.strip().upper().replace("_", "-")
    if decision not in LABELS:
        raise CommandError(f"decide needs one of {', '.join(LABELS)} (got {word.strip() or 'nothing'!r})")
    arguments, free = _pairs(split_outside(rest, " "), tool)
    arguments = {"decision": decision, **{k: v for k, v in arguments.items() if k != "decision"}}
    if free:
        if "rationale" not in _properties(tool):
            raise CommandError(f"record_decision has no rationale parameter for the text {' '.join(free)!r}")
        arguments.setdefault("rationale", " ".join(t.strip("\"'") for t in free))
    return {"name": "record_decision", "arguments": arguments}


def _json_action(text: str, tools: Mapping[str, Mapping[str, Any]]) -> Action:
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise CommandError(f"not valid JSON: {exc}") from None
    if isinstance(value, dict) and ("content" in value or "tool_calls" in value):
        if value.get("tool_calls"):
            return _json_action(json.dumps(value["tool_calls"]), tools)
        if not isinstance(value.get("content"), str) or not value["content"].strip():
            raise CommandError('a message needs a non-empty text "content" or "tool_calls"')
        return Action({"content": value["content"]})
    calls = value if isinstance(value, list) else [value]
    out = []
    for call in calls:
        if not isinstance(call, dict) or not isinstance(call.get("name"), str):
            raise CommandError('a JSON tool call is {"name": TOOL, "arguments": {...}}')
        arguments = call.get("arguments", {})
        if isinstance(arguments, str):  # the OpenAI wire form: arguments as a JSON string
            try:
                arguments = json.loads(arguments)
            except ValueError:
                arguments = None
        if not isinstance(arguments, dict):
            raise CommandError(f"the arguments of {call['name']} must be a JSON object")
        _tool(call["name"], tools)
        out.append({"name": call["name"], "arguments": arguments})
    if not out:
        raise CommandError("an empty list calls nothing")
    return Action({"tool_calls": out})


def parse_line(line: str, tools: Mapping[str, Mapping[str, Any]]) -> View | Action | None:
    """The command on ``line`` (``None`` for a blank line), given the tool schemas by name.

    Raises:
        CommandError: anything else, with what to type instead.
    """
    text = line.strip()
    if not text:
        return None
    if text.startswith("/"):
        topic = text[1:].strip().lower()
        if topic not in VIEWS:
            raise CommandError(f"unknown view {text!r}: one of {', '.join('/' + v for v in VIEWS)}")
        return View(topic)
    if text.startswith(("{", "[")):
        return _json_action(text, tools)
    head, _, tail = text.partition(" ")
    if head == "say":
        if not tail.strip():
            raise CommandError("say what? say TEXT")
        return Action({"content": tail.strip()})
    if head == "stop":
        if tail.strip():
            raise CommandError("stop takes nothing after it (to say something first: say TEXT)")
        return Action({"content": STOP_SIGNALS[0]})
    if head not in ("call", "decide") and head not in tools:
        raise CommandError(f"unknown command or tool {head!r}: /help lists the commands, /tools the tools")
    return Action({"tool_calls": [_call(segment, tools) for segment in split_outside(text, ";")]})
