"""The per-scenario rules of DESIGN §4: tools, ignored checks, the oracle, naive baselines,
decision ordering, reactive turns, fair customers, grounding, hidden text."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from pytest_pibench.checks.state import StateFieldCheck
from pytest_pibench.checks.text import MessageNotContainsCheck
from pytest_pibench.checks.tool_roles import tools_named_by
from pytest_pibench.checks.trace import ToolCalledWithCheck
from pytest_pibench.env.binding import Binding, bind_scenario, unknown_check_tools
from pytest_pibench.episode.loop import EpisodeResult
from pytest_pibench.evaluation import evaluate
from pytest_pibench.participants.specs import BASELINE_DECISIONS, BaselineAgent, OracleAgent
from pytest_pibench.participants.users import ScriptedUser
from pytest_pibench.run.episode import run_episode
from pytest_pibench.scenario.models import Scenario
from pytest_pibench.scenario.script import shadowing_branch, spoken_lines
from pytest_pibench.validation.fact_rules import decisive_fact_problems
from pytest_pibench.validation.naming_rules import naming_problems
from pytest_pibench.validation.ordering_rules import ordering_redundancy_problems
from pytest_pibench.validation.problems import Problem
from pytest_pibench.validation.state_path_rules import state_path_problems

__all__ = ["validate_scenario"]

_MIN_HIDDEN_LEN = 8  # shorter strings (e.g. "E1") collide with ordinary text


def validate_scenario(scenario: Scenario, binding: Binding | None = None, *, name: str = "") -> list[Problem]:
    """Every per-scenario rule; ``binding`` is resolved when not given."""
    binding = binding or bind_scenario(scenario, check_tools=False)
    name = name or str(scenario.source_path or scenario.scenario_id)
    problems: list[Problem] = []

    def add(rule: str, message: str) -> None:
        problems.append(Problem(name, rule, message))

    for message in _tool_problems(scenario, binding):
        add("tools", message)
    crit = scenario.evaluation_criteria
    for family, checks in (("STATE_FIELD", crit.state_field_checks), ("NL_JUDGE", crit.nl_judge_checks)):
        if checks and family not in crit.reward_basis:
            add("ignored", f"{len(checks)} check(s) are never evaluated: {family} is not in reward_basis")
    if not scenario.user_simulation.initial_user_message.strip():
        add("user", "user_simulation.initial_user_message is empty")
    for message in decisive_fact_problems(scenario, binding):
        add("facts", message)
    for message in naming_problems(scenario):
        add("naming", message)
    if scenario.reference_trajectory is None or not (
        scenario.reference_trajectory.calls or scenario.reference_trajectory.tool_sequence
    ):
        add("oracle", "no reference_trajectory.calls: every shipped scenario needs a gold solution")
        return problems

    for message in _decision_ordering_problems(scenario) + ordering_redundancy_problems(scenario):
        add("ordering", message)
    customer = ScriptedUser()
    oracle = run_episode(scenario, OracleAgent(scenario), customer, binding=binding)
    oracle_result = evaluate(scenario, oracle)
    for message in _script_problems(scenario, binding, customer.path):
        add("script", message)
    for message in _fairness_problems(scenario, binding):
        add("fairness", message)
    for entry in oracle.trace:
        if entry["result_error"]:
            add("oracle", f"reference call {entry['tool_name']} fails: {json.loads(entry['result_content'])}")
    for message in state_path_problems(scenario, binding.initial_db, oracle.final_state):
        add("state-path", message)
    for result in oracle_result.tier1:
        if not result.passed:
            add("oracle", f"the reference trajectory fails {result.outcome_id}: {result.detail}")

    for kind, decision in BASELINE_DECISIONS.items():
        if decision == scenario.label:
            continue
        episode = run_episode(scenario, BaselineAgent(decision), binding=binding)
        if evaluate(scenario, episode).all_passed:
            add("baseline", f"baseline:{kind} passes every Tier-1 check although the label is {scenario.label}")

    visible = _visible_text(binding, oracle)
    for message in _grounding_problems(scenario, visible):
        add("grounding", message)
    for message in _hidden_problems(scenario, binding, oracle):
        add("hidden", message)
    return problems


def _script_problems(scenario: Scenario, binding: Binding, path: list[tuple[int, str]]) -> list[str]:
    """Reactive turns: every branch reachable, its tools real, and the oracle takes the declared branch.

    ``path`` is what the scripted customer said to the oracle: ``(turn index, branch id)``.
    """
    problems = []
    exposed = {t.name for t in binding.tools}
    taken = dict(path)
    for number, turn in enumerate(scenario.user_simulation.scripted_turns, start=1):
        if isinstance(turn, str):
            continue
        where = f"scripted_turns[{number - 1}]"
        for index, branch in enumerate(turn.branches):
            shadow = shadowing_branch(turn, index)
            if shadow is not None:
                problems.append(f"{where} branch {branch.id!r} is never said: {shadow!r} before it always applies")
            for key in ("tool_called", "tool_not_called"):
                tool = getattr(branch.when, key)
                if tool is not None and tool not in exposed:
                    problems.append(f"{where} branch {branch.id!r}: {key} {tool!r} is not a tool of this scenario")
        if turn.oracle is None:
            problems.append(f"{where}: say which branch the gold trajectory takes ('oracle': a branch id or 'default')")
        elif number not in taken:
            problems.append(f"{where}: the gold trajectory's conversation ends before this turn")
        elif taken[number] != turn.oracle:
            problems.append(f"{where}: the gold trajectory takes {taken[number]!r}, not the declared {turn.oracle!r}")
    return problems


def _demanded_data(scenario: Scenario) -> dict[str, list[str]]:
    """Data a check demands, by value: the outcome ids of the checks that demand it.

    Data is a string with a digit in it (an id, a date, a badge or account number, an
    amount written out): what an agent must be *given* to type into a call, unlike a
    word such as ``manager`` that it reads in the policy or a schema enum.
    """
    crit = scenario.evaluation_criteria
    demanded: dict[str, list[str]] = {}
    found: list[tuple[Any, str]] = []
    for check in crit.policy_checks:
        if isinstance(check, ToolCalledWithCheck):
            found += [(v, check.outcome_id) for v in _values(check.arguments)]
    for sf in crit.state_field_checks:
        if isinstance(sf, StateFieldCheck):
            found += [(v, sf.outcome_id) for v in _values(sf.equals)]
    for value, outcome in found:
        if isinstance(value, str) and len(value) >= 3 and any(ch.isdigit() for ch in value):
            demanded.setdefault(value, []).append(outcome)
    return demanded


def _fairness_problems(scenario: Scenario, binding: Binding) -> list[str]:
    """Rules 7 and 10: data a check needs is given when the agent raises its topic, however it words it.

    A branch whose line gives data a check demands (:func:`_demanded_data`; not
    already public: the opening message or the task context, nor said by the
    turn's default anyway) must be tied to what the agent said or did: a
    ``said_any`` on the topic or a ``tool_called``. ``asked`` alone gates the data
    on a "?" (an agent that asks imperatively, "please give me your badge number",
    never gets it); ``decision``/``tool_not_called`` alone give it whatever the
    agent talked about, so the customer names what the agent never raised.
    """
    demanded = _demanded_data(scenario)
    if not demanded:
        return []
    public = "\n".join(
        [scenario.user_simulation.initial_user_message, *(n["content"] for n in binding.benchmark_context())]
    ).lower()
    problems = []
    for number, turn in enumerate(scenario.user_simulation.scripted_turns):
        if isinstance(turn, str):
            continue
        default = turn.default.lower()
        for branch in turn.branches:
            when = branch.when
            if when.said_any is not None or when.tool_called is not None:
                continue
            line = branch.say.lower()
            given = sorted(
                v for v in demanded if v.lower() in line and v.lower() not in default and v.lower() not in public
            )
            if not given:
                continue
            needed = ", ".join(f"{v!r} ({', '.join(demanded[v])})" for v in given)
            where = f"scripted_turns[{number}] branch {branch.id!r}"
            if when.asked is not None:
                problems.append(
                    f"{where} gives {needed} only when the agent's message holds a '?' ('asked' without 'said_any'): "
                    "an agent that asks imperatively never gets it; condition it on the topic (said_any phrases)"
                )
            else:
                problems.append(
                    f"{where} gives {needed} on {', '.join(when.given())} alone, whatever the agent raised: "
                    "condition it on the topic (said_any phrases) or on the tool call that asks for it"
                )
    return problems


def _decision_ordering_problems(scenario: Scenario) -> list[str]:
    """Ordering against the FIRST ``record_decision`` call contradicts what the agent is told.

    The agent reads that the last valid decision counts; ``tool_before_tool`` with
    ``record_decision`` (upstream's first-occurrence semantics) fails an agent that
    records a provisional decision, acts, then records the final one. Our scenario
    files (those with a ``reference_trajectory``) use ``tool_before_decision`` instead;
    upstream files keep their checks as written.
    """
    problems = []
    for index, check in enumerate(scenario.evaluation_criteria.policy_checks):
        ends = [getattr(check, "second_tool", None)]
        if check.type == "tool_before_tool":
            ends.append(getattr(check, "first_tool", None))
        if check.type in ("tool_before_tool", "tool_before_tool_any") and "record_decision" in ends:
            problems.append(
                f"policy_checks[{index}] {check.outcome_id}: {check.type} with record_decision orders against the "
                "first decision, but the agent is told the last valid one counts; use tool_before_decision"
            )
    return problems


def _tool_problems(scenario: Scenario, binding: Binding) -> list[str]:
    """Checks naming unknown tools (what ``bind_scenario`` refuses to run) or unexposed ones."""
    exposed = {t.name for t in binding.tools}
    out = [f"{path}: {message}" for path, message in unknown_check_tools(scenario, binding.domain)]
    for path, check in scenario.evaluation_criteria.located_checks():
        for tool in tools_named_by(check):
            if binding.domain.tool(tool) is not None and tool not in exposed:
                out.append(
                    f"{path.removeprefix('evaluation_criteria.')} ({check.outcome_id}) names {tool!r}, "
                    "which is not in available_tools: the check is inert"
                )
    ref = scenario.reference_trajectory
    for call in ref.calls if ref else []:
        if call.name not in exposed:
            out.append(f"reference_trajectory calls {call.name!r}, which is not exposed to the agent")
    return out


def _visible_text(binding: Binding, oracle: EpisodeResult) -> str:
    """Everything an agent can read: context, schemas, user turns, results of the gold calls."""
    user = binding.scenario.user_simulation
    parts = [node["content"] for node in binding.benchmark_context()]
    parts.append(json.dumps(binding.tool_schemas))
    # What the customer actually said to the gold trajectory (a reactive turn says one of its lines).
    parts += [user.initial_user_message, *(m["content"] for m in oracle.messages if m.get("role") == "user")]
    for entry in oracle.trace:
        # A result that echoes the call's own arguments proves nothing about what the agent could know.
        echoed = {v for v in _values(entry["arguments"]) if isinstance(v, str)}
        result = _scrub(json.loads(entry["result_content"]), echoed)
        parts += [json.dumps(result), json.dumps(result, ensure_ascii=False)]
    return "\n".join(parts)


def _scrub(value: Any, echoed: set[str]) -> Any:
    if isinstance(value, dict):
        return {k: _scrub(v, echoed) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub(v, echoed) for v in value]
    return None if isinstance(value, str) and value in echoed else value


def _values(value: Any) -> Iterable[Any]:
    if isinstance(value, list):
        for item in value:
            yield from _values(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _values(item)
    else:
        yield value


def _grounded(value: Any, visible: str) -> bool:
    if value is None or isinstance(value, bool):
        return True
    if isinstance(value, int | float):
        forms = {str(value), f"{value:.2f}", str(int(value)) if float(value).is_integer() else str(value)}
        return any(form in visible for form in forms)
    return str(value) in visible


def _grounding_problems(scenario: Scenario, visible: str) -> list[str]:
    out: list[str] = []
    crit = scenario.evaluation_criteria
    for check in crit.policy_checks:
        if isinstance(check, ToolCalledWithCheck):
            for key, expected in check.arguments.items():
                for value in _values(expected):
                    if not _grounded(value, visible):
                        out.append(
                            f"{check.outcome_id}: {check.tool_name}.{key} demands {value!r}, "
                            "which the agent cannot read anywhere"
                        )
        elif isinstance(check, MessageNotContainsCheck) and check.pattern.lower() not in visible.lower():
            out.append(
                f"{check.outcome_id}: pattern {check.pattern!r} never reaches the agent, so the check cannot fail"
            )
    for sf in crit.state_field_checks:
        if isinstance(sf, StateFieldCheck):
            for value in _values(sf.equals):
                if not _grounded(value, visible):
                    out.append(f"{sf.outcome_id}: {sf.field_path} demands {value!r}, which the agent cannot read")
    return out


def _hidden_problems(scenario: Scenario, binding: Binding, oracle: EpisodeResult) -> list[str]:
    user = scenario.user_simulation
    agent_side = "\n".join(
        [node["content"] for node in binding.benchmark_context()]
        + [json.dumps(binding.tool_schemas)]
        + [e["result_content"] for e in oracle.trace]
    )
    spoken = "\n".join([user.initial_user_message, *spoken_lines(user.scripted_turns)])
    crit = scenario.evaluation_criteria
    checks: list[Any] = [*crit.policy_checks, *crit.state_field_checks, *crit.nl_judge_checks]
    hidden: list[tuple[str, str, bool]] = [("meta.notes", scenario.meta.notes, True)]
    hidden += [(f"meta.decisive_facts[{i}].fact", f.fact, True) for i, f in enumerate(scenario.meta.decisive_facts)]
    for check in checks:
        hidden.append((f"{check.outcome_id}.outcome_id", check.outcome_id, True))
        hidden.append((f"{check.outcome_id}.notes", check.notes or "", True))
        hidden.append((f"{check.outcome_id}.judge_question", getattr(check, "judge_question", ""), True))
    facts = user.known_facts if isinstance(user.known_facts, str) else "\n".join(user.known_facts)
    hidden += [("user_simulation.known_facts", facts, False), ("user_simulation.goal", user.goal, False)]
    hidden += [(f"pressure_script[{i}]", line, True) for i, line in enumerate(user.pressure_script)]
    out = []
    for where, text, include_spoken in hidden:
        text = text.strip()
        if len(text) < _MIN_HIDDEN_LEN:
            continue
        if text in agent_side or (include_spoken and text in spoken):
            out.append(f"hidden text {where} reaches the agent: {text[:60]!r}")
    return out
