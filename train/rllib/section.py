"""algo rllib_ppo's own config section (``rllib:`` in a config), its defaults and its checks.

The RLlib backend reads ``TrainConfig`` like every other algo: the shared fields (the game,
``seed``, ``run_dir``, ``net_arch``, ``activation``, ``learning_rate``, ``gamma``,
``torch_threads``, ``address``, ``init_from``, ``margin_reward``, ``win_reward``), PPO's
section, the pool's ``opponents`` and the actor's ``features`` and ``feature_temperature``;
what is its own is here. Fields whose old flat names mean something else in ``TrainConfig``
(``policy``, ``engine``, ``snapshot_every`` ...) are ``rllib_<name>`` (:data:`OLD_NAMES`);
the others keep their names (``--iterations``, ``--num-env-runners``). No Ray here.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from allfives_train.sections import ACTOR, POOL, Section, positive_ints, section_of

POLICIES = ("shared", "per_seat", "per_side", "selfplay")
REWARDS = ("win", "points", "shaped")
ENGINES = ("scalar", "batched")
EPISODES = ("game", "hand")


@dataclasses.dataclass
class RLlibSection:
    """Multi-agent PPO on RLlib's new API stack: the env, who plays which seat, the warm
    start, the iterations and Ray's resources (docs/training.md, the RLlib backend)."""

    engine: str = "scalar"
    """``scalar``: the multi-agent envs (the AEC env, or the table env with a pool), one game
    per env, a plain masked MLP module (``net_arch``). ``batched``: the fast path's method on
    RLlib: each env runner steps ``num_envs_per_env_runner`` games of the batched engine (the
    learner's seat against ``opponents``; needs numba) and the module is the action_features
    actor (``actor.features``, or an ``actor.action_view``'s rows from zero weights), started
    at the heuristic's weights (``actor.feature_start``) or at ``init_from``
    (train/rllib/batched.py); its checkpoints also play as ``ckpt:<checkpoint>``."""
    policy: str = "shared"
    """Which module plays which seat: ``shared``: one module ``main`` plays and learns every
    seat. ``per_seat``: one module per seat (``seat_0`` ...). ``per_side``: one per side
    (``side_0`` ...; partners share one). ``selfplay``: ``main`` plays one side and learns;
    the other sides are played by a frozen snapshot of ``main`` (``snap_<k>``), drawn
    uniformly per game from the kept ones. With ``pool.opponents`` set: shared only."""
    reward: str = "win"
    """``win`` (+1 / -1 at the end) or ``points`` (score margin): the env's reward option;
    ``shaped``: ``margin_reward`` times the score margin gained plus ``win_reward`` at the
    end, as the other algos' reward (the table env, ``train/rllib/table.py``)."""
    episode: str = "game"
    """The env's episode option: ``game`` (a whole game) or ``hand`` (one hand)."""
    snapshot_every: int = 10
    """selfplay, or ``snapshots`` in the pool: freeze a copy of ``main`` every this many
    iterations."""
    snapshot_keep: int = 5
    """selfplay, or ``snapshots`` in the pool: most recent snapshots kept."""
    bc_teacher: str | None = None
    """Before PPO, every trained module imitates this agent (e.g. ``heuristic``); null:
    none (engine batched: null, its actor starts at the heuristic)."""
    bc_samples: int = 100_000
    """Teacher decisions collected for the warm start (whole games)."""
    bc_epochs: int = 10
    """Passes over the teacher's decisions (minibatches of 256)."""
    bc_lr: float = 1e-3
    """Adam step size of the warm start."""
    bc_workers: int = 2
    """Processes collecting the teacher's decisions."""
    iterations: int = 100
    """rllib_ppo's budget: training iterations (RLlib's ``algo.train()`` calls)."""
    time_limit: float = 0.0
    """Stop after the iteration that ends past this many seconds from the start of training
    (the warm start included; 0: no limit); ``final/`` is that iteration."""
    checkpoint_every: int = 10
    """Write a checkpoint every this many iterations (and at the end)."""
    num_cpus: int = 2
    """CPUs a local Ray instance may use (ignored when joining a cluster with ``address``)."""
    num_env_runners: int = 0
    """Remote env-runner actors (0: sample in the driver; raise it on a cluster)."""
    num_envs_per_env_runner: int = 1
    """Games each env runner steps side by side."""
    env_runner_resources: dict[str, float] = dataclasses.field(default_factory=dict)
    """Custom Ray resources each env runner asks for, e.g. ``{worker_node: 0.1}`` to place
    the runners on the nodes started with ``ray start --resources '{"worker_node": 1}'``."""
    num_learners: int = 0
    """Remote learner actors (0: learn in the driver)."""
    train_batch_size: int = 4000
    """Agent steps per iteration per learner."""
    minibatch_size: int = 500
    """Minibatch size of each gradient step."""
    num_epochs: int = 4
    """Passes over each iteration's batch."""


#: The fields whose flat names clash with ``TrainConfig``'s take ``rllib_``; these keep theirs.
KEPT = ("reward", "episode", "iterations", "time_limit", "num_cpus", "num_env_runners",
        "num_envs_per_env_runner", "env_runner_resources", "num_learners", "train_batch_size",
        "minibatch_size", "num_epochs")
RLLIB = Section("rllib", RLlibSection, "Ray RLlib: env, seats, warm start, iterations, Ray",
                prefix="rllib_", renamed=tuple((name, name) for name in KEPT))

#: The flat names the RLlib backend's own config took (``RLlibConfig``, before issue 63) that
#: now mean another field: with algo rllib_ppo they are read as the new one, with a note.
OLD_NAMES = tuple((name, RLLIB.flat(name)) for name in (
    "policy", "engine", "snapshot_every", "snapshot_keep", "checkpoint_every", "bc_teacher",
    "bc_samples", "bc_epochs", "bc_lr", "bc_workers"))

#: Shared fields (and fields of the sections it names) that rllib_ppo does not read.
IGNORES = ("total_steps", "n_envs", "n_steps", "batch_size", "n_epochs", "max_grad_norm",
           "checkpoint_every", "progress", "device", "precision", "engine", "partner",
           "snapshot_every", "snapshot_keep", "keep_snapshots", "move_head")


def defaults() -> dict[str, Any]:
    """The flat fields whose default differs with algo rllib_ppo (those of its own config
    before issue 63): the run folder, the network, the step size, the entropy bonus, an
    empty pool (``main`` plays every seat) and the action_features actor's start."""
    return {"run_dir": "runs/rllib_{policy}_{preset}_{players}p", "net_arch": [256, 256],
            "learning_rate": 3e-4, "ent_coef": 0.01, "opponents": [],
            "policy": "action_features", "features": 17, "feature_temperature": 0.25}


def require_ray() -> None:
    """A one-line install hint (a ValueError), not a traceback, without the ``rllib``
    extra."""
    from allfives_agents.trained.rllib_agent import need_ray

    need_ray("algo rllib_ppo")


def uses_table(cfg: Any) -> bool:
    """Whether the run uses the table env (shaped reward or an opponent pool)."""
    return section_of(cfg, RLLIB).reward == "shaped" or bool(section_of(cfg, POOL).opponents)


def uses_snapshots(cfg: Any) -> bool:
    """selfplay, or a shared module with ``snapshots`` in its opponent pool."""
    return section_of(cfg, RLLIB).policy == "selfplay" or any(
        e["agent"] == "snapshots" for e in section_of(cfg, POOL).opponents)


def env_config(cfg: Any) -> dict[str, Any]:
    """The scalar env creator's config: :func:`allfives_env.env`'s keyword arguments, or the
    table env's (:mod:`allfives_train.rllib.table`)."""
    own = section_of(cfg, RLLIB)
    rules = cfg.game().rules
    if uses_table(cfg):
        shaped = own.reward == "shaped"
        return {"preset": rules.preset, "opponents": list(section_of(cfg, POOL).opponents),
                "margin_reward": cfg.margin_reward if shaped else float(own.reward == "points"),
                "win_reward": cfg.win_reward if shaped else float(own.reward == "win"),
                **rules.to_dict()}
    return {"preset": rules.preset, "reward": own.reward, "episode": own.episode,
            **rules.to_dict()}


def check(cfg: Any, bad: Any) -> None:
    """rllib_ppo's checks after the shared ones: its choices, counts, pool and engine."""
    own = section_of(cfg, RLLIB)
    if own.engine != "batched" and section_of(cfg, ACTOR).action_view is not None:
        raise bad("action_view", "is for rllib.engine batched (the scalar engine's module is "
                                 "RLlib's masked MLP over the observation)")
    for name, allowed in (("policy", POLICIES), ("reward", REWARDS), ("episode", EPISODES),
                          ("engine", ENGINES)):
        if getattr(own, name) not in allowed:
            raise bad(RLLIB.flat(name), f"must be one of {', '.join(allowed)}")
    positive_ints(bad, {RLLIB.flat(name): getattr(own, name) for name in (
        "iterations", "snapshot_every", "bc_samples", "bc_epochs", "bc_workers", "snapshot_keep",
        "checkpoint_every", "num_cpus", "num_envs_per_env_runner", "train_batch_size",
        "minibatch_size", "num_epochs")})
    for name in ("num_env_runners", "num_learners"):
        value = getattr(own, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise bad(name, "must be an integer >= 0")
    if own.minibatch_size > own.train_batch_size:
        raise bad("minibatch_size", f"must be at most train_batch_size={own.train_batch_size}")
    if section_of(cfg, ACTOR).policy != "action_features":
        raise bad("policy", "algo rllib_ppo's network is rllib.engine's (batched: the "
                            "action_features actor; scalar: RLlib's masked MLP of net_arch): "
                            "leave policy unset")
    _check_table(cfg, own, bad)
    _check_batched(cfg, own, bad)


def _check_table(cfg: Any, own: RLlibSection, bad: Any) -> None:
    """The pool against the seats' mapping, the episode, the time limit, the resources, and
    that every agent named (the pool's, the teacher) exists."""
    opponents = section_of(cfg, POOL).opponents
    if opponents and own.policy != "shared":
        raise bad("opponents", f"needs rllib.policy shared (it is {own.policy}); train "
                  f"{own.policy} without a pool (opponents: [] in the config)")
    if uses_table(cfg) and own.episode != "game":
        raise bad("episode", "must be game with reward shaped or an opponent pool")
    if isinstance(own.time_limit, bool) or own.time_limit < 0:
        raise bad("time_limit", "must be a number of seconds >= 0")
    if any(not isinstance(v, (int, float)) or isinstance(v, bool) or v < 0
           for v in own.env_runner_resources.values()):
        raise bad("env_runner_resources", "maps resource names to amounts >= 0")
    from allfives_agents.base import make_agent

    for agent in [str(e["agent"]) for e in opponents] + [own.bc_teacher]:
        if agent is not None and agent not in ("self", "snapshots", "None"):
            make_agent(agent)  # ValueError naming the known agents


def _check_batched(cfg: Any, own: RLlibSection, bad: Any) -> None:
    """engine batched: one learning seat (policy shared) against a pool, no imitation, the
    shaped reward, ``init_from`` (when set) an action_features checkpoint of this table that
    reads what ``actor.action_view`` says; engine scalar takes no ``init_from``."""
    if own.engine != "batched":
        if cfg.init_from:
            raise bad("init_from", "is for rllib.engine batched (the scalar engine's modules "
                                   "start at random or at rllib.bc_teacher's imitation)")
        return
    from allfives_train.algo_checks import check_actor_init_from

    check_actor_init_from(cfg, bad, "rllib_ppo")
    actor = section_of(cfg, ACTOR)
    if actor.features is None and actor.action_view is None:
        raise bad("features", "engine batched: the number of features its actor reads (e.g. "
                              "17), not null, or an action_view")
    if own.policy != "shared" or not section_of(cfg, POOL).opponents:
        raise bad("rllib_policy", "engine batched trains one learner seat against an opponent "
                  "pool: rllib.policy shared with opponents (e.g. heuristic@2 self@1 "
                  "snapshots@1)")
    if own.bc_teacher is not None:
        raise bad("rllib_bc_teacher", "engine batched starts at the heuristic's weights (or "
                  "init_from): set rllib.bc_teacher null")
    if own.reward != "shaped":
        raise bad("reward", "engine batched pays the shaped reward (margin_reward, "
                  "win_reward): set reward shaped")

