"""Optional warm start before PPO: imitate a teacher bot (behaviour cloning).

The teacher (``bc_teacher``, e.g. ``heuristic``) plays the learner's seat of the same
single-agent env that PPO trains in, against the teacher at every other seat. Its decisions
give (observation, legal mask, action) and the env's rewards give discounted returns. The
actor is fitted by cross-entropy over the legal actions and the critic by squared error to
the returns, so PPO starts from a policy as good as the teacher with a value function that
already fits it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from allfives_agents.base import make_agent
from allfives_env.game.match import decide
from allfives_env.game.observation import OBS_SIZE
from allfives_env.game.rules import Rules
from allfives_env.game.tiles import N_ACTIONS
from allfives_train.algorithms.maskable_ppo.section import MASKABLE_PPO
from allfives_train.config import TrainConfig
from allfives_train.games.single_agent import AllFivesSingleAgentEnv
from allfives_train.games.workers import worker_init
from allfives_train.shell import manifest
from allfives_train.shell.faults import fault_point


def collect(cfg: TrainConfig, rules: Rules, samples: int, seed: int,
            on_game: Callable[[int], None] | None = None) -> dict[str, np.ndarray]:
    """``samples`` teacher decisions with their masks and discounted returns
    (``on_game(decisions)`` after every game, for a progress bar)."""
    teacher_id = str(cfg.section(MASKABLE_PPO).bc_teacher)
    env = AllFivesSingleAgentEnv(rules, [{"agent": teacher_id, "weight": 1.0}], teacher_id,
                                 cfg.margin_reward, cfg.win_reward, seed=seed)
    teacher = make_agent(teacher_id, seed)
    obs_l: list[np.ndarray] = []
    mask_l: list[np.ndarray] = []
    act_l: list[int] = []
    ret_l: list[float] = []
    obs, _ = env.reset(seed=seed)
    rewards: list[float] = []
    while len(act_l) < samples or rewards:
        action = decide(teacher, env.game)  # the teacher sees its seat's view only
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
            if on_game is not None:
                on_game(len(rewards))
            rewards = []
            obs, _ = env.reset()
    return {"obs": np.asarray(obs_l, np.float32), "masks": np.asarray(mask_l, bool),
            "actions": np.asarray(act_l, np.int64), "returns": np.asarray(ret_l, np.float32)}


def collect_parallel(cfg: TrainConfig, rules: Rules, samples: int, seed: int, workers: int,
                     on_part: Callable[[int], None] | None = None) -> dict[str, np.ndarray]:
    """:func:`collect` split over ``workers`` processes, in ``4 * workers`` parts (each its
    own seed) so that ``on_part(decisions)`` can show progress; concatenated in order."""
    if workers <= 1:
        return collect(cfg, rules, samples, seed, on_part)
    import multiprocessing

    parts_n = 4 * workers
    share = -(-samples // parts_n)
    tasks = [(cfg, rules, share, seed + 1000 * i) for i in range(parts_n)]
    parts = []
    with multiprocessing.get_context("spawn").Pool(workers, initializer=worker_init) as pool:
        for part in pool.imap(_collect_task, tasks):
            parts.append(part)
            if on_part is not None:
                on_part(len(part["actions"]))
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}


def _collect_task(task: tuple[TrainConfig, Rules, int, int]) -> dict[str, np.ndarray]:
    return collect(*task)


def read_bc_data(path: str | Path) -> dict[str, np.ndarray]:
    """Warm-start decisions from a ``.npz`` (a run's ``bc_data.npz``), every array read and
    checked; ValueError names the file and what is wrong."""
    keys = ("obs", "masks", "actions", "returns")
    try:
        with np.load(path, allow_pickle=False) as f:
            data = {k: np.asarray(f[k]) for k in keys}
    except KeyError as exc:
        raise ValueError(f"bc_data {str(path)!r}: not readable warm-start data (no array "
                         f"{exc}; it needs {', '.join(keys)})") from None
    except Exception as exc:  # noqa: BLE001 (zipfile, zlib, OS and format errors alike)
        raise ValueError(f"bc_data {str(path)!r}: not readable warm-start data "
                         f"({type(exc).__name__}: {exc})") from None
    n = len(data["actions"]) if data["actions"].ndim == 1 else -1
    shapes = {"obs": (n, OBS_SIZE), "masks": (n, N_ACTIONS), "actions": (n,), "returns": (n,)}
    for k, want in shapes.items():
        if n < 1 or data[k].shape != want:
            raise ValueError(f"bc_data {str(path)!r}: array {k} has shape {data[k].shape}, "
                             f"expected {want} (observations of size {OBS_SIZE}, "
                             f"{N_ACTIONS} actions, at least one decision)")
    acts = data["actions"]
    if acts.min() < 0 or acts.max() >= N_ACTIONS or \
            not data["masks"].astype(bool)[np.arange(n), acts].all():
        raise ValueError(f"bc_data {str(path)!r}: some actions are not legal by their masks")
    if not (np.isfinite(data["obs"]).all() and np.isfinite(data["returns"]).all()):
        raise ValueError(f"bc_data {str(path)!r}: observations or returns are not finite")
    return {"obs": data["obs"].astype(np.float32), "masks": data["masks"].astype(bool),
            "actions": acts.astype(np.int64), "returns": data["returns"].astype(np.float32)}


def load_or_collect(cfg: TrainConfig, rules: Rules, seed: int, path: Path,
                    on_part: Callable[[int], None] | None = None) -> dict[str, np.ndarray]:
    """The warm-start data: read from ``bc_data`` when set, else collected (with
    ``bc_workers`` processes) and saved to ``path`` for reuse."""
    own = cfg.section(MASKABLE_PPO)
    if own.bc_data:
        return read_bc_data(own.bc_data)
    data = collect_parallel(cfg, rules, own.bc_samples, seed, own.bc_workers, on_part)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with manifest.temporary(tmp):
        with open(tmp, "wb") as f:
            np.savez_compressed(f, allow_pickle=False, **data)
        manifest.note_pending(path, tmp)
        tmp.replace(path)
    return data


def held_out_split(n: int, seed: int) -> tuple[np.random.Generator, np.ndarray, np.ndarray]:
    """The generator, then 10% of ``n`` decisions held out and the rest, shuffled by ``seed``."""
    rng = np.random.default_rng(seed)
    order = rng.permutation(n)
    cut = max(1, n // 10)
    return rng, order[:cut], order[cut:]


def fit_epochs(module: Any, opt: Any, train: np.ndarray, rng: np.random.Generator,
               epochs: int, batch_size: int, loss_of: Callable[[np.ndarray], Any],
               after_epoch: Callable[[], None] | None = None) -> None:
    """``epochs`` passes over ``train`` in batches (gradients clipped at 1.0), reshuffled by
    ``rng`` after each: the imitation loop of the warm starts (SB3's and RLlib's)."""
    import torch

    for _ in range(epochs):
        for start in range(0, len(train), batch_size):
            loss = loss_of(train[start:start + batch_size])
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(module.parameters(), 1.0)
            opt.step()
        train = rng.permutation(train)
        if after_epoch is not None:
            after_epoch()


def pretrain(model: Any, data: dict[str, np.ndarray], epochs: int, batch_size: int,
             lr: float, vf_coef: float, seed: int,
             on_epoch: Callable[[], None] | None = None) -> dict[str, float]:
    """Fit the model's actor and critic to ``data``; returns the held-out accuracy and
    value error (10% of the games' decisions held out). ``on_epoch()`` after each epoch."""
    import torch

    policy = model.policy
    rng, test, train = held_out_split(len(data["actions"]), seed)
    device = policy.device  # SB3's: where the model trains
    t = {k: torch.as_tensor(v, device=device) for k, v in data.items()}

    def loss_of(batch: np.ndarray) -> Any:
        idx = torch.as_tensor(batch, device=device)
        values, log_prob, _ = policy.evaluate_actions(
            t["obs"][idx], t["actions"][idx], action_masks=t["masks"][idx])
        return -log_prob.mean() + vf_coef * torch.nn.functional.mse_loss(
            values.flatten(), t["returns"][idx])

    def after_epoch() -> None:
        fault_point("warm_start")
        if on_epoch is not None:
            on_epoch()

    policy.set_training_mode(True)
    fit_epochs(policy, torch.optim.Adam(policy.parameters(), lr=lr), train, rng, epochs,
               batch_size, loss_of, after_epoch)
    policy.set_training_mode(False)
    with torch.no_grad():
        idx = torch.as_tensor(test, device=device)
        dist = policy.get_distribution(t["obs"][idx],
                                       action_masks=t["masks"][idx].cpu().numpy())
        pred = dist.distribution.probs.argmax(dim=1)
        values = policy.predict_values(t["obs"][idx]).flatten()
    return {"accuracy": float((pred == t["actions"][idx]).float().mean()),
            "value_rmse": float(((values - t["returns"][idx]) ** 2).mean().sqrt()),
            "samples": len(data["actions"])}
