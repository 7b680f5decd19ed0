"""Rule options and presets (see docs/rules.md).

A rule set is a preset name plus overrides::

    make_rules("five_up", players=3)
    make_rules(**load_rules_yaml("configs/rules/muggins.yaml"))
    make_rules("all_fives", **parse_overrides(["target=300", "teams=false"]))

Every option is validated; a wrong key, type or combination raises :class:`RulesError` naming
the key and what is allowed. :class:`Rules` is frozen and resolved: ``hand_size`` and
``target`` are plain ints for the chosen seat count.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from allfives_env.game.tiles import N_TILES
from allfives_env.inputs.safeyaml import load_yaml, load_yaml_file, shorten


class RulesError(ValueError):
    """An unknown rule option, a value of the wrong type, or an impossible combination."""


@dataclasses.dataclass(frozen=True)
class Option:
    """One rule option, declared once (docs/rules.md's options table says the same).

    ``values``: every allowed value of a choice (``bool``: ``(False, True)``); an integer option
    without ``values`` allows ``minimum`` and up, and ``examples`` are the values the generated
    tests play (``tests/rule_cases.py``). ``per_players``: a preset (or an override) may give a
    map ``{players: value}``. ``default``: the value of a plain ``Rules()``."""

    name: str
    kind: type
    default: Any
    doc: str
    values: tuple[Any, ...] = ()
    minimum: int = 0
    examples: tuple[int, ...] = ()
    per_players: bool = False

    @property
    def tested(self) -> tuple[Any, ...]:
        """The values the generated tests play: every allowed value, or the examples."""
        return self.values or self.examples


_BOOL = (False, True)
#: Every rule option, in record order. Adding a value here without implementing it in both
#: engines fails the generated tests (docs/architecture.md, "A rule option").
OPTIONS: dict[str, Option] = {o.name: o for o in (
    Option("players", int, 2, "seats at the table", values=(2, 3, 4), minimum=2),
    Option("teams", bool, False, "partnerships: seats 0+2 against 1+3 (4 players only)",
           values=_BOOL),
    Option("hand_size", int, 9, "tiles dealt to each seat", minimum=1, examples=(1, 5, 9),
           per_players=True),
    Option("target", int, 250, "the score that wins", minimum=1, examples=(5, 60),
           per_players=True),
    Option("win_check", str, "immediate", "when a side that reached the target wins",
           values=("immediate", "end_of_hand")),
    Option("first_leader", str, "random", "who leads the first hand",
           values=("random", "highest_double")),
    Option("next_leader", str, "hand_winner", "who leads every later hand",
           values=("hand_winner", "highest_double", "random")),
    Option("spinner", bool, True, "whether the first double is a spinner", values=_BOOL),
    Option("hand_end", str, "subtract_own", "what the tiles left in hand do at a hand's end",
           values=("subtract_own", "winner_collects")),
    Option("rounding", str, "per_hand", "with winner_collects: how collected pips are rounded",
           values=("per_hand", "total")),
    Option("boneyard_reserve", int, 0, "tiles at the end of the boneyard never drawn",
           minimum=0, examples=(0, 2, 8)),
    Option("max_hands", int, 100, "hands after which an unfinished game is truncated",
           minimum=1, examples=(1, 3)),
)}
OPTION_NAMES: tuple[str, ...] = tuple(OPTIONS)
#: ``win_check`` -> whether reaching the target wins at once (:attr:`Rules.immediate_win`).
IMMEDIATE_WIN: dict[str, bool] = {"immediate": True, "end_of_hand": False}

_COMMON: dict[str, Any] = {
    "spinner": True, "win_check": "immediate", "boneyard_reserve": 0, "max_hands": 100,
    "rounding": "per_hand",
}
PRESETS: dict[str, dict[str, Any]] = {
    "all_fives": {
        **_COMMON, "hand_size": {2: 9, 3: 7, 4: 5}, "target": {2: 250, 3: 200, 4: 200},
        "first_leader": "random", "next_leader": "hand_winner", "hand_end": "subtract_own",
    },
    "five_up": {
        **_COMMON, "hand_size": {2: 7, 3: 6, 4: 5}, "target": 150,
        "first_leader": "highest_double", "next_leader": "highest_double",
        "hand_end": "winner_collects",
    },
    "muggins": {
        **_COMMON, "hand_size": 7, "target": 100,
        "first_leader": "highest_double", "next_leader": "hand_winner",
        "hand_end": "winner_collects",
    },
    "pagat": {
        **_COMMON, "hand_size": {2: 9, 3: 7, 4: 5}, "target": {2: 250, 3: 200, 4: 200},
        "first_leader": "random", "next_leader": "hand_winner", "hand_end": "winner_collects",
        "rounding": "total",
    },
}
DEFAULT_PRESET = "all_fives"


@dataclasses.dataclass(frozen=True)
class Rules:
    """A resolved, validated rule set (field meanings: docs/rules.md).

    Every way of building one checks it: ``Rules(players=4, hand_size=8)`` raises
    :class:`RulesError` just as ``make_rules("all_fives", players=4, hand_size=8)`` does.
    """

    players: int = OPTIONS["players"].default
    teams: bool = OPTIONS["teams"].default
    hand_size: int = OPTIONS["hand_size"].default
    target: int = OPTIONS["target"].default
    win_check: str = OPTIONS["win_check"].default
    first_leader: str = OPTIONS["first_leader"].default
    next_leader: str = OPTIONS["next_leader"].default
    spinner: bool = OPTIONS["spinner"].default
    hand_end: str = OPTIONS["hand_end"].default
    rounding: str = OPTIONS["rounding"].default
    boneyard_reserve: int = OPTIONS["boneyard_reserve"].default
    max_hands: int = OPTIONS["max_hands"].default
    preset: str = DEFAULT_PRESET

    def __post_init__(self) -> None:
        _validate(self)

    @property
    def n_sides(self) -> int:
        return 2 if self.teams else self.players

    def side_of(self, seat: int) -> int:
        return seat % 2 if self.teams else seat

    @functools.cached_property
    def key(self) -> tuple[Any, ...]:
        """The rules as a plain tuple of values: a cheap dictionary key for caches (equal
        rules give equal keys, however and wherever they were built)."""
        return tuple(getattr(self, f.name) for f in dataclasses.fields(self))

    @property
    def immediate_win(self) -> bool:
        """``win_check: immediate``: a side that reaches the target wins at once (a value
        missing from ``IMMEDIATE_WIN`` is a KeyError: declared, not implemented)."""
        return IMMEDIATE_WIN[self.win_check]

    def side_name(self, side: int) -> str:
        """``"seat 1"``, or ``"team 0 (seats 0+2)"`` with teams."""
        if self.teams:
            return f"team {side} (seats {side}+{side + 2})"
        return f"seat {side}"

    def to_dict(self) -> dict[str, Any]:
        """The record's ``rules`` object: exactly the rule options, resolved."""
        return {name: getattr(self, name) for name in OPTION_NAMES}

    def differences(self, other: Mapping[str, Any]) -> list[tuple[str, Any, Any]]:
        """``(option, mine, theirs)`` for every rule option where ``other`` (a record's or a
        model card's ``rules`` object) differs; the preset name is not an option."""
        return [(k, v, other[k]) for k, v in self.to_dict().items()
                if k in other and other[k] != v]


def _validate(rules: Rules) -> None:
    """Raise :class:`RulesError` for a wrong type, value or combination in ``rules``."""
    if rules.preset not in PRESETS:
        raise RulesError(f"unknown preset {shorten(rules.preset)}: presets are "
                         f"{', '.join(PRESETS)}")
    for option in OPTIONS.values():
        check_option(option, getattr(rules, option.name))
    players = rules.players
    if rules.teams and players != 4:
        raise RulesError(f"teams=true needs players=4 (got players={players})")
    dealt = players * rules.hand_size + rules.boneyard_reserve
    if dealt > N_TILES:
        raise RulesError(
            f"hand_size={rules.hand_size} with players={players} and "
            f"boneyard_reserve={rules.boneyard_reserve} needs {dealt} tiles; the set holds "
            f"{N_TILES}: players * hand_size + boneyard_reserve must be at most {N_TILES}"
        )


def check_option(option: Option, value: Any) -> None:
    """Raise :class:`RulesError` unless ``value`` is an allowed value of ``option``."""
    key = option.name
    if option.kind is bool:
        if not isinstance(value, bool):
            raise RulesError(f"{key}={shorten(value)}: {key} must be true or false")
    elif option.kind is int:
        _int(value, key, option.minimum)
        if option.values and value not in option.values:
            shown = [str(v) for v in option.values]
            raise RulesError(f"{key}={value}: {key} must be {', '.join(shown[:-1])} or "
                             f"{shown[-1]}")
    elif not isinstance(value, option.kind) or value not in option.values:
        raise RulesError(f"{key}={shorten(value)}: allowed values are "
                         f"{', '.join(map(str, option.values))}")


def make_rules(preset: str = DEFAULT_PRESET, **overrides: Any) -> Rules:
    """Resolve ``preset`` plus ``overrides`` into a validated :class:`Rules`.

    An override of ``None`` (an empty value: ``--set target=``, ``target:`` in YAML) is an
    error, not a request for the preset's value: leave the option out for that."""
    if preset not in PRESETS:
        raise RulesError(f"unknown preset {shorten(preset)}: presets are {', '.join(PRESETS)}")
    unknown = sorted(set(overrides) - set(OPTION_NAMES))
    if unknown:
        raise RulesError(
            f"unknown rule option(s) {', '.join(map(shorten, unknown))}: "
            f"options are {', '.join(OPTION_NAMES)}"
        )
    empty = sorted(k for k, v in overrides.items() if v is None)
    if empty:
        raise RulesError(f"{empty[0]} has an empty value: give a value, or leave the option "
                         "out to keep the preset's")
    options = {**PRESETS[preset], **overrides}
    players = options.get("players", 2)
    check_option(OPTIONS["players"], players)
    resolved: dict[str, Any] = {"players": players, "teams": options.get("teams", players == 4)}
    for name, option in OPTIONS.items():
        if name not in resolved:
            value = options[name]
            resolved[name] = _per_players(value, name, players) if option.per_players else value
    return Rules(**resolved, preset=preset)


def _int(value: Any, key: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise RulesError(f"{key}={shorten(value)}: {key} must be an integer >= {minimum}")
    if value < minimum:
        raise RulesError(f"{key}={value}: {key} must be an integer >= {minimum}")
    return value


def _per_players(value: Any, key: str, players: int) -> int:
    """An int, or a map players -> int (keys may be strings from YAML)."""
    if isinstance(value, Mapping):
        table = {}
        for k, v in value.items():
            if isinstance(k, bool) or str(k) not in ("2", "3", "4"):
                raise RulesError(f"{key}: map keys must be seat counts 2, 3 or 4 (got "
                                 f"{shorten(k)})")
            table[int(k)] = v
        if players not in table:
            raise RulesError(f"{key}={shorten(dict(value))} gives no value for "
                             f"players={players}")
        value = table[players]
    return _int(value, key, 1)


def parse_key_values(items: Iterable[str], what: str = "option") -> dict[str, Any]:
    """``["target=300", "teams=false"]`` -> ``{"target": 300, "teams": False}``: the one
    ``KEY=VALUE`` parser of the project (values are YAML; ``-`` in keys reads as ``_``).
    An empty value (``target=``) is an error; ``what`` names the keys in messages. Values
    are read by :func:`~allfives_env.inputs.safeyaml.load_yaml` (no aliases, bounded nesting)."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not key:
            raise RulesError(f"{what} {shorten(item)} must look like key=value")
        if not raw.strip():
            raise RulesError(f"{what} {shorten(item)} has an empty value: give a value after '='")
        try:
            out[key] = load_yaml(raw, f"{what} {shorten(key, 40)}")
        except ValueError as exc:
            raise RulesError(str(exc)) from None
    return out


def parse_overrides(items: Iterable[str]) -> dict[str, Any]:
    """Rule options from ``KEY=VALUE`` items (:func:`parse_key_values`); unknown keys are
    refused at once."""
    out = parse_key_values(items, "rule option")
    for key in out:
        if key not in OPTION_NAMES:
            raise RulesError(
                f"unknown rule option {shorten(key)}: options are {', '.join(OPTION_NAMES)}"
            )
    return out


def load_rules_yaml(path: str | Path) -> dict[str, Any]:
    """Read a rules YAML file (``preset:`` plus options) into ``make_rules`` keyword args
    (at most :data:`~allfives_env.inputs.safeyaml.MAX_TEXT_BYTES`, no aliases, bounded nesting)."""
    try:
        data = load_yaml_file(path, "rules file") or {}
    except ValueError as exc:
        raise RulesError(str(exc)) from None
    if not isinstance(data, dict):
        raise RulesError(f"{path}: a rules file must be a mapping of option: value")
    return data


def rules_from_dict(data: Mapping[str, Any]) -> Rules:
    """Rebuild :class:`Rules` from a record's ``rules`` object (or any options mapping)."""
    data = dict(data)
    preset = data.pop("preset", DEFAULT_PRESET)
    return make_rules(preset, **data)
