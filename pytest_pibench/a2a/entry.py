"""The ``pi-bench-green`` console script's entry: light on purpose.

:func:`green_main` says which extra to install when the A2A dependencies are
missing, before anything imports them (no traceback for a missing extra).
"""

from __future__ import annotations

import importlib.util
import sys

__all__ = ["A2A_MODULES", "green_main", "missing_a2a_modules"]

A2A_MODULES = ("a2a", "starlette", "uvicorn", "httpx", "tenacity")
"""What the ``a2a`` extra installs that network mode imports (``a2a`` is the a2a-sdk distribution)."""


def missing_a2a_modules() -> list[str]:
    """The modules of :data:`A2A_MODULES` this environment lacks."""
    return [name for name in A2A_MODULES if importlib.util.find_spec(name) is None]


def green_main() -> None:
    """``pi-bench-green``: without the ``a2a`` extra, one line saying how to install it (exit 4), no traceback."""
    missing = missing_a2a_modules()
    if missing:
        print(
            f"pi-bench-green needs the a2a extra (missing: {', '.join(missing)}): "
            "pip install 'pytest-pibench[a2a]'",
            file=sys.stderr,
        )
        raise SystemExit(4)
    from pytest_pibench.a2a.green import main

    main()
