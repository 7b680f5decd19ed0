"""Rewrite flat training configs (configs/train/*.yaml) with their sections nested, keeping
comments: ``python experiments/restructure/sectioned.py FILE...`` (``--check``: exit 1 where a
file would change). A section field's line (and the lines that continue it) moves under its
section's key, in the order of the algo's row; a field of a section that the algo does not
read is dropped when it holds the implied default (``bc_teacher: null``), else kept flat and
named. The file then loads to the same config (checked)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from allfives_train import algos
from allfives_train.config import flat_fields, implied_defaults, load_config

KEY = re.compile(r"^([a-z_]+):(.*)$")


def items(lines: list[str]) -> tuple[list[str], list[tuple[str, list[str]]]]:
    """The header (comments before the first field) and each field with its lines."""
    head: list[str] = []
    out: list[tuple[str, list[str]]] = []
    for line in lines:
        match = KEY.match(line)
        if match:
            out.append((match.group(1), [line]))
        elif out and (line.startswith((" ", "-")) or not line.strip()):
            out[-1][1].append(line)
        elif out:  # a comment between fields: it belongs to the next one
            out.append(("#", [line]))
        else:
            head.append(line)
    return head, out


def sectioned(path: Path) -> str:
    before = load_config(path)
    row = algos.get(before.algo)
    spots = flat_fields()
    head, fields = items(path.read_text().splitlines())
    implied = implied_defaults({"algo": before.algo})
    shared: list[str] = []
    nested: dict[str, list[str]] = {s.key: [] for s in row.sections}
    for name, lines in fields:
        spot = spots.get(name)
        if spot is None or spot.section is None:
            shared += lines
        elif spot.section.key in nested:
            first = spot.section.key and re.sub(r"^[a-z_]+:", f"{spot.attr}:", lines[0])
            nested[spot.section.key] += ["  " + first, *("  " + x if x else x for x in lines[1:])]
        elif name in implied and implied[name] == before.value(name):
            continue
        else:
            print(f"{path}: {name} is not read by algo {before.algo}; kept flat")
            shared += lines
    out = head + shared
    for key, lines in nested.items():
        if lines:
            out += [f"{key}:", *lines]
    text = "\n".join(out) + "\n"
    return text


def main(argv: list[str]) -> int:
    check = "--check" in argv
    changed = 0
    for name in (a for a in argv if a != "--check"):
        path = Path(name)
        text = sectioned(path)
        if text == path.read_text():
            continue
        changed += 1
        if not check:
            before = load_config(path)
            path.write_text(text)
            assert load_config(path) == before, path
            print(f"{path}: sectioned")
    return 1 if check and changed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
