"""Batched bots: decide for many games of a :class:`~allfives_env.batched_engine.games.BatchedGames`
at once.

Each bot has ``act(games, idx) -> actions``: one action for the seat to act of every game in
``idx`` (a 1-d int array of game slots). ``random``, ``greedy`` and ``heuristic`` (default
weights, or ``heuristic:reply=0.8,...``) run as numba kernels and choose what the scalar bots
of :mod:`allfives_agents.rulebased.bots` and :mod:`allfives_agents.rulebased.heuristic` choose on
the same position
(``random``: the same distribution, its own stream). ``search[:options]`` is a numba port of
:mod:`allfives_agents.planning.search` (:mod:`allfives_agents.batched.search`): the same choice
where the
world is known, the same distribution of sampled worlds elsewhere, its own stream. Network policies
(``ckpt:`` checkpoints, the learner's weights) run one numpy forward pass over the games'
observations::

    bot = make_batched_bot("heuristic", seed=0)
    actions = bot.act(games, np.flatnonzero(games.current == 1))
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from allfives_agents.planning.slot_streams import SlotStreams
from allfives_env.batched_engine.games import BatchedGames, kernels


class Logits(Protocol):
    """Anything with a batched ``logits(obs [n, 386]) -> [n, 140]`` (``NumpyPolicy``)."""

    def logits(self, obs: np.ndarray) -> np.ndarray: ...


def _bot_kernels() -> Any:
    kernels()  # the engine's kernels first: a clear install line when numba is missing
    from allfives_agents.batched import bot_kernels as batched_bot_kernels

    return batched_bot_kernels


class BatchedBot:
    """Base class: ``act(games, idx)`` returns ``[len(idx)]`` int64 legal actions."""

    name = "batched"

    def act(self, games: BatchedGames, idx: np.ndarray) -> np.ndarray:
        raise NotImplementedError


class BatchedRandom(BatchedBot):
    """Uniform over the legal actions; one splitmix64 stream per game slot."""

    name = "random"

    def __init__(self, seed: int | None = 0, **options: Any) -> None:
        _no_options("random", options)
        kernels()
        self.streams = SlotStreams(seed)

    def act(self, games: BatchedGames, idx: np.ndarray) -> np.ndarray:
        return games.random_actions(idx, self.streams.of(games))


class BatchedGreedy(BatchedBot):
    """``greedy``: most points now; ties: heaviest tile, then higher half, then lowest id."""

    name = "greedy"

    def __init__(self, seed: int | None = 0, **options: Any) -> None:
        _no_options("greedy", options)
        self.k = _bot_kernels()

    def act(self, games: BatchedGames, idx: np.ndarray) -> np.ndarray:
        out = np.empty(len(idx), dtype=np.int64)
        self.k.greedy_actions(np.asarray(idx, np.int64), games.G, games.A, out)
        return out


class BatchedHeuristic(BatchedBot):
    """``heuristic`` (:mod:`allfives_agents.rulebased.heuristic`): the same weights, the same
    choices."""

    name = "heuristic"

    def __init__(self, seed: int | None = 0, **options: Any) -> None:
        from allfives_agents.options import numeric_options
        from allfives_agents.rulebased.heuristic import DEFAULTS

        self.k = _bot_kernels()
        w = numeric_options("heuristic", options, DEFAULTS)
        self.weights = self.k.heuristic_weights(w)

    def act(self, games: BatchedGames, idx: np.ndarray) -> np.ndarray:
        out = np.empty(len(idx), dtype=np.int64)
        self.k.heuristic_actions(np.asarray(idx, np.int64), games.R, games.G, games.A,
                                 games.T, self.weights, out)
        return out


class BatchedSearch(BatchedBot):
    """``search`` (:mod:`allfives_agents.planning.search`) with the same options, as a numba kernel
    (:mod:`allfives_agents.batched.search`): the same choice where the world is known, the same
    distribution of sampled worlds elsewhere; one splitmix64 stream per game slot."""

    name = "search"

    def __init__(self, seed: int | None = 0, **options: Any) -> None:
        from allfives_agents.batched import search as batched_search
        from allfives_agents.planning.netsearch import make_search

        _bot_kernels()
        self.k = batched_search
        # the scalar agent's checks and defaults (with net=..., NetSearchAgent's)
        if str(options.get("net", "")).strip() == "best":
            raise ValueError("search:net=best has no batched version: name the model "
                             "(allfives models)")
        agent: Any = make_search(seed=seed, **options)
        self.opts = np.array([float(getattr(agent, key)) for key in batched_search.OPTION_ORDER])
        self.streams = SlotStreams(seed)
        self.net: Any = None
        if "net" in options:
            from allfives_agents.batched.netsearch import net_rollouts

            self.net = net_rollouts(agent, self.opts)

    def act(self, games: BatchedGames, idx: np.ndarray) -> np.ndarray:
        return self.values(games, idx)[0]

    def values(self, games: BatchedGames, idx: np.ndarray, keep: bool = False
               ) -> tuple[np.ndarray, np.ndarray]:
        """The chosen moves, and with ``keep`` ``[len(idx), 140]`` each searched move's mean
        rollout outcome in points at its action id (NaN elsewhere, and in the rows of moves
        taken unsearched: a single legal move, or a play that wins now)."""
        idx = np.asarray(idx, np.int64)
        out = np.empty(len(idx), dtype=np.int64)
        values = np.full((len(idx) if keep or self.net else 0, 140), np.nan)
        if self.net is not None:
            self.net.values(games, idx, self.streams.of(games), out, values)
        else:
            self.k.search_values(idx, games.R, games.G, games.A, games.T,
                                 self.streams.of(games), self.opts, out, values)
        return out, values


def policy_actions(policy: Logits, obs: np.ndarray, mask: np.ndarray,
                   rng: np.random.Generator | None = None,
                   temperature: float = 1.0) -> np.ndarray:
    """The argmax legal action per row, or a sample of the masked softmax when ``rng`` is
    given (the distribution of ``NumpyPolicy.act``, drawn by inverting each row's CDF)."""
    z = np.asarray(policy.logits(obs), dtype=np.float32)
    z[~mask] = -np.inf
    if rng is None:
        return z.argmax(axis=1).astype(np.int64)
    z -= z.max(axis=1, keepdims=True)
    if temperature != 1.0:
        z /= temperature
    np.exp(z, out=z)
    cdf = np.cumsum(z, axis=1, out=z)
    u = (1.0 - rng.random(len(cdf), dtype=np.float32)) * cdf[:, -1]
    picks = (cdf < u[:, None]).sum(axis=1)
    return np.minimum(picks, cdf.shape[1] - 1).astype(np.int64)


class BatchedPolicy(BatchedBot):
    """A numpy policy over the batch: argmax, or sampling when ``sample`` (or uniform
    over the legal actions while ``policy`` is None)."""

    card: dict[str, Any] | None = None

    def __init__(self, policy: Logits | None, name: str = "policy", sample: bool = False,
                 seed: int | None = 0, temperature: float = 1.0) -> None:
        self.policy, self.name, self.sample = policy, name, sample
        self.temperature = temperature
        self.rng = np.random.default_rng(seed)
        self._random = BatchedRandom(seed)

    def act(self, games: BatchedGames, idx: np.ndarray) -> np.ndarray:
        if self.policy is None:
            return self._random.act(games, idx)
        obs, mask = games.observe_and_mask(idx)
        view = getattr(self.policy, "action_view", None)
        if view:  # a policy over an action view: its rows from the batched engine
            rows = games.action_features(view=view)[idx]
            obs = np.concatenate([obs, rows.reshape(len(idx), -1)], axis=1)
        elif getattr(self.policy, "needs_features", False):  # heuristic-residual policies
            from allfives_agents.batched.features import batched_features

            feats = batched_features(games, idx, k=self.policy.n_features)  # type: ignore[attr-defined]
            obs = np.concatenate([obs, feats.reshape(len(idx), -1)], axis=1)
        return policy_actions(self.policy, obs, mask, self.rng if self.sample else None,
                              self.temperature)


def _no_options(name: str, options: dict[str, Any]) -> None:
    if options:
        raise ValueError(f"{name} takes no options; got {', '.join(sorted(options))}")


def policy_bot(agent_id: str, seed: int | None = 0) -> BatchedPolicy:
    """The batched version of a network agent (``ckpt:...``): its policy, one forward pass."""
    from allfives_agents.base import make_agent

    agent = make_agent(agent_id, seed=seed)
    if agent_id.partition(":")[2].partition(",")[0] == "best":
        raise ValueError("ckpt:best has no batched version: name the model (allfives models)")
    bot = BatchedPolicy(getattr(agent, "policy"), agent_id,  # noqa: B009
                        bool(getattr(agent, "sample", False)), seed,
                        float(getattr(agent, "temperature", 1.0)))
    bot.card = getattr(agent, "card", None)
    return bot


def make_batched_bot(agent_id: str, seed: int | None = 0) -> BatchedBot:
    """The batched version of the agent ``agent_id`` (the same id as :func:`make_agent`; the
    registry says which ids have one: :func:`allfives_agents.base.batched_agents`), made by
    the one builder, :func:`allfives_agents.base.make_batched`."""
    from allfives_agents.base import make_batched

    bot: BatchedBot = make_batched(agent_id, seed)
    return bot
