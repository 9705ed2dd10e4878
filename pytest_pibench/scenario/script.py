"""What the scripted customer says: plain lines, and turns that react to what the agent did.

A scripted turn is either a string, said as written, or a reactive turn::

    {"branches": [
        {"id": "pushback", "when": {"decision": "DENY"},
         "say": "That's not right, I was told at the store I could return it."},
        {"id": "thanks", "when": {"tool_called": "issue_refund"}, "say": "Thanks, that's all I needed."}
     ],
     "default": "Okay. So what happens now?",
     "oracle": "thanks"}

The first branch whose every condition holds is said; otherwise the neutral
``default``. Conditions look at the episode so far: the decision that counts
(``decision``, ``"NONE"`` before any), the tools called (``tool_called``,
``tool_not_called``), and the agent's latest message (``said_any``: any phrase,
case-insensitive; ``asked``: whether it asks a question). ``oracle`` names the
branch the gold trajectory takes (``"default"`` for the default); the validator
checks it, and that no branch is shadowed by an earlier one.

Lines must never presume an outcome the agent has not stated: a line that
thanks the agent for a refund belongs in a branch whose condition is the refund.
A line that gives data a check needs (a badge number, a date of birth) or names
a condition (a missing document) fires on its topic (``said_any`` with the ways
to ask, imperatives included) or the tool call that raises it, never on
``asked`` alone: the validator's ``fairness`` rule checks the data.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = ["CONDITION_KEYS", "ScriptedTurn", "TurnBranch", "TurnCondition", "shadowing_branch", "spoken_lines"]

NonEmptyStr = Annotated[str, Field(min_length=1)]
DecisionSoFar = Literal["ALLOW", "ALLOW-CONDITIONAL", "DENY", "ESCALATE", "NONE"]
"""A decision label (``vocab.LABELS``) or ``NONE`` for no decision yet."""

CONDITION_KEYS = ("decision", "tool_called", "tool_not_called", "said_any", "asked")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TurnCondition(_Strict):
    """What must hold for a branch to be said; every key given must hold (at least one)."""

    decision: DecisionSoFar | None = Field(None, description="The decision that counts so far, or NONE.")
    tool_called: NonEmptyStr | None = Field(None, description="A tool the agent has called.")
    tool_not_called: NonEmptyStr | None = Field(None, description="A tool the agent has not called.")
    said_any: list[NonEmptyStr] | None = Field(
        None, min_length=1, description="Phrases, any of which is in the agent's latest message (any case)."
    )
    asked: bool | None = Field(None, description="Whether the agent's latest message asks a question.")

    @model_validator(mode="after")
    def _not_empty(self) -> TurnCondition:
        if not self.given():
            raise ValueError(f"a branch condition needs at least one of {', '.join(CONDITION_KEYS)}")
        return self

    def given(self) -> dict[str, Any]:
        """The conditions set, by key."""
        return {k: v for k in CONDITION_KEYS if (v := getattr(self, k)) is not None}


class TurnBranch(_Strict):
    id: NonEmptyStr = Field(description="Names the branch (the validator reports and checks paths by it).")
    when: TurnCondition
    say: NonEmptyStr


class ScriptedTurn(_Strict):
    """A turn that reacts to what the agent did (see the module docstring)."""

    branches: list[TurnBranch] = Field(min_length=1)
    default: NonEmptyStr = Field(description="The neutral line when no branch applies.")
    oracle: NonEmptyStr | None = Field(None, description="The branch id the gold trajectory takes, or 'default'.")

    @model_validator(mode="after")
    def _known_ids(self) -> ScriptedTurn:
        ids = [b.id for b in self.branches]
        if len(set(ids)) != len(ids) or "default" in ids:
            raise ValueError(f"branch ids must be unique and not 'default', got {ids}")
        if self.oracle is not None and self.oracle not in {*ids, "default"}:
            raise ValueError(f"oracle {self.oracle!r} names no branch (ids: {', '.join(ids)}, or 'default')")
        return self


def shadowing_branch(turn: ScriptedTurn, index: int) -> str | None:
    """The id of an earlier branch that is said whenever branch ``index`` would be (so it never is), or None."""
    mine = turn.branches[index].when.given()
    for earlier in turn.branches[:index]:
        theirs = earlier.when.given()
        if all(key in mine and _implies(key, mine[key], value) for key, value in theirs.items()):
            return earlier.id
    return None


def _implies(key: str, mine: Any, theirs: Any) -> bool:
    """Whether condition ``key: mine`` holding guarantees ``key: theirs`` holds."""
    if key == "said_any":  # mine says one of its phrases; theirs holds if all of mine are among theirs
        return {p.lower() for p in mine} <= {p.lower() for p in theirs}
    return bool(mine == theirs)


def spoken_lines(turns: list[str | ScriptedTurn]) -> list[str]:
    """Every line the scripted customer may say, whichever branches it takes."""
    lines: list[str] = []
    for turn in turns:
        if isinstance(turn, str):
            lines.append(turn)
        else:
            lines += [b.say for b in turn.branches] + [turn.default]
    return lines
