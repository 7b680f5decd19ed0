"""One agent builder: every agent and batched bot of the product is made by
:func:`allfives_agents.base.make_agent` or :func:`allfives_agents.base.make_batched`, and agent
ids' options are parsed in one module, :mod:`allfives_agents.options` (issue 51).

The product's source (``agents/``, ``train/``, ``allfives_env/``) is read as syntax trees:

* the registry's tables (``_REGISTRY``, ``_PREFIX_LOADERS``, ``_BATCHED``, ``_MEASURES``) are
  named only in agents/base.py, the builder;
* an agent class (a subclass of ``Agent``, found here from the class definitions) or a
  registered factory or batched bot is called only in its own module, save the few
  components listed in :data:`COMPONENTS`;
* the option parsers are defined only in agents/options.py;
* the evaluator, the server's gate, the oracle and the batched bots call the builder.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import pytest

from allfives_agents import base

ROOT = Path(__file__).resolve().parents[1]
PRODUCT = ("agents", "train", "allfives_env")
BUILDER = "agents/base.py"
TABLES = {"_REGISTRY", "_PREFIX_LOADERS", "_BATCHED", "_MEASURES"}
PARSERS = {"parse_agent_id", "_option_value", "numeric_options", "finite_number",
           "check_bounds", "did_you_mean", "prefix_options", "split_agent_id"}
#: (module, callee): agents used as parts of another agent, never handed out as one.
COMPONENTS = {
    ("agents/planning/netsearch.py", "HeuristicAgent"),  # the rollouts' other seats
    ("agents/planning/netsearch.py", "CheckpointAgent"),  # the network of search:net=...
    ("agents/batched/bots.py", "make_search"),  # BatchedSearch reads search's checked options
    ("agents/planning/netsearch.py", "SearchAgent"),  # make_search, search's registered factory
}
#: Agent classes no id names: ``PolicyAgent`` plays a policy held in memory (the learner's
#: weights during training), so it has no registration and is built where the weights are.
NOT_FROM_IDS = {"PolicyAgent"}
#: The callers of issue 51 and the builder function each must call.
CALLERS = {"agents/evaluation/evaluate.py": "make_agent", "agents/web/gate.py": "make_agent",
           "agents/rulebased/oracle.py": "make_agent", "agents/batched/bots.py": "make_batched"}


def product_files() -> dict[str, ast.Module]:
    out = {}
    for top in PRODUCT:
        for path in sorted((ROOT / top).rglob("*.py")):
            out[path.relative_to(ROOT).as_posix()] = ast.parse(path.read_text(), str(path))
    return out


def agent_classes(trees: dict[str, ast.Module]) -> dict[str, str]:
    """Every subclass of ``Agent`` and the registered batched bots -> the module defining it."""
    classes = {(node.name, rel, tuple(_name(b) for b in node.bases))
               for rel, tree in trees.items() for node in ast.walk(tree)
               if isinstance(node, ast.ClassDef)}
    found = {"Agent": BUILDER}
    for _ in range(10):  # subclasses of subclasses
        found |= {name: rel for name, rel, bases in classes if set(bases) & set(found)}
    base.parse_spec("random")  # loads the built-in registrations
    for target in base._BATCHED.values():
        module, _, attribute = target.partition(":")
        found[attribute] = _path(module)
    for name in NOT_FROM_IDS:
        found.pop(name)
    for factory in base._REGISTRY.values():
        found.setdefault(factory.__name__, _path(factory.__module__))
    return found


def _path(module: str) -> str:
    """The file of a module of allfives_agents (``allfives_agents.rulebased.bots`` ->
    ``agents/rulebased/bots.py``)."""
    return "/".join(["agents", *module.split(".")[1:]]) + ".py"


def _name(node: ast.AST) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def violations(trees: dict[str, ast.Module]) -> list[str]:
    """Every way the source builds agents outside the builder, one line each."""
    agents, out = agent_classes(trees), []
    for rel, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, (ast.Name, ast.Attribute)) and _name(node) in TABLES \
                    and rel != BUILDER:
                out.append(f"{rel}:{node.lineno}: names the registry's {_name(node)}")
            if isinstance(node, ast.Call):
                callee = _name(node.func)
                home = agents.get(callee)
                if home and home not in (rel, BUILDER) and (rel, callee) not in COMPONENTS:
                    out.append(f"{rel}:{node.lineno}: builds {callee} (of {home}) itself")
            if isinstance(node, ast.FunctionDef) and node.name in PARSERS \
                    and rel != "agents/options.py":
                out.append(f"{rel}:{node.lineno}: defines the option parser {node.name}")
    return out


def test_nothing_builds_agents_but_the_one_builder() -> None:
    found = violations(product_files())
    assert not found, "\n".join(found)


def test_the_callers_use_the_builder() -> None:
    trees = product_files()
    for rel, builder in CALLERS.items():
        called = {_name(n.func) for n in ast.walk(trees[rel]) if isinstance(n, ast.Call)}
        assert builder in called, f"{rel} does not call {builder}"


def test_the_scan_finds_each_kind_of_fault() -> None:
    """The checks can fail: a made-up module doing each forbidden thing is caught."""
    bad = ast.parse("from allfives_agents import base\n"
                    "def f(seed):\n"
                    "    base._REGISTRY['greedy'](seed=seed)\n"
                    "    return SearchAgent(seed=seed), BatchedHeuristic(seed)\n"
                    "def numeric_options(name, options, defaults):\n"
                    "    return options\n")
    trees = {**product_files(), "agents/web/rogue.py": bad}
    found = "\n".join(violations(trees))
    for what in ("rogue.py:3: names the registry's _REGISTRY",
                 "rogue.py:4: builds SearchAgent (of agents/planning/search.py) itself",
                 "rogue.py:4: builds BatchedHeuristic (of agents/batched/bots.py) itself",
                 "rogue.py:5: defines the option parser numeric_options"):
        assert what in found, found


def test_eval_builds_each_agent_once_per_seat(monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """``allfives eval`` checks an id with the agent that then plays (no second build): one
    build per (id, seat) in this process, the oracle included."""
    from allfives.cli import main
    from allfives_agents.evaluation import evaluate

    built: list[tuple[str, int | None]] = []

    def counting(agent_id: str, seed: int | None = None, **kw: Any) -> base.Agent:
        built.append((agent_id, seed))
        return base.make_agent(agent_id, seed, **kw)

    monkeypatch.setattr(evaluate, "make_agent", counting)
    monkeypatch.setattr(evaluate, "_AGENT_CACHE", {})
    ids = ["greedy", "random", "oracle:sims=4"]
    argv = ["eval", "--agents", *ids, "--games", "2", "--workers", "1", "--no-progress",
            "--set", "target=30"]
    assert main(argv) == 0, capsys.readouterr().err
    assert sorted(built) == sorted((i, s) for i in ids for s in (0, 1)), built


LAYOUT = re.compile(r"[FKR]_[A-Z0-9_]+\Z")  # the batched engine's private array layout


def layout_outside_kernels(rel: str, tree: ast.Module) -> list[str]:
    """Where ``tree`` names a layout constant (``F_*``, ``K_*``, ``R_*`` of
    allfives_env/batched_engine/kernels.py) outside an ``@njit`` kernel (imports aside)."""
    out: list[str] = []

    def visit(node: ast.AST, kernel: bool) -> None:
        if isinstance(node, ast.FunctionDef):
            kernel = kernel or any("njit" in ast.unparse(d) for d in node.decorator_list)
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            return
        if isinstance(node, (ast.Name, ast.Attribute)) and LAYOUT.match(_name(node)) \
                and not kernel:
            out.append(f"{rel}:{node.lineno}: names {_name(node)} outside a kernel")
        for child in ast.iter_child_nodes(node):
            visit(child, kernel)

    visit(tree, False)
    return out


def test_the_agents_python_code_reads_the_engine_through_its_interface() -> None:
    """``BatchedGames``' properties and methods, and allfives_env/batched_engine/view.py; only the
    numba kernels (which need the layout as compile-time constants) name it."""
    trees = product_files()
    found = [line for rel, tree in trees.items() if rel.startswith("agents/")
             for line in layout_outside_kernels(rel, tree)]
    assert not found, "\n".join(found)
    bad = ast.parse("def f(games):\n    return games.G[:, games.k.F_CUR]\n")
    assert layout_outside_kernels("x.py", bad) == ["x.py:2: names F_CUR outside a kernel"]
