"""One game config: the preset, seats, teams, a rules file and rule overrides -> :class:`Rules`.

Every command and both training backends describe the game they play with a
:class:`GameConfig`, and every command line spells it with the same flags
(:func:`add_game_arguments`)::

    --preset five_up --players 4 --no-teams --rules configs/rules/muggins.yaml --set target=300

The precedence is fixed: the preset (``--preset``, else the rules file's ``preset:``, else
``all_fives``), then the rules file's options, then ``--players`` and ``--teams/--no-teams``,
then each ``--set OPTION=VALUE``. A config is validated when it is built: a bad option,
value or combination raises :class:`~allfives_env.game.rules.RulesError` naming it.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Mapping
from typing import Any

from allfives_env.game.rules import (
    DEFAULT_PRESET,
    PRESETS,
    Rules,
    RulesError,
    load_rules_yaml,
    make_rules,
    parse_overrides,
)
from allfives_env.inputs.safeyaml import shorten


@dataclasses.dataclass(frozen=True)
class GameConfig:
    """The game a command plays. ``None`` fields are not given (the preset decides)."""

    preset: str | None = None
    """Rule preset: all_fives, five_up, muggins or pagat (docs/rules.md)."""
    players: int | None = None
    """Seats at the table: 2, 3 or 4 (default 2)."""
    teams: bool | None = None
    """4 seats only: partnerships 0+2 against 1+3 (default: the preset's, true with 4)."""
    rules_file: str | None = None
    """A rules YAML file (``preset:`` plus options), applied after the preset."""
    overrides: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    """Rule options applied last, e.g. ``{"target": 300}``."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "overrides", dict(self.overrides))
        object.__setattr__(self, "_rules", self._build())

    @property
    def rules(self) -> Rules:
        """The resolved rules (built and checked once, when the config was made)."""
        return self._rules  # type: ignore[attr-defined]

    def _build(self) -> Rules:
        options: dict[str, Any] = {}
        if self.rules_file is not None:
            options = dict(load_rules_yaml(self.rules_file))
        file_preset = options.pop("preset", None)
        preset = self.preset or file_preset or DEFAULT_PRESET
        if not isinstance(preset, str) or preset not in PRESETS:
            raise RulesError(f"unknown preset {shorten(preset)}: presets are {', '.join(PRESETS)}")
        if self.players is not None:
            options["players"] = self.players
        if self.teams is not None:
            options["teams"] = self.teams
        unknown = [k for k in self.overrides if not isinstance(k, str)]
        if unknown:
            raise RulesError(f"rule option names must be strings (got {shorten(unknown[0])})")
        options.update(self.overrides)
        return make_rules(preset, **options)

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> GameConfig:
        """The config that :func:`add_game_arguments`' flags describe."""
        return cls(preset=args.preset, players=args.players, teams=args.teams,
                   rules_file=args.rules, overrides=parse_overrides(args.overrides))


def add_game_arguments(parser: argparse.ArgumentParser | Any) -> None:
    """The game flags every command shares (a parser or an argument group)."""
    parser.add_argument("--preset", choices=sorted(PRESETS), default=None,
                        help="rule preset (default: the --rules file's, else all_fives)")
    parser.add_argument("--players", type=int, default=None, help="2, 3 or 4 seats (default 2)")
    parser.add_argument("--teams", action=argparse.BooleanOptionalAction, default=None,
                        help="4 seats: partnerships 0+2 against 1+3 (default: the preset's)")
    parser.add_argument("--rules", metavar="FILE", default=None,
                        help="a rules YAML file (preset: plus options), e.g. "
                             "configs/rules/muggins.yaml")
    parser.add_argument("--set", metavar="OPTION=VALUE", action="append", default=[],
                        dest="overrides", help="set one rule option (repeatable), e.g. "
                        "--set target=300 --set win_check=end_of_hand (docs/rules.md)")


def rules_from_args(args: argparse.Namespace) -> Rules:
    """:func:`add_game_arguments`' flags -> :class:`Rules`."""
    return GameConfig.from_args(args).rules
