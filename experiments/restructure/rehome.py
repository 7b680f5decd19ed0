"""Move modules into rooms and rewrite every reference to them (issue 63).

    python experiments/restructure/rehome.py                 # moves.json beside this file
    python experiments/restructure/rehome.py --check         # list what it would change
    python experiments/restructure/rehome.py --moves other.json

It reads a mapping (``moves.json``: old dotted module -> new dotted module, the folder of each
installed top-level package, and each new sub-package's docstring) and, from the repository
root:

1. creates each room (``__init__.py`` with its docstring) that is missing;
2. ``git mv``-s each old file whose new file does not exist yet (an already moved file is left
   alone; a tree that has both is reported and skipped);
3. lists every room in pyproject.toml's ``[tool.setuptools] packages``;
4. rewrites the references, in the files git knows (tracked or untracked, not ignored) that end
   in .py, .md, .yml, .yaml, .toml, .cfg or sit in .ci/ -- but in experiments/ only the .py
   files (its .md files are history), and never checkpoints/ nor a file that holds the line
   ``# rehome: keep``:

   * ``from pkg import mod`` where ``pkg.mod`` moved -> ``from newpkg import newmod [as mod]``
     (statements split where some names moved and some did not);
   * every dotted name ``pkg.mod`` (imports, strings such as ``"pkg.mod:Name"``, monkeypatch
     targets, entry points, mkdocs ``::: pkg.mod`` lines, prose) -> its new name;
   * file paths ``folder/mod.py`` -> the new file's path.

   then sorts the imports of the rewritten .py files (``ruff check --select I --fix``).

Every pattern matches old names only, so it is idempotent: a second run changes nothing, and a
run on another branch that still has old names (after a merge, say) fixes those and moves only
the files still in their old place.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[2]
SUFFIXES = {".py", ".md", ".yml", ".yaml", ".toml", ".cfg"}
KEEP_MARK = "# rehome: keep"
FROM_RE = re.compile(r"^(?P<indent>[ \t]*)from\s+(?P<pkg>[\w.]+)\s+import\s")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--moves", type=Path, default=Path(__file__).with_name("moves.json"))
    parser.add_argument("--check", action="store_true", help="list the changes, change nothing")
    args = parser.parse_args(argv)
    spec = json.loads(args.moves.read_text())
    folders: dict[str, str] = spec["packages"]
    moves: dict[str, str] = spec["moves"]
    rooms: dict[str, str] = spec.get("rooms", {})
    changed = make_rooms(rooms, folders, args.check)
    changed += move_files(moves, folders, args.check)
    changed += list_packages(list(rooms) + sorted({m.split(".")[0] for m in moves.values()}),
                             args.check)
    rewritten = rewrite_all(moves, folders, args.check)
    changed += rewritten
    if rewritten and not args.check:
        for rel in rewritten:
            if rel.endswith(".py"):
                wrap_long_lines(ROOT / rel)
        sort_imports([p for p in rewritten if p.endswith(".py")])
    print(f"rehome: {len(changed)} change(s)" + (" (check only)" if args.check else ""))
    return 0


def module_path(dotted: str, folders: dict[str, str]) -> str:
    """The file of a dotted module, relative to the root (``allfives_agents.search`` ->
    ``agents/search.py``)."""
    top, *rest = dotted.split(".")
    return "/".join([folders[top], *rest]) + ".py"


def package_dir(dotted: str, folders: dict[str, str]) -> Path:
    top, *rest = dotted.split(".")
    return ROOT.joinpath(folders[top], *rest)


def make_rooms(rooms: dict[str, str], folders: dict[str, str], check: bool) -> list[str]:
    """Create each missing room's ``__init__.py`` with its docstring."""
    out = []
    for dotted, doc in rooms.items():
        init = package_dir(dotted, folders) / "__init__.py"
        if init.exists():
            continue
        out.append(str(init.relative_to(ROOT)))
        print(f"create {init.relative_to(ROOT)}")
        if not check:
            init.parent.mkdir(parents=True, exist_ok=True)
            init.write_text(room_docstring(doc))
            git("add", str(init))
    return out


def room_docstring(doc: str) -> str:
    """A room's ``__init__.py``: its docstring, wrapped at 96 columns."""
    return '"""' + textwrap.fill(doc, 96, initial_indent="   ")[3:] + '\n"""\n'


def move_files(moves: dict[str, str], folders: dict[str, str], check: bool) -> list[str]:
    """``git mv`` every old file whose new place is still free."""
    out = []
    for old, new in moves.items():
        src, dst = ROOT / module_path(old, folders), ROOT / module_path(new, folders)
        if src.exists() and dst.exists():
            print(f"skip {old}: both {src.relative_to(ROOT)} and {dst.relative_to(ROOT)} exist",
                  file=sys.stderr)
        elif src.exists():
            out.append(str(dst.relative_to(ROOT)))
            print(f"move {src.relative_to(ROOT)} -> {dst.relative_to(ROOT)}")
            if not check:
                dst.parent.mkdir(parents=True, exist_ok=True)
                git("mv", str(src), str(dst))
    return out


def list_packages(packages: list[str], check: bool) -> list[str]:
    """Add the missing ones to pyproject.toml's ``[tool.setuptools] packages``."""
    path = ROOT / "pyproject.toml"
    text = path.read_text()
    listed = tomllib.loads(text)["tool"]["setuptools"]["packages"]
    missing = [p for p in dict.fromkeys(packages) if p not in listed]
    if not missing:
        return []
    print(f"pyproject.toml: list packages {', '.join(missing)}")
    if check:
        return ["pyproject.toml"]
    block = re.search(r"(?ms)^\[tool\.setuptools\]\s*\npackages = \[(.*?)\]", text)
    assert block, "pyproject.toml has no [tool.setuptools] packages list"
    names = [*listed, *missing]
    lines, line = [], "   "
    for name in names:
        item = f' "{name}",'
        if len(line) + len(item) > 96:
            lines.append(line)
            line = "   "
        line += item
    lines.append(line)
    path.write_text(text[:block.start(1)] + "\n" + "\n".join(lines) + "\n" + text[block.end(1):])
    return ["pyproject.toml"]


def candidate_files() -> list[Path]:
    """The files whose references are rewritten (see the module's docstring)."""
    listing = git("ls-files", "-co", "--exclude-standard", capture=True).splitlines()
    out = []
    for rel in listing:
        path = ROOT / rel
        top = rel.split("/")[0]
        if top in ("checkpoints", "site") or not path.is_file():
            continue
        if top == "experiments" and not rel.endswith(".py"):
            continue
        if path.suffix in SUFFIXES or top == ".ci":
            out.append(path)
    return out


def rewrite_all(moves: dict[str, str], folders: dict[str, str], check: bool) -> list[str]:
    dotted = [(re.compile(r"(?<![\w.])" + re.escape(old) + r"(?!\w)"), new)
              for old, new in sorted(moves.items(), key=lambda kv: -len(kv[0]))]
    paths = [(re.compile(r"(?<![\w.-])" + re.escape(module_path(old, folders)) + r"(?!\w)"),
              module_path(new, folders)) for old, new in moves.items()]
    out = []
    for path in candidate_files():
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        if KEEP_MARK in text:
            continue
        new = rewrite_from_imports(text, moves)
        for pattern, repl in dotted:
            new = pattern.sub(repl, new)
        for pattern, repl in paths:
            new = pattern.sub(repl, new)
        if new != text:
            rel = str(path.relative_to(ROOT))
            out.append(rel)
            print(f"rewrite {rel}")
            if not check:
                path.write_text(new)
    return out


def rewrite_from_imports(text: str, moves: dict[str, str]) -> str:
    """``from pkg import mod, other`` where ``pkg.mod`` moved: one statement per new parent."""
    parents = {old.rpartition(".")[0] for old in moves}
    lines = text.split("\n")
    i, out = 0, []
    while i < len(lines):
        match = FROM_RE.match(lines[i])
        if not match or match["pkg"] not in parents:
            out.append(lines[i])
            i += 1
            continue
        end = i
        if "(" in lines[i] and ")" not in lines[i]:
            while end + 1 < len(lines) and ")" not in lines[end]:
                end += 1
        statement = "\n".join(line.strip() for line in lines[i:end + 1])
        try:
            node = ast.parse(statement).body[0]
        except (SyntaxError, IndexError):
            out.append(lines[i])
            i += 1
            continue
        assert isinstance(node, ast.ImportFrom)
        replaced = split_import(node, moves, match["indent"])
        comment = re.search(r"\s+#.*$", lines[end]) if end == i else None
        if replaced is not None and comment:  # keep a trailing noqa comment on every statement
            replaced = [line + comment.group() if line.startswith(match["indent"] + "from ")
                        and line.endswith(tuple("abcdefghijklmnopqrstuvwxyz0123456789_"))
                        else line for line in replaced]
        out.extend(replaced if replaced is not None else lines[i:end + 1])
        i = end + 1
    return "\n".join(out)


def split_import(node: ast.ImportFrom, moves: dict[str, str], indent: str) -> list[str] | None:
    """The statements that replace ``node``; None when none of its names moved."""
    pkg = node.module or ""
    groups: dict[str, list[str]] = {}
    moved = False
    for alias in node.names:
        new = moves.get(f"{pkg}.{alias.name}")
        if new is None:
            groups.setdefault(pkg, []).append(
                alias.name + (f" as {alias.asname}" if alias.asname else ""))
            continue
        moved = True
        parent, _, leaf = new.rpartition(".")
        shown = alias.asname or alias.name
        groups.setdefault(parent, []).append(leaf if shown == leaf else f"{leaf} as {shown}")
    if not moved:
        return None
    lines = []
    for parent, names in groups.items():
        one = f"{indent}from {parent} import {', '.join(names)}"
        if len(one) <= 100:
            lines.append(one)
        else:
            lines += [f"{indent}from {parent} import (",
                      *[f"{indent}    {n}," for n in names], f"{indent})"]
    return lines


def wrap_long_lines(path: Path, width: int = 100) -> None:
    """Split the comment and docstring lines that a longer name pushed past ``width``: the
    words past it go to a new line with the same indent (and ``# `` for a comment)."""
    lines = path.read_text().split("\n")
    in_doc, out = False, []
    for line in lines:
        stripped = line.strip()
        starts_doc = not in_doc and stripped.startswith(('"""', 'r"""'))
        is_doc = in_doc or starts_doc
        while len(line) > width and (is_doc or stripped.startswith("#")):
            cut = line.rfind(" ", 0, width + 1)
            indent = line[:len(line) - len(line.lstrip())]
            if cut <= len(indent) + 4:
                break
            prefix = indent + ("# " if stripped.startswith("#") else "")
            out.append(line[:cut].rstrip())
            line = prefix + line[cut + 1:]
        out.append(line)
        quotes = stripped.count('"""')
        if is_doc and (quotes % 2 == 1):
            in_doc = not in_doc
    path.write_text("\n".join(out))


def sort_imports(files: list[str]) -> None:
    """Let ruff put the rewritten imports back in order (skipped without ruff)."""
    if files:
        subprocess.run([sys.executable, "-m", "ruff", "check", "--select", "I", "--fix",
                        "--quiet", *files], cwd=ROOT, check=False)


def git(*args: str, capture: bool = False) -> str:
    done = subprocess.run(["git", *args], cwd=ROOT, check=True, text=True,
                          capture_output=capture)
    return done.stdout if capture else ""


if __name__ == "__main__":
    sys.exit(main())
