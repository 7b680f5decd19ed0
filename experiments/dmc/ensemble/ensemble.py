"""Does averaging the action values of several Deep Monte-Carlo networks help? (issue 11)

``ensemble:DIR+DIR+...``: each network's logits on the same input (the observation and the
per-action features, computed once), summed; the best legal move is played. Every member
must read the same features. Registered here and played with ``allfives eval``'s own code:

    PYTHONPATH=. python experiments/dmc/ensemble/ensemble.py \\
        --agents ensemble:experiments/checkpoints/dmc2_all_fives_2p+runs/dmc2_seed1_2p/final search \\
        --games 1000 --seed 1000
"""

from __future__ import annotations

import sys

import numpy as np

from allfives.cli import main
from allfives_agents.base import Agent, Obs, register_prefix
from allfives_agents.features.action_features import policy_input
from allfives_agents.trained.checkpoint import load_checkpoint
from allfives_env.game.view import SeatView


class Ensemble(Agent):
    """The summed logits of the checkpoints in ``refs``."""

    needs_obs = True

    def __init__(self, refs: list[str], seed: int | None = None) -> None:
        super().__init__(seed)
        self.policies = [load_checkpoint(r)[2] for r in refs]
        if len({getattr(p, "n_features", 0) for p in self.policies}) != 1:
            raise ValueError("ensemble: the members read different feature counts")

    def act(self, obs: Obs, view: SeatView) -> int:
        if len(view.legal) == 1:
            return view.legal[0]
        x = policy_input(self.policies[0], obs["observation"], view)
        z = np.sum([p.logits(x) for p in self.policies], axis=0)
        mask = np.full(z.shape, -np.inf)
        mask[list(view.legal)] = 0.0
        return int(np.argmax(z + mask))


register_prefix("ensemble", lambda rest, seed: Ensemble(rest.split("+"), seed))

if __name__ == "__main__":  # allfives eval itself, with the agent above registered
    raise SystemExit(main(["eval", *sys.argv[1:]]))
