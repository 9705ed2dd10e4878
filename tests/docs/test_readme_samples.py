"""The README's sample outputs are those of real runs (issue 27): each block is made again and compared."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("readme_samples", ROOT / "docs" / "readme_samples.py")
assert _spec is not None and _spec.loader is not None
samples = importlib.util.module_from_spec(_spec)
sys.modules["readme_samples"] = samples
_spec.loader.exec_module(samples)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(samples.SAMPLES))
def test_each_readme_sample_is_what_a_fresh_run_prints(name, tmp_path):
    text = samples.README.read_text(encoding="utf-8")
    fresh = {name: samples.SAMPLES[name](tmp_path)}
    problems = samples.differences(text, fresh)
    assert not problems, "README sample out of date (python docs/readme_samples.py rewrites it):\n" + "\n".join(problems)


def test_the_comparison_ignores_only_what_changes_from_run_to_run():
    block = "Wall time: 2.8s\n= 98 failed, 2744 checks passed in 4.48s =\n"
    assert samples.comparable(block) == samples.comparable("Wall time: 13.1s\n== 98 failed, 2744 checks passed in 9.00s ==\n")
    assert samples.comparable(block) != samples.comparable("Wall time: 2.8s\n= 97 failed, 2744 checks passed in 4.48s =\n")
    readme = "x\n<!-- sample: summary -->\n```\nOverall 0.318\n```\n<!-- /sample -->\n"
    assert samples.readme_samples(readme) == {"summary": "Overall 0.318\n"}
    assert samples.differences(readme, {"summary": "Overall 0.318\n"}) == []
    (diff,) = samples.differences(readme, {"summary": "Overall 0.319\n"})
    assert "-Overall 0.318" in diff and "+Overall 0.319" in diff
    assert samples.differences(readme, {"gate": "x"}) == ["README.md has no block <!-- sample: gate -->"]
