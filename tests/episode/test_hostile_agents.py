"""Issue 23 §1-2: whatever starts in agent code is the agent's failure, scored; rows stay bounded strict JSON.

Each test tries one hostile form (a value the harness cannot encode, a
``BaseException``, a method or an agent-made object that never returns) and
asserts the outcome: a completed, scored row ending ``agent_error`` with
``failure_cause: "agent"`` and a clear message, never an error row or a crash.
Hangs block on events that are never set (released at the end): nothing here
depends on how fast the machine is.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from conftest import TOY_ALLOW
from pytest_pibench import AgentSpec, run_one
from pytest_pibench.bounds import ROW_DEPTH_LIMIT, ROW_ITEM_LIMIT, bound_row, strict_dumps
from pytest_pibench.episode.caller import TRACEBACK_LIMIT
from pytest_pibench.episode.reply import plain_copy, read_reply

TIMEOUT = 30.0  # an episode timeout: calls go through the participant thread
HANG_TIMEOUT = 1.0  # for agents that hang for ever: ample for the rest of a toy episode, short for the test

RELEASE = threading.Event()  # what every hanging agent waits for; set when the module's tests end


@pytest.fixture(autouse=True, scope="module")
def _release_hung_threads() -> Iterator[None]:
    yield
    RELEASE.set()


def _deep(levels: int) -> Any:
    value: Any = 0
    for _ in range(levels):
        value = [value]
    return value


def _strict(row: dict[str, Any]) -> str:
    """The row as strict JSON (raises on NaN/Infinity), checked to be UTF-8 encodable."""
    text = json.dumps(row, allow_nan=False, ensure_ascii=False)
    text.encode("utf-8")
    return text


def _scored_agent_failure(row: dict[str, Any], kind: str) -> None:
    assert row["status"] == "completed", row.get("error")
    assert row["termination_reason"] == "agent_error"
    assert row["failure_cause"] == "agent"
    assert row["error_detail"]["kind"] == kind, row["error_detail"]
    assert row["outcome_checks"], "the transcript so far is scored"


class Caller:
    """Calls one tool with the given arguments (then stops)."""

    def __init__(self, arguments: Any) -> None:
        self.arguments = arguments

    def init_state(self, benchmark_context, tools, message_history=None):
        return 0

    def generate(self, message, state):
        if state:
            return {"role": "assistant", "content": "###STOP###"}, state
        call = {"id": "c1", "name": "lookup_item", "arguments": self.arguments}
        return {"role": "assistant", "tool_calls": [call]}, 1


class Opaque:
    def __str__(self) -> str:  # never read: the harness names the type instead
        raise RuntimeError("str() of an agent object")


UNENCODABLE = {
    "integer past the str-conversion limit": ({"item_id": 10**5000}, "an integer of about 5,000 digits"),
    "nesting deeper than the encoder allows": ({"item_id": _deep(5000)}, "nested deeper than 100 levels"),
    "a key that is not a string": ({(1, 2): "x"}, "a key of type tuple"),
    "an integer key": ({1: "x"}, "a key of type int"),
    "NaN": ({"item_id": math.nan}, "float nan"),
    "Infinity": ({"item_id": -math.inf}, "float -inf"),
    "an arbitrary object": ({"item_id": Opaque()}, "a value of type Opaque"),
    "a set": ({"item_id": {1, 2}}, "a value of type set"),
}


@pytest.mark.parametrize("case", list(UNENCODABLE))
def test_tool_call_arguments_the_harness_cannot_encode_are_the_agents_invalid_message(case):
    arguments, said = UNENCODABLE[case]
    row = run_one(TOY_ALLOW, AgentSpec("bad-args", lambda scenario: Caller(arguments)), timeout=TIMEOUT)
    _scored_agent_failure(row, "invalid_message")
    assert row["error"].startswith("agent message invalid: tool_calls[0].arguments")
    assert said in row["error"]
    stored = row["transcript"]["messages"][-1]  # kept for the record, with a marker where JSON could not go
    assert stored["role"] == "assistant"
    assert "[not JSON: " in json.dumps(stored) or "nested deeper than" in json.dumps(stored)
    assert row["tool_calls"] == []  # the invalid call never ran
    assert len(_strict(row)) < 50_000


class Raises:
    """Raises ``exc`` from ``where`` (``__init__``, ``init_state``, ``generate``, ``is_stop`` or ``stop``)."""

    def __init__(self, where: str, exc: BaseException) -> None:
        self.where, self.exc = where, exc
        self._maybe("__init__")

    def _maybe(self, where: str) -> None:
        if self.where == where:
            raise self.exc

    def init_state(self, benchmark_context, tools, message_history=None):
        self._maybe("init_state")
        return 0

    def generate(self, message, state):
        self._maybe("generate")
        return {"role": "assistant", "content": "Let me look into that."}, state

    def is_stop(self, message) -> bool:
        self._maybe("is_stop")
        return False

    def stop(self, message, state) -> None:
        self._maybe("stop")


class Custom(BaseException):
    """A BaseException subclass of the agent's own."""


BASE_EXCEPTIONS = [SystemExit(3), KeyboardInterrupt(), GeneratorExit(), Custom("mine"), ValueError("plain")]
WHERE = {"__init__": "init_state", "init_state": "init_state", "generate": "generate", "is_stop": "is_stop"}


@pytest.mark.parametrize("exc", BASE_EXCEPTIONS, ids=lambda e: type(e).__name__)
@pytest.mark.parametrize("where", list(WHERE))
def test_any_base_exception_from_agent_code_is_scored_as_the_agents_failure(where, exc):
    row = run_one(TOY_ALLOW, AgentSpec("raiser", lambda scenario: Raises(where, exc)), timeout=TIMEOUT)
    _scored_agent_failure(row, "exception")
    assert f"agent.{WHERE[where]} raised" in row["error"]
    assert type(exc).__name__ in row["error"]


@pytest.mark.parametrize("exc", BASE_EXCEPTIONS, ids=lambda e: type(e).__name__)
def test_a_base_exception_from_stop_is_a_warning_on_a_normal_row(exc):
    row = run_one(TOY_ALLOW, AgentSpec("raiser", lambda scenario: Raises("stop", exc)), timeout=TIMEOUT)
    assert row["status"] == "completed" and row["termination_reason"] != "agent_error"
    assert any(w.startswith(f"agent.stop raised {type(exc).__name__}") for w in row["warnings"])


class UnprintableError(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no text for you")


class Recurses:
    """Mutual recursion: Python cannot fold its traceback (over 100 KB unbounded)."""

    def init_state(self, benchmark_context, tools, message_history=None):
        return 0

    def generate(self, message, state):
        return self.other(message, state + 1)

    def other(self, message, state):
        return self.generate(message, state + 1)


def test_a_runaway_recursion_leaves_a_bounded_traceback():
    row = run_one(TOY_ALLOW, AgentSpec("recurses", lambda scenario: Recurses()), timeout=TIMEOUT)
    _scored_agent_failure(row, "exception")
    assert "RecursionError" in row["error"]
    tb = row["error_detail"]["traceback"]
    assert len(tb) <= TRACEBACK_LIMIT + 100 and "traceback cut" in tb
    assert len(_strict(row)) < 40_000


class Unprintable(Raises):
    def generate(self, message, state):
        raise UnprintableError


def test_an_exception_whose_text_cannot_be_read_is_still_described():
    row = run_one(TOY_ALLOW, AgentSpec("unprintable", lambda scenario: Unprintable("", ValueError())), timeout=TIMEOUT)
    _scored_agent_failure(row, "exception")
    assert row["error"] == "agent.generate raised UnprintableError: <the exception's text could not be read>"


class Hangs(Raises):
    """Blocks forever in ``where`` (until the module's tests end)."""

    def _maybe(self, where: str) -> None:
        if self.where == where:
            RELEASE.wait()


@pytest.mark.parametrize("where", ["__init__", "init_state", "generate", "is_stop"])
def test_a_method_that_never_returns_is_the_agents_timeout(where):
    row = run_one(TOY_ALLOW, AgentSpec("hangs", lambda scenario: Hangs(where, ValueError())), timeout=HANG_TIMEOUT)
    _scored_agent_failure(row, "timeout") if where != "__init__" else _scored_agent_failure(row, "exception")
    if where == "__init__":  # building it ran out the time: init_state of the stand-in says so
        assert "could not be built: building it did not finish before the episode timeout" in row["error"]
    else:
        assert f"agent.{WHERE[where]} did not return before the episode timeout" in row["error"]


def test_a_stop_that_never_returns_is_abandoned_with_a_warning():
    row = run_one(TOY_ALLOW, AgentSpec("hangs", lambda scenario: Hangs("stop", ValueError())), timeout=HANG_TIMEOUT)
    assert row["status"] == "completed" and row["termination_reason"] != "agent_error"
    assert "agent.stop did not return within 1 seconds (abandoned)" in row["warnings"]


class Blocking(dict):
    """A message whose own accessors never return: the harness must never call them."""

    def get(self, *args: Any) -> Any:
        RELEASE.wait()

    def __getitem__(self, key: Any) -> Any:
        RELEASE.wait()

    def keys(self) -> Any:
        RELEASE.wait()

    def items(self) -> Any:
        RELEASE.wait()

    def __iter__(self) -> Any:
        RELEASE.wait()

    def __len__(self) -> int:
        RELEASE.wait()
        return 0


class Endless(list):
    """A content list whose iterator never ends."""

    def __iter__(self) -> Iterator[Any]:
        while True:
            yield {"type": "text", "text": "again"}

    def __len__(self) -> int:
        return 10**9


class Lying(tuple):
    def __len__(self) -> int:
        return 2

    def __iter__(self) -> Iterator[Any]:
        RELEASE.wait()
        return iter(())


class LazyObjects:
    """Returns agent-made containers whose methods hang: read as what they hold, never through their methods."""

    def init_state(self, benchmark_context, tools, message_history=None):
        return 0

    def generate(self, message, state):
        content = Endless([{"type": "text", "text": "Refund approved."}])
        if state == 0:
            return Lying((Blocking({"role": "assistant", "content": content}), 1))
        return Blocking({"role": "assistant", "content": "###STOP###"}), 2


def test_agent_made_objects_are_read_without_running_their_methods():
    row = run_one(TOY_ALLOW, AgentSpec("lazy", lambda scenario: LazyObjects()), timeout=TIMEOUT)
    assert row["status"] == "completed" and row["termination_reason"] == "agent_stop", row.get("error")
    said = [m for m in row["transcript"]["messages"] if m["role"] == "assistant"]
    assert said[1]["content"] == [{"type": "text", "text": "Refund approved."}]
    assert type(said[1]) is dict and type(said[1]["content"]) is list


class Mutator:
    """Changes what it is given; the next agent must not see it."""

    seen: list[str] = []

    def init_state(self, benchmark_context, tools, message_history=None):
        Mutator.seen.append(json.dumps(tools, sort_keys=True))
        for tool in tools:
            tool["description"] = "CHANGED"
            tool["parameters"].setdefault("properties", {})["injected"] = {"type": "string"}
            tool["parameters"]["required"] = ["injected"]
        tools.clear()
        return 0

    def generate(self, message, state):
        return {"role": "assistant", "content": "###STOP###"}, state


def test_agents_get_their_own_copy_of_the_tool_schemas():
    Mutator.seen.clear()
    for _ in range(2):
        run_one(TOY_ALLOW, AgentSpec("mutator", lambda scenario: Mutator()), timeout=TIMEOUT)
    first, second = Mutator.seen
    assert first == second and "CHANGED" not in second and "injected" not in second
    oracle = run_one(TOY_ALLOW, "oracle")  # the tools still validate as declared
    assert oracle["all_passed"] is True


@pytest.mark.slow
def test_a_usage_report_of_nan_or_one_that_hangs_is_a_warning_on_the_scored_row():
    class Report:
        def __init__(self, value: Any) -> None:
            self.value = value

        def init_state(self, benchmark_context, tools, message_history=None):
            return 0

        def generate(self, message, state):
            return {"role": "assistant", "content": "###STOP###"}, state

        def usage(self) -> dict[str, Any]:
            if self.value == "hang":
                RELEASE.wait()
            return {"cost_usd": self.value, "prompt_tokens": 10}

    nan = run_one(TOY_ALLOW, AgentSpec("nan", lambda scenario: Report(math.nan)), timeout=TIMEOUT, cost_limit=1.0)
    assert nan["status"] == "completed" and nan["usage"]["agent"] == {"prompt_tokens": 10}
    assert "agent.usage() entries that are not finite numbers were left out: cost_usd" in nan["warnings"]
    assert any("not finite numbers" in w for w in nan["warnings"] if w.startswith("usage() could not be read"))
    _strict(nan)
    hung = run_one(TOY_ALLOW, AgentSpec("hang", lambda scenario: Report("hang")), timeout=HANG_TIMEOUT)
    assert hung["status"] == "completed" and "usage" not in hung
    assert "agent.usage() did not return within 5 seconds" in hung["warnings"]


# --------------------------------------------------------------------------- bounded, strict rows


def test_three_million_small_ints_make_a_small_row():
    row = run_one(TOY_ALLOW, AgentSpec("big", lambda scenario: Caller({"item_id": list(range(3_000_000))})))
    assert row["status"] == "completed" and row["truncated"] is True
    size = len(_strict(row))
    assert size < 1_000_000, size
    stored = row["transcript"]["trace"][0]["arguments"]["item_id"]
    assert len(stored) == ROW_ITEM_LIMIT + 1 and stored[-1] == f"… [truncated, {3_000_000 - ROW_ITEM_LIMIT:,} more items]"


def test_bound_row_cuts_depth_and_keys_and_replaces_what_json_cannot_hold():
    many_keys = {f"k{i}": i for i in range(ROW_ITEM_LIMIT + 5)}
    row = {"deep": _deep(ROW_DEPTH_LIMIT + 10), "keys": many_keys, "nan": math.nan, "text": "ok \ud800 end", "n": 1}
    bounded = bound_row(row)
    assert bounded["truncated"] is True and bounded["sanitized"] is True
    assert bounded["nan"] is None and bounded["text"] == "ok \ufffd end" and bounded["n"] == 1
    assert len(bounded["keys"]) == ROW_ITEM_LIMIT + 1 and bounded["keys"]["…"] == "[truncated, 5 more keys]"
    level, value = 0, bounded["deep"]
    while isinstance(value, list):
        level, value = level + 1, value[0]
    assert level == ROW_DEPTH_LIMIT - 1 and value.startswith("… [truncated: nested deeper than")
    assert row["nan"] is not None and isinstance(row["nan"], float)  # the input is never modified
    _strict(bounded)


def test_strict_dumps_never_writes_nan_and_node_reads_it(tmp_path):
    text = strict_dumps({"metrics": {"x": math.nan, "y": [math.inf, 1.5]}, "s": "\ud800"})
    assert "NaN" not in text and "Infinity" not in text
    assert json.loads(text) == {"metrics": {"x": None, "y": [None, 1.5]}, "s": "\ud800"}


def test_plain_copy_reports_the_first_problem_and_marks_every_one():
    copy, problem = plain_copy({"a": [1, math.nan], "b": {"c": 10**5000}})
    assert problem == "a[1]: float nan"
    assert copy == {"a": [1, "[not JSON: float nan]"], "b": {"c": "[not JSON: an integer of about 5,000 digits]"}}


def test_read_reply_reads_a_lying_tuple_by_its_real_contents():
    class Short(tuple):
        def __len__(self) -> int:
            return 2

    reply = read_reply(Short(({"role": "assistant", "content": "hi"},)))
    assert reply.problem == "generate must return (message, state), got Short of 1 items"


@pytest.mark.parametrize("option", ["timeout", "cost_limit"])
@pytest.mark.parametrize("value", [math.nan, math.inf, -1.0, 0.0])
def test_the_python_api_refuses_a_limit_that_is_not_a_positive_finite_number(option, value):
    from pytest_pibench import run_episode
    from pytest_pibench.inputs import InputError

    with pytest.raises(InputError, match=f"{option} must be a positive, finite"):
        run_episode(TOY_ALLOW, "oracle", **{option: value})
