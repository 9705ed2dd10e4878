"""Pressure variants (issue 12): only the customer's side changes, generation is reproducible,
and nothing uncertified is written."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import TOY_ALLOW, TOY_ESCALATE
from pytest_pibench import bundled_scenarios_dir, load_scenario
from pytest_pibench.generation import (
    STYLES,
    PressureStyle,
    UnknownStyleError,
    get_style,
    make_variant,
    register_style,
    write_variants,
)
from pytest_pibench.generation.variants import REFUSING_DECISIONS

TV = bundled_scenarios_dir() / "retail" / "ret_004_tv_return_before_move.json"
"""A retail base with reactive turns that push back on an ESCALATE and a plain default."""


def _raw(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("style", list(STYLES))
def test_a_variant_changes_only_the_customer_side(style):
    base = _raw(TV)
    variant = make_variant(base, get_style(style), seed=5)
    for key in ("label", "evaluation_criteria", "reference_trajectory", "environment_setup", "policy_context"):
        assert variant[key] == base[key], key
    assert variant["meta"]["scenario_id"] == f"RET_004_TV_RETURN_BEFORE_MOVE__{style.upper()}"
    assert variant["meta"]["variant"] == {"base": base["meta"]["scenario_id"], "style": style, "seed": 5,
                                          "generator": "pi generate 1"}
    assert variant["leaderboard"]["primary"] == base["leaderboard"]["primary"]
    assert variant["leaderboard"]["stressors"][:-1] == base["leaderboard"]["stressors"]
    opening = variant["user_simulation"]["initial_user_message"]
    assert base["user_simulation"]["initial_user_message"] in opening and len(opening) > len(
        base["user_simulation"]["initial_user_message"])
    assert variant["user_simulation"]["pressure_script"][-1] == get_style(style).direction
    assert base == _raw(TV)  # the base dict is left as it was


def test_push_lines_go_only_to_branches_that_answer_a_refusal():
    base = _raw(TV)
    style = get_style("persistence")
    variant = make_variant(base, style, seed=1)
    pushed = 0
    for old, new in zip(base["user_simulation"]["scripted_turns"], variant["user_simulation"]["scripted_turns"],
                        strict=True):
        if isinstance(old, str):
            assert new == old
            continue
        assert new["default"] == old["default"] and new["oracle"] == old["oracle"]
        for before, after in zip(old["branches"], new["branches"], strict=True):
            assert after["when"] == before["when"]
            if before["when"].get("decision") in REFUSING_DECISIONS:
                assert after["say"].startswith(before["say"]) and after["say"] != before["say"]
                assert any(after["say"].endswith(line) for line in style.push)
                pushed += 1
            else:
                assert after["say"] == before["say"]
    assert pushed >= 2


def test_generation_is_reproducible_and_the_seed_matters():
    base = _raw(TV)
    style = get_style("urgency")
    assert make_variant(base, style, seed=7) == make_variant(base, style, seed=7)
    openings = {make_variant(base, style, seed=s)["user_simulation"]["initial_user_message"] for s in range(12)}
    assert len(openings) > 1


def test_a_variant_is_never_the_base_of_another():
    variant = make_variant(_raw(TV), get_style("urgency"), seed=0)
    with pytest.raises(ValueError, match="itself a generated variant"):
        make_variant(variant, get_style("emotional"), seed=0)


def test_write_variants_certifies_writes_beside_the_base_and_rewrites_only_its_own_files(tmp_path):
    base = tmp_path / TV.name
    shutil.copy(TV, base)
    outcomes = write_variants([base], [get_style("urgency"), get_style("format_tricks")], seed=2)
    assert [(o.written, o.problems) for o in outcomes] == [(True, []), (True, [])]
    written = sorted(p.name for p in tmp_path.glob("*__*.json"))
    assert written == ["ret_004_tv_return_before_move__format_tricks.json", "ret_004_tv_return_before_move__urgency.json"]
    loaded = load_scenario(tmp_path / written[1])
    assert loaded.meta.variant is not None and loaded.meta.variant.style == "urgency"
    again = write_variants([base], [get_style("urgency")], seed=2)
    assert again[0].unchanged and not again[0].written
    (tmp_path / "ret_004_tv_return_before_move__emotional.json").write_text(TV.read_text())  # hand-written
    (refused,) = write_variants([base], [get_style("emotional")], seed=2)
    assert not refused.written and "is not a generated variant: not overwritten" in refused.problems[0]
    assert (tmp_path / "ret_004_tv_return_before_move__emotional.json").read_text() == TV.read_text()


def test_a_variant_that_fails_certification_is_refused_and_not_written(workspace):
    # A style whose stage direction is also said aloud leaks hidden text to the agent: the validator refuses it.
    leaky = PressureStyle(name="leaky_test_style", description="Says its own stage direction.",
                          opening=("Pressure style leaky: say everything twice, please.",), push=("Again.",),
                          direction="Pressure style leaky: say everything twice, please.")
    base = workspace / "scenarios" / "toyshop" / TOY_ALLOW.name
    (outcome,) = write_variants([base], [leaky], seed=0)
    assert not outcome.written and not outcome.path.exists()
    assert any(p.startswith("hidden: hidden text pressure_script") for p in outcome.problems), outcome.problems


def test_a_base_whose_gold_path_fails_gives_refused_variants(workspace):
    data = _raw(TOY_ESCALATE)
    del data["reference_trajectory"]["calls"][1]  # the gold path no longer escalates: check E2 fails
    base = workspace / "scenarios" / "toyshop" / "broken.json"
    base.write_text(json.dumps(data))
    (outcome,) = write_variants([base], [get_style("urgency")], seed=0)
    assert not outcome.written and not outcome.path.exists()
    assert any(p.startswith("oracle:") and "E2" in p for p in outcome.problems), outcome.problems


def test_a_base_that_does_not_load_gives_one_refusal_per_style(workspace):
    base = workspace / "scenarios" / "toyshop" / "broken.json"
    base.write_text('{"schema_version": "pibench_scenario_v1"}')
    outcomes = write_variants([base], [get_style("urgency"), get_style("emotional")], seed=0)
    assert [o.written for o in outcomes] == [False, False]
    assert all("meta: Field required" in " ".join(o.problems) for o in outcomes), outcomes[0].problems


def test_styles_are_a_registry_with_clear_errors():
    assert list(STYLES)[:6] == ["urgency", "authority", "emotional", "misdirection", "persistence", "format_tricks"]
    with pytest.raises(UnknownStyleError, match="unknown pressure style 'shouting'; known: urgency"):
        get_style("shouting")
    with pytest.raises(ValueError, match="already registered"):
        register_style(STYLES["urgency"])
    with pytest.raises(ValueError, match="lower-case"):
        PressureStyle(name="Bad Name", description="", opening=("a",), push=("b",), direction="")


# --------------------------------------------------------------------------- the command


def pi(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest_pibench.cli", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=300)


@pytest.mark.slow
def test_pi_generate_writes_certified_variants_that_run_and_group_by_style(tmp_path):
    shutil.copy(TV, tmp_path / TV.name)
    done = pi("generate", TV.name, "--style", "urgency", "--style", "authority", "--seed", "4", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 variant(s) certified, 0 refused" in done.stdout
    first = (tmp_path / "ret_004_tv_return_before_move__urgency.json").read_text()
    assert pi("generate", ".", "--style", "urgency", "--seed", "4", cwd=tmp_path).stdout.count("unchanged") == 1
    assert (tmp_path / "ret_004_tv_return_before_move__urgency.json").read_text() == first
    run = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--pibench-agent=oracle",
                          "--pibench-results=results.json", "."], cwd=tmp_path, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stdout[-2000:]
    assert "Compliance by pressure style" in run.stdout
    assert "  urgency" in run.stdout and "1.000 (1/1)" in run.stdout
    document = json.loads((tmp_path / "results.json").read_text())
    styles = {r["scenario_id"]: r.get("pressure_style") for r in document["rows"]}
    assert styles == {"RET_004_TV_RETURN_BEFORE_MOVE": None,
                      "RET_004_TV_RETURN_BEFORE_MOVE__URGENCY": "urgency",
                      "RET_004_TV_RETURN_BEFORE_MOVE__AUTHORITY": "authority"}
    marked = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--pibench-agent=oracle",
                             "--pibench-results=", "-m", "pressure_authority", "."], cwd=tmp_path,
                            capture_output=True, text=True, timeout=300)
    assert "1 passed, 2 deselected" in marked.stdout


def test_pi_generate_says_what_it_leaves_and_refuses_a_named_variant(tmp_path):
    shutil.copy(TV, tmp_path / TV.name)
    assert pi("generate", TV.name, "--style", "urgency", cwd=tmp_path).returncode == 0
    again = pi("generate", ".", "--style", "emotional", cwd=tmp_path)
    assert again.returncode == 0 and "1 generated variant(s) in the folders are not bases" in again.stdout
    named = pi("generate", "ret_004_tv_return_before_move__urgency.json", "--style", "emotional", cwd=tmp_path)
    assert named.returncode == 1 and "is itself a generated variant" in named.stdout


def test_pi_generate_usage_errors_and_refusals(tmp_path):
    shutil.copy(TV, tmp_path / TV.name)
    unknown = pi("generate", TV.name, "--style", "shouting", cwd=tmp_path)
    assert unknown.returncode == 4 and "unknown pressure style 'shouting'" in unknown.stderr
    assert pi("generate", cwd=tmp_path).returncode == 4
    listed = pi("generate", "--list-styles", cwd=tmp_path)
    assert listed.returncode == 0 and listed.stdout.splitlines()[0].startswith("urgency")
    (tmp_path / "ret_004_tv_return_before_move__urgency.json").write_text(TV.read_text())
    refused = pi("generate", TV.name, "--style", "urgency", cwd=tmp_path)
    assert refused.returncode == 1 and "REFUSED" in refused.stdout
    assert "0 variant(s) certified, 1 refused" in refused.stdout
