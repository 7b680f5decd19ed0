"""Reading an untrusted model card (``card.json``): bounded, and every field used type-checked.

A card is read with at most :data:`MAX_CARD_BYTES` bytes (1 MiB; shipped cards are under
40 KiB) and :data:`~allfives_env.inputs.safeyaml.MAX_DEPTH` levels of nesting, and the fields the
program uses are checked before any is used: ``players`` an integer 2..4, ``teams`` true or
false, ``rules`` a mapping, ``policy`` a mapping whose ``hidden`` is a list of integers,
``policy_file`` a plain file name inside the checkpoint folder. Anything else is one
``ValueError`` line naming the field and what is allowed.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from allfives_env.inputs.safeyaml import load_json, read_text, shorten

#: The largest ``card.json`` read.
MAX_CARD_BYTES = 1 << 20
POLICY_FILE = "policy.npz"


def read_card_json(path: Path, where: str) -> Any:
    """The JSON document in the card at ``path``, within the size and nesting caps."""
    text = read_text(path, path.name, MAX_CARD_BYTES)
    return load_json(text, f"checkpoint {where}: unreadable {path.name}")


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _hidden_ok(policy: Any) -> bool:
    hidden = policy.get("hidden", []) if isinstance(policy, dict) else None
    return isinstance(hidden, list) and all(_is_int(n) for n in hidden)


#: field -> (check, what is allowed); a missing optional field is not checked.
FIELDS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "players": (lambda v: _is_int(v) and v in (2, 3, 4), "an integer 2, 3 or 4"),
    "teams": (lambda v: isinstance(v, bool) or v is None, "true or false"),
    "rules": (lambda v: isinstance(v, dict) or v is None, "a mapping of rule options"),
    "policy": (lambda v: isinstance(v, dict) and _hidden_ok(v),
               "a mapping whose hidden is a list of integers"),
    "policy_file": (lambda v: isinstance(v, str), "a file name such as policy.npz"),
}
REQUIRED = ("players",)


def check_card_fields(card: dict[str, Any], where: str) -> None:
    """One-line ``ValueError`` for a missing required field or a field of the wrong type."""
    for name in REQUIRED:
        if name not in card:
            raise ValueError(f"checkpoint {where}: card.json has no {name!r} field: it must be "
                             f"{FIELDS[name][1]}")
    for name, (ok, allowed) in FIELDS.items():
        if name in card and not ok(card[name]):
            raise ValueError(f"checkpoint {where}: card.json field {name!r} is "
                             f"{shorten(card[name])}: it must be {allowed}")


def policy_path(directory: Path, card: dict[str, Any]) -> Path:
    """The card's ``policy_file`` (default ``policy.npz``) in ``directory``: a plain file
    name, no path separator, no ``..``, not absolute, and resolving inside the folder."""
    name = card.get("policy_file", POLICY_FILE)
    where = repr(str(directory))
    plain = isinstance(name, str) and name not in ("", ".", "..") and "/" not in name \
        and "\\" not in name and "\0" not in name and not Path(name).is_absolute()
    if plain:
        try:
            folder = directory.resolve()
            plain = (folder / name).resolve().parent == folder
        except (OSError, RuntimeError, ValueError):
            plain = False
    if not plain:
        raise ValueError(f"checkpoint {where}: card.json field 'policy_file' is "
                         f"{shorten(name)}: it must be a plain file name inside the checkpoint "
                         f"folder, such as {POLICY_FILE}")
    return directory / name
