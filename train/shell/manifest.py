"""What a run wrote: ``run_dir/manifest.json``, the only files a run may ever delete or load.

Every file a training run writes into its run directory is recorded here (its path relative
to the run directory and its size; a code-carrying file, one loaded with ``torch.load`` or
unpickled, such as ``model.zip`` or ``trainer.pt``, also its sha256). The record is written
before the file is renamed into place, so a file in place is always listed.

* **Deleting.** Starting an unfinished run over, pruning old checkpoints and snapshots:
  :func:`remove_listed` removes listed files only (then the folders left empty); anything
  else in the folder (a user's own file) stays.
* **Loading.** :func:`verify` lets a code-carrying file load only when its sha256 is the
  recorded one, and the manifest and the file belong to this user and are not writable by
  everyone; else a one-line ``ValueError`` (``--trust-checkpoint`` overrides it).
* **Old runs.** A run directory written before manifests has none: a ``--resume`` with
  ``--trust-checkpoint`` records what is there (hashes included) and continues; without it
  the resume is refused in one line.

The manifest of the run that holds the lock is the *active* one (:func:`activate`, done by
:class:`allfives_train.shell.rundir.RunLock`): the writers of
:mod:`allfives_train.shell.checkpoints`
record into it through :func:`note` and :func:`note_pending`.

**Confinement.** The manifest is data from a folder that may have been handed over or edited,
so every key is checked when it is loaded (:func:`confine`): a key is a plain relative path
(no ``..``, no absolute path) that reaches its file without passing through a symlink, or the
whole manifest is refused in one line, touching nothing. Every path the program deletes,
renames or overwrites in the run directory passes the same check (:func:`confine_path`), and
so do the temporaries of its atomic writes, which are listed (:func:`note_temporary`) before
they are made, so that leftover cleaning removes only what the manifest lists.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

NAME = "manifest.json"
FORMAT = "allfives-run-manifest/1"
#: Suffixes of the files that can run code when loaded (torch.load, pickle, SB3 zips).
CODE_SUFFIXES = (".zip", ".pt", ".pth", ".pkl", ".pickle")


#: The entry of a temporary an atomic write is making (listed before it is made).
TEMPORARY = {"temporary": True}


def outside(run_dir: Path, rel: str) -> str | None:
    """Why the manifest key ``rel`` does not name a path inside ``run_dir`` reached without a
    symlink (``..``, an absolute path, a symlinked component, a resolved path outside), or
    None when it does."""
    if not isinstance(rel, str) or not rel or "\x00" in rel:
        return "is not a relative path"
    if (PurePosixPath(rel).is_absolute() or PureWindowsPath(rel).is_absolute()
            or PureWindowsPath(rel).drive or "\\" in rel):
        return "is an absolute path"
    parts = rel.split("/")
    if ".." in parts:
        return "goes up out of the run folder ('..')"
    if any(part in ("", ".") for part in parts):
        return "is not a plain relative path"
    path = Path(run_dir)
    for part in parts:
        path = path / part
        if path.is_symlink():
            return f"passes through a symlink ({path})"
        if not path.exists():
            break
    base = Path(run_dir).resolve()
    if not (Path(run_dir) / rel).resolve().is_relative_to(base):
        return "resolves outside the run folder"
    return None


def confine(run_dir: Path, rel: str) -> Path:
    """``run_dir / rel`` when the key ``rel`` lies inside ``run_dir`` without passing through
    a symlink; else a one-line ValueError (the only way this program reaches a listed file
    to delete, rename or overwrite it)."""
    why = outside(run_dir, rel)
    if why is not None:
        raise ValueError(f"run_dir {run_dir}: {NAME} lists {rel!r}, which {why}: this program "
                         "touches only files inside its run folder (no '..', no absolute "
                         "path, no symlink); nothing was changed: give another --run-dir")
    return Path(run_dir) / rel


def confine_path(run_dir: Path, path: Path) -> Path:
    """``path`` (one the run is about to delete, rename or overwrite) when it lies inside
    ``run_dir`` without passing through a symlink; else a one-line ValueError."""
    try:
        rel = Path(os.path.normpath(path)).relative_to(os.path.normpath(run_dir)).as_posix()
    except ValueError:
        rel = Path(path).as_posix()
    why = outside(run_dir, rel)
    if why is not None:
        raise ValueError(f"run_dir {run_dir}: {str(path)!r} {why}: this program writes and "
                         "deletes only inside its run folder (no '..', no absolute path, no "
                         "symlink); nothing more was changed: give another --run-dir")
    return Path(path)


class Manifest:
    """The files of one run directory: ``{relative path: {"size": n, "sha256": hex}}``."""

    def __init__(self, run_dir: Path, files: dict[str, dict[str, Any]] | None = None) -> None:
        self.run_dir = Path(run_dir)
        self.files: dict[str, dict[str, Any]] = dict(files or {})

    def rel(self, path: Path) -> str | None:
        """``path`` relative to the run directory, or None when it lies outside it."""
        for base, p in ((self.run_dir, Path(path)),
                        (self.run_dir.resolve(), Path(path).resolve())):
            try:
                return Path(os.path.normpath(p)).relative_to(os.path.normpath(base)).as_posix()
            except ValueError:
                continue
        return None

    def record(self, rel: str, source: Path) -> None:
        """List ``rel``, its size and (code-carrying) sha256 read from ``source``."""
        entry: dict[str, Any] = {"size": source.stat().st_size}
        if rel.endswith(CODE_SUFFIXES):
            entry["sha256"] = sha256(source)
        self.files[rel] = entry

    def forget(self, rel: str) -> None:
        """Drop ``rel`` and everything under it."""
        for key in [k for k in self.files if k == rel or k.startswith(rel + "/")]:
            del self.files[key]

    def save(self) -> None:
        self.run_dir.mkdir(parents=True, exist_ok=True)
        path = self.run_dir / NAME
        tmp = path.with_name(f".{NAME}.tmp-{os.getpid()}")
        data = {"format": FORMAT, "files": dict(sorted(self.files.items()))}
        write_new(tmp, (json.dumps(data, indent=1) + "\n").encode())
        os.replace(tmp, path)


_active: Manifest | None = None


def write_new(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` without following a symlink there (a link planted at a
    temporary's name is refused in one line, its target untouched)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as exc:
        if Path(path).is_symlink():
            raise ValueError(f"{path} is a symlink: this program writes only inside its run "
                             "folder, never through a link; nothing was changed") from None
        raise exc
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def load(run_dir: Path) -> Manifest | None:
    """The run's manifest; None when it has none; ValueError (one line) when unreadable."""
    path = Path(run_dir) / NAME
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text())
        files = data["files"]
        if data.get("format") != FORMAT or not isinstance(files, dict):
            raise ValueError(f"not an {FORMAT} file")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"run_dir {run_dir}: {NAME} is unreadable ({type(exc).__name__}: "
                         f"{exc}); nothing was changed: give another --run-dir") from None
    for rel in files:  # data from a folder anyone may have written: every key confined
        confine(Path(run_dir), rel)
    return Manifest(Path(run_dir), files)


def activate(run_dir: Path, adopt: tuple[str, ...] = ()) -> Manifest:
    """Make ``run_dir``'s manifest the active one (a new, empty one when it has none;
    ``adopt``: the run's parts (files and folders) to list, hashes included, when it has none:
    an old run the user trusts)."""
    global _active
    found = load(run_dir)
    _active = found if found is not None else Manifest(Path(run_dir))
    if found is None and adopt:
        for name in adopt:
            note(Path(run_dir) / name, save=False)
        _active.save()
    return _active


def deactivate() -> None:
    global _active
    _active = None


def active() -> Manifest | None:
    return _active


def note(path: Path, save: bool = True) -> None:
    """Record ``path`` (a file, or every file under a folder) in the active manifest when it
    lies in its run directory."""
    m = _active
    rel = m.rel(path) if m is not None else None
    if m is None or rel is None or rel in ("", NAME) or not Path(path).exists():
        return
    path = confine(m.run_dir, rel)
    m.forget(rel)
    files = [path] if path.is_file() else sorted(
        p for p in path.rglob("*") if p.is_file() and not p.is_symlink())
    for f in files:
        m.record(f"{rel}/{f.relative_to(path).as_posix()}" if f != path else rel, f)
    if save:
        m.save()


def note_pending(target: Path, source: Path) -> None:
    """Record ``source`` (a file or folder about to be renamed to ``target``) under
    ``target``'s name, replacing what was listed there."""
    m = _active
    rel = m.rel(target) if m is not None else None
    if m is None or rel is None or rel in ("", NAME):
        return
    confine(m.run_dir, rel)
    m.forget(rel)
    if source.is_file():
        m.record(rel, source)
    else:
        for f in sorted(p for p in source.rglob("*") if p.is_file()):
            m.record(f"{rel}/{f.relative_to(source).as_posix()}", f)
    m.save()


def rename(old: Path, new: Path) -> None:
    """``old`` (a listed file or folder) was renamed ``new``: list its files there."""
    m = _active
    a, b = (m.rel(old), m.rel(new)) if m is not None else (None, None)
    if m is None or a is None or b is None:
        return
    moving = [k for k in m.files if k == a or k.startswith(a + "/")]
    if not moving:  # nothing of it listed (a link set aside, say): nothing to move here
        return
    confine(m.run_dir, a)
    confine(m.run_dir, b)
    for key in moving:
        m.files[b + key[len(a):]] = m.files.pop(key)
    m.save()


def prune(folder: Path, pattern: str, keep: int, also: set[str] | frozenset[str] = frozenset()
          ) -> list[str]:
    """Remove the manifest-listed entries of ``folder`` matching ``pattern`` but the newest
    ``keep`` (by name) and those named in ``also``; ``keep`` 0 keeps all."""
    m = _active
    if m is None or keep <= 0:
        return []
    gone: list[str] = []
    for path in sorted(folder.glob(pattern))[:-keep]:
        rel = m.rel(path)
        if path.name not in also and rel is not None:
            gone += remove_listed(m.run_dir, rel)
    return gone


def listed(run_dir: Path, rel: str) -> bool:
    """Whether ``rel`` (a file, or a folder holding listed files) is in the active manifest
    (or ``run_dir``'s own when none is active)."""
    m = _active if _active is not None and _active.run_dir == Path(run_dir) else load(run_dir)
    return m is not None and any(k == rel or k.startswith(rel + "/") for k in m.files)


def remove_listed(run_dir: Path, rel: str) -> list[str]:
    """Delete what the manifest lists at or under ``rel`` (nothing else: a file not listed
    stays, and so does its folder), then the folders left empty; returns what was removed.
    Each path is confined first (:func:`confine`: a one-line ValueError, before anything is
    deleted, when one would leave the run folder or pass through a symlink)."""
    m = _active if _active is not None and _active.run_dir == Path(run_dir) else load(run_dir)
    if m is None:
        return []
    keys = sorted(k for k in m.files if k == rel or k.startswith(rel + "/"))
    paths = [confine(Path(run_dir), key) for key in keys]  # all checked, then deleted
    top = confine(Path(run_dir), rel)
    for key, path in zip(keys, paths):
        if m.files.get(key) == TEMPORARY and path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)  # a listed temporary folder, whole
        elif path.is_file() or path.is_symlink():
            path.unlink()
        m.forget(key)
    if top.is_dir() and not top.is_symlink():
        for folder, _, _ in sorted(os.walk(top), reverse=True):  # links are not followed
            _rmdir_if_empty(Path(folder))
    if keys:
        m.save()
    return keys


def listed_here(run_dir: Path) -> Manifest | None:
    """The active manifest when it is ``run_dir``'s, else ``run_dir``'s own (None: none)."""
    return _active if _active is not None and _active.run_dir == Path(run_dir) else \
        load(run_dir)


@contextlib.contextmanager
def temporary(path: Path) -> Iterator[Path]:
    """List ``path`` (a temporary an atomic write is about to make in the active run's
    folder) before it is made, so that a kill leaves only listed leftovers; forgotten when
    the write is done. A file already there that the manifest does not list as a temporary
    is not this program's: refused in one line, untouched."""
    m = _active
    rel = m.rel(path) if m is not None else None
    if m is None or rel is None or rel in ("", NAME):
        yield path
        return
    confine(m.run_dir, rel)
    if (path.exists() or path.is_symlink()) and m.files.get(rel) != TEMPORARY:
        raise ValueError(f"run_dir {m.run_dir}: {path} is in the way of a write and is not "
                         f"listed in {NAME}, so this program did not make it: nothing was "
                         "changed; move it away")
    m.files[rel] = dict(TEMPORARY)
    m.save()
    _remove_temporary(path)  # one a killed run of this program left (listed as such)
    try:
        yield path
    finally:
        if m.files.get(rel) == TEMPORARY and not (path.exists() or path.is_symlink()):
            del m.files[rel]
            m.save()


def guard(*paths: Path) -> None:
    """Confine (:func:`confine_path`) each of ``paths`` that lies in the active run's folder
    before the run deletes, renames or overwrites it."""
    m = _active
    for path in paths:
        if m is not None and m.rel(path) not in (None, "", "."):
            confine_path(m.run_dir, path)


def _remove_temporary(path: Path) -> None:
    """Remove a listed temporary: a folder whole, a file or a link itself (never its
    target)."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    elif path.is_symlink() or path.exists():
        path.unlink(missing_ok=True)


def _rmdir_if_empty(folder: Path) -> None:
    try:
        folder.rmdir()
    except OSError:
        pass


def verify(path: Path, run_dir: Path) -> None:
    """A one-line ValueError unless ``path`` (a code-carrying file of the run in
    ``run_dir``) is the one this program wrote: listed in the manifest with this sha256, the
    manifest and the file this user's and not writable by everyone. Trusted: no check."""
    from allfives_env.inputs.trust import FLAG, trusted

    if trusted():
        return
    m = load(run_dir)
    rel = m.rel(path) if m is not None else None
    problem: str | None
    if m is None:
        problem = (f"the run has no {NAME} (written before runs recorded their files): pass "
                   f"{FLAG} to resume it if you trust its files (their hashes are recorded "
                   "then)")
    elif rel is None or rel not in m.files or "sha256" not in m.files[rel]:
        problem = f"it is not listed in {NAME}, so this program did not write it"
    elif sha256(path) != m.files[rel]["sha256"]:
        problem = f"its sha256 differs from the one {NAME} recorded when it was written"
    else:
        problem = _unsafe_owner(path, run_dir)
    if problem:
        raise ValueError(f"--resume: refusing to load {path}, which can run code when loaded: "
                         f"{problem}" + ("" if "trust" in problem else
                                         f"; pass {FLAG} only if you trust it"))


def _unsafe_owner(path: Path, run_dir: Path) -> str | None:
    """Why another user could have changed ``path`` or the manifest, or None."""
    getuid = getattr(os, "getuid", None)
    if getuid is None:  # Windows: no owners to check
        return None
    for p in (Path(run_dir) / NAME, Path(path), Path(path).parent):
        st = p.stat()
        if st.st_uid != getuid():
            return f"{p} belongs to another user (uid {st.st_uid})"
        if st.st_mode & 0o002:
            return f"{p} can be written by every user"
    return None
