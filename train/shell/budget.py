"""The step budget of a run, counted once, in its algorithm's own unit: the one place that
rounds it (to whole rollouts where the algorithm's steps come in rollouts).

The unit and the field that sets the budget are the algorithm's row of the table
(train/algos.py: :attr:`~allfives_train.algos.Algo.unit`, ``budget``, ``rollouts``):
learner ``steps`` (``total_steps``, in whole rollouts of ``n_envs * n_steps`` for the
algorithms whose steps come in rollouts), ``positions`` labelled (``search_distill``'s
``total_steps``) or RLlib ``iterations`` (``iterations``). The run shell says it in the start
line (:meth:`Budget.line`); the trainers' loops and progress bars stop at :meth:`Budget.end`.
"""

from __future__ import annotations

import dataclasses
from typing import Any


@dataclasses.dataclass(frozen=True)
class Budget:
    """What a run of one config trains for."""

    total: int
    """The config's value of :attr:`field`."""
    unit: str
    """What it counts: ``steps``, ``positions`` or ``iterations``."""
    field: str
    """The config field that sets it (``total_steps``, ``iterations``)."""
    rollout: int | None
    """Steps per rollout (``n_envs * n_steps``) where the steps come in whole rollouts."""
    why: str = ""
    """The rollout's make-up, for the start line (``n_envs 4 x n_steps 16``)."""

    def end(self, start: int = 0) -> int:
        """Where a run from ``start`` stops: whole rollouts from ``start`` up to
        :attr:`total` (``start`` itself when it is there already)."""
        if self.rollout is None:
            return self.total
        if start >= self.total:
            return start
        return start + -(-(self.total - start) // self.rollout) * self.rollout

    def line(self) -> str:
        """The start line's words for it: ``606,208 steps (total_steps 600,000 rounded up to
        whole rollouts of 8,192 steps: n_envs 256 x n_steps 32)``."""
        if self.rollout is None:
            return f"{self.total:,} {self.unit}"
        steps = self.end()
        if steps == self.total:
            return f"{steps:,} {self.unit}"
        return (f"{steps:,} {self.unit} ({self.field} {self.total:,} rounded up to whole "
                f"rollouts of {self.rollout:,} {self.unit}: {self.why})")


def budget(cfg: Any) -> Budget:
    """The budget of a run of ``cfg`` (its algo's row in train/algos.py says the unit)."""
    from allfives_train import algos

    row = algos.get(cfg.algo)
    total = int(cfg.value(row.budget))
    if not row.rollouts:
        return Budget(total, row.unit, row.budget, None)
    return Budget(total, row.unit, row.budget, cfg.n_envs * cfg.n_steps,
                  f"n_envs {cfg.n_envs} x n_steps {cfg.n_steps}")
