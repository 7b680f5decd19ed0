"""The RLlib trainer's warm start (``bc_teacher``): the SB3 trainer's behaviour cloning
(:mod:`allfives_train.algorithms.maskable_ppo.imitation`) applied to RLlib modules.

The teacher's decisions are collected exactly as for SB3 (its seat of a game against itself,
with the shaped reward's discounted returns); every trained module's actor is then fitted by
cross-entropy over the legal actions and its critic by squared error to the returns, in the
learner, and the new weights are pushed to every env runner.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from allfives_train.config import TrainConfig
from allfives_train.ppo_section import PPO
from allfives_train.rllib.section import RLLIB


def collect_teacher(cfg: TrainConfig) -> dict[str, np.ndarray]:
    """The teacher's decisions (``obs``, ``masks``, ``actions``, ``returns``)."""
    from allfives_train.algorithms.maskable_ppo.imitation import collect_parallel
    from allfives_train.config import load_config

    own = cfg.section(RLLIB)
    shaped = own.reward == "shaped"
    sb3 = load_config(None, {
        "preset": cfg.preset, "players": cfg.players, "teams": cfg.teams,
        "rules_file": cfg.rules_file, "rules": dict(cfg.rules), "bc_teacher": own.bc_teacher,
        "gamma": cfg.gamma,
        "margin_reward": cfg.margin_reward if shaped else float(own.reward == "points"),
        "win_reward": cfg.win_reward if shaped else float(own.reward == "win")})
    rules = cfg.game().rules
    return collect_parallel(sb3, rules, own.bc_samples, cfg.seed + 7, own.bc_workers)


def fit_module(module: Any, data: dict[str, np.ndarray], epochs: int, lr: float,
               vf_coef: float, seed: int, batch_size: int = 256) -> dict[str, float]:
    """Fit one ActionMaskingTorchRLModule to the teacher (in place); returns the held-out
    accuracy (10% of the decisions)."""
    import torch
    import torch.nn.functional as F

    from allfives_train.algorithms.maskable_ppo.imitation import fit_epochs, held_out_split

    rng, test, train = held_out_split(len(data["actions"]), seed)
    t = {"obs": torch.as_tensor(data["obs"]), "mask": torch.as_tensor(data["masks"]).float(),
         "act": torch.as_tensor(data["actions"]), "ret": torch.as_tensor(data["returns"])}

    def losses(idx: np.ndarray) -> tuple[Any, Any]:
        i = torch.as_tensor(idx)
        logits = module.forward_train({"obs": t["obs"][i], "action_mask": t["mask"][i]})[
            "action_dist_inputs"]
        values = module.compute_values({"obs": t["obs"][i]})
        return logits, values

    def loss_of(idx: np.ndarray) -> Any:
        logits, values = losses(idx)
        return F.cross_entropy(logits, t["act"][idx]) + vf_coef * F.mse_loss(
            values.flatten(), t["ret"][idx])

    fit_epochs(module, torch.optim.Adam(module.parameters(), lr=lr), train, rng, epochs,
               batch_size, loss_of)
    with torch.no_grad():
        logits, values = losses(test)
        acc = float((logits.argmax(dim=1) == t["act"][test]).float().mean())
        rmse = float(((values.flatten() - t["ret"][test]) ** 2).mean().sqrt())
    return {"accuracy": acc, "value_rmse": rmse, "samples": float(len(data["actions"]))}


def warm_start(algo: Any, cfg: TrainConfig, modules: list[str]) -> dict[str, float]:
    """Imitate ``rllib.bc_teacher`` with every module in ``modules``, in the learner(s), then
    give the env runners the new weights."""
    data = collect_teacher(cfg)
    own = cfg.section(RLLIB)

    def fit(learner: Any) -> dict[str, float]:
        out: dict[str, float] = {}
        for m in modules:
            out = fit_module(learner.module[m], data, own.bc_epochs, own.bc_lr,
                             cfg.section(PPO).vf_coef, cfg.seed)
        return out

    results = [r.get() for r in algo.learner_group.foreach_learner(fit)]  # one per learner
    stats = results[0]
    weights = algo.learner_group.get_weights(module_ids=modules)

    def _set(env_runner: Any) -> None:
        for m in modules:
            env_runner.module[m].set_state(weights[m])

    algo.env_runner_group.foreach_env_runner(_set)
    return stats
