"""Handlers for upstream's tool names: the handler pack that serves upstream-format declarative packs.

A declarative pack (``tools.json``, no Python) gets its tools' behaviour from
handler packs, looked up by tool name: its own ``handlers.py`` first, if it
ships one, then this bundled pack (upstream-runtime.md §7.3-7.7: the shared
tools, finra, retail and helpdesk). Like a pack's ``tools.py``, this file is
loaded with :func:`pytest_pibench.packs.loading.load_pack_module` and may import
its siblings; it defines ``HANDLERS``, a
:class:`~pytest_pibench.packs.generic.HandlerSet`.
"""

from __future__ import annotations

from pytest_pibench.packs.generic import HandlerSet

from . import _common, _finra, _helpdesk, _retail

__all__ = ["HANDLERS"]

HANDLERS = HandlerSet.combine(_common.handlers, _finra.handlers, _retail.handlers, _helpdesk.handlers)
