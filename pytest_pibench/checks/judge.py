"""Tier-2 judging (upstream-evaluation.md §5.4): the text judged, the cache, the retry."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from pytest_pibench.checks.result import CheckResult
from pytest_pibench.episode.messages import extract_text
from pytest_pibench.episode.protocols import InfrastructureError, JudgeProtocol
from pytest_pibench.scenario.models import NLJudgeCheck

__all__ = ["JudgeCache", "ask", "assistant_text", "judge_checks"]

_JOIN = "\n\n---\n\n"
JudgeCache = dict[tuple[str, str], str]


def assistant_text(messages: Sequence[dict[str, Any]], *, final_only: bool = False) -> str:
    """Every assistant message with text, joined as upstream does (or only the last one)."""
    texts = [t for m in messages if m.get("role") == "assistant" and (t := extract_text(m))]
    return _JOIN.join(texts[-1:] if final_only else texts)


def ask(judge: JudgeProtocol, question: str, text: str, cache: JudgeCache) -> tuple[str | None, str]:
    """``(answer, problem)``: YES/NO, or None with why. One retry on an unparseable answer.

    Answers are cached per ``(text, question)`` within one evaluation; failures are not.
    Any exception from the judge fails only the check that asked, except
    :class:`InfrastructureError` (the judge could not be reached), which propagates:
    an unreachable judge is an infrastructure error of the episode, never a "no".
    """
    key = (hashlib.md5(text.encode()).hexdigest(), question)
    if key in cache:
        return cache[key], ""
    try:
        for _ in range(2):
            raw = judge.judge(question, text)
            answer = raw.strip().upper() if isinstance(raw, str) else None
            if answer in ("YES", "NO"):
                cache[key] = answer
                return answer, ""
    except InfrastructureError:
        raise
    except Exception as exc:
        return None, f"judge error: {type(exc).__name__}: {exc}"
    return None, "judge answer unparseable after retry"


def judge_checks(
    checks: Sequence[NLJudgeCheck], messages: Sequence[dict[str, Any]], judge: JudgeProtocol | None
) -> list[CheckResult]:
    """NL_JUDGE results; without a judge every check is skipped (``passed`` None)."""
    results = []
    cache: JudgeCache = {}
    for check in checks:
        if judge is None:
            results.append(CheckResult(check.outcome_id, "NL_JUDGE", None, "skipped: no judge configured"))
            continue
        text = assistant_text(messages, final_only=check.scope == "final_assistant_message")
        if not text:
            results.append(CheckResult(check.outcome_id, "NL_JUDGE", False, "no assistant messages to judge"))
            continue
        answer, problem = ask(judge, check.judge_question, text, cache)
        if answer is None:
            results.append(CheckResult(check.outcome_id, "NL_JUDGE", False, problem))
            continue
        detail = f"judge: expected={check.expected_answer}, actual={answer}"
        results.append(CheckResult(check.outcome_id, "NL_JUDGE", answer == check.expected_answer, detail))
    return results
