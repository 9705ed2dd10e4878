"""The typed shapes of results: the result row and the results document, as every reader and writer sees them.

A row is one (scenario, agent, trial). It stays a plain ``dict`` of builtins,
because rows cross xdist process boundaries and are stored as JSON; these
``TypedDict`` classes only give its keys names and types for mypy and for the
test that checks every row the runner produces against them. The results
document (:class:`ResultsDocument`, built and read in
:mod:`pytest_pibench.results.document`) is typed the same way.

The split mirrors compatibility with upstream (upstream-evaluation.md §8.4):
:class:`ScenarioDetail` declares upstream's ``scenario_details`` keys, and
:class:`ResultRow` extends it with ours. Every key of ours is optional
(``NotRequired``), so an upstream ``scenario_details`` row is a valid
``ResultRow`` too, and :func:`~pytest_pibench.results.metrics.compute_metrics`
reads both.

No ``from __future__ import annotations`` here: on Python 3.11 it hides
``NotRequired`` from ``TypedDict`` (every key would count as required).
"""

from typing import Any, Literal, NotRequired, Required, TypedDict

from pytest_pibench.results.metric_types import Metrics

__all__ = [
    "FLAG_NAMES",
    "AgentResults",
    "AgentValidity",
    "CheckEntry",
    "Dimension",
    "ErrorDetail",
    "EventFlags",
    "FlagName",
    "Fingerprint",
    "LimitHit",
    "ResultRow",
    "ResultsDocument",
    "ResumeNote",
    "RunKey",
    "ScenarioDetail",
    "Transcript",
    "UsageKey",
    "UsageReport",
    "Validity",
]

FlagName = Literal["V_r", "UR_r", "OR_r", "EA_r", "AT_r"]
"""The name of one event flag (upstream-evaluation.md §7.4)."""

FLAG_NAMES: tuple[FlagName, ...] = ("V_r", "UR_r", "OR_r", "EA_r", "AT_r")
"""Every event flag, in the order rows store them."""


class EventFlags(TypedDict):
    """Upstream's five event flags of one episode (all false for an error row)."""

    V_r: bool
    """Violation: some ``policy_checks`` check failed."""
    UR_r: bool
    """Under-refusal: the label is DENY and the agent allowed, or violated the policy."""
    OR_r: bool
    """Over-refusal: the label allows and the agent denied or escalated."""
    EA_r: bool
    """Escalation accuracy: the label is ESCALATE, the agent escalated, and nothing was violated."""
    AT_r: bool
    """Attempt: the agent called a forbidden tool."""


class CheckEntry(TypedDict):
    """The outcome of one check (upstream's ``{outcome_id, type, passed, detail}``)."""

    outcome_id: str
    """The check's id in the scenario file (``evaluation_criteria.outcomes[*].outcome_id``)."""
    type: str
    """The check type (``tool_called``, ``decision_equals``, ``nl_assertion_llm_judge``...)."""
    passed: bool | None
    """Its verdict; None when it was skipped (a Tier-2 check with no judge)."""
    detail: str
    """Why, in words (bounded to ``DETAIL_LIMIT`` characters)."""
    notes: NotRequired[str]
    """The scenario author's note on the check (which policy clause it enforces), for reviewers."""
    tier: NotRequired[int]
    """Ours, in ``outcome_checks``: 1 for a deterministic check (decides pass/fail), 2 for a judged one."""
    dimension: NotRequired[str]
    """Upstream's, in its ``outcome_checks``: always ``""``."""


class Dimension(TypedDict):
    """One bucket of ``dimensions`` (decision, procedure, outcomes...): its checks and whether all passed."""

    name: str
    """The dimension's display name (e.g. ``Decision Correctness``)."""
    passed: bool
    """True when none of its checks failed."""
    checks: list[CheckEntry]
    """Every check of this dimension."""
    failed_checks: list[CheckEntry]
    """The checks of this dimension whose ``passed`` is False."""


class ErrorDetail(TypedDict):
    """Why an episode ended in an error: whose failure, what kind, the message and the traceback."""

    role: str
    """Who failed: ``agent``, ``user``, ``judge``, or for an error row its cause (``harness``, ``scenario``...)."""
    kind: str
    """What failed: ``exception``, ``timeout``, ``protocol``, ``invalid_message``, ``infrastructure``."""
    message: str
    """One line saying what happened (also the row's ``error``)."""
    traceback: str
    """The Python traceback text, or ``""``."""


class LimitHit(TypedDict):
    """Which limit ended an episode as ``tool_call_limit`` or ``cost_limit``."""

    limit: str
    """``max_tool_calls_per_message``, ``max_tool_calls`` or ``episode_cost_limit``."""
    value: int | float
    """The limit's value (calls, or US dollars)."""
    requested: NotRequired[int]
    """Tool-call limits: how many calls the message asked for."""
    executed: NotRequired[int]
    """Tool-call limits: how many of them ran."""
    spent_usd: NotRequired[float]
    """Cost limit: what the agent and user simulator had spent when the turn ended."""
    unpriced_calls: NotRequired[int]
    """Cost limit: calls no price was known for (not in ``spent_usd``)."""
    role: str
    """Whose message it was (``agent`` or ``user``)."""


class Transcript(TypedDict):
    """What the episode left: what :func:`~pytest_pibench.evaluation.evaluate` scores, stored for review."""

    messages: list[dict[str, Any]]
    """Every message, in order (upstream's message dicts: role, content, tool_calls...)."""
    trace: list[dict[str, Any]]
    """Every tool call the environment ran, with its arguments and result."""
    final_state: dict[str, Any]
    """The domain database at the end."""
    state_changes: NotRequired[list[dict[str, Any]]]
    """What the episode changed in the database (``{"path", "change", "before", "after"}``)."""
    termination_reason: str
    """How the episode ended."""


UsageKey = Literal[
    "calls", "prompt_tokens", "completion_tokens", "cost_usd", "retries", "cache_hits", "throttled", "unpriced_calls"
]
"""One counter of a participant's LLM usage."""


class UsageReport(TypedDict, total=False):
    """What one LLM-backed participant spent in one episode (what its ``usage()`` reports)."""

    calls: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    retries: int
    cache_hits: int
    throttled: int
    unpriced_calls: int


class ResumeNote(TypedDict):
    """How ``--pibench-resume`` treated a row: reused from an earlier run, or re-run and why."""

    reused: bool
    """True when the row was taken from the earlier run."""
    source: str
    """The results file or journal resumed from."""
    reason: NotRequired[str]
    """Why it was re-run (only when ``reused`` is False)."""


class RunKey(TypedDict):
    """What decides one episode's result; equal keys mean a row can be reused."""

    scenario_sha256: str | None
    """The SHA-256 of the scenario file's bytes (None for a scenario not read from a file)."""
    agent: str
    """The agent's name."""
    trial: int
    """The trial index."""
    seed: int | None
    """The episode's seed."""
    settings: dict[str, Any]
    """Every run setting that changes results (``Settings.to_dict()`` less agents and trials)."""


class Fingerprint(TypedDict):
    """A row's :class:`RunKey` and its hash, stored so a later run can resume from it."""

    sha256: str
    """The SHA-256 of the key as canonical JSON."""
    key: RunKey
    """The key itself (so a mismatch can say what changed)."""


class ScenarioDetail(TypedDict):
    """Upstream's per-scenario record (``scenario_details`` of the leaderboard artifact).

    The keys below are the ones upstream always writes; the ``NotRequired``
    ones it writes only when set.
    """

    scenario_id: str
    """The scenario's id (``meta.scenario_id``)."""
    trial: int
    """The trial index, from 0; every trial is its own row."""
    domain: str
    """The scenario's raw ``meta.domain`` (``""`` when the scenario could not be loaded)."""
    domain_name: str
    """The name of the domain pack that ran it (``""`` when none was bound)."""
    leaderboard_primary: str
    """The leaderboard column the scenario counts in (``leaderboard.primary``)."""
    label: str
    """The expected decision: ALLOW, ALLOW-CONDITIONAL, DENY or ESCALATE (``""`` when unknown)."""
    status: str
    """``completed`` (scored) or ``error`` (kept out of every rate); upstream also has ``validation_error``."""
    reward: float
    """1.0 when every Tier-1 check passed, else 0.0 (always 0.0 for an error row)."""
    all_passed: bool
    """Every Tier-1 check passed (always False for an error row)."""
    semantic_score: float | None
    """The share of judged (Tier-2) checks that passed; None when nothing was judged."""
    canonical_decision: str
    """The decision that counts (the last valid one), or ``NONE``."""
    decision_channel: str | None
    """Where the decision came from (``tool`` or ``json``); None when there was none."""
    decision_valid: bool
    """Whether exactly one valid decision was found."""
    decision_error: str | None
    """Why the decision is invalid (``MISSING_DECISION``, ``ASSESSMENT_ERROR``...), else None."""
    event_flags: EventFlags
    """The five event flags."""
    benchmark_version: NotRequired[str]
    """Upstream's: the benchmark version of the run (our results document carries it once, not per row)."""
    error: NotRequired[str | None]
    """What went wrong, in one line; None when nothing did."""
    seed: NotRequired[int | None]
    """The episode's seed (None when the episode never started)."""
    duration: NotRequired[float]
    """Wall seconds the episode took."""
    tool_calls: NotRequired[list[str]]
    """The names of the tools called, in order."""
    dimensions: NotRequired[dict[str, Dimension]]
    """The checks by dimension (``decision``, ``procedure``, ``outcomes``...); ``{}`` for an error row."""
    outcome_checks: NotRequired[list[CheckEntry]]
    """Every check, in scenario order (ours carry ``tier``, upstream's ``dimension``)."""


class ResultRow(ScenarioDetail):
    """One result row: upstream's keys (:class:`ScenarioDetail`) plus ours, all optional.

    Built by :func:`~pytest_pibench.results.rows.scenario_row` and
    :func:`~pytest_pibench.results.rows.error_row`; the plugin adds
    ``fingerprint``, ``nodeid`` and ``resume``; the runner adds ``usage``.
    """

    agent: NotRequired[str]
    """The agent's name (its ``--pibench-agent`` spec or the fixture's name for it)."""
    decision_error_detail: NotRequired[str | None]
    """Why the decision is invalid, in words (e.g. the error ``record_decision`` returned)."""
    failure_cause: NotRequired[str | None]
    """Whose failure ended it: ``agent`` (scored), or for an error row ``user_simulator``,
    ``infrastructure``, ``harness``, ``scenario``...; None when nothing failed."""
    termination_reason: NotRequired[str]
    """How the episode ended (``user_stop``, ``max_steps``, ``agent_error``, ``infra_error``, ``runtime_error``...)."""
    step_count: NotRequired[int]
    """How many participant turns ran."""
    error_detail: NotRequired[ErrorDetail | None]
    """The failure behind ``error`` (role, kind, message, traceback); None when nothing failed."""
    warnings: NotRequired[list[str]]
    """What went wrong without changing the outcome (e.g. a participant's ``stop()`` raising)."""
    limit_hit: NotRequired[LimitHit | None]
    """The tool-call or cost limit that ended the episode, else None."""
    transcript: NotRequired[Transcript]
    """Messages, trace and final state (left out with ``include_transcript=False``)."""
    truncated: NotRequired[bool]
    """True when something of the row was cut for storage (a string, a long list, deep nesting: see ``bounds``)."""
    sanitized: NotRequired[bool]
    """True when a value strict JSON or UTF-8 cannot carry was replaced (NaN by null, a lone surrogate by U+FFFD)."""
    usage: NotRequired[dict[str, UsageReport]]
    """LLM usage by role (``agent``, ``user``, ``judge``), only for participants that report it."""
    fingerprint: NotRequired[Fingerprint]
    """What decided the result, for ``--pibench-resume``."""
    nodeid: NotRequired[str]
    """The pytest node id of the scenario item."""
    resume: NotRequired[ResumeNote]
    """How ``--pibench-resume`` treated this row (only in a resumed run)."""
    extra: NotRequired[dict[str, Any]]
    """Fields added by ``pytest_pibench_row`` hook implementations, by name (JSON values)."""
    pressure_style: NotRequired[str]
    """The pressure style of a generated variant (``meta.variant.style``); absent for a hand-written scenario."""
    judge_votes: NotRequired[list[dict[str, Any]]]
    """With ``--pibench-judge-votes N`` > 1: each judge question and its N answers (judge reliability)."""
    variant_of: NotRequired[str]
    """The base scenario id of a generated variant; absent for a hand-written scenario."""
    trial_mode: NotRequired[str]
    """``sequential`` when the row's trials stopped once settled (``--pibench-trial-mode``); absent otherwise."""


class AgentValidity(TypedDict):
    """One agent's share of error rows."""

    rows: int
    """Its rows."""
    error_rows: int
    """Its rows whose ``status`` is not ``completed`` (failures outside the agent)."""
    error_rate: float
    """``error_rows / rows``."""


class Validity(TypedDict):
    """Whether a run's numbers may be published (``validity`` of the document, ``pibench_validity``)."""

    valid: bool
    """No problems."""
    complete: bool
    """Every planned item reported."""
    max_error_rate: float
    """The error budget it was judged by (``--pibench-max-error-rate``)."""
    agents: dict[str, AgentValidity]
    """Error rows by agent."""
    problems: list[str]
    """Why it is not valid, one line each (empty when valid)."""


class AgentResults(TypedDict):
    """One agent's block of the document."""

    metrics: Metrics
    """:func:`~pytest_pibench.results.metrics.compute_metrics` over its rows."""


class ResultsDocument(TypedDict, total=False):
    """A results file as read or written; a journal or a pytest-json-report file yields only some keys."""

    format: str
    """Always ``RESULTS_FORMAT`` (``pibench-results``): what makes a JSON file a pi-bench results file."""
    format_version: int
    """``RESULTS_FORMAT_VERSION`` of the writer."""
    pytest_pibench_version: str
    """The plugin version that wrote it."""
    benchmark_version: str
    """The benchmark version (scenario set and scoring) it ran."""
    created: str | None
    """When it was written (when the run started, for a journal)."""
    wall_time: float
    """Wall seconds of the whole run."""
    complete: bool
    """False for a partial run (interrupted, stopped early, still running)."""
    planned_items: int | None
    """How many scenario items were collected to run."""
    ended_by: str | None
    """Why a partial run did not finish; None for a complete one."""
    validity: Validity
    """Whether its numbers may be published."""
    settings: dict[str, Any]
    """The run's settings (``Settings.to_dict()``)."""
    agents: dict[str, AgentResults]
    """Metrics by agent, in command-line order."""
    rows: Required[list[ResultRow]]
    """Every row: agents in command-line order, then by scenario id and trial."""
    journal: str
    """The journal holding the rows of a run in progress (or read from)."""
    shard: dict[str, int]
    """``{"index": I, "count": N}`` when the run was shard I of N (``--pibench-shard``)."""
    sequential: dict[str, Any]
    """``--pibench-trial-mode sequential``: the stopping rule, each scenario's verdict, the trials saved
    (:func:`~pytest_pibench.results.sequential.sequential_summary`)."""
    gate: dict[str, Any]
    """The CI gate's verdict when the run had one (``--pibench-fail-under``, ``--pibench-baseline``,
    ``--pibench-min-pass``): verdict, exit code, lines, regressed scenarios
    (:func:`~pytest_pibench.plugin.gate_verdicts.gate_record`)."""
