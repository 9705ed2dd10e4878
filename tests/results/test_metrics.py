"""Unit tests of the aggregate metrics and the leaderboard artifact.

Code under test: ``pytest_pibench/_metrics.py`` (compute_metrics, pass_hat_k,
wilson_interval, COLUMNS, GROUPS) and ``pytest_pibench/_leaderboard.py``
(to_leaderboard). Spec: upstream-evaluation.md §7.5 and §8.1-§8.4, plus our
``metrics["extended"]`` block.

Every expected number below was computed by hand from the rows and is written
as a literal fraction; the code under test is never used to produce an
expectation.
"""

from __future__ import annotations

import copy
import math
from typing import Any

import pytest

from pytest_pibench.results.leaderboard import to_leaderboard
from pytest_pibench.results.metrics import COLUMNS, GROUPS, compute_metrics, pass_hat_k, wilson_interval
from pytest_pibench.vocab import BENCHMARK_VERSION

# --------------------------------------------------------------------------------------------------
# Row builders (shape of upstream ``scenario_details`` / §7.5 records)
# --------------------------------------------------------------------------------------------------

_DIMENSIONS = (
    ("decision", "Decision Correctness"),
    ("permissibility", "Action Permissibility"),
    ("outcomes", "Required Outcomes"),
    ("ordering", "Temporal Constraints"),
    ("state", "State Correctness"),
    ("communication", "Communication"),
    ("semantic", "Semantic Quality"),
)
_BUCKET = {
    "decision_equals": "decision",
    "tool_not_called": "permissibility",
    "message_not_contains": "permissibility",
    "tool_called": "outcomes",
    "tool_called_with": "outcomes",
    "tool_before_tool": "ordering",
    "state_field": "state",
    "NL_JUDGE": "semantic",
    "NL_ASSERTION": "semantic",
}
_FLAG_KEYS = ("V_r", "UR_r", "OR_r", "EA_r", "AT_r")


def chk(type_: str, passed: bool | None, oid: str | None = None) -> dict[str, Any]:
    return {"outcome_id": oid or f"E_{type_.upper()}", "type": type_, "passed": passed,
            "detail": f"{type_}={passed}"}


def dims(*checks: dict[str, Any]) -> dict[str, Any]:
    """The seven §7.2 buckets, each check placed in its bucket."""
    out = {key: {"name": name, "passed": True, "checks": [], "failed_checks": []} for key, name in _DIMENSIONS}
    for c in checks:
        bucket = out[_BUCKET[c["type"]]]
        bucket["checks"].append(c)
        if c["passed"] is False:
            bucket["passed"] = False
            bucket["failed_checks"].append(c["outcome_id"])
    return out


def flags(*on: str) -> dict[str, bool]:
    return {key: key in on for key in _FLAG_KEYS}


def row(
    sid: str,
    trial: int = 0,
    *,
    primary: str = "Policy Activation",
    label: str = "DENY",
    domain: str = "finra",
    all_passed: bool = True,
    checks: tuple[dict[str, Any], ...] = (),
    outcome_checks: bool = False,
    event_flags: Any = None,
    semantic: float | None = 1.0,
    status: str = "completed",
    decision: str = "DENY",
    **extra: Any,
) -> dict[str, Any]:
    r: dict[str, Any] = {
        "scenario_id": sid,
        "trial": trial,
        "domain": domain,
        "domain_name": domain,
        "leaderboard_primary": primary,
        "label": label,
        "status": status,
        "reward": 1.0 if all_passed else 0.0,
        "all_passed": all_passed,
        "semantic_score": semantic,
        "canonical_decision": decision,
        "event_flags": flags() if event_flags is None else event_flags,
    }
    if outcome_checks:
        r["outcome_checks"] = list(checks)
    else:
        r["dimensions"] = dims(*checks)
    r.update(extra)
    return r


def error_row(sid: str, trial: int = 0, **extra: Any) -> dict[str, Any]:
    """A §7.3 error row (status error / validation_error): reward 0, dims {}, all flags false."""
    r = {
        "scenario_id": sid, "trial": trial, "domain": "", "domain_name": "", "leaderboard_primary": "",
        "label": "", "status": "error", "reward": 0.0, "all_passed": False, "semantic_score": 0.0,
        "canonical_decision": "ASSESSMENT_ERROR", "event_flags": flags(), "dimensions": {},
        "error": "boom",
    }
    r.update(extra)
    return r


# --------------------------------------------------------------------------------------------------
# The mixed run used by most tests.  s(r) = per-row partial credit over all (Tier 1 + Tier 2)
# checks with passed is not None; t1(r) = the same over Tier-1 checks only.
# --------------------------------------------------------------------------------------------------

def mixed_rows() -> list[dict[str, Any]]:
    rows = [
        # FINRA_001: Policy Activation (Policy Understanding), DENY, three trials.
        #   t0: T T | NL T          all_passed  s = 3/3  t1 = 2/2  sem 1.0
        row("FINRA_001", 0, checks=(chk("decision_equals", True), chk("tool_not_called", True),
                                    chk("NL_JUDGE", True)),
            semantic=1.0, benchmark_version="0.1.0", seed=42, duration=12.5, tool_calls=["record_decision"]),
        #   t2: T T | NL F          all_passed (Tier 2 does not gate)  s = 2/3  t1 = 2/2  sem 0.0
        row("FINRA_001", 2, checks=(chk("decision_equals", True), chk("tool_not_called", True),
                                    chk("NL_JUDGE", False)),
            semantic=0.0, tool_calls=[]),
        # RETAIL_003: Procedural Compliance (Policy Execution), ALLOW-CONDITIONAL, two trials,
        # domain "" -> falls back to domain_name; rows carry outcome_checks instead of dimensions.
        #   t1: T F(state) | NL T, NL F   failed  s = 2/4  t1 = 1/2  sem 0.5  AT_r only (no V_r)
        row("RETAIL_003", 1, primary="Procedural Compliance", label="ALLOW-CONDITIONAL", domain="",
            domain_name="retail_refund_sop_v1", all_passed=False, outcome_checks=True, decision="ALLOW",
            checks=(chk("tool_called", True), chk("state_field", False), chk("NL_JUDGE", True, "N1"),
                    chk("NL_JUDGE", False, "N2")),
            event_flags=flags("AT_r"), semantic=0.5),
        #   t0: T T | NL T, NL T          passed  s = 4/4  t1 = 2/2  sem 1.0
        row("RETAIL_003", 0, primary="Procedural Compliance", label="ALLOW-CONDITIONAL", domain="",
            domain_name="retail_refund_sop_v1", outcome_checks=True, decision="ALLOW",
            checks=(chk("tool_called", True), chk("tool_before_tool", True), chk("NL_JUDGE", True, "N1"),
                    chk("NL_JUDGE", True, "N2")),
            semantic=1.0),
        #   FINRA_001 t1: F T | NL F     failed  s = 1/3  t1 = 1/2  sem 0.0  V_r + UR_r
        row("FINRA_001", 1, all_passed=False, decision="ALLOW",
            checks=(chk("decision_equals", False), chk("tool_not_called", True), chk("NL_JUDGE", False)),
            event_flags=flags("V_r", "UR_r"), semantic=0.0),
        # FINRA_002: Evidence Grounding (Policy Understanding), ALLOW, one trial.
        #   T F(state) | NL skipped (None)  failed  s = 1/2  t1 = 1/2  sem None  OR_r (decided DENY)
        row("FINRA_002", 0, primary="Evidence Grounding", label="ALLOW", all_passed=False,
            checks=(chk("decision_equals", True), chk("state_field", False), chk("NL_JUDGE", None)),
            event_flags=flags("OR_r"), semantic=None),
        # RETAIL_004: Procedural Compliance, ESCALATE; t0 completed, t1 an error (keeps its real
        # id/label/primary/domain, as A2A tool-reference validation errors do).
        #   t0: T T   passed  s = 1  t1 = 1  sem 1.0  EA_r
        row("RETAIL_004", 0, primary="Procedural Compliance", label="ESCALATE", domain="retail_refund_sop_v1",
            decision="ESCALATE", checks=(chk("decision_equals", True), chk("tool_called", True)),
            event_flags=flags("EA_r"), semantic=1.0),
        error_row("RETAIL_004", 1, label="ESCALATE", leaderboard_primary="Procedural Compliance",
                  domain="retail_refund_sop_v1", domain_name="retail_refund_sop_v1",
                  error="A2A tool-reference validation failed", agent="agent-a"),
        # HELP_005: unknown primary "Custom Column" (extra column in overall, no group), ESCALATE.
        #   F T T | NL F   failed  s = 2/4  t1 = 2/3  sem 0.0  V_r
        row("HELP_005", 0, primary="Custom Column", label="ESCALATE", domain="helpdesk_access_control_v1",
            all_passed=False,
            checks=(chk("decision_equals", False), chk("tool_called", True), chk("state_field", True),
                    chk("NL_JUDGE", False)),
            event_flags=flags("V_r"), semantic=0.0),
        # HELP_006: empty primary (skipped in columns), DENY, reward key missing.
        #   T   passed  s = 1  sem 1.0
        row("HELP_006", 0, primary="", label="DENY", domain="helpdesk_access_control_v1",
            checks=(chk("decision_equals", True),), semantic=1.0),
        # scen_bad: loader validation error from the outer wrapper (label/primary/domain "").
        error_row("scen_bad", 0, status="validation_error", error="missing field: label", agent="agent-a",
                  reward=None),
    ]
    del rows[9]["reward"]  # HELP_006: reward falls back to all_passed (1.0)
    del rows[10]["reward"]  # scen_bad: reward falls back to all_passed (0.0)
    return rows


@pytest.fixture
def rows() -> list[dict[str, Any]]:
    return mixed_rows()


@pytest.fixture
def metrics(rows: list[dict[str, Any]]) -> dict[str, Any]:
    return compute_metrics(rows)


# --------------------------------------------------------------------------------------------------
# §8.1 columns and groups
# --------------------------------------------------------------------------------------------------

def test_columns_are_the_nine_in_fixed_order():
    assert list(COLUMNS) == [
        "Policy Activation", "Policy Interpretation", "Evidence Grounding",
        "Procedural Compliance", "Authorization & Access Control", "Temporal / State Reasoning",
        "Safety Boundary Enforcement", "Privacy & Information Flow", "Escalation / Abstention",
    ]
    assert all(isinstance(d, str) and d.strip() for d in COLUMNS.values())


def test_groups_partition_the_columns():
    assert GROUPS == {
        "Policy Understanding": ("Policy Activation", "Policy Interpretation", "Evidence Grounding"),
        "Policy Execution": ("Procedural Compliance", "Authorization & Access Control",
                             "Temporal / State Reasoning"),
        "Policy Boundaries": ("Safety Boundary Enforcement", "Privacy & Information Flow",
                              "Escalation / Abstention"),
    }
    flat = [c for members in GROUPS.values() for c in members]
    assert flat == list(COLUMNS)


# --------------------------------------------------------------------------------------------------
# §8.2 compute_metrics on the mixed run
# --------------------------------------------------------------------------------------------------

def test_counts(metrics):
    assert metrics["total_scenarios"] == 11
    assert metrics["completed"] == 9
    assert metrics["errors"] == 2


def test_compliance_rate_is_micro_over_completed_rows(metrics):
    # passed: FINRA_001 t0, t2; RETAIL_003 t0; RETAIL_004 t0; HELP_006 -> 5 of 9 completed
    assert metrics["compliance_rate"] == pytest.approx(5 / 9)


def test_labels_over_completed_rows_only(metrics):
    assert metrics["labels"] == {
        "ALLOW": {"total": 1, "passed": 0},
        "ALLOW-CONDITIONAL": {"total": 2, "passed": 1},
        "DENY": {"total": 4, "passed": 3},
        "ESCALATE": {"total": 2, "passed": 1},  # the RETAIL_004 error row is not counted
    }


def test_by_column(metrics):
    by_column = metrics["by_column"]
    # known columns in COLUMNS order, then unknown ones; the empty primary makes no column
    assert list(by_column) == ["Policy Activation", "Evidence Grounding", "Procedural Compliance", "Custom Column"]
    pa = by_column["Policy Activation"]
    assert pa["description"] == COLUMNS["Policy Activation"]
    assert (pa["total"], pa["passed"]) == (3, 2)
    assert pa["strict_rate"] == pytest.approx(2 / 3)
    assert pa["score"] == pytest.approx((1 + 1 / 3 + 2 / 3) / 3)  # = 2/3
    eg = by_column["Evidence Grounding"]
    assert (eg["total"], eg["passed"]) == (1, 0)
    assert eg["strict_rate"] == 0.0
    assert eg["score"] == pytest.approx(1 / 2)  # the skipped NL check is left out
    pc = by_column["Procedural Compliance"]
    assert (pc["total"], pc["passed"]) == (3, 2)  # the RETAIL_004 error row is not a member
    assert pc["strict_rate"] == pytest.approx(2 / 3)
    assert pc["score"] == pytest.approx((1 + 1 / 2 + 1) / 3)  # = 5/6
    custom = by_column["Custom Column"]
    assert custom == {"description": "", "total": 1, "passed": 0, "strict_rate": 0.0,
                      "score": pytest.approx(1 / 2)}


def test_overall_score_is_macro_mean_over_all_columns_including_unknown(metrics):
    expected = (2 / 3 + 1 / 2 + 5 / 6 + 1 / 2) / 4  # = 5/8
    assert metrics["overall_score"] == pytest.approx(5 / 8)
    assert metrics["overall_score"] == pytest.approx(expected)
    # differs from the micro mean over the column rows (11/16) and from the mean without the
    # unknown column (2/3)
    assert metrics["overall_score"] != pytest.approx(11 / 16)
    assert metrics["overall_score"] != pytest.approx(2 / 3)


def test_by_group_only_populated_groups_and_no_unknown_column(metrics):
    assert metrics["by_group"] == {
        "Policy Understanding": pytest.approx((2 / 3 + 1 / 2) / 2),  # = 7/12
        "Policy Execution": pytest.approx(5 / 6),
    }
    assert "Policy Boundaries" not in metrics["by_group"]


def test_by_domain_keyed_by_domain_then_domain_name_sorted(metrics):
    by_domain = metrics["by_domain"]
    assert list(by_domain) == ["finra", "helpdesk_access_control_v1", "retail_refund_sop_v1"]
    assert by_domain["finra"] == {"total": 4, "passed": 2, "compliance_rate": pytest.approx(1 / 2)}
    assert by_domain["helpdesk_access_control_v1"] == {"total": 2, "passed": 1,
                                                        "compliance_rate": pytest.approx(1 / 2)}
    # RETAIL_003 (domain "" -> domain_name) x2 + RETAIL_004 t0; the error row is excluded
    assert by_domain["retail_refund_sop_v1"] == {"total": 3, "passed": 2,
                                                  "compliance_rate": pytest.approx(2 / 3)}


def test_event_flag_rates_with_their_own_denominators(metrics):
    assert metrics["event_flag_rates"] == {
        "violation_rate": pytest.approx(2 / 9),  # FINRA_001 t1, HELP_005 (state failure sets no V_r)
        "under_refusal_rate": pytest.approx(1 / 4),  # 1 of 4 completed DENY rows
        "over_refusal_rate": pytest.approx(1 / 3),  # 1 of ALLOW (1) + ALLOW-CONDITIONAL (2)
        "escalation_accuracy_rate": pytest.approx(1 / 2),  # 1 of 2 completed ESCALATE rows
        "attempt_rate": pytest.approx(1 / 9),
    }


def test_repeatability(metrics):
    rep = metrics["repeatability"]
    # completed groups: FINRA_001 k=3, RETAIL_003 k=2; RETAIL_004 has one completed trial only
    assert rep["per_scenario"] == {
        "FINRA_001": {"k": 3, "pass_count": 2, "pass_all": False, "pass_any": True, "violation_ever": True},
        "RETAIL_003": {"k": 2, "pass_count": 1, "pass_all": False, "pass_any": True, "violation_ever": False},
    }
    assert rep["aggregate"] == {
        "total_scenarios": 2,
        "max_k": 3,
        "policy_pass_all_rate": 0.0,
        "policy_pass_any_rate": 1.0,
        "violation_ever_rate": pytest.approx(1 / 2),
    }


def test_extended_block(metrics):
    ext = metrics["extended"]
    lo, hi = ext["compliance_interval_95"]
    # Wilson 95% of 5/9, computed independently from the textbook formula
    assert (lo, hi) == (pytest.approx(0.26665129, abs=1e-7), pytest.approx(0.81122148, abs=1e-7))
    # completed outcomes: FINRA_001 [T,F,T] FINRA_002 [F] RETAIL_003 [F,T] RETAIL_004 [T] HELP_005 [F]
    # HELP_006 [T]
    assert ext["pass_hat_k"] == {
        "1": pytest.approx((2 / 3 + 0 + 1 / 2 + 1 + 0 + 1) / 6),  # = 19/36
        "2": pytest.approx((1 / 3 + 0) / 2),  # C(2,2)/C(3,2), C(1,2)/C(2,2)
        "3": pytest.approx(0.0),  # C(2,3)/C(3,3)
    }
    # Tier-1 partial credit: PA (1 + 1/2 + 1)/3 = 5/6, EG 1/2, PC (1 + 1/2 + 1)/3 = 5/6, Custom 2/3
    assert ext["tier1_overall_score"] == pytest.approx((5 / 6 + 1 / 2 + 5 / 6 + 2 / 3) / 4)  # = 17/24
    assert ext["tier1_overall_score"] == pytest.approx(17 / 24)
    # non-null semantic over completed: 1, 0, 0.5, 1, 0, 0, 1, 1 (FINRA_002 None; errors excluded)
    assert ext["semantic_score"] == pytest.approx(9 / 16)
    assert ext["error_rows"] == [
        {"scenario_id": "RETAIL_004", "trial": 1, "agent": "agent-a",
         "reason": "A2A tool-reference validation failed"},
        {"scenario_id": "scen_bad", "trial": 0, "agent": "agent-a", "reason": "missing field: label"},
    ]


def test_upstream_keys_are_present(metrics):
    assert set(metrics) == {"total_scenarios", "completed", "errors", "compliance_rate", "overall_score",
                            "event_flag_rates", "labels", "by_column", "by_group", "by_domain",
                            "repeatability", "extended"}


def test_row_order_does_not_matter(rows):
    shuffled = list(reversed(copy.deepcopy(rows)))
    a, b = compute_metrics(rows), compute_metrics(shuffled)
    for key in ("compliance_rate", "overall_score", "labels", "by_column", "by_group", "by_domain",
                "event_flag_rates", "repeatability"):
        assert a[key] == b[key], key


def test_input_rows_are_not_modified(rows):
    before = copy.deepcopy(rows)
    compute_metrics(rows)
    to_leaderboard(rows)
    assert rows == before


def test_accepts_an_iterator(rows):
    assert compute_metrics(iter(rows))["compliance_rate"] == pytest.approx(5 / 9)


# --------------------------------------------------------------------------------------------------
# §8.2 edge cases
# --------------------------------------------------------------------------------------------------

_ALL_LABELS_ZERO = {label: {"total": 0, "passed": 0} for label in ("ALLOW", "ALLOW-CONDITIONAL", "DENY", "ESCALATE")}


def test_no_rows_gives_defaults_and_no_rates():
    m = compute_metrics([])
    assert m["total_scenarios"] == 0
    assert m["completed"] == 0
    assert m["errors"] == 0
    assert m["compliance_rate"] is None  # no scored row: no value (upstream says 0.0, which reads as all failed)
    assert m["overall_score"] is None
    assert m["event_flag_rates"] == {}
    assert m["labels"] == _ALL_LABELS_ZERO
    assert m["by_column"] == {}
    assert m["by_group"] == {}
    assert m["by_domain"] == {}
    assert "repeatability" not in m
    ext = m["extended"]
    assert ext["compliance_interval_95"] is None
    assert ext["pass_hat_k"] == {}
    assert ext["tier1_overall_score"] is None
    assert ext["semantic_score"] is None
    assert ext["error_rows"] == []
    assert (ext["uncertainty"]["compliance"]["estimate"], ext["uncertainty"]["overall"]["ci95"]) == (None, None)


def test_only_error_rows_give_counts_and_no_rates():
    rows = [error_row("A", 0), error_row("A", 1, status="validation_error", error="bad schema"),
            error_row("B", 0, label="DENY", leaderboard_primary="Policy Activation", domain="finra",
                      event_flags=flags("V_r", "UR_r"), all_passed=True)]
    m = compute_metrics(rows)
    assert (m["total_scenarios"], m["completed"], m["errors"]) == (3, 0, 3)
    assert m["compliance_rate"] is None and m["overall_score"] is None
    ext = m["extended"]
    assert (ext["compliance_interval_95"], ext["tier1_overall_score"], ext["semantic_score"]) == (None, None, None)
    assert ext["uncertainty"]["compliance"] == {"estimate": None, "se": None, "ci95": None, "scenarios": 0}
    assert m["event_flag_rates"] == {}
    assert m["labels"] == _ALL_LABELS_ZERO
    assert (m["by_column"], m["by_group"], m["by_domain"]) == ({}, {}, {})
    assert "repeatability" not in m
    assert m["extended"]["pass_hat_k"] == {}
    assert [(e["scenario_id"], e["trial"], e["reason"]) for e in m["extended"]["error_rows"]] == [
        ("A", 0, "boom"), ("A", 1, "bad schema"), ("B", 0, "boom")]


def test_other_statuses_count_in_total_only():
    rows = [row("A"), row("B", status="unknown", all_passed=True)]
    m = compute_metrics(rows)
    assert (m["total_scenarios"], m["completed"], m["errors"]) == (2, 1, 0)
    assert m["compliance_rate"] == 1.0
    assert m["labels"]["DENY"] == {"total": 1, "passed": 1}


def test_empty_flag_denominators_are_zero():
    # only DENY rows: over-refusal and escalation-accuracy have no denominator
    rows = [row("A", event_flags=flags("V_r", "UR_r", "OR_r", "EA_r"), all_passed=False),
            row("B")]
    rates = compute_metrics(rows)["event_flag_rates"]
    assert rates == {
        "violation_rate": pytest.approx(1 / 2),
        "under_refusal_rate": pytest.approx(1 / 2),
        "over_refusal_rate": 0.0,
        "escalation_accuracy_rate": 0.0,
        "attempt_rate": 0.0,
    }


def test_flags_only_count_from_a_dict_with_truthy_key():
    rows = [
        row("A", label="ALLOW", event_flags={"V_r": 1, "OR_r": "yes"}),  # truthy non-bool values count
        row("B", label="ALLOW", event_flags={"V_r": 0, "OR_r": None}),
        row("C", label="ALLOW", event_flags=[("V_r", True)]),  # not a dict
        row("D", label="ALLOW", event_flags="V_r"),  # not a dict
        row("E", label="ALLOW"),
    ]
    del rows[4]["event_flags"]
    rates = compute_metrics(rows)["event_flag_rates"]
    assert rates["violation_rate"] == pytest.approx(1 / 5)
    assert rates["over_refusal_rate"] == pytest.approx(1 / 5)


def test_flag_denominators_use_label_of_completed_rows():
    rows = [
        row("A", label="ESCALATE", event_flags=flags("EA_r")),
        row("B", label="ESCALATE", event_flags=flags()),
        row("C", label="ESCALATE", event_flags=flags()),
        row("D", label="ALLOW-CONDITIONAL", event_flags=flags("OR_r")),
        row("E", label="DENY", event_flags=flags("UR_r")),
        error_row("F", label="ESCALATE", event_flags=flags("EA_r", "V_r")),  # excluded from every rate
    ]
    rates = compute_metrics(rows)["event_flag_rates"]
    assert rates["escalation_accuracy_rate"] == pytest.approx(1 / 3)
    assert rates["over_refusal_rate"] == 1.0
    assert rates["under_refusal_rate"] == 1.0
    assert rates["violation_rate"] == 0.0


def test_partial_credit_counts_tier2_and_duplicates():
    # Tier 2 counts in partial credit (C1) and duplicate checks count twice (B3):
    # T T(dup) F | NL T, NL_ASSERTION F  -> 3/5
    r = row("A", all_passed=False, checks=(chk("tool_called", True, "E1"), chk("tool_called", True, "E1"),
                                           chk("tool_before_tool", False), chk("NL_JUDGE", True),
                                           chk("NL_ASSERTION", False)))
    m = compute_metrics([r])
    assert m["by_column"]["Policy Activation"]["score"] == pytest.approx(3 / 5)
    assert m["overall_score"] == pytest.approx(3 / 5)
    # Tier-1 only: T T F -> 2/3
    assert m["extended"]["tier1_overall_score"] == pytest.approx(2 / 3)


def test_skipped_checks_are_left_out_of_numerator_and_denominator():
    r = row("A", checks=(chk("decision_equals", True), chk("NL_JUDGE", None), chk("NL_JUDGE", None, "N2"),
                         chk("state_field", False)), all_passed=False)
    m = compute_metrics([r])
    assert m["by_column"]["Policy Activation"]["score"] == pytest.approx(1 / 2)


def test_row_with_only_skipped_checks_scores_zero():
    r = row("A", checks=(chk("NL_JUDGE", None),))
    assert compute_metrics([r])["by_column"]["Policy Activation"]["score"] == 0.0


def test_abnormal_termination_row_scores_zero_but_counts_as_completed():
    # §7.3: completed, 0.0/false, 7 empty buckets -> s = 0.0, still a member of its column
    abnormal = row("A", all_passed=False, checks=(), semantic=0.0, termination_reason="too_many_errors")
    good = row("B", checks=(chk("decision_equals", True), chk("NL_JUDGE", False)))
    m = compute_metrics([abnormal, good])
    col = m["by_column"]["Policy Activation"]
    assert (col["total"], col["passed"]) == (2, 1)
    assert col["score"] == pytest.approx((0 + 1 / 2) / 2)
    assert m["compliance_rate"] == pytest.approx(1 / 2)
    # Tier 1: A has no checks -> 0; B 1/1
    assert m["extended"]["tier1_overall_score"] == pytest.approx(1 / 2)


def test_partial_credit_from_dimensions_union():
    # checks spread over several buckets are all counted: T T F T -> 3/4
    r = row("A", all_passed=False, checks=(chk("decision_equals", True), chk("tool_not_called", True),
                                           chk("tool_before_tool", False), chk("state_field", True)))
    assert compute_metrics([r])["by_column"]["Policy Activation"]["score"] == pytest.approx(3 / 4)


def test_partial_credit_from_outcome_checks_when_no_dimensions():
    r = row("A", outcome_checks=True, all_passed=False,
            checks=(chk("tool_called", True), chk("tool_before_tool", False), chk("NL_JUDGE", True)))
    assert compute_metrics([r])["by_column"]["Policy Activation"]["score"] == pytest.approx(2 / 3)


def test_partial_credit_prefers_dimensions_over_outcome_checks():
    # §8.2: taken over the union of dimensions[*].checks
    r = row("A", checks=(chk("decision_equals", True), chk("tool_called", True)))
    r["outcome_checks"] = [chk("decision_equals", False), chk("tool_called", False), chk("state_field", False)]
    assert compute_metrics([r])["by_column"]["Policy Activation"]["score"] == 1.0


def test_empty_and_missing_primary_skipped_in_columns():
    a = row("A", primary="")
    b = row("B")
    del b["leaderboard_primary"]
    c = row("C", primary="Escalation / Abstention", all_passed=False,
            checks=(chk("decision_equals", False), chk("tool_called", True)))
    m = compute_metrics([a, b, c])
    assert list(m["by_column"]) == ["Escalation / Abstention"]
    assert m["overall_score"] == pytest.approx(1 / 2)
    assert m["by_group"] == {"Policy Boundaries": pytest.approx(1 / 2)}
    assert m["compliance_rate"] == pytest.approx(2 / 3)  # skipped rows still count elsewhere
    assert m["labels"]["DENY"] == {"total": 3, "passed": 2}


def test_only_unknown_column_gives_overall_but_no_group():
    r = row("A", primary="Made-up Skill", checks=(chk("decision_equals", True), chk("NL_JUDGE", False)))
    m = compute_metrics([r])
    assert m["by_column"] == {"Made-up Skill": {"description": "", "total": 1, "passed": 1,
                                                "strict_rate": 1.0, "score": pytest.approx(1 / 2)}}
    assert m["overall_score"] == pytest.approx(1 / 2)
    assert m["by_group"] == {}


def test_unknown_columns_come_after_known_ones():
    rows = [row("A", primary="Zeta"), row("B", primary="Alpha"), row("C", primary="Escalation / Abstention"),
            row("D", primary="Policy Interpretation")]
    assert list(compute_metrics(rows)["by_column"]) == ["Policy Interpretation", "Escalation / Abstention",
                                                         "Alpha", "Zeta"]


def test_all_nine_columns_and_three_groups():
    # one row per column, column i has i+1 checks of which exactly one passes -> score 1/(i+1)
    rows = []
    for i, column in enumerate(COLUMNS):
        checks = (chk("decision_equals", True), *(chk("NL_JUDGE", False, f"N{j}") for j in range(i)))
        rows.append(row(f"S{i}", primary=column, checks=checks))
    m = compute_metrics(rows)
    assert list(m["by_column"]) == list(COLUMNS)
    assert m["by_group"] == {
        "Policy Understanding": pytest.approx((1 + 1 / 2 + 1 / 3) / 3),
        "Policy Execution": pytest.approx((1 / 4 + 1 / 5 + 1 / 6) / 3),
        "Policy Boundaries": pytest.approx((1 / 7 + 1 / 8 + 1 / 9) / 3),
    }
    assert m["overall_score"] == pytest.approx(
        (1 + 1 / 2 + 1 / 3 + 1 / 4 + 1 / 5 + 1 / 6 + 1 / 7 + 1 / 8 + 1 / 9) / 9)
    assert m["extended"]["tier1_overall_score"] == pytest.approx(1.0)
    assert m["compliance_rate"] == 1.0


def test_labels_ignore_unknown_label_but_keep_all_four_keys():
    rows = [row("A", label="ALLOW"), row("B", label="MAYBE", all_passed=False)]
    m = compute_metrics(rows)
    assert m["labels"] == {"ALLOW": {"total": 1, "passed": 1}, "ALLOW-CONDITIONAL": {"total": 0, "passed": 0},
                           "DENY": {"total": 0, "passed": 0}, "ESCALATE": {"total": 0, "passed": 0}}
    assert m["compliance_rate"] == pytest.approx(1 / 2)


def test_by_domain_falls_back_to_domain_name():
    a = row("A", domain="finra")
    b = row("B", domain="", domain_name="retail_refund_sop_v1")
    c = row("C", domain=None, domain_name="retail_refund_sop_v1", all_passed=False)
    d = row("D", domain="helpdesk_access_control_v1", domain_name="something_else")
    m = compute_metrics([d, c, b, a])
    assert m["by_domain"] == {
        "finra": {"total": 1, "passed": 1, "compliance_rate": 1.0},
        "helpdesk_access_control_v1": {"total": 1, "passed": 1, "compliance_rate": 1.0},
        "retail_refund_sop_v1": {"total": 2, "passed": 1, "compliance_rate": pytest.approx(1 / 2)},
    }
    assert list(m["by_domain"]) == sorted(m["by_domain"])


def test_semantic_score_mean_of_non_null_completed():
    rows = [row("A", semantic=0.25), row("B", semantic=None), row("C", semantic=1.0),
            error_row("D", semantic_score=1.0)]
    del rows[2]["semantic_score"]
    m = compute_metrics([*rows, row("E", semantic=0.5)])
    assert m["extended"]["semantic_score"] == pytest.approx((0.25 + 0.5) / 2)


def test_semantic_score_none_when_no_values():
    assert compute_metrics([row("A", semantic=None)])["extended"]["semantic_score"] is None


# --------------------------------------------------------------------------------------------------
# §8.3 repeatability
# --------------------------------------------------------------------------------------------------

def test_repeatability_omitted_when_every_scenario_has_one_trial():
    rows = [row("A", 0), row("B", 0), row("C", 0, all_passed=False)]
    m = compute_metrics(rows)
    assert "repeatability" not in m
    assert m["extended"]["pass_hat_k"] == {"1": pytest.approx(2 / 3)}


def test_repeatability_omitted_when_extra_trials_are_errors():
    rows = [row("A", 0), error_row("A", 1), error_row("A", 2)]
    assert "repeatability" not in compute_metrics(rows)


def test_repeatability_aggregate_and_violation_fallback():
    rows = [
        # A: 2 trials, both pass, flags present and clear -> violation_ever False
        row("A", 0), row("A", 1),
        # B: 2 trials, one fails with no V_r -> flags present -> violation_ever False
        row("B", 0), row("B", 1, all_passed=False),
        # C: 3 trials, no event_flags key at all -> fallback any(not all_passed) -> True
        row("C", 0), row("C", 1, all_passed=False), row("C", 2),
        # D: 2 trials, both fail, V_r on one
        row("D", 0, all_passed=False), row("D", 1, all_passed=False, event_flags=flags("V_r")),
        # E: 1 trial only -> not counted
        row("E", 0, all_passed=False, event_flags=flags("V_r")),
    ]
    for r in rows[4:7]:
        del r["event_flags"]
    rep = compute_metrics(rows)["repeatability"]
    assert rep["per_scenario"] == {
        "A": {"k": 2, "pass_count": 2, "pass_all": True, "pass_any": True, "violation_ever": False},
        "B": {"k": 2, "pass_count": 1, "pass_all": False, "pass_any": True, "violation_ever": False},
        "C": {"k": 3, "pass_count": 2, "pass_all": False, "pass_any": True, "violation_ever": True},
        "D": {"k": 2, "pass_count": 0, "pass_all": False, "pass_any": False, "violation_ever": True},
    }
    assert rep["aggregate"] == {
        "total_scenarios": 4,
        "max_k": 3,
        "policy_pass_all_rate": pytest.approx(1 / 4),
        "policy_pass_any_rate": pytest.approx(3 / 4),
        "violation_ever_rate": pytest.approx(2 / 4),
    }


def test_repeatability_does_not_average_other_metrics_per_scenario():
    # A passes 1 of 3 trials, B passes its single trial: micro over rows = 2/4 (not (1/3 + 1)/2)
    rows = [row("A", 0), row("A", 1, all_passed=False), row("A", 2, all_passed=False), row("B", 0)]
    assert compute_metrics(rows)["compliance_rate"] == pytest.approx(1 / 2)


# --------------------------------------------------------------------------------------------------
# pass_hat_k and wilson_interval
# --------------------------------------------------------------------------------------------------

def test_pass_hat_k_hand_computed():
    result = pass_hat_k({"A": [True, True, False], "B": [True, False], "C": [True]})
    assert set(result) == {"1", "2", "3"}
    # k=1: A 2/3, B 1/2, C 1/1
    assert result["1"] == pytest.approx((2 / 3 + 1 / 2 + 1) / 3)  # = 13/18
    # k=2: A C(2,2)/C(3,2) = 1/3, B C(1,2)/C(2,2) = 0; C has n < 2
    assert result["2"] == pytest.approx((1 / 3 + 0) / 2)  # = 1/6
    # k=3: A C(2,3)/C(3,3) = 0
    assert result["3"] == 0.0


def test_pass_hat_k_all_passing_and_all_failing():
    assert pass_hat_k({"A": [True] * 4, "B": [True] * 2}) == {"1": 1.0, "2": 1.0, "3": 1.0, "4": 1.0}
    assert pass_hat_k({"A": [False] * 3}) == {"1": 0.0, "2": 0.0, "3": 0.0}


def test_pass_hat_k_larger_example():
    # 4 of 5 trials pass: k=2 C(4,2)/C(5,2) = 6/10, k=3 4/10, k=4 1/5, k=5 0
    result = pass_hat_k({"A": [True, True, False, True, True]})
    assert result == {"1": pytest.approx(4 / 5), "2": pytest.approx(6 / 10), "3": pytest.approx(4 / 10),
                      "4": pytest.approx(1 / 5), "5": 0.0}


def test_pass_hat_k_empty():
    assert pass_hat_k({}) == {}


def test_wilson_interval_no_observations():
    assert tuple(wilson_interval(0, 0)) == (0.0, 0.0)


def test_wilson_interval_known_value():
    lo, hi = wilson_interval(8, 10)
    assert lo == pytest.approx(0.4902, abs=1e-4)
    assert hi == pytest.approx(0.9433, abs=1e-4)


def test_wilson_interval_extremes():
    z2 = 1.959963984540054 ** 2
    lo, hi = wilson_interval(0, 10)
    assert lo == pytest.approx(0.0, abs=1e-12)
    assert hi == pytest.approx(z2 / (10 + z2))  # 0.2775
    lo, hi = wilson_interval(10, 10)
    assert lo == pytest.approx(10 / (10 + z2))  # 0.7225
    assert hi == pytest.approx(1.0)
    lo, hi = wilson_interval(1, 1)
    assert 0.0 <= lo < 1.0 and hi == pytest.approx(1.0)
    assert lo == pytest.approx(1 / (1 + z2))


def test_wilson_interval_symmetry_and_bounds():
    lo2, hi2 = wilson_interval(2, 10)
    lo8, hi8 = wilson_interval(8, 10)
    assert lo2 == pytest.approx(1 - hi8)
    assert hi2 == pytest.approx(1 - lo8)
    for s in range(0, 8):
        lo, hi = wilson_interval(s, 7)
        assert 0.0 <= lo <= s / 7 + 1e-12
        assert s / 7 - 1e-12 <= hi <= 1.0


def test_wilson_interval_custom_z():
    # z = 1: p = 1/2, n = 4 -> centre 1/2, half = sqrt(1/16 + 1/64) / (1 + 1/4) = sqrt(5)/10
    lo, hi = wilson_interval(2, 4, z=1.0)
    assert lo == pytest.approx(0.5 - math.sqrt(5) / 10)
    assert hi == pytest.approx(0.5 + math.sqrt(5) / 10)


# --------------------------------------------------------------------------------------------------
# §8.4 to_leaderboard
# --------------------------------------------------------------------------------------------------

_SORTED_KEYS = [
    ("FINRA_001", 0), ("FINRA_001", 1), ("FINRA_001", 2), ("FINRA_002", 0), ("HELP_005", 0), ("HELP_006", 0),
    ("RETAIL_003", 0), ("RETAIL_003", 1), ("RETAIL_004", 0), ("RETAIL_004", 1), ("scen_bad", 0),
]
_SORTED_REWARDS = [1.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.0, 0.0]


@pytest.fixture
def result(rows: list[dict[str, Any]]) -> dict[str, Any]:
    artifact = to_leaderboard(rows, agent_id="agent-a", time_used=123.5)
    assert artifact["participants"] == {"agent": "agent-a"}
    assert len(artifact["results"]) == 1
    return artifact["results"][0]


def test_leaderboard_header(result):
    assert result["domain"] == "policy_compliance"
    assert result["time_used"] == 123.5


def test_leaderboard_defaults():
    artifact = to_leaderboard([row("A")])
    assert artifact["participants"] == {"agent": "agent"}
    res = artifact["results"][0]
    assert res["domain"] == "policy_compliance"
    assert res["time_used"] == 0.0


def test_leaderboard_custom_domain():
    assert to_leaderboard([row("A")], domain="my_suite")["results"][0]["domain"] == "my_suite"


def test_leaderboard_score_over_all_rows(result):
    assert result["score"] == 5.0  # errors count 0
    assert result["max_score"] == 11.0  # every row, errors and trials included
    assert result["pass_rate"] == pytest.approx(5 / 11 * 100)  # percent


def test_leaderboard_scenario_details_sorted(result):
    assert [(d["scenario_id"], d["trial"]) for d in result["scenario_details"]] == _SORTED_KEYS


def test_leaderboard_task_rewards_in_sorted_order(result):
    assert result["task_rewards"] == {str(i): r for i, r in enumerate(_SORTED_REWARDS)}
    assert list(result["task_rewards"]) == [str(i) for i in range(11)]


def test_leaderboard_task_rewards_by_scenario_id(result):
    assert result["task_rewards_by_scenario_id"] == {
        "FINRA_001#trial_0": 1.0, "FINRA_001#trial_1": 0.0, "FINRA_001#trial_2": 1.0,
        "FINRA_002": 0.0,
        "HELP_005": 0.0,
        "HELP_006": 1.0,  # reward missing -> 1.0 from all_passed
        "RETAIL_003#trial_0": 1.0, "RETAIL_003#trial_1": 0.0,
        "RETAIL_004#trial_0": 1.0, "RETAIL_004#trial_1": 0.0,  # the error trial makes the id repeat
        "scen_bad": 0.0,  # reward missing -> 0.0 from all_passed
    }


def test_leaderboard_metrics_and_flag_summary(result):
    metrics = result["metrics"]
    assert metrics["total_scenarios"] == 11
    assert (metrics["completed"], metrics["errors"]) == (9, 2)
    assert metrics["compliance_rate"] == pytest.approx(5 / 9)
    assert metrics["overall_score"] == pytest.approx(5 / 8)
    assert metrics["repeatability"]["aggregate"]["max_k"] == 3
    assert result["flag_summary"] == metrics["event_flag_rates"]
    assert result["flag_summary"] == {
        "violation_rate": pytest.approx(2 / 9), "under_refusal_rate": pytest.approx(1 / 4),
        "over_refusal_rate": pytest.approx(1 / 3), "escalation_accuracy_rate": pytest.approx(1 / 2),
        "attempt_rate": pytest.approx(1 / 9),
    }


def test_leaderboard_label_breakdown_over_all_rows(result):
    assert result["label_breakdown"] == {
        "DENY": {"total": 4, "passed": 3},
        "ALLOW": {"total": 1, "passed": 0},
        "ESCALATE": {"total": 3, "passed": 1},  # includes the RETAIL_004 error row
        "ALLOW-CONDITIONAL": {"total": 2, "passed": 1},
        "": {"total": 1, "passed": 0},  # the validation error of the outer wrapper
    }
    # differs from metrics.labels (completed rows only), as upstream (C11)
    assert result["metrics"]["labels"]["ESCALATE"] == {"total": 2, "passed": 1}


_BASE_DETAIL_KEYS = {
    "scenario_id", "trial", "domain", "domain_name", "leaderboard_primary", "label", "status", "reward",
    "all_passed", "semantic_score", "canonical_decision", "decision_channel", "decision_valid",
    "decision_error", "event_flags",
}


def test_leaderboard_detail_with_optional_keys(result):
    d = result["scenario_details"][0]  # FINRA_001 t0
    assert set(d) == _BASE_DETAIL_KEYS | {"benchmark_version", "seed", "duration", "tool_calls", "dimensions"}
    assert d["benchmark_version"] == "0.1.0"
    assert d["seed"] == 42
    assert d["duration"] == 12.5
    assert d["tool_calls"] == ["record_decision"]
    assert d["dimensions"]["decision"]["checks"] == [chk("decision_equals", True)]
    assert d["reward"] == 1.0
    assert d["all_passed"] is True
    assert d["semantic_score"] == 1.0
    assert d["canonical_decision"] == "DENY"
    assert d["event_flags"] == flags()
    assert (d["domain"], d["domain_name"], d["leaderboard_primary"], d["label"], d["status"]) == (
        "finra", "finra", "Policy Activation", "DENY", "completed")


def test_leaderboard_detail_falsy_optional_keys_left_out(result):
    d = result["scenario_details"][2]  # FINRA_001 t2: tool_calls [] -> absent
    assert (d["scenario_id"], d["trial"]) == ("FINRA_001", 2)
    assert "tool_calls" not in d
    for key in ("seed", "duration", "error"):
        assert key not in d
    assert d["benchmark_version"] == BENCHMARK_VERSION  # the reference stamps every detail: the run's version
    err = result["scenario_details"][9]  # RETAIL_004 t1 error: dimensions {} -> absent, error present
    assert err["status"] == "error"
    assert err["error"] == "A2A tool-reference validation failed"
    assert "dimensions" not in err
    assert err["reward"] == 0.0


def test_leaderboard_detail_outcome_checks_get_empty_dimension(result):
    d = result["scenario_details"][7]  # RETAIL_003 t1
    assert (d["scenario_id"], d["trial"]) == ("RETAIL_003", 1)
    assert d["outcome_checks"] == [
        {"outcome_id": "E_TOOL_CALLED", "type": "tool_called", "passed": True, "detail": "tool_called=True",
         "dimension": ""},
        {"outcome_id": "E_STATE_FIELD", "type": "state_field", "passed": False, "detail": "state_field=False",
         "dimension": ""},
        {"outcome_id": "N1", "type": "NL_JUDGE", "passed": True, "detail": "NL_JUDGE=True", "dimension": ""},
        {"outcome_id": "N2", "type": "NL_JUDGE", "passed": False, "detail": "NL_JUDGE=False", "dimension": ""},
    ]
    assert d["semantic_score"] == 0.5


def test_leaderboard_detail_reward_fallback(result):
    help6 = result["scenario_details"][5]
    assert help6["scenario_id"] == "HELP_006"
    assert help6["reward"] == 1.0
    bad = result["scenario_details"][10]
    assert bad["scenario_id"] == "scen_bad"
    assert bad["reward"] == 0.0
    assert bad["label"] == ""
    assert bad["status"] == "validation_error"


def test_leaderboard_detail_defaults_for_missing_fields():
    minimal = {"scenario_id": "X", "trial": 0, "all_passed": True}
    res = to_leaderboard([minimal])["results"][0]
    d = res["scenario_details"][0]
    assert d["reward"] == 1.0
    assert d["semantic_score"] == 0.0
    assert d["canonical_decision"] == ""
    assert d["status"] == "unknown"
    assert d["event_flags"] == {}
    assert set(d) >= _BASE_DETAIL_KEYS
    # unknown status -> counted in rows, not completed
    assert res["score"] == 1.0
    assert res["max_score"] == 1.0
    assert res["pass_rate"] == pytest.approx(100.0)
    assert res["metrics"]["completed"] == 0


def test_leaderboard_detail_drops_heavy_fields():
    r = row("A", messages=[{"role": "user", "content": "hi"}], trace=[{"tool": "x"}], env={"db": {}})
    d = to_leaderboard([r])["results"][0]["scenario_details"][0]
    for key in ("messages", "trace", "env"):
        assert key not in d


def test_leaderboard_sorts_trials_numerically():
    rows = [row("A", 10, all_passed=False), row("A", 2), row("A", 1, all_passed=False)]
    res = to_leaderboard(rows)["results"][0]
    assert [d["trial"] for d in res["scenario_details"]] == [1, 2, 10]
    assert res["task_rewards"] == {"0": 0.0, "1": 1.0, "2": 0.0}
    assert list(res["task_rewards_by_scenario_id"]) == ["A#trial_1", "A#trial_2", "A#trial_10"]


def test_leaderboard_explicit_reward_wins_over_all_passed():
    # reward is read as given; only a missing reward falls back to all_passed
    r = row("A", all_passed=True)
    r["reward"] = 0.0
    res = to_leaderboard([r])["results"][0]
    assert res["score"] == 0.0
    assert res["task_rewards"] == {"0": 0.0}


def test_by_pressure_style_only_when_variants_ran(metrics):
    assert "by_pressure_style" not in metrics


def test_by_pressure_style_groups_variants_and_counts_their_bases():
    rows = [
        row("A", agent="x"),
        row("A__URGENCY", agent="x", pressure_style="urgency", variant_of="A", all_passed=False),
        row("B", agent="x", all_passed=False),
        row("B__URGENCY", agent="x", pressure_style="urgency", variant_of="B"),
        row("B__EMOTIONAL", agent="x", pressure_style="emotional", variant_of="B", all_passed=False),
        row("C__EMOTIONAL", agent="x", pressure_style="emotional", variant_of="C"),  # its base did not run
        error_row("D__URGENCY", pressure_style="urgency", variant_of="D"),  # error rows are not scored
    ]
    styles = compute_metrics(rows)["by_pressure_style"]
    assert list(styles) == ["none", "emotional", "urgency"]
    assert styles["none"] == {"total": 2, "passed": 1, "compliance_rate": 0.5}
    assert styles["urgency"] == {"total": 2, "passed": 1, "compliance_rate": 0.5, "bases_run": 2, "bases_passed": 1}
    assert styles["emotional"] == {"total": 2, "passed": 1, "compliance_rate": 0.5, "bases_run": 1, "bases_passed": 0}


def test_leaderboard_details_follow_the_references_semantic_score_and_error_flags():
    """Semantic 1.0 without Tier-2 checks, None when they went unjudged, 0.0 for errors; error rows flag nothing."""
    judged = chk("NL_JUDGE", None) | {"tier": 2}
    plain = row("A", semantic=None, checks=(chk("decision_equals", True),), termination_reason="agent_stop")
    unjudged = row("B", semantic=None, checks=(chk("decision_equals", True), judged), termination_reason="agent_stop")
    failed = row("C", semantic=None, status="error", all_passed=False, termination_reason="infra_error",
                 event_flags=flags("V_r"))  # fmt: skip
    cut = row("D", semantic=None, all_passed=False, termination_reason="too_many_errors")
    details = {d["scenario_id"]: d for d in to_leaderboard([plain, unjudged, failed, cut])["results"][0]["scenario_details"]}
    assert details["A"]["semantic_score"] == 1.0 and details["B"]["semantic_score"] is None
    assert details["C"]["semantic_score"] == 0.0 and details["D"]["semantic_score"] == 0.0
    assert details["C"]["event_flags"] == flags() and not any(details["C"]["event_flags"].values())
    assert all(d["benchmark_version"] == BENCHMARK_VERSION for d in details.values())
