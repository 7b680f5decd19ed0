"""``search_distill``'s labels on the batched engine: the games of one shard played at once.

The rows are those :class:`allfives_train.algorithms.search_distill.label.Labeller` writes, from the
same
distribution:
at each decision with a real choice (more than one legal move, none that wins now), the
acting seat's observation, the per-action features of its legal moves and each legal move's
rollout mean from the teacher, a ``search`` id, here its batched version
(:meth:`allfives_agents.batched.bots.BatchedSearch.values`: the numba kernel
:func:`allfives_agents.batched.search.search_values`, or with ``net=...`` the lock-step rollouts of
:mod:`allfives_agents.batched.netsearch`; held to the scalar agents where the world is known by
``tests/test_label_engine.py`` and ``tests/test_batched_netsearch.py``); then the seat plays the
teacher's best move with probability ``mix`` and otherwise the student's argmax. Observation,
features and student are the batched engine's (the scalar ones' numbers, by their own
differential tests). A shard's content depends on its seed alone.

A ``search:net=...`` teacher with ``prior``, ``topk`` or ``infer`` has no batched version: it
labels on the scalar engine (``engine: auto`` chooses it).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from allfives_agents.trained.policy_numpy import NumpyPolicy
from allfives_env.game.rules import Rules


def label_games(rules: Rules, teacher: str, student: NumpyPolicy, mix: float, games: int,
                seed: int) -> dict[str, list[np.ndarray]]:
    """Play ``games`` whole games with every seat a labeller; the rows of ``KEYS``."""
    from allfives_agents.batched.bots import make_batched_bot, policy_actions
    from allfives_agents.batched.features import batched_features
    from allfives_env.batched_engine.games import BatchedGames

    rng = np.random.default_rng(seed)
    bot: Any = make_batched_bot(teacher, int(rng.integers(1 << 31)))
    g = BatchedGames(rules, games, int(rng.integers(1 << 31)), autoreset=False)
    g.reset()
    k = int(student.n_features)
    rows: dict[str, list[np.ndarray]] = {"obs": [], "feat": [], "act": [], "val": []}
    actions = np.full(games, -1, dtype=np.int64)
    while g.in_play.any():
        live = np.flatnonzero(g.in_play).astype(np.int64)
        best, values = bot.values(g, live, keep=True)
        obs, mask = g.observe_and_mask(live)
        feats = batched_features(g, live, k=k)
        x = np.concatenate([obs, feats.reshape(len(live), -1)], axis=1)
        own = policy_actions(student, x, mask)
        real = ~np.isnan(values).all(axis=1)
        theirs = real & (rng.random(len(live)) >= mix)
        for j in np.flatnonzero(real):
            legal = np.flatnonzero(mask[j])
            rows["obs"].append(obs[j].astype(np.float16))
            rows["feat"].append(feats[j, legal].astype(np.float16))
            rows["act"].append(legal.astype(np.int16))
            rows["val"].append(values[j, legal].astype(np.float32))
        actions[:] = -1
        actions[live] = np.where(theirs, own, best)
        g.step_unchecked(actions)
    return rows
