"""MaskablePPO self-play for All Fives, top to bottom (in the spirit of CleanRL's ``ppo.py``).

0. check every input (:mod:`allfives_train.shell.preflight`) and lock the run directory
   (:mod:`allfives_train.shell.rundir`), clearing what an interrupted run left;
1. build the rules and the vectorized single-agent envs (:mod:`allfives_train.games.single_agent`);
2. build MaskablePPO and warm-start it by imitating a teacher bot
(:mod:`allfives_train.algorithms.maskable_ppo.imitation`),
   or load it from the run's newest readable checkpoint (``resume``); a ``model.zip`` is
   unpickled only when it is the run's own or the user trusts it (:func:`check_trust`);
3. learn, with callbacks that keep the ``self`` opponents on the current weights, freeze
   snapshots into the pool, evaluate against fixed bots, write checkpoints, and show progress;
4. write the final checkpoint, its evaluation table and the learning-curve PNG.

Run layout (``run_dir``): ``config.yaml``, ``checkpoints/step_<n>/`` (the last 3 kept),
``latest.txt`` (the newest checkpoint's name), ``best/`` (best win rate against
``best_metric``), ``final/``, ``snapshots/``, ``bc_data.npz`` (the teacher's decisions),
``eval.jsonl``, ``learning_curve.png``, ``tb/``, ``.lock`` (while a run holds it),
``unreadable_*`` (files a resume set aside). Ctrl-C writes a checkpoint and raises
:class:`TrainingInterrupted`; see ``docs/training-runs.md``.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from allfives_env.game.rules import Rules
from allfives_env.inputs.trust import require_trust, trusted
from allfives_train.algorithms.maskable_ppo.imitation import read_bc_data
from allfives_train.algorithms.maskable_ppo.section import MASKABLE_PPO
from allfives_train.config import POOL, TrainConfig, make_rules_for
from allfives_train.games.single_agent import AllFivesSingleAgentEnv
from allfives_train.ppo_section import PPO
from allfives_train.shell import manifest, rundir
from allfives_train.shell import run as shell
from allfives_train.shell.budget import budget
from allfives_train.shell.checkpoints import write_text_atomic
from allfives_train.shell.preflight import preflight, require_sb3
from allfives_train.shell.run import Plugin, Session, resume_point
from allfives_train.shell.rundir import TrainingInterrupted, holds_parts

if TYPE_CHECKING:
    from allfives_train.algorithms.maskable_ppo.callbacks import ProgressCallback


def make_vec_env(cfg: TrainConfig, rules: Rules, seed: int) -> Any:
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecMonitor

    def make(i: int):  # noqa: ANN202
        def thunk() -> AllFivesSingleAgentEnv:
            return AllFivesSingleAgentEnv(rules, pool.opponents, pool.partner, cfg.margin_reward,
                                          cfg.win_reward, pool.snapshot_keep, seed=seed + i)
        return thunk

    pool = cfg.section(POOL)
    fns = [make(i) for i in range(cfg.n_envs)]
    vec = SubprocVecEnv(fns) if cfg.section(MASKABLE_PPO).vec_env == "subproc" \
        else DummyVecEnv(fns)
    return VecMonitor(vec)


def build_model(cfg: TrainConfig, env: Any, tb_dir: Path) -> Any:
    import torch
    from sb3_contrib import MaskablePPO

    activation = {"relu": torch.nn.ReLU, "tanh": torch.nn.Tanh}[cfg.activation]
    arch, ppo = list(cfg.net_arch), cfg.section(PPO)
    return MaskablePPO(
        "MlpPolicy", env, learning_rate=cfg.learning_rate, n_steps=cfg.n_steps,
        batch_size=cfg.batch_size, n_epochs=cfg.n_epochs, gamma=cfg.gamma,
        gae_lambda=ppo.gae_lambda, clip_range=ppo.clip_range, ent_coef=ppo.ent_coef,
        vf_coef=ppo.vf_coef, max_grad_norm=cfg.max_grad_norm, seed=cfg.seed,
        device=sb3_device(cfg),
        tensorboard_log=str(tb_dir), verbose=0,
        policy_kwargs={"net_arch": {"pi": arch, "vf": arch}, "activation_fn": activation},
    )


def sb3_device(cfg: TrainConfig) -> str:
    """SB3's ``device`` for ``cfg.device`` (``auto``: cuda where one exists; ``cuda`` where
    none does: ValueError in one line). SB3 computes in fp32 whatever ``precision`` says."""
    from allfives_train.algorithms.ppo_batched.net import resolve_device

    return str(resolve_device(cfg.device))


def train(cfg: TrainConfig, resume: bool = False, quiet: bool = False,
          started: float | None = None) -> Path:
    """Train as ``cfg`` says; returns the final checkpoint directory. ``started``: when the
    command started (``time.perf_counter()``), counted in the card's ``wall_time_s``. The
    run's set-up (checks, lock, resume, stops) is the run shell's
    (:func:`allfives_train.shell.run.train`); this module is its plug-in (:data:`PLUGIN`)."""
    return shell.train(PLUGIN, cfg, resume, quiet, started)


def _prepare(s: Session) -> None:
    """Everything checked before any work (:mod:`allfives_train.shell.preflight`)."""
    require_sb3()
    import torch

    torch.set_num_threads(s.cfg.torch_threads)
    sb3_device(s.cfg)  # device cuda without one: refused before any work
    rules, own = make_rules_for(s.cfg), s.cfg.section(MASKABLE_PPO)
    teacher = (("bc_teacher", str(own.bc_teacher)),) if own.bc_teacher and not own.bc_data \
        else ()
    preflight(s.cfg, rules, teacher)
    s.data = rules, read_bc_data(own.bc_data) if own.bc_data else None


def _body(s: Session) -> Path:
    rules, bc_data = s.data
    return _train_locked(s.cfg, rules, s.run_dir, s.resume, s.quiet, s.started, bc_data)


def _train_locked(cfg: TrainConfig, rules: Rules, run_dir: Path, resume: bool, quiet: bool,
                  started: float, bc_data: Any) -> Path:
    from allfives_train.algorithms.maskable_ppo.callbacks import (
        EvalCheckpointCallback,
        ProgressCallback,
        SelfPlayCallback,
    )
    env = model = evaluator = None
    progress: ProgressCallback | None = None
    try:
        env, model, card = _start(cfg, rules, run_dir, resume)
        if card is None:  # ---- a fresh run: its own config, then the warm start ----------
            write_text_atomic(run_dir / "config.yaml",
                              yaml.safe_dump(cfg.to_dict(), sort_keys=False))
            if cfg.init_from:
                _init_weights(model, cfg.init_from)
            own = cfg.section(MASKABLE_PPO)
            warm = _warm_start(cfg, rules, model, quiet, bc_data) \
                if own.bc_teacher or own.bc_data else None
            history, wall0 = [], 0.0
        else:
            history, wall0, warm = card["eval_history"], card["wall_time_s"], card.get("warm_start")
            write_text_atomic(run_dir / "eval.jsonl",  # what this checkpoint saw, once each
                              "".join(json.dumps(h) + "\n" for h in history))
        # ---- learn -------------------------------------------------------------------------
        selfplay = SelfPlayCallback(cfg, run_dir)
        evaluator = EvalCheckpointCallback(cfg, rules, run_dir, history, wall0, warm, quiet,
                                           started)
        callbacks: list[Any] = [selfplay, evaluator]
        if cfg.progress and not quiet:  # a bar on a terminal, else a line each 30 s at most
            progress = ProgressCallback(budget(cfg).end(model.num_timesteps),
                                        model.num_timesteps)
            callbacks.append(progress)
        remaining = max(0, cfg.total_steps - model.num_timesteps)
        learn_start = time.perf_counter()
        model.learn(remaining, callback=callbacks, reset_num_timesteps=card is None,
                    tb_log_name="ppo")
        evaluator.finish(model, time.perf_counter() - learn_start)
        model.logger.close()  # flush TensorBoard's writer now, not at the interpreter's exit
        return run_dir / "final"
    except KeyboardInterrupt:
        if progress is not None:
            progress.close()
        if not quiet:
            print("allfives train: interrupted: saving a checkpoint...", file=sys.stderr,
                  flush=True)
        saved = None
        if evaluator is not None and model is not None and model.num_timesteps > 0:
            saved = evaluator.checkpoint(model)
        raise TrainingInterrupted(run_dir, saved,
                                  model.num_timesteps if model is not None else 0) from None
    finally:
        if env is not None:
            _close(env)


def _start(cfg: TrainConfig, rules: Rules, run_dir: Path, resume: bool
           ) -> tuple[Any, Any, dict[str, Any] | None]:
    """The envs and the model: loaded from the newest readable checkpoint when resuming
    (unreadable ones are set aside with a warning), else new (an unfinished run that saved
    nothing is cleared first). Each env is seeded apart; a resumed run continues on fresh
    seeds."""
    from sb3_contrib import MaskablePPO

    device = sb3_device(cfg)  # a CUDA run's model.zip loads on the CPU too (SB3 maps it)

    def load(path: Path) -> tuple[Any, Any, dict[str, Any]] | str:
        problem = rundir.readable(path)
        if problem is not None:
            return problem
        require_own_model(path, run_dir)
        manifest.verify(path / "model.zip", run_dir)  # this run's own file, unchanged
        card = json.loads((path / "card.json").read_text())
        env = make_vec_env(cfg, rules, cfg.seed * 10_000 + card["steps"])
        try:
            model = MaskablePPO.load(path / "model.zip", env=env, device=device,
                                     tensorboard_log=str(run_dir / "tb"))
            return env, model, card
        except Exception as exc:  # noqa: BLE001 (a damaged model.zip, whatever the error)
            _close(env)
            return f"model.zip does not load ({type(exc).__name__}: {exc})"

    found = resume_point(run_dir, resume, rundir.resumable(run_dir) if resume else [], load)
    if found is not None:
        env, model, card = found[1]
        return env, model, card
    run_dir.mkdir(parents=True, exist_ok=True)
    env = make_vec_env(cfg, rules, cfg.seed * 10_000)
    return env, build_model(cfg, env, run_dir / "tb"), None


def _close(env: Any) -> None:
    try:
        env.close()
    except (OSError, EOFError, BrokenPipeError):  # subprocess envs already stopped (Ctrl-C)
        pass


def _warm_start(cfg: TrainConfig, rules: Rules, model: Any, quiet: bool,
                data: dict[str, Any] | None = None) -> dict[str, Any]:
    from allfives_train.algorithms.maskable_ppo.imitation import load_or_collect, pretrain
    from allfives_train.shell.progress import Stage

    start, own = time.perf_counter(), cfg.section(MASKABLE_PPO)
    cache = cfg.resolved_run_dir() / "bc_data.npz"
    hide = quiet or not cfg.progress
    if data is None:
        with Stage("warm start: collecting", own.bc_samples, "decisions", quiet=hide) as bar:
            data = load_or_collect(cfg, rules, cfg.seed + 777, cache,
                                   lambda n: bar.update_to(min(bar.n + n, bar.total)))
    with Stage("warm start: imitating", own.bc_epochs, "epochs", quiet=hide) as bar:
        stats = pretrain(model, data, own.bc_epochs, 256, own.bc_lr, cfg.section(PPO).vf_coef,
                         cfg.seed, bar.advance)
    warm = {"teacher": own.bc_teacher or f"the decisions in {own.bc_data}",
            "decisions": stats["samples"], "accuracy": round(stats["accuracy"], 4),
            "value_rmse": round(stats["value_rmse"], 4),
            "seconds": round(time.perf_counter() - start, 1)}
    if not quiet:
        print(f"warm start: imitated {warm['teacher']} on {warm['decisions']:,} decisions in "
              f"{warm['seconds']:.0f} s; held-out accuracy {warm['accuracy']:.3f}, value RMSE "
              f"{warm['value_rmse']:.3f}")
    return warm


def check_trust(cfg: TrainConfig, run_dir: Path, resume: bool) -> None:
    """The trust rule for the SB3 ``model.zip`` files this run would load (cloudpickle: they
    can run code): ``init_from``'s only with ``--trust-checkpoint``; a resumed run's only
    when its own (:func:`require_own_model`) and unchanged since it was written (its sha256
    in the run's manifest: :func:`allfives_train.shell.manifest.verify`), unless trusted.
    One-line ValueError."""
    from allfives_agents.trained.checkpoint import resolve_checkpoint

    if cfg.init_from and not (resume and rundir.resumable(run_dir)):  # a resume does not read it
        src = resolve_checkpoint(cfg.init_from) / "model.zip"
        require_trust(f"init_from {cfg.init_from!r}: {src} is an SB3 model.zip", src.parent)
    for path in rundir.resumable(run_dir) if resume else []:
        if rundir.readable(path) is None:  # those _start may load (the others are set aside)
            require_own_model(path, run_dir)
            manifest.verify(path / "model.zip", run_dir)


def require_own_model(checkpoint: Path, run_dir: Path) -> None:
    """Refuse (one line, unless trusted) a ``model.zip`` that is not this run's own: it must
    lie in ``run_dir`` (no link out of it) beside this program's model card."""
    from allfives_agents.trained.checkpoint import CARD_FORMAT

    if trusted():
        return
    model = checkpoint / "model.zip"
    problem = None
    try:
        inside = model.resolve().is_relative_to(run_dir.resolve())
        card = json.loads((checkpoint / "card.json").read_text())
    except (OSError, ValueError, RuntimeError) as exc:
        problem = f"its card.json is unreadable ({type(exc).__name__})"
    else:
        if not inside:
            problem = "it links out of the run directory"
        elif not isinstance(card, dict) or card.get("format") != CARD_FORMAT:
            problem = f"its card.json is not an {CARD_FORMAT} model card"
    if problem is not None:
        require_trust(f"--resume: {model} is not a checkpoint this program wrote for the run "
                      f"in {run_dir} ({problem}), and an SB3 model.zip", checkpoint)


def _init_weights(model: Any, ref: str) -> None:
    """Copy a checkpoint's SB3 weights (model.zip) into a fresh model (trusted by the user:
    :func:`check_trust`)."""
    from sb3_contrib import MaskablePPO

    from allfives_agents.trained.checkpoint import resolve_checkpoint

    src = resolve_checkpoint(ref) / "model.zip"
    if not src.is_file():
        raise ValueError(f"init_from {ref!r}: the checkpoint has no model.zip to start from")
    require_trust(f"init_from {ref!r}: {src} is an SB3 model.zip", src.parent)
    try:
        other = MaskablePPO.load(src, device="cpu")
    except Exception as exc:  # noqa: BLE001 (a damaged or foreign model.zip, whatever fails)
        detail = str(exc).splitlines()[0][:200] if str(exc) else ""
        raise ValueError(f"init_from {ref!r}: {src} does not load as an SB3 model "
                         f"({type(exc).__name__}: {detail})") from None
    try:
        model.policy.load_state_dict(other.policy.state_dict())
    except RuntimeError as exc:
        raise ValueError(f"init_from {ref!r}: network shapes differ ({exc})") from None


#: maskable_ppo's plug-in of the run shell (its row: train/algos.py).
PLUGIN = Plugin(
    body=_body, prepare=_prepare,
    has_run=lambda run_dir: rundir.resumable(run_dir) or holds_parts(run_dir),
    no_run="--resume: no checkpoint to resume in {run_dir} (no run there: no latest.txt and "
           "no checkpoints/step_*)",
    done=rundir.final_steps, checkpoint_file="model.zip",
    before_lock=lambda s: check_trust(s.cfg, s.run_dir, s.resume))
