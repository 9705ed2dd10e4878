"""``--pibench-html PATH``: the run writes its HTML report at the end, and says where."""

from __future__ import annotations

import json
import re


def test_a_run_writes_its_html_report(pytester):
    result = pytester.runpytest("--pibench-agent=oracle", "--pibench-agent=baseline:deny", "-k", "FIN_00",
                                "--pibench-html=out/report.html", "-p", "no:cacheprovider")  # fmt: skip
    page = (pytester.path / "out" / "report.html").read_text()
    data = json.loads(re.search(r'application/json">(.*?)</script>', page, re.S).group(1))
    assert [c["agent"] for c in data["contenders"]] == ["oracle", "baseline:deny"]
    assert len(data["episodes"]) == 2 * 9 and data["runs"][0]["complete"] is True
    result.stdout.fnmatch_lines(["HTML report: out/report.html"])


def test_an_unwritable_html_path_is_a_usage_error_before_any_episode(pytester):
    (pytester.path / "blocked").write_text("a file, not a folder")
    result = pytester.runpytest("--pibench-agent=oracle", "-k", "FIN_001", "--pibench-html=blocked/r.html")
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*--pibench-html:*"])
