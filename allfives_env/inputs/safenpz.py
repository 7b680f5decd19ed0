"""Checking an untrusted ``.npz`` before any array is allocated.

:func:`check_npz` reads only the zip directory and each member's ``.npy`` header (a few hundred
bytes decompressed per member) and refuses, in one ``ValueError`` line:

* more than :data:`MAX_NPZ_MEMBERS` members, or a member that is not an ``.npy`` array;
* a member whose uncompressed size in the zip directory exceeds the cap, or members whose
  sizes together do (a zip bomb is refused from its directory, before it is inflated);
* a header whose declared shape x item size exceeds the cap, alone or summed over the
  members (``shape (10**12,)`` is refused without allocating it);
* a dtype that is not plain: object arrays (pickles), structured or sub-array dtypes; numbers
  (bool, int, float, complex) and fixed-width strings only.

The cap is :data:`MAX_NPZ_BYTES` (64 MiB): the largest shipped policy is 386 KB (97 k
float32 weights), and a [1024, 1024] torso is about 6.4 MB, so 64 MiB leaves ten times that.
Only then may ``np.load(path, allow_pickle=False)`` read it.
"""

from __future__ import annotations

import math
import zipfile
import zlib
from pathlib import Path
from typing import IO

import numpy as np
from numpy.lib import format as npy

#: The most bytes an ``.npz`` may hold uncompressed (per member and in all).
MAX_NPZ_BYTES = 64 << 20
#: The most members (arrays) an ``.npz`` may hold.
MAX_NPZ_MEMBERS = 256
_PLAIN_KINDS = "biufcSU"  # bool, ints, floats, complex, bytes and unicode strings


def check_npz(path: str | Path, what: str = "numpy .npz file", cap: int = MAX_NPZ_BYTES) -> None:
    """Refuse (one-line ``ValueError`` naming ``what``) an ``.npz`` over the caps above."""
    try:
        with zipfile.ZipFile(path) as archive:
            _check_members(archive, cap)
    except (OSError, EOFError, zipfile.BadZipFile, zlib.error, NotImplementedError,
            RuntimeError) as exc:
        detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ValueError(f"{path}: not a readable {what} ({detail[:120]})") from None
    except ValueError as exc:
        raise ValueError(f"{path}: not a readable {what} ({exc})") from None


def _check_members(archive: zipfile.ZipFile, cap: int) -> None:
    members = archive.infolist()
    if len(members) > MAX_NPZ_MEMBERS:
        raise ValueError(f"{len(members)} members; at most {MAX_NPZ_MEMBERS}")
    stored = declared = 0
    for info in members:
        name = info.filename[:60]
        stored += info.file_size
        if info.file_size > cap:
            raise ValueError(f"member {name!r} unpacks to {info.file_size} bytes; at most "
                             f"{cap} bytes")
        if stored > cap:
            raise ValueError(f"its members unpack to {stored} bytes so far; at most {cap} "
                             "bytes in all")
        if not info.filename.endswith(".npy"):
            raise ValueError(f"member {name!r} is not a .npy array")
        with archive.open(info) as f:
            declared += _array_bytes(f, name)
        if declared > cap:
            raise ValueError(f"member {name!r}: its arrays declare {declared} bytes; at most "
                             f"{cap} bytes in all")


def _array_bytes(f: IO[bytes], name: str) -> int:
    """The bytes the ``.npy`` header at ``f`` declares (shape x item size), checked plain."""
    version = npy.read_magic(f)
    if version == (1, 0):
        shape, _, dtype = npy.read_array_header_1_0(f)
    elif version == (2, 0):
        shape, _, dtype = npy.read_array_header_2_0(f)
    else:
        raise ValueError(f"member {name!r}: .npy format version {version} is not read")
    if dtype.hasobject or dtype.fields is not None or dtype.subdtype is not None \
            or dtype.kind not in _PLAIN_KINDS:
        raise ValueError(f"member {name!r} holds dtype {str(dtype)[:40]}: only numbers and "
                         "plain strings are read (allow_pickle=False: no Python objects)")
    if any(n < 0 for n in shape):
        raise ValueError(f"member {name!r} declares shape {str(shape)[:60]}")
    return math.prod(int(n) for n in shape) * dtype.itemsize


def load_npz(path: str | Path, what: str = "numpy .npz file",
             cap: int = MAX_NPZ_BYTES) -> dict[str, np.ndarray]:
    """Every array of the ``.npz`` at ``path`` after :func:`check_npz` (no pickles)."""
    check_npz(path, what, cap)
    with np.load(path, allow_pickle=False) as data:
        return {k: data[k] for k in data.files}
