"""``allfives simulate --engine batched`` writes the scalar run's records, which replay."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("numba")

from allfives.cli import main  # noqa: E402
from allfives_env.records.record import read_records, verify  # noqa: E402

CASES = [
    ["--preset", "all_fives", "--agents", "random", "greedy"],
    ["--preset", "five_up", "--players", "3", "--agents", "greedy", "random", "heuristic"],
    ["--preset", "muggins", "--players", "4", "--agents", "random"],
    ["--preset", "pagat", "--players", "4", "--no-teams", "--agents", "greedy"],
]


@pytest.mark.parametrize("args", CASES)
def test_batched_simulate_writes_the_scalar_records(tmp_path: Path, args: list[str]) -> None:
    out = {}
    for engine in ("scalar", "batched"):
        out[engine] = tmp_path / f"{engine}.jsonl"
        rc = main(["simulate", *args, "--games", "12", "--seed", "4", "--no-progress",
                   "--engine", engine, "--out", str(out[engine])])
        assert rc == 0
    assert out["batched"].read_text() == out["scalar"].read_text()
    records = list(read_records(out["batched"]))
    assert len(records) == 12
    for rec in records:
        verify(rec)


def test_batched_simulate_refuses_other_agents(capsys: pytest.CaptureFixture) -> None:
    assert main(["simulate", "--agents", "search", "--engine", "batched", "--games", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "random, greedy, heuristic" in err[0]
