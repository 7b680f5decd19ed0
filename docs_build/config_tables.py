"""The tables of ``allfives train``'s config fields in docs/training.md, from the dataclasses'
docstrings: ``python docs_build/config_tables.py`` rewrites the lines between the markers
``<!-- config tables -->`` and ``<!-- /config tables -->``; ``--check`` exits 1 where they
differ (tests/test_train_config.py runs the check)."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

DOC = Path(__file__).resolve().parent.parent / "docs" / "training.md"
START, END = "<!-- config tables -->", "<!-- /config tables -->"
#: The game's flags, the same in every command (not ``--<field>``).
GAME_FLAGS = {"teams": "--teams/--no-teams", "rules_file": "--rules FILE",
              "rules": "--set OPTION=VALUE"}


def _shown(value: Any) -> str:
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        return ", ".join(f"{v['agent']}@{v.get('weight', 1.0):g}" for v in value)
    if value is None:
        return "null"
    return str(value).lower() if isinstance(value, bool) else str(value)


def _row(name: str, flag: str, default: Any, doc: str) -> str:
    text = re.sub(r"``([^`]+)``", r"`\1`", doc).replace("|", "\\|")
    shown = GAME_FLAGS.get(flag, "--" + flag.replace("_", "-"))
    return f"| `{name}` | `{shown}` | `{_shown(default)}` | {text} |"


def tables() -> str:
    """The markdown of every table: the shared fields, then each section's."""
    from allfives_train import algos
    from allfives_train.config import field_help, flat_fields

    head = ["| field | flag | default | meaning |", "|---|---|---|---|"]
    spots = flat_fields()
    out = ["#### Shared fields", "", *head]
    out += [_row(n, n, s.default(), field_help(n)) for n, s in spots.items() if s.section is None]
    for key, section in algos.sections().items():
        readers = ", ".join(a.name for a in algos.ALGOS.values() if section in a.sections)
        out += ["", f"#### `{key}:` {section.summary}", "",
                f"Read by {readers}.", "", *head]
        for field in section.fields():
            flat = section.flat(field)
            out.append(_row(section.dotted(field), flat, spots[flat].default(), field_help(flat)))
    return "\n".join(out)


def rewrite(check: bool) -> int:
    text = DOC.read_text()
    before, rest = text.split(START, 1)
    _, after = rest.split(END, 1)
    new = f"{before}{START}\n{tables()}\n{END}{after}"
    if check:
        return 0 if new == text else 1
    DOC.write_text(new)
    return 0


if __name__ == "__main__":
    sys.exit(rewrite("--check" in sys.argv))
