"""``algo: search_distill``: fit the heuristic-residual actor to a search's value of every move.

Expert iteration's first half, top to bottom:

1. the student: the actor of ``init_from`` (an ``action_features`` checkpoint), or a fresh
   heuristic-residual actor (``policy: action_features``) when it is null; written to
   ``student.npz`` so a resumed run labels with the same one;
2. the labels (:mod:`allfives_train.algorithms.search_distill.label`): ``total_steps`` decisions of
games in which
   each move is the teacher's best or the student's, each labelled with the teacher's rollout
   mean of every legal move; ``label_workers`` processes (or Ray tasks on the cluster at
   ``address``), shard by shard, kept across stops;
3. the fit: on 95% of the positions, ``distill_epochs`` passes of Adam on the cross-entropy
   from the actor's masked softmax to softmax(value / ``distill_temperature``), from the
   student's weights with its logits first rescaled to fit the targets best; each epoch
   prints, on the 5% held out, how often the actor's best move is the teacher's and its
   regret (teacher's value of the teacher's best move minus that of the actor's, points).
   A teacher that values its leaves with a learned critic (``search:net=NET,value=W``)
   teaches the critic too: the student's critic (``init_from``'s where it has one) is
   regressed on the teacher's value of the position (its best move's, converted from points
   into NET's units, which the checkpoint's card then records as its ``margin_reward`` and
   ``win_reward``), and the checkpoint carries it (:func:`fits_value`): the next round's
   teacher can be ``search:net={previous},value=W``, expert iteration's loop;
4. evaluation of the student (before) and of the fitted actor (after) against
   ``eval_opponents``, and the checkpoint ``final/`` in the usual format.

Ctrl-C or a kill during the labels keeps every written shard; ``--resume`` labels only the
missing ones and then fits (the fit is a few minutes and is redone whole). A run stopped
before its first shard has nothing worth keeping: the same command, with or without
``--resume``, starts it over (:func:`allfives_train.shell.rundir.start_over`).
"""

from __future__ import annotations

import dataclasses
import functools
import io
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import torch
import yaml

from allfives_agents.evaluation.threads import limit_blas_threads
from allfives_agents.trained.policy_numpy import NumpyPolicy
from allfives_env.game.rules import Rules
from allfives_env.game.tiles import N_ACTIONS
from allfives_train.algorithms.ppo_batched.net import (
    ResidualActorCritic,
    actor_from,
    make_net,
    resolve_device,
)
from allfives_train.algorithms.search_distill.label import (
    extra_shards,
    label_all,
    label_engine,
    load_shards,
    make_teacher,
    shard_size,
)
from allfives_train.algorithms.search_distill.section import SEARCH_DISTILL
from allfives_train.benchmarks.curve import read_history
from allfives_train.config import EVALUATION, TrainConfig, make_rules_for
from allfives_train.shell import run as shell
from allfives_train.shell.checkpoints import write_bytes_atomic, write_text_atomic
from allfives_train.shell.hooks import Checkpointer, Evaluator, Run
from allfives_train.shell.run import Plugin, Session, resume_point
from allfives_train.shell.rundir import PARTS, TrainingInterrupted, final_steps, holds_parts

ALGO = "search distillation (train/algorithms/search_distill/trainer.py): the actor fitted " \
    "to a search's value of every legal move"
STATE_FILE = "distill_state.json"
STUDENT_FILE = "student.npz"
#: what a run writes here (cleared when it is started over)
DISTILL_PARTS = (*PARTS, STATE_FILE, STUDENT_FILE, "labels", "distill.jsonl")


def train(cfg: TrainConfig, resume: bool = False, quiet: bool = False,
          started: float | None = None) -> Path:
    """Label, fit, evaluate and save as ``cfg`` says; returns the final checkpoint. The
    run's set-up (checks, lock, stops) is the run shell's
    (:func:`allfives_train.shell.run.train`); this module is its plug-in (:data:`PLUGIN`)."""
    return shell.train(PLUGIN, cfg, resume, quiet, started)


def _prepare(s: Session) -> None:
    """The plan in one line, then every check before any work; the critic's units."""
    cfg = s.cfg
    own = cfg.section(SEARCH_DISTILL)
    if not s.quiet:
        print(plan(cfg), flush=True)
    if cfg.address is not None:  # Ray installed and the cluster there, before any work
        from allfives_train.algorithms.search_distill.ray_label import check_address

        check_address(cfg.address)
    torch.set_num_threads(cfg.torch_threads)
    limit_blas_threads(1)
    resolve_device(cfg.device)  # device cuda without one: refused before any work
    rules = make_rules_for(cfg)
    units = teacher_units(own.teacher, rules)
    if units is not None:  # the critic learns in the teacher's units; the card says which
        s.cfg = dataclasses.replace(cfg, margin_reward=units[0], win_reward=units[1])
    s.data = rules


def _body(s: Session) -> Path:
    cfg, run_dir, rules = s.cfg, s.run_dir, s.data
    state = _check_run_dir(run_dir, s.resume)
    write_text_atomic(run_dir / "config.yaml", yaml.safe_dump(cfg.to_dict(), sort_keys=False))
    torch.manual_seed(cfg.seed)
    run = Run(cfg, rules, run_dir, None, None, None, 0, [], state.get("wall_time_s", 0.0),
              s.quiet, t0=s.started)
    if (run_dir / "eval.jsonl").is_file():
        run.history = read_history(run_dir)
    _save_state(run_dir, run.wall())
    labelled = [0]  # positions labelled in this command, for the message of a stop
    try:
        return _distill(cfg, rules, run, labelled)
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM: every written shard is kept
        kept = any((run_dir / "labels").glob("shard_*.npz"))
        raise TrainingInterrupted(run_dir, run_dir / "labels" if kept else None,
                                  labelled[0], "positions") from None


def plan(cfg: TrainConfig) -> str:
    """What a ``search_distill`` run does, stage by stage, in one line."""
    own, ev = cfg.section(SEARCH_DISTILL), cfg.section(EVALUATION)
    return (f"search distillation: evaluate the student, label {cfg.total_steps:,} positions "
            f"with {own.teacher}'s value of every move, fit the actor to them "
            f"({own.epochs} epochs), evaluate it against "
            f"{', '.join(ev.opponents)} ({ev.games} games each) and save it")


def _distill(cfg: TrainConfig, rules: Rules, run: Run, labelled: list[int]) -> Path:
    """Steps 1 to 4 of the module docstring; ``labelled[0]`` counts the new positions."""
    run_dir, own = run.run_dir, cfg.section(SEARCH_DISTILL)

    # ---- 1. the student -----------------------------------------------------------------
    student_file = run_dir / STUDENT_FILE
    if not student_file.is_file():
        _save_student(make_student(cfg), student_file)
    # the fit on ``device`` (labels and evaluations on the CPU; the checkpoint from CPU copies)
    run.agent = actor_from(NumpyPolicy.load(student_file)).to(resolve_device(cfg.device))
    run.optimizer = torch.optim.Adam(run.agent.parameters(), lr=cfg.learning_rate)
    checkpointer = Checkpointer(ALGO)
    evaluator = Evaluator(checkpointer)
    engine = label_engine(own.teacher, cfg.engine)
    labels = run_dir / "labels"
    have = labelled_so_far(labels, cfg.total_steps)
    compiler = None
    if engine == "batched" and have < cfg.total_steps:  # numba's kernels, while it evaluates
        from allfives_train.games.compiling import Compiler

        run.say("compiling the batched engine, its features and the search in the background "
                "(numba: once per install, then read from its cache)")
        compiler = Compiler(rules, own.teacher, student_file.read_bytes())
    try:
        evaluator.start(run)  # the student, at 0 steps (kept in eval.jsonl across stops)
        if compiler is not None:
            run.say(compiler.wait(run.stage))
    finally:
        if compiler is not None:
            compiler.stop()

    # ---- 2. the labels ------------------------------------------------------------------
    stage = run.stage("labelling", cfg.total_steps, "positions", initial=have)

    def on_shard(index: int, decisions: int) -> None:
        labelled[0] += decisions
        _save_state(run_dir, run.wall())
        stage.update_to(min(cfg.total_steps, have + labelled[0]))

    remote: Any = None
    if cfg.address is not None:  # Ray tasks on that cluster
        from allfives_train.algorithms.search_distill.ray_label import RayPool

        remote = RayPool
    with stage:
        shards = label_all(rules, own.teacher, student_file, labels,
                           cfg.total_steps, own.mix, own.shard_games, cfg.seed,
                           own.label_workers, on_shard, cfg.address, remote, engine)
        stage.update_to(sum(shards.values()))  # whole shards: a little past the target
    run.say(f"labels: {sum(shards.values()):,} positions in {len(shards)} shards "
            f"({labelled[0]:,} of them labelled by this command, {run.wall():.0f} s)")
    extra = [p for folder in own.extra_labels for p in extra_shards(folder)]
    data = load_shards([*shards, *extra], run.agent.n_features)

    # ---- 3. the fit ---------------------------------------------------------------------
    report = fit(run.agent, run.optimizer, data, cfg, run)
    run.steps = len(data["act"])

    # ---- 4. evaluation and the checkpoint ----------------------------------------------
    checkpointer.extra = {"distill": {"teacher": own.teacher, "engine": engine,
                                      "positions": run.steps,
                                      "shards": len(shards), "labelled": sum(shards.values()),
                                      "extra_labels": list(own.extra_labels),
                                      **report}}
    evaluator.finish(run)
    checkpointer.finish(run)
    _save_state(run_dir, run.wall())
    return run_dir / "final"


def labelled_so_far(labels: Path, target: int) -> int:
    """Positions already in the run's shards, up to ``target`` (a resumed run's start)."""
    if not labels.is_dir():
        return 0
    return min(target, sum(shard_size(p) for p in labels.glob("shard_*.npz")))


def teacher_units(teacher: str, rules: Rules) -> tuple[float, float] | None:
    """The units (``margin_reward``, ``win_reward``) of the learned value that ``teacher``
    puts at its leaves (``search:net=NET,value=W`` with W > 0: NET's card), else None."""
    agent: Any = make_teacher(teacher)
    if not getattr(agent, "value", 0.0):
        return None
    margin, win = agent.value_units(rules)
    return float(margin), float(win)


def fits_value(cfg: TrainConfig) -> bool:
    """Whether a search_distill run of ``cfg`` teaches the critic (its teacher values its
    leaves with a learned one), so that its checkpoints carry it."""
    return teacher_values(cfg.section(SEARCH_DISTILL).teacher)


@functools.lru_cache(maxsize=8)
def teacher_values(teacher: str) -> bool:
    """Whether the ``teacher`` agent id values its leaves with a learned value (the teacher
    is built once per id and process: asked at the start, in the fit and at every save)."""
    return bool(getattr(make_teacher(teacher), "value", 0.0))


def _check_run_dir(run_dir: Path, resume: bool) -> dict[str, Any]:
    """The saved state of the run to resume ({} for a fresh run), through the run shell's
    :func:`~allfives_train.shell.run.resume_point`: the run folder itself is the one
    candidate when it holds work a resume keeps (:func:`_saved_work`); a run that saved
    nothing worth keeping is started over; a fresh run over one that did is refused."""
    found = resume_point(run_dir, resume, [run_dir] if _saved_work(run_dir) else [],
                         lambda path: dict(json.loads((path / STATE_FILE).read_text())),
                         DISTILL_PARTS)
    return {} if found is None else dict(found[1])


def _saved_work(run_dir: Path) -> bool:
    """Whether ``run_dir`` holds work a resume keeps: the run's state and student, and a label
    shard or a checkpoint."""
    if not ((run_dir / STATE_FILE).is_file() and (run_dir / STUDENT_FILE).is_file()):
        return False
    return any((run_dir / "labels").glob("shard_*.npz")) or (run_dir / "latest.txt").is_file()


def _save_student(net: ResidualActorCritic, path: Path) -> None:
    """``student.npz``, written whole (the labels of a resumed run are made with it)."""
    buf = io.BytesIO()
    np.savez(buf, allow_pickle=False, **net.numpy_policy().arrays())
    write_bytes_atomic(path, buf.getvalue())


def _save_state(run_dir: Path, wall: float) -> None:
    write_text_atomic(run_dir / STATE_FILE, json.dumps({"wall_time_s": round(wall, 1)}))


def make_student(cfg: TrainConfig) -> ResidualActorCritic:
    """The fast path's network for ``cfg``
    (:func:`allfives_train.algorithms.ppo_batched.net.make_net`:
    ``init_from``'s actor or a fresh heuristic-residual one, with the ``move_head`` it asks
    for); search distillation's config always asks for the action_features actor
    (allfives_train.config checks)."""
    net = make_net(cfg)
    assert isinstance(net, ResidualActorCritic)
    return net


def legal_logits(net: ResidualActorCritic, obs: torch.Tensor, feat: torch.Tensor,
                 act: torch.Tensor) -> torch.Tensor:
    """The actor's logits of the recorded legal moves ([B, L]; pads at -1e9)."""
    b, device = len(act), obs.device
    idx = torch.where(act >= 0, act, N_ACTIONS)  # pads go to a spare column
    full = torch.zeros(b, N_ACTIONS + 1, feat.shape[-1], device=device)
    full.scatter_(1, idx.unsqueeze(-1).expand(-1, -1, feat.shape[-1]), feat)
    x = torch.cat([obs, full[:, :N_ACTIONS].reshape(b, -1)], 1)
    mask = torch.zeros(b, N_ACTIONS + 1, dtype=torch.bool, device=device)
    mask.scatter_(1, idx, True)
    z = net.logits(x, mask[:, :N_ACTIONS])
    return torch.cat([z, torch.full((b, 1), -1e9, device=device)], 1).gather(1, idx)


class Targets:
    """The labels as tensors on ``device``: the soft targets, the teacher's best move, a
    held-out split (row indices: :meth:`rows`)."""

    def __init__(self, data: dict[str, np.ndarray], temperature: float, seed: int,
                 device: torch.device | None = None, per_unit: float | None = None) -> None:
        self.device = device or torch.device("cpu")
        self.obs = torch.as_tensor(data["obs"].astype(np.float32), device=self.device)
        self.feat = torch.as_tensor(data["feat"].astype(np.float32), device=self.device)
        self.act = torch.as_tensor(data["act"].astype(np.int64), device=self.device)
        self.val = torch.as_tensor(data["val"].astype(np.float32), device=self.device)
        legal = self.act >= 0
        self.target = torch.softmax((self.val / temperature).masked_fill(~legal, -1e9), 1)
        self.best = self.val.masked_fill(~legal, -1e9).argmax(1)
        # the critic's target: the teacher's value of the position (of its best move), in the
        # units of the teacher's value (``per_unit`` points each); None: no critic taught
        self.value = None if per_unit is None else \
            self.val.gather(1, self.best[:, None]).squeeze(1) / per_unit
        perm = np.random.default_rng(seed).permutation(len(self.act))
        cut = max(1, min(len(perm) // 2, max(1000, len(perm) // 20)))
        self.test, self.train = perm[:cut], perm[cut:]

    def rows(self, order: np.ndarray) -> torch.Tensor:
        """Row indices (numpy) as a tensor on the labels' device."""
        return torch.as_tensor(order, device=self.device)

    def logits(self, net: ResidualActorCritic, i: Any) -> torch.Tensor:
        return legal_logits(net, self.obs[i], self.feat[i], self.act[i])

    def loss(self, z: torch.Tensor, i: Any) -> torch.Tensor:
        return -(self.target[i] * torch.log_softmax(z, 1)).sum(1).mean()

    def value_loss(self, net: ResidualActorCritic, i: Any) -> torch.Tensor:
        """The critic's mean squared error to the teacher's values of positions ``i``."""
        assert self.value is not None
        return ((net.value(self.obs[i]) - self.value[i]) ** 2).mean()

    def held_out(self, net: ResidualActorCritic) -> dict[str, float]:
        with torch.no_grad():
            t = self.rows(self.test)
            z = self.logits(net, t)
            chosen, best = z.argmax(1), self.best[t]
            regret = self.val[t].gather(1, best[:, None]) - self.val[t].gather(1, chosen[:, None])
            out = {"agree": round(float((chosen == best).float().mean()), 4),
                   "regret": round(float(regret.mean()), 4),
                   "cross_entropy": round(float(self.loss(z, t)), 4)}
            if self.value is not None:
                out["value_mse"] = round(float(self.value_loss(net, t)), 5)
            return out


def rescale(net: ResidualActorCritic, data: Targets) -> float:
    """Multiply the actor's logits by the factor (0.01 .. 2) that fits the targets best."""
    i = data.rows(data.train[:5000])
    with torch.no_grad():
        z = data.logits(net, i)
        scales = np.geomspace(0.01, 2.0, 40)
        best = float(scales[int(np.argmin([float(data.loss(z * c, i)) for c in scales]))])
    scale_logits(net, best)
    return best


def scale_logits(net: ResidualActorCritic, c: float) -> None:
    """Multiply every logit of the actor by ``c`` (its output layer, its feature weights and,
    when it has one, the output of its per-move head)."""
    out = [m for m in net.torso if isinstance(m, torch.nn.Linear)][-1]
    params = [out.weight, out.bias, net.feat.weight, net.feat.bias]
    if net.head is not None:
        params.append(net.head["head_u"])
    with torch.no_grad():
        for p in params:
            p.mul_(c)


def one_pass(net: ResidualActorCritic, optimizer: torch.optim.Optimizer, data: Targets,
             order: np.ndarray, batch_size: int, max_grad_norm: float) -> None:
    """One pass of ``optimizer`` over the rows ``order`` of ``data``, in batches, in that
    order (gradients clipped to ``max_grad_norm``)."""
    for s in range(0, len(order), batch_size):
        i = data.rows(order[s:s + batch_size])
        loss = data.loss(data.logits(net, i), i)
        if data.value is not None:  # the critic's own weights: the sum trains each apart
            loss = loss + data.value_loss(net, i)
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), max_grad_norm)
        optimizer.step()


def fit(net: ResidualActorCritic, optimizer: torch.optim.Optimizer,
        data_np: dict[str, np.ndarray], cfg: TrainConfig, run: Run) -> dict[str, Any]:
    """``distill_epochs`` passes over the labels; the held-out figures before and after."""
    own = cfg.section(SEARCH_DISTILL)
    per_unit = make_rules_for(cfg).target / cfg.margin_reward if fits_value(cfg) else None
    data = Targets(data_np, own.temperature, cfg.seed,
                   next(net.parameters()).device, per_unit)
    before = data.held_out(net)
    scale = rescale(net, data)
    run.say(f"fit: {len(data.train):,} positions, {len(data.test):,} held out; before "
            f"{before}; logits x {scale:.3g}")
    rng = np.random.default_rng(cfg.seed)
    order = data.train.copy()
    (run.run_dir / "distill.jsonl").write_text("")  # this fit's epochs (a resumed run refits)
    after = before
    with run.stage("fitting", own.epochs, "epochs") as stage:
        for epoch in range(own.epochs):
            rng.shuffle(order)
            one_pass(net, optimizer, data, order, cfg.batch_size, cfg.max_grad_norm)
            after = data.held_out(net)
            with open(run.run_dir / "distill.jsonl", "a") as f:
                f.write(json.dumps({"epoch": epoch + 1, "wall_time_s": round(run.wall(), 1),
                                    **after}) + "\n")
            stage.advance()
    run.say(f"fit: {own.epochs} epochs; held out {after} (each epoch's: "
            f"{run.run_dir / 'distill.jsonl'})")
    if not math.isfinite(after["cross_entropy"]):
        raise ValueError("search_distill: the fit diverged (held-out cross-entropy not "
                         "finite); lower learning_rate")
    return {"held_out_before": before, "held_out_after": after, "logit_scale": scale}


#: search_distill's plug-in of the run shell (its row: train/algos.py).
PLUGIN = Plugin(
    body=_body, prepare=_prepare,
    has_run=lambda run_dir: holds_parts(run_dir, DISTILL_PARTS),
    no_run="--resume: no search_distill run to resume in {run_dir} (no " + STATE_FILE
           + ", no label shards)",
    done=lambda run_dir: final_steps(run_dir, "positions"))
