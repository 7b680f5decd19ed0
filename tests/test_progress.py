"""Issue 64: what a training run shows while it works, when its output is not a terminal.

:class:`allfives_train.shell.progress.Stage` (a named stage with a total and the time left: a bar on
a terminal, else plain lines at least every ``EVERY`` seconds), then a tiny run of every
algorithm (search_distill, ppo_batched, dmc, maskable_ppo; RLlib in the slow set) with its
stdout captured (no terminal): each names its stages in plain lines.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from allfives_train.shell.progress import EVERY, Stage, duration

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "configs" / "train"


def test_plain_lines_start_beat_and_end() -> None:
    lines: list[str] = []
    stage = Stage("labelling", 1000, "positions", bar=False, every=0.1, say=lines.append)
    assert lines == ["labelling: 1,000 positions to go"]
    stage.update_to(250)
    time.sleep(0.45)  # the timer thread writes a line each 0.1 s while nothing else does
    beats = [x for x in lines[1:] if "so far" in x]
    assert len(beats) >= 2, lines
    assert re.fullmatch(r"labelling: 250/1,000 positions \(25%\), \d+ s so far, about "
                        r"\d+ s left", beats[-1]), beats[-1]
    stage.close()
    assert re.fullmatch(r"labelling: done, 250 positions in \d+ s", lines[-1]), lines[-1]
    count = len(lines)
    time.sleep(0.25)
    assert len(lines) == count  # closed: the timer has stopped
    assert EVERY <= 30  # the bound on the gap between two lines


def test_no_time_left_before_any_progress_and_resumed_start() -> None:
    lines: list[str] = []
    stage = Stage("PPO", 4096, "steps", initial=1024, bar=False, every=60, say=lines.append)
    assert lines == ["PPO: 4,096 steps to go (1,024 already done)"]
    assert stage.left() is None and "left" not in stage.text()
    stage.update_to(2048)
    assert stage.left() is not None and "left" in stage.text()
    stage.close()


def test_bar_on_a_terminal_and_nothing_when_quiet(capsys: pytest.CaptureFixture[str]) -> None:
    with Stage("fitting", 3, "epochs", bar=True) as stage:
        for _ in range(3):
            stage.advance()
    out, err = capsys.readouterr()
    assert out == "" and "fitting" in err and "3/3" in err
    with Stage("fitting", 3, "epochs", quiet=True) as stage:
        stage.advance()
    assert capsys.readouterr() == ("", "")


def test_a_stopped_stage_prints_no_done_line() -> None:
    lines: list[str] = []
    with pytest.raises(KeyboardInterrupt):
        with Stage("labelling", 10, "positions", bar=False, say=lines.append):
            raise KeyboardInterrupt
    assert not any("done" in x for x in lines)


def test_duration() -> None:
    assert duration(42.4) == "42 s" and duration(185) == "3 min 05 s"


# ---------------------------------------------------------------- every algorithm, no terminal
DISTILL = ["--config", str(CONFIGS / "distill_2p.yaml"), "--init-from", "null",
           "--net-arch", "16", "16", "--distill-teacher", "search:sims=8,min_worlds=2",
           "--distill-shard-games", "1", "--distill-epochs", "2", "--eval-games", "2",
           "--total-steps", "150"]
FAST = ["--config", str(CONFIGS / "fast_2p.yaml"), "--engine", "scalar", "--device", "cpu",
        "--n-envs", "4", "--n-steps", "16", "--batch-size", "32", "--n-epochs", "1",
        "--net-arch", "16", "16", "--eval-games", "2", "--eval-every", "64",
        "--eval-opponents", "random", "greedy", "--best-metric", "greedy",
        "--total-steps", "128"]
DMC = ["--config", str(CONFIGS / "dmc_2p.yaml"), "--init-from",
       str(ROOT / "checkpoints" / "all_fives_2p"), "--device", "cpu", "--n-envs", "8",
       "--n-steps", "16", "--batch-size", "64", "--n-epochs", "1", "--eval-games", "2",
       "--eval-every", "128", "--total-steps", "256"]


def maskable() -> list[str]:
    from allfives_train.config import MASKABLE_CONFIG

    return ["--config", str(MASKABLE_CONFIG), "--n-envs", "2", "--n-steps", "64",
            "--batch-size", "64", "--n-epochs", "1", "--net-arch", "16", "16",
            "--eval-games", "2", "--eval-every", "128", "--eval-opponents", "random", "greedy",
            "--bc-teacher", "greedy", "--bc-samples", "60", "--bc-epochs", "2",
            "--bc-workers", "1", "--total-steps", "128"]


#: the stage lines each algorithm's run must print (each stage's start and its end)
STAGES = {
    "search_distill": ("evaluating", "labelling", "fitting"),
    "ppo_batched": ("evaluating", "PPO_BATCHED"),
    "dmc": ("evaluating", "DMC"),
    "maskable_ppo": ("warm start: collecting", "warm start: imitating", "evaluating", "PPO"),
}


@pytest.mark.parametrize("algo", list(STAGES))
def test_every_algorithm_names_its_stages_off_a_terminal(
        algo: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("torch")
    if algo == "maskable_ppo":
        pytest.importorskip("sb3_contrib")
    if algo != "ppo_batched" and algo != "maskable_ppo":
        pytest.importorskip("numba")
    from allfives.cli import main

    args = {"search_distill": DISTILL, "ppo_batched": FAST, "dmc": DMC}.get(algo) or maskable()
    assert main(["train", *args, "--run-dir", str(tmp_path / "run")]) == 0
    out, err = capsys.readouterr()
    assert "\r" not in out  # plain lines, no bar
    for stage in STAGES[algo]:
        assert re.search(rf"^{re.escape(stage)}: [\d,.]+ \w[\w ]* to go", out, re.M), (stage, out)
        assert re.search(rf"^{re.escape(stage)}: done, ", out, re.M), (stage, out)
    if algo == "search_distill":  # its kernels compile in the background, said as such
        assert "compiling the batched engine" in out and "compiling: " in out, out
    assert (tmp_path / "run" / "final" / "policy.npz").is_file()


@pytest.mark.slow
@pytest.mark.xdist_group("ray")
def test_rllib_names_its_iterations_off_a_terminal(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("ray.rllib")
    from allfives.cli import main
    code = main(["train", "--backend", "rllib",  # without --config: configs/train/rllib.yaml
                 "--num-envs-per-env-runner", "8", "--train-batch-size", "256",
                 "--minibatch-size", "128", "--num-env-runners", "0", "--iterations", "1",
                 "--run-dir", str(tmp_path / "run")])
    out, _ = capsys.readouterr()
    assert code == 0, out
    assert "starting Ray" in out
    assert re.search(r"^PPO \(RLlib\): 1 iterations to go", out, re.M), out
    assert re.search(r"^PPO \(RLlib\): done, 1 iterations in ", out, re.M), out
