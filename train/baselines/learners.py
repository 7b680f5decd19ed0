"""The learners the reference curves train, and the command line that runs each one.

Every learner starts from zero knowledge (random or zero weights, no imitation, no bot's
weights), plays 2 seats against the same opponent (``heuristic``), and is driven through
its public entry point as a subprocess:

* ``sb3``: sb3-contrib MaskablePPO on ``gymnasium.make("allfives/AllFives-v0", ...)``
  (:mod:`allfives_train.baselines.sb3_learner`); views ``raw`` and ``facts`` (the rows as
  flat inputs of its MLP).
* ``rllib``: RLlib PPO through ``allfives train --algo rllib_ppo``: on ``raw`` with
  ``rllib_table.yaml`` (the multi-agent table env, RLlib's masked MLP on the observation; no
  warm start); on ``facts`` with ``rllib.yaml`` (its batched engine, the per-action actor over
  the view's rows, ``actor.action_view: facts``, from zero weights).
* ``cleanrl``: ``examples/cleanrl_ppo_vector.py --view ...`` (a source checkout only);
  views ``raw`` and ``facts``.
* ``fast``: the fast PPO path, ``allfives train --config fast_2p.yaml`` (algo
  ``ppo_batched``): on ``raw`` policy ``mlp`` on the observation; on ``facts`` the per-action
  actor over the view's rows (``actor.action_view: facts``) from zero weights.
* ``dmc``: Deep Monte-Carlo, ``allfives train --config dmc_2p.yaml`` with ``init_from:
  null``: on ``raw`` policy ``mlp`` (140 action values from the observation); on ``facts``
  the per-action actor over the view's rows; on ``heuristic`` over the 17 registered
  features (the hand-written heuristic's evaluation terms); the last two from zero weights.
"""

from __future__ import annotations

import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path

OPPONENT = "heuristic"
#: The learners, in the order the runs go.
LEARNERS = ("sb3", "rllib", "cleanrl", "fast", "dmc")
VIEWS = ("raw", "facts", "heuristic")
#: What each learner can read without changing the trainers.
SUPPORTED: dict[str, tuple[str, ...]] = {
    "sb3": ("raw", "facts"), "rllib": ("raw", "facts"), "cleanrl": ("raw", "facts"),
    "fast": ("raw", "facts"), "dmc": ("raw", "facts", "heuristic"),
}
LABELS = {
    "sb3": "sb3-contrib MaskablePPO (Gymnasium id)",
    "rllib": "RLlib PPO (allfives train --algo rllib_ppo)",
    "cleanrl": "single-file PPO (examples/cleanrl_ppo_vector.py)",
    "fast": "fast PPO path (ppo_batched)",
    "dmc": "Deep Monte-Carlo (dmc)",
}
#: The actor each view gives the fast path and DMC (``allfives train`` flags).
ACTOR_FLAGS: dict[str, list[str]] = {
    "raw": ["--policy", "mlp", "--move-head", "0"],
    "facts": ["--policy", "action_features", "--action-view", "facts", "--feature-start",
              "zero"],
    "heuristic": ["--policy", "action_features", "--feature-start", "zero"],
}
#: How a learner's snapshots are made: by the learner itself at CPU fractions ("self"), or
#: by the driver from the trainer's own snapshot files ("npz") or checkpoints ("rllib").
SNAPSHOTS = {"sb3": "self", "cleanrl": "self", "fast": "npz", "dmc": "npz", "rllib": "rllib"}
HUGE = 10**12  # "never" for a step-scheduled event of a trainer (its own evaluations, ...)
REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "cleanrl_ppo_vector.py"


@dataclass(frozen=True)
class Cell:
    """One training run: a learner on a view with a seed."""

    learner: str
    view: str
    seed: int

    @property
    def name(self) -> str:
        return f"{self.learner}-{self.view}-s{self.seed}"


def missing(learner: str) -> str | None:
    """Why ``learner`` cannot run here (a missing extra or file), or None."""
    need = {"sb3": "sb3_contrib", "rllib": "ray"}.get(learner)
    if need and importlib.util.find_spec(need) is None:
        return f"{learner}: skipped, {need} is not installed (pip install -e '.[{need}]')"
    if learner == "cleanrl" and not EXAMPLE.is_file():
        return f"cleanrl: skipped, {EXAMPLE} is absent (it needs a source checkout)"
    if learner in ("fast", "dmc", "rllib") and not config_path("fast_2p.yaml").is_file():
        return f"{learner}: skipped, configs/train is absent"
    return None


def config_path(name: str) -> Path:
    """A shipped training config: the checkout's configs/train, else the installed copy."""
    local = REPO / "configs" / "train" / name
    if local.is_file():
        return local
    spec = importlib.util.find_spec("allfives_data.configs")
    if spec and spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations))) / "train" / name
    return local


def cells(learners: list[str], views: list[str], seeds: int) -> list[Cell]:
    """Every (learner, view, seed) to run, seed by seed so a partial run covers them all."""
    return [Cell(learner, view, seed) for seed in range(seeds) for learner in learners
            for view in views if view in SUPPORTED[learner]]


#: A budget (CPU seconds) below which RLlib checkpoints every iteration, not every second one:
#: its start-up (Ray, about 10-15 CPU s) leaves room for only a few iterations.
SHORT_BUDGET = 60.0


def rllib_flags(view: str, cpu_seconds: float) -> list[str]:
    """RLlib's config and actor for ``view``: the table env's masked MLP on ``raw``, the
    batched engine's per-action actor over the rows, from zero weights, on ``facts``."""
    if view == "raw":
        return ["--algo", "rllib_ppo", "--config", str(config_path("rllib_table.yaml")),
                "--rllib-bc-teacher", "null", "--rllib-checkpoint-every",
                "1" if cpu_seconds < SHORT_BUDGET else "2"]
    return ["--algo", "rllib_ppo", "--config", str(config_path("rllib.yaml")),
            "--action-view", view, "--features", "null", "--feature-start", "zero",
            "--rllib-checkpoint-every", "1"]


def command(cell: Cell, run_dir: Path, cpu_seconds: float, snapshots: int) -> list[str]:
    """The learner's command line (one process tree; training dirs under ``run_dir``)."""
    py = sys.executable
    snaps, train = str(run_dir / "snaps"), str(run_dir / "train")
    seed = str(cell.seed)
    if cell.learner == "sb3":
        return [py, "-m", "allfives_train.baselines.sb3_learner", "--view", cell.view,
                "--seed", seed, "--opponents", OPPONENT, "--cpu-seconds", str(cpu_seconds),
                "--snapshots", str(snapshots), "--snapshot-dir", snaps]
    if cell.learner == "cleanrl":
        return [py, str(EXAMPLE), "--view", cell.view, "--seed", seed, "--opponents",
                OPPONENT, "--total-steps", str(HUGE), "--cpu-seconds", str(cpu_seconds),
                "--snapshots", str(snapshots), "--snapshot-dir", snaps, "--device", "cpu"]
    cli = [py, "-m", "allfives.cli", "train"]
    if cell.learner == "rllib":
        return [*cli, *rllib_flags(cell.view, cpu_seconds), "--opponents", f"{OPPONENT}@1",
                "--seed", seed, "--iterations", "100000", "--time-limit", "0",
                "--num-env-runners", "0", "--num-cpus", "1", "--run-dir", train, "--quiet"]
    common = ["--seed", seed, "--opponents", f"{OPPONENT}@1", "--total-steps", str(HUGE),
              "--rollout-shards", "1", "--keep-snapshots", "0", "--eval-every", str(HUGE),
              "--eval-games", "2", "--eval-opponents", "greedy", "--best-metric", "greedy",
              "--checkpoint-every", str(HUGE), "--device", "cpu", "--run-dir", train, "--quiet"]
    if cell.learner == "fast":
        return [*cli, "--config", str(config_path("fast_2p.yaml")), *ACTOR_FLAGS[cell.view],
                "--snapshot-every", str(1024 * 32), *common]
    if cell.learner == "dmc":
        features = ["--features", "17" if cell.view == "heuristic" else "null"]
        return [*cli, "--config", str(config_path("dmc_2p.yaml")), "--init-from", "null",
                *ACTOR_FLAGS[cell.view], *features, "--snapshot-every", str(256 * 32),
                *common]
    raise ValueError(f"unknown learner {cell.learner!r}")
