"""``algo: search_distill`` (train/algorithms/search_distill/trainer.py,
train/algorithms/search_distill/label.py): the labels are the
teacher's values of exactly the legal moves from the seat's own view; shards do not depend on
the number of workers or on a stop (SIGKILL and Ctrl-C, then ``--resume``); the fit moves the
actor toward the targets; the checkpoint plays as ``ckpt:``; bad fields get one line."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from subprocs import sigint_as_in_a_terminal  # noqa: E402

from allfives.cli import main  # noqa: E402
from allfives_agents.base import make_agent  # noqa: E402
from allfives_agents.features.action_features import action_features  # noqa: E402
from allfives_agents.trained.checkpoint import PolicyAgent  # noqa: E402
from allfives_env.game.match import play_game  # noqa: E402
from allfives_env.game.rules import make_rules  # noqa: E402
from allfives_train.algorithms.ppo_batched.net import actor_from  # noqa: E402
from allfives_train.algorithms.search_distill.label import (  # noqa: E402
    Labeller,
    load_shards,
    make_teacher,
    needed,
)
from allfives_train.algorithms.search_distill.trainer import (  # noqa: E402
    Targets,
    make_student,
    rescale,
    scale_logits,
)
from allfives_train.config import load_config  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "configs" / "train" / "distill_2p.yaml"
TINY = ["--config", str(CONFIG), "--init-from", "null", "--net-arch", "16", "16",
        "--distill-teacher", "search:sims=8,min_worlds=2", "--distill-shard-games", "1",
        "--distill-epochs", "2", "--eval-games", "2", "--quiet", "--total-steps", "800"]


def student():
    cfg = load_config(CONFIG, {"init_from": None, "net_arch": [16, 16]})
    return make_student(cfg).numpy_policy()


class Spy:
    """Wraps a labeller; keeps each (obs, view) it was asked about and the move it made."""

    needs_obs = True

    def __init__(self, inner: Labeller) -> None:
        self.inner, self.seen, self.moves = inner, [], []

    def reset(self, seed: int | None = None) -> None:
        pass

    def act(self, obs, view):
        self.seen.append((obs, view))
        self.moves.append(self.inner.act(obs, view))
        return self.moves[-1]


def test_labels_are_the_teachers_values_of_the_legal_moves_from_the_seats_view() -> None:
    rules = make_rules("all_fives", players=2)
    labeller = Labeller(7, "search:sims=16,min_worlds=2", student(), 0.5)
    spy = Spy(labeller)
    play_game(rules, [spy, spy], 3, log=False)
    real = [(o, v) for o, v in spy.seen if make_teacher("search").obvious(v) is None]
    rows = labeller.arrays()
    assert len(real) == len(rows["act"]) > 10
    # replay the teacher on each recorded view with its generator where the labeller's was
    teacher = make_teacher("search:sims=16,min_worlds=2", 7)
    for i, (obs, view) in enumerate(real):
        legal = list(view.legal)
        k = len(legal)
        assert list(rows["act"][i, :k]) == legal and (rows["act"][i, k:] == -1).all()
        worlds = max(teacher.min_worlds, teacher.sims // k)
        want = teacher.rollout_means(view, legal, worlds)
        assert np.allclose(rows["val"][i, :k], want)
        assert np.allclose(rows["feat"][i, :k], action_features(view, 9)[legal], atol=1e-2,
                           rtol=1e-3)
        assert np.array_equal(rows["obs"][i], obs["observation"].astype(np.float16))


def test_mix_zero_plays_the_student_and_mix_one_the_teachers_best() -> None:
    rules = make_rules("all_fives", players=2)
    pol = student()
    for mix in (0.0, 1.0):
        labeller = Labeller(5, "search:sims=8,min_worlds=2", pol, mix)
        rec = Spy(labeller)
        play_game(rules, [rec, rec], 11, log=False)
        rows, j = labeller.arrays(), 0
        for (obs, view), a in zip(rec.seen, rec.moves):
            if make_teacher("search").obvious(view) is not None:
                continue
            if mix == 1.0:
                k = len(view.legal)
                assert a == rows["act"][j, int(np.argmax(rows["val"][j, :k]))]
            else:
                assert a == PolicyAgent(pol).act(obs, view)
            j += 1
        assert j == len(rows["act"]) > 10


def test_needed_counts_a_prefix_of_written_shards() -> None:
    assert needed({}, 10) is None
    assert needed({0: 6, 2: 9}, 10) is None  # shard 1 missing
    assert needed({0: 6, 1: 5, 2: 9}, 10) == 2
    assert needed({0: 6, 1: 3}, 10) is None


@pytest.mark.slow
@pytest.mark.parametrize("head", [0, 16])
def test_scaling_the_logits_scales_every_term_of_them(head: int) -> None:
    net = actor_from(student())
    if head:
        net.add_head(head)
        assert net.head is not None
        with torch.no_grad():
            net.head["head_u"].normal_()  # a trained head: its term is not 0
    rules = make_rules("all_fives", players=2)
    labeller = Labeller(1, "search:sims=8,min_worlds=2", student(), 0.5)
    play_game(rules, [labeller, labeller], 3, log=False)
    targets = Targets(labeller.arrays(), 1.0, 0)
    i = torch.as_tensor(targets.train)
    with torch.no_grad():
        before = targets.logits(net, i)
        scale_logits(net, 0.4)
        after = targets.logits(net, i)
    legal = targets.act[i] >= 0
    assert torch.allclose(after[legal], 0.4 * before[legal], atol=1e-4)


@pytest.mark.slow
def test_the_fit_moves_the_actor_to_the_targets(tmp_path: Path) -> None:
    rules = make_rules("all_fives", players=2)
    labeller = Labeller(1, "search:sims=8,min_worlds=2", student(), 0.5)
    for seed in range(6):
        play_game(rules, [labeller, labeller], seed, log=False)
    data = labeller.arrays()
    k = (data["act"] >= 0).sum(1)
    data["val"] = np.zeros_like(data["val"])
    data["val"][np.arange(len(k)), k - 1] = 20.0  # the target: always the last legal move
    net = actor_from(student())
    targets = Targets(data, 1.0, 0)
    before = targets.held_out(net)
    rescale(net, targets)
    opt = torch.optim.Adam(net.parameters(), lr=3e-3)
    for _ in range(30):
        i = torch.as_tensor(targets.train)
        loss = targets.loss(targets.logits(net, i), i)
        opt.zero_grad()
        loss.backward()
        opt.step()
    after = targets.held_out(net)
    assert after["cross_entropy"] < before["cross_entropy"] - 0.3
    assert after["agree"] > before["agree"] + 0.2


def stopped_run(run_dir: Path, fault: str, *extra: str) -> tuple[int, int, str]:
    """Run to the fault in a new session: (exit status, process group, stderr). Output goes
    to a file, so a worker that outlived the run cannot hold the test up."""
    env = {**os.environ, "ALLFIVES_FAULT": fault, "PYTHONPATH": str(ROOT)}
    log = run_dir.parent / "stderr.txt"
    with open(log, "w") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "allfives.cli", "train", "--run-dir", str(run_dir),
             *TINY, *extra], env=env, stdout=subprocess.DEVNULL, stderr=err,
            start_new_session=True, preexec_fn=sigint_as_in_a_terminal)
        status = proc.wait(timeout=600)
    return status, proc.pid, log.read_text()


def group_gone(pgid: int, wait_s: float = 10.0) -> bool:
    """No process is left in the stopped run's process group (its workers died with it)."""
    end = time.monotonic() + wait_s
    while time.monotonic() < end:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


def shards(run_dir: Path, m: int) -> dict[str, np.ndarray]:
    return load_shards([run_dir / "labels" / f"shard_{i:06d}.npz" for i in range(m)])


@pytest.fixture(scope="module")
def whole(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An uninterrupted run, one worker."""
    run = tmp_path_factory.mktemp("distill") / "whole"
    assert main(["train", "--run-dir", str(run), *TINY, "--label-workers", "1"]) == 0
    return run


@pytest.mark.slow
def test_a_run_writes_a_checkpoint_that_plays_as_ckpt(whole: Path) -> None:
    card = json.loads((whole / "final" / "card.json").read_text())
    assert card["algo"].startswith("search distillation")
    d = card["distill"]
    assert d["teacher"] == "search:sims=8,min_worlds=2" and d["positions"] >= 800
    assert card["steps"] == d["positions"]
    assert [h["steps"] for h in card["eval_history"]] == [0, d["positions"]]
    assert len((whole / "distill.jsonl").read_text().splitlines()) == 2
    agent = make_agent(f"ckpt:{whole / 'final'}", seed=0)
    rules = make_rules("all_fives", players=2)
    state = play_game(rules, [agent, make_agent("greedy", seed=1)], 4, log=False)
    assert state.game_over


@pytest.mark.slow
@pytest.mark.parametrize("fault, status", [("label_shard@3", -signal.SIGKILL),
                                           ("label_shard@2:INT", 130),
                                           ("label_shard@2:TERM", 143)])
def test_a_stopped_run_resumes_to_the_same_labels(whole: Path, tmp_path: Path, fault: str,
                                                  status: int) -> None:
    run = tmp_path / "run"
    got, group, err = stopped_run(run, fault, "--label-workers", "2")
    assert got == status, err
    assert group_gone(group), "a labelling worker outlived its run"
    if status > 0:  # Ctrl-C or SIGTERM: the command that continues, no traceback
        last = err.strip().splitlines()[-1]
        assert "--resume" in last and "Traceback" not in err
        assert "positions labelled by this command; every finished shard is kept in" in last, last
    kept = sorted((run / "labels").glob("shard_*.npz"))
    assert len(kept) >= 2 and not (run / "final").exists()
    assert main(["train", "--run-dir", str(run), *TINY, "--label-workers", "2", "--resume"]) == 0
    m = json.loads((whole / "final" / "card.json").read_text())["distill"]["shards"]
    a, b = shards(whole, m), shards(run, m)
    for key in a:
        assert np.array_equal(a[key], b[key]), key
    card = json.loads((run / "final" / "card.json").read_text())
    assert card["distill"]["shards"] == m


def test_a_copied_run_resumes_in_the_copy(whole: Path, tmp_path: Path) -> None:
    """``--resume`` with the run directory named only in a config file: the saved config still
    names the original directory, and the copy must not write there."""
    copy = tmp_path / "copy"
    shutil.copytree(whole, copy, ignore=shutil.ignore_patterns("final", "checkpoints"))
    config = tmp_path / "copy.yaml"
    config.write_text(CONFIG.read_text().replace("run_dir: runs/", f"run_dir: {copy}  # "))
    before = (whole / "final" / "policy.npz").stat().st_mtime_ns
    assert TINY[:2] == ["--config", str(CONFIG)]
    assert main(["train", "--config", str(config), *TINY[2:], "--resume"]) == 0
    assert (copy / "final" / "card.json").is_file()
    assert (whole / "final" / "policy.npz").stat().st_mtime_ns == before


@pytest.mark.parametrize("flags, words", [
    (["--distill-mix", "1.5"], "distill_mix=1.5: must be a number in [0, 1]"),
    (["--distill-teacher", "greedy"], "distill_teacher='greedy': must be a search agent id"),
    (["--distill-teacher", "search:bogus=1"], "distill_teacher"),
    (["--policy", "mlp"], "policy='mlp': algo search_distill fits the action_features"),
    (["--bc-teacher", "heuristic"], "bc_teacher='heuristic': algo search_distill has no"),
    (["--distill-epochs", "0"], "distill_epochs=0: must be an integer >= 1"),
    (["--init-from", "checkpoints/nope"], "nope"),
    (["--init-from", "checkpoints/all_fives_4p_teams"], "trained for 4 seats; this game has 2"),
])
def test_bad_fields_get_one_line(tmp_path: Path, capsys, flags: list[str],
                                 words: str) -> None:
    run = tmp_path / "run"
    rc = main(["train", "--run-dir", str(run), *TINY, *flags])
    err = capsys.readouterr().err
    lines = [x for x in err.strip().splitlines() if x.strip()]
    assert rc == 2 and len(lines) == 1 and words in lines[0], err
    assert not run.exists()


def test_a_second_fresh_run_into_a_run_dir_is_refused(whole: Path, capsys) -> None:
    assert main(["train", "--run-dir", str(whole), *TINY]) == 2
    assert "--resume" in capsys.readouterr().err


def test_resuming_a_finished_run_says_so_and_rewrites_nothing(whole: Path, capsys) -> None:
    stamps = {p: p.stat().st_mtime_ns for p in whole.rglob("*")}
    assert main(["train", "--run-dir", str(whole), *TINY, "--resume"]) == 0
    err = capsys.readouterr().err
    assert "holds a finished run" in err and "positions" in err and "--total-steps N" in err
    assert {p: p.stat().st_mtime_ns for p in whole.rglob("*")} == stamps


def test_the_card_says_what_was_distilled(whole: Path) -> None:
    text = (whole / "final" / "card.md").read_text()
    assert "teacher: `search:sims=8,min_worlds=2`" in text and "PPO learner steps" not in text
    assert "agreement with the teacher's best move" in text


def test_earlier_labels_are_fitted_too(whole: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    extra = str(whole / "labels")
    assert main(["train", "--run-dir", str(run), *TINY, "--label-workers", "1",
                 "--total-steps", "100", "--distill-extra-labels", extra]) == 0
    d = json.loads((run / "final" / "card.json").read_text())["distill"]
    theirs = len(shards(whole, len(list((whole / "labels").glob("shard_*.npz"))))["act"])
    ours = len(shards(run, d["shards"])["act"])
    assert d["labelled"] == ours >= 100 and d["positions"] == ours + theirs
    assert d["extra_labels"] == [extra]
    text = (run / "final" / "card.md").read_text()
    assert f"plus {theirs:,} of earlier runs' (`{extra}`)" in text


def other_game_labels(whole: Path, root: Path, players: int, corrupt: bool = False) -> str:
    """A copy of ``whole``'s labels under a run folder whose config says ``players``."""
    labels = root / "other" / "labels"
    labels.mkdir(parents=True)
    for p in (whole / "labels").glob("shard_*.npz"):
        labels.joinpath(p.name).write_bytes(b"not a shard" if corrupt else p.read_bytes())
    text = (whole / "config.yaml").read_text().replace("players: 2", f"players: {players}")
    (root / "other" / "config.yaml").write_text(text)
    return str(labels)


@pytest.mark.parametrize("case, words", [
    ("missing", "nowhere: no such folder"),
    ("empty", "no label shards (shard_*.npz) in it"),
    ("corrupt", "not a label shard"),
    ("other_rules", "holds positions of other rules"),
])
def test_bad_extra_labels_get_one_line(whole: Path, tmp_path: Path, capsys, case: str,
                                       words: str) -> None:
    folder = {"missing": lambda: str(tmp_path / "nowhere"),
              "empty": lambda: str(tmp_path),
              "corrupt": lambda: other_game_labels(whole, tmp_path, 2, corrupt=True),
              "other_rules": lambda: other_game_labels(whole, tmp_path, 3)}[case]()
    run = tmp_path / "run"
    rc = main(["train", "--run-dir", str(run), *TINY, "--distill-extra-labels", folder])
    err = capsys.readouterr().err
    lines = [x for x in err.strip().splitlines() if x.strip()]
    assert rc == 2 and len(lines) == 1 and "distill_extra_labels" in lines[0], err
    assert words in lines[0] and "--resume" not in lines[0], err
    assert not run.exists()


def test_a_valued_teacher_teaches_the_critic_its_value_of_the_position() -> None:
    """With ``per_unit`` (the teacher values its leaves with a learned critic) the critic's
    target is the teacher's value of its best move in the critic's units; its loss moves the
    critic alone toward it."""
    rules = make_rules("all_fives", players=2)
    labeller = Labeller(1, "search:sims=8,min_worlds=2", student(), 0.5)
    for seed in range(4):
        play_game(rules, [labeller, labeller], seed, log=False)
    data = labeller.arrays()
    targets = Targets(data, 1.0, 0, per_unit=250.0)
    legal = data["act"] >= 0
    best = np.where(legal, data["val"], -np.inf).max(1)
    assert np.allclose(targets.value.numpy(), best / 250.0, atol=1e-6)
    assert "value_mse" not in Targets(data, 1.0, 0).held_out(actor_from(student()))
    net = actor_from(student())
    actor = [p.detach().clone() for p in net.torso.parameters()]
    opt = torch.optim.Adam(net.critic.parameters(), lr=3e-3)
    before = targets.held_out(net)["value_mse"]
    for _ in range(60):
        i = torch.as_tensor(targets.train)
        opt.zero_grad()
        targets.value_loss(net, i).backward()
        assert all(p.grad is None for p in net.torso.parameters())
        opt.step()
    assert targets.held_out(net)["value_mse"] < 0.5 * before
    assert all(torch.equal(a, b) for a, b in zip(actor, net.torso.parameters()))


def test_a_round_of_the_loop_carries_a_critic_the_next_round_searches_with(
        whole: Path, tmp_path: Path) -> None:
    """Expert iteration's loop: a run whose teacher is ``search:net=NET,value=1`` saves the
    fitted critic in NET's units (its card's margin_reward and win_reward), so the next
    round's teacher can search with it; a teacher without a value leaves none."""
    from test_value_search import with_value

    rng = np.random.default_rng(0)
    net = with_value(tmp_path, [(rng.normal(size=(386, 8)) * 0.1, np.zeros(8)),
                                (rng.normal(size=(8, 1)) * 0.1, np.zeros(1))])
    card = json.loads((net / "card.json").read_text())
    card["config"]["margin_reward"], card["config"]["win_reward"] = 2.0, 0.5
    (net / "card.json").write_text(json.dumps(card))
    run = tmp_path / "round"
    teacher = f"search:net={net},value=1,sims=8,min_worlds=2"
    assert main(["train", "--run-dir", str(run), *TINY, "--label-workers", "1",
                 "--total-steps", "300", "--distill-teacher", teacher]) == 0
    out = json.loads((run / "final" / "card.json").read_text())["config"]
    assert (out["margin_reward"], out["win_reward"]) == (2.0, 0.5)
    assert all("value_mse" in json.loads(line)
               for line in (run / "distill.jsonl").read_text().splitlines())
    nxt = make_agent(f"search:net={run / 'final'},value=1,sims=8,min_worlds=2", seed=0)
    state = play_game(make_rules("all_fives", players=2),
                      [nxt, make_agent("greedy", seed=1)], 4, log=False)
    assert state.game_over
    with pytest.raises(ValueError, match="carries its value network"):
        make_agent(f"search:net={whole / 'final'},value=1", seed=0)
