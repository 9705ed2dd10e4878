"""Messages for an import spec that cannot be loaded: the module's own error, where modules are looked up.

A new user's first agent often fails on import (a syntax error, a missing
dependency) or is named with a typo. Each message names the cause in the
user's own file and line, not in the harness, and says what to try next.
"""

from __future__ import annotations

import inspect
import os
import sys
import traceback
from pathlib import Path
from typing import Any

from pytest_pibench.inputs import did_you_mean

__all__ = ["import_failure", "not_found", "offer_names"]

_USER_FRAMES = 4  # the innermost frames of the user's code shown with an import error


def import_failure(role: str, spec: str, module_name: str, exc: BaseException) -> str:
    """The module's own error with its file and line, e.g. a syntax error or a failing import inside it."""
    lines = [f"{role} spec {spec!r}: importing {module_name} failed with {type(exc).__name__}: {exc}"]
    if isinstance(exc, SyntaxError) and exc.filename:
        lines.append(f'  File "{exc.filename}", line {exc.lineno}')
        if exc.text:
            lines.append("    " + exc.text.rstrip("\n").strip())
    else:
        frames = [
            f
            for f in traceback.extract_tb(exc.__traceback__)
            if not f.filename.startswith("<frozen")
            and not {"pytest_pibench", "importlib"} & set(Path(f.filename).parts)
        ]
        for frame in frames[-_USER_FRAMES:]:
            lines.append(f'  File "{frame.filename}", line {frame.lineno}, in {frame.name}')
            if frame.line:
                lines.append(f"    {frame.line}")
    if isinstance(exc, ModuleNotFoundError) and exc.name:
        lines.append(
            f"  {module_name} needs the package that provides {exc.name!r}: install it into this "
            f"environment ({sys.executable} -m pip install ...)"
        )
    return "\n".join(lines)


def not_found(role: str, spec: str, module_name: str) -> str:
    """No module of that name: where modules are looked up, and the file form of a spec."""
    pythonpath = os.environ.get("PYTHONPATH")
    where = f"the current folder ({os.getcwd()})"
    where += f" and PYTHONPATH ({pythonpath})" if pythonpath else ", PYTHONPATH (not set)"
    top = module_name.split(".")[0]
    nearby = sorted(p.stem for p in Path.cwd().glob("*.py")) + sorted(
        p.name for p in Path.cwd().iterdir() if p.is_dir() and (p / "__init__.py").is_file()
    )
    _, _, attr = spec.rpartition(":")
    return (
        f"{role} spec {spec!r}: no module named {module_name!r}{did_you_mean(top, nearby)}; modules are looked up "
        f"in {where} and the installed packages; for a file elsewhere, name it: path/to/{top}.py:{attr}"
    )


def offer_names(target: Any, name: str) -> str:
    """For a missing attribute: the close names, and the classes a module defines (where the typo usually is)."""
    names = [n for n in dir(target) if not n.startswith("_")]
    hint = did_you_mean(name, names)
    if inspect.ismodule(target):
        classes = sorted(
            n for n in names if inspect.isclass(getattr(target, n)) and getattr(target, n).__module__ == target.__name__
        )
        if classes:
            hint += f"; its classes: {', '.join(classes)}"
    return hint
