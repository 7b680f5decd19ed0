"""The RLlib training configuration: one dataclass, one docstring per field.

A run is configured by a YAML file (``configs/train/rllib.yaml`` by default: the batched engine
and the per-action-feature actor; ``rllib_table.yaml``: the multi-agent table env; any subset of the
fields below) and command-line overrides (``--iterations 50``). Loading checks every value
and names what is allowed.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from allfives_env.inputs.shipped import shipped_dir
from allfives_train.configio import GameFields, load_dataclass
from allfives_train.ppo_section import PPOSection

DEFAULT_CONFIG = shipped_dir("configs") / "train" / "rllib.yaml"  # engine batched
#: The multi-agent table env (every seat a policy: shared, per_seat, per_side, selfplay).
TABLE_CONFIG = DEFAULT_CONFIG.parent / "rllib_table.yaml"
ALGO = "rllib_ppo"  # this backend's row of the algorithm table (train/algos.py)
POLICIES = ("shared", "per_seat", "per_side", "selfplay")
REWARDS = ("win", "points", "shaped")
ENGINES = ("scalar", "batched")
EPISODES = ("game", "hand")


@dataclasses.dataclass
class RLlibConfig(PPOSection, GameFields):
    """Multi-agent PPO on RLlib's new API stack. See docs/training.md (the RLlib backend)."""

    # --- the game: preset, players, teams, rules_file, rules (train/configio.py) ----------
    reward: str = "win"
    """``win`` (+1 / -1 at the end) or ``points`` (score margin): the env's reward option;
    ``shaped``: the SB3 trainer's reward, ``margin_reward`` times the score margin gained
    plus ``win_reward`` at the end (the table env, ``train/rllib/table.py``)."""
    margin_reward: float = 1.0
    """shaped: weight of (change in own side's score minus the mean change of the other
    sides' scores) / target, paid with the agent's next decision."""
    win_reward: float = 1.0
    """shaped: +win_reward for a win, -win_reward / (sides - 1) for a loss."""
    episode: str = "game"
    """The env's episode option: ``game`` (a whole game) or ``hand`` (one hand)."""

    # --- the engine and the network ----------------------------------------------------
    engine: str = "scalar"
    """``scalar``: the multi-agent envs (the AEC env, or the table env with a pool), one game
    per env, a plain masked MLP module. ``batched``: the fast path's method on RLlib: each env
    runner steps ``num_envs_per_env_runner`` games of the batched engine (the learner's seat
    against ``opponents``; needs numba) and the module is the per-action-feature actor,
    started at the heuristic's weights or at ``init_from`` (train/rllib/batched.py); its
    checkpoints also play as ``ckpt:<checkpoint>``."""
    features: int = 17
    """engine batched: how many of the registered per-action features the actor reads."""
    init_from: str | None = None
    """engine batched: start the actor from this checkpoint's (a ``ckpt:`` name or folder);
    null: from the heuristic's weights."""
    feature_temperature: float = 0.25
    """engine batched, no init_from: the actor starts at softmax(heuristic value in points /
    feature_temperature)."""

    # --- who plays which seat ---------------------------------------------------------
    policy: str = "shared"
    """``shared``: one module ``main`` plays and learns every seat. ``per_seat``: one module per
    seat (``seat_0`` ...). ``per_side``: one per side (``side_0`` ...; partners share one).
    ``selfplay``: ``main`` plays one side and learns; the other sides are played by a frozen
    snapshot of ``main`` (``snap_<k>``), drawn uniformly per game from the kept ones."""
    opponents: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    """policy shared only: the pool that plays the other sides, one draw per game (as the SB3
    trainer's): agent ids (``greedy``, ``heuristic``, ``ckpt:<path>`` ...) play inside the
    env, ``self`` is ``main`` (it learns those seats too), ``snapshots`` a frozen snapshot
    of ``main``. Empty: ``main`` plays every seat. Uses the table env (episode game)."""
    snapshot_every: int = 10
    """selfplay: freeze a copy of ``main`` into the pool every this many iterations."""
    snapshot_keep: int = 5
    """selfplay: most recent snapshots kept in the pool."""

    # --- imitation warm start -----------------------------------------------------------
    bc_teacher: str | None = None
    """Before PPO, every trained module imitates this agent (e.g. ``heuristic``); null: none."""
    bc_samples: int = 100_000
    """Teacher decisions collected for the warm start (whole games)."""
    bc_epochs: int = 10
    """Passes over the teacher's decisions (minibatches of 256)."""
    bc_lr: float = 1e-3
    """Adam step size of the warm start."""
    bc_workers: int = 2
    """Processes collecting the teacher's decisions."""

    # --- the run ----------------------------------------------------------------------
    algo: str = "rllib_ppo"
    """The algorithm table's row of this backend (train/algos.py): always ``rllib_ppo``
    (``allfives train --algo rllib_ppo``; the old ``--backend rllib`` names it too)."""
    address: str | None = None
    """Join the Ray cluster at this address (``auto``: the one started on this machine with
    ``ray start``; the ``--address`` flag); null: start a local Ray instance."""
    iterations: int = 100
    """Training iterations (``algo.train()`` calls)."""
    time_limit: float = 0.0
    """Stop after the iteration that ends past this many seconds from the start of training
    (the warm start included; 0: no limit); ``final/`` is that iteration."""
    seed: int = 0
    """Seeds RLlib (env runners, network initialisation)."""
    run_dir: str = "runs/rllib_{policy}_{preset}_{players}p"
    """Where checkpoints and progress.csv go ({policy}, {preset}, {players}, {seed} filled)."""
    checkpoint_every: int = 10
    """Write a checkpoint every this many iterations (and at the end)."""
    num_cpus: int = 2
    """CPUs a local Ray instance may use (ignored when joining a cluster with --address)."""
    num_env_runners: int = 0
    """Remote env-runner actors (0: sample in the driver; raise it on a cluster)."""
    num_envs_per_env_runner: int = 1
    """Games each env runner steps side by side."""
    env_runner_resources: dict[str, float] = dataclasses.field(default_factory=dict)
    """Custom Ray resources each env runner asks for, e.g. ``{worker_node: 0.1}`` to place
    the runners on the nodes started with ``ray start --resources '{"worker_node": 1}'``."""
    num_learners: int = 0
    """Remote learner actors (0: learn in the driver)."""
    torch_threads: int = 1
    """torch threads in the driver."""

    # --- the network and PPO -----------------------------------------------------------
    net_arch: list[int] = dataclasses.field(default_factory=lambda: [256, 256])
    """Hidden layer sizes (RLlib's ``fcnet_hiddens``; policy and value nets are separate)."""
    activation: str = "relu"
    """Hidden activation: relu or tanh."""
    learning_rate: float = 3e-4
    """Adam step size."""
    train_batch_size: int = 4000
    """Agent steps per iteration per learner."""
    minibatch_size: int = 500
    """Minibatch size of each gradient step."""
    num_epochs: int = 4
    """Passes over each iteration's batch."""
    gamma: float = 0.995
    """Discount per agent step."""
    # gae_lambda, clip_range, vf_coef: PPO's section (train/ppo_section.py), as allfives
    # train's; only the entropy bonus's default differs
    ent_coef: float = 0.01
    """Entropy bonus."""

    def __post_init__(self) -> None:
        validate(self)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def resolved_run_dir(self) -> Path:
        return Path(self.run_dir.format(policy=self.policy, preset=self.game().rules.preset,
                                        players=self.players, seed=self.seed))

    def rule_options(self) -> dict[str, Any]:
        """The resolved rule options (plain values) of :meth:`game`, for env creators."""
        return self.game().rules.to_dict()

    def uses_table(self) -> bool:
        """Whether the run uses the table env (shaped reward or an opponent pool)."""
        return self.reward == "shaped" or bool(self.opponents)

    def env_config(self) -> dict[str, Any]:
        """The env creator's config: :func:`allfives_env.env`'s keyword arguments, or the
        table env's (:mod:`allfives_train.rllib.table`)."""
        preset = self.game().rules.preset
        if self.uses_table():
            shaped = self.reward == "shaped"
            return {"preset": preset, "opponents": list(self.opponents),
                    "margin_reward": self.margin_reward if shaped else
                    float(self.reward == "points"),
                    "win_reward": self.win_reward if shaped else float(self.reward == "win"),
                    **self.rule_options()}
        return {"preset": preset, "reward": self.reward, "episode": self.episode,
                **self.rule_options()}


FIELDS: dict[str, dataclasses.Field] = {f.name: f for f in dataclasses.fields(RLlibConfig)}


def validate(cfg: RLlibConfig) -> None:
    """Raise ValueError naming the field, the value and what is allowed."""
    def bad(name: str, allowed: str) -> ValueError:
        return ValueError(f"rllib config {name}={getattr(cfg, name)!r}: {allowed}")

    cfg.game()  # the rules (RulesError, a ValueError, naming the option if bad)
    if cfg.algo != ALGO:
        raise bad("algo", "must be rllib_ppo (the RLlib backend's config; the other algos "
                          "are configs of allfives train without --backend rllib)")
    for name, allowed in (("policy", POLICIES), ("reward", REWARDS), ("episode", EPISODES),
                          ("activation", ("relu", "tanh"))):
        if getattr(cfg, name) not in allowed:
            raise bad(name, f"must be one of {', '.join(allowed)}")
    for name in ("iterations", "snapshot_every", "bc_samples", "bc_epochs", "bc_workers",
                 "snapshot_keep", "checkpoint_every",
                 "num_cpus", "num_envs_per_env_runner", "train_batch_size", "minibatch_size",
                 "num_epochs", "torch_threads"):
        value = getattr(cfg, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise bad(name, "must be an integer >= 1")
    for name in ("num_env_runners", "num_learners"):
        value = getattr(cfg, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise bad(name, "must be an integer >= 0")
    if cfg.minibatch_size > cfg.train_batch_size:
        raise bad("minibatch_size", f"must be at most train_batch_size={cfg.train_batch_size}")
    if not cfg.net_arch or any(isinstance(h, bool) or not isinstance(h, int) or h < 1
                               for h in cfg.net_arch):
        raise bad("net_arch", "must be a non-empty list of positive integers")
    if not 0.0 < cfg.gamma <= 1.0 or not 0.0 <= cfg.gae_lambda <= 1.0:
        raise ValueError(f"rllib config gamma={cfg.gamma}, gae_lambda={cfg.gae_lambda}: "
                         "gamma must be in (0, 1] and gae_lambda in [0, 1]")
    validate_table(cfg)
    validate_batched(cfg)


def validate_batched(cfg: RLlibConfig) -> None:
    """engine batched: one learning seat (policy shared), a pool, no imitation."""
    def bad(name: str, allowed: str) -> ValueError:
        return ValueError(f"rllib config {name}={getattr(cfg, name)!r}: {allowed}")

    if cfg.engine not in ENGINES:
        raise bad("engine", f"must be one of {', '.join(ENGINES)}")
    if cfg.engine != "batched":
        return
    if isinstance(cfg.feature_temperature, bool) or \
            not isinstance(cfg.feature_temperature, (int, float)) or cfg.feature_temperature <= 0:
        raise bad("feature_temperature", "must be a number > 0")
    from allfives_agents.features.action_features import FEATURES

    if isinstance(cfg.features, bool) or not isinstance(cfg.features, int) or \
            not 1 <= cfg.features <= len(FEATURES):
        raise bad("features", f"must be an integer in 1..{len(FEATURES)}")
    if cfg.policy != "shared" or not cfg.opponents:
        raise bad("policy", "engine batched trains one learner seat against an opponent pool: "
                  "policy shared with opponents (e.g. heuristic@2 self@1 snapshots@1)")
    if cfg.bc_teacher is not None:
        raise bad("bc_teacher", "engine batched starts at the heuristic's weights (or "
                  "init_from): set bc_teacher null")
    if cfg.reward != "shaped":
        raise bad("reward", "engine batched pays the shaped reward (margin_reward, "
                  "win_reward): set reward shaped")


def validate_table(cfg: RLlibConfig) -> None:
    """The table env's fields: the opponent pool, the episode, the time limit, resources."""
    def bad(name: str, allowed: str) -> ValueError:
        return ValueError(f"rllib config {name}={getattr(cfg, name)!r}: {allowed}")

    for entry in cfg.opponents:
        weight = entry.get("weight", 1.0) if isinstance(entry, dict) else None
        if not isinstance(entry, dict) or set(entry) - {"agent", "weight"} or \
                "agent" not in entry or isinstance(weight, bool) or \
                not isinstance(weight, (int, float)) or weight < 0:
            raise bad("opponents", "entries look like {agent: greedy, weight: 1.0}")
    if cfg.opponents and sum(float(e.get("weight", 1.0)) for e in cfg.opponents) <= 0:
        raise bad("opponents", "the weights must not all be zero")
    if cfg.opponents and cfg.policy != "shared":
        raise bad("opponents", f"needs policy shared (policy is {cfg.policy}); train "
                  f"{cfg.policy} without a pool (opponents: [] in the config)")
    if cfg.uses_table() and cfg.episode != "game":
        raise bad("episode", "must be game with reward shaped or an opponent pool")
    if isinstance(cfg.time_limit, bool) or cfg.time_limit < 0:
        raise bad("time_limit", "must be a number of seconds >= 0")
    if any(not isinstance(v, (int, float)) or isinstance(v, bool) or v < 0
           for v in cfg.env_runner_resources.values()):
        raise bad("env_runner_resources", "maps resource names to amounts >= 0")
    from allfives_agents.base import make_agent

    for agent in [str(e["agent"]) for e in cfg.opponents] + [cfg.bc_teacher]:
        if agent is not None and agent not in ("self", "snapshots", "None"):
            make_agent(agent)  # ValueError naming the known agents


def load_config(path: str | Path | None = None, overrides: dict[str, Any] | None = None,
                game_args: Any = None) -> RLlibConfig:
    """The defaults, updated by the YAML file at ``path``, then by ``overrides``, then by the
    game flags of ``game_args`` (an argparse namespace), checked once as a whole."""
    return load_dataclass(RLlibConfig, path, overrides, "rllib config", game_args)

