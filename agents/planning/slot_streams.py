"""One splitmix64 stream per game slot of a batched bot or search, all seeded from one seed
(numpy only: the batched bots and the batched ``search:net=...`` both use it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from allfives_env.batched_engine.games import BatchedGames


class SlotStreams:
    """One splitmix64 stream per game slot, all seeded from one seed."""

    def __init__(self, seed: int | None) -> None:
        self.seed = np.random.SeedSequence(seed).generate_state(1, np.uint64)[0]
        self.rng = np.zeros(0, dtype=np.uint64)

    def of(self, games: BatchedGames) -> np.ndarray:
        """The streams for ``games``' slots (made on first use and when the batch changes)."""
        if len(self.rng) != games.batch:
            self.rng = (np.arange(games.batch, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
                        + np.uint64(self.seed))
        return self.rng


__all__ = ["SlotStreams"]
