"""How many threads the core's numpy work (which releases the GIL) may spread over in this process: the
machine's cores, or fewer where the caller already keeps the cores busy with processes (a batch's workers)."""

from __future__ import annotations

import os

_limit: list[int | None] = [None]  # set by limit_threads


def usable_threads(most: int) -> int:
    """Threads for one piece of work: at most ``most``, the machine's cores and this process's limit."""
    return max(1, min(most, os.cpu_count() or 1, _limit[0] or most))


def limit_threads(count: int | None) -> None:
    """Let this process's work use at most ``count`` threads (``None``: as many as the cores)."""
    _limit[0] = count
