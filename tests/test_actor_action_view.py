"""The fast path's and Deep Monte-Carlo's actor over an env action view (``actor.action_view:
facts``, from zero weights) and DMC over the observation alone (``policy: mlp``): the config's
checks, tiny runs whose checkpoints are of kind ``action_view/facts`` and play as ``ckpt:``,
the exported policy equal to the trained network, and a resume."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("numba")

from allfives.cli import main  # noqa: E402
from allfives_agents.base import make_agent  # noqa: E402
from allfives_agents.trained.checkpoint import load_checkpoint  # noqa: E402
from allfives_agents.trained.policy_numpy import ViewResidualPolicy  # noqa: E402
from allfives_env.envs.action_views import action_view_names  # noqa: E402
from allfives_env.game.match import play_game  # noqa: E402
from allfives_env.game.rules import make_rules  # noqa: E402
from allfives_train.algorithms.ppo_batched.net import actor_from  # noqa: E402
from allfives_train.config import ACTOR, DEFAULT_CONFIG, load_config  # noqa: E402
from allfives_train.games.vector_env import AllFivesVectorEnv  # noqa: E402

FAST, DMC = DEFAULT_CONFIG.parent / "fast_2p.yaml", DEFAULT_CONFIG.parent / "dmc_2p.yaml"
TINY = ["--device", "cpu", "--n-envs", "8", "--n-steps", "16", "--batch-size", "64",
        "--n-epochs", "1", "--eval-games", "4", "--eval-every", "128", "--checkpoint-every",
        "128", "--snapshot-every", "128", "--total-steps", "256", "--quiet"]
FACTS = ["--policy", "action_features", "--action-view", "facts", "--feature-start", "zero"]
DMC_FROM_ZERO = ["--init-from", "null", "--features", "null", "--move-head", "0"]


def train(config: Path, run_dir: Path, *extra: str) -> int:
    return main(["train", "--config", str(config), "--run-dir", str(run_dir), *TINY, *extra])


@pytest.mark.parametrize("config,overrides,message", [
    (FAST, {"action_view": "facts"}, "action_view='facts': must be null or one of facts"),
    (FAST, {"policy": "action_features", "action_view": "raw", "feature_start": "zero"},
     "action_view='raw': must be null or one of"),
    (FAST, {"policy": "action_features", "action_view": "nope", "feature_start": "zero"},
     "action_view='nope'"),
    (FAST, {"policy": "action_features", "action_view": "facts"},
     "feature_start='heuristic': the heuristic's weights are over the registered features"),
    (DMC, {"action_view": "facts", "feature_start": "zero", "init_from": None},
     "features=17: is for the registered features"),
    (DMC, {"action_view": "facts", "feature_start": "zero", "features": None},
     "init_from='checkpoints/all_fives_2p': its actor reads the registered features"),
    (DMC, {"engine": "scalar"}, "engine='scalar': algo dmc runs on the batched engine"),
])
def test_a_bad_view_config_is_one_line(config: Path, overrides: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(")) as err:
        load_config(config, overrides)
    assert "\n" not in str(err.value)


def test_the_heuristic_view_may_start_at_the_heuristic() -> None:
    cfg = load_config(FAST, {"policy": "action_features", "action_view": "heuristic"})
    actor = cfg.section(ACTOR)
    assert (actor.action_view, actor.feature_start) == ("heuristic", "heuristic")


def _plays(ckpt: Path) -> None:
    """The checkpoint plays whole games as ``ckpt:`` against a bot, seeing its seat only."""
    agents = [make_agent(f"ckpt:{ckpt}"), make_agent("greedy")]
    assert play_game(make_rules("all_fives", players=2), agents, seed=5, log=False).game_over


def _same_logits(ckpt: Path) -> None:
    """The exported policy scores every legal move of real facts observations as the torch
    network rebuilt from it does, and reads 62 columns."""
    policy = load_checkpoint(str(ckpt))[2]
    assert isinstance(policy, ViewResidualPolicy) and policy.action_view == "facts"
    assert policy.n_features == len(action_view_names("facts"))
    net = actor_from(policy)
    assert net.action_view == "facts"
    envs = AllFivesVectorEnv(make_rules("all_fives", players=2), 16,
                             [{"agent": "greedy", "weight": 1.0}], seed=3, action_view="facts")
    obs, info = envs.reset(seed=3)
    mask = info["action_mask"].astype(bool)
    ours = policy.logits(obs)
    with torch.no_grad():
        theirs = net.logits(torch.as_tensor(obs), torch.as_tensor(mask)).numpy()
    np.testing.assert_allclose(ours[mask], theirs[mask], rtol=1e-4, atol=1e-4)


def test_fast_path_over_facts_trains_exports_plays_and_resumes(tmp_path: Path) -> None:
    run = tmp_path / "fast_facts"
    assert train(FAST, run, *FACTS) == 0
    card = json.loads((run / "final" / "card.json").read_text())
    assert card["policy"]["kind"] == "action_view/facts"
    assert card["policy"]["features"] == list(action_view_names("facts"))
    assert card["config"]["actor"]["action_view"] == "facts"
    _same_logits(run / "final")
    _plays(run / "final")
    assert train(FAST, run, *FACTS, "--resume", "--total-steps", "384") == 0
    assert json.loads((run / "final" / "card.json").read_text())["steps"] == 384


def test_dmc_over_facts_from_zero_weights(tmp_path: Path) -> None:
    run = tmp_path / "dmc_facts"
    assert train(DMC, run, *DMC_FROM_ZERO, "--action-view", "facts",
                 "--feature-start", "zero") == 0
    assert json.loads((run / "final" / "card.json").read_text())["policy"]["kind"] == \
        "action_view/facts"
    _same_logits(run / "final")
    _plays(run / "final")


def test_dmc_over_the_observation_alone(tmp_path: Path) -> None:
    """``policy: mlp``: 140 action values from the observation, the plain MLP checkpoint."""
    run = tmp_path / "dmc_raw"
    assert train(DMC, run, *DMC_FROM_ZERO, "--policy", "mlp") == 0
    card = json.loads((run / "final" / "card.json").read_text())
    assert "kind" not in card["policy"] and card["config"]["actor"]["policy"] == "mlp"
    _plays(run / "final")
