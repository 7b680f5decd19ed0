"""Agent ids' options, parsed and checked in one place.

An id is ``name[:key=value,...]`` (``search:sims=400,depth=2``); a prefix id
(``ckpt:<ref>,sample=true``) keeps its first item for its loader. Every value is read as a YAML
scalar (:data:`VALUE_FORMS`), once, here: :func:`parse_agent_id`. An agent that takes numbers
(``heuristic``'s weights, ``search``'s options) checks them with :func:`numeric_options`
against its defaults and the upper bounds its module declares beside its registration
(``BOUNDS`` in :mod:`allfives_agents.planning.search` and
:mod:`allfives_agents.planning.openspiel_agent`,
listed in docs/faults.md). Every fault is a one-line ValueError saying what is allowed.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping
from typing import Any

__all__ = ["VALUE_FORMS", "check_bounds", "did_you_mean", "finite_number", "numeric_options",
           "parse_agent_id", "prefix_options", "split_agent_id"]

#: The option values an id may carry: what ``key=value`` reads as (YAML scalars).
VALUE_FORMS = "a number (400, 0.5), true or false, null, or a word (hand, checkpoints/x)"

_INVALID = object()


def split_agent_id(agent_id: str) -> tuple[str, str]:
    """``"search:sims=400"`` -> ``("search", "sims=400")``: the name (stripped) and the rest."""
    name, _, rest = agent_id.partition(":")
    return name.strip(), rest


def prefix_options(prefix: str, rest: str) -> tuple[str, dict[str, Any]]:
    """A prefix id's rest, ``"<ref>,key=value,..."`` -> ``(ref stripped, options)``
    (``ckpt:``, ``rllib:``, ``openspiel:``)."""
    ref, _, opts = rest.partition(",")
    return ref.strip(), parse_agent_id(f"{prefix}:{opts}")[1]


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
    from allfives_env.inputs.safeyaml import load_yaml

    try:
        value = load_yaml(raw, "option")  # no aliases, bounded nesting
    except ValueError:
        value = _INVALID
    if value is not None and not isinstance(value, (bool, int, float, str)):
        value = _INVALID
    infinite = isinstance(value, float) and not math.isfinite(value)  # .inf, .nan
    if value is _INVALID or infinite:
        name = key if key.isidentifier() else repr(key)  # one line, whatever the key holds
        what = "not a finite number" if infinite else "not a valid value"
        raise ValueError(f"agent id {agent_id!r}: option {name}={raw.strip()[:40]!r} is {what}: "
                         f"use {VALUE_FORMS}")
    return value


def numeric_options(name: str, options: Mapping[str, Any], defaults: Mapping[str, float],
                    bounds: Mapping[str, float] | None = None) -> dict[str, float]:
    """``defaults`` updated by ``options``; unknown keys, non-numbers and values above
    ``bounds`` (the agent's declared upper bounds) raise a one-line ValueError."""
    unknown = sorted(set(options) - set(defaults))
    if unknown:
        raise ValueError(f"{name}: unknown option(s) {', '.join(map(repr, unknown))}; "
                         f"options are {', '.join(defaults)}")
    out = dict(defaults)
    for key, value in options.items():
        number = finite_number(value)
        if number is None:
            raise ValueError(f"{name}: option {key}={repr(value)[:40]} must be a number "
                             "(finite)")
        out[key] = number
    if bounds:
        check_bounds(name, out, bounds)
    return out


def finite_number(value: Any) -> float | None:
    """``value`` as a finite float, or None (not a number, NaN, infinite, too large)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def check_bounds(name: str, values: Mapping[str, float], bounds: Mapping[str, float]) -> None:
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


def did_you_mean(word: str, choices: list[str]) -> str:
    """`` (did you mean 'greedy'?)`` for the closest of ``choices`` (difflib), or ""."""
    close = difflib.get_close_matches(word.strip(), choices, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""
