"""The loop that the fast path's algorithms share (``ppo_batched``,
train/algorithms/ppo_batched/trainer.py;
``dmc``, train/algorithms/dmc/trainer.py), top to bottom, in the spirit of CleanRL's ``ppo.py``;
each algorithm
passes its round (``learn``: one rollout with the current weights and one update) and this
module does the rest:

1. the network (:func:`allfives_train.algorithms.ppo_batched.net.make_net`) and Adam, or both from
the run's
   latest checkpoint (``resume``);
2. the env: ``n_envs`` games of the learner's seat against the opponent pool, cut into
   ``rollout_shards`` shards, each a Gymnasium ``VectorEnv``
   (:func:`allfives_train.games.shards.make_vector_env`: the batched engine when it is installed,
   else scalar envs in a loop), played by ``rollout_workers`` workers
   (:class:`allfives_train.games.rollouts.Rollouts`: this process, local processes or Ray actors;
   the same games whatever their number);
3. the loop: ``learn`` until ``total_steps``; after each round the hooks
   (:mod:`allfives_train.shell.hooks`) refresh the ``self`` opponents, freeze snapshots,
   evaluate, write checkpoints and print progress;
4. the final evaluation and checkpoint (``final/``) and the learning curve.

The run directory is locked while the run holds it (:class:`allfives_train.shell.rundir.RunLock`);
Ctrl-C writes a checkpoint and raises :class:`allfives_train.shell.rundir.TrainingInterrupted`, and
``--resume`` continues from there (from the newest readable checkpoint after a kill: what a
kill left half written is removed first). A run stopped before its first checkpoint is
started over by the same command, with or without ``--resume``
(:func:`allfives_train.shell.rundir.start_over`).

The run directory has the same layout as the MaskablePPO path's
(``train/algorithms/maskable_ppo/trainer.py``), with
``trainer.pt`` in place of ``model.zip``. The network trains on ``device`` (``auto``: a GPU
where one exists); the games stay on the CPU. :func:`gae` (advantages and lambda-returns) is
shared too.
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
import yaml

from allfives_agents.evaluation.threads import limit_blas_threads
from allfives_env.game.rules import Rules
from allfives_train.algorithms.ppo_batched.net import (
    AgentNet,
    features_of,
    make_net,
    resolve_device,
)
from allfives_train.algorithms.ppo_batched.precision import announce, choose_precision
from allfives_train.config import ACTOR, FAST, TrainConfig, make_rules_for
from allfives_train.games.rollouts import Rollouts
from allfives_train.shell import manifest
from allfives_train.shell import run as shell
from allfives_train.shell.budget import Budget
from allfives_train.shell.checkpoints import write_text_atomic
from allfives_train.shell.hooks import (
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
from allfives_train.shell.preflight import fast_preflight
from allfives_train.shell.run import Plugin, Session, resume_point
from allfives_train.shell.rundir import (
    TrainingInterrupted,
    final_steps,
    holds_parts,
    readable,
    resumable,
    show_bar,
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
    clock; a hook may end the run early with ``run.stop = True``). The set-up (checks, lock,
    resume, stops) is the run shell's (:func:`allfives_train.shell.run.train`)."""
    return shell.train(plugin(learn, describe), cfg, resume, quiet, started, hooks)


def plugin(learn: Learn, describe: str) -> Plugin:
    """The run shell's plug-in of a fast-path algorithm whose round is ``learn``."""
    return Plugin(
        body=functools.partial(_body, learn, describe), prepare=_prepare,
        has_run=lambda run_dir: resumable(run_dir, TRAINER_FILE) or holds_parts(run_dir),
        no_run="--resume: no checkpoint to resume in {run_dir} (no run there: no "
               f"checkpoints/step_* with {TRAINER_FILE}; a MaskablePPO run resumes with "
               "algo: maskable_ppo)",
        done=final_steps, checkpoint_file=TRAINER_FILE)


def _prepare(s: Session) -> None:
    torch.set_num_threads(s.cfg.torch_threads)
    limit_blas_threads(1)  # numpy (the opponents' forward passes): one thread
    device = resolve_device(s.cfg.device)
    rules = make_rules_for(s.cfg)
    fast_preflight(s.cfg, rules)
    s.data = rules, device


def _body(learn: Learn, describe: str, s: Session) -> Path:
    rules, device = s.data
    assert s.budget is not None
    return _train_locked(s.cfg, learn, describe, rules, s.run_dir, device, s.resume,
                         s.quiet, s.started, s.budget, s.hooks)


def _train_locked(cfg: TrainConfig, learn: Learn, describe: str, rules: Rules, run_dir: Path,
                  device: torch.device, resume: bool, quiet: bool, started: float,
                  budget: Budget, extra: tuple[Hook, ...] = ()) -> Path:
    found = resume_point(run_dir, resume, resumable(run_dir, TRAINER_FILE), _load_checkpoint)
    write_text_atomic(run_dir / "config.yaml", yaml.safe_dump(cfg.to_dict(), sort_keys=False))
    torch.manual_seed(cfg.seed)

    # ---- 1. the network and the optimizer (fresh, or where the last checkpoint left them) --
    policy = cfg.section(ACTOR).policy
    precision = choose_precision(cfg.precision, device, policy)  # auto: bf16 where native
    announce(precision, quiet)
    agent = make_net(cfg, precision.precision).to(device)
    optimizer = torch.optim.Adam(agent.parameters(), lr=cfg.learning_rate, eps=1e-5)
    steps, history, wall0, previous = 0, [], 0.0, None
    if found is not None:
        previous, (state, card) = found
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
    rollout = budget.rollout or 1
    if cfg.progress and not quiet:  # a bar with the time left (a terminal), else plain lines
        hooks.append(Bar(budget.end(), cfg.algo.upper()))
        if not show_bar(cfg.progress, quiet):  # and the losses each 200,000 steps
            hooks.append(Progress(max(rollout, 200_000)))

    # ---- 3. learn -------------------------------------------------------------------------------
    try:
        for hook in hooks:
            hook.start(run)
        envs.reset(seed=cfg.seed * 10_000 + steps)
        while run.steps < cfg.total_steps and not run.stop:
            # the config's step size (a resumed run's too), or CleanRL's line down to 0
            share = 1.0 - run.steps / cfg.total_steps if cfg.section(FAST).anneal_lr else 1.0
            set_lr(optimizer, cfg.learning_rate * share)
            stats = learn(agent, optimizer, envs, cfg, device)  # one rollout, one update
            run.steps += rollout
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
