"""Optional warm start before PPO: imitate a teacher bot (behaviour cloning).

The teacher (``bc_teacher``, e.g. ``heuristic``) plays the learner's seat of the same
single-agent env that PPO trains in, against the teacher at every other seat. Its decisions
give (observation, legal mask, action) and the env's rewards give discounted returns. The
actor is fitted by cross-entropy over the legal actions and the critic by squared error to
the returns, so PPO starts from a policy as good as the teacher with a value function that
already fits it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from agents.base import make_agent
from allfives_env.match import decide
from allfives_env.observation import OBS_SIZE
from allfives_env.rules import Rules
from train.config import TrainConfig
from train.single_agent import AllFivesSingleAgentEnv


def collect(cfg: TrainConfig, rules: Rules, samples: int, seed: int
            ) -> dict[str, np.ndarray]:
    """``samples`` teacher decisions with their masks and discounted returns."""
    teacher_id = str(cfg.bc_teacher)
    env = AllFivesSingleAgentEnv(rules, [{"agent": teacher_id, "weight": 1.0}], teacher_id,
                                 cfg.margin_reward, cfg.win_reward, seed=seed)
    teacher = make_agent(teacher_id, seed)
    obs_l, mask_l, act_l, ret_l = [], [], [], []
    obs, _ = env.reset(seed=seed)
    rewards: list[float] = []
    while len(act_l) < samples or rewards:
        action = decide(teacher, env.state)  # the teacher sees its seat's view only
        obs_l.append(obs)
        mask_l.append(env.action_masks())
        act_l.append(action)
        obs, reward, term, trunc, _ = env.step(action)
        rewards.append(reward)
        if term or trunc:
            g, returns = 0.0, []
            for r in reversed(rewards):
                g = r + cfg.gamma * g
                returns.append(g)
            ret_l.extend(reversed(returns))
            rewards = []
            obs, _ = env.reset()
    return {"obs": np.asarray(obs_l, np.float32), "masks": np.asarray(mask_l, bool),
            "actions": np.asarray(act_l, np.int64), "returns": np.asarray(ret_l, np.float32)}


def collect_parallel(cfg: TrainConfig, rules: Rules, samples: int, seed: int, workers: int
                     ) -> dict[str, np.ndarray]:
    """:func:`collect` split over ``workers`` processes (each its own seed), concatenated."""
    if workers <= 1:
        return collect(cfg, rules, samples, seed)
    import multiprocessing

    share = -(-samples // workers)
    with multiprocessing.get_context("spawn").Pool(workers) as pool:
        parts = pool.starmap(collect, [(cfg, rules, share, seed + 1000 * i)
                                       for i in range(workers)])
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}


def load_or_collect(cfg: TrainConfig, rules: Rules, seed: int, path: Path
                    ) -> dict[str, np.ndarray]:
    """The warm-start data: read from ``cfg.bc_data`` when set, else collected (with
    ``cfg.bc_workers`` processes) and saved to ``path`` for reuse."""
    if cfg.bc_data:
        try:
            with np.load(cfg.bc_data) as f:
                data = {k: f[k] for k in ("obs", "masks", "actions", "returns")}
        except (OSError, KeyError, ValueError) as exc:
            raise ValueError(f"bc_data {cfg.bc_data!r}: not readable warm-start data ({exc})"
                             ) from None
        if data["obs"].shape[1:] != (OBS_SIZE,):
            raise ValueError(f"bc_data {cfg.bc_data!r}: observations of size "
                             f"{data['obs'].shape[1:]}, this program uses {OBS_SIZE}")
        return data
    data = collect_parallel(cfg, rules, cfg.bc_samples, seed, cfg.bc_workers)
    with open(path, "wb") as f:
        np.savez_compressed(f, **data)
    return data


def pretrain(model: Any, data: dict[str, np.ndarray], epochs: int, batch_size: int,
             lr: float, vf_coef: float, seed: int) -> dict[str, float]:
    """Fit the model's actor and critic to ``data``; returns the held-out accuracy and
    value error (10% of the games' decisions held out)."""
    import torch

    policy = model.policy
    n = len(data["actions"])
    rng = np.random.default_rng(seed)
    order = rng.permutation(n)
    cut = max(1, n // 10)
    test, train = order[:cut], order[cut:]
    t = {k: torch.as_tensor(v) for k, v in data.items()}
    opt = torch.optim.Adam(policy.parameters(), lr=lr)
    policy.set_training_mode(True)
    for _ in range(epochs):
        for start in range(0, len(train), batch_size):
            idx = torch.as_tensor(train[start:start + batch_size])
            values, log_prob, _ = policy.evaluate_actions(
                t["obs"][idx], t["actions"][idx], action_masks=t["masks"][idx])
            loss = -log_prob.mean() + vf_coef * torch.nn.functional.mse_loss(
                values.flatten(), t["returns"][idx])
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
            opt.step()
        train = rng.permutation(train)
    policy.set_training_mode(False)
    with torch.no_grad():
        idx = torch.as_tensor(test)
        dist = policy.get_distribution(t["obs"][idx], action_masks=t["masks"][idx].numpy())
        pred = dist.distribution.probs.argmax(dim=1)
        values = policy.predict_values(t["obs"][idx]).flatten()
    return {"accuracy": float((pred == t["actions"][idx]).float().mean()),
            "value_rmse": float(((values - t["returns"][idx]) ** 2).mean().sqrt()),
            "samples": n}
