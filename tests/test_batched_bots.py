"""The batched bots choose what the scalar bots choose on the same positions.

Positions come from games played by random legal actions in both engines with the same deals
(as in ``test_batched_diff``); at every decision the batched greedy and heuristic choices for
all games at once are compared with ``GreedyAgent`` / ``HeuristicAgent`` on each game's
``SeatView``. The heuristic's values are floats summed in the same order in both, so its
choices are identical, not just close.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("numba")

from test_batched_diff import Deals  # noqa: E402

from allfives_agents.base import make_agent  # noqa: E402
from allfives_agents.batched.bots import BatchedPolicy, make_batched_bot, policy_actions  # noqa: E402
from allfives_env.batched_engine.games import BatchedGames  # noqa: E402
from allfives_env.game.engine import GameState  # noqa: E402
from allfives_env.game.observation import OBS_SIZE  # noqa: E402
from allfives_env.game.rules import make_rules  # noqa: E402
from allfives_env.game.tiles import N_ACTIONS  # noqa: E402
from allfives_env.game.view import SeatView  # noqa: E402

CONFIGS = [("all_fives", 2, False), ("five_up", 3, False), ("muggins", 4, True),
           ("pagat", 4, False), ("all_fives", 4, True)]


def _positions(preset: str, players: int, teams: bool, decisions: int, seed: int = 0):
    """Yield (games, states, live games) at every decision of random-play games."""
    rules = make_rules(preset, players=players, teams=teams)
    rng = np.random.default_rng(seed)
    deals = Deals(rules, rng)
    done, chunk, batch = 0, 0, 16
    while done < decisions:
        deals.game = dict.fromkeys(range(batch), chunk)
        games = BatchedGames(rules, batch, seed=seed, autoreset=False, dealer=deals.get)
        games.reset()
        states = [GameState(rules, log=False, dealer=lambda k, _r, b=b: deals.get(b, k))
                  for b in range(batch)]
        while not all(s.game_over for s in states) and done < decisions:
            live = np.array([b for b, s in enumerate(states) if not s.game_over])
            yield games, states, live
            actions = np.full(batch, -1, dtype=np.int64)
            for b in live:
                legal = states[b].legal_actions()
                actions[b] = legal[int(rng.integers(len(legal)))]
            games.step(actions)
            for b in live:
                st = states[b]
                st.apply(int(actions[b]))
                if st.hand_over and not st.game_over:
                    st.next_hand()
            done += len(live)
        chunk += 1


@pytest.mark.parametrize("preset,players,teams", CONFIGS)
@pytest.mark.parametrize("agent_id", ["greedy", "heuristic", "heuristic:reply=0.3,keep=0.7"])
def test_same_choice_as_scalar_bot(agent_id: str, preset: str, players: int,
                                   teams: bool) -> None:
    bot = make_batched_bot(agent_id)
    scalar = make_agent(agent_id, seed=0)
    compared = 0
    for games, states, live in _positions(preset, players, teams, 3000):
        got = bot.act(games, live)
        for j, b in enumerate(live):
            view = SeatView.of(states[b], states[b].current)
            assert got[j] == scalar.act({}, view), (agent_id, int(b), view)
            compared += 1
    assert compared >= 3000


def test_random_bot_is_legal_and_seeded() -> None:
    games = BatchedGames(make_rules("five_up", players=3), 64, seed=1)
    games.reset()
    picks = []
    for _ in range(2):
        bot = make_batched_bot("random", seed=5)
        picks.append(bot.act(games, np.arange(64)))
    assert np.array_equal(picks[0], picks[1])
    mask = games.legal_mask()
    assert mask[np.arange(64), picks[0]].all()


class _Linear:
    def __init__(self, rng: np.random.Generator) -> None:
        self.w = rng.normal(size=(OBS_SIZE, N_ACTIONS)).astype(np.float32)

    def logits(self, obs: np.ndarray) -> np.ndarray:
        return obs @ self.w


def test_policy_bot_matches_numpy_policy_argmax() -> None:
    from allfives_agents.trained.policy_numpy import NumpyPolicy

    rng = np.random.default_rng(0)
    policy = NumpyPolicy([(rng.normal(size=(OBS_SIZE, 16)), np.zeros(16)),
                          (rng.normal(size=(16, N_ACTIONS)), np.zeros(N_ACTIONS))], "tanh")
    games = BatchedGames(make_rules("all_fives"), 32, seed=2)
    games.reset()
    idx = np.arange(0, 32, 2)
    got = BatchedPolicy(policy).act(games, idx)
    obs, mask = games.observe_and_mask(idx)
    for j in range(len(idx)):
        assert got[j] == policy.act(obs[j], mask[j].astype(np.int8))
    sampled = policy_actions(_Linear(rng), obs, mask, np.random.default_rng(1))
    assert mask[np.arange(len(idx)), sampled].all()


def test_checkpoint_bot_matches_scalar_checkpoint_agent() -> None:
    """Batched forward passes sum in another order than one-row ones (float32), so a
    near-tie could flip an argmax: require agreement on at least 99.5% of positions."""
    from allfives_env.game.observation import observe

    agent_id = "ckpt:all_fives_2p"
    bot, scalar = make_batched_bot(agent_id), make_agent(agent_id)
    same = total = 0
    for games, states, live in _positions("all_fives", 2, False, 1500):
        got = bot.act(games, live)
        for j, b in enumerate(live):
            st = states[b]
            legal = st.legal_actions()
            mask = np.zeros(N_ACTIONS, dtype=np.int8)
            mask[legal] = 1
            obs = {"observation": observe(st, st.current, legal), "action_mask": mask}
            same += int(got[j] == scalar.act(obs, SeatView.of(st, st.current)))
            total += 1
    assert total >= 1500 and same >= 0.995 * total


def test_one_registry_builds_scalar_and_batched_bots_by_the_same_id() -> None:
    """Each registered batched version is declared beside its scalar agent (allfives_agents.base
    register(..., batched=...)); the refusal lists exactly the registry's batched ids."""
    from allfives_agents.base import available_agents, batched_agents

    names = [n for n in batched_agents() if not n.endswith("<...>")]
    assert {"random", "greedy", "heuristic", "search"} <= set(names)
    assert set(names) <= set(available_agents())
    for name in names:
        bot = make_batched_bot(name, seed=0)
        assert type(bot).name == name
    with pytest.raises(ValueError, match="infer has no batched version"):
        make_batched_bot("search:net=checkpoints/all_fives_2p,infer=0.5")
    with pytest.raises(ValueError) as err:
        make_batched_bot("openspiel:mcts")
    assert ", ".join(batched_agents()) in str(err.value)
    with pytest.raises(ValueError, match="takes no options"):
        make_batched_bot("greedy:x=1")
