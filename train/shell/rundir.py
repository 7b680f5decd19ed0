"""A training run directory: its lock, its leftovers, and the checkpoint to resume from.

* **Lock.** ``run_dir/.lock`` names the run that holds the directory (pid, host, start time,
  command) and is held with ``fcntl.flock`` for the life of the process: a second run (fresh or
  ``--resume``) is refused with a message naming the first. The operating system releases the
  lock when its process dies, even by ``kill -9``, so a lock file left by a dead process does
  not block (on systems without ``fcntl`` the pid is checked instead, on the same host).
* **Leftovers.** Writes are atomic (a temporary ``.NAME.tmp-PID`` renamed into place); a run
  killed mid-write leaves such temporaries, and one killed while replacing ``best/`` or
  ``final/`` leaves ``.NAME.old-PID``. :func:`clean_leftovers` removes the temporaries and
  puts an ``.old`` directory back when its replacement never arrived.
* **Resume.** :func:`resumable` lists the checkpoints to try, newest first (``latest.txt``'s,
  then every ``checkpoints/step_*`` by step); :func:`readable` tells one that can be loaded;
  :func:`set_aside` renames one that cannot (``unreadable_<name>``, with a warning line).
* **Start over.** A run stopped before its first checkpoint has nothing to resume:
  :func:`start_over` clears what it left (with a warning line naming it), so the same command,
  with or without ``--resume``, runs it from the beginning. Only the files the run's
  ``manifest.json`` lists are removed (:mod:`allfives_train.shell.manifest`); :func:`clear_run`
  refuses to clear a directory that holds checkpoints, set-aside ones included, or
  ``final/`` (so a ``--resume`` never deletes a run whose checkpoints are damaged).
* **Start.** :func:`open_run` locks the directory and refuses (:func:`check_start`) a fresh
  run into a folder that is neither new, empty, nor a run of this program.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import shlex
import shutil
import socket
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from allfives_train.shell import manifest

LOCK_NAME = ".lock"
PARTS = ("config.yaml", "eval.jsonl", "learning_curve.png", "latest.txt", "snapshots",
         "checkpoints", "best", "final", "tb")  # bc_data.npz is kept (and overwritten)
LEFTOVER_FOLDERS = ("", "checkpoints", "snapshots", "labels")
#: Every name this program writes at the top of a run folder (any algo, any backend): none
#: may be a symlink, or the run would write or delete through it.
RUN_NAMES = (*PARTS, LOCK_NAME, manifest.NAME, "bc_data.npz", "labels", "distill.jsonl",
             "distill_state.json", "student.npz", "progress.csv", "nodes.json")


_bar_forced = False


def force_bar(on: bool) -> None:
    """``--progress`` on the command line: show the bar even when stderr is no terminal."""
    global _bar_forced
    _bar_forced = on


def show_bar(progress: bool, quiet: bool) -> bool:
    """Whether a run shows its progress bar: the config's ``progress``, not ``--quiet``, and
    stderr a terminal (or ``--progress`` given: :func:`force_bar`)."""
    return progress and not quiet and (_bar_forced or sys.stderr.isatty())


def warn(text: str) -> None:
    """One warning line on stderr, as every training path words it."""
    print(f"allfives train: warning: {text}", file=sys.stderr, flush=True)


class RunLock:
    """Holds ``run_dir/.lock`` until :meth:`release` (or the process's death)."""

    def __init__(self, run_dir: Path) -> None:
        self.path = Path(run_dir) / LOCK_NAME
        self._file: IO[str] | None = None

    def acquire(self) -> RunLock:
        not_a_folder(self.path.parent)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        refuse_links(self.path.parent)
        f = _open_lock(self.path)
        if not _try_lock(f, self.path):
            f.close()
            raise ValueError(f"run_dir {str(self.path.parent)!r} is in use by a running "
                             f"training ({describe(read_lock(self.path))}); wait for it to "
                             "finish or stop it, or give another --run-dir")
        f.seek(0)
        f.truncate()
        f.write(json.dumps(_holder()) + "\n")
        f.flush()
        self._file = f
        try:
            manifest.activate(self.path.parent)  # what this run writes is recorded there
        except ValueError:
            self.release()
            raise
        return self

    def release(self) -> None:
        if self._file is not None:
            manifest.deactivate()
            self.path.unlink(missing_ok=True)  # while still held, then closing drops it
            self._file.close()
            self._file = None

    def __enter__(self) -> RunLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def _open_lock(path: Path) -> IO[str]:
    """The lock file, opened for reading and writing without following a symlink."""
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags, 0o644)
    except OSError:
        if path.is_symlink():
            raise ValueError(f"run_dir {path.parent}: {LOCK_NAME} is a symlink: this program "
                             "writes only inside its run folder, never through a link; "
                             "nothing was changed: give another --run-dir") from None
        raise
    return os.fdopen(fd, "r+")


def refuse_links(run_dir: Path) -> None:
    """One line, touching nothing, when a name this program writes at the top of
    ``run_dir`` (:data:`RUN_NAMES`) is a symlink: what it wrote or deleted there would land
    outside the run folder."""
    links = [name for name in RUN_NAMES if (Path(run_dir) / name).is_symlink()]
    if links:
        raise ValueError(f"run_dir {run_dir}: {', '.join(links)} "
                         f"{'is a symlink' if len(links) == 1 else 'are symlinks'}: this "
                         "program writes and deletes only inside its run folder, never "
                         "through a link; nothing was changed: give another --run-dir")


def not_a_folder(run_dir: Path) -> None:
    """One line when ``run_dir`` (or a folder above it) exists but is not a folder."""
    for p in (Path(run_dir), *Path(run_dir).parents):
        if p.exists() or p.is_symlink():
            if not p.is_dir():
                raise ValueError(f"run_dir {run_dir}: {p} is a file, not a folder: give "
                                 "another --run-dir (a new or empty folder, or a run's own)")
            return


def _holder() -> dict[str, Any]:
    now = datetime.datetime.now(datetime.timezone.utc)
    return {"pid": os.getpid(), "host": socket.gethostname(),
            "started": now.isoformat(timespec="seconds"),
            "command": " ".join(shlex.quote(a) for a in sys.argv)}


def _try_lock(f: IO[str], path: Path) -> bool:
    try:
        import fcntl
    except ImportError:  # no flock (Windows): trust the pid in the file, on this host
        held = read_lock(path)
        return not (held and held.get("host") == socket.gethostname()
                    and _alive(int(held.get("pid", -1))))
    try:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def read_lock(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(Path(path).read_text() or "null")
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def describe(holder: dict[str, Any] | None) -> str:
    if not holder:
        return "its lock file is being written"
    return (f"pid {holder.get('pid')} on host {holder.get('host')}, started "
            f"{holder.get('started')}: {holder.get('command')}")


# ---------------------------------------------------------------------- leftovers
def clean_leftovers(run_dir: Path) -> list[str]:
    """Remove the temporaries of interrupted atomic writes (see the module docstring) and
    restore an ``.old`` directory whose replacement is missing; returns what was done. Only
    the temporaries the run's manifest lists are touched (each listed before it was made),
    each confined to the run folder (:func:`allfives_train.shell.manifest.confine`)."""
    m = manifest.listed_here(run_dir)
    if m is None:
        return []
    done: list[str] = []
    keys = sorted(k for k, v in m.files.items() if v == manifest.TEMPORARY)
    for key in sorted(keys, key=lambda k: ".old-" not in k.rsplit("/", 1)[-1]):  # .old first
        path = manifest.confine(run_dir, key)
        name = path.name
        if ".old-" in name and name.startswith("."):
            target = path.with_name(name[1:].rsplit(".old-", 1)[0])
            manifest.confine_path(run_dir, target)
            if (path.exists() or path.is_symlink()) and not (target.exists()
                                                            or target.is_symlink()):
                os.replace(path, target)
                done.append(f"restored {target.name}")
            elif path.exists() or path.is_symlink():
                _remove(path)
                done.append(f"removed {name}")
        elif path.exists() or path.is_symlink():
            _remove(path)
            done.append(f"removed {name}")
        del m.files[key]
    if keys:
        m.save()
    return done


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def holds_parts(run_dir: Path, parts: tuple[str, ...] = PARTS) -> list[str]:
    """The run files in ``run_dir`` (an unfinished run's, when nothing is resumable)."""
    return [name for name in parts if (run_dir / name).exists()]


def clear_run(run_dir: Path, parts: tuple[str, ...] = PARTS) -> None:
    """Remove an unfinished run's files (one with nothing to resume): only those its
    ``manifest.json`` lists, keeping the lock. ValueError, touching nothing, when ``run_dir``
    holds checkpoints (``checkpoints/step_*``, or ones a resume set aside) or ``final/``:
    a run this one cannot resume, never one that saved nothing."""
    saved = sorted(p.name for p in (run_dir / "checkpoints").glob("*")
                   if not p.name.startswith("."))
    if saved or (run_dir / "final").exists():
        found = ", ".join(saved + ["final"] * (run_dir / "final").exists())
        raise ValueError(f"run_dir {run_dir} holds a run with no checkpoint this command can "
                         f"resume ({found}; set aside as unreadable, or written by another "
                         "algo): nothing was deleted; continue it with the algo that wrote it, "
                         "move what you want to keep, or give another --run-dir")
    for name in parts:
        manifest.remove_listed(run_dir, name)


def start_over(run_dir: Path, parts: tuple[str, ...] = PARTS) -> None:
    """Clear, with a warning line, what a run stopped before its first checkpoint left (the
    files its manifest lists; :func:`clear_run`)."""
    if holds_parts(run_dir, parts) and not (run_dir / manifest.NAME).is_file():
        raise ValueError(f"run_dir {run_dir} holds files of no run of this program (no "
                         f"{manifest.NAME}; {', '.join(holds_parts(run_dir, parts))}): "
                         "nothing was changed; give another --run-dir")
    found = [name for name in holds_parts(run_dir, parts) if manifest.listed(run_dir, name)]
    clear_run(run_dir, parts)
    if found:
        warn(f"{run_dir} holds an unfinished run that saved no checkpoint (it was stopped "
             f"before its first one; found {', '.join(found)}): starting it over")


def final_steps(run_dir: Path, unit: str = "steps") -> int | None:
    """The learner steps (``unit`` ``"positions"``: the positions labelled) of the run's
    ``final/`` checkpoint when its manifest lists one, else None (no finished run there)."""
    m = manifest.listed_here(run_dir) if Path(run_dir).is_dir() else None
    if m is None or "final/card.json" not in m.files:
        return None
    try:
        card = json.loads(manifest.confine(run_dir, "final/card.json").read_text())
        done = card["distill"]["labelled"] if unit == "positions" else card["steps"]
        return int(done)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def finished(run_dir: Path, total: int, resume: bool, unit: str = "steps") -> bool:
    """Whether ``run_dir`` holds a finished run (its ``final/`` at ``total`` or more
    ``unit``): then a ``--resume`` says so on stderr and does nothing (True), and a fresh run
    is refused in one line; both touch nothing."""
    return said_finished(run_dir, final_steps(run_dir, unit), total, resume,
                         f"{unit}, total_steps", "--total-steps")


def said_finished(run_dir: Path, done: int | None, total: int, resume: bool, unit: str,
                  flag: str, backend: str = "") -> bool:
    """``done`` (the run's ``final/``, None: none) at ``total`` or more: with ``resume``
    say on stderr that the run is finished and how to train it longer (True); else refuse in
    one line. False (nothing said) when the run is not finished."""
    if done is None or done < total:
        return False
    text = (f"run_dir {run_dir} holds a finished run ({done:,} {unit} {total:,}; final/ "
            f"written): nothing was changed; to train it longer, run allfives train {backend}"
            f"--run-dir {run_dir} --resume {flag} N with N above {done:,}, or give another "
            "--run-dir")
    if not resume:
        raise ValueError(text)
    print(f"allfives train: {text}", file=sys.stderr, flush=True)
    return True


def already_holds_a_run(run_dir: Path, again: str = "--resume") -> ValueError:
    """The refusal of a fresh run into a directory that holds one with checkpoints."""
    return ValueError(f"run_dir {run_dir} already holds a run: continue it with {again}, or "
                      "give another --run-dir")


def check_start(run_dir: Path, resume: bool, file: str) -> None:
    """Refuse, in one line and touching nothing, a fresh run into a folder that is neither
    new, empty, nor a run of this program (``manifest.json``) that saved no checkpoint, and
    a ``--resume`` of a run without a manifest unless trusted (``--trust-checkpoint``: its
    files are recorded, hashes included). Call with the run's lock held."""
    from allfives_env.inputs.trust import FLAG, trusted

    found = manifest.load(run_dir)
    content = sorted(p.name for p in run_dir.iterdir()
                     if p.name not in (LOCK_NAME, manifest.NAME)) if run_dir.is_dir() else []
    if not resume and resumable(run_dir, file):
        raise already_holds_a_run(run_dir)
    if found is not None or not content:
        return
    shown = ", ".join(content[:4]) + (", ..." if len(content) > 4 else "")
    if not resume:
        raise ValueError(f"run_dir {run_dir} is not empty ({shown}) and is not a run of this "
                         f"program (no {manifest.NAME}): nothing was changed; give another "
                         "--run-dir (a new or empty folder), or --resume if it is a run "
                         "written before runs recorded their files")
    if not trusted():
        raise ValueError(f"--resume: run_dir {run_dir} has no {manifest.NAME} (a run written "
                         "before runs recorded their files, or not a run): pass "
                         f"{FLAG} to resume it if you trust its files (their hashes are "
                         "recorded then), or give another --run-dir")
    manifest.activate(run_dir, adopt=(*PARTS, "bc_data.npz"))


@contextlib.contextmanager
def open_run(run_dir: Path, resume: bool, file: str) -> Iterator[None]:
    """The run directory locked (:class:`RunLock`) and checked (:func:`check_start`)."""
    with RunLock(run_dir):
        check_start(run_dir, resume, file)
        yield


def set_aside(checkpoint: Path, problem: str) -> Path:
    """Rename an unreadable checkpoint ``unreadable_<name>`` (``unreadable_<name>.2`` ...
    when taken; kept for a look, never tried again, never deleted), with a warning line."""
    moved = checkpoint.with_name(f"unreadable_{checkpoint.name}")
    k = 1
    while moved.exists() or moved.is_symlink():
        k += 1
        moved = checkpoint.with_name(f"unreadable_{checkpoint.name}.{k}")
    manifest.guard(checkpoint.parent, moved.parent)  # the folder: the link itself is moved
    os.replace(checkpoint, moved)
    manifest.rename(checkpoint, moved)
    warn(f"checkpoint {checkpoint} is unreadable: {problem}; moved to {moved.name}, trying the "
         "one before it")
    return moved


# ---------------------------------------------------------------------- resume
def readable(checkpoint: Path, file: str = "model.zip") -> str | None:
    """None if ``checkpoint`` can be resumed from, else what is wrong with it (its card, and
    ``file``: ``model.zip``, or ``trainer.pt``, also a zip archive)."""
    try:
        card = json.loads((checkpoint / "card.json").read_text())
        int(card["steps"])
        list(card["eval_history"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return f"card.json unreadable ({type(exc).__name__}: {exc})"
    try:
        with zipfile.ZipFile(checkpoint / file) as z:
            bad = z.testzip()
    except (OSError, zipfile.BadZipFile, EOFError) as exc:
        return f"{file} unreadable ({type(exc).__name__}: {exc})"
    return f"{file} has a damaged member {bad}" if bad else None


def resumable(run_dir: Path, file: str = "model.zip") -> list[Path]:
    """Checkpoints to try, best first: the one ``latest.txt`` names, then the others by
    step, newest first (only directories holding ``file``: the SB3 ``model.zip``, or the
    fast path's ``trainer.pt``)."""
    found: list[Path] = []
    marker = run_dir / "latest.txt"
    try:
        name = marker.read_text().strip()
    except OSError:
        name = ""
    if name and "/" not in name and name not in (".", ".."):
        found.append(run_dir / "checkpoints" / name)
    steps = sorted((run_dir / "checkpoints").glob("step_*"), reverse=True)
    found += [p for p in steps if p not in found]
    return [p for p in found if (p / file).is_file()]


class TrainingInterrupted(Exception):
    """Ctrl-C or SIGTERM stopped the run; ``checkpoint`` is what was saved (None: nothing
    yet); ``steps`` counts ``unit`` (``"steps"``, ``"positions"`` labelled in this run, or
    ``"iterations"``); ``signum``: the signal (set by the run shell when the trainer did
    not)."""

    def __init__(self, run_dir: Path, checkpoint: Path | None, steps: int,
                 unit: str = "steps", signum: int | None = None) -> None:
        super().__init__("interrupted")
        self.run_dir, self.checkpoint, self.steps = run_dir, checkpoint, steps
        self.unit, self.signum = unit, signum


@contextlib.contextmanager
def sigterm_as_ctrl_c() -> Iterator[list[int]]:
    """SIGTERM (a scheduler's or ``kill``'s stop) saves and exits as Ctrl-C does, inside the
    block; yields the signals received (empty when the stop was a Ctrl-C)."""
    import signal

    stopped_by: list[int] = []

    def stop_on_term(signum: int, frame: Any) -> None:
        stopped_by.append(signum)
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, stop_on_term)
    try:
        yield stopped_by
    finally:
        signal.signal(signal.SIGTERM, previous)
