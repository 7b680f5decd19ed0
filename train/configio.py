"""Loading a config dataclass from YAML plus overrides, with every value type-checked, and
the game fields every training config shares (:class:`GameFields`).

Used by the training config (:mod:`allfives_train.config`: every algo's, the RLlib backend's
too) and by the checks that read a run's game back (:func:`load_dataclass` of
:class:`GameFields`).
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

from allfives_env.game.gameconfig import GameConfig
from allfives_env.inputs.safeyaml import load_yaml, load_yaml_file, shorten
from allfives_train.sections import Section, flatten

C = TypeVar("C")


@dataclasses.dataclass
class GameFields:
    """The game a training run plays: the fields of :class:`GameConfig`, one per flag
    (``--preset``, ``--players``, ``--teams/--no-teams``, ``--rules FILE``,
    ``--set OPTION=VALUE``), the same flags as every other command."""

    preset: str | None = "all_fives"
    """Rule preset (docs/rules.md): all_fives, five_up, muggins, pagat; null: the rules
    file's preset, else all_fives (``--rules FILE`` without ``--preset`` sets it null)."""
    players: int = 2
    """Seats at the table: 2, 3 or 4."""
    teams: bool | None = None
    """Partnerships 0+2 against 1+3 (4 seats only); null: the preset's choice."""
    rules_file: str | None = None
    """A rules YAML file (preset: plus options) applied after the preset (``--rules FILE``)."""
    rules: dict[str, Any] = dataclasses.field(default_factory=dict)
    """Rule options applied last, e.g. ``{target: 150}`` (``--set OPTION=VALUE``)."""

    def game(self) -> GameConfig:
        """The game config of these fields (validated: RulesError, a ValueError, if bad)."""
        if "players" in self.rules or "teams" in self.rules:
            raise ValueError("config rules: set players and teams as their own fields "
                             "(--players, --teams), not under rules")
        return GameConfig(self.preset, self.players, self.teams, self.rules_file, self.rules)


def coerce(cls: type, name: str, value: Any, label: str = "config",
           shown: str | None = None) -> Any:
    """Type-check a YAML/CLI value against the annotation of ``cls.name`` (ValueError if wrong,
    naming the field as ``shown``, else ``name``); ints are accepted for floats, bools never
    for ints."""
    hint = typing.get_type_hints(cls)[name]
    origin = typing.get_origin(hint)
    options = typing.get_args(hint) if origin in (typing.Union, types.UnionType) else (hint,)
    for option in options:
        base = typing.get_origin(option) or option
        if option is type(None) and value is None:
            return None
        if base is float and isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        if base is int and isinstance(value, bool):
            continue
        if base is not type(None) and isinstance(value, base):
            return value
    expected = hint.__name__ if isinstance(hint, type) else str(hint)  # bool, not <class ...>
    raise ValueError(f"{label} {shown or name}={shorten(value)}: expected {expected}")


GAME_FIELDS = ("preset", "players", "teams", "rules_file", "rules")


def game_changes(args: Any, rules: dict[str, Any], fields: Iterable[str] = ()) -> dict[str, Any]:
    """The game flags as field changes: ``--preset``, ``--players``, ``--teams``, ``--rules
    FILE`` replace their fields; each ``--set OPTION=VALUE`` is added to ``rules`` (the
    config's rule options). A ``--set`` of one of the config's ``fields`` is refused, naming
    that field's own flag."""
    from allfives_env.game.rules import parse_overrides

    for item in getattr(args, "overrides", None) or []:
        key, _, value = str(item).partition("=")
        if key.strip() in set(fields) - {"players", "teams"}:
            flag = "--" + key.strip().replace("_", "-")
            raise ValueError(f"--set {item}: {key.strip()} is a config field, not a rule "
                             f"option: use {flag} {value.strip() or 'VALUE'}")
    changes: dict[str, Any] = {}
    for name, dest in (("preset", "preset"), ("players", "players"), ("teams", "teams"),
                       ("rules_file", "rules")):
        if getattr(args, dest, None) is not None:
            changes[name] = getattr(args, dest)
    if "rules_file" in changes and "preset" not in changes:
        changes["preset"] = None  # as in every command: the file's preset, unless --preset
    sets = parse_overrides(getattr(args, "overrides", None) or [])
    for name in ("players", "teams"):  # as in every command: --set players=3 is --players 3
        if name in sets:
            changes[name] = sets.pop(name)
    if sets:
        changes["rules"] = {**rules, **sets}
    return changes


def parse_opponents(items: list[str]) -> list[dict[str, Any]]:
    """``["greedy@1", "ckpt:x@2", "snapshots"]`` -> pool entries (weight 1 when omitted)."""
    out = []
    for item in items:
        agent, sep, weight = item.rpartition("@")
        if not sep:
            agent, weight = item, "1"
        try:
            value = float(weight)
        except ValueError:
            raise ValueError(f"--opponents {item!r}: the weight after @ must be a number "
                             "(e.g. greedy@2)") from None
        out.append({"agent": agent, "weight": value})
    return out


MAX_EXTENDS = 8  # how deep ``extends:`` chains may go
SHIPPED_CONFIG_FOLDERS = ("train", "recipes")  # where a bare ``extends:`` name is looked up


def extends_path(folder: Path, base: str, where: str = "config") -> Path:
    """The file an ``extends: base`` written in ``folder`` names: ``folder / base`` when that
    exists, else a shipped config of that name (``configs/train/``, then ``configs/recipes/``,
    found by :func:`allfives_env.inputs.shipped.shipped_dir`, so ``extends: default.yaml`` works
    from
    a user's own folder and when installed). ValueError naming both places if neither exists."""
    from allfives_env.inputs.shipped import shipped_dir

    beside = (folder / base).resolve()
    if beside.is_file():
        return beside
    shipped = shipped_dir("configs")
    for sub in SHIPPED_CONFIG_FOLDERS:
        candidate = (shipped / sub / base).resolve()
        if candidate.is_file():
            return candidate
    places = ", ".join(str(shipped / sub) for sub in SHIPPED_CONFIG_FOLDERS)
    raise ValueError(f"{where}: extends {base!r}: no such file beside it ({beside}) nor among "
                     f"the shipped configs ({places})")


Rename = Callable[[dict[str, Any]], dict[str, Any]]


def renamer(old_names: tuple[tuple[str, str], ...], homes: set[str],
            moved: dict[str, str]) -> Rename:
    """What reads one mapping (a file's own, or overrides) with its top-level ``old`` names
    as their ``new`` ones, recording each in ``moved``. A mapping that holds one of the
    sections ``homes`` or one of the ``new`` names (a config written since the rename, a
    flag of the new names) is read as it is."""
    news = {new for _, new in old_names}

    def rename(data: dict[str, Any]) -> dict[str, Any]:
        if (homes | news) & set(data):
            return data
        out = dict(data)
        for old, new in old_names:
            if old in out:
                out[new] = out.pop(old)
                moved[old] = new
        return out

    return rename


def read_mapping(path: Path, label: str = "config", chain: tuple[Path, ...] = (),
                 sections: dict[str, Section[Any]] | None = None,
                 rename: Rename | None = None) -> dict[str, Any]:
    """The YAML mapping at ``path``. A mapping with ``extends: FILE`` (relative to ``path``'s
    folder, else a shipped config of that name: :func:`extends_path`) is that file's mapping
    updated by this one's fields, so a config can be a few lines over the recipe it varies (a
    ``rules`` mapping is merged key by key). With ``sections`` (the training config's), each
    file's own mapping has them by their flat names before the merge (:func:`flatten`); with
    ``rename``, each file's own mapping goes through it first (old names read as new ones)."""
    data = load_yaml_file(path, label) or {}  # size cap, no aliases, bounded nesting
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a {label} is a mapping of field: value")
    base = data.pop("extends", None)
    if rename is not None:
        data = rename(data)
    if sections is not None:
        data = flatten(data, sections, str(path))
    if base is None:
        return data
    if not isinstance(base, str) or not base:
        raise ValueError(f"{path}: extends must be the path of another {label} file")
    parent = extends_path(path.parent, base, str(path))
    if parent in chain or len(chain) >= MAX_EXTENDS:
        raise ValueError(f"{path}: extends {base!r} makes a loop or a chain over "
                         f"{MAX_EXTENDS} files")
    values = read_mapping(parent, label, (*chain, path.resolve()), sections, rename)
    if isinstance(values.get("rules"), dict) and isinstance(data.get("rules"), dict):
        data["rules"] = {**values["rules"], **data["rules"]}
    values.update(data)
    return values


def load_dataclass(cls: type[C], path: str | Path | None, overrides: dict[str, Any] | None,
                   label: str = "config", game_args: Any = None) -> C:
    """``cls``'s defaults, updated by the YAML mapping at ``path``, then by ``overrides``,
    then by the game flags in ``game_args`` (:func:`game_changes`), checked once, as a
    whole."""
    values = gather_values(cls, path, overrides, label, game_args)
    check_known(cls, values, label)
    return cls(**coerce_values(cls, values, label))


def gather_values(cls: type, path: str | Path | None, overrides: dict[str, Any] | None,
                  label: str = "config", game_args: Any = None,
                  sections: dict[str, Section[Any]] | None = None,
                  rename: Rename | None = None) -> dict[str, Any]:
    """The values set for ``cls``: the YAML mapping at ``path`` (with ``sections`` flattened
    and ``rename`` applied in each file: :func:`read_mapping`), then ``overrides``, then the
    game flags in ``game_args`` (:func:`game_changes`); not checked yet."""
    values: dict[str, Any] = (read_mapping(Path(path), label, sections=sections, rename=rename)
                              if path is not None else {})
    values.update(overrides or {})
    if game_args is not None:
        rules = values.get("rules")
        fields = [f.name for f in dataclasses.fields(cls)]
        values.update(game_changes(game_args, rules if isinstance(rules, dict) else {}, fields))
    return values


def check_known(cls: type, values: dict[str, Any], label: str = "config") -> None:
    """A ValueError in one line naming each key of ``values`` that is no field of ``cls``."""
    fields = [f.name for f in dataclasses.fields(cls)]
    unknown = sorted(set(values) - set(fields))
    if unknown:
        raise ValueError(unknown_fields(unknown, fields, label))


def coerce_values(cls: type, values: dict[str, Any], label: str = "config") -> dict[str, Any]:
    """Each value type-checked against its field of ``cls`` (:func:`coerce`)."""
    return {k: coerce(cls, k, v, label) for k, v in values.items()}


def unknown_fields(unknown: list[str], fields: list[str], label: str = "config") -> str:
    """One line naming each unknown field and the 1-3 closest field names (difflib)."""
    import difflib

    parts = []
    for name in unknown:
        close = difflib.get_close_matches(str(name), fields, n=3, cutoff=0.6)
        hint = f"did you mean {' or '.join(close)}?" if close else "no field is close"
        parts.append(f"{name} ({hint})")
    return (f"unknown {label} field(s) {', '.join(parts)}; "
            "`allfives train --help-config` lists every field")


def field_docs(cls: type) -> dict[str, str]:
    """Each field's docstring: the string literal written under it in the class body."""
    import ast
    import inspect

    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__):  # base classes first, so subclasses may redefine
        if not dataclasses.is_dataclass(klass):
            continue
        body = ast.parse(inspect.getsource(klass)).body[0].body  # type: ignore[attr-defined]
        for node, nxt in zip(body, body[1:], strict=False):
            if isinstance(node, ast.AnnAssign) and isinstance(nxt, ast.Expr) \
                    and isinstance(nxt.value, ast.Constant) and isinstance(node.target, ast.Name):
                docs[node.target.id] = " ".join(str(nxt.value.value).split())
    return docs


def add_field_flag(group: Any, cls: type, field: dataclasses.Field, help_text: str, dest: str,
                   metavars: dict[str, str], name: str | None = None) -> None:
    """``--<name>`` for one config field of ``cls`` (``name``: the field's flat name, by
    default its own): YAML-typed values, ``--x/--no-x`` for plain bools, ``nargs="+"`` for
    lists; ``metavars`` names list fields with a syntax of their own."""
    import argparse

    name = name or field.name
    flag = "--" + name.replace("_", "-")
    default = field.default_factory() if callable(field.default_factory) else field.default
    text = f"{help_text} (default {default!r})".replace("%", "%%")
    hint = typing.get_type_hints(cls)[field.name]
    common = {"dest": dest, "default": argparse.SUPPRESS, "help": text}
    if hint is bool:
        group.add_argument(flag, action=argparse.BooleanOptionalAction, **common)
    elif name in metavars:
        group.add_argument(flag, nargs="+", metavar=metavars[name], **common)
    elif typing.get_origin(hint) is list:
        group.add_argument(flag, nargs="+", type=_flag_value, **common)
    else:
        group.add_argument(flag, type=_flag_value, metavar=name.upper(), **common)


def _flag_value(text: str) -> Any:
    """A config flag's value, read as YAML (no aliases, bounded nesting); argparse turns the
    ArgumentTypeError into one usage line and exit 2."""
    import argparse

    try:
        return load_yaml(text, "value")
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
