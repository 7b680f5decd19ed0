"""Commands stream and check their counts, and every remaining bad input is one line (issue
61): ``eval`` makes its deals lazily (memory flat in ``--games``), ``--workers`` is capped by
the cores and the deals, a rules or config path that is not a regular file is refused without
blocking, durations are finite, a 5,000-digit seed is one line without Python's internals,
and every env takes scalar actions only."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from allfives.cli import main
from allfives_agents.evaluation.evaluate import cores, map_tasks, worker_count
from allfives_agents.evaluation.report import Outcome, Tally, pairing_summary, summarize
from allfives_env.game.rules import make_rules
from allfives_env.inputs.durations import check_duration
from allfives_env.inputs.safeyaml import load_yaml, loads

ROOT = Path(__file__).resolve().parents[1]
BIG = "9" * 5000


def cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "allfives.cli", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)


def one_line(err: str) -> str:
    lines = [x for x in err.strip().splitlines() if x.strip()]
    assert lines and "Traceback" not in err and "set_int_max_str_digits" not in err, err
    return lines[-1]


# ------------------------------------------------------------------ eval streams
def rss_kb(pid: int) -> int:
    """Resident memory of ``pid`` and every process below it (VmRSS, kB)."""
    total = 0
    for p in [pid, *descendants(pid)]:
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total


def descendants(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        try:
            kids = Path(f"/proc/{p}/task/{p}/children").read_text().split()
        except OSError:
            kids = []
        out += [int(k) for k in kids]
        todo += [int(k) for k in kids]
    return out


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
def test_eval_of_a_trillion_games_plays_in_flat_memory() -> None:
    """30 s of ``allfives eval --games 1000000000000 --workers 1``: resident memory (the
    command and its children) stays under 300 MB while it plays, then it is stopped."""
    proc = subprocess.Popen([sys.executable, "-m", "allfives.cli", "eval", "--agents",
                             "random", "greedy", "--games", "1000000000000", "--workers", "1",
                             "--no-progress"], cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    try:
        peak, samples, t0 = 0, [], time.monotonic()
        while time.monotonic() - t0 < 30:
            time.sleep(0.5)
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            kb = rss_kb(proc.pid)
            peak = max(peak, kb)
            samples.append(kb)
        busy = cpu_seconds(proc.pid)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    assert busy > 1, f"it hardly ran ({busy:.1f} CPU s)"  # it was playing, not waiting
    assert peak < 300 * 1024, f"peak resident memory {peak / 1024:.0f} MB"
    late = samples[len(samples) // 2:]  # flat: the second half grows little
    assert max(late) - min(late) < 32 * 1024, samples


def outcomes(n: int, seed: int = 0) -> list[Outcome]:
    rng = random.Random(seed)
    return [Outcome([(0, 1), (0, 2), (1, 2)][i % 3], i, 0, rng.choice([0, 1, None]),
                    (rng.uniform(0, 150), rng.uniform(0, 150)), rng.randint(1, 9),
                    (rng.random(), rng.random()), (rng.randint(1, 40), rng.randint(1, 40)),
                    (rng.random(), rng.random())) for i in range(n)]


def test_the_tally_sums_what_the_summaries_of_every_outcome_say() -> None:
    outs = outcomes(500)
    tally = Tally()
    for o in outs:
        tally.add(o)
    for pair in {o.pair for o in outs}:
        assert tally.pairing(["a", "b", "c"], pair) == pairing_summary(
            ["a", "b", "c"], pair, [o for o in outs if o.pair == pair])
    rules = make_rules("all_fives", players=2)
    summary = tally.summary(rules, ["a", "b", "c"], 5)
    assert summary == summarize(rules, ["a", "b", "c"], iter(outs), 5)
    assert [a["games"] for a in summary["agents"]] == [
        sum(k in o.pair for o in outs) for k in range(3)]


def test_map_tasks_takes_tasks_as_it_needs_them() -> None:
    """A generator of tasks is read a window at a time, in one process or in a pool."""
    taken: list[int] = []

    def endless() -> Any:
        k = 0
        while True:
            taken.append(k)
            yield k
            k += 1

    for workers in (1, 2):
        taken.clear()
        got = map_tasks(abs, endless(), workers, n_tasks=10**12)
        assert [next(got) for _ in range(5)] == [0, 1, 2, 3, 4]
        assert len(taken) < 200, len(taken)
        got.close()


def test_workers_are_capped_by_the_cores_and_the_deals() -> None:
    assert worker_count(10**6, 10**12) == cores()
    assert worker_count(10**6, 3) == min(3, cores())
    assert worker_count(1, 10**12) == 1
    assert list(map_tasks(abs, [-1, -2, -3], 10**6)) == [1, 2, 3]


def test_eval_with_a_huge_workers_count_plays_its_few_games(capsys) -> None:
    assert main(["eval", "--agents", "random", "greedy", "--games", "4", "--workers",
                 "100000", "--no-progress"]) == 0
    assert "random" in capsys.readouterr().out


# ------------------------------------------------------------------ files that are not files
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs")
@pytest.mark.parametrize("command", ["eval", "simulate"])
def test_rules_naming_a_fifo_exits_2_at_once(tmp_path: Path, command: str) -> None:
    fifo = tmp_path / "rules.yaml"
    os.mkfifo(fifo)  # no writer: opening it to read would block for ever
    t0 = time.monotonic()
    got = cli(command, "--agents", "random", "greedy", "--games", "2", "--rules", str(fifo),
              timeout=30)
    elapsed = time.monotonic() - t0
    line = one_line(got.stderr)
    assert got.returncode == 2 and "is a FIFO, not a regular file" in line, got.stderr
    assert elapsed < 2 + 8, elapsed  # (the interpreter's start counted too, on a busy box)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs")
def test_a_config_naming_a_fifo_or_a_device_is_one_line(tmp_path: Path, capsys) -> None:
    fifo = tmp_path / "config.yaml"
    os.mkfifo(fifo)
    for path, kind in ((fifo, "a FIFO"), ("/dev/zero", "a device"), (tmp_path, "a folder")):
        assert main(["train", "--config", str(path), "--run-dir", str(tmp_path / "r")]) == 2
        line = one_line(capsys.readouterr().err)
        assert f"is {kind}, not a regular file" in line and "no such file" not in line, line
    assert not (tmp_path / "r").exists()


# ------------------------------------------------------------------ durations
@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "0", "-1", "1e300"])
def test_bench_seconds_must_be_finite_and_positive(value: str, capsys) -> None:
    assert main(["bench", f"--seconds={value}"]) == 2
    line = one_line(capsys.readouterr().err)
    assert "--seconds" in line and "must be a finite positive number of seconds" in line


def test_check_duration_says_the_unit_and_the_bound() -> None:
    assert check_duration(2.5, "--minutes", "minutes") == 2.5
    with pytest.raises(ValueError, match="--minutes inf: must be a finite positive number of "
                                         "minutes, at most 1.66667e"):
        check_duration(float("inf"), "--minutes", "minutes")


# ------------------------------------------------------------------ seeds
@pytest.mark.parametrize("command", ["eval", "simulate", "bench", "play"])
def test_a_5000_digit_seed_is_one_clear_line(command: str, capsys) -> None:
    with pytest.raises(SystemExit) as stop:
        agents = ["--agents", "random", "greedy"] if command in ("eval", "simulate") else []
        main([command, *agents, "--seed", BIG])
    assert stop.value.code == 2
    line = one_line(capsys.readouterr().err)
    assert "a seed is an integer from 0 to 2**63 - 1" in line and BIG not in line, line
    assert "(5000 characters)" in line


def test_a_5000_digit_seed_in_a_train_flag_or_config_is_one_line(tmp_path: Path,
                                                                 capsys) -> None:
    with pytest.raises(SystemExit):
        main(["train", "--seed", BIG, "--run-dir", str(tmp_path / "r")])
    line = one_line(capsys.readouterr().err)
    assert "a number of more than 4300 digits" in line and BIG not in line, line
    assert main(["train", "--seed", str(2**64), "--run-dir", str(tmp_path / "r")]) == 2
    assert "must be an integer from 0 to 2**63 - 1" in one_line(capsys.readouterr().err)
    assert not (tmp_path / "r").exists()


def test_a_5000_digit_number_in_json_or_yaml_is_one_line(tmp_path: Path, capsys) -> None:
    text = '{"format": "allfives-record/1", "seed": ' + BIG + "}"
    with pytest.raises(ValueError, match="a number of more than 4300 digits"):
        loads(text)
    with pytest.raises(ValueError, match="a number of more than 4300 digits"):
        load_yaml(f"seed: {BIG}\n", "config")
    record = tmp_path / "big.json"
    record.write_text(text)
    assert main(["replay", str(record)]) == 2
    line = one_line(capsys.readouterr().err)
    assert "not valid JSON (a number of more than 4300 digits at column 41)" in line, line


def test_a_5000_digit_seed_in_an_upload_is_a_400_without_internals(tmp_path: Path) -> None:
    pytest.importorskip("fastapi")
    pytest.importorskip("httpx")
    from fastapi.testclient import TestClient

    from allfives_agents.web.server import create_app

    (tmp_path / "replays").mkdir()
    client = TestClient(create_app(tmp_path / "games", tmp_path / "replays"))
    body = '{"format": "allfives-record/1", "seed": ' + BIG + "}"
    got = client.post("/api/replay", content=body.encode())
    assert got.status_code == 400
    assert "a number of more than 4300 digits" in got.text, got.text
    assert "set_int_max_str_digits" not in got.text


# ------------------------------------------------------------------ scalar actions
WRAPS = [lambda a: np.array([a]), lambda a: np.array([[a]]), lambda a: [a], lambda a: (a,)]


@pytest.mark.parametrize("wrap", WRAPS)
def test_the_aec_env_takes_a_scalar_action_only(wrap: Any) -> None:
    from allfives_env import env

    e = env(players=2)
    e.reset(seed=0)
    legal = int(np.flatnonzero(e.observe(e.agent_selection)["action_mask"])[0])
    before = (e.agent_selection, len(e.game.log))
    with pytest.raises(ValueError, match="not a scalar: an action is one integer 0..139") as err:
        e.step(wrap(legal))
    assert "\n" not in str(err.value)
    assert (e.agent_selection, len(e.game.log)) == before  # nothing moved
    e.step(np.array(legal))  # a 0-d array is a scalar: it plays
    assert len(e.game.log) > before[1]


@pytest.mark.parametrize("wrapper", ["EpisodeLog", "SettleTurns"])
@pytest.mark.parametrize("wrap", WRAPS)
def test_the_wrapped_aec_envs_pass_the_refusal_on(wrap: Any, wrapper: str) -> None:
    from allfives_env import env
    from allfives_env.envs import adapters

    e = getattr(adapters, wrapper)(env(players=2))
    e.reset(seed=0)
    legal = int(np.flatnonzero(e.observe(e.agent_selection)["action_mask"])[0])
    with pytest.raises(ValueError, match="not a scalar"):
        e.step(wrap(legal))


def test_the_single_agent_env_and_the_vector_env_take_scalars_only() -> None:
    pytest.importorskip("torch")
    pytest.importorskip("gymnasium")
    from allfives_train.games.single_agent import AllFivesSingleAgentEnv
    from allfives_train.games.vector_env import AllFivesVectorEnv

    single = AllFivesSingleAgentEnv(seed=0)
    single.reset(seed=0)
    legal = int(np.flatnonzero(single.action_masks())[0])
    with pytest.raises(ValueError, match="an action is an integer"):
        single.step(np.array([legal]))
    vec = AllFivesVectorEnv(num_envs=2)
    vec.reset(seed=0)
    acts = np.array([int(np.flatnonzero(m)[0]) for m in vec.action_masks()])
    with pytest.raises(ValueError, match=r"shape \(2,\)"):
        vec.step(acts.reshape(2, 1))
    vec.step(acts)
    vec.close()
