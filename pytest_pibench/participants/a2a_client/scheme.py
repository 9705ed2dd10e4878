"""The ``a2a:<url>`` scheme: a remote agent (``--pibench-agent``) or user simulator (``--pibench-user``).

Nothing heavy is imported until an episode builds its participant.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pytest_pibench.inputs import MAX_TIMEOUT, InputError, finite_float, http_url
from pytest_pibench.participants.schemes import AgentSpecError, ParticipantFactory, Scheme

if TYPE_CHECKING:
    from pytest_pibench.scenario.models import Scenario

__all__ = ["A2A_SCHEME", "require_a2a_extra"]


def require_a2a_extra(spec: str) -> None:
    """Fail early, with the fix, when the optional A2A dependencies are missing."""
    missing = [name for name in ("a2a", "tenacity", "httpx") if importlib.util.find_spec(name) is None]
    if missing:
        raise AgentSpecError(
            f"{spec!r} needs {', '.join(missing)}: install the A2A extra with pip install 'pytest-pibench[a2a]'"
        )


def _a2a_url(argument: str, params: Mapping[str, Any]) -> tuple[str, float]:
    """The base URL and per-request timeout; a URL that cannot be one, or a timeout that is no number, is refused.

    Only the form is checked here (before any episode): a well-formed URL where
    nothing answers fails its episodes as infrastructure errors.
    """
    spec = f"a2a:{argument}"
    try:
        url = http_url(argument)
    except InputError as exc:
        raise AgentSpecError(f"{spec!r}: {exc}; give the agent's base URL, e.g. a2a:http://127.0.0.1:9019") from None
    require_a2a_extra(spec)
    raw = params.get("timeout", 120.0)
    try:  # NaN and infinity refused too: a wait on either never ends or overflows
        timeout = finite_float(raw, expected="timeout must be a number of seconds")
    except InputError as exc:
        raise AgentSpecError(f"{spec!r}: {exc}") from None
    if not 0 < timeout <= MAX_TIMEOUT:
        raise AgentSpecError(f"{spec!r}: timeout must be positive and at most {MAX_TIMEOUT:g} seconds, got {raw!r}")
    return url, timeout


def _a2a_agent(argument: str, params: Mapping[str, Any]) -> ParticipantFactory:
    url, timeout = _a2a_url(argument, params)

    def build(scenario: Scenario) -> Any:
        from pytest_pibench.participants.a2a_client.client import A2AAgent

        return A2AAgent(url, timeout, domain=str(scenario.meta.domain or ""))

    return build


def _a2a_user(argument: str, params: Mapping[str, Any]) -> ParticipantFactory:
    url, timeout = _a2a_url(argument, params)

    def build(scenario: Scenario) -> Any:
        from pytest_pibench.participants.a2a_client.user import A2AUser

        return A2AUser(url, timeout)

    return build



A2A_SCHEME = Scheme("a2a", "a2a:<url>", agent=_a2a_agent, user=_a2a_user)
"""``a2a:<url>``: the agent or user simulator served over A2A at ``url`` (``timeout`` per request)."""
