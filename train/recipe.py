"""Recipes: one config, one command, from nothing to a model of a shipped kind.

A recipe is a YAML file with ``stages``; each stage is a training config of its own (any
``algo``; ``extends:`` a config file relative to the recipe) run in its own directory under
the recipe's ``run_dir``, and may name what earlier stages made:

* ``{previous}``: the ``final/`` model of the stage before (``init_from: "{previous}"``,
  ``distill_teacher: "search:net={previous},sims=64"``);
* ``{stage:NAME}``: the run directory of the stage called NAME
  (``distill_extra_labels: ["{stage:round2b}/labels"]``).

::

    allfives train --config configs/recipes/all_fives_2p.yaml             # from nothing
    allfives train --config configs/recipes/all_fives_2p.yaml --resume    # the same

The same command continues after any stop: a stage with a ``final/`` model is done, a started
stage resumes from its newest checkpoint (or starts over when it saved nothing), the rest run
in order. At the end ``<run_dir>/final/`` holds the last stage's model, its card extended with
``recipe``: the command, every stage's wall time and the total. Field flags on the command line
(``--total-steps 20000``) apply to every stage.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import shutil
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from allfives_env.inputs.safeyaml import load_yaml_file
from allfives_train import algos
from allfives_train.config import TrainConfig, flatten, ignored_note, load_config
from allfives_train.configio import extends_path, read_mapping
from allfives_train.shell.checkpoints import card_markdown

RECIPE_FIELDS = ("recipe", "run_dir", "stages")
_NAME = re.compile(r"[a-z][a-z0-9_]{0,40}")


@dataclass(frozen=True)
class Stage:
    """One stage: its name and its config fields (``extends`` already resolved)."""

    name: str
    fields: dict[str, Any]


@dataclass(frozen=True)
class Recipe:
    name: str
    run_dir: Path
    stages: tuple[Stage, ...]

    def stage_dir(self, index: int) -> Path:
        return self.run_dir / f"{index + 1}_{self.stages[index].name}"


def is_recipe(path: Path) -> bool:
    """Whether the YAML file at ``path`` is a recipe (a mapping with ``stages``)."""
    try:
        data = load_yaml_file(path, "config")  # size cap, no aliases, bounded nesting
    except ValueError:
        return False
    return isinstance(data, dict) and "stages" in data


def load_recipe(path: Path) -> Recipe:
    """The recipe at ``path``, checked: one line for any problem."""
    data = read_mapping(Path(path), "recipe")
    unknown = sorted(set(data) - set(RECIPE_FIELDS))
    if unknown:
        raise ValueError(f"{path}: unknown recipe field(s) {', '.join(unknown)}: a recipe has "
                         f"{', '.join(RECIPE_FIELDS)}; stage fields go under stages")
    stages = data.get("stages")
    if not isinstance(stages, list) or not stages:
        raise ValueError(f"{path}: stages must be a list of stage configs")
    out, seen = [], set()
    for k, raw in enumerate(stages):
        if not isinstance(raw, dict) or not _NAME.fullmatch(str(raw.get("name", ""))):
            raise ValueError(f"{path}: stage {k + 1} needs a name of lowercase letters, digits "
                             "and _ (name: ppo)")
        fields = dict(raw)
        name = fields.pop("name")
        if name in seen:
            raise ValueError(f"{path}: two stages are called {name!r}")
        seen.add(name)
        fields = flatten(fields, f"{path}: stage {name}")  # sections by their flat names
        out.append(Stage(name, _resolve_extends(fields, Path(path).parent)))
    run_dir = data.get("run_dir") or f"runs/recipe_{Path(path).stem}"
    return Recipe(str(data.get("recipe") or Path(path).stem), Path(run_dir), tuple(out))


def _resolve_extends(fields: dict[str, Any], folder: Path) -> dict[str, Any]:
    base = fields.pop("extends", None)
    if base is None:
        return fields
    if not isinstance(base, str):
        raise ValueError("a stage's extends must be the path of a config file")
    values = read_mapping(extends_path(folder, base, "a stage"), "config",
                          sections=algos.sections())
    if isinstance(values.get("rules"), dict) and isinstance(fields.get("rules"), dict):
        fields["rules"] = {**values["rules"], **fields["rules"]}
    values.update(fields)
    return values


def _substitute(value: Any, recipe: Recipe, index: int) -> Any:
    """``{previous}`` and ``{stage:NAME}`` in the strings of ``value``."""
    if isinstance(value, list):
        return [_substitute(v, recipe, index) for v in value]
    if isinstance(value, dict):
        return {k: _substitute(v, recipe, index) for k, v in value.items()}
    if not isinstance(value, str) or "{" not in value:
        return value
    names = [s.name for s in recipe.stages]

    def stage(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in names[:index]:
            raise ValueError(f"recipe {recipe.name}: stage {names[index]!r} names "
                             f"{{stage:{name}}}, which is not an earlier stage")
        return str(recipe.stage_dir(names.index(name)))

    if "{previous}" in value and index == 0:
        raise ValueError(f"recipe {recipe.name}: the first stage has no {{previous}}")
    value = value.replace("{previous}", str(recipe.stage_dir(index - 1) / "final"))
    return re.sub(r"\{stage:([a-z0-9_]+)\}", stage, value)


def stage_config(recipe: Recipe, index: int, overrides: dict[str, Any],
                 game_args: Any = None) -> TrainConfig:
    """Stage ``index``'s config: its fields with the names of earlier stages filled in, its
    run directory under the recipe's, then the command line's overrides."""
    fields = _substitute(recipe.stages[index].fields, recipe, index)
    fields.update(overrides)
    fields["run_dir"] = str(recipe.stage_dir(index))
    label = f"recipe {recipe.name} stage {recipe.stages[index].name}"
    return load_config(None, fields, game_args, label)


def _names_a_stage(value: Any) -> bool:
    if isinstance(value, (list, tuple)):
        return any(_names_a_stage(v) for v in value)
    return isinstance(value, str) and ("{previous}" in value or "{stage:" in value)


def check_stage(recipe: Recipe, index: int, overrides: dict[str, Any],
                game_args: Any = None) -> TrainConfig:
    """Check stage ``index``'s fields before any stage runs. What names an earlier stage's
    output (``{previous}``, ``{stage:NAME}``) is checked for its form here and loaded only when
    the stage starts, once that output exists."""
    _substitute(recipe.stages[index].fields, recipe, index)  # names earlier stages only
    later = {k for k, v in recipe.stages[index].fields.items() if _names_a_stage(v)}
    fields = {k: v for k, v in recipe.stages[index].fields.items() if k not in later}
    for key in later:  # the defaults stand in for what does not exist yet
        fields[key] = "search" if key == "distill_teacher" else None
        if key == "distill_extra_labels":
            fields[key] = []
    fields.update(overrides)
    fields["run_dir"] = str(recipe.stage_dir(index))
    label = f"recipe {recipe.name} stage {recipe.stages[index].name}"
    return load_config(None, fields, game_args, label)


def run_recipe(path: Path, overrides: dict[str, Any], game_args: Any = None,
               quiet: bool = False, command: str = "") -> Path:
    """Run (or continue) every stage of the recipe at ``path``; returns its ``final/``."""
    recipe = load_recipe(path)
    if overrides.get("run_dir"):  # --run-dir: the recipe's folder, not every stage's
        recipe = replace(recipe, run_dir=Path(overrides["run_dir"]))
    overrides = {k: v for k, v in overrides.items() if k != "run_dir"}
    for k in range(len(recipe.stages)):  # every stage's fields checked before any work
        check_stage(recipe, k, overrides, game_args)
    recipe.run_dir.mkdir(parents=True, exist_ok=True)
    for k in range(len(recipe.stages)):
        where = recipe.stage_dir(k)
        if (where / "final" / "card.json").is_file():
            print(f"recipe {recipe.name}: stage {k + 1} ({recipe.stages[k].name}) is done: "
                  f"{where / 'final'}", file=sys.stderr)
            continue
        cfg = stage_config(recipe, k, overrides, game_args)  # earlier stages' models exist now
        print(f"recipe {recipe.name}: stage {k + 1} of {len(recipe.stages)} "
              f"({recipe.stages[k].name}, algo {cfg.algo}) in {where}", file=sys.stderr)
        note = ignored_note(cfg)  # fields this stage's algo does not read
        if note:
            print(note, file=sys.stderr)
        started = time.perf_counter()
        algos.trainer(cfg.algo)(cfg, resume=(where / "config.yaml").is_file(), quiet=quiet,
                                started=started)
    return _finish(recipe, command or f"allfives train --config {shlex.quote(str(path))}")


def _finish(recipe: Recipe, command: str) -> Path:
    """Copy the last stage's model to ``<run_dir>/final`` with the recipe in its card."""
    stages = []
    for k, stage in enumerate(recipe.stages):
        card = json.loads((recipe.stage_dir(k) / "final" / "card.json").read_text())
        stages.append({"name": stage.name, "algo": card.get("config", {}).get("algo"),
                       "steps": card.get("steps"), "wall_time_s": card.get("wall_time_s")})
    final = recipe.run_dir / "final"
    if final.exists():
        shutil.rmtree(final)
    shutil.copytree(recipe.stage_dir(len(recipe.stages) - 1) / "final", final)
    card_path = final / "card.json"
    card = json.loads(card_path.read_text())
    total = sum(float(s["wall_time_s"] or 0) for s in stages)
    card["recipe"] = {"name": recipe.name, "command": command, "stages": stages,
                      "wall_time_s": round(total, 1)}
    card_path.write_text(json.dumps(card, indent=2) + "\n")
    (final / "card.md").write_text(card_markdown(card))
    print(f"recipe {recipe.name}: done in {total / 60:.1f} min of training over "
          f"{len(stages)} stages; the model is in {final}", file=sys.stderr)
    return final


def run(args: argparse.Namespace, overrides: dict[str, Any]) -> int:
    """``allfives train --config RECIPE``: every stage, continuing what an earlier run left.
    Ctrl-C or SIGTERM saves the running stage and prints the command that continues."""
    import signal

    from allfives_train.shell.rundir import TrainingInterrupted, sigterm_as_ctrl_c

    command = "allfives train --config " + shlex.quote(str(args.config))
    if overrides.get("run_dir"):
        command += " --run-dir " + shlex.quote(str(overrides["run_dir"]))
    path = Path(args.config)
    with sigterm_as_ctrl_c() as stopped_by:
        try:
            run_recipe(path, overrides, args, quiet=args.quiet, command=command)
        except TrainingInterrupted as stop:
            saved = f"; checkpoint saved to {stop.checkpoint}" if stop.checkpoint else ""
            print(f"allfives train: interrupted in {stop.run_dir}{saved}. Continue the "
                  f"recipe with: {command}", file=sys.stderr)
            return 128 + (stop.signum or (signal.SIGTERM if stopped_by else signal.SIGINT))
    return 0
