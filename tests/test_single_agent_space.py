"""Issue 9 item 16: the single-agent wrapper's observation space holds every observation,
the corner where a seat holds 21 tiles (hand_sizes 2.1: five_up or muggins, 2 seats) too."""

from __future__ import annotations

import numpy as np
import pytest

import allfives_train.games.single_agent as single_agent
from allfives_env.game.engine import Deal, GameState, random_deal
from allfives_env.game.observation import OBS_VIEWS
from allfives_env.game.rules import make_rules
from allfives_env.game.tiles import TILE_INDEX, TILES


def _draw_everything_deal() -> Deal:
    """Seat 0 holds the seven sixes (and leads [6|6]); seat 1 and the boneyard hold no six,
    so seat 1 draws all 14 boneyard tiles and holds 21."""
    sixes = [TILE_INDEX[(n, 6)] for n in range(7)]
    others = [t for t, (a, b) in enumerate(TILES) if 6 not in (a, b)]
    return Deal([sixes, others[:7]], others[7:])


@pytest.mark.parametrize("preset", ["five_up", "muggins"])
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_observations_at_21_tiles_lie_in_the_space(preset: str, seed: int,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    rules = make_rules(preset, players=2)

    def dealt(rules_, seed_, log=True):
        first = _draw_everything_deal()
        return GameState(rules_, np.random.default_rng(seed_), log=log,
                         dealer=lambda k, rng: first if k == 0 else random_deal(rules_, rng))

    monkeypatch.setattr(single_agent, "new_game", dealt)
    env = single_agent.AllFivesSingleAgentEnv(rules=rules, seed=seed)
    obs, _ = env.reset(seed=seed)
    seen = [obs]
    for _ in range(3):
        obs, _, term, trunc, _ = env.step(int(np.flatnonzero(env.action_masks())[0]))
        seen.append(obs)
        if term or trunc:
            break
    assert max(o[OBS_VIEWS["hand_sizes"]].max() for o in seen) == pytest.approx(2.1)
    for o in seen:
        assert env.observation_space.contains(o)


@pytest.mark.parametrize("bad", [5.7, "1", True, None, np.float64(3.0)])
def test_the_single_agent_env_refuses_a_non_integer_action(bad) -> None:
    env = single_agent.AllFivesSingleAgentEnv(seed=0)
    obs, info = env.reset(seed=0)
    legal = int(np.flatnonzero(info["action_mask"])[0]) if "action_mask" in info else None
    with pytest.raises(ValueError, match="an action is an integer"):
        env.step(bad)
    if legal is not None:  # nothing changed: a legal integer still plays
        env.step(np.int64(legal))


@pytest.mark.parametrize("wrap", [lambda a: np.array([a]), lambda a: np.array([[a]]),
                                  lambda a: np.array(float(a)), lambda a: np.array(True),
                                  lambda a: [a], lambda a: (a,)])
def test_an_action_must_be_a_scalar(wrap) -> None:
    """A legal action wrapped in a shape-(1,) array (or a list, a float or bool array) is one
    clear error, and nothing changes: a scalar (int, 0-d integer array) plays."""
    env = single_agent.AllFivesSingleAgentEnv(seed=0)
    env.reset(seed=0)
    legal = int(np.flatnonzero(env.action_masks())[0])
    with pytest.raises(ValueError, match="an action is an integer"):
        env.step(wrap(legal))
    _, _, terminated, _, info = env.step(np.array(legal))
    assert "illegal_action" not in info and not terminated
