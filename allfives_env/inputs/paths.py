"""Output paths, checked before any work starts.

Every command that writes a file (``simulate --out``, ``eval --json/--csv/--records``,
``bench --json``, ``play --out``) calls :func:`check_output_path` on it first, so a path that
cannot be written is refused at once with one line instead of after the whole run. Nothing is
created by the check.

:func:`atomic_write` then writes such a file whole or not at all: through a hidden temporary
file in the target's own directory (``.NAME.XXXX.tmp``), renamed into place when complete and
removed on any failure, with the permissions a plain ``open()`` would give (not ``mkstemp``'s
0600).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO


def check_output_path(path: str | os.PathLike[str], flag: str) -> Path:
    """``path`` as a :class:`Path` if a file can be written there; else ``ValueError`` naming
    ``flag``, the path and what is wrong.

    Refused: an existing directory, a path whose parent is a file, a parent directory (or
    the nearest existing one above it, where the missing ones would be created) that this
    user may not write to, and an existing file that may not be replaced.
    """
    p = Path(path).expanduser()
    if str(path) == "" or p.name in ("", ".", ".."):
        raise ValueError(f"{flag} {str(path)!r}: give a file name, e.g. results/out.json")
    if p.is_dir():
        example = p / ("out" + {"--json": ".json", "--csv": ".csv"}.get(flag, ".jsonl"))
        raise ValueError(f"{flag} {str(p)!r} is a directory: give a file path inside it, "
                         f"e.g. {str(example)!r}")
    if p.exists() and not os.access(p, os.W_OK):
        raise ValueError(f"{flag} {str(p)!r}: the file exists and may not be replaced "
                         "(no write permission)")
    parent = p.parent
    while not parent.exists():
        if parent == parent.parent:
            break
        parent = parent.parent
    if parent.exists() and not parent.is_dir():
        raise ValueError(f"{flag} {str(p)!r}: {str(parent)!r} is a file, not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ValueError(f"{flag} {str(p)!r}: cannot write in directory {str(parent)!r} "
                         "(no permission)")
    return p


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike[str], mode: str = "w", **kw: object
                 ) -> Iterator[IO]:
    """``with atomic_write(path) as f: ...``: ``path`` appears complete or not at all."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=f".{p.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, mode, **kw) as f:  # type: ignore[call-overload]
            yield f
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, p)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
