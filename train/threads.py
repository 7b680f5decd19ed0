"""One BLAS thread for numpy in a training process.

numpy's OpenBLAS starts one thread per core. In a training process that is wasted at best
(torch and the engine use the cores) and ruinous on a loaded machine: measured here, the
numpy forward pass of a 128x128 policy over 512 observations took 18 ms of CPU with 2
OpenBLAS threads and 1.2 ms with one. :func:`limit_blas_threads` sets the thread count of the
OpenBLAS libraries already loaded (as ``threadpoolctl`` does; it is used when installed).
"""

from __future__ import annotations

import ctypes

_SETTERS = ("openblas_set_num_threads", "openblas_set_num_threads64_",
            "scipy_openblas_set_num_threads64_", "scipy_openblas_set_num_threads")


def limit_blas_threads(n: int = 1) -> int:
    """Set every loaded OpenBLAS to ``n`` threads; returns how many libraries were set."""
    import numpy  # noqa: F401  (loads numpy's OpenBLAS first)

    try:
        from threadpoolctl import threadpool_limits  # type: ignore[import-not-found]
    except ImportError:
        pass
    else:
        threadpool_limits(n, user_api="blas")
        return 1
    done = 0
    for path in _loaded_openblas():
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for name in _SETTERS:
            if hasattr(lib, name):
                getattr(lib, name)(ctypes.c_int(n))
                done += 1
                break
    return done


def _loaded_openblas() -> list[str]:
    try:
        with open("/proc/self/maps") as f:
            lines = f.read().splitlines()
    except OSError:  # not Linux: leave the BLAS as it is
        return []
    return sorted({line.split()[-1] for line in lines
                   if "openblas" in line.lower() and line.split()[-1].startswith("/")})
