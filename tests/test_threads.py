"""Every process this project starts to play or train runs numpy's BLAS on one thread
(agents/evaluation/threads.py): the evaluation's workers and its own process, the label workers."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from allfives_agents.evaluation.threads import blas_threads

pytestmark = pytest.mark.skipif(blas_threads() is None, reason="no OpenBLAS found to ask")


def _run(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_one_thread_sets_blas_to_one_thread() -> None:
    out = _run("""
        from allfives_agents.evaluation.threads import blas_threads, limit_blas_threads, one_thread
        limit_blas_threads(2)
        before = blas_threads()
        one_thread()
        print(before, blas_threads())
    """)
    assert out == "2 1"


def test_evaluation_workers_and_its_own_process_run_one_blas_thread() -> None:
    # the parent runs 2 threads, which forked workers would inherit without the initializer
    out = _run("""
        from allfives_agents.evaluation.evaluate import map_tasks
        from allfives_agents.evaluation.threads import blas_threads, limit_blas_threads
        def count(_): return blas_threads()
        limit_blas_threads(2)
        print(sorted(set(map_tasks(count, list(range(8)), workers=2))),
              list(map_tasks(count, [0], workers=1)))
    """)
    assert out == "[1] [1]"


def test_label_workers_run_one_blas_thread() -> None:
    out = _run("""
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor
        from allfives_agents.evaluation.threads import blas_threads, limit_blas_threads
        from allfives_train.games.workers import worker_init
        def count(_): return blas_threads()
        if __name__ == "__main__":
            ctx = multiprocessing.get_context("fork")
            limit_blas_threads(2)
            with ProcessPoolExecutor(2, mp_context=ctx, initializer=worker_init) as pool:
                print(sorted(set(pool.map(count, range(4)))))
    """)
    assert out == "[1]"
