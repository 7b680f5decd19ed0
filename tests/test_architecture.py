"""The layers: ``allfives_env`` <- ``agents`` <- ``train``. No module imports a layer above its
own (at any point: function-level imports count too), and no import cycle exists between the
project's modules. The CLI dispatches subcommands by module name, which is not an import."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAYERS = {"allfives_env": 0, "allfives_agents": 1, "allfives_train": 2}
FOLDERS = {"allfives_env": "allfives_env", "allfives_agents": "agents", "allfives_train": "train"}


def _modules() -> dict[str, Path]:
    out = {}
    for package, folder in FOLDERS.items():
        for path in (ROOT / folder).rglob("*.py"):
            parts = (package, *path.relative_to(ROOT / folder).with_suffix("").parts)
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            out[name] = path
    return out


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The project modules ``name`` imports (any import statement anywhere in the file)."""
    found = set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text())):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            subs = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in known]
            targets = subs or [base]  # ``from pkg import submodule`` imports the submodule
        for t in targets:
            while t and t not in known:
                t = t.rpartition(".")[0]
            if t and t != name:
                found.add(t)
    return found


def _graph() -> dict[str, set[str]]:
    mods = _modules()
    return {name: _imports(name, path, set(mods)) for name, path in mods.items()}


def _layer(module: str) -> int:
    return LAYERS[module.split(".")[0]]


def test_imports_point_down_the_layers() -> None:
    upward = sorted(f"{m} imports {t}" for m, targets in _graph().items() for t in targets
                    if _layer(t) > _layer(m))
    assert not upward, "imports that point up a layer:\n" + "\n".join(upward)


def test_no_import_cycles() -> None:
    graph = _graph()
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, [*stack, nxt])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_the_checker_sees_a_planted_upward_import(tmp_path: Path) -> None:
    """The walk would catch an upward import (and a cycle) if one were written."""
    path = tmp_path / "engine.py"
    path.write_text("def f():\n    from allfives_train.ppo import train\n"
                    "    import allfives_agents.base\n")
    known = set(_modules())
    assert _imports("allfives_env.game.engine", path, known) == {"allfives_train.ppo",
                                                            "allfives_agents.base"}


def test_the_product_never_reaches_into_the_lab() -> None:
    """``experiments/`` (studies, their outputs, ancestors and candidate models) is apart: no
    product module imports it or names a path in it, and the wheel lists no lab package."""
    import tomllib

    offenders = []
    for path in _modules().values():
        text = path.read_text()
        tree = ast.parse(text)
        for node in ast.walk(tree):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            offenders += [f"{path.name} imports {n}" for n in names
                          if n.split(".")[0] in ("experiments", "results")]
        if "experiments/" in text:
            offenders.append(f"{path.relative_to(ROOT)} names a path in experiments/")
    assert not offenders, offenders
    setup = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert not [p for p in setup["packages"] if p.split(".")[0] in ("experiments", "results")]
    assert not (ROOT / "results").exists()


def test_no_import_hidden_behind_importlib() -> None:
    """A module named by a string literal to importlib would hide an import (and a cycle)
    from the checks above; only registries (agent modules by name, CLI subcommands, batched
    versions as ``module:attribute`` data) load modules by name."""
    hidden = []
    for path in _modules().values():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "import_module" \
                    and node.args and isinstance(node.args[0], ast.Constant):
                hidden.append(f"{path.relative_to(ROOT)}: import_module({node.args[0].value!r})")
    assert not hidden, hidden


def test_the_fast_path_imports_no_stable_baselines3() -> None:
    """The CleanRL-style loops (ppo_batched, dmc, search_distill, recipes) and their one hook
    system run without SB3: only the MaskablePPO path and its callback adapters import it."""
    import subprocess
    import sys

    code = ("import sys, allfives_train.fastppo, allfives_train.dmc, allfives_train.distill, "
            "allfives_train.recipe, allfives_train.fast_hooks; "
            "print([m for m in sys.modules if m.split('.')[0] in "
            "('stable_baselines3', 'sb3_contrib')])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT).stdout.strip()
    assert out == "[]", out


def test_no_module_imports_the_folder_names() -> None:
    """The folders agents/ and train/ install as allfives_agents and allfives_train; importing
    them by folder name would find a user's own ``train.py`` or ``agents/`` instead."""
    folders = ("agents", "train")
    bad = []
    for path in [*ROOT.glob("*/**/*.py")]:
        if ".venv" in path.parts or "build" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom)
                     and not node.level else [])
            bad += [f"{path.relative_to(ROOT)}: {n}" for n in names if n.split(".")[0] in folders]
    assert not bad, "import allfives_agents / allfives_train instead:\n" + "\n".join(bad)
