"""The trust model (docs/faults.md, "Trust model"): files that can carry code are loaded only
from the run a ``--resume`` continues or with ``--trust-checkpoint``; every ``.npz`` loader
reads data only; every option that scales an agent's work has an upper bound; a bad option
value is one line. Each attack is played with a harmless payload, a pickle whose unpickling
creates a marker file, and the marker must not appear."""

from __future__ import annotations

import base64
import json
import pickle
import re
import zipfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from allfives.cli import main
from allfives_agents.base import make_agent, parse_agent_id
from allfives_agents.trained import rllib_agent
from allfives_agents.trained.checkpoint import CARD_FORMAT
from allfives_env.game.observation import OBS_LAYOUT_ID, OBS_SIZE
from allfives_env.game.tiles import N_ACTIONS
from allfives_env.inputs.trust import TRUST_ENV, trusted, trusting

ROOT = Path(__file__).resolve().parents[1]
MASKABLE = ROOT / "configs" / "train" / "maskable_2p.yaml"
DISTILL = ROOT / "configs" / "train" / "distill_2p.yaml"
TINY = ["--config", str(MASKABLE), "--n-envs", "2", "--n-steps", "64", "--batch-size", "64",
        "--n-epochs", "1", "--net-arch", "16", "16", "--eval-games", "4", "--quiet",
        "--eval-opponents", "random", "greedy", "--bc-teacher", "null"]


class Payload:
    """Unpickled, it creates the file ``marker`` (what an attacker's code would do)."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple:
        return Path.touch, (Path(self.marker),)


def payload(marker: Path) -> bytes:
    return pickle.dumps(Payload(marker), protocol=4)


def error_line(capsys: pytest.CaptureFixture) -> str:
    """The command's stderr, which must be exactly one line."""
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.endswith("\n"), err
    return err.strip()


# ---------------------------------------------------------------------- crafted files
def card(**changes: object) -> dict:
    out = {"format": CARD_FORMAT, "obs_layout": OBS_LAYOUT_ID, "obs_size": OBS_SIZE,
           "n_actions": N_ACTIONS, "players": 2, "teams": False, "steps": 256,
           "eval_history": [], "policy": {"hidden": [16, 16]}}
    out.update(changes)
    return out


def sb3_zip(path: Path, marker: Path | None) -> Path:
    """An SB3-style ``model.zip``: its ``data`` member holds a cloudpickled entry, as SB3
    writes them (the payload, or nothing to unpickle when ``marker`` is None)."""
    data = {"observation_space": {":type:": "<class 'gymnasium.spaces.box.Box'>",
                                  ":serialized:": base64.b64encode(payload(marker)).decode()}
            } if marker is not None else {}
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("data", json.dumps(data))
        z.writestr("_stable_baselines3_version", "2.9.2")
    return path


def sb3_checkpoint(directory: Path, marker: Path | None, **changes: object) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "card.json").write_text(json.dumps(card(**changes)))
    sb3_zip(directory / "model.zip", marker)
    return directory


def rllib_checkpoint(directory: Path, marker: Path | None) -> Path:
    """An RLlib-looking checkpoint: the card, and a module whose ``class_and_ctor_args.pkl``
    (which RLlib unpickles first) holds the payload."""
    directory.mkdir(parents=True)
    (directory / rllib_agent.CARD_NAME).write_text(json.dumps(
        {**card(), "format": rllib_agent.CARD_FORMAT, "policy": "shared",
         "seat_modules": ["main", "main"]}))
    module = directory / rllib_agent.MODULES_DIR / "main"
    module.mkdir(parents=True)
    (module / "metadata.json").write_text("{}")
    if marker is not None:
        (module / "class_and_ctor_args.pkl").write_bytes(payload(marker))
    return directory


def pickled_npz(path: Path, marker: Path, arrays: dict[str, np.ndarray], poisoned: str) -> Path:
    """An ``.npz`` of ``arrays`` in which ``poisoned`` is an object array holding the payload
    (``np.load(allow_pickle=True)`` would run it)."""
    out = dict(arrays)
    out[poisoned] = np.array([Payload(marker)], dtype=object)
    np.savez(path, allow_pickle=True, **out)
    return path


# ---------------------------------------------------------------------- the payload is live
def test_the_payloads_run_when_unpickled(tmp_path: Path) -> None:
    """The controls: unpickled the way the formats' own loaders do, each payload runs (so the
    tests below would see its marker if a loader unpickled it)."""
    marker = tmp_path / "ran"
    pickle.loads(payload(marker))
    assert marker.exists()
    marker.unlink()
    bad = pickled_npz(tmp_path / "p.npz", marker, {}, "w0")
    with np.load(bad, allow_pickle=True) as z:
        z["w0"]
    assert marker.exists()
    marker.unlink()
    pytest.importorskip("stable_baselines3")
    from stable_baselines3.common.save_util import load_from_zip_file

    load_from_zip_file(sb3_zip(tmp_path / "m" / "model.zip", marker))
    assert marker.exists()


# ---------------------------------------------------------------------- SB3 model.zip
def test_init_from_a_model_zip_needs_trust(tmp_path: Path, capsys: pytest.CaptureFixture
                                           ) -> None:
    pytest.importorskip("sb3_contrib")
    marker, run = tmp_path / "ran", tmp_path / "run"
    crafted = sb3_checkpoint(tmp_path / "downloaded", marker)
    assert main(["train", "--run-dir", str(run), *TINY, "--init-from", str(crafted)]) == 2
    line = error_line(capsys)
    assert f"{crafted / 'model.zip'} is an SB3 model.zip, which can run code when loaded " \
           f"(pickle): pass --trust-checkpoint if you trust {crafted}" in line, line
    assert not marker.exists() and not run.exists()


def test_with_trust_checkpoint_init_from_passes_the_gate(tmp_path: Path,
                                                         capsys: pytest.CaptureFixture) -> None:
    """Trusted, the zip is handed to SB3's loader: this one holds no payload and no model,
    so the run stops at the load with one line that is not the trust refusal."""
    pytest.importorskip("sb3_contrib")
    harmless = sb3_checkpoint(tmp_path / "mine", None)
    assert main(["train", "--run-dir", str(tmp_path / "run"), *TINY, "--init-from",
                 str(harmless), "--trust-checkpoint"]) == 2
    line = error_line(capsys)
    assert "does not load as an SB3 model" in line and "--trust-checkpoint" not in line, line
    assert not trusted()  # the flag's trust ends with the command


def resume_dir(run: Path, marker: Path, **changes: object) -> Path:
    """A run directory this program did not write: its newest checkpoint holds the payload."""
    step = sb3_checkpoint(run / "checkpoints" / "step_000000000256", marker, **changes)
    (run / "latest.txt").write_text(step.name + "\n")
    return step


@pytest.mark.parametrize("how", ["no model card", "a link out of the run"])
def test_resume_loads_only_the_runs_own_model_zip(tmp_path: Path, capsys: pytest.CaptureFixture,
                                                  how: str) -> None:
    pytest.importorskip("sb3_contrib")
    marker, run = tmp_path / "ran", tmp_path / "run"
    if how == "no model card":
        step = resume_dir(run, marker, format=None)
        reason = "is not an allfives-checkpoint/1 model card"
    else:
        step = resume_dir(run, None)
        outside = sb3_zip(tmp_path / "elsewhere" / "model.zip", marker)
        (step / "model.zip").unlink()
        (step / "model.zip").symlink_to(outside)
        reason = "it links out of the run directory"
    before = sorted(p.relative_to(run).as_posix() for p in run.rglob("*"))
    assert main(["train", "--run-dir", str(run), *TINY, "--resume"]) == 2
    line = error_line(capsys)
    assert f"--resume: {step / 'model.zip'} is not a checkpoint this program wrote" in line
    assert reason in line and f"pass --trust-checkpoint if you trust {step}" in line, line
    assert not marker.exists()
    assert sorted(p.relative_to(run).as_posix() for p in run.rglob("*")) == before


def test_the_runs_own_checkpoint_needs_no_trust(tmp_path: Path) -> None:
    pytest.importorskip("sb3_contrib")
    from allfives_train.algorithms.maskable_ppo.trainer import require_own_model

    run = tmp_path / "run"
    step = resume_dir(run, None)
    require_own_model(step, run)  # this program's card, inside the run: loads untrusted
    foreign = resume_dir(tmp_path / "other", None, format=None)
    with pytest.raises(ValueError, match="pass --trust-checkpoint"):
        require_own_model(foreign, tmp_path / "other")
    with trusting():
        require_own_model(foreign, tmp_path / "other")


# ---------------------------------------------------------------------- RLlib checkpoints
@pytest.mark.parametrize("command", [
    ["eval", "--agents", "{id}", "greedy", "--games", "1", "--workers", "1", "--no-progress"],
    ["simulate", "--agents", "{id}", "greedy", "--games", "1", "--no-progress"],
    ["play", "--opponents", "{id}"],
])
def test_an_rllib_id_needs_trust(tmp_path: Path, capsys: pytest.CaptureFixture,
                                 monkeypatch: pytest.MonkeyPatch, command: list[str]) -> None:
    marker = tmp_path / "ran"
    crafted = rllib_checkpoint(tmp_path / "ckpt", marker)
    monkeypatch.setenv(TRUST_ENV, "1")  # a value in the shell does not stand for the flag
    argv = [a.replace("{id}", f"rllib:{crafted}") for a in command]
    assert main(argv) == 2
    assert error_line(capsys) == (
        f"allfives {argv[0]}: error: rllib:{crafted} is an RLlib checkpoint, which can run "
        f"code when loaded (pickle): pass --trust-checkpoint if you trust {crafted}")
    assert not marker.exists()


def test_with_trust_checkpoint_an_rllib_id_reaches_the_loader(
        tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    """Trusted, the agent goes on to load its modules (a stand-in for RLlib's loader here, so
    that the test needs no Ray), and the trust does not outlive the command."""
    crafted = rllib_checkpoint(tmp_path / "ckpt", None)
    reached: list[str] = []

    def loader(directory: Path, module_id: str) -> None:
        reached.append(module_id)
        raise ValueError("the loader was reached")

    monkeypatch.setattr(rllib_agent, "need_ray", lambda what: None)
    monkeypatch.setattr(rllib_agent, "load_module", loader)
    assert main(["eval", "--agents", f"rllib:{crafted}", "greedy", "--games", "1",
                 "--workers", "1", "--no-progress", "--trust-checkpoint"]) == 2
    assert error_line(capsys) == "allfives eval: error: the loader was reached"
    assert reached == ["main"] and not trusted()


def test_the_rllib_loader_itself_refuses_untrusted(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    marker = tmp_path / "ran"
    crafted = rllib_checkpoint(tmp_path / "ckpt", marker)
    monkeypatch.setattr(rllib_agent, "need_ray", lambda what: None)
    with pytest.raises(ValueError, match="is an RLlib checkpoint, which can run code"):
        rllib_agent.load_module(crafted, "main")
    with pytest.raises(ValueError, match="not a module id"):
        rllib_agent.module_path(crafted, "../../..")
    assert not marker.exists()


# ---------------------------------------------------------------------- every .npz loader
def test_a_pickled_array_in_policy_npz_is_refused(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture) -> None:
    marker, ckpt = tmp_path / "ran", tmp_path / "ckpt"
    ckpt.mkdir()
    (ckpt / "card.json").write_text(json.dumps(card()))
    pickled_npz(ckpt / "policy.npz", marker, {"b0": np.zeros(4, np.float32)}, "w0")
    assert main(["eval", "--agents", f"ckpt:{ckpt}", "greedy", "--games", "1", "--workers",
                 "1", "--no-progress"]) == 2
    line = error_line(capsys)
    assert "not a readable policy file" in line and "allow_pickle" in line, line
    assert not marker.exists()


def label_shard(path: Path, marker: Path) -> Path:
    arrays = {"obs": np.zeros((2, OBS_SIZE), np.float16), "feat": np.zeros((2, 3, 9)),
              "act": np.zeros((2, 3), np.int64), "val": np.zeros((2, 3))}
    return pickled_npz(path, marker, arrays, "val")


def test_a_pickled_array_in_a_label_shard_is_refused(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture) -> None:
    pytest.importorskip("torch")
    marker, labels, run = tmp_path / "ran", tmp_path / "labels", tmp_path / "run"
    labels.mkdir()
    shard = label_shard(labels / "shard_000000.npz", marker)
    assert main(["train", "--config", str(DISTILL), "--run-dir", str(run),
                 "--distill-extra-labels", str(labels)]) == 2
    line = error_line(capsys)
    assert "distill_extra_labels" in line and "holds Python objects (pickled)" in line, line
    from allfives_train.algorithms.search_distill.label import load_shards, shard_size

    for read in (shard_size, lambda p: load_shards([p])):
        with pytest.raises(ValueError, match="shard"):
            read(shard)
    assert not marker.exists() and not run.exists()


def test_a_pickled_array_in_imitation_data_is_refused(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture) -> None:
    pytest.importorskip("sb3_contrib")
    marker, run = tmp_path / "ran", tmp_path / "run"
    n = 4
    arrays = {"obs": np.zeros((n, OBS_SIZE), np.float32), "masks": np.ones((n, N_ACTIONS), bool),
              "actions": np.zeros(n, np.int64)}
    bad = pickled_npz(tmp_path / "bc.npz", marker, arrays, "returns")
    assert main(["train", "--run-dir", str(run), *TINY, "--bc-data", str(bad)]) == 2
    line = error_line(capsys)
    assert "not readable warm-start data" in line and "allow_pickle" in line, line
    assert not marker.exists() and not run.exists()


def test_every_loader_is_data_only_or_behind_the_trust_rule() -> None:
    """The audit, kept: in the three packages every ``np.load`` passes ``allow_pickle=False``,
    every ``torch.load`` ``weights_only=True``; nothing imports pickle; SB3's and RLlib's
    loaders are called only in the functions that check trust first."""
    gated = {("train/algorithms/maskable_ppo/trainer.py", "PPO.load("),
             ("agents/trained/rllib_agent.py", "from_checkpoint(")}
    seen = set()
    for package in ("allfives_env", "agents", "train"):
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            text = path.read_text()
            for call in re.findall(r"np\.load\([^)]*\)", text):
                assert "allow_pickle=False" in call, f"{rel}: {call}"
            for call in re.findall(r"torch\.load\([^)]*\)", text):
                assert "weights_only=True" in call, f"{rel}: {call}"
            assert not re.search(r"^\s*(import|from) (cloud)?pickle", text, re.M), rel
            assert "load_from_zip_file(" not in text, rel
            for loader in ("PPO.load(", "from_checkpoint("):
                if loader in text:
                    assert (rel, loader) in gated, f"{rel} calls {loader}"
                    seen.add((rel, loader))
    assert gated <= seen
    ppo = (ROOT / "train" / "algorithms" / "maskable_ppo" / "trainer.py").read_text()
    for call in re.finditer(r"MaskablePPO\.load\(", ppo):
        before = ppo[:call.start()].rsplit("\n\n\n", 1)[-1]  # the function around the call
        assert "require_own_model(" in before or "require_trust(" in before


# ---------------------------------------------------------------------- bounded work
@pytest.mark.parametrize("agent_id,bound", [
    ("search:sims=1000000000000", "sims=1000000000000 is above its bound 100000"),
    ("search:min_worlds=20000", "min_worlds=20000 is above its bound 10000"),
    ("search:depth=21", "depth=21 is above its bound 20"),
    ("search:net=all_fives_2p,sims=200000", "sims=200000 is above its bound 100000"),
    ("openspiel:mcts,sims=1000000", "sims=1000000 is above its bound 100000"),
    ("openspiel:mcts,worlds=5000", "worlds=5000 is above its bound 1000"),
])
def test_options_that_scale_work_are_bounded(agent_id: str, bound: str) -> None:
    with pytest.raises(ValueError, match=re.escape(bound)):
        make_agent(agent_id)


def test_the_bounds_leave_room_for_real_use() -> None:
    for agent_id in ("search:sims=100000,min_worlds=10000,depth=20", "search:depth=0",
                     "search:sims=1024,depth=2"):
        make_agent(agent_id)


def test_eval_refuses_sims_far_above_the_bound_in_one_line(capsys: pytest.CaptureFixture
                                                           ) -> None:
    assert main(["eval", "--agents", "search:sims=1000000000000", "greedy", "--games", "1",
                 "--workers", "1", "--no-progress"]) == 2
    assert "is above its bound 100000" in error_line(capsys)


@pytest.mark.parametrize("agent_id", ["search:sims=.inf", "search:eps=.nan",
                                      "heuristic:reply=-.inf", f"search:sims={'9' * 400}",
                                      "search:net=all_fives_2p,topk=.inf",
                                      "openspiel:mcts,sims=.inf", "openspiel:mcts,scale=0"])
def test_infinite_and_huge_numbers_are_refused(agent_id: str) -> None:
    with pytest.raises(ValueError):
        make_agent(agent_id)


# ---------------------------------------------------------------------- one clean error
def test_a_bad_yaml_value_is_one_line(capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(ValueError, match=r"option sims='\[1' is not a valid value: use a "
                                         r"number \(400, 0.5\), true or false, null"):
        parse_agent_id("search:sims=[1")
    assert main(["eval", "--agents", "search:sims=[1", "greedy", "--games", "1"]) == 2
    assert "option sims='[1' is not a valid value" in error_line(capsys)
    for raw in ("{a: 1}", "!!python/object:os.system", "2020-01-01", "*alias", "[" * 5000):
        with pytest.raises(ValueError, match="is not a valid value"):
            parse_agent_id(f"heuristic:reply={raw}")


NAMES = st.sampled_from(["random", "greedy", "heuristic", "search", "ckpt", "search:net"])
GARBAGE = st.text(st.characters(blacklist_categories=["Cs"]), max_size=40)


@given(name=NAMES, rest=GARBAGE, options=st.lists(st.tuples(GARBAGE, GARBAGE), max_size=3))
@example(name="search:net", rest="", options=[("0\n0", "{")])  # a key with a newline, found
def test_any_agent_id_is_an_agent_or_one_value_error(name: str, rest: str,
                                                     options: list[tuple[str, str]]) -> None:
    if name == "search:net":
        agent_id = f"search:net={rest}"
    else:
        agent_id = f"{name}:{rest}" if rest or name == "ckpt" else name
    agent_id += "".join(f",{k}={v}" for k, v in options)
    try:
        make_agent(agent_id)
    except ValueError as exc:
        assert "\n" not in str(exc), str(exc)
