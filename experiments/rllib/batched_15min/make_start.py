"""The iteration-0 actor of configs/train/rllib.yaml (then rllib_batched.yaml) (the heuristic's
weights, 17
features) saved as a checkpoint in /tmp/start17, to evaluate the start of docs/rllib.md's
15-minute run::

    PYTHONPATH=. .venv/bin/python experiments/rllib/batched_15min/make_start.py
    .venv/bin/allfives eval --agents ckpt:/tmp/start17 heuristic --games 200 --seed 20261243
"""

import json
from pathlib import Path

from allfives_agents.features.action_features import FEATURES
from allfives_env.game.observation import OBS_SIZE
from allfives_env.game.rules import make_rules
from allfives_env.game.tiles import N_ACTIONS
from allfives_train.algorithms.ppo_batched.net import make_agent_net
from allfives_train.shell.checkpoints import make_card

net = make_agent_net("action_features", OBS_SIZE, N_ACTIONS, [128, 128], "relu", "fp32", 0.25,
                     "heuristic", 17)
policy = net.numpy_policy()
out = Path("/tmp/start17")
out.mkdir(exist_ok=True)
policy.save(out / "policy.npz")
card = make_card(make_rules(), policy, 0, 0.0, {"note": "engine batched start, iteration 0"},
                 [], None)
card["policy"].update(kind=str(policy.arrays()["kind"]), features=list(FEATURES[:17]))
(out / "card.json").write_text(json.dumps(card, indent=1))
