"""Comparing people's and firms' names the way a screening desk does.

One function, shared by domain tools (a watch-list screen, an owner-name
comparison) and by the checks' ``"match": {"<argument>": "name"}`` option, so a
check and the tool it judges cannot disagree about which names are the same.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["normalize_name"]


def normalize_name(name: str) -> str:
    """Case, accents, punctuation and word order ignored: ``'Ivanova, Petra'`` and ``'petra IVANOVA'`` give
    ``'ivanova petra'``; ``'Lin, Kyaw Zaw'`` and ``'Kyaw Zaw Lin'`` give ``'kyaw lin zaw'``."""
    plain = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode().lower()
    return " ".join(sorted(re.sub(r"[^a-z0-9 ]+", " ", plain).split()))
