"""docs/architecture.md matches the tree: each room's table names files that exist, every module
of ``allfives``, ``allfives_env`` and ``allfives_agents`` is named in its folder's table, and
every file path the page names (``allfives_env/game/rules.py``, ...) exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
#: The folders whose every module the page must name.
COMPLETE = ("allfives", "allfives_env", "agents", "train")
HEADING = re.compile(r"^### `(?P<folder>[\w/]+)/`", re.M)
PATH = re.compile(r"`([\w./-]+/[\w.-]+\.(?:py|ya?ml|md|json))`")


def rooms(text: str | None = None) -> dict[str, set[str]]:
    """Each ``### `folder/` `` section of the page -> the file names its table's first column
    holds."""
    text = DOC.read_text() if text is None else text
    marks = list(HEADING.finditer(text))
    out: dict[str, set[str]] = {}
    for mark, after in zip(marks, [*marks[1:], None]):
        body = text[mark.end():after.start() if after else len(text)]
        names: set[str] = set()
        for line in body.splitlines():
            if line.startswith("| `"):
                first = line.split("|")[1]
                names |= set(re.findall(r"`([\w.]+\.(?:py|yaml))`", first))
        out[mark["folder"]] = names
    return out


def test_every_file_a_room_names_exists() -> None:
    found = rooms()
    assert {"allfives", "allfives_env/game", "agents/planning", "train"} <= set(found)
    missing = [f"{folder}/{name}" for folder, names in found.items() for name in names
               if not (ROOT / folder / name).is_file()]
    assert not missing, f"docs/architecture.md names files that do not exist: {missing}"


def test_every_module_is_named_in_its_room() -> None:
    found = rooms()
    unnamed = []
    for top in COMPLETE:
        for init in (ROOT / top).rglob("__init__.py"):
            folder = str(init.parent.relative_to(ROOT))
            if folder not in found:
                unnamed.append(f"{folder}/ (no section)")
                continue
            unnamed += [f"{folder}/{p.name}" for p in sorted(init.parent.glob("*.py"))
                        if p.name != "__init__.py" and p.name not in found[folder]]
    assert not unnamed, f"modules docs/architecture.md does not name: {unnamed}"


def test_every_path_the_page_names_exists() -> None:
    """The "where to add" lists and the prose name files by path; each one exists (a
    placeholder such as ``<name>`` or a glob is not a path)."""
    paths = {p for p in PATH.findall(DOC.read_text()) if "<" not in p and "*" not in p}
    assert len(paths) > 30
    missing = sorted(p for p in paths if not (ROOT / p).exists())
    assert not missing, f"docs/architecture.md names paths that do not exist: {missing}"


def test_the_reader_sees_every_name_of_a_row() -> None:
    """A row naming two files gives both (so a missing one would be caught above)."""
    page = ("### `allfives_env/game/`\n\n| file | what |\n|---|---|\n"
            "| `tiles.py`, `nowhere.py` | see `engine.py` |\n\n"
            "### `allfives/`\n\n| `cli.py` | y |\n")
    assert rooms(page) == {"allfives_env/game": {"tiles.py", "nowhere.py"}, "allfives": {"cli.py"}}
