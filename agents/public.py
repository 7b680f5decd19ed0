"""The public API for other people's code: opponents in any AEC loop, and evaluation.

    policy = opponent("ckpt:best", env)              # any agent id: heuristic, level:easy, ...
    env.step(policy(agent))                          # in the AEC loop, for its seat
    evaluate(my_policy, against=["heuristic"], games=200, seed=0)   # win rates with 95% CIs

An :class:`Opponent` builds its seat's :class:`~allfives_env.game.view.SeatView` from the env
(that seat's hand and the public game, never another seat's hand) and asks its agent.
:func:`evaluate` plays the duplicate games of ``allfives eval`` (the same deals, seatings and
per-seat agents), so for agent ids its numbers are the CLI's on the same seed.
The top package ``allfives`` exports both (and ``make_agent``, ``save_policy``), as its public
API; ``allfives_agents`` exports :func:`opponent` (docs/environment.md).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from allfives_agents.base import Agent, Obs, make_agent
from allfives_env.env import AllFivesEnv
from allfives_env.game.match import legal_mask
from allfives_env.game.rules import Rules, make_rules
from allfives_env.game.seeding import check_seed
from allfives_env.game.view import SeatView

__all__ = ["Opponent", "evaluate", "opponent"]

#: A plain policy: ``policy(observation, action_mask) -> action`` (the arrays the env hands out).
Policy = Callable[[np.ndarray, np.ndarray], Any]


def _aec(env: Any) -> AllFivesEnv:
    base = getattr(env, "unwrapped", env)
    if not isinstance(base, AllFivesEnv):
        raise ValueError(f"an opponent plays an allfives AEC env (allfives_env.env(...)), not "
                         f"{type(env).__name__}")
    return base


class Opponent:
    """An agent in the seat of an AEC env: ``policy(agent)`` (``None`` once that agent is
    done, as ``env.step`` then wants) or ``policy.act(observation, env)``."""

    def __init__(self, agent: Agent, env: Any = None) -> None:
        self.agent, self.env = agent, env
        self._game: object = None

    @property
    def name(self) -> str:
        return self.agent.name

    def __call__(self, agent: str) -> int | None:
        if self.env is None:
            raise ValueError("this opponent has no env: make it with opponent(agent_id, env), "
                             "or call policy.act(observation, env)")
        base = _aec(self.env)
        if base.terminations[agent] or base.truncations[agent]:
            return None
        if agent != base.agent_selection:
            raise ValueError(f"{agent} is not to act: {base.agent_selection} is (call the "
                             "opponent for the agent of env.agent_iter())")
        return self.act(base.observe(agent), self.env)

    def act(self, observation: Obs | np.ndarray, env: Any = None) -> int:
        """The action of the seat to act in ``env`` (default: the env given at creation)."""
        base = _aec(env if env is not None else self.env)
        game = base.game
        if game is None or base._over:
            raise ValueError("no seat is to act: reset() the env, or the game is over")
        if game is not self._game:  # a new game: the agent starts afresh
            self._game = game
            self.agent.reset()
        view = SeatView.of(game, game.current)  # this seat's hand and the public game only
        if not isinstance(observation, dict):
            observation = {"observation": np.asarray(observation, dtype=np.float32),
                           "action_mask": legal_mask(view.legal)}
        return int(self.agent.act(observation, view))


def opponent(agent_id: str, env: Any = None, seed: int | None = None) -> Opponent:
    """An :class:`Opponent` playing ``agent_id`` (any id ``allfives eval`` takes:
    ``heuristic``, ``search:sims=200``, ``level:easy``, ``ckpt:best``, a model name, ...)."""
    return Opponent(make_agent(agent_id, check_seed(seed)), env)


class CallableAgent(Agent):
    """A plain Python policy as an agent: ``policy(observation, action_mask) -> action``."""

    def __init__(self, policy: Policy, name: str) -> None:
        super().__init__()
        self.policy, self.name = policy, name

    def act(self, obs: Obs, view: SeatView) -> int:
        action = self.policy(obs["observation"], obs["action_mask"])
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
            raise ValueError(f"policy {self.name!r} returned {action!r}: a policy returns an "
                             "integer action 0..139 that action_mask allows")
        return int(action)


def evaluate(policy: str | Agent | Policy, against: Sequence[str] = ("heuristic",),
             games: int = 200, seed: int = 0, preset: str = "all_fives",
             rules: Rules | None = None, **rule_options: Any) -> dict[str, Any]:
    """Play ``policy`` (an agent id, an :class:`Agent`, or ``policy(observation,
    action_mask) -> action``) against each id of ``against`` in ``games`` duplicate games
    (rounded up to whole seatings) per opponent. Returns ``{"policy", "preset", "players",
    "seed", "results": {opponent: pairing}}``, each pairing as in ``allfives eval --json``
    (``win_rate``, ``ci95`` (Wilson), ``wins``, ``losses``, ``draws``, ``games``, points)."""
    from allfives_agents.evaluation.evaluate import build_agent

    me, name = _entry(policy)
    against = _against(against, games)
    checked = check_seed(seed)
    if checked is None:
        raise ValueError("evaluate: seed=None: give an int >= 0 (the games depend on it)")
    if rules is None:
        rules = make_rules(preset, **rule_options)
    elif rule_options or preset != "all_fives":
        raise ValueError("give either rules=Rules(...) or a preset and rule options, not both")
    built: dict[tuple[str, int], Agent] = {}

    def agent(agent_id: str, seat: int) -> Agent:  # one per id and seat, as allfives eval
        if (agent_id, seat) not in built:
            built[agent_id, seat] = build_agent(agent_id, seat)
        return built[agent_id, seat]

    def pairing(opp: str) -> dict[str, Any]:
        def agent_for(entry: int, seat: int) -> Agent:
            if entry == 1:
                return agent(opp, seat)
            return agent(me, seat) if isinstance(me, str) else me

        return _pairing(rules, name, opp, games, checked, agent_for)

    for agent_id in [*against, *([me] if isinstance(me, str) else [])]:
        for_rules = getattr(agent(agent_id, 0), "for_rules", None)  # a bad id fails here,
        if for_rules is not None:  # and a level that cannot play this table
            for_rules(rules)
    results = {opp: pairing(opp) for opp in against}
    return {"policy": name, "preset": rules.preset, "players": rules.players,
            "teams": rules.teams, "seed": checked, "results": results}


def _entry(policy: str | Agent | Policy) -> tuple[str | Agent, str]:
    if isinstance(policy, str):
        make_agent(policy, 0)  # a bad id fails here, in one line
        return policy, policy
    if isinstance(policy, Agent):
        return policy, policy.name
    if callable(policy):
        name = getattr(policy, "__name__", type(policy).__name__)
        return CallableAgent(policy, name), name
    raise ValueError(f"evaluate: policy {policy!r} is neither an agent id, an Agent, nor a "
                     "callable policy(observation, action_mask) -> action")


def _against(against: Sequence[str], games: int) -> list[str]:
    if isinstance(against, str):
        against = [against]
    if not against or not all(isinstance(a, str) for a in against):
        raise ValueError(f"evaluate: against={against!r}: give a list of agent ids, e.g. "
                         "['heuristic', 'search']")
    if isinstance(games, bool) or not isinstance(games, int) or games < 1:
        raise ValueError(f"evaluate: games={games!r}: must be an integer >= 1")
    return list(dict.fromkeys(against))


def _pairing(rules: Rules, name: str, opp: str, games: int, seed: int,
             agent_for: Callable[[int, int], Agent]) -> dict[str, Any]:
    """The pairing row of ``allfives eval`` for (policy, opp): the same deals and seatings."""
    from allfives_agents.evaluation import report
    from allfives_agents.evaluation.evaluate import play_deal
    from allfives_env.game.match import game_seed, seatings

    n_deals = -(-games // len(seatings(rules)))
    outcomes = [o for d in range(n_deals)
                for o in play_deal(rules, agent_for, (0, 1), d, game_seed(seed, d))]
    return report.pairing_summary([name, opp], (0, 1), outcomes)
