"""Domain packs shipped by installed distributions (entry-point group ``pytest_pibench.domains``).

Each test installs a real, tiny distribution (a package plus its ``.dist-info``
on ``sys.path``); ``importlib.metadata`` finds it as it finds any installed package.
"""

from __future__ import annotations

import json
import shutil

import pytest

from conftest import TOY_ALLOW, TOY_WORKSPACE
from pytest_pibench import load_scenario, run_one
from pytest_pibench.packs.loading import ENTRY_POINT_GROUP, DomainError, UnknownDomainError, load_domain
from pytest_pibench.paths import bundled_root

TOYSHOP = TOY_WORKSPACE / "domains" / "toyshop"


def pack_files(package: str, *, policy: str = "") -> dict[str, str]:
    """A package whose folder is a copy of the toyshop pack (policy.md, db.json, tools.py)."""
    files = {f"{package}/__init__.py": "raise RuntimeError('a pack package is found, never imported')\n"}
    for name in ("db.json", "tools.py", "policy.md"):
        files[f"{package}/{name}"] = (TOYSHOP / name).read_text(encoding="utf-8")
    if policy:
        files[f"{package}/policy.md"] = policy
    return files


def test_a_package_named_by_an_entry_point_is_a_domain_pack(install_distribution):
    install_distribution(
        "bank-pack", entry_points={ENTRY_POINT_GROUP: {"bank": "bank_pack_a"}}, files=pack_files("bank_pack_a")
    )
    domain = load_domain("bank")
    assert domain.name == "bank"  # the entry point's name, not the folder's
    assert domain.directory.name == "bank_pack_a"
    assert "refund_item" in domain.tool_names and domain.policy_text.strip()


def test_an_entry_point_may_name_the_pack_folder_by_a_path_object(install_distribution):
    files = pack_files("vault_pack/data/vault")
    files["vault_pack/__init__.py"] = ""
    files["vault_pack/packs.py"] = "from pathlib import Path\n\nVAULT = Path(__file__).parent / 'data' / 'vault'\n"
    install_distribution(
        "vault-pack", entry_points={ENTRY_POINT_GROUP: {"vault": "vault_pack.packs:VAULT"}}, files=files
    )
    domain = load_domain("vault")
    assert domain.name == "vault" and domain.directory.name == "vault"


def test_a_scenario_of_an_installed_domain_runs_from_a_folder_without_domains(install_distribution, tmp_path):
    install_distribution(
        "toyshop-pack",
        entry_points={ENTRY_POINT_GROUP: {"toyshop": "toyshop_pack_b"}},
        files=pack_files("toyshop_pack_b"),
    )
    folder = tmp_path / "mine" / "scenarios"
    folder.mkdir(parents=True)
    shutil.copy(TOY_ALLOW, folder / "case.json")
    row = run_one(load_scenario(folder / "case.json"), "oracle")
    assert row["status"] == "completed" and row["all_passed"] is True, row.get("error")
    assert row["domain_name"] == "toyshop"


def test_the_scenario_workspace_shadows_an_installed_pack(install_distribution, tmp_path):
    install_distribution(
        "other-toyshop",
        entry_points={ENTRY_POINT_GROUP: {"toyshop": "toyshop_pack_c"}},
        files=pack_files("toyshop_pack_c", policy="An installed policy.\n"),
    )
    assert load_domain("toyshop").policy_text == "An installed policy.\n"
    workspace = load_domain("toyshop", search_roots=[TOY_WORKSPACE])
    assert workspace.directory == TOYSHOP.resolve()


def test_an_installed_pack_named_like_a_bundled_one_is_an_error_naming_both(install_distribution):
    install_distribution(
        "my-retail", entry_points={ENTRY_POINT_GROUP: {"retail": "my_retail_d"}}, files=pack_files("my_retail_d")
    )
    with pytest.raises(DomainError) as info:
        load_domain("retail_refund_sop_v1")  # the upstream alias finds the clash too
    message = str(info.value)
    assert "domain 'retail_refund_sop_v1' is defined twice" in message
    assert "entry point retail = 'my_retail_d' of distribution my-retail 1.0" in message
    assert "the packs bundled with pytest-pibench" in message


def test_two_distributions_shipping_one_domain_is_an_error_naming_both(install_distribution):
    install_distribution(
        "bank-one", entry_points={ENTRY_POINT_GROUP: {"bank2": "bank_one_e"}}, files=pack_files("bank_one_e")
    )
    install_distribution(
        "bank-two", entry_points={ENTRY_POINT_GROUP: {"bank2": "bank_two_e"}}, files=pack_files("bank_two_e")
    )
    with pytest.raises(DomainError, match="domain 'bank2' is defined twice") as info:
        load_domain("bank2")
    assert "distribution bank-one 1.0" in str(info.value) and "distribution bank-two 1.0" in str(info.value)


@pytest.mark.parametrize(
    ("value", "files", "fragment"),
    [
        (
            "no_such_pack_f",
            {},
            "names no domain pack: expected a package or a path of a folder holding tools.py or tools.json, got None",
        ),
        ("empty_pack_f", {"empty_pack_f/__init__.py": ""}, "names no domain pack"),
        ("broken_pack_f.mod:DIR", {"broken_pack_f/__init__.py": "", "broken_pack_f/mod.py": "1/0\n"}, "failed to load"),
        ("odd_pack_f.mod:DIR", {"odd_pack_f/__init__.py": "", "odd_pack_f/mod.py": "DIR = 42\n"}, "got 42"),
    ],
)
def test_a_broken_entry_point_is_an_error_naming_it(install_distribution, value, files, fragment):
    install_distribution("broken-pack", entry_points={ENTRY_POINT_GROUP: {"broken": value}}, files=files)
    with pytest.raises(DomainError) as info:
        load_domain("broken")
    assert not isinstance(info.value, UnknownDomainError)  # the pack is at fault, not the scenario naming it
    assert f"entry point broken = {value!r} of distribution broken-pack 1.0" in str(info.value)
    assert fragment in str(info.value)


def test_an_unknown_domain_says_where_it_looked(tmp_path):
    with pytest.raises(UnknownDomainError) as info:
        load_domain("bakery", search_roots=[tmp_path])
    message = str(info.value)
    assert str(tmp_path / "domains" / "bakery") in message
    assert f"entry points named 'bakery' in {ENTRY_POINT_GROUP}" in message


def test_validate_accepts_a_scenario_of_an_installed_domain(install_distribution, tmp_path):
    from pytest_pibench.validation import validate

    install_distribution(
        "toyshop-pack-g",
        entry_points={ENTRY_POINT_GROUP: {"toyshop": "toyshop_pack_g"}},
        files=pack_files("toyshop_pack_g"),
    )
    folder = tmp_path / "scenarios"
    folder.mkdir()
    data = json.loads(TOY_ALLOW.read_text())
    (folder / "case.json").write_text(json.dumps(data))
    report = validate(str(folder))
    assert not any("unknown domain" in line for line in report.format().splitlines()), report.format()


def test_bundled_packs_need_no_entry_point():
    assert load_domain("retail").directory == (bundled_root() / "domains" / "retail").resolve()
