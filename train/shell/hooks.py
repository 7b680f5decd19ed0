"""Small composable pieces around the fast PPO loop (like SB3's callbacks).

Each hook sees the :class:`Run` (the network, the optimizer, the env, the step count, the
evaluation history) at three points: ``start`` (before the first rollout), ``rollout_end``
(after each PPO update, with its statistics) and ``finish``. The loop in
:mod:`allfives_train.algorithms.ppo_batched.trainer` calls them in order; nothing else reaches into
the loop.

Checkpoints are written in the project's format (:mod:`allfives_train.shell.checkpoints`):
``policy.npz``
(the actor as a :class:`NumpyPolicy`, what ``ckpt:`` agents play), ``card.json``, ``card.md``,
``config.yaml``, plus ``trainer.pt`` (network, optimizer and step count, for ``--resume``).
Every file is written whole (a temporary renamed into place: checkpoints, snapshots,
``eval.jsonl``), so a kill at any moment leaves nothing half written for a resume to read.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from allfives_agents.base import make_agent
from allfives_agents.trained.checkpoint import PolicyAgent
from allfives_agents.trained.policy_numpy import NumpyPolicy
from allfives_env.game.rules import Rules
from allfives_train.config import EVALUATION, POOL, TrainConfig
from allfives_train.shell import manifest
from allfives_train.shell.checkpoints import (
    card_markdown,
    make_card,
    save_policy_atomic,
    write_atomic_dir,
    write_text_atomic,
)
from allfives_train.shell.evaluation import evaluate
from allfives_train.shell.faults import fault_point
from allfives_train.shell.plot import plot_curve
from allfives_train.shell.progress import Stage, say_line

ALGO = "PPO (own masked PPO in torch, train/algorithms/ppo_batched/trainer.py), self-play " \
    "against an opponent pool"
TRAINER_FILE = "trainer.pt"


KEEP_CHECKPOINTS = 3


def crossed(before: int, now: int, every: int) -> bool:
    return now // every > before // every


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
            manifest.guard(path, moved)
            os.replace(path, moved)
            manifest.rename(path, moved)
            warn(f"snapshot {path} is unreadable ({type(exc).__name__}: {exc}); moved to "
                 f"{moved.name} and skipped")
    return out[::-1]


def prune_snapshots(folder: Path, cfg: TrainConfig) -> list[str]:
    """Delete the snapshots (manifest-listed ones only) but the newest ``keep_snapshots``
    and those the opponent pool plays (the newest ``snapshot_keep``); 0 keeps all."""
    pool = cfg.section(POOL)
    if pool.keep_snapshots <= 0:
        return []
    return manifest.prune(folder, "snap_*.npz", max(pool.keep_snapshots, pool.snapshot_keep))


def warn(text: str) -> None:
    print(f"allfives train: warning: {text}", file=sys.stderr)


def format_eval(entry: dict[str, Any]) -> str:
    lines = [f"evaluation at {entry['steps']:,} steps ({entry['wall_time_s']:.0f} s):",
             f"  {'opponent':<24} {'games':>6} {'win rate':>9}  {'95% interval':<16} margin"]
    for name, r in entry["results"].items():
        lo, hi = r["ci95"]
        lines.append(f"  {name:<24} {r['games']:>6} {r['win_rate']:>9.3f}  "
                     f"[{lo:.3f}, {hi:.3f}]   {r['mean_margin']:+.1f}")
    return "\n".join(lines)


@dataclasses.dataclass
class Run:
    """What the hooks may read (and the loop updates)."""

    cfg: TrainConfig
    rules: Rules
    run_dir: Path
    agent: Any  # allfives_train.algorithms.ppo_batched.net.ActorCritic
    optimizer: Any
    envs: Any
    steps: int = 0
    history: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    wall0: float = 0.0
    quiet: bool = False
    t0: float = dataclasses.field(default_factory=time.perf_counter)
    last: int = 0  # the step count at the previous rollout_end
    warm_start: dict[str, Any] | None = None  # the card's record of a warm start
    bar: Any = None  # a tqdm bar on stderr (:class:`Bar`): lines go above it
    steps_stage: Any = None  # the learner steps' :class:`Stage` (:class:`Bar`)
    stop: bool = False  # set by a hook: the loop ends after this rollout (then finish)

    def wall(self) -> float:
        return self.wall0 + time.perf_counter() - self.t0

    def policy(self) -> NumpyPolicy:
        """The learner's policy as checkpoints save it: with its critic as the value where
        the run trains one (:func:`allfives_train.algos.carries_value`)."""
        from allfives_train import algos

        policy = self.agent.numpy_policy()
        return policy if algos.carries_value(self.cfg) else policy.with_value([])

    def save_trainer(self, folder: Path) -> None:
        """What ``--resume`` needs beside the policy: network, optimizer and step count."""
        import torch

        torch.save({"agent": self.agent.state_dict(), "optimizer": self.optimizer.state_dict(),
                    "steps": self.steps}, folder / TRAINER_FILE)

    def logged(self, entry: dict[str, Any]) -> None:
        """An evaluation was added to the history (a trainer's own log may record it)."""

    def final_note(self, card: dict[str, Any]) -> str:
        """What the last line about ``final/`` adds (a trainer's own timing)."""
        return ""

    def say(self, text: str) -> None:
        """A line of the run (above the bar on a terminal; none when quiet)."""
        say_line(text, self.bar, self.quiet)

    def stage(self, name: str, total: float, unit: str, initial: float = 0) -> Stage:
        """A stage of this run (:class:`allfives_train.shell.progress.Stage`): a bar on a terminal
        (its lines above the run's own bar, which it pauses), else plain lines at least every
        30 s; nothing when quiet or when the config's ``progress`` is off."""
        quiet = self.quiet or not self.cfg.progress
        return Stage(name, total, unit, initial=initial, quiet=quiet)


class Hook:
    def start(self, run: Run) -> None:
        """Before the first rollout."""

    def rollout_end(self, run: Run, stats: dict[str, float]) -> None:
        """After each rollout and its update (``run.steps`` already counts it)."""

    def finish(self, run: Run) -> None:
        """After the last update."""


class SelfPlay(Hook):
    """Keeps ``self`` opponents on the current weights and freezes snapshots into the pool."""

    def start(self, run: Run) -> None:
        self.dir = run.run_dir / "snapshots"
        self.dir.mkdir(parents=True, exist_ok=True)
        for path, snapshot in load_snapshots(self.dir, run.cfg.section(POOL).snapshot_keep):
            run.envs.add_snapshot(snapshot.arrays(), path.stem)
        run.envs.set_self(run.policy().arrays())

    def rollout_end(self, run: Run, stats: dict[str, float]) -> None:
        policy = run.policy()
        if crossed(run.last, run.steps, run.cfg.section(POOL).snapshot_every):
            name = f"snap_{run.steps:012d}"
            save_policy_atomic(self.dir / f"{name}.npz", policy)
            run.envs.add_snapshot(policy.arrays(), name)
            prune_snapshots(self.dir, run.cfg)
        run.envs.set_self(policy.arrays())


class Evaluator(Hook):
    """Duplicate-deal evaluation against ``eval_opponents`` on schedule and at the end;
    keeps ``best/`` by the win rate against ``best_metric``."""

    def __init__(self, checkpointer: Checkpointer) -> None:
        self.checkpointer = checkpointer

    def start(self, run: Run) -> None:
        cfg = run.cfg
        ev = cfg.section(EVALUATION)
        self.opponents = {i: make_agent(i, seed=cfg.seed) for i in ev.opponents}
        self.best = max((h["results"][ev.best_metric]["win_rate"] for h in run.history),
                        default=-1.0)
        if not run.history:
            self.run_eval(run)

    def rollout_end(self, run: Run, stats: dict[str, float]) -> None:
        if crossed(run.last, run.steps, run.cfg.section(EVALUATION).every):
            self.run_eval(run)

    def finish(self, run: Run) -> None:
        if not run.history or run.history[-1]["steps"] < run.steps:
            self.run_eval(run)

    def run_eval(self, run: Run) -> None:
        cfg, policy = run.cfg, run.policy()
        ev = cfg.section(EVALUATION)
        learner = PolicyAgent(policy)
        learner.name = "learner"
        run.say(f"evaluating at {run.steps:,} steps against {', '.join(self.opponents)} "
                f"({ev.games} games each)...")  # a line, not silence, while it plays
        results = {}
        with run.stage("evaluating", eval_total(run.rules, ev.games, len(self.opponents)),
                       "games") as stage:
            for name, opp in self.opponents.items():
                results[name] = evaluate(run.rules, learner, opp, ev.games, cfg.seed,
                                         stage.advance)
        entry = {"steps": int(run.steps), "wall_time_s": round(run.wall(), 1),
                 "results": results}
        run.history.append(entry)
        run.logged(entry)
        write_history(run)
        fault_point("after_eval")
        plot_curve(run.history, run.run_dir / "learning_curve.png", run.rules)
        run.say(format_eval(entry))
        score = results[ev.best_metric]["win_rate"]
        if score > self.best:
            self.best = score
            self.checkpointer.save(run, run.run_dir / "best")


class Checkpointer(Hook):
    """``checkpoints/step_<n>/`` every ``checkpoint_every`` steps (the last 3 kept, named in
    ``latest.txt``) and ``final/`` at the end. ``algo`` is the card's; ``extra``: more
    entries for the card (set by the loop before ``finish``)."""

    def __init__(self, algo: str = ALGO) -> None:
        self.algo, self.extra = algo, dict[str, Any]()
        self.saved: tuple[int, int] | None = None  # (steps, evaluations) of the last one

    def rollout_end(self, run: Run, stats: dict[str, float]) -> None:
        if crossed(run.last, run.steps, run.cfg.checkpoint_every):
            self.step_checkpoint(run)

    def finish(self, run: Run) -> None:
        path = run.run_dir / "checkpoints" / f"step_{run.steps:012d}"
        if self.saved != (run.steps, len(run.history)):  # not written by rollout_end already
            path = self.step_checkpoint(run)
        card = self.save(run, run.run_dir / "final")
        run.say(f"final checkpoint: {run.run_dir / 'final'} (also {path}); learning curve: "
                f"{run.run_dir / 'learning_curve.png'}; {run.steps:,} steps"
                + run.final_note(card))

    def step_checkpoint(self, run: Run) -> Path:
        name = f"step_{run.steps:012d}"
        path = run.run_dir / "checkpoints" / name
        self.save(run, path)
        self.saved = (run.steps, len(run.history))
        write_text_atomic(run.run_dir / "latest.txt", name + "\n")
        manifest.prune(run.run_dir / "checkpoints", "step_*", KEEP_CHECKPOINTS)
        manifest.note(run.run_dir / "tb")  # TensorBoard's files (SB3), as they are now
        return path

    def save(self, run: Run, target: Path) -> dict[str, Any]:
        """One checkpoint directory, written whole; returns its card."""
        policy = run.policy()
        card = make_card(run.rules, policy, run.steps, run.wall(), run.cfg.to_dict(),
                         run.history, run.warm_start)
        if self.algo:
            card["algo"] = self.algo
        card.update(self.extra)

        def fill(tmp: Path) -> None:
            policy.save(tmp / "policy.npz")
            (tmp / "card.json").write_text(json.dumps(card, indent=1) + "\n")
            (tmp / "card.md").write_text(card_markdown(card))
            (tmp / "config.yaml").write_text(yaml.safe_dump(card["config"], sort_keys=False))
            run.save_trainer(tmp)

        write_atomic_dir(target, fill)
        return card


class Bar(Hook):
    """The learner's steps as a stage (:class:`allfives_train.shell.progress.Stage`) named ``desc``,
    from a resumed run's steps to ``total`` (``total_steps`` rounded up to whole rollouts): a
    tqdm bar with the rate and the time left on a terminal, else a plain line at least every
    30 s."""

    def __init__(self, total: int, desc: str) -> None:
        self.total, self.desc = total, desc

    def start(self, run: Run) -> None:
        run.steps_stage = run.stage(self.desc, self.total, "steps", initial=run.steps)
        run.bar = run.steps_stage.bar

    def rollout_end(self, run: Run, stats: dict[str, float]) -> None:
        if run.steps_stage is not None:
            run.steps_stage.update_to(run.steps)

    def finish(self, run: Run) -> None:
        close_bar(run)


def close_bar(run: Run) -> None:
    """End the steps' stage (its bar or its timer) and any bar of the run."""
    if run.steps_stage is not None:
        run.steps_stage.close()
        run.steps_stage = None
    if run.bar is not None:
        run.bar.close()
        run.bar = None


class Progress(Hook):
    """One line per ``every`` steps: steps, steps/s, losses, the pool win rate."""

    def __init__(self, every: int = 100_000) -> None:
        self.every = every

    def start(self, run: Run) -> None:
        self.t, self.s = time.perf_counter(), run.steps

    def rollout_end(self, run: Run, stats: dict[str, float]) -> None:
        if not crossed(run.last, run.steps, self.every):
            return
        now = time.perf_counter()
        rate = (run.steps - self.s) / max(now - self.t, 1e-9)
        self.t, self.s = now, run.steps
        shown = " ".join(f"{k} {v:.3g}" for k, v in stats.items())
        run.say(f"{run.steps:>12,} steps  {rate:,.0f} steps/s  {shown}")


def eval_total(rules: Rules, games: int, opponents: int) -> int:
    """The games an evaluation plays: ``games`` rounded up to whole duplicate sets, per
    opponent."""
    from allfives_env.game.match import seatings

    per_set = len(seatings(rules))
    return max(1, -(-games // per_set)) * per_set * opponents


def write_history(run: Run) -> None:
    """``eval.jsonl``: the run's evaluations, one line each, rewritten whole (a resumed run's
    starts from its checkpoint's history, so no step appears twice)."""
    write_text_atomic(run.run_dir / "eval.jsonl",
                      "".join(json.dumps(h) + "\n" for h in run.history))
