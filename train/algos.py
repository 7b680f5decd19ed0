"""The one table of training algorithms: every ``algo:`` of ``allfives train``, its trainer,
its config sections and its checks. ``allfives train`` (train/cli.py), the recipes
(train/recipe.py) and ``allfives speedrun`` dispatch through :func:`trainer`, and the config's
checks through :func:`validate`; ``tests/test_algo_table.py`` fails on any other dispatch.

A trainer and a check are named ``"module:function"`` and imported only when that algo runs,
so the table itself imports nothing heavy (torch, SB3).

Each row names the config **sections** its algo reads (train/sections.py): its own (declared
in its room, ``train/algorithms/<name>/section.py``) and the shared ones (PPO's, the actor's,
the pool's ...). ``TrainConfig`` (train/config.py) holds the fields every algo shares plus
every section of the table, so a new algorithm's section needs no edit there. The fields an
algo does not read at all (the sections it does not name, its ``also_ignores``) are its
:func:`ignored` fields: set to other than their default in a config of that algo, they are
named in a warning (:func:`ignored_set`), never silently dropped.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from allfives_train.algorithms.dmc.section import DMC
from allfives_train.algorithms.maskable_ppo.section import MASKABLE_PPO
from allfives_train.algorithms.search_distill.section import SEARCH_DISTILL
from allfives_train.ppo_section import PPO
from allfives_train.rllib.section import IGNORES as RLLIB_IGNORES
from allfives_train.rllib.section import OLD_NAMES, RLLIB
from allfives_train.sections import ACTOR, EVALUATION, FAST, POOL, Section


@dataclasses.dataclass(frozen=True)
class Algo:
    """One training algorithm (an ``algo:`` value)."""

    name: str
    trainer: str
    """``"module:function"``: ``train(cfg, resume, quiet, started) -> Path`` (its final/)."""
    summary: str
    """What it trains, in a few words (``allfives train --help-config``, the docs)."""
    rollouts: bool
    """Its learner steps come in whole rollouts of ``n_envs * n_steps``."""
    learn: str | None
    """``"module:function"``: its round in the fast path's loop
    (train/algorithms/ppo_batched/loop.py: one
    rollout and one update, ``learn(agent, optimizer, envs, cfg, device) -> stats``); its
    trainer then takes ``hooks=`` too. None: a loop of its own."""
    warm_start: bool
    """It imitates ``bc_teacher`` before it trains (the ``bc_*`` fields)."""
    features_by_default: bool
    """Its ``policy`` defaults to the ``action_features`` actor (search_distill trains that
    actor alone; dmc also takes ``mlp``, action values over the observation alone)."""
    sections: tuple[Section[Any], ...] = ()
    """The config sections it reads (train/sections.py): its own and shared ones."""
    validate: str | None = None
    """``"module:function"``: ``check(cfg, bad)`` raising ``bad(field, allowed)`` for what
    this algo does not accept (after the checks that every algo shares)."""
    also_ignores: tuple[str, ...] = ()
    """Shared fields this algo does not read (beyond the sections it does not name)."""
    trains_value: bool = False
    """Its critic learns the value of the rest of the game from its games, so its
    checkpoints carry it in ``policy.npz`` (``NumpyPolicy.value``; ``search:net=...,value=1``);
    the others' checkpoints carry none."""
    unit: str = "steps"
    """What its budget counts (the run shell's start line and finished-run checks:
    train/shell/budget.py): ``steps`` (learner decisions), ``positions`` or ``iterations``."""
    budget: str = "total_steps"
    """The config field that sets its budget."""
    defaults: str | None = None
    """``"module:function"``: ``defaults() -> {flat name: value}``, the fields whose default
    differs for this algo (rllib_ppo: those of its config before it read ``TrainConfig``);
    None: the dataclasses' defaults."""
    old_names: tuple[tuple[str, str], ...] = ()
    """``(old, new)`` flat names: fields this algo's config once named ``old`` that are now
    ``new``; set with this algo, ``old`` is read as ``new`` with a one-line note."""
    empty_pool: bool = False
    """An empty ``opponents`` is allowed (rllib_ppo: its modules play every seat)."""
    run_dir_keys: tuple[tuple[str, str], ...] = ()
    """``(key, flat name)``: more ``{key}``s its ``run_dir`` may hold, each filled with that
    field's value (rllib_ppo: ``{policy}``, ``rllib.policy``)."""
    preflight: str = "allfives_train.shell.preflight:require_sb3"
    """``"module:function"``: ``() -> None``, a ValueError in one line (what to install)
    when a package its trainer needs is missing; called before the trainer is imported."""
    default_config: str | None = None
    """The shipped config (in configs/train/) that ``--algo NAME`` without ``--config``
    runs; None: default.yaml with ``algo`` set to it."""
    value_if: str | None = None
    """``"module:function"``: ``fits(cfg) -> bool``, whether a run of ``cfg`` teaches the
    critic after all (its checkpoints then carry it) where ``trains_value`` is False."""


#: Shared fields that the fast path's rollouts read and the others may not.
FAST_ONLY = ("address",)
#: What search_distill's labelling and fit do not read: the learner's games and their reward.
NO_GAMES = ("gamma", "margin_reward", "win_reward", "n_envs", "n_steps", "n_epochs",
            "progress")
#: The sections of the fast path's loop (ppo_batched, dmc).
FAST_PATH = (POOL, EVALUATION, ACTOR, FAST)

ALGOS: dict[str, Algo] = {a.name: a for a in (
    Algo("maskable_ppo", "allfives_train.algorithms.maskable_ppo.trainer:train",
         "sb3-contrib's MaskablePPO over scalar envs, imitation warm start",
         rollouts=True, learn=None, warm_start=True, features_by_default=False,
         sections=(MASKABLE_PPO, PPO, POOL, EVALUATION), also_ignores=FAST_ONLY,
         validate="allfives_train.algorithms.maskable_ppo.section:check"),
    Algo("ppo_batched", "allfives_train.algorithms.ppo_batched.trainer:train",
         "masked PPO in torch over the batched VectorEnv (the fast path)",
         rollouts=True, learn="allfives_train.algorithms.ppo_batched.trainer:learn",
         warm_start=False, features_by_default=False, sections=(PPO, *FAST_PATH),
         validate="allfives_train.algo_checks:check_ppo_batched", trains_value=True),
    Algo("search_distill", "allfives_train.algorithms.search_distill.trainer:train",
         "the action_features actor fitted to a search's value of every legal move",
         rollouts=False, learn=None, warm_start=False, features_by_default=True,
         sections=(SEARCH_DISTILL, ACTOR, EVALUATION), also_ignores=NO_GAMES,
         validate="allfives_train.algorithms.search_distill.section:check",
         unit="positions",
         value_if="allfives_train.algorithms.search_distill.trainer:fits_value"),
    Algo("dmc", "allfives_train.algorithms.dmc.trainer:train",
         "Deep Monte-Carlo: the actor's logits as action values, regressed on the "
         "returns of its own epsilon-greedy games",
         rollouts=True, learn="allfives_train.algorithms.dmc.trainer:learn", warm_start=False,
         features_by_default=True, sections=(DMC, *FAST_PATH),
         validate="allfives_train.algorithms.dmc.section:check", trains_value=True),
    Algo("rllib_ppo", "allfives_train.rllib.run:train",
         "multi-agent PPO on Ray RLlib (train/rllib; configs/train/rllib.yaml)",
         rollouts=False, learn=None, warm_start=False, features_by_default=False,
         sections=(RLLIB, PPO, POOL, ACTOR), validate="allfives_train.rllib.section:check",
         also_ignores=RLLIB_IGNORES, unit="iterations", budget="iterations",
         defaults="allfives_train.rllib.section:defaults", old_names=OLD_NAMES,
         empty_pool=True, run_dir_keys=(("policy", "rllib_policy"),),
         preflight="allfives_train.rllib.section:require_ray", default_config="rllib.yaml"),
)}


def config_algos() -> tuple[str, ...]:
    """The algos of ``TrainConfig``'s ``algo``: every row of the table, registered ones
    included."""
    return tuple(ALGOS)


def register(algo: Algo) -> None:
    """Add ``algo`` to the table (a plug-in from outside this package: its trainer and
    checks are ``"module:function"`` names importable when it runs). ValueError when the
    name is taken."""
    if algo.name in ALGOS:
        raise ValueError(f"algo {algo.name!r} is in the table already")
    ALGOS[algo.name] = algo


def get(name: str) -> Algo:
    """The table's entry for ``name``; a ValueError naming the algos there are."""
    if name not in ALGOS:
        raise ValueError(f"config algo={name!r}: must be one of {', '.join(ALGOS)}")
    return ALGOS[name]


def _load(target: str) -> Callable[..., Any]:
    module, _, function = target.partition(":")
    found: Callable[..., Any] = getattr(importlib.import_module(module), function)
    return found


def trainer(name: str) -> Callable[..., Path]:
    """The training loop of algo ``name`` (imported now: torch, SB3 as it needs)."""
    return _load(get(name).trainer)


def learn(name: str) -> Callable[..., dict[str, float]]:
    """The round of algo ``name`` in the fast path's loop; a ValueError for an algo that has
    a loop of its own."""
    step = get(name).learn
    if step is None:
        raise ValueError(f"algo {name} has a loop of its own, not the fast path's rounds "
                         f"(algos with rounds: {', '.join(a for a in ALGOS if ALGOS[a].learn)})")
    return _load(step)


def carries_value(cfg: Any) -> bool:
    """Whether the checkpoints of a run of ``cfg`` carry its critic as their value:
    :attr:`Algo.trains_value`, or :attr:`Algo.value_if` says so for this config."""
    algo = get(cfg.algo)
    return algo.trains_value or (algo.value_if is not None and bool(_load(algo.value_if)(cfg)))


def validate(cfg: Any, bad: Callable[[str, str], ValueError]) -> None:
    """Algo ``cfg.algo``'s own checks of ``cfg`` (none for an algo that declares none)."""
    check = get(cfg.algo).validate
    if check is not None:
        _load(check)(cfg, bad)


def preflight(name: str) -> None:
    """Algo ``name``'s install check (:attr:`Algo.preflight`): a one-line ValueError."""
    _load(get(name).preflight)()


def defaults(name: str) -> dict[str, Any]:
    """The flat fields whose default differs for algo ``name`` (:attr:`Algo.defaults`)."""
    hook = get(name).defaults
    return {} if hook is None else dict(_load(hook)())


def sections() -> dict[str, Section[Any]]:
    """Every section the table's algos read, by key (registered algos' included); a
    ValueError where two different sections take one key."""
    out: dict[str, Section[Any]] = {}
    for algo in ALGOS.values():
        for section in algo.sections:
            if out.setdefault(section.key, section) is not section:
                raise ValueError(f"algo {algo.name}: section key {section.key!r} is another "
                                 "section's already")
    return out


def ignored(name: str) -> tuple[str, ...]:
    """The config fields (flat names) that algo ``name`` does not read: those of the sections
    its row does not name, and its own ``also_ignores``."""
    algo = get(name)
    read = {s.key for s in algo.sections}
    unread = {s.flat(f) for key, s in sections().items() if key not in read for f in s.fields()}
    return tuple(sorted(unread | set(algo.also_ignores)))


def ignored_set(cfg: Any, defaults: dict[str, Any]) -> list[str]:
    """``field=value`` for each field of ``cfg`` that its algo ignores and that differs from
    its default in ``defaults`` (flat names: the defaults for that algo)."""
    return [f"{f}={cfg.value(f)!r}" for f in ignored(cfg.algo) if cfg.value(f) != defaults[f]]
