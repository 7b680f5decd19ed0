"""One algorithm table (train/algos.py): every trainer is reached through it.

The rule, checked on the source of every module under train/ (allfives_train), the table's
own module and the config's checks (train/config.py, which validates ``algo`` itself) aside:

1. no comparison of an ``algo`` (a name ``algo`` or an attribute ``.algo``) with a string
   literal or a tuple, list or set of them (``cfg.algo == "dmc"``, ``algo in ("ppo_batched",
   "dmc")``): what differs between algos is a field of its :class:`Algo` entry;
2. no import of a trainer function named in the table (``from
allfives_train.algorithms.ppo_batched.trainer import
   train``) and no ``<trainer module>.train(`` call: trainers are reached through
   :func:`allfives_train.algos.trainer`.
"""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path
from typing import Any

import pytest

from allfives_train import algos
from allfives_train.config import (
    ALGOS,
    DEFAULT_CONFIG,
    TrainConfig,
    flat_fields,
    ignored_note,
    load_config,
)
from allfives_train.configio import GameFields
from allfives_train.ppo_section import FIELDS as PPO_FIELDS
from allfives_train.ppo_section import PPO, PPOSection

SHARED = [n for n, s in flat_fields().items() if s.section is None]

TRAIN = Path(__file__).resolve().parent.parent / "train"
EXEMPT = {"algos.py", "config.py"}
TRAINERS = {a.trainer.partition(":")[0]: a.trainer.partition(":")[2]
            for a in algos.ALGOS.values()}


def _is_algo(node: ast.AST) -> bool:
    return (isinstance(node, ast.Name) and node.id == "algo") or (
        isinstance(node, ast.Attribute) and node.attr == "algo")


def _is_names(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    return isinstance(node, (ast.Tuple, ast.List, ast.Set)) and bool(node.elts) and all(
        isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts)


def violations(source: str, where: str) -> list[str]:
    """Where ``source`` dispatches on an algo name or reaches a trainer around the table."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(_is_algo(s) for s in sides) and any(_is_names(s) for s in sides):
                out.append(f"{where}:{node.lineno}: compares an algo with a name")
        elif isinstance(node, ast.ImportFrom) and node.module in TRAINERS and any(
                a.name == TRAINERS[node.module] for a in node.names):
            out.append(f"{where}:{node.lineno}: imports the trainer of {node.module}")
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and any(
                m.rsplit(".", 1)[-1] == node.value.id and f == node.attr
                for m, f in TRAINERS.items()):
            out.append(f"{where}:{node.lineno}: calls {node.value.id}.{node.attr}")
    return out


def test_nothing_under_train_dispatches_around_the_table() -> None:
    found = []
    for path in sorted(TRAIN.rglob("*.py")):
        if path.name not in EXEMPT or path.parent != TRAIN:
            found += violations(path.read_text(), str(path.relative_to(TRAIN.parent)))
    assert found == []


@pytest.mark.parametrize("source", [
    "if cfg.algo == 'dmc':\n    pass\n",
    "x = algo in ('ppo_batched', 'dmc')\n",
    "from allfives_train.algorithms.ppo_batched.trainer import train\n",
    "from allfives_train.algorithms.search_distill import trainer\ntrainer.train(cfg)\n",
    "y = 'search_distill' != self.cfg.algo\n",
])
def test_the_rule_catches_each_kind_of_dispatch(source: str) -> None:
    assert len(violations(source, "x.py")) == 1


def test_the_rule_lets_the_table_be_read() -> None:
    assert violations("t = algos.trainer(cfg.algo)\nok = algos.get(algo).hooks\n", "x") == []


def test_every_algo_of_the_config_is_in_the_table_and_its_trainer_resolves() -> None:
    assert ALGOS == algos.config_algos()
    assert set(ALGOS) == set(algos.ALGOS)  # rllib_ppo too: one config, TrainConfig
    for name, algo in algos.ALGOS.items():
        module, _, function = algo.trainer.partition(":")
        assert module.startswith("allfives_train.") and function == "train", name
        if algo.validate is not None:
            assert callable(algos._load(algo.validate)), name


def test_an_unknown_algo_is_refused_in_one_line() -> None:
    with pytest.raises(ValueError, match=r"config algo='ppo2': must be one of maskable_ppo"):
        algos.get("ppo2")
    with pytest.raises(ValueError, match=r"algo='ppo2'"):
        load_config(None, {"algo": "ppo2"})


# ---------------------------------------------------------------- config sections
GAME_READ = {f.name for f in dataclasses.fields(GameFields)} | {"run_dir", "algo"}


def _module_file(name: str) -> Path | None:
    rel = name.split(".", 1)[1].replace(".", "/") if "." in name else ""
    for path in (TRAIN / f"{rel}.py", TRAIN / rel / "__init__.py"):
        if rel and path.is_file():
            return path
    return None


def _closure(module: str) -> set[Path]:
    """The files of ``module`` and of every allfives_train module it imports, at any depth
    (imports inside functions too), but the config's and the table's (they read every field
    to check it)."""
    seen: set[Path] = set()
    todo = [module]
    while todo:
        path = _module_file(todo.pop())
        if path is None or path in seen or path.name in EXEMPT | {"cli.py", "recipe.py"}:
            continue
        seen.add(path)
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                    "allfives_train"):
                todo += [node.module or "", *(f"{node.module}.{a.name}" for a in node.names)]
            elif isinstance(node, ast.Import):
                todo += [a.name for a in node.names if a.name.startswith("allfives_train")]
    return seen


def _reads(paths: set[Path]) -> tuple[set[str], set[str], set[str]]:
    """In ``paths``: the shared fields read as ``cfg.<field>`` or ``config.<field>``, every
    attribute read (a section's fields), and every name used (a section's constant)."""
    shared, attrs, names = set(), set(), set()
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute):
                attrs.add(node.attr)
                owner = node.value
                name = owner.id if isinstance(owner, ast.Name) else getattr(owner, "attr", "")
                if name in ("cfg", "config") and node.attr in SHARED:
                    shared.add(node.attr)
            elif isinstance(node, ast.Name):
                names.add(node.id)
    return shared, attrs, names


@pytest.mark.parametrize("name", algos.config_algos())
def test_every_field_an_algo_does_not_declare_ignored_is_read_by_its_code(name: str) -> None:
    """Read by its trainer's modules (the game fields and run_dir through ``cfg.game()`` and
    ``resolved_run_dir()``): each shared field it does not ignore as ``cfg.<field>``, each
    section its row names by its constant (``cfg.section(DMC)``) and each of the section's
    fields it does not ignore as an attribute; what it never reads must be in
    :func:`algos.ignored`."""
    algo = algos.ALGOS[name]
    shared, attrs, names = _reads(_closure(algo.trainer.partition(":")[0]))
    ignored = set(algos.ignored(name))
    assert sorted(set(SHARED) - ignored - shared - GAME_READ) == []
    constants = {id(v): k for k, v in vars(algos).items()}  # the table imports each constant
    for section in algo.sections:
        assert constants[id(section)] in names, (name, section.key)
        read = {f for f in section.fields() if section.flat(f) not in ignored}
        assert sorted(read - attrs) == [], (name, section.key)


OWN = {"rllib_ppo": "rllib"}  # an algo whose own section's key is not its name


def test_each_algos_own_section_is_read_by_it_alone_and_the_shared_fields_are_few() -> None:
    sections = algos.sections()
    for algo in algos.ALGOS.values():
        own = sections.get(OWN.get(algo.name, algo.name))
        if own is not None:  # its own section: a room's, named after it
            assert own in algo.sections
            assert [a.name for a in algos.ALGOS.values() if own in a.sections] == [algo.name]
            for field in own.fields():
                assert own.flat(field) not in algos.ignored(algo.name)
                assert all(own.flat(field) in algos.ignored(a) for a in algos.ALGOS
                           if a != algo.name)
    assert {k for k in algos.ALGOS if OWN.get(k, k) in sections} == {
        "maskable_ppo", "search_distill", "dmc", "rllib_ppo"}
    assert len(SHARED) <= 30 and len(flat_fields()) == 89  # issue 63: about 30 at most


def test_no_shipped_config_or_recipe_stage_sets_a_field_its_algo_ignores() -> None:
    from allfives_train import recipe

    configs = TRAIN.parent / "configs"
    for path in sorted((configs / "train").glob("*.yaml")):
        assert ignored_note(load_config(path)) is None, path
    for path in sorted((configs / "recipes").glob("*.yaml")):
        loaded = recipe.load_recipe(path)
        for k in range(len(loaded.stages)):
            assert ignored_note(recipe.check_stage(loaded, k, {})) is None, (path, k)


def test_a_field_the_algo_ignores_is_named_when_set(capsys) -> None:
    dmc = DEFAULT_CONFIG.parent / "dmc_2p.yaml"
    note = ignored_note(load_config(dmc, {"init_from": None, "clip_range": 0.3,
                                          "distill_mix": 0.9}))
    assert note is not None and "algo dmc does not read" in note
    assert "clip_range=0.3" in note and "distill_mix=0.9" in note and "dmc_scale" not in note
    selfplay = DEFAULT_CONFIG.parent / "selfplay_2p.yaml"
    assert ignored_note(load_config(selfplay, {"clip_range": 0.3})) is None  # PPO's


def test_the_rllib_backend_reuses_the_shared_sections_instead_of_copying_them() -> None:
    """rllib_ppo reads ``TrainConfig`` (no config class of its own): its row names its own
    ``rllib`` section and the shared ones it reads (PPO's, the pool's, the actor's); no module
    of train/rllib declares a field of PPO's section or a shared field again."""
    from allfives_train.rllib.section import RLLIB

    row = algos.ALGOS["rllib_ppo"]
    assert row.sections[0] is RLLIB and PPO in row.sections and PPO.cls is PPOSection
    assert [a for a in algos.ALGOS.values() if PPO in a.sections] == [
        algos.ALGOS["maskable_ppo"], algos.ALGOS["ppo_batched"], row]
    assert not (TRAIN / "rllib" / "config.py").exists()
    shared = set(SHARED) | set(PPO_FIELDS)
    for path in [TRAIN / "config.py", *sorted((TRAIN / "rllib").glob("*.py"))]:
        declared = {node.target.id for node in ast.walk(ast.parse(path.read_text()))
                    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)}
        if path.name == "section.py":  # a name that means another thing: rllib_<name>
            declared -= {f for f in RLLIB.fields() if RLLIB.flat(f) != f}
        assert declared & (set(PPO_FIELDS) if path.name == "config.py" else shared) == set()


# ------------------------------------------------- total_steps, call by call, from the CLI
def _climbs_back(call: Any) -> list[str]:
    """Run ``call()``, following every call into allfives_train modules: where a call enters
    a module that is on the stack below another module (A -> B -> A)."""
    import sys

    stack: list[str] = []
    found: list[str] = []

    def profile(frame: Any, event: str, arg: Any) -> None:
        module = frame.f_globals.get("__name__", "")
        if not module.startswith("allfives_train") and event == "call":
            stack.append("")  # outside the package: kept so the returns pair up
            return
        if event == "call":
            seen = [m for m in stack if m]
            if seen and module != seen[-1] and module in seen:
                found.append(" -> ".join([*dict.fromkeys(seen), module]))
            stack.append(module)
        elif event == "return" and stack:
            stack.pop()

    sys.setprofile(profile)
    try:
        call()
    finally:
        sys.setprofile(None)
    return found


@pytest.mark.parametrize("config", ["default.yaml", "selfplay_2p.yaml", "dmc_2p.yaml",
                                    "distill_2p.yaml", "maskable_2p.yaml", "rllib.yaml",
                                    "rllib_table.yaml"])
def test_loading_a_config_never_climbs_back_to_a_module_it_left(config: str) -> None:
    """From the CLI, ``total_steps`` goes: train/cli.py -> config.load_config -> configio
    (read, merge, type-check; returns) -> TrainConfig -> config.validate (reads it) ->
    algos.validate -> algo_checks; then algos.trainer -> the algo's ``train`` (fastppo or
    dmc -> fast_loop.run, which reads it; distill, ppo)."""
    path = DEFAULT_CONFIG.parent / config
    assert _climbs_back(lambda: load_config(path, {"init_from": None})) == []


def test_the_climb_back_finder_finds_one() -> None:
    from allfives_train import configio

    def back() -> None:  # configio -> config (TrainConfig's checks) -> configio (its game)
        configio.load_dataclass(TrainConfig, None, {"total_steps": 5})

    assert _climbs_back(lambda: algos.validate(load_config(), lambda n, a: ValueError())) == []
    assert _climbs_back(back) != []


def test_the_cli_names_the_ignored_field_under_its_first_line(tmp_path: Path, capsys) -> None:
    from allfives.cli import main

    dmc = DEFAULT_CONFIG.parent / "dmc_2p.yaml"
    assert main(["train", "--config", str(dmc), "--init-from", "null", "--clip-range", "0.3",
                 "--run-dir", str(tmp_path / "none"), "--resume"]) == 2  # nothing to resume
    out, err = capsys.readouterr()
    assert out.splitlines()[1].startswith("allfives train: note: algo dmc does not read "
                                          "clip_range=0.3")
    assert len(err.strip().splitlines()) == 1 and "--resume" in err  # the error, alone
