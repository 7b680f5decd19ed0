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
    """A resolved, validated rule set. Field meanings are those of docs/rules.md."""

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

    @property
    def n_sides(self) -> int:
        return 2 if self.teams else self.players

    def side_of(self, seat: int) -> int:
        return seat % 2 if self.teams else seat

    def to_dict(self) -> dict[str, Any]:
        """The record's ``rules`` object: exactly the options of docs/rules.md, resolved."""
        return {name: getattr(self, name) for name in OPTION_NAMES}


def make_rules(preset: str = DEFAULT_PRESET, **overrides: Any) -> Rules:
    """Resolve ``preset`` plus ``overrides`` into a validated :class:`Rules`."""
    if preset not in PRESETS:
        raise RulesError(f"unknown preset {preset!r}: presets are {', '.join(PRESETS)}")
    unknown = sorted(set(overrides) - set(OPTION_NAMES))
    if unknown:
        raise RulesError(
            f"unknown rule option(s) {', '.join(map(repr, unknown))}: "
            f"options are {', '.join(OPTION_NAMES)}"
        )
    options = {**PRESETS[preset], **{k: v for k, v in overrides.items() if v is not None}}
    players = _int(options.get("players", 2), "players", 2)
    if players not in (2, 3, 4):
        raise RulesError(f"players={players}: players must be 2, 3 or 4")
    teams = options.get("teams", players == 4)
    if not isinstance(teams, bool):
        raise RulesError(f"teams={teams!r}: teams must be true or false")
    if teams and players != 4:
        raise RulesError(f"teams=true needs players=4 (got players={players})")
    for key, allowed in CHOICES.items():
        if options[key] not in allowed:
            raise RulesError(f"{key}={options[key]!r}: allowed values are {', '.join(allowed)}")
    if not isinstance(options["spinner"], bool):
        raise RulesError(f"spinner={options['spinner']!r}: spinner must be true or false")
    rules = Rules(
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
        boneyard_reserve=_int(options["boneyard_reserve"], "boneyard_reserve", 0),
        max_hands=_int(options["max_hands"], "max_hands", 1),
        preset=preset,
    )
    dealt = rules.players * rules.hand_size + rules.boneyard_reserve
    if dealt > N_TILES:
        raise RulesError(
            f"hand_size={rules.hand_size} with players={players} and "
            f"boneyard_reserve={rules.boneyard_reserve} needs {dealt} tiles; the set holds "
            f"{N_TILES}: players * hand_size + boneyard_reserve must be at most {N_TILES}"
        )
    return rules


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


def parse_overrides(items: Iterable[str]) -> dict[str, Any]:
    """``["target=300", "teams=false", "hand_size={2: 7}"]`` -> typed overrides (YAML values)."""
    import yaml

    out: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise RulesError(f"override {item!r} must look like key=value")
        key = key.strip().replace("-", "_")
        if key not in OPTION_NAMES:
            raise RulesError(
                f"unknown rule option {key!r}: options are {', '.join(OPTION_NAMES)}"
            )
        out[key] = yaml.safe_load(raw)
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
