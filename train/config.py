"""The training configuration: one dataclass, one docstring per field.

A run is configured by a YAML file in ``configs/train/`` (any subset of the fields below) and
command-line overrides (``--total-steps 50000``, ``--gamma 0.995``). Every field has a
default, so ``allfives train`` with no arguments runs the default config.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

from allfives_agents.features.action_features import FEATURE_COUNTS
from allfives_env.game.rules import Rules
from allfives_env.inputs.shipped import shipped_dir
from allfives_train import algos
from allfives_train.algo_checks import require_number
from allfives_train.configio import (
    GameFields,
    check_known,
    coerce_values,
    field_docs,
    gather_values,
)
from allfives_train.ppo_section import PPOSection

DEFAULT_CONFIG = shipped_dir("configs") / "train" / "default.yaml"  # the main job (distillation)
MASKABLE_CONFIG = DEFAULT_CONFIG.parent / "maskable_2p.yaml"  # the dataclass defaults, as YAML
MAX_AUTO_SHARDS = 64  # rollout_shards: auto takes one per core, at most this many


def auto_shards() -> int:
    """``rollout_shards: auto``: one shard per core this process may use, at most 64."""
    cores = (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
             else os.cpu_count() or 1)
    return max(1, min(MAX_AUTO_SHARDS, cores))


@dataclasses.dataclass
class TrainConfig(PPOSection, GameFields):
    """A training run of ``allfives train``: one flat set of fields (the YAML), grouped by
    who reads them. Each algo's own section (the fields only it reads: the warm start's
    ``bc_*`` and ``vec_env`` for maskable_ppo, ``distill_*`` and ``label_workers`` for
    search_distill, ``dmc_*`` for dmc) and what else it ignores are declared in the
    algorithm table (train/algos.py), which warns about an ignored field that a config sets;
    PPO's section is :class:`allfives_train.ppo_section.PPOSection`. See docs/training.md."""

    # --- the game: preset, players, teams, rules_file, rules (train/configio.py) ----------

    # --- the run ----------------------------------------------------------------------
    total_steps: int = 150_000
    """Learner decisions to train for (SB3 timesteps), counted across all envs, rounded up
    to whole rollouts where the algo's steps come in rollouts (train/shell/budget.py, said in
    the start line); ``search_distill``: positions to label."""
    seed: int = 0
    """Seeds the envs, the opponents and the network initialisation."""
    run_dir: str = "runs/main_{preset}_{players}p"
    """Where checkpoints, TensorBoard logs and the learning curve go ({preset},
    {players} and {seed} are filled in)."""
    n_envs: int = 64
    """Games played side by side; SB3 vectorizes over them."""
    vec_env: str = "dummy"
    """``dummy`` (all envs in this process) or ``subproc`` (one process per env)."""
    torch_threads: int = 1
    """torch threads in each process (keep 1: the envs use the other cores)."""
    progress: bool = True
    """Show a progress bar."""
    init_from: str | None = None
    """Start from this checkpoint's weights (a checkpoint directory) instead of at random
    (maskable_ppo; ``search_distill`` and ``dmc``: an action_features checkpoint of the same
    table)."""
    algo: str = "maskable_ppo"
    """``maskable_ppo`` (sb3-contrib's MaskablePPO over scalar envs, imitation warm start) or
    ``ppo_batched`` (the fast path: own masked PPO in torch over a VectorEnv of whole batches,
    train/algorithms/ppo_batched/trainer.py; no warm start, see configs/train/fast_2p.yaml) or
    ``search_distill``
    (the action_features actor of ``init_from`` fitted to a search's value of every legal
    move, train/algorithms/search_distill/trainer.py; see configs/train/distill_2p.yaml) or ``dmc``
    (Deep Monte-Carlo:
    the action_features actor read as action values and regressed on the returns of its own
    epsilon-greedy games, train/algorithms/dmc/trainer.py; see configs/train/dmc_2p.yaml).
    ``rllib_ppo`` (PPO
    on Ray RLlib) has a config of its own (configs/train/rllib.yaml, ``--algo rllib_ppo``).
    Each is a row of the algorithm table (train/algos.py) run by the run shell
    (train/shell/run.py)."""
    device: str = "auto"
    """Where the learner trains its network (every algo: ppo_batched, dmc, search_distill's
    fit, maskable_ppo through SB3's own ``device``): ``cpu``, ``cuda`` or ``auto`` (a GPU
    where one exists); the games always run on the CPU, and the learner's random draws are
    made on its device (train/algorithms/ppo_batched/net.py ``generator_on``)."""
    precision: str = "auto"
    """The learner's network arithmetic: ``auto`` (bf16 where the device computes it natively:
    a CPU with AVX512-BF16 or AMX, a GPU that supports it; fp32 elsewhere; the run prints what
    it chose and why, train/algorithms/ppo_batched/precision.py), ``fp32``, or ``bf16`` (torch
    autocast to bfloat16:
    about twice the learner's speed where native; emulated elsewhere, about 4.5x slower than
    fp32, and the run says so)."""
    engine: str = "auto"
    """The engine that plays the training games: ``batched`` (the batched engine), ``scalar``
    (one scalar game at a time) or ``auto`` (batched when it is installed). ppo_batched: its
    VectorEnv (train/games/vector_env.py or the scalar loop). search_distill: the labelling games
    and the teacher's batched version (``search``'s numba kernel, or ``search:net=...``'s
    lock-step rollouts); ``auto`` labels on the scalar engine a teacher that has none
    (``search:net=...`` with ``prior``, ``topk`` or ``infer``)."""
    policy: str = "mlp"
    """ppo_batched's actor: ``mlp`` (an MLP on the observation) or ``action_features`` (a
    heuristic-residual actor over per-action features, started at the heuristic; needs the
    batched engine, see docs/strength.md)."""
    feature_temperature: float = 1.0
    """policy action_features: the actor starts at softmax(heuristic value in points /
    feature_temperature); smaller is closer to the heuristic's own (argmax) play."""
    feature_start: str = "heuristic"
    """policy action_features: where the feature weights start: ``heuristic`` (the
    heuristic's weights, so the untrained actor plays like it) or ``zero`` (no prior: the
    actor learns what each feature is worth from its own games alone)."""

    features: int | None = None
    """policy action_features: how many of the registered per-action features the actor
    reads: one of ``allfives_agents.features.action_features.FEATURE_COUNTS``, the sizes of the
    feature sets
    (each set is the first K features of ``REGISTRY``, in the order they were added; ``allfives
    train --help-config`` and docs/architecture.md list them). null: ``init_from``'s own count,
    or 9 for a new actor. More than ``init_from`` reads widens it, the new weights at 0 (its
    play is unchanged until it trains)."""
    move_head: int = 0
    """policy action_features: hidden units of a per-move MLP head over the torso and each
    move's features, added to the logits with its output weights at 0 (the start's play is
    unchanged); 0: none. A checkpoint's own head is kept whatever this says."""

    # --- the network and PPO -----------------------------------------------------------
    net_arch: list[int] = dataclasses.field(default_factory=lambda: [128, 128])
    """Hidden layer sizes of the actor and of the (separate) critic."""
    activation: str = "relu"
    """Hidden activation: relu or tanh."""
    learning_rate: float = 1e-4
    """Adam step size (constant unless ``anneal_lr``; on the fast path a resumed run takes its
    config's)."""
    anneal_lr: bool = False
    """ppo_batched and dmc: decay the step size linearly from ``learning_rate`` at step 0 to 0
    at ``total_steps`` (CleanRL's ``anneal_lr``; set from the step count before each update,
    so a run resumed with the same ``total_steps`` continues the same line)."""
    n_steps: int = 64
    """Steps per env per rollout; a rollout is n_steps * n_envs decisions."""
    batch_size: int = 512
    """Minibatch size of each gradient step."""
    n_epochs: int = 4
    """Passes over each rollout."""
    gamma: float = 0.995
    """Discount per learner decision (a 2-seat game is about 60 decisions)."""
    # gae_lambda, clip_range, ent_coef, vf_coef: PPO's section (train/ppo_section.py)
    max_grad_norm: float = 0.5
    """Gradient norm clip."""

    # --- imitation warm start -----------------------------------------------------------
    bc_teacher: str | None = "heuristic"
    """Before PPO, imitate this agent (e.g. ``heuristic``); null: start from scratch. Left out
    of a config whose algo has no warm start (all but maskable_ppo), it is null."""
    bc_samples: int = 100_000
    """Teacher decisions collected for the warm start (whole games)."""
    bc_epochs: int = 10
    """Passes over the teacher's decisions (minibatches of 256)."""
    bc_lr: float = 1e-3
    """Adam step size of the warm start."""
    bc_workers: int = 2
    """Processes collecting the warm start's teacher decisions (search_distill's labels:
    ``label_workers``)."""
    bc_data: str | None = None
    """Read the warm-start decisions from this .npz (a run's ``bc_data.npz``) instead of
    collecting them."""

    # --- search distillation (algo search_distill, train/algorithms/search_distill/trainer.py)
    # ------------------------
    distill_teacher: str = "search:sims=256,depth=2"
    """The search whose value of every legal move the actor is fitted to: a ``search`` agent
    id (``search:net=<checkpoint>`` puts a network inside the search)."""
    distill_mix: float = 0.5
    """Share of the moves of the labelling games that are the teacher's best; the others are
    the student's (the actor as the run started)."""
    distill_temperature: float = 1.0
    """The fit's targets: softmax(each legal move's value in points / distill_temperature)."""
    distill_epochs: int = 15
    """Passes of the fit over the labelled positions."""
    distill_shard_games: int = 20
    """Games per label shard (written whole: the most a stop can lose; --resume labels only
    the missing shards)."""
    distill_extra_labels: list[str] = dataclasses.field(default_factory=list)
    """Label folders of earlier search_distill runs of the same game (their
    ``run_dir/labels``, e.g. the previous round of expert iteration) whose positions the fit
    uses too, read only; this run labels ``total_steps`` positions of its own."""
    label_workers: int | None = None
    """Label shards worked on at once: local processes, or Ray tasks with ``address``;
    null: one per core of this machine (with ``address``: one per CPU of the cluster). Shard
    ``i`` is seeded by ``(seed, i)`` alone, so the labels are the same for any number."""
    address: str | None = None
    """Label the shards as Ray tasks on the Ray cluster at this address (``auto``: the one
    ``ray start`` began on this machine, or ``host:port``; needs the ``rllib`` extra; the
    ``--address`` flag); null: local processes. With it, ppo_batched's and dmc's rollouts
    are played by Ray actors there too (``rollout_workers``); the learner, the fit and the
    evaluations run on this machine."""
    rollout_workers: int | str | None = "auto"
    """Workers playing the rollouts of ppo_batched and dmc (local processes, or Ray actors
    with ``address``); ``auto`` (or null): one per core this process may use
    (``os.sched_getaffinity``) for rollouts of 4,096 steps or more (``n_envs * n_steps``;
    smaller ones in this process), with ``address`` one per CPU of the cluster; never more
    than ``rollout_shards``; 1: in this process. The same config gives the same training
    with any number (train/games/rollouts.py): workers only play the shards."""
    rollout_shards: int | str = "auto"
    """The ``n_envs`` games are cut into this many shards (at most ``n_envs``), each seeded
    by ``(seed, shard)`` alone: the unit of determinism, and the most workers a rollout can
    use. ``auto``: one per core of the machine that starts the run (at most 64), fixed there
    and written to the run's ``config.yaml``, so its resumes and its copies on any number of
    workers play the same games. Another value plays other games (so trains another
    network); each shard costs about 1.4 ms of Python per step, so more shards than cores
    only slow a run (the recipes' configs pin 2, and train as they always did)."""

    # --- Deep Monte-Carlo (algo dmc, train/algorithms/dmc/trainer.py)
    # ------------------------------------------
    dmc_epsilon: float = 0.05
    """Share of the learner's moves played uniformly at random among the legal ones (the
    others are the argmax of its action values)."""
    dmc_scale: float = 0.02
    """Return units per unit of logit in the action values: ``Q(s, a) = V(s) + dmc_scale *
    (logit[a] - mean legal logit)`` (a search_distill actor's logits are points; with
    ``margin_reward`` 1 a point is 1 / target of return)."""
    dmc_lambda: float = 1.0
    """The lambda of the lambda-return the action values are regressed on, in [0, 1]: 1 is
    Monte-Carlo (the discounted return to the game's end, bootstrapped from ``V`` only where
    a rollout cuts a game); less mixes in ``V`` of the states that follow, trading the noise
    of later hands for the critic's bias (0: one step, ``r + gamma V(s')``)."""

    # --- reward -------------------------------------------------------------------------
    margin_reward: float = 1.0
    """Dense reward weight: (change in own side's score minus the mean change of the other
    sides' scores) / target, summed over the learner's move and the opponents' replies."""
    win_reward: float = 1.0
    """Terminal reward: +win_reward for a win, -win_reward / (sides - 1) for a loss."""

    # --- opponents ----------------------------------------------------------------------
    opponents: list[dict[str, Any]] = dataclasses.field(default_factory=lambda: [
        {"agent": "heuristic", "weight": 2.0},
        {"agent": "greedy", "weight": 1.0},
        {"agent": "self", "weight": 1.0},
        {"agent": "snapshots", "weight": 2.0},
    ])
    """The opponent pool, sampled per game by weight. ``agent`` is any agent id
    (``greedy``, ``heuristic``, ``ckpt:<path>`` ...), ``self`` (the current policy) or
    ``snapshots`` (a frozen earlier copy of the learner, uniformly among the kept ones;
    the current policy while none exists yet). With teams both opponents share one draw. On
    the batched engine an agent needs a batched version: ``random``, ``greedy``,
    ``heuristic[:weights]``, ``search[:options]`` (without ``net=``) or ``ckpt:<path>``."""
    partner: str = "self"
    """With teams: the learner's partner, ``self`` (the current policy) or an agent id."""
    snapshot_every: int = 50_000
    """Freeze a copy of the learner into the pool every this many steps."""
    snapshot_keep: int = 10
    """Most recent snapshots kept in the pool."""
    keep_snapshots: int = 20
    """Snapshot files kept in ``snapshots/``: the newest this many, and always those the
    pool plays (the newest ``snapshot_keep``); older ones this run wrote are deleted
    (``0``: keep every one)."""

    # --- evaluation and checkpoints --------------------------------------------------------
    eval_every: int = 50_000
    """Evaluate every this many steps (and at the end)."""
    eval_games: int = 200
    """Games per evaluation opponent (duplicate deals: every deal played from each side)."""
    eval_opponents: list[str] = dataclasses.field(default_factory=lambda: ["random", "greedy"])
    """Agent ids to evaluate against; the learner plays greedily (argmax)."""
    best_metric: str = "greedy"
    """The eval opponent whose win rate picks the ``best`` checkpoint."""
    checkpoint_every: int = 50_000
    """Write a checkpoint every this many steps (and at the end)."""

    def __post_init__(self) -> None:
        if self.rollout_shards in ("auto", None):  # the machine that starts the run
            self.rollout_shards = auto_shards()
        validate(self)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def resolved_run_dir(self) -> Path:
        return Path(self.run_dir.format(preset=self.game().rules.preset, players=self.players,
                                        seed=self.seed))


FIELDS: dict[str, dataclasses.Field] = {f.name: f for f in dataclasses.fields(TrainConfig)}


#: Options that were removed (docs/strength.md: they trained no better), each with the value
#: that turned it off and the last commit that has it.
RETIRED: dict[str, tuple[Any, str]] = {"oracle_critic": (False, "2f888d7"),
                                       "belief_aux": (0.0, "2f888d7")}


def retire(values: dict[str, Any], label: str = "config") -> dict[str, Any]:
    """``values`` less the removed options: a saved config (a run's ``config.yaml``, a
    card's) holds them turned off and still loads; set to anything else, a ValueError in one
    line (what it asked for is gone)."""
    out = dict(values)
    for name, (off, commit) in RETIRED.items():
        if name in out and out.pop(name) != off:
            raise ValueError(f"{label} {name}={values[name]!r}: this option was removed (it "
                             f"trained no better, docs/strength.md; the last commit with it is "
                             f"{commit}): remove it from the config")
    return out


def implied_defaults(values: dict[str, Any]) -> dict[str, Any]:
    """Defaults meant for another algo never fail a config that leaves them out: with an
    ``algo`` that has no warm start, ``bc_teacher`` defaults to null; with one that trains only
    the action_features actor, ``policy`` defaults to it; with ``eval_opponents`` set without
    ``greedy``, ``best_metric`` defaults to its first entry. Fields in ``values`` (the user's
    config and flags) are kept as set and checked by :func:`validate`."""
    out: dict[str, Any] = {}
    algo = values.get("algo", "maskable_ppo")
    row = algos.ALGOS.get(algo) if isinstance(algo, str) else None
    if row is not None and not row.warm_start:
        out["bc_teacher"] = None
    if row is not None and row.action_features_only:
        out["policy"] = "action_features"
    evals = values.get("eval_opponents")
    if isinstance(evals, list) and evals and all(isinstance(e, str) for e in evals) \
            and "greedy" not in evals:
        out["best_metric"] = evals[0]
    return out


def _validate_seed(seed: object) -> None:
    """A seed is an integer from 0 to :data:`allfives_env.game.seeding.MAX_SEED` (a huge one is
    named by its number of digits, never converted to text)."""
    from allfives_env.game.seeding import MAX_SEED

    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"config seed={str(seed)[:40]!r}: must be an integer from 0 to "
                         "2**63 - 1")
    if not 0 <= seed <= MAX_SEED:
        shown = str(seed) if seed.bit_length() <= 256 else f"an integer of {seed.bit_length()} bits"
        raise ValueError(f"config seed={shown}: must be an integer from 0 to 2**63 - 1")


def validate(cfg: TrainConfig) -> None:
    """Raise ValueError naming the field, the value and what is allowed."""
    def bad(name: str, allowed: str) -> ValueError:
        return ValueError(f"config {name}={getattr(cfg, name)!r}: {allowed}")

    cfg.game()  # the rules (RulesError, a ValueError, naming the option if bad)
    for name in ("total_steps", "n_envs", "n_steps", "batch_size", "n_epochs", "eval_games",
                 "eval_every", "checkpoint_every", "snapshot_every", "snapshot_keep",
                 "torch_threads", "bc_samples", "bc_epochs", "bc_workers", "distill_epochs",
                 "distill_shard_games"):
        value = getattr(cfg, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise bad(name, "must be an integer >= 1")
    _validate_workers(cfg, bad)
    _validate_seed(cfg.seed)
    if cfg.vec_env not in ("dummy", "subproc"):
        raise bad("vec_env", "must be dummy or subproc")
    if cfg.activation not in ("relu", "tanh"):
        raise bad("activation", "must be relu or tanh")
    if not cfg.net_arch or any(not isinstance(h, int) or h < 1 for h in cfg.net_arch):
        raise bad("net_arch", "must be a non-empty list of positive integers")
    if not 0.0 < cfg.gamma <= 1.0 or not 0.0 <= cfg.gae_lambda <= 1.0:
        raise ValueError(f"config gamma={cfg.gamma}, gae_lambda={cfg.gae_lambda}: "
                         "gamma must be in (0, 1] and gae_lambda in [0, 1]")
    if not cfg.opponents:
        raise bad("opponents", "needs at least one entry")
    for entry in cfg.opponents:
        if not isinstance(entry, dict) or "agent" not in entry:
            raise bad("opponents", "entries look like {agent: greedy, weight: 1.0}")
        extra = set(entry) - {"agent", "weight"}
        weight = entry.get("weight", 1.0)
        if extra or isinstance(weight, bool) or not isinstance(weight, (int, float)) \
                or weight < 0:
            raise bad("opponents", "entries have keys agent and weight (a number >= 0)")
    if sum(float(e.get("weight", 1.0)) for e in cfg.opponents) <= 0:
        raise bad("opponents", "the weights must not all be zero")
    _validate_algo(cfg, bad)
    if cfg.best_metric not in cfg.eval_opponents:
        raise bad("best_metric", f"must be one of eval_opponents {cfg.eval_opponents}")


def _validate_workers(cfg: TrainConfig, bad: Any) -> None:
    """``label_workers`` and ``rollout_workers``: null or an integer >= 1; ``rollout_shards``:
    an integer >= 1; ``address``: null or an address."""
    n = cfg.label_workers
    if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
        raise bad("label_workers", "must be null (one per core) or an integer >= 1")
    r = cfg.rollout_workers
    if r not in (None, "auto") and (isinstance(r, bool) or not isinstance(r, int) or r < 1):
        raise bad("rollout_workers", "must be auto (one per core) or an integer >= 1")
    k = cfg.rollout_shards
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise bad("rollout_shards", "must be auto (one per core) or an integer >= 1")
    a = cfg.address
    if a is not None and (not isinstance(a, str) or not a.strip() or a != a.strip()
                          or any(c.isspace() for c in a)):
        raise bad("address", "must be null (local processes), auto or a Ray cluster's "
                             "host:port")


ALGOS = algos.config_algos()  # its algo names (train/algos.py holds the table)


def _validate_algo(cfg: TrainConfig, bad: Any) -> None:
    """The algo, device and engine fields, and what ppo_batched does not do."""
    if cfg.algo not in algos.config_algos():  # (registered ones too)
        raise bad("algo", f"must be one of {', '.join(algos.config_algos())} (rllib_ppo: its "
                          "own config, configs/train/rllib.yaml)")
    if cfg.device not in ("cpu", "cuda", "auto"):
        raise bad("device", "must be cpu, cuda or auto")
    if cfg.engine not in ("auto", "batched", "scalar"):
        raise bad("engine", "must be auto, batched or scalar")
    if cfg.policy not in ("mlp", "action_features"):
        raise bad("policy", "must be mlp or action_features")
    require_number(cfg, bad, "feature_temperature", unit=False)
    if cfg.feature_start not in ("heuristic", "zero"):
        raise bad("feature_start", "must be heuristic or zero")
    if isinstance(cfg.move_head, bool) or not isinstance(cfg.move_head, int) \
            or cfg.move_head < 0:
        raise bad("move_head", "must be an integer >= 0 (0: no per-move head)")
    if cfg.move_head and cfg.policy != "action_features":
        raise bad("move_head", "is for policy action_features")
    if cfg.features is not None and (isinstance(cfg.features, bool) or cfg.features not in
                                     FEATURE_COUNTS or cfg.policy != "action_features"):
        counts = ", ".join(map(str, FEATURE_COUNTS))
        raise bad("features", f"must be null or one of {counts}, with policy action_features")
    if cfg.policy == "action_features" and (cfg.algo == "maskable_ppo" or (
            cfg.algo == "ppo_batched" and cfg.engine == "scalar")):
        raise bad("policy", "action_features needs algo ppo_batched on the batched engine, "
                            "or algo search_distill")
    if cfg.precision not in ("auto", "fp32", "bf16"):
        raise bad("precision", "must be fp32 or bf16, or auto (bf16 only where the device "
                               "computes it natively)")
    if cfg.anneal_lr and cfg.algo not in ("ppo_batched", "dmc"):
        raise bad("anneal_lr", "is for algo ppo_batched and dmc (set it to false)")
    algos.validate(cfg, bad)  # the algo's own checks (train/algos.py names them)


def ignored_note(cfg: TrainConfig) -> str | None:
    """One line naming the fields that ``cfg`` sets (to other than their default) and that its
    algo does not read (train/algos.py :func:`~allfives_train.algos.ignored`); None: none."""
    defaults = {name: f.default_factory() if callable(f.default_factory) else f.default
                for name, f in FIELDS.items()}
    defaults.update(implied_defaults({"algo": cfg.algo}), rollout_shards=auto_shards())
    unread = algos.ignored_set(cfg, defaults)
    if not unread:
        return None
    return (f"allfives train: note: algo {cfg.algo} does not read {', '.join(unread)} (other "
            f"algos' settings, train/algos.py): they have no effect on this run")


def load_config(path: str | Path | None = None, overrides: dict[str, Any] | None = None,
                game_args: Any = None, label: str = "config") -> TrainConfig:
    """The defaults, updated by the YAML file at ``path``, then by ``overrides``, then by the
    game flags of ``game_args`` (an argparse namespace), checked once as a whole: the removed
    options dropped (:func:`retire`), then unknown fields refused, the defaults implied by
    the fields set added (:func:`implied_defaults`), each value type-checked, and the
    whole validated (:func:`validate`). ``label`` starts each error (a recipe names its
    stage)."""
    values = retire(gather_values(TrainConfig, path, overrides, label, game_args), label)
    check_known(TrainConfig, values, label)
    values = {**implied_defaults(values), **values}
    return TrainConfig(**coerce_values(TrainConfig, values, label))


def make_rules_for(cfg: TrainConfig) -> Rules:
    """The rules of ``cfg``'s game (its preset, rules file, seats and overrides)."""
    return cfg.game().rules


def field_help(name: str) -> str:
    """The docstring of a field (parsed from this module's source)."""
    return _FIELD_DOCS.get(name, "")


_FIELD_DOCS = field_docs(TrainConfig)
