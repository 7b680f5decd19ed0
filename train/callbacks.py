"""SB3 callbacks of ``allfives train``: self-play pool upkeep, evaluation and checkpoints,
progress. They extend SB3 through its callback API (like ``CheckpointCallback``)."""

from __future__ import annotations

import collections
import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback

from agents.base import make_agent
from agents.checkpoint import PolicyAgent
from allfives_env.rules import Rules
from train.checkpoints import make_card, save_checkpoint, save_policy_atomic, write_text_atomic
from train.config import TrainConfig
from train.evaluation import evaluate
from train.faults import fault_point
from train.plot import plot_curve
from train.policy_numpy import NumpyPolicy, from_sb3

KEEP_CHECKPOINTS = 3


def crossed(before: int, now: int, every: int) -> bool:
    return now // every > before // every


class SelfPlayCallback(BaseCallback):
    """Keeps the ``self`` opponents on the learner's current weights (every rollout) and
    freezes a snapshot into every env's pool each ``snapshot_every`` steps."""

    def __init__(self, cfg: TrainConfig, run_dir: Path) -> None:
        super().__init__()
        self.cfg, self.dir = cfg, run_dir / "snapshots"

    def _on_training_start(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        for path, policy in load_snapshots(self.dir, self.cfg.snapshot_keep):
            self.training_env.env_method("add_snapshot", policy.arrays(), path.stem)
        self._push_self()
        self._last = self.model.num_timesteps

    def _on_rollout_start(self) -> None:
        self._push_self()

    def _push_self(self) -> None:
        self.training_env.env_method("set_self", from_sb3(self.model.policy).arrays())

    def _on_step(self) -> bool:
        if crossed(self._last, self.num_timesteps, self.cfg.snapshot_every):
            policy = from_sb3(self.model.policy)
            name = f"snap_{self.num_timesteps:012d}"
            save_policy_atomic(self.dir / f"{name}.npz", policy)
            self.training_env.env_method("add_snapshot", policy.arrays(), name)
        self._last = self.num_timesteps
        return True


def load_snapshots(folder: Path, keep: int) -> list[tuple[Path, NumpyPolicy]]:
    """The newest ``keep`` readable snapshots; an unreadable one (say, half written by a
    killed run) is renamed ``unreadable_<name>`` with a warning line, and skipped."""
    out: list[tuple[Path, NumpyPolicy]] = []
    for path in sorted(folder.glob("snap_*.npz"), reverse=True):
        if len(out) == keep:
            break
        try:
            out.append((path, NumpyPolicy.load(path)))
        except Exception as exc:  # noqa: BLE001 (zipfile, zlib and format errors alike)
            moved = path.with_name(f"unreadable_{path.name}")
            os.replace(path, moved)
            warn(f"snapshot {path} is unreadable ({type(exc).__name__}: {exc}); moved to "
                 f"{moved.name} and skipped")
    return out[::-1]


def warn(text: str) -> None:
    print(f"allfives train: warning: {text}", file=sys.stderr)


class EvalCheckpointCallback(BaseCallback):
    """Evaluates against ``eval_opponents`` and writes checkpoints on schedule and at the end
    (``finish``); keeps ``best/`` by the win rate against ``best_metric``."""

    def __init__(self, cfg: TrainConfig, rules: Rules, run_dir: Path,
                 history: list[dict[str, Any]], wall0: float,
                 warm_start: dict[str, Any] | None = None, quiet: bool = False,
                 session_start: float | None = None) -> None:
        """``wall0``: the earlier sessions' time; ``session_start``: when this session's
        command started (``time.perf_counter()``; default now)."""
        super().__init__()
        self.cfg, self.rules, self.run_dir, self.warm_start = cfg, rules, run_dir, warm_start
        self.history, self.wall0, self.quiet = history, wall0, quiet
        self.session_start = time.perf_counter() if session_start is None else session_start
        self.opponents = {i: make_agent(i, seed=cfg.seed) for i in cfg.eval_opponents}
        self.recent: collections.deque[float] = collections.deque(maxlen=500)
        self.best = max((h["results"][cfg.best_metric]["win_rate"] for h in history),
                        default=-1.0)

    def _on_training_start(self) -> None:
        self._last = self.num_timesteps = self.model.num_timesteps
        if not self.history:  # a fresh run: where it starts (random, or the warm start)
            self.run_eval()

    def wall(self) -> float:
        """The run's time so far: every session's, each from its command's start."""
        return self.wall0 + time.perf_counter() - self.session_start

    def _on_step(self) -> bool:
        for info, done in zip(self.locals["infos"], self.locals["dones"], strict=True):
            if done and "won" in info:
                self.recent.append(float(info["won"]))
        if self.recent and crossed(self._last, self.num_timesteps, 1000):
            self.logger.record("train/win_rate_vs_pool", float(np.mean(self.recent)))
        if crossed(self._last, self.num_timesteps, self.cfg.eval_every):
            self.run_eval()
        if crossed(self._last, self.num_timesteps, self.cfg.checkpoint_every):
            self.checkpoint()
        self._last = self.num_timesteps
        return True

    def run_eval(self) -> dict[str, Any]:
        policy = from_sb3(self.model.policy)
        learner = PolicyAgent(policy)
        learner.name = "learner"
        results = {name: evaluate(self.rules, learner, opp, self.cfg.eval_games, self.cfg.seed)
                   for name, opp in self.opponents.items()}
        entry = {"steps": int(self.num_timesteps), "wall_time_s": round(self.wall(), 1),
                 "results": results}
        self.history.append(entry)
        for name, r in results.items():
            self.logger.record(f"eval/win_rate_{name}", r["win_rate"])
            self.logger.record(f"eval/margin_{name}", r["mean_margin"])
        self.logger.dump(self.num_timesteps)
        with open(self.run_dir / "eval.jsonl", "a") as f:
            f.write(json.dumps(entry) + "\n")
        plot_curve(self.history, self.run_dir / "learning_curve.png", self.rules)
        self._say(format_eval(entry))
        score = results[self.cfg.best_metric]["win_rate"]
        if score > self.best:
            self.best = score
            save_checkpoint(self.run_dir / "best", self._card(policy), policy, self.model)
        fault_point("after_eval")
        return entry

    def _card(self, policy: NumpyPolicy) -> dict[str, Any]:
        return make_card(self.rules, policy, self.num_timesteps, self.wall(),
                         self.cfg.to_dict(), self.history, self.warm_start)

    def checkpoint(self, name: str | None = None) -> Path:
        policy = from_sb3(self.model.policy)
        name = name or f"step_{self.num_timesteps:012d}"
        path = self.run_dir / "checkpoints" / name
        save_checkpoint(path, self._card(policy), policy, self.model)
        write_text_atomic(self.run_dir / "latest.txt", name + "\n")
        for old in sorted((self.run_dir / "checkpoints").glob("step_*"))[:-KEEP_CHECKPOINTS]:
            shutil.rmtree(old, ignore_errors=True)
        return path

    def finish(self, model: Any, elapsed: float) -> None:
        """The final evaluation (unless one ran at this step) and checkpoint, as ``final/``;
        ``elapsed``: this session's PPO time (with its evaluations)."""
        self.model, self.num_timesteps = model, model.num_timesteps
        rollout = self.cfg.n_envs * self.cfg.n_steps
        if not self.history or self.history[-1]["steps"] <= model.num_timesteps - rollout:
            self.run_eval()
        path = self.checkpoint()
        policy = from_sb3(model.policy)
        card = self._card(policy)
        save_checkpoint(self.run_dir / "final", card, policy, model)
        session = card["wall_time_s"] - self.wall0  # this session's part of the card's time
        self._say(f"final checkpoint: {self.run_dir / 'final'} (also {path}); learning curve: "
                  f"{self.run_dir / 'learning_curve.png'}; {model.num_timesteps:,} steps; "
                  f"this session {session:.0f} s (PPO with its evaluations {elapsed:.0f} s), "
                  f"the run in all {card['wall_time_s']:.0f} s (the card's wall_time_s: every "
                  "session, from its command's start)")

    def _say(self, text: str) -> None:
        if not self.quiet:
            from tqdm import tqdm

            tqdm.write(text)


def format_eval(entry: dict[str, Any]) -> str:
    lines = [f"evaluation at {entry['steps']:,} steps ({entry['wall_time_s']:.0f} s):",
             f"  {'opponent':<24} {'games':>6} {'win rate':>9}  {'95% interval':<16} margin"]
    for name, r in entry["results"].items():
        lo, hi = r["ci95"]
        lines.append(f"  {name:<24} {r['games']:>6} {r['win_rate']:>9.3f}  "
                     f"[{lo:.3f}, {hi:.3f}]   {r['mean_margin']:+.1f}")
    return "\n".join(lines)


class ProgressCallback(BaseCallback):
    """A tqdm progress bar over learner steps, from ``initial`` (a resumed run's steps) to
    ``total``: the step count this session will end at (SB3 learns in whole rollouts, so
    this is the configured total rounded up to a rollout)."""

    def __init__(self, total: int, initial: int) -> None:
        super().__init__()
        self.total, self.initial = total, initial
        self.bar: Any = None

    def _on_training_start(self) -> None:
        from tqdm import tqdm

        self.bar = tqdm(total=self.total, initial=self.initial, unit="step", smoothing=0.1,
                        desc="PPO", dynamic_ncols=True,
                        mininterval=0.5 if sys.stderr.isatty() else 30.0)
        self._last = self.model.num_timesteps

    def _on_step(self) -> bool:
        self.bar.update(self.num_timesteps - self._last)
        self._last = self.num_timesteps
        return True

    def _on_training_end(self) -> None:
        self.close()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def final_steps(start: int, total: int, rollout: int) -> int:
    """The step count ``learn()`` ends at: from ``start``, whole rollouts up to ``total``."""
    if start >= total:
        return start
    return start + -(-(total - start) // rollout) * rollout
