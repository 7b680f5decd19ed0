"""The agent interface and the string-id registry.

An agent is made from a string id with options, e.g. ``"random"``, ``"greedy"``,
``"search:sims=400"`` or ``"ckpt:checkpoints/ppo_all_fives_2p"``::

    agent = make_agent("search:sims=200", seed=3)
    action = agent.act(obs, view)

``obs`` is the environment observation (``{"observation", "action_mask"}``) of the seat to act
and ``view`` the :class:`~allfives_env.view.SeatView` of the same seat: the same information,
structured. An agent whose ``needs_obs`` is false gets an empty ``obs`` and reads the view.
Agents never see a :class:`~allfives_env.engine.GameState`, hidden hands or the boneyard order.
Games are played by :mod:`allfives_env.match`, the one game loop.

Built-in agents live in their own modules, listed by name in :data:`BUILTIN_MODULES`; a module
is imported (by name, so this module imports none of them) the first time an id needs it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import numpy as np

from allfives_env.match import Obs
from allfives_env.view import SeatView

__all__ = ["Agent", "Obs", "available_agents", "batched_agents", "batched_version", "check_bounds",
           "make_agent", "parse_agent_id", "register", "register_prefix"]


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
#: batched bot is made (:func:`allfives_agents.batched_bots.make_batched_bot`), so numba stays optional.
_BATCHED: dict[str, str] = {}

#: The modules that register the built-in agents (imported by name on first use).
BUILTIN_MODULES: tuple[str, ...] = (
    "allfives_agents.bots",  # random, greedy
    "allfives_agents.heuristic",  # heuristic
    "allfives_agents.netsearch",  # search (and search:net=...; imports allfives_agents.search)
    "allfives_agents.checkpoint",  # the ckpt: prefix
    "allfives_agents.rllib_agent",  # the rllib: prefix (Ray loads lazily)
    "allfives_agents.openspiel_agent",  # the openspiel: prefix (open_spiel loads lazily)
    "allfives_agents.levels",  # the level: prefix (level:easy, ... at the game's table)
)


def register(name: str, batched: str | None = None) -> Callable[[AgentFactory], AgentFactory]:
    """Class decorator: make the agent available as ``make_agent(name)``; ``batched``
    (``"module:attribute"``) names its batched version, built by the same id with
    :func:`allfives_agents.batched_bots.make_batched_bot` as ``attribute(seed, **options)``."""

    def deco(factory: AgentFactory) -> AgentFactory:
        _REGISTRY[name] = factory
        if batched:
            _BATCHED[name] = batched
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


#: The option values an id may carry: what ``key=value`` reads as (YAML scalars).
VALUE_FORMS = "a number (400, 0.5), true or false, null, or a word (hand, checkpoints/x)"


def parse_agent_id(agent_id: str) -> tuple[str, dict[str, Any]]:
    """``"search:sims=400,depth=2"`` -> ``("search", {"sims": 400, "depth": 2})``; a value
    that is not :data:`VALUE_FORMS` raises a one-line ValueError."""
    name, _, rest = agent_id.partition(":")
    options: dict[str, Any] = {}
    for item in filter(None, (p.strip() for p in rest.split(","))):
        key, sep, raw = item.partition("=")
        if not sep:
            raise ValueError(f"agent id {agent_id!r}: option {item!r} must look like key=value")
        options[key.strip()] = _option_value(agent_id, key.strip(), raw)
    return name, options


def _option_value(agent_id: str, key: str, raw: str) -> Any:
    """One option's value, read as YAML; only scalars (no lists, maps, dates)."""
    from allfives_env.safeyaml import load_yaml

    try:
        value = load_yaml(raw, "option")  # no aliases, bounded nesting
    except ValueError:
        value = _INVALID
    if value is not None and not isinstance(value, (bool, int, float, str)):
        value = _INVALID
    if value is _INVALID:
        name = key if key.isidentifier() else repr(key)  # one line, whatever the key holds
        raise ValueError(f"agent id {agent_id!r}: option {name}={raw.strip()[:40]!r} is not a "
                         f"valid value: use {VALUE_FORMS}")
    return value


_INVALID = object()


def check_bounds(name: str, values: dict[str, float], bounds: dict[str, float]) -> None:
    """A one-line ValueError when an option that scales an agent's work (or memory) exceeds
    its upper bound in ``bounds`` (each agent module's ``BOUNDS``, listed in
    docs/faults.md)."""
    for key, most in bounds.items():
        value = values.get(key)
        if value is not None and value > most:
            allowed = ", ".join(f"{k} <= {_plain(v)}" for k, v in bounds.items())
            raise ValueError(f"{name}: option {key}={_plain(value)} is above its bound "
                             f"{_plain(most)} (the work per decision is bounded: {allowed})")


def _plain(x: float) -> str:
    """``x`` as written (``100000``, not ``100000.0``), at most 24 characters."""
    text = str(int(x)) if isinstance(x, float) and x.is_integer() else str(x)
    return text if len(text) <= 24 else f"{text[:12]}... ({len(text)} digits)"


def agent_ids_help() -> str:
    """One line for ``--agents`` help texts: every id this program can build."""
    return ("agent ids: " + ", ".join(available_agents()) + " (ckpt:<model or directory>, "
            "ckpt:best: the shipped model for the rules; options after a colon, e.g. "
            "search:sims=400)")


def available_agents() -> list[str]:
    _load_builtin()
    return sorted(_REGISTRY) + [f"{p}:<...>" for p in sorted(_PREFIX_LOADERS)]


def make_agent(agent_id: str, seed: int | None = None) -> Agent:
    """Build an agent from its string id (see the module docstring); an unknown name is a
    one-line ValueError with the closest known one."""
    _load_builtin()
    prefix, sep, rest = agent_id.partition(":")
    if sep and prefix in _PREFIX_LOADERS:
        agent = _PREFIX_LOADERS[prefix](rest, seed)
    else:
        if prefix not in _REGISTRY:  # before its options: a typo is the likelier fault
            known = [*_REGISTRY, *_PREFIX_LOADERS]
            raise ValueError(f"unknown agent {prefix!r}"
                             f"{did_you_mean(prefix, known)}: available agents are "
                             f"{', '.join(available_agents())}")
        name, options = parse_agent_id(agent_id)
        agent = build(_REGISTRY[name], agent_id, options, seed)
    agent.name = agent_id
    return agent


def did_you_mean(word: str, choices: list[str]) -> str:
    """`` (did you mean 'greedy'?)`` for the closest of ``choices`` (difflib), or ""."""
    import difflib

    close = difflib.get_close_matches(word.strip(), choices, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def build(factory: AgentFactory, agent_id: str, options: dict[str, Any],
          seed: int | None) -> Agent:
    """``factory(seed=seed, **options)`` named ``agent_id``; an option it does not take is a
    one-line ValueError."""
    try:
        agent = factory(seed=seed, **options)
    except TypeError as exc:
        raise ValueError(f"agent {agent_id!r}: {exc}") from None
    agent.name = agent_id
    return agent


def _load_builtin() -> None:
    for module in BUILTIN_MODULES:
        importlib.import_module(module)
