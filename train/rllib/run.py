"""The training loop: start or join Ray, build PPO, train, log, checkpoint with a model card.

Run directory::

    run_dir/config.yaml                  the resolved config
    run_dir/progress.csv                 one row per iteration
    run_dir/nodes.json                   the Ray node of the driver and of each env runner
    run_dir/checkpoint_000010/           algo.save_to_path() + allfives_rllib.json (the card)
    run_dir/checkpoint_000000/           right after the warm start (with bc_teacher)
    run_dir/final/                       the last iteration's checkpoint (the same layout)
    run_dir/.lock                        while a run holds the directory
    (allfives_train.shell.rundir)

Interruptions (as the SB3 and fast paths): Ctrl-C or SIGTERM during PPO lets the iteration
under way finish, then writes its checkpoint and ``final/`` (so ``rllib:<run_dir>`` plays it)
and raises :class:`Interrupted`, whose message names the command that continues; a second
Ctrl-C, or one during the start or the warm start, stops at once (what was saved stays).
``resume`` continues from the newest readable checkpoint (``checkpoint_*`` or ``final/``,
by iteration): the weights, the optimizer, the iteration count and the self-play snapshot
pool. Every checkpoint is written whole (a temporary directory renamed into place), so a
``kill -9`` leaves nothing half written to resume from; a run stopped before its first
checkpoint is started over by the same command, with or without ``resume``.
"""

from __future__ import annotations

import csv
import io
import json
import shlex
import shutil
import signal
import time
from pathlib import Path
from typing import Any

import yaml

from allfives_agents.trained.rllib_agent import CARD_FORMAT, CARD_NAME
from allfives_env.game.observation import OBS_LAYOUT_ID, OBS_SIZE
from allfives_env.game.tiles import N_ACTIONS
from allfives_env.inputs.trust import trusted
from allfives_train.config import TrainConfig
from allfives_train.rllib.mapping import seat_modules, trained_modules
from allfives_train.rllib.section import RLLIB
from allfives_train.shell import manifest
from allfives_train.shell import run as shell
from allfives_train.shell.checkpoints import write_atomic_dir, write_text_atomic
from allfives_train.shell.faults import fault_point
from allfives_train.shell.run import Plugin
from allfives_train.shell.run import Session as ShellSession
from allfives_train.shell.rundir import (
    TrainingInterrupted,
    already_holds_a_run,
    set_aside,
    start_over,
)
from allfives_train.shell.stopping import Stopper

#: The flags that name this backend in the commands a run prints.
AGAIN = "--algo rllib_ppo "

#: what a run writes in its directory, besides ``checkpoint_*`` (cleared on a start-over)
PARTS = ("config.yaml", "progress.csv", "nodes.json", "final")


class Interrupted(TrainingInterrupted):
    """Ctrl-C or SIGTERM stopped the run at ``iteration``: ``checkpoint`` is the newest saved
    (None: none yet), of iteration ``saved_at``; ``signum`` the signal; ``at_once``: stopped
    without saving (a second signal, or one outside PPO)."""

    def __init__(self, run_dir: Path, checkpoint: Path | None, iteration: int,
                 signum: int, saved_at: int | None = None, at_once: bool = False) -> None:
        super().__init__(run_dir, checkpoint, iteration, "iterations", signum)
        self.iteration, self.at_once = iteration, at_once
        self.saved_at = iteration if saved_at is None else saved_at


def init_ray(cfg: TrainConfig, address: str | None) -> None:
    """Join the cluster at ``address`` ("auto": the one started on this machine with
    ``ray start``), or start a new local instance (``num_cpus`` CPUs, no dashboard) even when
    ``RAY_ADDRESS`` or a cluster file left by an earlier Ray session
    (``<temp dir>/ray/ray_current_cluster``) names another: ``address="local"``."""
    import ray

    if ray.is_initialized():
        return
    if address:
        ray.init(address=address, log_to_driver=False)
    else:
        ray.init(address="local", num_cpus=cfg.section(RLLIB).num_cpus,
                 include_dashboard=False, log_to_driver=False)


def make_card(cfg: TrainConfig, iteration: int, env_steps: int,
              extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The model card; ``extra``: the run's own entries (``wall_time_s``, the snapshot pool)."""
    import ray

    rules, own = cfg.game().rules, cfg.section(RLLIB)
    return {
        "format": CARD_FORMAT, "backend": "rllib", "ray_version": ray.__version__,
        "obs_layout": OBS_LAYOUT_ID, "obs_size": OBS_SIZE, "n_actions": N_ACTIONS,
        "players": rules.players, "teams": rules.teams, "preset": rules.preset,
        "rules": rules.to_dict(), "policy": own.policy, "engine": own.engine,
        "seat_modules": seat_modules(own.policy, rules),
        "trained_modules": trained_modules(own.policy, rules),
        "iteration": iteration, "env_steps": env_steps, "config": cfg.to_dict(),
        **(extra or {}),
    }


def save(algo: Any, cfg: TrainConfig, directory: Path, iteration: int, env_steps: int,
         extra: dict[str, Any] | None = None) -> Path:
    """``algo.save_to_path`` plus the card beside it, written whole: into a temporary directory
    renamed into place (a kill leaves the previous one, or nothing). With engine batched,
    the actor as ``policy.npz`` and its ``card.json`` too (``ckpt:<directory>`` plays it)."""
    card = make_card(cfg, iteration, env_steps, extra)

    def fill(tmp: Path) -> None:
        algo.save_to_path(str(tmp.resolve()))
        (tmp / CARD_NAME).write_text(json.dumps(card, indent=2, default=str) + "\n")
        if cfg.section(RLLIB).engine == "batched":
            from allfives_train.rllib.batched import export_policy

            export_policy(algo, cfg, tmp, card)

    write_atomic_dir(directory, fill)
    return directory


def copy_checkpoint(source: Path, target: Path) -> Path:
    """``source`` copied to ``target`` (replacing it whole, as :func:`save` does)."""
    def fill(tmp: Path) -> None:
        shutil.copytree(source, tmp, dirs_exist_ok=True)

    write_atomic_dir(target, fill)
    return target


def summarize(result: dict[str, Any], modules: list[str]) -> dict[str, Any]:
    """The numbers of one iteration that go into progress.csv."""
    runners = result.get("env_runners", {})
    learners = result.get("learners", {})
    returns = runners.get("module_episode_returns_mean", {})
    row: dict[str, Any] = {
        "iteration": result.get("training_iteration"),
        "env_steps": result.get("num_env_steps_sampled_lifetime",
                                runners.get("num_env_steps_sampled_lifetime")),
        "episodes": runners.get("num_episodes"),
        "episode_len_mean": runners.get("episode_len_mean"),
    }
    for m in modules:
        row[f"{m}_return_mean"] = returns.get(m, runners.get("episode_return_mean")
                                              if modules == ["default_policy"] else None)
        row[f"{m}_entropy"] = learners.get(m, {}).get("entropy")
        row[f"{m}_vf_loss"] = learners.get(m, {}).get("vf_loss")
    return {k: (v.item() if hasattr(v, "item") else v) for k, v in row.items()}


def train(cfg: TrainConfig, address: str | None = None, quiet: bool = False,
          resume: bool = False, started: float | None = None) -> Path:
    """Train for ``rllib.iterations`` (from the run's newest checkpoint with ``resume``) on the
    Ray cluster at ``address`` (else ``cfg.address``; None: a local instance); return the
    final checkpoint directory. Raises :class:`Interrupted` on Ctrl-C or SIGTERM. The run's
    set-up (checks, lock, stops) is the run shell's (:func:`allfives_train.shell.run.train`);
    this module is its plug-in."""
    if address is not None:
        cfg = cfg.replace(address=address)
    return shell.train(PLUGIN, cfg, resume, quiet, started)


def _prepare(s: ShellSession) -> None:
    import torch

    torch.set_num_threads(s.cfg.torch_threads)


def _body(s: ShellSession) -> Path:
    cfg, run_dir, stop = s.cfg, s.run_dir, s.stop
    own = cfg.section(RLLIB)
    if own.engine == "batched":
        from allfives_train.rllib.batched import build_batched_config as build_config
        from allfives_train.rllib.batched import register_batched as register
    else:
        from allfives_train.rllib.algo import build_config, register

    previous = _check_run_dir(run_dir, s.resume)
    write_text_atomic(run_dir / "config.yaml", yaml.safe_dump(cfg.to_dict(), sort_keys=False))
    session = Session(cfg, run_dir, s.quiet, stop)
    try:
        if not s.quiet:
            print("starting Ray and building the algorithm (RLlib: its workers, then PPO)",
                  flush=True)
        init_ray(cfg, cfg.address)
        stop.arm()
        register()
        session.algo = build_config(cfg).build_algo()
        session.start = time.time()  # the time limit counts from here, as the wall time
        _write_nodes(session.algo, run_dir, s.quiet)
        if previous is not None:
            session.restore(*previous)
        elif own.bc_teacher:
            _warm_start(session.algo, cfg, session.modules, s.quiet)
            session.checkpoint(0)  # the warm start alone
        final = session.learn()
    except KeyboardInterrupt:  # a stop outside PPO, or a second one: what is saved stays
        newest = newest_checkpoint(run_dir, quiet=True)
        raise Interrupted(run_dir, newest[0] if newest else None, session.iteration,
                          stop.signum or signal.SIGINT,
                          int(newest[1]["iteration"]) if newest else 0, at_once=True) from None
    finally:
        if session.algo is not None:
            session.algo.stop()
    if not s.quiet:
        play = f"ckpt:{final}" if own.engine == "batched" else f"rllib:{final}"
        print(f"final checkpoint: {final} (play it as {play})")
    return final


class Session:
    """One command's share of a run: the algorithm, where it stands, its progress file."""

    def __init__(self, cfg: TrainConfig, run_dir: Path, quiet: bool, stop: Stopper) -> None:
        self.cfg, self.run_dir, self.quiet, self.stop = cfg, run_dir, quiet, stop
        self.own = own = cfg.section(RLLIB)
        self.modules = (["default_policy"] if own.engine == "batched"
                        else trained_modules(own.policy, cfg.game().rules))
        self.algo: Any = None
        self.iteration = self.steps = 0
        self.wall0, self.start = 0.0, time.time()

    def wall(self) -> float:
        return self.wall0 + time.time() - self.start

    def restore(self, path: Path, card: dict[str, Any]) -> None:
        """The algorithm as ``path`` saved it: the snapshot pool first (its modules), then
        every module's weights, the optimizer and the iteration count; the env runners get
        the weights at once."""
        from allfives_train.rllib.algo import push_weights, restore_pool

        restore_pool(self.algo, card.get("snapshots"), card.get("snapshots_made"))
        self.algo.restore_from_path(str(path.resolve()))
        push_weights(self.algo)
        if self.own.engine == "batched":  # the pool's self opponents (snapshots start anew)
            from allfives_train.rllib.batched import push_pool

            push_pool(self.algo, snapshot=None)
        self.iteration, self.steps = int(card["iteration"]), int(card["env_steps"])
        self.wall0 = float(card.get("wall_time_s", 0.0))
        keep_progress(self.run_dir / "progress.csv", self.iteration)
        if not self.quiet:
            print(f"resumed from {path} at iteration {self.iteration}", flush=True)

    def checkpoint(self, iteration: int, name: str | None = None) -> Path:
        from allfives_train.rllib.algo import pool_state

        extra = {"wall_time_s": round(self.wall(), 1), **pool_state(self.algo)}
        return save(self.algo, self.cfg, self.run_dir / (name or f"checkpoint_{iteration:06d}"),
                    iteration, self.steps, extra)

    def learn(self) -> Path:
        """PPO iterations up to ``rllib.iterations`` (or the time limit), then ``final/``."""
        from allfives_train.shell.progress import Stage

        own = self.own
        progress = manifest.confine_path(self.run_dir, self.run_dir / "progress.csv")
        with open(progress, "a", newline="") as fh, self.stop.deferred(), \
                Stage("PPO (RLlib)", own.iterations, "iterations", initial=self.iteration,
                      quiet=self.quiet) as stage:
            manifest.note(progress)  # the run's own: a start-over may clear it
            writer = None
            while self.iteration < own.iterations:
                result = self.algo.train()
                self.iteration += 1
                row = summarize(result, self.modules)
                row["seconds"] = round(self.wall(), 2)
                self.steps = int(row["env_steps"] or 0)
                writer = writer or _progress_writer(fh, row)
                writer.writerow(row)
                fh.flush()
                stage.write(_line(row, self.modules))
                stage.update_to(self.iteration)
                saved = self.iteration % own.checkpoint_every == 0
                if saved:
                    self.checkpoint(self.iteration)
                fault_point("rllib_iteration")
                if self.stop.signum is not None and self.iteration < own.iterations:
                    self.interrupt(saved)
                if own.time_limit and time.time() - self.start >= own.time_limit:
                    break
        return self.checkpoint(self.iteration, "final")

    def interrupt(self, saved: bool) -> None:
        """Save the iteration just finished (a checkpoint and ``final/``) and stop."""
        path = self.run_dir / f"checkpoint_{self.iteration:06d}"
        if not saved:
            self.checkpoint(self.iteration)
        copy_checkpoint(path, self.run_dir / "final")
        assert self.stop.signum is not None
        raise Interrupted(self.run_dir, path, self.iteration, self.stop.signum)


def _progress_writer(fh: Any, row: dict[str, Any]) -> csv.DictWriter:
    """A writer of ``row``'s columns into progress.csv (the header when the file is new)."""
    writer = csv.DictWriter(fh, fieldnames=list(row), extrasaction="ignore")
    if fh.tell() == 0:
        writer.writeheader()
    return writer


def keep_progress(path: Path, iteration: int) -> None:
    """progress.csv without the rows after ``iteration`` (those of a stopped session that its
    checkpoint does not hold), rewritten whole."""
    if not path.is_file():
        return
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh))
    kept = rows[:1] + [r for r in rows[1:] if r and r[0].isdigit() and int(r[0]) <= iteration]
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\r\n").writerows(kept)
    write_text_atomic(path, buf.getvalue())


def holds_run(run_dir: Path) -> list[str]:
    """The run files in ``run_dir`` (a run's, whether or not it saved a checkpoint)."""
    found = [name for name in PARTS if (run_dir / name).exists()]
    return found + sorted(p.name for p in run_dir.glob("checkpoint_*"))


def newest_checkpoint(run_dir: Path, quiet: bool = False
                      ) -> tuple[Path, dict[str, Any]] | None:
    """The readable checkpoint of the highest iteration (``checkpoint_*`` before ``final/``
    at the same one) and its card. Unless ``quiet``, an unreadable one is set aside
    (``unreadable_<name>``) with a warning line, and so is one that is not the run's own
    (a link out of ``run_dir``) unless the user trusts it: RLlib unpickles its files."""
    found = []
    for path in [*run_dir.glob("checkpoint_*"), run_dir / "final"]:
        if not path.is_dir():
            continue
        card, problem = _checkpoint_card(path, run_dir)
        if card is not None:
            found.append((int(card["iteration"]), path.name != "final", path, card))
        elif not quiet:
            set_aside(path, str(problem))
    if not found:
        return None
    _, _, path, card = max(found, key=lambda f: (f[0], f[1]))
    return path, card


def _checkpoint_card(path: Path, run_dir: Path) -> tuple[dict[str, Any] | None, str | None]:
    """A checkpoint's card, or what is wrong with the checkpoint."""
    try:
        card = json.loads((path / CARD_NAME).read_text())
        int(card["iteration"]), int(card["env_steps"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return None, f"{CARD_NAME} unreadable ({type(exc).__name__}: {exc})"
    if card.get("format") != CARD_FORMAT:
        return None, f"{CARD_NAME} is not an {CARD_FORMAT} card"
    if not (path / "rllib_checkpoint.json").is_file() or not (path / "learner_group").is_dir():
        return None, "no rllib_checkpoint.json or learner_group/ (not an algorithm checkpoint)"
    if not trusted() and not path.resolve().is_relative_to(run_dir.resolve()):
        return None, "it links out of the run directory (pass --trust-checkpoint to use it)"
    return card, None


def _done(run_dir: Path) -> int | None:
    """The iteration of ``run_dir``'s readable ``final/`` (None: no finished run there)."""
    final = run_dir / "final"
    card = _checkpoint_card(final, run_dir)[0] if final.is_dir() else None
    return None if card is None else int(card["iteration"])


def _check_run_dir(run_dir: Path, resume: bool) -> tuple[Path, dict[str, Any]] | None:
    """The checkpoint to resume and its card (None: a fresh run). Starts over a run that
    saved no checkpoint; refuses a fresh run over one that did."""
    if not resume and newest_checkpoint(run_dir, quiet=True):
        raise already_holds_a_run(run_dir, f"{AGAIN}--resume")
    previous = newest_checkpoint(run_dir)
    if previous is None and resume and any(run_dir.glob("unreadable_*")):
        raise ValueError(f"--resume: no readable checkpoint left in {run_dir} (see the "
                         "warnings above); start a new run with another --run-dir")
    if previous is None:
        found = holds_run(run_dir)
        if found:  # only the files its manifest lists, each confined to the run folder
            start_over(run_dir, tuple(found))
    return previous


def runner_nodes(algo: Any) -> dict[str, Any]:
    """The node id of the driver (where the learner runs with ``num_learners=0``) and of
    each remote env runner."""
    import ray

    def node(_: Any) -> str:
        return ray.get_runtime_context().get_node_id()

    remote = algo.env_runner_group.foreach_env_runner(node, local_env_runner=False)
    return {"driver": ray.get_runtime_context().get_node_id(), "env_runners": list(remote)}


def _write_nodes(algo: Any, run_dir: Path, quiet: bool) -> None:
    """``run_dir/nodes.json``: the Ray node of the driver and of each remote env runner."""
    nodes = runner_nodes(algo)
    (run_dir / "nodes.json").write_text(json.dumps(nodes, indent=2) + "\n")
    if not quiet and nodes["env_runners"]:
        print(f"env runners on {len(set(nodes['env_runners']))} node(s); the driver's node: "
              f"{nodes['driver'][:12]}", flush=True)


def _warm_start(algo: Any, cfg: TrainConfig, modules: list[str], quiet: bool) -> None:
    """Imitate ``rllib.bc_teacher`` (:mod:`allfives_train.rllib.warmstart`); snapshots restart
    from it."""
    from allfives_train.rllib.algo import copy_module
    from allfives_train.rllib.mapping import MAIN, snapshot_id
    from allfives_train.rllib.section import uses_snapshots
    from allfives_train.rllib.warmstart import warm_start

    t0 = time.time()
    stats = warm_start(algo, cfg, modules)
    if uses_snapshots(cfg):
        copy_module(algo, MAIN, snapshot_id(0))
    if not quiet:
        print(f"warm start: imitated {cfg.section(RLLIB).bc_teacher} on "
              f"{int(stats['samples'])} decisions, held-out accuracy {stats['accuracy']:.3f}, "
              f"value rmse {stats['value_rmse']:.3f} ({time.time() - t0:.1f}s)", flush=True)


def _line(row: dict[str, Any], modules: list[str]) -> str:
    def fmt(v: Any) -> str:
        return "-" if v is None else f"{v:.3f}" if isinstance(v, float) else str(v)

    rets = " ".join(f"{m}={fmt(row.get(f'{m}_return_mean'))}" for m in modules)
    return (f"iter {row['iteration']} steps {row['env_steps']} episodes {row['episodes']} "
            f"len {fmt(row['episode_len_mean'])} return {rets} ({row['seconds']}s)")


#: rllib_ppo's plug-in of the run shell (its row: train/algos.py).
PLUGIN = Plugin(
    body=_body, prepare=_prepare,
    has_run=lambda run_dir: newest_checkpoint(run_dir, quiet=True) or holds_run(run_dir),
    no_run="--resume: no RLlib run to resume in {run_dir} (no checkpoint_* and no final/ "
           "holding an allfives_rllib.json)",
    done=_done, again=AGAIN)


def interrupted_message(stop: Any, address: str | None = None) -> str:
    """What Ctrl-C or SIGTERM saved (a :class:`allfives_train.rllib.run.Interrupted`), how to
    play it and the exact command that continues the run."""
    again = (f"allfives train --algo rllib_ppo --run-dir {shlex.quote(str(stop.run_dir))}"
             + (f" --address {shlex.quote(address)}" if address else "") + " --resume")
    if stop.checkpoint is None:
        return (f"allfives train: interrupted before the first checkpoint; nothing was saved "
                f"yet. Start it again (from the beginning) with: {again}")
    play = f"rllib:{stop.run_dir}" if stop.checkpoint.name == "final" or \
        _iteration(stop.run_dir / "final") == stop.saved_at else f"rllib:{stop.checkpoint}"
    if stop.at_once:
        return (f"allfives train: stopped at once at iteration {stop.iteration}; the newest "
                f"checkpoint is {stop.checkpoint} (iteration {stop.saved_at}, plays as "
                f"{play}). Continue with: {again}")
    return (f"allfives train: interrupted at iteration {stop.iteration}; checkpoint saved to "
            f"{stop.checkpoint} (plays as {play}). Continue with: {again}")


def _iteration(checkpoint: Path) -> int | None:
    """The iteration a checkpoint's card names (None: no readable card)."""
    from allfives_agents.trained.rllib_agent import CARD_NAME

    try:
        return int(json.loads((checkpoint / CARD_NAME).read_text())["iteration"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
