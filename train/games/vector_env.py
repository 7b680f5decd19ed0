"""The learner's seat of N batched games as a ``gymnasium.vector.VectorEnv``.

The vectorised counterpart of :class:`allfives_train.games.single_agent.AllFivesSingleAgentEnv`,
over the
batched engine (:mod:`allfives_env.batched_engine.games`, needs numba)::

    envs = AllFivesVectorEnv(make_rules(), num_envs=256, seed=0,
                             opponents=[{"agent": "greedy", "weight": 1.0},
                                        {"agent": "self", "weight": 1.0}])
    obs, infos = envs.reset(seed=0)            # [N, 386] float32; infos["action_mask"]
    obs, rew, term, trunc, infos = envs.step(actions)   # actions: [N] ints
    envs.set_self(policy_arrays)               # NumpyPolicy arrays for the "self" opponents

Per game the learner's seat is drawn at random and every other seat gets an opponent drawn
from the pool by weight (with teams: the opposing team shares one draw and the partner is
``partner``). Opponents: ``random``, ``greedy``, ``heuristic[:weights]``,
``search[:options]`` (numba kernels), ``ckpt:PATH`` (numpy forward; ``ckpt:best`` and
``search:net=best`` play the shipped model for these rules), ``self`` (the weights
last given to :meth:`set_self`, sampling; uniform until then) and ``snapshots`` (frozen
copies given to :meth:`add_snapshot`, uniformly among the last ``snapshot_keep``; ``self``
while none).

Rewards are those of the single-agent env: ``margin_reward * (change of own side score minus
the mean change of the other sides) / target`` from the learner's move to its next decision,
plus ``+win_reward`` for a win and ``-win_reward / (sides - 1)`` for a loss at the end.

Actions: an integer array of shape ``(N,)`` (any numpy integer width, or a list of ints), each
in ``0..139``. A legal-range action the mask forbids ends that game as a loss (PettingZoo's
convention for classic games): reward ``-2 * win_reward``, ``terminated``,
``infos["illegal_action"]`` (mask ``infos["_illegal_action"]``), a new game in its slot.
Anything else (floats such as NaN, inf or 5.7, bools, strings such as ``"1"``, another shape,
a value outside ``0..139``) raises one ``ValueError`` line before any game moves. Seeds
(``seed=`` here and in :meth:`AllFivesVectorEnv.reset`): an int >= 0 or ``None``; ``reset``
also takes gymnasium's list of per-env seeds and uses the first.

Autoreset is ``SAME_STEP`` (``metadata["autoreset_mode"]``): a game that ends is replaced at
once, the returned observation is the new game's, and ``infos["final_obs"]`` (object array,
mask ``infos["_final_obs"]``) and ``infos["final_info"]`` (``won``, ``margin``, ``seat``,
``return``, ``length``) describe the game that ended (``infos["episode"]`` is left to
gymnasium's ``RecordEpisodeStatistics`` wrapper).

With ``action_view="facts"`` or ``"heuristic"`` (:mod:`allfives_env.envs.action_views`; default
``"raw"``) each observation is followed by the learner's rows of that view, ``[140, F]``
flattened: ``[N, 386 + 140 F]``, computed for every game at once (numba). With
``action_features=K`` (``True``: the 9 of ``action_features/1``) each observation is
followed by the first K of the learner's per-action features
(:mod:`allfives_agents.features.action_features`,
``[140, K]`` flattened): ``[N, 386 + 140 K]``. With ``hidden=True`` (an oracle critic's
training signal, never a player's input) the other seats' hands follow
(:func:`allfives_env.game.observation.hidden_hands`, 84 values): ``[N, 386 + 140 K + 84]``.
Network opponents whose policy ``needs_features`` get theirs too (batched, numba).
``infos["action_mask"]`` and :meth:`action_masks` give the legal actions ([N, 140] bool).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

import allfives_agents.features.action_views  # noqa: F401  (registers the heuristic view)
from allfives_agents.batched.bots import BatchedBot, BatchedPolicy, make_batched_bot
from allfives_agents.features.action_features import BASE_FEATURES
from allfives_agents.levels import naming_model
from allfives_agents.trained.policy_numpy import (
    NumpyPolicy,  # the one import of the numpy policy here
)
from allfives_env.batched_engine.games import BatchedGames, as_actions
from allfives_env.env import _obs_bounds
from allfives_env.envs.action_views import action_view_names, check_action_view, flat_bounds
from allfives_env.game.observation import HIDDEN_HANDS_SIZE, OBS_SIZE, hidden_hands
from allfives_env.game.rules import Rules, make_rules
from allfives_env.game.seeding import check_seed, first_seed
from allfives_env.game.tiles import N_ACTIONS

SELF, SNAPSHOTS = "self", "snapshots"
MAX_DEALS = 100


class AllFivesVectorEnv(gym.vector.VectorEnv):
    """N games, one learner seat each, batched opponents. See the module docstring."""

    metadata: dict[str, Any] = {"autoreset_mode": AutoresetMode.SAME_STEP}

    def __init__(self, rules: Rules | None = None, num_envs: int = 64,
                 opponents: list[dict[str, Any]] | None = None, seed: int | None = None,
                 margin_reward: float = 1.0, win_reward: float = 1.0, partner: str = SELF,
                 snapshot_keep: int = 10, action_features: bool | int = False,
                 hidden: bool = False, action_view: str = "raw") -> None:
        self.rules = rules or make_rules()
        self.num_envs = int(num_envs)
        seed = check_seed(seed)
        self.action_view = check_action_view(action_view)
        if action_features and self.action_view != "raw":
            raise ValueError(f"give action_view={action_view!r} or action_features="
                             f"{action_features!r}, not both")
        low, high = flat_bounds(*_obs_bounds(), self.action_view)
        self.n_features = (BASE_FEATURES if action_features is True
                           else int(action_features))
        self.action_features = self.n_features > 0
        if self.action_view != "raw":  # the view's rows take the features' place
            self.n_features = len(action_view_names(self.action_view))
        elif self.action_features:
            k = N_ACTIONS * self.n_features
            low = np.concatenate([low, np.full(k, -1.0, np.float32)])
            high = np.concatenate([high, np.full(k, 1.0, np.float32)])
        self.hidden = bool(hidden)
        if self.hidden:
            low = np.concatenate([low, np.zeros(HIDDEN_HANDS_SIZE, np.float32)])
            high = np.concatenate([high, np.ones(HIDDEN_HANDS_SIZE, np.float32)])
        self.single_observation_space = gym.spaces.Box(low, high, dtype=np.float32)
        self.single_action_space = gym.spaces.Discrete(N_ACTIONS)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.margin_reward, self.win_reward = float(margin_reward), float(win_reward)
        self.games = BatchedGames(self.rules, self.num_envs, seed, autoreset=False,
                                  action_view=self.action_view)
        self._rng = np.random.default_rng(seed)
        self._build_pool(opponents or [{"agent": "greedy", "weight": 1.0}], partner,
                         snapshot_keep, seed)
        n = self.num_envs
        self.seat = np.zeros(n, dtype=np.int64)
        self.who = np.zeros((n, 4), dtype=np.int64)
        self._before = np.zeros(n)
        self._mask = np.zeros((n, N_ACTIONS), dtype=bool)
        self._obs = np.zeros((n, OBS_SIZE), dtype=np.float32)
        self._feat = np.zeros((n, N_ACTIONS, 0 if self.action_view != "raw"
                               else self.n_features), dtype=np.float32)
        self._ret = np.zeros(n)
        self._len = np.zeros(n, dtype=np.int64)

    # ------------------------------------------------------------------ the pool
    def _build_pool(self, entries: list[dict[str, Any]], partner: str, keep: int,
                    seed: int | None) -> None:
        ids = [str(e["agent"]) for e in entries]
        weights = np.array([float(e.get("weight", 1.0)) for e in entries])
        if not len(ids) or weights.min() < 0 or weights.sum() <= 0:
            raise ValueError("opponents: give entries {agent: ID, weight: w >= 0}, weights "
                             "not all zero")
        self.probs = weights / weights.sum()
        self.players: list[BatchedBot] = [BatchedPolicy(None, SELF, sample=True, seed=seed)]
        self.snapshots: list[int] = []
        self.keep = int(keep)
        fixed: dict[str, int] = {}
        for agent_id in {*ids, partner} - {SELF, SNAPSHOTS}:  # ckpt:best: the model's name
            bot = make_batched_bot(naming_model(agent_id, self.rules), seed)
            card = getattr(bot, "card", None)
            if card is not None:
                from allfives_agents.trained.checkpoint import check_table

                check_table(card, self.rules, agent_id)
            fixed[agent_id] = len(self.players)
            self.players.append(bot)
        self.entry_player = [fixed.get(i, 0) for i in ids]
        self.entry_is_snapshot = [i == SNAPSHOTS for i in ids]
        self.partner_player = fixed.get(partner, 0)

    def set_self(self, arrays: dict[str, np.ndarray]) -> None:
        """Give the ``self`` opponents (and a ``self`` partner) these policy weights."""
        self.players[0].policy = NumpyPolicy.from_arrays(arrays)

    def add_snapshot(self, arrays: dict[str, np.ndarray], name: str) -> None:
        """Freeze a copy of the learner; the oldest is replaced after ``snapshot_keep``."""
        bot = BatchedPolicy(NumpyPolicy.from_arrays(arrays), name, sample=True,
                            seed=int(self._rng.integers(2**31)))
        if len(self.snapshots) < self.keep:
            self.snapshots.append(len(self.players))
            self.players.append(bot)
        else:
            slot = self.snapshots.pop(0)
            self.players[slot] = bot
            self.snapshots.append(slot)

    def _draw(self, k: int) -> np.ndarray:
        entries = self._rng.choice(len(self.probs), size=k, p=self.probs)
        out = np.array(self.entry_player, dtype=np.int64)[entries]
        snap = np.array(self.entry_is_snapshot)[entries]
        if snap.any() and self.snapshots:
            pick = self._rng.integers(len(self.snapshots), size=int(snap.sum()))
            out[snap] = np.array(self.snapshots)[pick]
        return out

    def _seat_games(self, idx: np.ndarray) -> None:
        """Draw the learner's seat and the opponents of the new games ``idx``."""
        n, k = self.rules.players, len(idx)
        self.seat[idx] = self._rng.integers(n, size=k)
        if self.rules.teams:
            foe = self._draw(k)
            for s in range(4):
                mine = (s % 2) == (self.seat[idx] % 2)
                self.who[idx, s] = np.where(mine, self.partner_player, foe)
        else:
            for s in range(n):
                self.who[idx, s] = self._draw(k)
        self._ret[idx] = 0.0
        self._len[idx] = 0

    # ------------------------------------------------------------------ gym API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[np.ndarray, dict[str, Any]]:
        seed = first_seed(seed)
        if seed is not None:
            self._rng = np.random.default_rng(seed)
            self.games.seed(seed)
        self.games.reset()
        self._start_games(np.arange(self.num_envs), dealt=True)
        return self._observe(), {"action_mask": self._mask.copy()}

    def step(self, actions: np.ndarray, skip: np.ndarray | None = None
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """One learner move in every game; ``skip`` ([N] bool): games left as they are (their
        action ignored, reward 0, not done: :class:`NextStepAutoreset` uses it)."""
        acts = as_actions(actions, self.num_envs, low=0)  # one ValueError line, nothing moved
        still = np.zeros(self.num_envs, dtype=bool) if skip is None else np.asarray(skip, bool)
        ok = self._mask[np.arange(self.num_envs), acts] | still
        res = self.games.step_unchecked(np.where(ok & ~still, acts, -1))  # legal or -1
        ended = res.game_over.copy()
        finals = np.where(ended[:, None], res.final_scores, 0)
        winners = np.where(ended, res.winners, -1)
        truncs = res.truncated.copy()
        self._advance(ok & ~ended & ~still, finals, ended, winners, truncs)
        scores = np.where(ended[:, None], finals, self.games.scores)
        margin = self._margin(scores)
        reward = self.margin_reward * (margin - self._before) / self.rules.target
        side = self._side(self.seat)
        decided = ended & (winners >= 0)
        won = decided & (winners == side)
        reward += np.where(won, self.win_reward, 0.0)
        reward -= np.where(decided & ~won, self.win_reward / (self.rules.n_sides - 1), 0.0)
        reward = np.where(ok, reward, -2.0 * self.win_reward)
        terminated = (ended & ~truncs) | ~ok
        truncated = ended & truncs & ok
        self._ret += reward
        self._len += ~still
        infos: dict[str, Any] = {}
        done = terminated | truncated
        if done.any():
            infos = self._finish(np.flatnonzero(done), won, margin, ok, acts)
        live = ~done
        self._before[live] = margin[live]
        obs = self._observe()
        infos["action_mask"] = self._mask.copy()
        return obs, reward.astype(np.float64), terminated, truncated, infos

    def action_masks(self) -> np.ndarray:
        """[N, 140] bool: the learner's legal actions in every game."""
        return self._mask.copy()

    def close_extras(self, **kwargs: Any) -> None:
        pass

    # ------------------------------------------------------------------ internals
    def _side(self, seats: np.ndarray) -> np.ndarray:
        return seats % 2 if self.rules.teams else seats

    def _margin(self, scores: np.ndarray) -> np.ndarray:
        """Own side score minus the mean of the other sides, per game."""
        n_sides = self.rules.n_sides
        own = scores[np.arange(len(scores)), self._side(self.seat)]
        return own - (scores.sum(axis=1) - own) / (n_sides - 1)

    def _advance(self, active: np.ndarray, finals: np.ndarray, ended: np.ndarray | None = None,
                 winners: np.ndarray | None = None, truncs: np.ndarray | None = None) -> None:
        """Play the opponents of the ``active`` games until the learner is to act (or the
        game ends: ``ended``/``finals``/``winners``/``truncs`` are updated in place)."""
        games, every = self.games, np.arange(self.num_envs)
        while True:
            cur = games.current
            waiting = active & games.in_play & (cur != self.seat)
            if not waiting.any():
                return
            actions = np.full(self.num_envs, -1, dtype=np.int64)
            who = self.who[every, cur]
            for p in np.unique(who[waiting]):
                idx = np.flatnonzero(waiting & (who == p))
                actions[idx] = self.players[p].act(games, idx)
            res = games.step_unchecked(actions)  # the pool's bots choose under the mask
            if ended is not None and winners is not None and truncs is not None \
                    and res.game_over.any():
                g = res.game_over
                ended |= g
                finals[g] = res.final_scores[g]
                winners[g] = res.winners[g]
                truncs[g] = res.truncated[g]
            active &= ~res.game_over

    def _finish(self, done: np.ndarray, won: np.ndarray, margin: np.ndarray, ok: np.ndarray,
                acts: np.ndarray) -> dict[str, Any]:
        """The infos of the games that ended, then their replacement by new games."""
        n = self.num_envs
        mask = np.zeros(n, dtype=bool)
        mask[done] = True
        final_obs = np.full(n, None, dtype=object)
        rows = self.games.observe_seat(self.seat[done], games=done)
        pad = N_ACTIONS * self.n_features + (HIDDEN_HANDS_SIZE if self.hidden else 0)
        for j, b in enumerate(done):  # the features of a finished game: zeros (no actions)
            final_obs[b] = np.concatenate([rows[j], np.zeros(pad, np.float32)])
        final_info = {"won": won & mask, "margin": margin * mask, "seat": self.seat * mask,
                      "return": np.where(mask, self._ret, 0.0),
                      "length": np.where(mask, self._len, 0)}
        for key in list(final_info):
            final_info[f"_{key}"] = mask.copy()
        infos: dict[str, Any] = {"final_obs": final_obs, "_final_obs": mask,
                                 "final_info": final_info, "_final_info": mask.copy()}
        if (~ok).any():
            infos["illegal_action"] = np.where(ok, -1, acts)
            infos["_illegal_action"] = ~ok
        self._start_games(done)
        return infos

    def _start_games(self, idx: np.ndarray, dealt: bool = False) -> None:
        """New games in slots ``idx``, played up to the learner's first move (a game that
        ends before it is dealt again, as in the single-agent env)."""
        for _ in range(MAX_DEALS):
            if not dealt:
                self.games.reset_games(idx)
            dealt = False
            self._seat_games(idx)
            fresh = np.zeros(self.num_envs, dtype=bool)
            fresh[idx] = True
            self._advance(fresh, np.zeros((self.num_envs, self.rules.n_sides)))
            self._before[idx] = self._margin(self.games.scores)[idx]
            idx = idx[~self.games.in_play[idx]]
            if not len(idx):
                return
        raise RuntimeError(f"{MAX_DEALS} games in a row ended before the learner's first "
                           f"move (rules {self.rules.to_dict()}): the rules leave it no move")

    def _observe(self) -> np.ndarray:
        """The learner's observation and mask in every game (into reused buffers)."""
        if self.action_view != "raw":
            return self._observe_view()
        self.games.observe_and_mask(out=self._obs, mask=self._mask)  # the learner is to act
        parts = [self._obs]
        if self.action_features:
            from allfives_agents.batched.features import batched_features

            batched_features(self.games, out=self._feat)
            parts.append(self._feat.reshape(self.num_envs, -1))
        # for the critic only (train/algorithms/ppo_batched/net.py reads them nowhere else)
        if self.hidden:
            parts.append(hidden_hands(self.games.hands, self.seat, self.rules.players))
        return np.concatenate(parts, axis=1) if len(parts) > 1 else self._obs.copy()

    def _observe_view(self) -> np.ndarray:
        """:meth:`_observe` with an action view: every part written straight into one new
        array (the rows are most of it: no second copy)."""
        n, width = self.num_envs, N_ACTIONS * self.n_features
        hidden = HIDDEN_HANDS_SIZE if self.hidden else 0
        out = np.empty((n, OBS_SIZE + width + hidden), dtype=np.float32)
        self.games.observe_and_mask(out=out[:, :OBS_SIZE], mask=self._mask)
        self.games.action_features(
            out=out[:, OBS_SIZE:OBS_SIZE + width].reshape(n, N_ACTIONS, self.n_features))
        if self.hidden:
            out[:, OBS_SIZE + width:] = hidden_hands(self.games.hands, self.seat,
                                                     self.rules.players)
        return out
