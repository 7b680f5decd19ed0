"""The floors: ``allfives_env`` (0) <- ``allfives_agents`` (1, agents/) <- ``allfives_train`` (2,
train/) <- ``allfives`` (3, the public API and the command line). No module imports a floor above
its own (at any point: function-level imports count too) nor names one in a string (a registry
entry, an importlib target, a docstring), and no import cycle exists between the project's
modules. Each folder holds at most 15 modules directly (rooms by concern); the old flat module
paths and the old public names still work, with a DeprecationWarning naming the new place."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = {"allfives_env": 0, "allfives_agents": 1, "allfives_train": 2, "allfives": 3}
FOLDERS = {"allfives_env": "allfives_env", "allfives_agents": "agents", "allfives_train": "train",
           "allfives": "allfives"}
#: The most modules a folder of the product holds directly (``__init__.py`` not counted).
MAX_MODULES = 15
#: Folders exempt from :data:`MAX_MODULES` (none: train/ is in rooms too).
FLAT_EXEMPT: set[str] = set()
#: The higher floors a lower floor's strings may not name (the top package ``allfives`` is
#: also the namespace of the Gymnasium ids and the entry-point groups: imports only).
NAMED = re.compile(r"\b(allfives_agents|allfives_train)\b")


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
    path.write_text("def f():\n"
                    "    from allfives_train.algorithms.maskable_ppo.trainer import train\n"
                    "    import allfives_agents.base\n")
    known = set(_modules())
    assert _imports("allfives_env.game.engine", path, known) == {
        "allfives_train.algorithms.maskable_ppo.trainer", "allfives_agents.base"}


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

    code = ("import sys, allfives_train.algorithms.ppo_batched.trainer, "
            "allfives_train.algorithms.dmc.trainer, "
            "allfives_train.algorithms.search_distill.trainer, "
            "allfives_train.recipe, allfives_train.shell.hooks; "
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


def _names_above(name: str, path: Path) -> list[str]:
    """Where the module ``name`` (file ``path``) names a floor above its own: an import of
    it, or a string constant (docstrings included) naming ``allfives_agents`` or
    ``allfives_train``."""
    own = _layer(name)
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            targets = [node.module or ""]
        else:
            targets = []
        found += [f"{name}:{node.lineno} imports {t}" for t in targets
                  if t.split(".")[0] in LAYERS and LAYERS[t.split(".")[0]] > own]
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            found += [f"{name}:{node.lineno} names {m}" for m in NAMED.findall(node.value)
                      if LAYERS[m] > own]
    return found


def test_no_lower_floor_names_a_higher_one() -> None:
    """allfives_env names neither allfives_agents nor allfives_train, allfives_agents does not
    name allfives_train, and none of the three imports the top package ``allfives``."""
    found = [hit for name, path in _modules().items() for hit in _names_above(name, path)]
    assert not found, "a lower floor names a higher one:\n" + "\n".join(found)


def test_the_floor_check_sees_a_planted_name(tmp_path: Path) -> None:
    path = tmp_path / "cli.py"
    path.write_text('"""See allfives_train.cli."""\nimport allfives\n'
                    'TARGET = "allfives_agents.base:make_agent"\n')
    assert sorted(_names_above("allfives_env.planted", path)) == [
        "allfives_env.planted:1 names allfives_train", "allfives_env.planted:2 imports allfives",
        "allfives_env.planted:3 names allfives_agents"]
    assert _names_above("allfives.planted", path) == []


def _folders() -> dict[str, list[str]]:
    """Every folder of the product's packages -> the modules directly in it."""
    out = {}
    for folder in FOLDERS.values():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = str(init.parent.relative_to(ROOT))
            out[rel] = sorted(p.name for p in init.parent.glob("*.py") if p.name != "__init__.py")
    return out


def test_no_folder_is_a_hall() -> None:
    """At most MAX_MODULES modules directly in any folder of the product (rooms by concern)."""
    folders = _folders()
    assert {"allfives", "allfives_env/game", "agents/planning"} <= set(folders)
    big = {f: len(m) for f, m in folders.items() if len(m) > MAX_MODULES
           and f.split("/")[0] not in FLAT_EXEMPT}
    assert not big, f"folders with more than {MAX_MODULES} modules: {big}"


def _moved_tables() -> dict[str, dict[str, str]]:
    import allfives_agents
    import allfives_train
    from allfives_env import moved

    return {"allfives_env": moved.MOVED, "allfives_agents": allfives_agents.MOVED,
            "allfives_train": allfives_train.MOVED}


def test_every_old_path_names_a_module_that_exists() -> None:
    """Each old path's new module is a file of the tree, and no file is left at an old path
    (one alias table per package, no shim modules)."""
    modules = _modules()
    for package, table in _moved_tables().items():
        for old, new in table.items():
            assert f"{package}.{new}" in modules, f"{package}.{old} -> missing {package}.{new}"
            assert f"{package}.{old}" not in modules, f"a module is left at {package}.{old}"


OLD_PATHS = """
import importlib, json, sys, warnings
import allfives_agents, allfives_train
from allfives_env import moved
out = {}
for package, table in (("allfives_env", moved.MOVED), ("allfives_agents", allfives_agents.MOVED),
                       ("allfives_train", allfives_train.MOVED)):
    for old, new in table.items():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                module = importlib.import_module(f"{package}.{old}")
            except ImportError as exc:  # an optional dependency (pyspiel, ...) is missing
                out[old] = ["missing", str(exc)]
                continue
        real = sys.modules[f"{package}.{new}"]
        out[f"{package}.{old}"] = [module is real, module.__spec__.name,
                                   [str(w.message) for w in caught
                                    if issubclass(w.category, DeprecationWarning)]]
print(json.dumps(out))
"""


def test_the_old_module_paths_import_with_a_deprecation_warning() -> None:
    """Importing an old flat path (``allfives_env.<old name>``, every entry of both tables) gives
    the module at its new path, with one DeprecationWarning naming that path."""
    done = subprocess.run([sys.executable, "-c", OLD_PATHS], capture_output=True, text=True,
                          check=True, cwd=ROOT)
    result = json.loads(done.stdout)
    tables = _moved_tables()
    assert len(result) == sum(len(t) for t in tables.values())
    checked = 0
    for package, table in tables.items():
        for old, new in table.items():
            got = result.get(f"{package}.{old}")
            if got is None:
                continue  # its module needs an optional dependency that is not installed
            same, spec_name, warned = got
            assert same and spec_name == f"{package}.{new}", (old, got)
            assert warned == [f"{package}.{old} moved to {package}.{new}; import it from there"]
            checked += 1
    assert checked >= 60, result


def test_the_old_public_names_keep_working() -> None:
    """``allfives_env.opponent``, ``.evaluate``, ``.make_agent`` and ``.save_policy`` are the top
    package's, with a DeprecationWarning naming ``allfives.<name>``; ``allfives_env.env(...)``
    still builds the env, without a warning."""
    import warnings

    import allfives
    import allfives_env

    for name in ("opponent", "evaluate", "make_agent", "save_policy"):
        with pytest.warns(DeprecationWarning, match=f"allfives.{name}"):
            assert getattr(allfives_env, name) is getattr(allfives, name)
    with pytest.raises(AttributeError, match="no_such_name"):
        allfives_env.no_such_name  # noqa: B018
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        env = allfives_env.env(players=3)
        env.reset(seed=0)
        assert len(env.agents) == 3
        assert allfives.env is allfives_env.env and allfives.raw_env is allfives_env.raw_env


def test_import_allfives_env_registers_the_gym_id() -> None:
    """``import allfives_env; gymnasium.make("allfives/AllFives-v0")`` (docs/environment.md):
    the id comes from the ``allfives.gym_ids`` entry points that pyproject.toml declares."""
    gymnasium = pytest.importorskip("gymnasium")
    import allfives_env  # noqa: F401

    env = gymnasium.make("allfives/AllFives-v0", opponents=["greedy"], players=2)
    obs, info = env.reset(seed=0)
    assert "action_mask" in info or obs is not None
    env.close()


def test_the_command_line_lives_on_the_top_floor() -> None:
    """The ``allfives`` script is ``allfives.cli:main``; every subcommand is dispatched from
    there, and ``allfives bench --train`` is handed to the trainers there."""
    import tomllib

    from allfives import cli

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["scripts"] == {"allfives": "allfives.cli:main"}
    assert set(cli.SUBCOMMANDS) == {"simulate", "replay", "bench", "eval", "play", "models",
                                    "serve", "train"}
    assert cli.HANDOFFS == {("bench", "train"): "allfives_train.benchmarks.speedrun"}
