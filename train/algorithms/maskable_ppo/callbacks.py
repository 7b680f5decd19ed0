"""SB3 callbacks of ``allfives train``: self-play pool upkeep, evaluation and checkpoints,
progress. They extend SB3 through its callback API (like ``CheckpointCallback``)."""

from __future__ import annotations

import collections
import time
from pathlib import Path
from typing import Any

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback

from allfives_agents.trained.policy_numpy import NumpyPolicy
from allfives_env.game.rules import Rules
from allfives_train.algorithms.maskable_ppo.sb3_export import from_sb3
from allfives_train.config import POOL, TrainConfig
from allfives_train.shell.checkpoints import save_policy_atomic
from allfives_train.shell.hooks import (
    Checkpointer,
    Evaluator,
    Run,
    crossed,
    load_snapshots,
    prune_snapshots,
)


class SelfPlayCallback(BaseCallback):
    """Keeps the ``self`` opponents on the learner's current weights (every rollout) and
    freezes a snapshot into every env's pool each ``snapshot_every`` steps."""

    def __init__(self, cfg: TrainConfig, run_dir: Path) -> None:
        super().__init__()
        self.cfg, self.dir = cfg, run_dir / "snapshots"

    def _on_training_start(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        for path, policy in load_snapshots(self.dir, self.cfg.section(POOL).snapshot_keep):
            self.training_env.env_method("add_snapshot", policy.arrays(), path.stem)
        self._push_self()
        self._last = self.model.num_timesteps

    def _on_rollout_start(self) -> None:
        self._push_self()

    def _push_self(self) -> None:
        self.training_env.env_method("set_self", from_sb3(self.model.policy).arrays())

    def _on_step(self) -> bool:
        if crossed(self._last, self.num_timesteps, self.cfg.section(POOL).snapshot_every):
            policy = from_sb3(self.model.policy)
            name = f"snap_{self.num_timesteps:012d}"
            save_policy_atomic(self.dir / f"{name}.npz", policy)
            self.training_env.env_method("add_snapshot", policy.arrays(), name)
            prune_snapshots(self.dir, self.cfg)
        self._last = self.num_timesteps
        return True


class Sb3Run(Run):
    """The hook system's :class:`~allfives_train.shell.hooks.Run` over an SB3 model: its policy as
    numpy, ``model.zip`` for ``--resume``, its logger, and lines that leave tqdm's bar whole."""

    model: Any = None
    session_wall: float = 0.0

    def policy(self) -> NumpyPolicy:
        return from_sb3(self.model.policy)

    def save_trainer(self, folder: Path) -> None:
        self.model.save(folder / "model.zip")

    def logged(self, entry: dict[str, Any]) -> None:
        for name, r in entry["results"].items():
            self.model.logger.record(f"eval/win_rate_{name}", r["win_rate"])
            self.model.logger.record(f"eval/margin_{name}", r["mean_margin"])
        self.model.logger.dump(entry["steps"])

    def final_note(self, card: dict[str, Any]) -> str:
        session = card["wall_time_s"] - self.wall0  # this session's part of the card's time
        return (f"; this session {session:.0f} s (PPO with its evaluations "
                f"{self.session_wall:.0f} s), the run in all {card['wall_time_s']:.0f} s (the "
                "card's wall_time_s: every session, from its command's start)")

    def say(self, text: str) -> None:
        if not self.quiet:
            from tqdm import tqdm

            tqdm.write(text)


class EvalCheckpointCallback(BaseCallback):
    """The hook system's :class:`Evaluator` and :class:`Checkpointer` (the ones the fast path,
    Deep Monte-Carlo and search distillation use) on SB3's callback points: evaluations and
    checkpoints on schedule and at the end (``finish``), ``best/`` by ``best_metric``."""

    def __init__(self, cfg: TrainConfig, rules: Rules, run_dir: Path,
                 history: list[dict[str, Any]], wall0: float,
                 warm_start: dict[str, Any] | None = None, quiet: bool = False,
                 session_start: float | None = None) -> None:
        """``wall0``: the earlier sessions' time; ``session_start``: when this session's
        command started (``time.perf_counter()``; default now)."""
        super().__init__()
        start = time.perf_counter() if session_start is None else session_start
        self.run = Sb3Run(cfg, rules, run_dir, agent=None, optimizer=None, envs=None,
                          history=history, wall0=wall0, quiet=quiet, t0=start,
                          warm_start=warm_start)
        self.checkpointer = Checkpointer(algo="")  # the card's own (MaskablePPO) algo line
        self.evaluator = Evaluator(self.checkpointer)
        self.recent: collections.deque[float] = collections.deque(maxlen=500)

    def _on_training_start(self) -> None:
        self.run.model = self.model
        self.run.steps = self.run.last = self.model.num_timesteps
        self.evaluator.start(self.run)  # a fresh run evaluates where it starts

    def _on_step(self) -> bool:
        for info, done in zip(self.locals["infos"], self.locals["dones"], strict=True):
            if done and "won" in info:
                self.recent.append(float(info["won"]))
        run = self.run
        run.steps = self.num_timesteps
        if self.recent and crossed(run.last, run.steps, 1000):
            self.logger.record("train/win_rate_vs_pool", float(np.mean(self.recent)))
        self.evaluator.rollout_end(run, {})
        self.checkpointer.rollout_end(run, {})
        run.last = run.steps
        return True

    def checkpoint(self, model: Any) -> Path:
        """A step checkpoint now (Ctrl-C saves one); returns its folder."""
        self.run.model, self.run.steps = model, model.num_timesteps
        return self.checkpointer.step_checkpoint(self.run)

    def finish(self, model: Any, elapsed: float) -> None:
        """The final evaluation (unless one ran at this step) and checkpoint, as ``final/``;
        ``elapsed``: this session's PPO time (with its evaluations)."""
        run = self.run
        run.model, run.steps, run.session_wall = model, model.num_timesteps, elapsed
        self.evaluator.finish(run)
        self.checkpointer.finish(run)


class ProgressCallback(BaseCallback):
    """The learner's steps as the ``PPO`` stage (:class:`allfives_train.shell.progress.Stage`: a
    tqdm bar on a terminal, else a plain line at least every 30 s), from ``initial`` (a
    resumed run's steps) to ``total``: the step count this session will end at (SB3 learns in
    whole rollouts, so this is the configured total rounded up to a rollout)."""

    def __init__(self, total: int, initial: int) -> None:
        super().__init__()
        self.total, self.initial = total, initial
        self.bar: Any = None

    def _on_training_start(self) -> None:
        from allfives_train.shell.progress import Stage

        self.bar = Stage("PPO", self.total, "steps", initial=self.initial)

    def _on_step(self) -> bool:
        self.bar.update_to(self.num_timesteps)
        return True

    def _on_training_end(self) -> None:
        self.close()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None
