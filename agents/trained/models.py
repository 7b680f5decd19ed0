"""The shipped models by name: one trained network per setting, as Pgx's
``make_baseline_model(env_id)`` and RLCard's model zoo find theirs.

``checkpoints/models.yaml`` declares each model once (its setting, former names, recipe and
measured strength); its folder ``checkpoints/<name>/`` holds the card and the weights. A model
is found by its name (``ckpt:all_fives_2p``), by a former name (``ckpt:recipe2_all_fives_2p``,
its name in the lab) or by the rules of the game in play (``ckpt:best``: the model of the same
seats and teams whose training rules differ least from the game's). ``allfives models`` lists them.

    allfives models                  # name, setting, strength, Elo, recipe
    allfives models --json
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from allfives_env.game.rules import Rules
from allfives_env.inputs.shipped import shipped_dir

BEST = "best"  # ckpt:best: the shipped model for the rules in play


@dataclass(frozen=True)
class Model:
    """One shipped model, as ``checkpoints/models.yaml`` declares it."""

    name: str
    preset: str
    players: int
    teams: bool
    summary: str = ""
    recipe: str = ""
    formerly: tuple[str, ...] = ()
    strength: tuple[dict[str, Any], ...] = ()
    elo: float | None = None
    elo_source: str = ""
    directory: Path = field(default=Path("."), compare=False)

    @property
    def setting(self) -> str:
        return f"{self.preset}, {self.players} seats" + (" in teams" if self.teams else "")

    def win_rate(self, opponent: str) -> dict[str, Any] | None:
        return next((row for row in self.strength if row.get("vs") == opponent), None)


def registry_file() -> Path:
    return shipped_dir("checkpoints") / "models.yaml"


def shipped_models() -> list[Model]:
    """Every shipped model, in the order ``models.yaml`` lists them."""
    from allfives_env.inputs.safeyaml import load_yaml_file

    path = registry_file()
    try:
        raw = load_yaml_file(path, "model registry") or {}
    except ValueError as exc:
        raise ValueError(f"the model registry {str(path)!r} is unreadable: {exc}") from None
    out = []
    for name, entry in (raw.get("models") or {}).items():
        out.append(Model(name=name, preset=entry["preset"], players=int(entry["players"]),
                         teams=bool(entry["teams"]), summary=entry.get("summary", ""),
                         recipe=entry.get("recipe", ""),
                         formerly=tuple(entry.get("formerly") or ()),
                         strength=tuple(entry.get("strength") or ()), elo=entry.get("elo"),
                         elo_source=entry.get("elo_source", ""),
                         directory=path.parent / name))
    return out


def find_model(name: str) -> Model | None:
    """The shipped model called ``name`` now or formerly, else None."""
    for model in shipped_models():
        if name == model.name or name in model.formerly:
            return model
    return None


def best_for(rules: Rules) -> Model:
    """The shipped model for ``rules``: same seats and teams, fewest rule differences."""
    fits = [m for m in shipped_models() if m.players == rules.players and m.teams == rules.teams]
    if not fits:
        have = "; ".join(m.setting for m in shipped_models())
        table = f"{rules.players} seats" + (" in teams" if rules.teams else "")
        raise ValueError(f"no shipped model plays {table}: shipped models play {have}")

    def distance(model: Model) -> tuple[int, int]:
        card = json.loads((model.directory / "card.json").read_text())
        return len(rules.differences(card.get("rules") or {})), int(model.preset != rules.preset)

    return min(fits, key=distance)


# ------------------------------------------------------------------ allfives models
def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print the registry as JSON")


def _cell(model: Model, opponent: str) -> str:
    row = model.win_rate(opponent)
    if row is None:
        return "-"
    lo, hi = row["ci95"]
    return f"{100 * row['win_rate']:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}] ({row['games']:,})"


def run(args: argparse.Namespace) -> int:
    models = shipped_models()
    if args.json:
        rows = [{"name": m.name, "formerly": list(m.formerly), "preset": m.preset,
                 "players": m.players, "teams": m.teams, "summary": m.summary,
                 "recipe": m.recipe, "strength": list(m.strength), "elo": m.elo}
                for m in models]
        print(json.dumps(rows, indent=2, default=str))
        return 0
    for m in models:
        elo = f"{m.elo:+.0f} Elo over heuristic" if m.elo is not None else "Elo not measured"
        print(f"ckpt:{m.name}  ({m.setting}; {elo})")
        print(f"  vs heuristic {_cell(m, 'heuristic')}   vs search {_cell(m, 'search')}   "
              f"vs greedy {_cell(m, 'greedy')}")
        if m.win_rate("oracle") is not None:  # the ceiling: search that sees every hand
            print(f"  vs oracle (sees every hand) {_cell(m, 'oracle')}")
        print(f"  {m.summary}")
        print(f"  recipe: {m.recipe}")
    print("ckpt:best picks the model for the game's seats, teams and rules.")
    return 0
