"""The Tier-2 NL_JUDGE check (upstream-evaluation.md §5.4): a yes/no question over the agent's text.

The evaluator asks through ``context.ask_judge`` (the evaluation layer supplies
it, with the per-evaluation cache, the retry and the error policy); without a
judge the check is skipped (``passed`` None).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import field_validator

from pytest_pibench.checks.base import CheckContext, CheckModel, CheckType, NonEmptyStr, Outcome
from pytest_pibench.checks.registry import register_check
from pytest_pibench.transcript import extract_text

__all__ = ["NLJudgeCheck", "assistant_text"]

_JOIN = "\n\n---\n\n"


def assistant_text(messages: Sequence[Mapping[str, Any]], *, final_only: bool = False) -> str:
    """Every assistant message with text, joined as upstream does (or only the last one)."""
    texts = [t for m in messages if m.get("role") == "assistant" and (t := extract_text(m))]
    return _JOIN.join(texts[-1:] if final_only else texts)


class NLJudgeCheck(CheckModel):
    """A Tier-2 yes/no question answered by an LLM judge over the agent's messages."""

    type: Literal["nl_assertion_llm_judge"]
    judge_question: NonEmptyStr
    expected_answer: Literal["YES", "NO"]
    scope: str = "assistant_messages"

    @field_validator("expected_answer", mode="before")
    @classmethod
    def _upper(cls, value: Any) -> Any:
        return value.strip().upper() if isinstance(value, str) else value


def _nl_judge(check: NLJudgeCheck, context: CheckContext) -> Outcome:
    if context.ask_judge is None:
        return None, "skipped: no judge configured"
    text = assistant_text(context.messages, final_only=check.scope == "final_assistant_message")
    if not text:
        return False, "no assistant messages to judge"
    answer, problem = context.ask_judge(check.judge_question, text)
    if answer is None:
        return False, problem
    return answer == check.expected_answer, f"judge: expected={check.expected_answer}, actual={answer}"


register_check(
    CheckType(
        NLJudgeCheck, _nl_judge, dimension="semantic", tools={}, family="NL_JUDGE", result_type="NL_JUDGE", tier=2
    )
)
