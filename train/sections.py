"""Config sections: the fields of ``allfives train`` grouped by the concern that reads them.

A :class:`Section` is a dataclass (a docstring per field) under a key of its own in a YAML
config, named by the algorithms that read it in the algorithm table (train/algos.py)::

    algo: dmc
    dmc:
      epsilon: 0.05
    pool:
      opponents: [{agent: heuristic, weight: 1.0}]

Each field also has a flat name, the name of its flag: ``--dmc-epsilon``, ``--opponents``
(:meth:`Section.flat`); a config may spell a field either way (the files written before the
sections, a recipe's stage, ``--set``-free overrides), never both in one mapping.

This module declares the sections that several algorithms read (the opponent pool, the
evaluations, the ``action_features`` actor, the fast path's rollouts); PPO's is in
train/ppo_section.py (the RLlib backend reuses it) and each algorithm's own section is in its
room (``train/algorithms/<name>/section.py``).
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any, Generic, TypeVar

T = TypeVar("T")

MAX_AUTO_SHARDS = 64  # rollout_shards: auto takes one per core, at most this many


@dataclasses.dataclass(frozen=True, eq=False)
class Section(Generic[T]):
    """One config section: its YAML key, its dataclass and its fields' flat names."""

    key: str
    """The YAML key (``dmc:``) and the name ``TrainConfig.section`` files it under."""
    cls: type[T]
    """The dataclass of its fields (each with a default and a docstring)."""
    summary: str
    """What it configures, in a few words (``--help-config``, docs/training.md)."""
    prefix: str = ""
    """A field's flat name (its flag, ``--dmc-epsilon``) is ``prefix + field``..."""
    renamed: tuple[tuple[str, str], ...] = ()
    """...except these ``(field, flat name)`` pairs."""

    def flat(self, field: str) -> str:
        """The flat name (and flag) of ``field``."""
        return dict(self.renamed).get(field, self.prefix + field)

    def fields(self) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(self.cls))  # type: ignore[arg-type]

    def dotted(self, field: str) -> str:
        """How the docs and the errors name ``field``: ``dmc.epsilon``."""
        return f"{self.key}.{field}"


def flatten(values: dict[str, Any], sections: dict[str, Section[Any]],
            label: str = "config") -> dict[str, Any]:
    """One mapping (a file's, or overrides) with each section's fields by their flat names:
    ``{dmc: {epsilon: 0.1}}`` is ``{dmc_epsilon: 0.1}``. A ValueError where a section is not a
    mapping or a field is set twice (nested and flat); an unknown field in a section keeps
    its dotted name (refused by the config's loader, with the closest names)."""
    out: dict[str, Any] = {}

    def put(name: str, value: Any, spelled: str) -> None:
        if name in out:
            raise ValueError(f"{label} sets {name} twice (as {name} and as {spelled}): keep one")
        out[name] = value

    for key, value in values.items():
        section = sections.get(key) if isinstance(key, str) else None
        if section is None:
            put(key, value, key)
            continue
        if not isinstance(value, dict):
            raise ValueError(f"{label} {key}: a section is a mapping of field: value, its "
                             f"fields {', '.join(section.fields())}")
        for name, inner in value.items():
            known = isinstance(name, str) and name in section.fields()
            put(section.flat(name) if known else f"{key}.{name}", inner, f"{key}.{name}")
    return out


def section_of(cfg: Any, section: Section[Any]) -> Any:
    """``cfg``'s values of ``section`` (read as data: a check never calls back into the
    config module that runs it)."""
    return cfg.sections[section.key]


def positive_ints(bad: Any, values: dict[str, Any]) -> None:
    """Each of ``values`` (by flat name) is an integer >= 1."""
    for name, value in values.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise bad(name, "must be an integer >= 1")


def require_number(bad: Any, name: str, value: Any, unit: bool) -> None:
    """``value`` of field ``name`` is a number (not a bool): in [0, 1] when ``unit``, else
    > 0."""
    ok = not isinstance(value, bool) and isinstance(value, (int, float))
    if unit and not (ok and 0 <= value <= 1):
        raise bad(name, "must be a number in [0, 1]")
    if not unit and not (ok and value > 0):
        raise bad(name, "must be a number > 0")


def auto_shards() -> int:
    """``rollout_shards: auto``: one shard per core this process may use, at most 64."""
    cores = (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
             else os.cpu_count() or 1)
    return max(1, min(MAX_AUTO_SHARDS, cores))


@dataclasses.dataclass
class PoolSection:
    """The opponents the learner plays while it trains."""

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


@dataclasses.dataclass
class EvaluationSection:
    """The evaluations during a run, and the ``best`` checkpoint they pick."""

    every: int = 50_000
    """Evaluate every this many steps (and at the end)."""
    games: int = 200
    """Games per evaluation opponent (duplicate deals: every deal played from each side)."""
    opponents: list[str] = dataclasses.field(default_factory=lambda: ["random", "greedy"])
    """Agent ids to evaluate against; the learner plays greedily (argmax)."""
    best_metric: str = "greedy"
    """The eval opponent whose win rate picks the ``best`` checkpoint."""


@dataclasses.dataclass
class ActorSection:
    """The network that plays: an MLP on the observation or the ``action_features`` actor."""

    policy: str = "mlp"
    """ppo_batched's and dmc's actor: ``mlp`` (an MLP on the observation) or
    ``action_features`` (a heuristic-residual actor over per-action features, the registered
    ones or an ``action_view``'s, started at the heuristic or at zero; needs the batched
    engine, see docs/strength.md). search_distill trains ``action_features`` alone; it is
    dmc's default too."""
    feature_temperature: float = 1.0
    """policy action_features: the actor starts at softmax(heuristic value in points /
    feature_temperature); smaller is closer to the heuristic's own (argmax) play."""
    feature_start: str = "heuristic"
    """policy action_features: where the feature weights start: ``heuristic`` (the
    heuristic's weights, so the untrained actor plays like it) or ``zero`` (no prior: the
    actor learns what each feature is worth from its own games alone)."""
    features: int | None = None
    """policy action_features: how many of the registered per-action features the actor
    reads: one of ``allfives_agents.features.action_features.FEATURE_COUNTS``, the sizes of
    the feature sets (each set is the first K features of ``REGISTRY``, in the order they
    were added; ``allfives train --help-config`` and docs/architecture.md list them). null:
    ``init_from``'s own count, or 9 for a new actor. More than ``init_from`` reads widens it,
    the new weights at 0 (its play is unchanged until it trains)."""
    move_head: int = 0
    """policy action_features: hidden units of a per-move MLP head over the torso and each
    move's features, added to the logits with its output weights at 0 (the start's play is
    unchanged); 0: none. A checkpoint's own head is kept whatever this says."""
    action_view: str | None = None
    """policy action_features: read the rows of this action view of the env
    (``facts``: what each move does by the rules, allfives_env/envs/action_views.py) as the
    per-action features, in place of the registered ones (``features``); its checkpoints
    are of kind ``action_view/<view>``. The heuristic's weights are over the registered
    features, so with ``facts`` the actor starts at ``feature_start: zero``. null: the
    registered features."""


@dataclasses.dataclass
class FastSection:
    """The fast path's loop (train/algorithms/ppo_batched/loop.py): its rollouts and its
    step-size schedule."""

    rollout_workers: int | str | None = "auto"
    """Workers playing the rollouts (local processes, or Ray actors with ``address``);
    ``auto`` (or null): one per core this process may use (``os.sched_getaffinity``) for
    rollouts of 4,096 steps or more (``n_envs * n_steps``; smaller ones in this process),
    with ``address`` one per CPU of the cluster; never more than ``rollout_shards``; 1: in
    this process. The same config gives the same training with any number
    (train/games/rollouts.py): workers only play the shards."""
    rollout_shards: int | str = "auto"
    """The ``n_envs`` games are cut into this many shards (at most ``n_envs``), each seeded
    by ``(seed, shard)`` alone: the unit of determinism, and the most workers a rollout can
    use. ``auto``: one per core of the machine that starts the run (at most 64), fixed there
    and written to the run's ``config.yaml``, so its resumes and its copies on any number of
    workers play the same games. Another value plays other games (so trains another
    network); each shard costs about 1.4 ms of Python per step, so more shards than cores
    only slow a run (the recipes' configs pin 2, and train as they always did)."""
    anneal_lr: bool = False
    """Decay the step size linearly from ``learning_rate`` at step 0 to 0 at
    ``total_steps`` (CleanRL's ``anneal_lr``; set from the step count before each update,
    so a run resumed with the same ``total_steps`` continues the same line)."""

    def __post_init__(self) -> None:
        if self.rollout_shards in ("auto", None):  # the machine that starts the run
            self.rollout_shards = auto_shards()


POOL = Section("pool", PoolSection, "the opponent pool the learner trains against")
EVALUATION = Section("evaluation", EvaluationSection, "evaluations and the best checkpoint",
                     prefix="eval_", renamed=(("best_metric", "best_metric"),))
ACTOR = Section("actor", ActorSection, "the network that plays (mlp or action_features)")
FAST = Section("fast", FastSection, "the fast path's rollouts and step-size schedule")
