"""A new algorithm costs at most 4 files: its room (a module), its row of the table
(:func:`allfives_train.algos.register`), its config example and its test. This test is all
four: it writes a toy algorithm (a few lines: the fast path's loop with a round that fits
the critic alone, and a config section of its own) and its config into a temporary folder
put on ``sys.path``, registers its row, and trains it with ``allfives train`` (in-process
``main``); its section's field is set in the YAML under its key and by a flag of its own,
with no edit to train/config.py. What it never wrote is the
run shell's (train/shell/run.py): the run folder and its lock, a stop by SIGTERM or Ctrl-C
(a checkpoint and its card saved, the exit status, the command that continues), the refusal
of a fresh run over it, ``--resume``, the start-over of a run stopped before its first
checkpoint, and the finished run said finished.
"""

from __future__ import annotations

import importlib
import json
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("stable_baselines3")

from allfives.cli import main  # noqa: E402
from allfives_train import algos  # noqa: E402

#: The toy's room: everything it knows (the shell and the fast path's loop do the rest).
TOY = '''
"""A toy algorithm: each round plays a rollout and fits the critic to its rewards."""
import dataclasses
import os
import signal

from allfives_train.algorithms.ppo_batched import loop as fast_loop
from allfives_train.sections import Section

STOP = {"at": 0, "signal": signal.SIGTERM, "rounds": 0}  # stop itself at that round (0: never)


@dataclasses.dataclass
class ToySection:
    """The toy's own settings."""

    value_weight: float = 1.0
    """The critic loss's weight."""


TOY = Section("toy", ToySection, "the toy's loss weight", prefix="toy_")


def learn(agent, optimizer, envs, cfg, device):
    STOP["rounds"] += 1
    if STOP["rounds"] == STOP["at"]:  # as a scheduler's kill or a Ctrl-C would, mid-run
        os.kill(os.getpid(), STOP["signal"])
    batch, _ = envs.collect(agent, cfg.n_steps, None, device)
    values = agent.value(batch["obs"].flatten(0, 1))
    loss = cfg.section(TOY).value_weight * ((values - batch["rewards"].flatten()) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"toy_loss": float(loss.detach()), **batch.pop("pool")}


def train(cfg, resume=False, quiet=False, started=None, hooks=()):
    return fast_loop.run(cfg, learn, "toy: the critic fitted to the rewards", resume, quiet,
                         started, hooks)
'''

#: The toy's config example.
CONFIG = """
algo: toy
engine: scalar
device: cpu
total_steps: 128
n_envs: 4
n_steps: 16
batch_size: 32
n_epochs: 1
net_arch: [16, 16]
checkpoint_every: 64
toy:
  value_weight: 0.5
pool:
  opponents: [{agent: greedy, weight: 1.0}]
  snapshot_every: 64
fast:
  rollout_workers: 1
  rollout_shards: 1
evaluation:
  every: 64
  games: 4
  opponents: [random, greedy]
  best_metric: greedy
"""


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # noqa: ANN201
    """The toy's module (on ``sys.path`` from a temporary folder), its row registered in a
    copy of the table (the real one is back afterwards), and its config file."""
    room = tmp_path / "plugins"
    room.mkdir()
    (room / "toy_algo.py").write_text(textwrap.dedent(TOY))
    monkeypatch.syspath_prepend(str(room))
    monkeypatch.setattr(algos, "ALGOS", dict(algos.ALGOS))
    module = importlib.import_module("toy_algo")
    algos.register(algos.Algo("toy", "toy_algo:train", "a toy: the critic fitted to rewards",
                              rollouts=True, learn="toy_algo:learn", warm_start=False,
                              features_by_default=False,
                              sections=(module.TOY, *algos.FAST_PATH)))
    config = tmp_path / "toy.yaml"
    config.write_text(CONFIG)
    yield module, config
    sys.modules.pop("toy_algo", None)


def test_a_registered_name_is_taken_once(toy) -> None:
    with pytest.raises(ValueError, match="'toy' is in the table already"):
        algos.register(algos.get("toy"))


def test_the_toys_section_is_a_config_section_with_a_flag(toy, tmp_path: Path) -> None:
    """Its key in the YAML, its flat name on the command line, its docstring in the help, and
    what it sets noted as unread by the algos that do not name it."""
    from allfives_train.config import field_help, ignored_note, load_config

    _, config = toy
    assert load_config(config).section(module_toy()).value_weight == 0.5
    assert load_config(config, {"toy_value_weight": 2}).value("toy_value_weight") == 2.0
    assert field_help("toy_value_weight") == "The critic loss's weight."
    with pytest.raises(ValueError, match=r"toy\.value_wieght \(did you mean toy\.value_weight"):
        load_config(None, {"algo": "toy", "toy": {"value_wieght": 1}})
    note = ignored_note(load_config(None, {"algo": "ppo_batched", "toy_value_weight": 3}))
    assert note is not None and "toy_value_weight=3.0" in note


def module_toy():  # noqa: ANN201
    return sys.modules["toy_algo"].TOY


def test_a_toy_algorithm_trains_stops_and_resumes_through_the_shell(
        toy, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import signal

    module, config = toy
    run = tmp_path / "run"
    command = ["train", "--config", str(config), "--run-dir", str(run), "--toy-value-weight",
               "0.25"]

    # a SIGTERM in round 2: the shell's stop; the first rollout's checkpoint and card saved
    module.STOP.update(at=2, signal=signal.SIGTERM, rounds=0)
    assert main([*command, "--quiet"]) == 128 + signal.SIGTERM
    err = capsys.readouterr().err
    saved = run / "checkpoints" / f"step_{64:012d}"
    assert (f"interrupted at 64 steps; checkpoint saved to {saved}. Continue with: "
            f"allfives train --run-dir {run} --resume") in err, err
    card = json.loads((saved / "card.json").read_text())
    assert card["steps"] == 64 and card["algo"].startswith("toy:") and card["config"]["algo"] \
        == "toy"
    assert card["config"]["toy"] == {"value_weight": 0.25}  # the flag's, under its section
    assert (saved / "trainer.pt").is_file() and (saved / "policy.npz").is_file()
    listed = json.loads((run / "manifest.json").read_text())["files"]
    assert f"checkpoints/{saved.name}/trainer.pt" in listed  # the run's own file, recorded
    assert not (run / ".lock").exists()

    # a fresh run over it is refused in one line, touching nothing
    assert main([*command, "--quiet"]) == 2
    assert "already holds a run: continue it with --resume" in capsys.readouterr().err

    # --resume continues from step 64 to the budget (said in the start line) and final/
    module.STOP.update(at=0)
    assert main([*command, "--resume"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == (f"allfives train: resuming all_fives 2 seats, algo toy, run "
                                   f"dir {run}, 128 steps")
    final = json.loads((run / "final" / "card.json").read_text())
    assert final["steps"] == 128  # evaluated at the start, at 64 (before the stop) and 128
    assert [h["steps"] for h in final["eval_history"]] == [0, 64, 128]

    # once finished, --resume says so and touches nothing
    assert main([*command, "--resume", "--quiet"]) == 0
    assert "holds a finished run (128 steps, total_steps 128" in capsys.readouterr().err


@pytest.fixture
def ctrl_c():  # noqa: ANN201
    """SIGINT as in a terminal, Ctrl-C's KeyboardInterrupt: the tests may run in a background
    job, which starts with SIGINT ignored (and the run shell leaves an ignored signal
    ignored, as it should); the handler of before comes back afterwards."""
    import signal

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def test_a_toy_run_stopped_before_its_first_checkpoint_starts_over(
        toy, ctrl_c, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import signal

    module, config = toy
    run = tmp_path / "run"
    command = ["train", "--config", str(config), "--run-dir", str(run), "--quiet",
               "--total-steps", "64"]
    module.STOP.update(at=1, signal=signal.SIGINT, rounds=0)  # Ctrl-C in the first round
    assert main(command) == 128 + signal.SIGINT
    assert "interrupted before the first checkpoint; nothing was saved yet" in \
        capsys.readouterr().err
    module.STOP.update(at=0)
    assert main([*command, "--resume"]) == 0
    assert "starting it over" in capsys.readouterr().err
    assert json.loads((run / "final" / "card.json").read_text())["steps"] == 64
