"""An assessment request to the green server: parsed and bounded, then run over the bundled scenarios.

What a caller may ask is deliberately narrow: which bundled scenarios (domains
or scenario ids, one shard of them), how many trials, the seed, concurrency up
to the server's cap, and the user simulator. The server reads no path and calls
no URL the caller names, except the purple agent (and the optional remote A2A
user) of the request. Every bad request gets an :class:`AssessmentRequestError`
that says what to fix.

Accepted shapes (AgentBeats sends the first, as JSON in a text part; others use a data part)::

    {"participants": {"agent": "http://purple:9009"}, "config": {"domains": ["finra"], "num_trials": 2}}
    {"participants": {"agent": {"url": "http://purple:9009", "id": "team-x"}}, "config": {...}}
    {"purple_agent_url": "http://purple:9009", "purple_agent_id": "team-x", "config": {...}}
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pytest_pibench.domain.packs import canonical_domain_name
from pytest_pibench.inputs import InputError, http_url
from pytest_pibench.participants.specs import resolve_agent, resolve_user
from pytest_pibench.paths import bundled_scenarios_dir
from pytest_pibench.results.document import Journal, results_document
from pytest_pibench.results.types import ResultRow, ResultsDocument
from pytest_pibench.runner import run_one
from pytest_pibench.scenario.loading import discover_scenarios, load_scenario
from pytest_pibench.vocab import DEFAULT_MAX_STEPS, DEFAULT_SEED

__all__ = ["MAX_TRIALS", "Assessment", "AssessmentRequestError", "parse_request", "run_assessment", "url_allowed"]

MAX_TRIALS = 10
"""Most trials per scenario one request may ask for."""
MAX_STEPS = 200
MAX_SHARDS = 1000
EPISODE_TIMEOUT = 1800.0
"""Seconds one episode may take in all (a purple agent that stalls cannot hold a slot for long)."""
_IGNORED_WHEN_DEFAULT = {"observer_mode": "audit_only", "retry_failed": 0}
"""Upstream config keys accepted only at the value this server always uses."""
_REFUSED = ("scenarios_dir", "workspace_root")
"""Upstream config keys naming server paths: never honoured (only the bundled scenarios run)."""
_KNOWN = {
    "domain", "domains", "scenario_scope", "scenario_domain", "scenario_ids", "num_trials", "trials", "seed",
    "concurrency", "max_steps", "user", "user_model", "user_url", "shard_index", "num_shards", "timeout",
    *_IGNORED_WHEN_DEFAULT, *_REFUSED,
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
    max_steps: int
    user: str
    timeout: float
    label: str
    shard: tuple[int, int] | None = None
    settings: dict[str, Any] = field(default_factory=dict)


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
        return named, str(payload.get("purple_agent_id") or payload.get("agentbeats_id") or "agent")
    participants = payload.get("participants")
    if not isinstance(participants, Mapping) or not participants:
        raise AssessmentRequestError('name the agent to assess: {"participants": {"agent": "http://..."}}')
    role = "agent" if "agent" in participants else next(iter(participants))
    entry = participants[role]
    raw_ids = payload.get("agentbeats_ids")
    ids: Mapping[str, Any] = raw_ids if isinstance(raw_ids, Mapping) else {}
    url: Any = entry  # a bare URL string, or an object naming it
    agent_id: Any = ids.get(role) or role
    if isinstance(entry, Mapping):
        url = entry.get("url") or entry.get("endpoint") or entry.get("base_url")
        agent_id = entry.get("id") or entry.get("agentbeats_id") or agent_id
    return _http_url(url, f"participants.{role}"), str(agent_id)


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
    text = str(model).removeprefix("litellm:")
    if "://" in text or not text.replace("/", "").replace("-", "").replace(".", "").replace("_", "").isalnum():
        raise AssessmentRequestError(f"config.user_model must be a model id such as openai/gpt-4o-mini, got {model!r}")
    if text not in allowed_models:  # the server's own keys pay for it: only models its operator allowed
        allowed = f"one of {sorted(allowed_models)}" if allowed_models else "none (the scripted user only)"
        raise AssessmentRequestError(f"config.user_model {text!r} is not offered here; this server allows {allowed}")
    return f"litellm:{text}"


def _scenario_files(config: Mapping[str, Any]) -> list[Path]:
    files = discover_scenarios(bundled_scenarios_dir())
    scenarios = {path: load_scenario(path) for path in files}
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


def parse_request(payload: Any, *, max_concurrency: int = 8, user_models: Sequence[str] = ()) -> Assessment:
    """Check and bound one assessment request.

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
    items = [(path, trial) for path in _scenario_files(config) for trial in range(trials)]
    shard = None
    if config.get("num_shards") is not None or config.get("shard_index") is not None:
        count = _int(config, "num_shards", 1, 1, MAX_SHARDS)
        index = _int(config, "shard_index", 0, 0, count - 1)
        shard = (index, count)
    total = len(items)
    mine = items[shard[0] :: shard[1]] if shard else items  # a shard past the last item is empty, and says so
    if not items:
        raise AssessmentRequestError("the request selects no scenario")
    return Assessment(
        purple_url=url,
        agent_id=agent_id,
        items=tuple(mine),
        total_before_shard=total,
        seed=_int(config, "seed", DEFAULT_SEED, 0, 2**63 - 1),
        concurrency=_int(config, "concurrency", max_concurrency, 1, max_concurrency),
        max_steps=_int(config, "max_steps", DEFAULT_MAX_STEPS, 1, MAX_STEPS),
        user=_user(config, user_models),
        timeout=float(_int(config, "timeout", 120, 1, 3600)),
        label=str(config.get("domain") or "policy_compliance"),
        shard=shard,
        # what the run was asked (the shard is recorded apart, so the shards of one run merge)
        settings={k: v for k, v in config.items() if k not in (*_REFUSED, "shard_index", "num_shards")},
    )


def run_assessment(
    assessment: Assessment,
    on_row: Callable[[ResultRow, int, int], None] | None = None,
    *,
    journal: Journal | None = None,
    stop: threading.Event | None = None,
) -> ResultsDocument:
    """Run every item of ``assessment`` against its purple agent; a results document of the rows.

    ``on_row(row, done, total)`` is called as each episode finishes (from worker
    threads, one at a time); ``journal`` gets each row as it finishes. Once
    ``stop`` is set no further episode starts (those running finish), and the
    document says the run is partial.
    """
    stop = stop or threading.Event()

    def one(path: Path, trial: int) -> ResultRow | None:
        if stop.is_set():
            return None
        return run_one(path, agent, trial=trial, base_seed=assessment.seed, user_factory=user.build,
                       max_steps=assessment.max_steps, timeout=EPISODE_TIMEOUT)  # fmt: skip

    started = time.monotonic()
    agent = resolve_agent(f"a2a:{assessment.purple_url}", params={"timeout": assessment.timeout})
    user = resolve_user(assessment.user)
    rows: list[ResultRow] = []
    lock = threading.Lock()
    with ThreadPoolExecutor(assessment.concurrency, thread_name_prefix="pibench-green") as pool:
        futures = [pool.submit(one, path, trial) for path, trial in assessment.items]
        for future in as_completed(futures):
            row = future.result()
            if row is None:
                continue
            with lock:
                rows.append(row)
                if journal is not None:
                    journal.append(row)
                if on_row is not None:
                    on_row(row, len(rows), len(futures))
    settings = {
        "agents": [agent.name],
        "agent_ids": {agent.name: assessment.agent_id},  # the leaderboard id (pi report publishes under it)
        "user": assessment.user,
        "seed": assessment.seed,
        "max_steps": assessment.max_steps,
        "request": assessment.settings,
    }
    shard = (assessment.shard[0] + 1, assessment.shard[1]) if assessment.shard else None
    ended_by = "cancelled by the caller" if len(rows) < len(assessment.items) else None
    return results_document(
        rows, settings, time.monotonic() - started, complete=ended_by is None, ended_by=ended_by,
        planned_items=len(assessment.items), shard=shard,
    )  # fmt: skip
