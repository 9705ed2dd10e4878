"""Per-trial seeds, derived exactly as upstream's A2A path (order- and worker-independent)."""

from __future__ import annotations

import hashlib

__all__ = ["derive_seed"]



def derive_seed(base_seed: int, key: str, trial: int) -> int:
    """``int(sha256(f"{base_seed}:{key}:{trial}")[:16], 16) % (2**63 - 1)``.

    ``key`` is the scenario file's stem (upstream's leaderboard path), so the
    same scenario, trial and base seed give the same seed under any ``-n``.
    """
    digest = hashlib.sha256(f"{base_seed}:{key}:{trial}".encode()).hexdigest()
    return int(digest[:16], 16) % (2**63 - 1)
