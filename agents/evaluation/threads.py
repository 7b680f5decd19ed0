"""One thread for numpy's BLAS and torch in a process that this project starts.

numpy's OpenBLAS starts one thread per core. In a process that plays or trains that is wasted
at best (the engine, torch and the other workers use the cores) and ruinous on a loaded
machine: measured here, the numpy forward pass of a 128x128 policy over 512 observations took
18 ms of CPU with 2 OpenBLAS threads and 1.2 ms with one, and six games of the valued batched
search (``search:net=NET,value=1,depth=1,batched=1``) took 15.4 s of CPU with numpy's default
and 5.0 s with one thread. :func:`limit_blas_threads` sets the thread count of the OpenBLAS
libraries already loaded (as ``threadpoolctl`` does; it is used when installed);
:func:`one_thread` does that and ``torch.set_num_threads(1)`` where torch is loaded. They are
called by the processes the commands start (``allfives eval`` and its workers, the label and
rollout workers, ``allfives play`` and ``serve``), never at import: a user's own process keeps
its settings unless it calls them or runs the evaluation in it (``map_tasks`` with one worker,
which set torch's threads the same way before).
"""

from __future__ import annotations

import ctypes
import sys

_SETTERS = ("openblas_set_num_threads", "openblas_set_num_threads64_",
            "scipy_openblas_set_num_threads64_", "scipy_openblas_set_num_threads")


def limit_blas_threads(n: int = 1) -> int:
    """Set every loaded OpenBLAS to ``n`` threads; returns how many libraries were set."""
    import numpy  # noqa: F401  (loads numpy's OpenBLAS first)

    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        pass
    else:
        threadpool_limits(n, user_api="blas")
        return 1
    setters = _functions("set")
    for set_threads in setters:
        set_threads(ctypes.c_int(n))
    return len(setters)


def blas_threads() -> int | None:
    """The thread count of the first loaded OpenBLAS (None where none is found)."""
    getters = _functions("get")
    return int(getters[0]()) if getters else None


def _functions(verb: str) -> list:
    """Each loaded OpenBLAS library's ``<verb>_num_threads`` function (``set`` or ``get``)."""
    import numpy  # noqa: F401  (loads numpy's OpenBLAS first)

    found = []
    for path in _loaded_openblas():
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        names = [name.replace("set_num", f"{verb}_num") for name in _SETTERS]
        found += [getattr(lib, name) for name in names if hasattr(lib, name)][:1]
    return found


def _loaded_openblas() -> list[str]:
    try:
        with open("/proc/self/maps") as f:
            lines = f.read().splitlines()
    except OSError:  # not Linux: leave the BLAS as it is
        return []
    return sorted({line.split()[-1] for line in lines
                   if "openblas" in line.lower() and line.split()[-1].startswith("/")})


def one_thread() -> None:
    """One BLAS thread for numpy and one thread for torch (where it is loaded) in this
    process: what every playing or training process of this project runs with."""
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)
    limit_blas_threads(1)
