"""An assessment request to the green server: parsed and bounded, then run over the bundled scenarios.

What a caller may ask is deliberately narrow: which bundled scenarios (domains
or scenario ids, one shard of them), how many trials, the seed, concurrency up
to the server's cap, the episode limits local runs have (each within a bound),
and the user simulator and judge among the models the operator offers. The
server reads no path and calls no URL the caller names, except the purple agent
(and the optional remote A2A user) of the request. Every bad request gets an
:class:`AssessmentRequestError` that says what to fix.

The request becomes a :class:`~pytest_pibench.run.config.RunConfig` and runs
through the same :class:`~pytest_pibench.run.executor.Executor` as the plugin,
so a purple agent assessed here gets the rows ``--pibench-agent=a2a:<url>`` gives it.

Accepted shapes (AgentBeats sends the first, as JSON in a text part; others use a data part)::

    {"participants": {"agent": "http://purple:9009"}, "config": {"domains": ["finra"], "num_trials": 2}}
    {"participants": {"agent": {"url": "http://purple:9009", "id": "team-x"}}, "config": {...}}
    {"purple_agent_url": "http://purple:9009", "purple_agent_id": "team-x", "config": {...}}
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pytest_pibench.episode.limits import OBSERVER_MODES, EpisodeLimits
from pytest_pibench.inputs import InputError, http_url
from pytest_pibench.packs.loading import canonical_domain_name
from pytest_pibench.paths import bundled_scenarios_dir
from pytest_pibench.results.document import Journal
from pytest_pibench.results.types import ResultRow, ResultsDocument
from pytest_pibench.run.config import RunConfig
from pytest_pibench.run.executor import Executor
from pytest_pibench.scenario.loading import discover_scenarios, load_scenario
from pytest_pibench.scenario.models import Scenario
from pytest_pibench.vocab import DEFAULT_SEED

__all__ = [
    "MAX_TRIALS",
    "Assessment",
    "AssessmentRequestError",
    "bundled_index",
    "parse_request",
    "run_assessment",
    "url_allowed",
]

MAX_TRIALS = 10
"""Most trials per scenario one request may ask for."""
MAX_STEPS = 200
MAX_TOOL_CALLS = 1000
MAX_SHARDS = 1000
MAX_EPISODE_TIMEOUT = 1800.0
"""Most seconds one episode may be given (a purple agent that stalls cannot hold a slot for long)."""
MAX_JUDGE_VOTES = 5
_IGNORED_WHEN_DEFAULT = {"retry_failed": 0}
"""Upstream config keys accepted only at the value this server always uses."""
_REFUSED = ("scenarios_dir", "workspace_root")
"""Upstream config keys naming server paths: never honoured (only the bundled scenarios run)."""
_KNOWN = {
    "domain", "domains", "scenario_scope", "scenario_domain", "scenario_ids", "num_trials", "trials", "seed",
    "concurrency", "max_steps", "user", "user_model", "user_url", "shard_index", "num_shards", "timeout",
    "max_tool_calls", "max_tool_calls_per_message", "observer_mode", "episode_timeout", "judge_model",
    "judge_votes", *_IGNORED_WHEN_DEFAULT, *_REFUSED,
}  # fmt: skip


class AssessmentRequestError(ValueError):
    """A request the green server will not run; the message says what to change."""


@dataclass(frozen=True)
class Assessment:
    """One parsed, bounded request: who to assess, on which (scenario file, trial) items, how."""

    purple_url: str
    agent_id: str
    items: tuple[tuple[Path, int], ...]
    total_before_shard: int
    seed: int
    concurrency: int
    user: str
    timeout: float
    """Seconds the purple agent has for one reply (the A2A client's timeout)."""
    label: str
    shard: tuple[int, int] | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    limits: EpisodeLimits = field(default_factory=EpisodeLimits)
    judge: str | None = None
    judge_votes: int = 1
    trials: int = 1

    @property
    def agent(self) -> str:
        """The purple agent's spec: the one ``--pibench-agent=a2a:<url>`` names."""
        return f"a2a:{self.purple_url}"

    @property
    def max_steps(self) -> int:
        return self.limits.max_steps

    def run_config(self) -> RunConfig:
        """The run this request asks for, as the plugin would build it from the same options."""
        return RunConfig(
            agents=(self.agent,), user=self.user, judge=self.judge, judge_votes=self.judge_votes,
            agent_args={"timeout": self.timeout}, seed=self.seed, limits=self.limits, concurrency=self.concurrency,
            trials=self.trials,
        )  # fmt: skip


def _http_url(value: Any, what: str) -> str:
    """The URL a request names, when it can be one (the plugin's rule: :func:`~pytest_pibench.inputs.http_url`).

    Refused before any episode: a port past 65535, a host such as 256.1.1.1, another scheme, user information.
    """
    if not isinstance(value, str) or not value.strip():
        raise AssessmentRequestError(f"{what} must be an http(s) URL, got {value!r}")
    try:
        return http_url(value.strip())
    except InputError as exc:
        raise AssessmentRequestError(f"{what} must be an http(s) URL: {exc}") from None


def url_allowed(url: str, prefixes: Sequence[str]) -> bool:
    """Whether ``url`` is under one of ``prefixes`` (same scheme, host and port; path under the prefix's).

    Compared parsed, not as text: ``http://a:1@b/`` is host ``b`` whatever its first characters.
    """
    try:
        target = urlsplit(url)
        origin = (target.scheme, target.hostname, target.port)
    except ValueError:  # a port past 65535, a broken IPv6 host: no origin, so never allowed
        return False
    for prefix in prefixes:
        allowed = urlsplit(prefix)
        try:
            same_origin = origin == (allowed.scheme, allowed.hostname, allowed.port)
        except ValueError:
            continue
        base = allowed.path.rstrip("/")
        if same_origin and "@" not in target.netloc and (target.path == base or target.path.startswith(base + "/")):
            return True
    return False


def _participant(payload: Mapping[str, Any]) -> tuple[str, str]:
    if payload.get("purple_agent_url"):
        named = _http_url(payload["purple_agent_url"], "purple_agent_url")
        return named, str(payload.get("purple_agent_id") or payload.get("agentbeats_id") or named)
    participants = payload.get("participants")
    if not isinstance(participants, Mapping) or not participants:
        raise AssessmentRequestError('name the agent to assess: {"participants": {"agent": "http://..."}}')
    role = "agent" if "agent" in participants else next(iter(participants))
    entry = participants[role]
    raw_ids = payload.get("agentbeats_ids")
    ids: Mapping[str, Any] = raw_ids if isinstance(raw_ids, Mapping) else {}
    url: Any = entry  # a bare URL string, or an object naming it
    agent_id: Any = ids.get(role)
    if isinstance(entry, Mapping):
        url = entry.get("url") or entry.get("endpoint") or entry.get("base_url")
        agent_id = entry.get("id") or entry.get("agentbeats_id") or agent_id
    checked = _http_url(url, f"participants.{role}")
    return checked, str(agent_id or checked)  # no id given: the agent is known by its URL, not by its role


def _int(config: Mapping[str, Any], key: str, default: int, low: int, high: int) -> int:
    value = config.get(key, default)
    if value is None:
        return default
    whole = isinstance(value, int) or (isinstance(value, float) and math.isfinite(value) and value.is_integer())
    if isinstance(value, bool) or not whole:
        raise AssessmentRequestError(f"config.{key} must be a whole number, got {value!r}")
    if not low <= int(value) <= high:
        raise AssessmentRequestError(f"config.{key} must be between {low} and {high}, got {value}")
    return int(value)


def _user(config: Mapping[str, Any], allowed_models: Sequence[str]) -> str:
    if config.get("user_url"):
        return "a2a:" + _http_url(config["user_url"], "config.user_url")
    model = config.get("user_model") or config.get("user")
    if model in (None, "", "scripted"):
        return "scripted"
    return _offered_model(model, "user_model", allowed_models, "none (the scripted user only)")


def _judge(config: Mapping[str, Any], allowed_models: Sequence[str]) -> str | None:
    model = config.get("judge_model")
    if model in (None, ""):
        return None
    return _offered_model(model, "judge_model", allowed_models, "none (Tier-2 checks are left unjudged)")


def _offered_model(model: Any, key: str, allowed_models: Sequence[str], none_offered: str) -> str:
    """``litellm:<model>`` for a model id the operator offers; the server's own keys pay for it."""
    text = str(model).removeprefix("litellm:")
    if "://" in text or not text.replace("/", "").replace("-", "").replace(".", "").replace("_", "").isalnum():
        raise AssessmentRequestError(f"config.{key} must be a model id such as openai/gpt-4o-mini, got {model!r}")
    if text not in allowed_models:
        allowed = f"one of {sorted(allowed_models)}" if allowed_models else none_offered
        raise AssessmentRequestError(f"config.{key} {text!r} is not offered here; this server allows {allowed}")
    return f"litellm:{text}"


def _limits(config: Mapping[str, Any]) -> EpisodeLimits:
    """The episode limits a request asks for, each within this server's bound; the rest at their defaults."""
    base = EpisodeLimits()
    mode = config.get("observer_mode") or base.observer_mode
    if mode not in OBSERVER_MODES:
        raise AssessmentRequestError(f"config.observer_mode must be one of {list(OBSERVER_MODES)}, got {mode!r}")
    default_timeout = int(base.timeout or MAX_EPISODE_TIMEOUT)
    return base.with_(
        max_steps=_int(config, "max_steps", base.max_steps, 1, MAX_STEPS),
        max_tool_calls=_int(config, "max_tool_calls", base.max_tool_calls, 1, MAX_TOOL_CALLS),
        max_tool_calls_per_message=_int(
            config, "max_tool_calls_per_message", base.max_tool_calls_per_message, 1, MAX_TOOL_CALLS
        ),
        observer_mode=mode,
        timeout=float(_int(config, "episode_timeout", default_timeout, 1, int(MAX_EPISODE_TIMEOUT))),
    )


@cache
def bundled_index() -> dict[Path, Scenario]:
    """The bundled scenarios, loaded once per process (the server warms it up before serving).

    A request picks from this index: no request, refused or not, reads a scenario file.
    """
    return {path: load_scenario(path) for path in discover_scenarios(bundled_scenarios_dir())}


def _scenario_files(config: Mapping[str, Any]) -> list[Path]:
    scenarios = bundled_index()
    domains: list[str] = []
    if config.get("domains"):
        if not isinstance(config["domains"], list) or not all(isinstance(d, str) for d in config["domains"]):
            raise AssessmentRequestError("config.domains must be a list of domain names")
        domains = [canonical_domain_name(d) for d in config["domains"]]
    elif config.get("scenario_scope", "all") == "domain":
        if not config.get("scenario_domain"):
            raise AssessmentRequestError('config.scenario_scope "domain" needs config.scenario_domain')
        domains = [canonical_domain_name(str(config["scenario_domain"]))]  # upstream's aliases too
    elif config.get("scenario_scope", "all") != "all":
        scope = config["scenario_scope"]
        raise AssessmentRequestError(f'config.scenario_scope must be "all" or "domain", got {scope!r}')
    known_domains = sorted({s.meta.domain for s in scenarios.values()})
    unknown = [d for d in domains if d not in known_domains]
    if unknown:
        raise AssessmentRequestError(f"unknown domain(s) {unknown}; the bundled ones are {known_domains}")
    chosen = [p for p, s in scenarios.items() if not domains or s.meta.domain in domains]
    ids = config.get("scenario_ids")
    if ids:
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            raise AssessmentRequestError("config.scenario_ids must be a list of scenario ids")
        by_id = {scenarios[p].scenario_id: p for p in chosen}
        missing = [i for i in ids if i not in by_id]
        if missing:
            raise AssessmentRequestError(f"no bundled scenario (in the chosen domains) has the id(s) {missing[:10]}")
        chosen = [by_id[i] for i in dict.fromkeys(ids)]
    return sorted(chosen)


def parse_request(
    payload: Any, *, max_concurrency: int = 8, user_models: Sequence[str] = (), judge_models: Sequence[str] = ()
) -> Assessment:
    """Check and bound one assessment request (``user_models``, ``judge_models``: the LLMs the operator offers).

    Raises:
        AssessmentRequestError: naming what is wrong (a missing agent, an unknown key or domain, a bound).
    """
    if not isinstance(payload, Mapping):
        raise AssessmentRequestError("the request must be a JSON object")
    url, agent_id = _participant(payload)
    config = payload.get("config") or {}
    if not isinstance(config, Mapping):
        raise AssessmentRequestError("config must be a JSON object")
    config = {**config, **{k: payload[k] for k in ("shard_index", "num_shards") if k in payload}}
    unknown = sorted(set(config) - _KNOWN)
    if unknown:
        raise AssessmentRequestError(f"unknown config key(s) {unknown}; accepted: {sorted(_KNOWN - set(_REFUSED))}")
    for key in _REFUSED:
        if config.get(key):
            raise AssessmentRequestError(f"config.{key} is not accepted: this server runs only its bundled scenarios")
    for key, value in _IGNORED_WHEN_DEFAULT.items():
        if config.get(key) not in (None, value):
            raise AssessmentRequestError(f"config.{key} must be {value!r} on this server, got {config[key]!r}")
    trials = _int(config, "num_trials" if "num_trials" in config else "trials", 1, 1, MAX_TRIALS)
    shard = None
    if config.get("num_shards") is not None or config.get("shard_index") is not None:
        count = _int(config, "num_shards", 1, 1, MAX_SHARDS)
        index = _int(config, "shard_index", 0, 0, count - 1)
        shard = (index, count)
    # Every scalar is checked before the scenarios are chosen: a refused request costs no scenario work.
    checked: dict[str, Any] = {
        "seed": _int(config, "seed", DEFAULT_SEED, 0, 2**63 - 1),
        "concurrency": _int(config, "concurrency", max_concurrency, 1, max_concurrency),
        "user": _user(config, user_models),
        "timeout": float(_int(config, "timeout", 120, 1, 3600)),
        "limits": _limits(config),
        "judge": _judge(config, judge_models),
        "judge_votes": _int(config, "judge_votes", 1, 1, MAX_JUDGE_VOTES),
    }
    items = [(path, trial) for path in _scenario_files(config) for trial in range(trials)]
    total = len(items)
    mine = items[shard[0] :: shard[1]] if shard else items  # a shard past the last item is empty, and says so
    if not items:
        raise AssessmentRequestError("the request selects no scenario")
    return Assessment(
        purple_url=url,
        agent_id=agent_id,
        items=tuple(mine),
        total_before_shard=total,
        label=str(config.get("domain") or "policy_compliance"),
        shard=shard,
        # what the run was asked (the shard is recorded apart, so the shards of one run merge)
        settings={k: v for k, v in config.items() if k not in (*_REFUSED, "shard_index", "num_shards")},
        trials=trials,
        **checked,
    )


def run_assessment(
    assessment: Assessment,
    on_row: Callable[[ResultRow, int, int], None] | None = None,
    *,
    journal: Journal | None = None,
    stop: threading.Event | None = None,
) -> ResultsDocument:
    """Run every item of ``assessment`` against its purple agent; a results document of the rows.

    The items run through the plugin's :class:`Executor`, under the request's
    :meth:`Assessment.run_config`. ``on_row(row, done, total)`` is called as each
    episode finishes (one at a time); ``journal`` gets each row as it finishes.
    Once ``stop`` is set no further episode starts (those running finish), and
    the document says the run is partial.
    """
    executor = Executor(assessment.run_config())
    agent = executor.agent(assessment.agent)
    scenarios = bundled_index()
    items = [executor.item(scenarios[path], agent.name, trial) for path, trial in assessment.items]
    outcome = executor.run(items, on_row=on_row, journal=journal, stop=stop)
    shard = (assessment.shard[0] + 1, assessment.shard[1]) if assessment.shard else None
    return executor.document(
        outcome, shard=shard, agent_ids={agent.name: assessment.agent_id}, request=assessment.settings
    )
