"""Output paths, checked before any work starts.

Every command that writes a file (``simulate --out``, ``eval --json/--csv/--records``,
``bench --json``, ``play --out``) calls :func:`check_output_path` on it first, so a path that
cannot be written is refused at once with one line instead of after the whole run. Nothing is
created by the check.
"""

from __future__ import annotations

import os
from pathlib import Path


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
        raise ValueError(f"{flag} {str(p)!r} is a directory: give a file path inside it, "
                         f"e.g. {str(p / 'out.jsonl')!r}")
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
