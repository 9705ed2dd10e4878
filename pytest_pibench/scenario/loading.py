"""Reading scenario files: one clear error per bad file, discovery, JSON Schema export."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from pytest_pibench.checks.decision import DecisionEqualsCheck
from pytest_pibench.checks.registry import check_type_names
from pytest_pibench.checks.state import StateFieldCheck, field_path_problem
from pytest_pibench.checks.tool_roles import tool_consistency_problems
from pytest_pibench.paths import is_scenario_candidate
from pytest_pibench.scenario.models import SCHEMA_VERSION, Scenario
from pytest_pibench.scenario.strict_json import StrictJSONError, decode_strict

__all__ = [
    "ScenarioError",
    "discover_scenarios",
    "is_scenario_candidate",
    "json_schema",
    "load_scenario",
    "scenario_from_dict",
]

Problem = tuple[str, str]
"""(JSON path, message)"""


class ScenarioError(ValueError):
    """A scenario file that cannot be used. ``problems`` lists (JSON path, message)."""

    def __init__(self, source: str, problems: Sequence[Problem]) -> None:
        self.source = source
        self.problems = list(problems)
        lines = [f"{path}: {message}" if path else message for path, message in self.problems]
        if len(lines) == 1:
            text = f"{source}: {lines[0]}"
        else:
            text = f"{source}: {len(lines)} problems\n" + "\n".join(f"  {ln}" for ln in lines)
        super().__init__(text)


def _format_loc(loc: Sequence[int | str]) -> str:
    out = ""
    check_types = set(check_type_names())
    previous: int | str | None = None
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif isinstance(previous, int) and part in check_types:
            pass  # the discriminator tag pydantic inserts after a list index
        else:
            out += f".{part}" if out else str(part)
        previous = part
    return out


def _pydantic_problems(error: ValidationError) -> list[Problem]:
    problems: list[Problem] = []
    for item in error.errors(include_url=False):
        message = item["msg"]
        if item["type"] == "union_tag_invalid":
            expected = ", ".join(check_type_names())
            message = f"unknown check type {item['input'].get('type')!r}; expected one of {expected}"
        problems.append((_format_loc(item["loc"]), message))
    return problems


def scenario_from_dict(data: Any, *, source: str = "<scenario>") -> Scenario:
    """Validate a decoded scenario: the schema first, then upstream's consistency rules."""
    if not isinstance(data, dict):
        raise ScenarioError(source, [("", f"expected a JSON object (a scenario), found {_json_kind(data)}")])
    version = data.get("schema_version", SCHEMA_VERSION)
    if version != SCHEMA_VERSION:
        raise ScenarioError(
            source, [("schema_version", f"unsupported schema_version {version!r}; expected {SCHEMA_VERSION!r}")]
        )
    try:
        scenario = Scenario.model_validate(data)
    except ValidationError as exc:
        raise ScenarioError(source, _pydantic_problems(exc)) from None
    problems = consistency_problems(scenario)
    if problems:
        raise ScenarioError(source, problems)
    return scenario


def load_scenario(path: str | Path) -> Scenario:
    """Load and validate one scenario file.

    Raises:
        ScenarioError: naming the file and the JSON path of every bad field, e.g.
            ``scen.json: evaluation_criteria.policy_checks[3].tool_name: Field required``.
    """
    file = Path(path)
    data = _read_json(file)
    scenario = scenario_from_dict(data, source=str(file))
    scenario._source_path = file.resolve()
    return scenario


def _read_json(file: Path) -> Any:
    """The decoded file; a ScenarioError saying where it is not strict UTF-8 JSON (a UTF-8 BOM is allowed)."""
    try:
        raw = file.read_bytes()
    except OSError as exc:
        raise ScenarioError(str(file), [("", f"cannot read file: {exc.strerror or exc}")]) from None
    try:
        return decode_strict(raw)
    except StrictJSONError as exc:
        raise ScenarioError(str(file), exc.problems) from None


def _json_kind(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return "a number"
    return "null"


def consistency_problems(scenario: Scenario) -> list[Problem]:
    """Upstream's load-time rules (upstream-evaluation.md §2.11) beyond the schema."""
    problems: list[Problem] = []
    crit = scenario.evaluation_criteria
    basis = set(crit.reward_basis)
    checks = crit.policy_checks
    where = "evaluation_criteria"
    mode = getattr(scenario.meta, "observer_mode", None)
    if mode is not None and mode not in ("audit_only", "hard_gate"):
        problems.append(("meta.observer_mode", f"must be audit_only or hard_gate, got {mode!r}"))

    if "POLICY" in basis:
        if not checks:
            problems.append((f"{where}.policy_checks", "must not be empty when POLICY is in reward_basis"))
        decisions = [(i, c) for i, c in enumerate(checks) if isinstance(c, DecisionEqualsCheck)]
        if len(decisions) != 1:
            problems.append(
                (f"{where}.policy_checks", f"needs exactly one decision_equals check, found {len(decisions)}")
            )
        for i, check in decisions:
            if check.equals != scenario.label:
                problems.append(
                    (f"{where}.policy_checks[{i}].equals", f"{check.equals!r} differs from label {scenario.label!r}")
                )
        problems += _tool_consistency(checks, where)
    if "STATE_FIELD" in basis and not crit.state_field_checks:
        problems.append((f"{where}.state_field_checks", "must not be empty when STATE_FIELD is in reward_basis"))
    if "NL_JUDGE" in basis and not crit.nl_judge_checks:
        problems.append((f"{where}.nl_judge_checks", "must not be empty when NL_JUDGE is in reward_basis"))
    if "STATE_FIELD" in basis:
        seen: dict[str, Any] = {}
        for i, sf in enumerate(crit.state_field_checks):
            if not isinstance(sf, StateFieldCheck):
                continue
            path_problem = field_path_problem(sf.field_path)
            if path_problem:
                problems.append((f"{where}.state_field_checks[{i}].field_path", path_problem))
            if sf.field_path in seen and seen[sf.field_path] != sf.equals:
                problems.append(
                    (f"{where}.state_field_checks[{i}].equals", f"conflicts with another check on {sf.field_path!r}")
                )
            seen.setdefault(sf.field_path, sf.equals)
    if not checks and not crit.state_field_checks:
        problems.append((where, "needs at least one deterministic (Tier-1) check"))

    ref = scenario.reference_trajectory
    if ref is not None:
        for key in ("decision", "expected_decision"):
            value = getattr(ref, key)
            if value is not None and value != scenario.label:
                problems.append((f"reference_trajectory.{key}", f"{value!r} differs from label {scenario.label!r}"))
    return problems


def _tool_consistency(checks: Sequence[Any], where: str) -> list[Problem]:
    """The tool rules over the policy checks, from each check type's declared tool roles."""
    return [
        (f"{where}.policy_checks" + ("" if index is None else f"[{index}]"), message)
        for index, message in tool_consistency_problems(checks)
    ]


def discover_scenarios(root: str | Path) -> Iterator[Path]:
    """Scenario candidates under ``root`` (or ``root`` itself), sorted by path.

    Which ``*.json`` files count is :func:`is_scenario_candidate`, the rule
    pytest collection and ``pi`` use too: broken files are yielded (loading
    them says what is wrong), files that are clearly something else are not.
    """
    base = Path(root)
    if base.is_file():
        yield base
        return
    for path in sorted(base.rglob("*.json")):
        if path.is_file() and is_scenario_candidate(path, base):
            yield path


def json_schema() -> dict[str, Any]:
    """The JSON Schema of a scenario file, for editors (``$schema`` draft 2020-12)."""
    schema = Scenario.model_json_schema(by_alias=False)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "pi-bench scenario (pibench_scenario_v1)"
    return schema
