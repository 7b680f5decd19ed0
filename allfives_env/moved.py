"""Old module paths of a package, kept importing with a :class:`DeprecationWarning`.

The modules of ``allfives_env`` and of the agents' package once lay flat in their folders; they now
live in rooms by concern (docs/architecture.md). A user's import of an old flat path (the
engine's, the rules', ... :data:`MOVED`) still works: a finder at the end of
``sys.meta_path`` (one per package, :func:`install`) answers each old path of the package's
table with the module at its new path, once, with a warning naming the new path. No file is
left at the old place, and the project's own code uses the new paths only (a test checks it).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings
from types import ModuleType

#: ``allfives_env``'s old paths: the old module (under the package) -> its new path.
MOVED: dict[str, str] = {
    "tiles": "game.tiles", "rules": "game.rules", "gameconfig": "game.gameconfig",
    "layout": "game.layout", "engine": "game.engine", "view": "game.view",
    "observation": "game.observation", "match": "game.match", "seeding": "game.seeding",
    "adapters": "envs.adapters", "gym_ids": "envs.gym_ids", "action_views": "envs.action_views",
    "batched": "batched_engine.games", "batched_facts": "batched_engine.facts",
    "batched_kernels": "batched_engine.kernels", "batched_layout": "batched_engine.layout",
    "batched_rules": "batched_engine.rules", "batched_view": "batched_engine.view",
    "record": "records.record", "record_schema": "records.record_schema",
    "replay_cli": "records.replay_cli",
    "openspiel": "spiel.openspiel", "openspiel_core": "spiel.openspiel_core",
    "openspiel_resample": "spiel.openspiel_resample",
    "render": "rendering.render", "render_image": "rendering.render_image",
    "safenpz": "inputs.safenpz", "safeyaml": "inputs.safeyaml", "trust": "inputs.trust",
    "paths": "inputs.paths", "shipped": "inputs.shipped", "durations": "inputs.durations",
    "bench": "benchmarks.bench", "bench_batched": "benchmarks.bench_batched",
    "machine": "benchmarks.machine",
}


class MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Answers ``package.<old>`` with ``package.<new>`` (the same module object), warning once."""

    def __init__(self, package: str, table: dict[str, str]) -> None:
        self.package = package
        self.table = dict(table)
        self._specs: dict[str, importlib.machinery.ModuleSpec | None] = {}

    def new_name(self, fullname: str) -> str | None:
        """The new path of an old one (None for any other name)."""
        head, _, tail = fullname.partition(".")
        if head != self.package or tail not in self.table:
            return None
        return f"{self.package}.{self.table[tail]}"

    def find_spec(self, fullname: str, path: object = None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if self.new_name(fullname) is None:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        new = self.new_name(spec.name)
        assert new is not None
        warnings.warn(f"{spec.name} moved to {new}; import it from there", DeprecationWarning,
                      stacklevel=_caller_level())
        module = importlib.import_module(new)
        self._specs[new] = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: the module ran at its new path. Give it back its own spec (the
        import system set the old path's)."""
        module.__spec__ = self._specs.get(module.__name__, module.__spec__)


def install(package: str, table: dict[str, str]) -> MovedModules:
    """Put ``package``'s finder of old paths at the end of ``sys.meta_path`` (once)."""
    for finder in sys.meta_path:
        if isinstance(finder, MovedModules) and finder.package == package:
            return finder
    finder = MovedModules(package, table)
    sys.meta_path.append(finder)
    return finder


def _caller_level() -> int:
    """The ``stacklevel`` of the first frame outside the import machinery and this module,
    so that the warning names the user's import line."""
    frame = sys._getframe(1)
    level = 1
    while frame is not None and (frame.f_code.co_filename.startswith("<frozen importlib")
                                 or frame.f_code.co_filename in (__file__, importlib.__file__)):
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    return level
