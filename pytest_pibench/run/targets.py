"""What a name on the command line runs: a file or folder, a domain, a scenario file name or a scenario id."""

from __future__ import annotations

import json
from pathlib import Path

from pytest_pibench.inputs import did_you_mean
from pytest_pibench.packs.loading import canonical_domain_name
from pytest_pibench.paths import bundled_scenarios_dir
from pytest_pibench.scenario.loading import discover_scenarios

__all__ = ["TargetError", "resolve_target"]


class TargetError(ValueError):
    """A name that is no file, folder, domain or scenario; the message says where it was looked for."""


def _named_roots() -> list[Path]:
    """Where names are looked up: ``./scenarios`` (a workspace), then the bundled scenarios."""
    roots = [Path.cwd() / "scenarios", bundled_scenarios_dir()]
    return list(dict.fromkeys(root.resolve() for root in roots if root.is_dir()))


def _scenario_id_of(file: Path) -> str | None:
    try:
        meta = json.loads(file.read_text(encoding="utf-8-sig")).get("meta")
    except (OSError, ValueError, AttributeError, RecursionError):
        return None
    scenario_id = meta.get("scenario_id") if isinstance(meta, dict) else None
    return scenario_id if isinstance(scenario_id, str) else None


def resolve_target(arg: str) -> str:
    """What ``pi run``/``pi list`` run for ``arg``, from any directory.

    An existing file or folder (optionally with a ``::`` node suffix) as given;
    otherwise, in ``./scenarios`` and then the bundled scenarios: a domain name
    or upstream alias (``retail``), a scenario file stem (``ret_004_tv_return_before_move``,
    ``.json`` optional) or a scenario id (``RET_004_TV_RETURN_BEFORE_MOVE``).

    Raises:
        TargetError: when ``arg`` is none of these.
    """
    if Path(arg.split("::")[0]).exists():
        return arg
    roots = _named_roots()
    for root in roots:
        folder = root / canonical_domain_name(arg)
        if folder.is_dir():
            return str(folder)
    stem = arg.removesuffix(".json")
    names = [p.name for root in roots if root.is_dir() for p in root.iterdir() if p.is_dir()]  # for "did you mean"
    for root in roots:
        for file in discover_scenarios(root):
            scenario_id = _scenario_id_of(file)
            if file.stem == stem or scenario_id == arg:
                return str(file)
            names += [file.stem, *filter(None, [scenario_id])]
    if "/" in arg or "\\" in arg or arg.endswith(".json"):
        raise TargetError(f"no such file or directory: {arg}")
    raise TargetError(
        f"{arg!r} is neither a file or folder nor a domain, scenario file name or scenario id"
        f"{did_you_mean(arg, names)} (looked in ./scenarios and the bundled scenarios); `pi list` shows what there is"
    )
