"""``allfives bench --train CONFIG_OR_RECIPE``: strength per minute of training.

Steps per second says how fast the engine runs, not how fast a recipe gains strength. This
command trains a config (or every stage of a recipe) in a fresh run directory, saves the
learner's policy at fixed intervals of *training* wall-clock time, and only after training
evaluates every saved policy against ``heuristic`` (``--against``) on the same fixed duplicate
deals, with all the cores; it reports minutes, steps and win rate with its 95% Wilson interval
per saved policy, and the minutes to first reach each threshold of :data:`THRESHOLDS`.

The clock:

* it starts when the trainer is called (after the command's own imports) and runs through the
  rollouts, the PPO updates, the ``self``/snapshot refreshes and the run's checkpoints;
* in-training evaluation is switched off (``eval_every`` beyond any run; the start and end
  evaluations every trainer makes are cut to one duplicate deal against ``random``: a few
  milliseconds, left in the clock);
* the time spent saving the bench's own policies is measured and subtracted;
* a recipe's stages add up: each stage's policies are at the recipe's cumulative time. A
  ``ppo_batched``/``dmc`` stage saves every ``--every`` seconds (the hook below); other
  algos (``search_distill``, ``maskable_ppo``) are recorded at the stage's end only.

``--minutes`` ends training at that much training time (a ``ppo_batched``/``dmc`` run stops
after the rollout that crosses it; a recipe runs no further stage once it is spent); without
it the config (or recipe) runs to its ``total_steps``.

Evaluation deals: deal ``d`` is the game of seed ``game_seed(BENCH_SEED + --seed, d)``
(:func:`allfives_env.game.match.game_seed`, a ``SeedSequence`` of the pair), the same deals for
every
saved policy. Training deals come from the rollout streams seeded
``cfg.seed * 10_000 + steps`` of the vector env, a different stream: training never plays them.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from allfives_env.game.rules import Rules
from allfives_env.inputs.durations import check_duration
from allfives_env.inputs.safeyaml import missing_or_not_a_file
from allfives_train.shell.checkpoints import save_policy_atomic, write_text_atomic
from allfives_train.shell.hooks import Hook, Run

#: The evaluation deals' base seed (plus ``--seed``); documented in docs/benchmarks.md.
BENCH_SEED = 5_550_000
#: Win rates against the reference agent to report the minutes to, per setting:
#: (preset, seats, teams) -> thresholds; :data:`DEFAULT_THRESHOLDS` for every other setting.
THRESHOLDS: dict[tuple[str, int, bool], tuple[float, ...]] = {
    ("all_fives", 2, False): (0.50, 0.60, 0.65),
}
DEFAULT_THRESHOLDS = (0.50, 0.55, 0.60)
#: What the bench sets in every config (or stage): no evaluation inside the clock.
NO_EVAL = {"eval_every": 10**15, "eval_games": 1, "eval_opponents": ["random"],
           "best_metric": "random"}
INDEX = "points.json"


def thresholds_for(rules: Rules) -> tuple[float, ...]:
    """The thresholds of the setting of ``rules`` (:data:`THRESHOLDS`)."""
    return THRESHOLDS.get((rules.preset, rules.players, bool(rules.teams)), DEFAULT_THRESHOLDS)


def minutes_to_reach(points: list[dict[str, Any]], thresholds: tuple[float, ...]
                     ) -> dict[str, float | None]:
    """Per threshold, the training minutes of the first point (in time order) whose win rate
    (the point estimate) is at or above it; None where no point reaches it."""
    ordered = sorted(points, key=lambda p: p["train_s"])
    out: dict[str, float | None] = {}
    for t in thresholds:
        first = next((p for p in ordered if p["win_rate"] >= t), None)
        out[f"{t:.2f}"] = None if first is None else round(first["train_s"] / 60, 2)
    return out


class PolicyClock(Hook):
    """Saves the learner's policy every ``every`` seconds of training time to ``folder``
    (``point_NNN.npz``, listed in ``points.json`` with the steps and the time) and ends the run
    once ``offset + clock`` reaches ``budget`` seconds. The clock is ``run.wall()`` less the
    time this hook spends saving; ``offset`` is the time of a recipe's earlier stages."""

    def __init__(self, folder: Path, points: list[dict[str, Any]], every: float,
                 budget: float | None, offset: float = 0.0, stage: str = "") -> None:
        self.folder, self.points, self.every, self.budget = folder, points, every, budget
        self.offset, self.stage, self.excluded = offset, stage, 0.0
        self.next_save, self.last = every, (0.0, 0)

    def clock(self, run: Run) -> float:
        return run.wall() - self.excluded

    def start(self, run: Run) -> None:
        self.last = (self.clock(run), run.steps)
        if not self.points:  # the learner before any update: the series' first point
            self.save(run, self.last[0])

    def rollout_end(self, run: Run, stats: dict[str, float]) -> None:
        now = self.clock(run)
        self.last = (now, run.steps)
        over = self.budget is not None and self.offset + now >= self.budget
        if now >= self.next_save or over:
            while self.next_save <= now:
                self.next_save += self.every
            self.save(run, now)
        if over:
            run.stop = True

    def finish(self, run: Run) -> None:
        if self.points[-1]["steps_in_stage"] != run.steps or self.points[-1]["stage"] != \
                self.stage:
            self.save(run, self.last[0])

    def save(self, run: Run, clock: float) -> None:
        began = time.perf_counter()
        name = f"point_{len(self.points):03d}.npz"
        save_policy_atomic(self.folder / name, run.policy())
        self.points.append({"policy": name, "stage": self.stage, "steps_in_stage": run.steps,
                            "train_s": round(self.offset + clock, 2)})
        write_index(self.folder, self.points)
        self.excluded += time.perf_counter() - began
        say(f"{(self.offset + clock) / 60:6.2f} min  {run.steps:>12,} steps  saved {name}")


def write_index(folder: Path, points: list[dict[str, Any]]) -> None:
    write_text_atomic(folder / INDEX, json.dumps(points, indent=1) + "\n")


def say(text: str) -> None:
    print(f"allfives bench: {text}", file=sys.stderr, flush=True)


def fresh_dir(path: Path) -> Path:
    """``path`` as a new (or empty) folder; one line and nothing changed when it is not."""
    if path.exists() and (not path.is_dir() or any(path.iterdir())):
        raise ValueError(f"--run-dir {path} already exists and is not empty: a bench run "
                         "needs a fresh folder; give another --run-dir or move that one")
    path.mkdir(parents=True, exist_ok=True)
    return path


def train_config(path: Path, bench_dir: Path, args: argparse.Namespace
                 ) -> tuple[Rules, list[dict[str, Any]], float]:
    """Train the config at ``path`` into ``bench_dir/train``: (its rules, the saved points,
    the training seconds)."""
    from allfives_train import algos
    from allfives_train.config import load_config

    cfg = load_config(path, {**NO_EVAL, "run_dir": str(bench_dir / "train")})
    points: list[dict[str, Any]] = []
    folder = bench_dir / "points"
    folder.mkdir()
    budget = None if args.minutes is None else args.minutes * 60
    say(f"training {path} ({cfg.algo}) in {cfg.resolved_run_dir()}")
    return cfg.game().rules, points, run_stage(cfg, algos.trainer(cfg.algo), folder, points,
                                               args.every, budget, 0.0, "")


def run_stage(cfg: Any, trainer: Any, folder: Path, points: list[dict[str, Any]],
              every: float, budget: float | None, offset: float, stage: str) -> float:
    """One training run with the clock hook where its trainer takes hooks, else its end
    alone; returns its training seconds."""
    started = time.perf_counter()
    from allfives_train import algos

    if algos.get(cfg.algo).learn is not None:  # the fast path's trainers take more hooks
        hook = PolicyClock(folder, points, every, budget, offset, stage)
        final = trainer(cfg, quiet=True, started=started, hooks=(hook,))
        return time.perf_counter() - started - hook.excluded
    final = trainer(cfg, quiet=True, started=started)
    took = time.perf_counter() - started
    card = json.loads((Path(final) / "card.json").read_text())
    name = f"point_{len(points):03d}.npz"
    (folder / name).write_bytes((Path(final) / "policy.npz").read_bytes())
    points.append({"policy": name, "stage": stage, "steps_in_stage": int(card["steps"]),
                   "train_s": round(offset + took, 2)})
    write_index(folder, points)
    say(f"{(offset + took) / 60:6.2f} min  stage {stage or cfg.algo} done: saved {name}")
    return took


def train_recipe(path: Path, bench_dir: Path, args: argparse.Namespace
                 ) -> tuple[Rules, list[dict[str, Any]], float]:
    """Every stage of the recipe at ``path``, in ``bench_dir/recipe``, on one clock."""
    from allfives_train import algos
    from allfives_train import recipe as rcp

    loaded = replace(rcp.load_recipe(path), run_dir=bench_dir / "recipe")
    for k in range(len(loaded.stages)):
        rcp.check_stage(loaded, k, NO_EVAL)
    folder = bench_dir / "points"
    folder.mkdir()
    points: list[dict[str, Any]] = []
    budget = None if args.minutes is None else args.minutes * 60
    total, rules = 0.0, rcp.stage_config(loaded, 0, NO_EVAL).game().rules
    for k, stage in enumerate(loaded.stages):
        if budget is not None and total >= budget:
            say(f"--minutes spent: stages {k + 1}-{len(loaded.stages)} not run")
            break
        cfg = rcp.stage_config(loaded, k, NO_EVAL)
        say(f"stage {k + 1} of {len(loaded.stages)} ({stage.name}, {cfg.algo})")
        total += run_stage(cfg, algos.trainer(cfg.algo), folder, points, args.every,
                           budget, total, stage.name)
    return rules, points, total


def check_args(args: argparse.Namespace) -> Path:
    """The config or recipe path, once every flag is checked (one line for any problem)."""
    path = Path(args.train)
    problem = missing_or_not_a_file(path)
    if problem:
        raise ValueError(f"--train {path}: {problem} (give a training config or a recipe, "
                         "e.g. configs/train/default.yaml)")
    if args.minutes is not None:
        check_duration(args.minutes, "--minutes", "minutes")
    check_duration(args.every, "--every")
    if args.games < 1:
        raise ValueError(f"--games must be at least 1, got {args.games}")
    if args.workers < 1:
        raise ValueError(f"--workers must be at least 1, got {args.workers}")
    from allfives_agents.base import make_agent

    make_agent(args.against, seed=0)  # an unknown id: its one line, before any training
    return path


def run(args: argparse.Namespace) -> int:
    """Train, evaluate every saved policy, print the table, write ``bench.json``."""
    import datetime

    from allfives_env.benchmarks.machine import describe
    from allfives_env.inputs.paths import atomic_write, check_output_path
    from allfives_train import recipe
    from allfives_train.benchmarks import speedrun_eval

    path = check_args(args)
    if args.json is not None:
        check_output_path(args.json, "--json")
    bench_dir = fresh_dir(Path(args.run_dir or f"runs/bench_{path.stem}"))
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    trainer = train_recipe if recipe.is_recipe(path) else train_config
    from allfives_train.shell.rundir import TrainingInterrupted

    try:
        rules, points, train_s = trainer(path, bench_dir, args)
    except TrainingInterrupted as stop:  # Ctrl-C: a bench is not resumed; say where it is
        say(f"interrupted in {stop.run_dir}: nothing evaluated; the policies saved so far "
            f"are in {bench_dir / 'points'}")
        return 130
    seed = BENCH_SEED + args.seed
    say(f"evaluating {len(points)} policies against {args.against}, {args.games} games each")
    evaluated = speedrun_eval.evaluate_points(rules, bench_dir / "points", points, args.against,
                                              args.games, seed, args.workers)
    thresholds = thresholds_for(rules)
    result = {"config": str(path), "date": date, "machine": describe(),
              "setting": {"preset": rules.preset, "players": rules.players,
                          "teams": bool(rules.teams)},
              "against": args.against, "games_per_point": evaluated[0]["games"],
              "eval_seed": seed, "every_s": args.every, "minutes_budget": args.minutes,
              "train_s": round(train_s, 2), "thresholds": list(thresholds),
              "minutes_to": minutes_to_reach(evaluated, thresholds), "points": evaluated,
              "run_dir": str(bench_dir)}
    text = json.dumps(result, indent=1) + "\n"
    write_text_atomic(bench_dir / "bench.json", text)
    print(speedrun_eval.format_report(result))
    if args.json is not None:
        with atomic_write(args.json) as f:
            f.write(text)
        print(f"wrote {args.json}")
    return 0
