"""Who sits at the other seats during training: an opponent pool of agents.

Every opponent is an :class:`allfives_agents.base.Agent` and plays through the one game loop
(:mod:`allfives_env.game.match`), so it sees only its seat's observation and view. Network
opponents (the learner's current weights, its frozen snapshots, ``ckpt:`` checkpoints) run as
plain numpy (:class:`allfives_agents.trained.checkpoint.PolicyAgent`), not through torch.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from allfives_agents.base import Agent, make_agent
from allfives_agents.trained.checkpoint import PolicyAgent
from allfives_agents.trained.policy_numpy import NumpyPolicy

SELF, SNAPSHOTS = "self", "snapshots"


def policy_opponent(policy: NumpyPolicy | None, name: str, rng: np.random.Generator
                    ) -> PolicyAgent:
    """A sampling policy agent drawing from ``rng`` (the pool's generator)."""
    agent = PolicyAgent(policy, sample=True)
    agent.name, agent.rng = name, rng
    return agent


class OpponentPool:
    """Weighted opponent entries: agent ids, ``self`` and ``snapshots`` (see TrainConfig)."""

    def __init__(self, entries: list[dict[str, Any]], rng: np.random.Generator,
                 keep: int = 10) -> None:
        self.rng, self.keep = rng, keep
        self.ids = [str(e["agent"]) for e in entries]
        weights = np.array([float(e.get("weight", 1.0)) for e in entries])
        self.probs = weights / weights.sum()
        seed = int(rng.integers(2**31))
        self.fixed = {i: make_agent(i, seed) for i in self.ids if i not in (SELF, SNAPSHOTS)}
        self.current = policy_opponent(None, SELF, rng)
        self.snapshots: list[PolicyAgent] = []

    def set_rng(self, rng: np.random.Generator) -> None:
        """Draw opponents and the network opponents' moves from ``rng`` from now on."""
        self.rng = self.current.rng = rng
        for snap in self.snapshots:
            snap.rng = rng

    def set_self(self, arrays: dict[str, np.ndarray]) -> None:
        self.current.policy = NumpyPolicy.from_arrays(arrays)

    def add_snapshot(self, arrays: dict[str, np.ndarray], name: str) -> None:
        self.snapshots.append(policy_opponent(NumpyPolicy.from_arrays(arrays), name, self.rng))
        del self.snapshots[:-self.keep]

    def sample(self) -> Agent:
        choice = self.ids[int(self.rng.choice(len(self.ids), p=self.probs))]
        if choice == SELF or (choice == SNAPSHOTS and not self.snapshots):
            return self.current
        if choice == SNAPSHOTS:
            return self.snapshots[int(self.rng.integers(len(self.snapshots)))]
        return self.fixed[choice]
