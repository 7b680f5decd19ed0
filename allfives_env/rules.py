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

from allfives_env.tiles import N_TILES


class RulesError(ValueError):
    """An unknown rule option, a value of the wrong type, or an impossible combination."""


CHOICES: dict[str, tuple[str, ...]] = {
    "win_check": ("immediate", "end_of_hand"),
    "first_leader": ("random", "highest_double"),
    "next_leader": ("hand_winner", "highest_double", "random"),
    "hand_end": ("subtract_own", "winner_collects"),
    "rounding": ("per_hand", "total"),
}
OPTION_NAMES: tuple[str, ...] = (
    "players", "teams", "hand_size", "target", "win_check", "first_leader", "next_leader",
    "spinner", "hand_end", "rounding", "boneyard_reserve", "max_hands",
)

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

    players: int = 2
    teams: bool = False
    hand_size: int = 9
    target: int = 250
    win_check: str = "immediate"
    first_leader: str = "random"
    next_leader: str = "hand_winner"
    spinner: bool = True
    hand_end: str = "subtract_own"
    rounding: str = "per_hand"
    boneyard_reserve: int = 0
    max_hands: int = 100
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
        """``win_check: immediate``: a side that reaches the target wins at once."""
        return self.win_check == "immediate"

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
        raise RulesError(f"unknown preset {rules.preset!r}: presets are {', '.join(PRESETS)}")
    players = _int(rules.players, "players", 2)
    if players not in (2, 3, 4):
        raise RulesError(f"players={players}: players must be 2, 3 or 4")
    if not isinstance(rules.teams, bool):
        raise RulesError(f"teams={rules.teams!r}: teams must be true or false")
    if rules.teams and players != 4:
        raise RulesError(f"teams=true needs players=4 (got players={players})")
    for key, allowed in CHOICES.items():
        if getattr(rules, key) not in allowed:
            raise RulesError(f"{key}={getattr(rules, key)!r}: allowed values are "
                             f"{', '.join(allowed)}")
    if not isinstance(rules.spinner, bool):
        raise RulesError(f"spinner={rules.spinner!r}: spinner must be true or false")
    _int(rules.hand_size, "hand_size", 1)
    _int(rules.target, "target", 1)
    _int(rules.boneyard_reserve, "boneyard_reserve", 0)
    _int(rules.max_hands, "max_hands", 1)
    dealt = players * rules.hand_size + rules.boneyard_reserve
    if dealt > N_TILES:
        raise RulesError(
            f"hand_size={rules.hand_size} with players={players} and "
            f"boneyard_reserve={rules.boneyard_reserve} needs {dealt} tiles; the set holds "
            f"{N_TILES}: players * hand_size + boneyard_reserve must be at most {N_TILES}"
        )


def make_rules(preset: str = DEFAULT_PRESET, **overrides: Any) -> Rules:
    """Resolve ``preset`` plus ``overrides`` into a validated :class:`Rules`.

    An override of ``None`` (an empty value: ``--set target=``, ``target:`` in YAML) is an
    error, not a request for the preset's value: leave the option out for that."""
    if preset not in PRESETS:
        raise RulesError(f"unknown preset {preset!r}: presets are {', '.join(PRESETS)}")
    unknown = sorted(set(overrides) - set(OPTION_NAMES))
    if unknown:
        raise RulesError(
            f"unknown rule option(s) {', '.join(map(repr, unknown))}: "
            f"options are {', '.join(OPTION_NAMES)}"
        )
    empty = sorted(k for k, v in overrides.items() if v is None)
    if empty:
        raise RulesError(f"{empty[0]} has an empty value: give a value, or leave the option "
                         "out to keep the preset's")
    options = {**PRESETS[preset], **overrides}
    players = _int(options.get("players", 2), "players", 2)
    if players not in (2, 3, 4):
        raise RulesError(f"players={players}: players must be 2, 3 or 4")
    teams = options.get("teams", players == 4)
    return Rules(
        players=players,
        teams=teams,
        hand_size=_per_players(options["hand_size"], "hand_size", players),
        target=_per_players(options["target"], "target", players),
        win_check=options["win_check"],
        first_leader=options["first_leader"],
        next_leader=options["next_leader"],
        spinner=options["spinner"],
        hand_end=options["hand_end"],
        rounding=options["rounding"],
        boneyard_reserve=options["boneyard_reserve"],
        max_hands=options["max_hands"],
        preset=preset,
    )


def _int(value: Any, key: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise RulesError(f"{key}={value!r}: {key} must be an integer >= {minimum}")
    if value < minimum:
        raise RulesError(f"{key}={value}: {key} must be an integer >= {minimum}")
    return value


def _per_players(value: Any, key: str, players: int) -> int:
    """An int, or a map players -> int (keys may be strings from YAML)."""
    if isinstance(value, Mapping):
        table = {}
        for k, v in value.items():
            if isinstance(k, bool) or str(k) not in ("2", "3", "4"):
                raise RulesError(f"{key}: map keys must be seat counts 2, 3 or 4 (got {k!r})")
            table[int(k)] = v
        if players not in table:
            raise RulesError(f"{key}={dict(value)!r} gives no value for players={players}")
        value = table[players]
    return _int(value, key, 1)


def parse_key_values(items: Iterable[str], what: str = "option") -> dict[str, Any]:
    """``["target=300", "teams=false"]`` -> ``{"target": 300, "teams": False}``: the one
    ``KEY=VALUE`` parser of the project (values are YAML; ``-`` in keys reads as ``_``).
    An empty value (``target=``) is an error; ``what`` names the keys in messages."""
    import yaml

    out: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not key:
            raise RulesError(f"{what} {item!r} must look like key=value")
        if not raw.strip():
            raise RulesError(f"{what} {item!r} has an empty value: give a value after '='")
        try:
            out[key] = yaml.safe_load(raw)
        except yaml.YAMLError:
            raise RulesError(f"{what} {item!r}: the value is not valid YAML") from None
    return out


def parse_overrides(items: Iterable[str]) -> dict[str, Any]:
    """Rule options from ``KEY=VALUE`` items (:func:`parse_key_values`); unknown keys are
    refused at once."""
    out = parse_key_values(items, "rule option")
    for key in out:
        if key not in OPTION_NAMES:
            raise RulesError(
                f"unknown rule option {key!r}: options are {', '.join(OPTION_NAMES)}"
            )
    return out


def load_rules_yaml(path: str | Path) -> dict[str, Any]:
    """Read a rules YAML file (``preset:`` plus options) into ``make_rules`` keyword args."""
    import yaml

    try:
        data = yaml.safe_load(Path(path).read_text()) or {}
    except yaml.YAMLError as exc:
        raise RulesError(f"{path}: not valid YAML: {exc}") from exc
    if not isinstance(data, dict):
        raise RulesError(f"{path}: a rules file must be a mapping of option: value")
    return data


def rules_from_dict(data: Mapping[str, Any]) -> Rules:
    """Rebuild :class:`Rules` from a record's ``rules`` object (or any options mapping)."""
    data = dict(data)
    preset = data.pop("preset", DEFAULT_PRESET)
    return make_rules(preset, **data)
