"""The loop that the fast path's algorithms share (``ppo_batched``, train/fastppo.py;
``dmc``, train/dmc.py), top to bottom, in the spirit of CleanRL's ``ppo.py``; each algorithm
passes its round (``learn``: one rollout with the current weights and one update) and this
module does the rest:

1. the network (:func:`allfives_train.fast_net.make_net`) and Adam, or both from the run's
   latest checkpoint (``resume``);
2. the env: ``n_envs`` games of the learner's seat against the opponent pool, cut into
   ``rollout_shards`` shards, each a Gymnasium ``VectorEnv``
   (:func:`allfives_train.shards.make_vector_env`: the batched engine when it is installed,
   else scalar envs in a loop), played by ``rollout_workers`` workers
   (:class:`allfives_train.rollouts.Rollouts`: this process, local processes or Ray actors;
   the same games whatever their number);
3. the loop: ``learn`` until ``total_steps``; after each round the hooks
   (:mod:`allfives_train.fast_hooks`) refresh the ``self`` opponents, freeze snapshots,
   evaluate, write checkpoints and print progress;
4. the final evaluation and checkpoint (``final/``) and the learning curve.

The run directory is locked while the run holds it (:class:`allfives_train.rundir.RunLock`);
Ctrl-C writes a checkpoint and raises :class:`allfives_train.rundir.TrainingInterrupted`, and
``--resume`` continues from there (from the newest readable checkpoint after a kill: what a
kill left half written is removed first). A run stopped before its first checkpoint is
started over by the same command, with or without ``--resume``
(:func:`allfives_train.rundir.start_over`).

The run directory has the same layout as the MaskablePPO path's (``train/ppo.py``), with
``trainer.pt`` in place of ``model.zip``. The network trains on ``device`` (``auto``: a GPU
where one exists); the games stay on the CPU. :func:`gae` (advantages and lambda-returns) is
shared too.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
import yaml

from allfives_agents.evaluation.threads import limit_blas_threads
from allfives_env.game.rules import Rules
from allfives_train import manifest
from allfives_train.checkpoints import write_text_atomic
from allfives_train.config import TrainConfig, make_rules_for
from allfives_train.fast_hooks import (
    TRAINER_FILE,
    Bar,
    Checkpointer,
    Evaluator,
    Hook,
    Progress,
    Run,
    SelfPlay,
    close_bar,
    write_history,
)
from allfives_train.fast_net import AgentNet, features_of, make_net, resolve_device
from allfives_train.precision import announce, choose_precision
from allfives_train.preflight import fast_preflight
from allfives_train.rollouts import Rollouts
from allfives_train.rundir import (
    TrainingInterrupted,
    already_holds_a_run,
    clean_leftovers,
    finished,
    holds_parts,
    not_a_folder,
    open_run,
    readable,
    resumable,
    set_aside,
    show_bar,
    start_over,
    warn,
)

#: One round of an algorithm: ``learn(agent, optimizer, envs, cfg, device)`` plays one
#: rollout on ``envs`` with the current weights, updates them and returns its statistics.
Learn = Callable[[AgentNet, torch.optim.Optimizer, Rollouts, TrainConfig, torch.device],
                 dict[str, float]]


def run(cfg: TrainConfig, learn: Learn, describe: str, resume: bool = False,
        quiet: bool = False, started: float | None = None, hooks: tuple[Hook, ...] = ()
        ) -> Path:
    """Train as ``cfg`` says with ``learn`` as each round (one rollout and one update);
    returns the final checkpoint directory. ``describe``: the algorithm, in the card.
    ``started``: when the command started (``time.perf_counter()``), counted in the card's
    ``wall_time_s``. ``hooks``: more hooks after the run's own (``allfives bench --train``'s
    clock; a hook may end the run early with ``run.stop = True``)."""
    started = time.perf_counter() if started is None else started
    torch.set_num_threads(cfg.torch_threads)
    limit_blas_threads(1)  # numpy (the opponents' forward passes): one thread
    device = resolve_device(cfg.device)
    rules = make_rules_for(cfg)
    fast_preflight(cfg, rules)
    run_dir = cfg.resolved_run_dir()
    not_a_folder(run_dir)
    if resume and not resumable(run_dir, TRAINER_FILE) and not holds_parts(run_dir):
        raise ValueError(f"--resume: no checkpoint to resume in {run_dir} (no run there: no "
                         f"checkpoints/step_* with {TRAINER_FILE}; a MaskablePPO run resumes "
                         "with algo: maskable_ppo)")
    if finished(run_dir, cfg.total_steps, resume):
        return run_dir / "final"
    with open_run(run_dir, resume, TRAINER_FILE):
        return _train_locked(cfg, learn, describe, rules, run_dir, device, resume, quiet,
                             started, hooks)


def _train_locked(cfg: TrainConfig, learn: Learn, describe: str, rules: Rules, run_dir: Path,
                  device: torch.device, resume: bool, quiet: bool, started: float,
                  extra: tuple[Hook, ...] = ()) -> Path:
    found = _check_run_dir(run_dir, resume)
    write_text_atomic(run_dir / "config.yaml", yaml.safe_dump(cfg.to_dict(), sort_keys=False))
    torch.manual_seed(cfg.seed)

    # ---- 1. the network and the optimizer (fresh, or where the last checkpoint left them) --
    precision = choose_precision(cfg.precision, device, cfg.policy)  # auto: bf16 where native
    announce(precision, quiet)
    agent = make_net(cfg, precision.precision).to(device)
    optimizer = torch.optim.Adam(agent.parameters(), lr=cfg.learning_rate, eps=1e-5)
    steps, history, wall0, previous = 0, [], 0.0, None
    if found is not None:
        previous, state, card = found
        agent.load_state_dict(state["agent"])
        optimizer.load_state_dict(state["optimizer"])
        steps, history, wall0 = state["steps"], card["eval_history"], card["wall_time_s"]
        torch.manual_seed(cfg.seed * 10_000 + steps)

    # ---- 2. the env: rollout shards on their workers (a resumed run continues on fresh seeds)
    envs = Rollouts(cfg, agent, features_of(agent), device)
    run = Run(cfg, rules, run_dir, agent, optimizer, envs, steps, history, wall0, quiet,
              t0=started, last=steps)
    if found is not None:  # what this checkpoint saw, once each (not what came after it)
        write_history(run)
    checkpointer = Checkpointer(describe)
    checkpointer.extra["rollouts"] = envs.describe()
    hooks: list[Hook] = [SelfPlay(), Evaluator(checkpointer), checkpointer, *extra]
    rollout = cfg.n_envs * cfg.n_steps
    if cfg.progress and not quiet:  # a bar with the time left (a terminal), else plain lines
        hooks.append(Bar(-(-cfg.total_steps // rollout) * rollout, cfg.algo.upper()))
        if not show_bar(cfg.progress, quiet):  # and the losses each 200,000 steps
            hooks.append(Progress(max(rollout, 200_000)))

    # ---- 3. learn -------------------------------------------------------------------------------
    try:
        for hook in hooks:
            hook.start(run)
        envs.reset(seed=cfg.seed * 10_000 + steps)
        while run.steps < cfg.total_steps and not run.stop:
            # the config's step size (a resumed run's too), or CleanRL's line down to 0
            share = 1.0 - run.steps / cfg.total_steps if cfg.anneal_lr else 1.0
            set_lr(optimizer, cfg.learning_rate * share)
            stats = learn(agent, optimizer, envs, cfg, device)  # one rollout, one update
            run.steps += cfg.n_envs * cfg.n_steps
            for hook in hooks:
                hook.rollout_end(run, stats)
            run.last = run.steps
    except KeyboardInterrupt:  # save what the last whole update left, say how to continue
        close_bar(run)
        if not quiet:
            print("allfives train: interrupted: saving a checkpoint...", file=sys.stderr,
                  flush=True)
        saved = checkpointer.step_checkpoint(run) if run.steps > steps else None
        raise TrainingInterrupted(run_dir, saved or previous, run.steps) from None
    finally:
        envs.close()

    # ---- 4. the final evaluation and checkpoint ---------------------------------------------
    close_bar(run)  # the steps' stage ends here, before the final evaluation's
    for hook in hooks:
        hook.finish(run)
    return run_dir / "final"


def set_lr(optimizer: torch.optim.Optimizer, lr: float) -> None:
    """Every parameter group's step size to ``lr``."""
    for group in optimizer.param_groups:
        group["lr"] = lr


def _check_run_dir(run_dir: Path, resume: bool
                   ) -> tuple[Path, dict[str, Any], dict[str, Any]] | None:
    """The checkpoint to resume with its trainer state and card (None: a fresh run). Removes
    what a kill left half written; sets aside unreadable checkpoints (the one before is
    tried); starts over a run that saved no checkpoint; refuses a fresh run over one that
    did."""
    for line in clean_leftovers(run_dir):
        warn(f"{run_dir}: {line} (left by an interrupted run)")
    found = resumable(run_dir, TRAINER_FILE)
    if found and not resume:
        raise already_holds_a_run(run_dir)
    for path in found:
        loaded = _load_checkpoint(path)
        if not isinstance(loaded, str):
            return (path, *loaded)
        set_aside(path, loaded)
    if found:
        raise ValueError(f"--resume: no readable checkpoint left in {run_dir} (set aside as "
                         "unreadable_*, see the warnings above; nothing was deleted): look at "
                         "them, or start a new run with another --run-dir")
    start_over(run_dir)
    return None


def _load_checkpoint(path: Path) -> tuple[dict[str, Any], dict[str, Any]] | str:
    """A checkpoint's trainer state (on the CPU; tensors only) and card, or what is wrong
    (a ValueError when the file is not the one this run wrote: its manifest's sha256)."""
    problem = readable(path, TRAINER_FILE)
    if problem is not None:
        return problem
    manifest.verify(path / TRAINER_FILE, path.parent.parent)  # unchanged since written
    try:
        card = json.loads((path / "card.json").read_text())
        float(card["wall_time_s"])
        state = torch.load(path / TRAINER_FILE, map_location="cpu", weights_only=True)
        int(state["steps"]), dict(state["agent"]), dict(state["optimizer"])
    except Exception as exc:  # noqa: BLE001 (torch's unpickler raises many kinds)
        return f"{TRAINER_FILE} does not load ({type(exc).__name__}: {exc})"
    return state, card


def gae(buf: dict[str, Any], agent: AgentNet, next_obs: np.ndarray, gamma: float,
        lam: float, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """Generalized advantage estimates and returns (a loop over time, vectorized over envs).
    A done step is not bootstrapped (same-step autoreset: the next row is a new game)."""
    with torch.no_grad():
        next_value = agent.value(torch.as_tensor(next_obs, device=device))
    rewards, values, dones = buf["rewards"], buf["values"], buf["dones"]
    advantages = torch.zeros_like(rewards)
    last = torch.zeros_like(next_value)
    for t in reversed(range(rewards.shape[0])):
        nxt = next_value if t == rewards.shape[0] - 1 else values[t + 1]
        live = 1.0 - dones[t]
        delta = rewards[t] + gamma * nxt * live - values[t]
        last = delta + gamma * lam * live * last
        advantages[t] = last
    return advantages, advantages + values
