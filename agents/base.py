"""The agent interface and the string-id registry.

An agent is made from a string id with options, e.g. ``"random"``, ``"greedy"``,
``"search:sims=400"`` or ``"ckpt:checkpoints/ppo_all_fives_2p"``::

    agent = make_agent("search:sims=200", seed=3)
    action = agent.act(obs, view)

``obs`` is the environment observation (``{"observation", "action_mask"}``) of the seat to act
and ``view`` the :class:`~allfives_env.game.view.SeatView` of the same seat: the same information,
structured. An agent whose ``needs_obs`` is false gets an empty ``obs`` and reads the view.
Agents never see a :class:`~allfives_env.game.engine.GameState`, hidden hands or the boneyard order.
Games are played by :mod:`allfives_env.game.match`, the one game loop.

Built-in agents live in their own modules, listed by name in :data:`BUILTIN_MODULES`; a module
is imported (by name, so this module imports none of them) the first time an id needs it.

This module is the one agent builder: every agent and batched bot in the product is made by
:func:`make_agent` or :func:`make_batched` from an id parsed once (:func:`parse_spec`, options
by :mod:`allfives_agents.options`). The server passes its allow-list as ``vet``; the evaluation
alone passes ``measures=True`` for the oracle (tests/test_one_builder.py keeps it so).
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable
from typing import Any

import numpy as np

from allfives_agents.options import check_bounds, did_you_mean, parse_agent_id, split_agent_id
from allfives_env.game.match import Obs
from allfives_env.game.view import SeatView

__all__ = ["Agent", "AgentSpec", "Obs", "available_agents", "batched_agents", "batched_version",
           "check_bounds", "did_you_mean", "make_agent", "make_batched", "parse_agent_id",
           "parse_spec", "register", "register_measure", "register_prefix", "registered_names"]


class Agent:
    """Base class: subclasses implement :meth:`act`. ``name`` is the id it was made from;
    ``needs_obs`` says whether :meth:`act` reads the observation vector (else it gets an
    empty mapping and reads only the :class:`SeatView`)."""

    name: str = "agent"
    needs_obs: bool = True

    def __init__(self, seed: int | None = None, **options: Any) -> None:
        if options:
            raise ValueError(f"{type(self).__name__} takes no options; got {sorted(options)}")
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        """Start a new game (re-seed when ``seed`` is given)."""
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def act(self, obs: Obs, view: SeatView) -> int:
        raise NotImplementedError


AgentFactory = Callable[..., Agent]
_REGISTRY: dict[str, AgentFactory] = {}
_PREFIX_LOADERS: dict[str, Callable[[str, int | None], Agent]] = {}
#: The batched version of an id, where it has one: ``"module:attribute"``, imported only when a
#: batched bot is made (:func:`allfives_agents.batched.bots.make_batched_bot`), so numba stays
#: optional.
_BATCHED: dict[str, str] = {}
#: Measuring sticks (the oracle): built only with ``make_agent(..., measures=True)``.
_MEASURES: dict[str, AgentFactory] = {}

#: The modules that register the built-in agents (imported by name on first use).
BUILTIN_MODULES: tuple[str, ...] = (
    "allfives_agents.rulebased.bots",  # random, greedy
    "allfives_agents.rulebased.heuristic",  # heuristic
    # search (and search:net=...; imports allfives_agents.planning.search)
    "allfives_agents.planning.netsearch",
    "allfives_agents.trained.checkpoint",  # the ckpt: prefix
    "allfives_agents.trained.rllib_agent",  # the rllib: prefix (Ray loads lazily)
    "allfives_agents.planning.openspiel_agent",  # the openspiel: prefix (open_spiel loads lazily)
    "allfives_agents.levels",  # the level: prefix (level:easy, ... at the game's table)
)
#: The modules that register measuring sticks (imported only when one is asked for).
MEASURE_MODULES: tuple[str, ...] = ("allfives_agents.rulebased.oracle",)


def register(name: str, batched: str | None = None) -> Callable[[AgentFactory], AgentFactory]:
    """Class decorator: make the agent available as ``make_agent(name)``; ``batched``
    (``"module:attribute"``) names its batched version, built by the same id with
    :func:`allfives_agents.batched.bots.make_batched_bot` as ``attribute(seed, **options)``."""

    def deco(factory: AgentFactory) -> AgentFactory:
        _REGISTRY[name] = factory
        if batched:
            _BATCHED[name] = batched
        return factory

    return deco


def register_measure(name: str) -> Callable[[AgentFactory], AgentFactory]:
    """Class decorator: ``name`` is a measuring stick, built only by
    ``make_agent(name, measures=True)`` (``allfives eval``), unknown everywhere else."""

    def deco(factory: AgentFactory) -> AgentFactory:
        _MEASURES[name] = factory
        return factory

    return deco


def register_prefix(prefix: str, loader: Callable[[str, int | None], Agent],
                    batched: str | None = None) -> None:
    """Ids ``prefix:<anything>`` are built by ``loader(rest, seed)`` (e.g. ``ckpt:``);
    ``batched`` names the batched builder, called as ``attribute(agent_id, seed)``."""
    _PREFIX_LOADERS[prefix] = loader
    if batched:
        _BATCHED[prefix + ":"] = batched


def batched_version(agent_id: str) -> tuple[str, bool] | None:
    """``("module:attribute", is_prefix)`` of ``agent_id``'s batched version, or None (see
    :func:`register` and :func:`register_prefix`)."""
    _load_builtin()
    prefix, sep, _ = agent_id.partition(":")
    if sep and prefix in _PREFIX_LOADERS:
        target = _BATCHED.get(prefix + ":")
        return (target, True) if target else None
    target = _BATCHED.get(prefix)
    return (target, False) if target else None


def batched_agents() -> list[str]:
    """The ids that have a batched version (``ckpt:<...>`` for a prefix)."""
    _load_builtin()
    return sorted(k if not k.endswith(":") else f"{k}<...>" for k in _BATCHED)


def agent_ids_help() -> str:
    """One line for ``--agents`` help texts: every id this program can build."""
    return ("agent ids: " + ", ".join(available_agents()) + " (ckpt:<model or directory>, "
            "ckpt:best: the shipped model for the rules; options after a colon, e.g. "
            "search:sims=400)")


def available_agents() -> list[str]:
    """The registered agent ids (``random``, ``heuristic``, ...) and prefixes (``ckpt:<...>``,
    ``level:<...>``, ...) that :func:`make_agent` builds."""
    _load_builtin()
    return sorted(_REGISTRY) + [f"{p}:<...>" for p in sorted(_PREFIX_LOADERS)]


def _load_builtin() -> None:
    for module in BUILTIN_MODULES:
        importlib.import_module(module)


def registered_names() -> list[str]:
    """The registered agents' names (no prefixes, no measuring sticks)."""
    _load_builtin()
    return sorted(_REGISTRY)


# ---------------------------------------------------------------------- the one builder
@dataclasses.dataclass(frozen=True)
class AgentSpec:
    """An agent id parsed once: ``kind`` is ``"agent"`` (registered; ``options`` parsed),
    ``"prefix"`` (``rest`` goes to the prefix's loader), ``"measure"`` (the oracle; options
    parsed) or ``"unknown"``."""

    agent_id: str
    name: str
    kind: str
    rest: str = ""
    options: dict[str, Any] = dataclasses.field(default_factory=dict)


#: A builder's allow-list (the server's :class:`~allfives_agents.web.gate.AgentGate`): takes
#: the parsed spec, returns the spec to build (names resolved) or raises a one-line ValueError.
Vet = Callable[[AgentSpec], AgentSpec]


def parse_spec(agent_id: str, measures: bool = False) -> AgentSpec:
    """``agent_id`` parsed (see :class:`AgentSpec`); the name is looked up before the options
    are read (a typo is the likelier fault); bad option values raise a one-line ValueError."""
    _load_builtin()
    name, rest = split_agent_id(agent_id)
    if ":" in agent_id and name in _PREFIX_LOADERS:
        return AgentSpec(agent_id, name, "prefix", rest)
    if measures:
        for module in MEASURE_MODULES:
            importlib.import_module(module)
    kind = "agent" if name in _REGISTRY else "measure" if measures and name in _MEASURES \
        else "unknown"
    if kind == "unknown":
        return AgentSpec(agent_id, name, kind, rest)
    return AgentSpec(agent_id, name, kind, rest, parse_agent_id(agent_id)[1])


def make_agent(agent_id: str, seed: int | None = None, *, vet: Vet | None = None,
               measures: bool = False) -> Agent:
    """Build an agent from its string id (see the module docstring), named ``agent_id``.
    ``vet`` (an allow-list) sees the parsed id first; ``measures`` allows the oracle. An
    unknown name is a one-line ValueError with the closest known one."""
    spec = parse_spec(agent_id, measures)
    if vet is not None:
        spec = vet(spec)
    if spec.kind == "prefix":
        agent = _PREFIX_LOADERS[spec.name](spec.rest, seed)
    elif spec.kind == "unknown":
        known = [*_REGISTRY, *_PREFIX_LOADERS]
        raise ValueError(f"unknown agent {spec.name!r}{did_you_mean(spec.name, known)}: "
                         f"available agents are {', '.join(available_agents())}")
    else:
        factory = (_REGISTRY if spec.kind == "agent" else _MEASURES)[spec.name]
        try:
            agent = factory(seed=seed, **spec.options)
        except TypeError as exc:  # an option the factory does not take
            raise ValueError(f"agent {agent_id!r}: {exc}") from None
    agent.name = agent_id
    return agent


def make_batched(agent_id: str, seed: int | None = 0) -> Any:
    """The batched version of the agent ``agent_id`` (a
    :class:`~allfives_agents.batched.bots.BatchedBot`; the registry says which ids have one:
    :func:`batched_agents`); a one-line ValueError otherwise."""
    found = batched_version(agent_id)
    if found is None:
        raise ValueError(f"agent {agent_id!r} has no batched version: batched agents are "
                         f"{', '.join(batched_agents())}")
    module, _, attribute = found[0].partition(":")
    factory = getattr(importlib.import_module(module), attribute)
    if found[1]:  # a prefix id (ckpt:...): the builder takes the whole id
        return factory(agent_id, seed)
    spec = parse_spec(agent_id)
    try:
        return factory(seed, **spec.options)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"agent {agent_id!r}: {exc}") from None
