"""The run shell: the one set-up of every training run, whatever its algorithm.

:func:`train` is what ``allfives train``, the recipes and the benchmarks call (through each
algorithm's ``train``, named by its row of the table, train/algos.py). In this order, for
every algorithm:

1. the stops: SIGINT and SIGTERM raise KeyboardInterrupt in the trainer, which saves what
   its last whole round left and raises :class:`~allfives_train.shell.rundir.TrainingInterrupted`
   (its ``signum`` set here: the exit status is ``128 + signum``) (:class:`Stopper`);
2. the plug-in's checks before any work (:attr:`Plugin.prepare`: threads, device, the
   config's inputs);
3. the run folder: not a file (:func:`~allfives_train.shell.rundir.not_a_folder`); a ``--resume``
   with nothing to resume refused in one line (:attr:`Plugin.has_run`); the checks that read
   it before it is locked (:attr:`Plugin.before_lock`: the trust rule); a finished run said
   finished (``--resume``) or refused (a fresh run) in one line, touching nothing
   (:func:`~allfives_train.shell.rundir.said_finished`, in the budget's unit: :mod:`.budget`);
4. the lock (:class:`~allfives_train.shell.rundir.RunLock`, which records what the run writes in
   its ``manifest.json``), the start checks (:func:`~allfives_train.shell.rundir.check_start`),
   and what a killed run left half written removed (with a warning line);
5. the plug-in's body (:attr:`Plugin.body`), which picks its checkpoint to resume with
   :func:`resume_point` (or its own rule: search distillation's shards), trains, writes its
   checkpoints and cards and evaluates through the shared hooks, and returns ``final/``.

A plug-in is its row of the table (data: its budget's unit and field, whether its steps come
in rollouts, its trainer, checks and section) and a :class:`Plugin` (the functions above).
"""

from __future__ import annotations

import dataclasses
import signal
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from allfives_train.shell.budget import Budget, budget
from allfives_train.shell.rundir import (
    PARTS,
    RunLock,
    TrainingInterrupted,
    already_holds_a_run,
    check_start,
    clean_leftovers,
    not_a_folder,
    said_finished,
    set_aside,
    start_over,
    warn,
)
from allfives_train.shell.stopping import Stopper


@dataclasses.dataclass
class Session:
    """One command's run of one config, as the shell hands it to the plug-in's body."""

    cfg: Any
    """The config (a plug-in's :attr:`Plugin.prepare` may replace it with a derived one)."""
    resume: bool
    quiet: bool
    started: float
    """When the command started (``time.perf_counter()``), counted in the cards' wall time."""
    stop: Stopper
    """The stops (``stop.signum``; ``stop.deferred()`` for a loop that finishes its round)."""
    hooks: tuple[Any, ...] = ()
    """More hooks after the run's own (``allfives bench --train``'s clock)."""
    run_dir: Path = Path()
    budget: Budget | None = None
    data: Any = None
    """What the plug-in's ``prepare`` hands its body (maskable_ppo: the warm start's data)."""


@dataclasses.dataclass(frozen=True)
class Plugin:
    """What an algorithm hands the shell besides its row of the table: the functions the
    shell calls, in the order of the module docstring."""

    body: Callable[[Session], Path]
    """Trains with the run folder locked and cleaned; returns ``final/``."""
    has_run: Callable[[Path], Any]
    """Whether a run folder holds something ``--resume`` continues (truthy)."""
    no_run: str
    """What ``--resume`` says when :attr:`has_run` is false (``{run_dir}`` filled in)."""
    done: Callable[[Path], int | None]
    """The budget's units of the folder's finished ``final/`` (None: no finished run)."""
    prepare: Callable[[Session], None] | None = None
    """The checks before any work and the process's set-up (threads, device, inputs)."""
    before_lock: Callable[[Session], None] | None = None
    """Checks that read the run folder before it is locked (maskable_ppo: the trust rule)."""
    checkpoint_file: str | None = None
    """The file every checkpoint of the plug-in holds (``model.zip``, ``trainer.pt``): the
    shell then refuses a fresh run into a folder that holds one, or that is not a run of this
    program (:func:`~allfives_train.shell.rundir.check_start`); None: the body checks its folder."""
    again: str = ""
    """The flags that name the algorithm in the commands the shell prints
    (``--algo rllib_ppo ``), where ``--run-dir ... --resume`` alone would not find it."""


def train(plugin: Plugin, cfg: Any, resume: bool = False, quiet: bool = False,
          started: float | None = None, hooks: Sequence[Any] = ()) -> Path:
    """Run ``cfg`` with ``plugin`` (the module docstring's steps); returns ``final/``.
    Raises :class:`~allfives_train.shell.rundir.TrainingInterrupted` on a stop, ValueError (one
    line) for a config or a run folder it refuses."""
    started = time.perf_counter() if started is None else started
    with Stopper() as stop:
        session = Session(cfg, resume, quiet, started, stop, tuple(hooks))
        try:
            return _run(plugin, session)
        except TrainingInterrupted as stopped:
            if stopped.signum is None:
                stopped.signum = stop.signum or signal.SIGINT
            raise


def _run(plugin: Plugin, s: Session) -> Path:
    if plugin.prepare is not None:
        plugin.prepare(s)
    s.run_dir = run_dir = s.cfg.resolved_run_dir()
    s.budget = spent = budget(s.cfg)
    not_a_folder(run_dir)
    if s.resume and not plugin.has_run(run_dir):
        raise ValueError(plugin.no_run.format(run_dir=run_dir))
    if plugin.before_lock is not None:
        plugin.before_lock(s)
    flag = "--" + spent.field.replace("_", "-")
    if said_finished(run_dir, plugin.done(run_dir), spent.total, s.resume,
                     f"{spent.unit}, {spent.field}", flag, plugin.again):
        return run_dir / "final"
    with RunLock(run_dir):
        if plugin.checkpoint_file is not None:
            check_start(run_dir, s.resume, plugin.checkpoint_file)
        for line in clean_leftovers(run_dir):
            warn(f"{run_dir}: {line} (left by an interrupted run)")
        return plugin.body(s)


def start_line(cfg: Any, resume: bool) -> str:
    """A run's first line (``allfives train`` prints it before torch is imported): the game,
    the algo, the run folder and what it will train, in the algo's unit
    (:meth:`~allfives_train.shell.budget.Budget.line`: steps rounded up to whole rollouts,
    said when they are)."""
    rules = cfg.game().rules
    table = f"{rules.players} seats" + (", teams" if rules.teams else "")
    return (f"allfives train: {'resuming ' if resume else ''}{rules.preset} {table}, algo "
            f"{cfg.algo}, run dir {cfg.resolved_run_dir()}, {budget(cfg).line()}")


NONE_LEFT = ("--resume: no readable checkpoint left in {run_dir} (set aside as unreadable_*, "
             "see the warnings above; nothing was deleted): look at them, or start a new run "
             "with another --run-dir")


def resume_point(run_dir: Path, resume: bool, candidates: Sequence[Path],
                 load: Callable[[Path], Any], parts: tuple[str, ...] = PARTS,
                 again: str = "--resume") -> tuple[Path, Any] | None:
    """The checkpoint a run continues from, and what ``load`` made of it (None: a fresh
    run). ``candidates``: the checkpoints to try, best first; ``load(path)`` returns what it
    loaded, or a string saying what is wrong (that checkpoint is then set aside as
    ``unreadable_*`` with a warning line and the next one tried). A fresh run over
    checkpoints is refused; a resume that finds none readable is refused (nothing deleted);
    a run that saved no checkpoint is started over (its listed ``parts`` cleared)."""
    if candidates and not resume:
        raise already_holds_a_run(run_dir, again)
    for path in candidates:
        loaded = load(path)
        if not isinstance(loaded, str):
            return path, loaded
        set_aside(path, loaded)
    if candidates or (resume and _set_aside_here(run_dir)):
        raise ValueError(NONE_LEFT.format(run_dir=run_dir))
    start_over(run_dir, parts)
    return None


def _set_aside_here(run_dir: Path) -> bool:
    """Whether a resume set checkpoints of ``run_dir`` aside (``unreadable_*``)."""
    return any(run_dir.glob("unreadable_*")) or any(
        (run_dir / "checkpoints").glob("unreadable_*"))
