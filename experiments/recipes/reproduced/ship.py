"""Ship a candidate that met rule.md: its setting's model folder becomes the recipe's output.

    PYTHONPATH=. .venv/bin/python experiments/recipes/reproduced/ship.py SETTING

- the shipped folder ``checkpoints/<model>/`` moves to ``experiments/checkpoints/<former name>``;
- ``checkpoints/<model>/`` gets the candidate's weights, config and card (card.md with the
  comparison that shipped it), its learning curve, its fresh-seed files
  (``eval_<vs>_seed<seed>.json``), and ``eval.json``/``eval.md``: its pairings at seed 20261130
  joined to the setting's round robin (``experiments/strength/<setting>_recipe.json``, the
  levels table's new source);
- prints the registry rows to paste into ``checkpoints/models.yaml`` (pooled fresh seeds).

Run from the repository root with git: the moves are ``git mv``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import yaml

sys.path[:0] = [str(Path(__file__).resolve().parents[2] / "strength")]
import decide  # noqa: E402
from merge import merge  # noqa: E402
from pool import pool  # noqa: E402
from table import cross_table  # noqa: E402

from allfives_env.game.rules import make_rules  # noqa: E402
from allfives_train.shell.checkpoints import card_markdown  # noqa: E402
from allfives_train.shell.plot import plot_curve  # noqa: E402

HERE = Path(os.path.relpath(decide.HERE))  # relative, as the files it writes name them
RECIPES = HERE.parent
CANDIDATE = {"all_fives_2p": "recipe2_all_fives_2p", "all_fives_3p": "recipe_all_fives_3p",
             "all_fives_4p_teams": "recipe2_all_fives_4p_teams",
             "five_up_2p": "recipe_five_up_2p"}
#: the levels table's current round robin per setting (agents/levels.yaml), the new one's base
LEVEL_SOURCE = {"all_fives_2p": "all_fives_2p_dmc5.json",
                "all_fives_3p": "all_fives_3p_complete.json",
                "all_fives_4p_teams": "all_fives_4p_teams_complete.json",
                "five_up_2p": "five_up_2p_dmc3.json"}


RULE = ("the rule `experiments/recipes/reproduced/rule.md`, written before the games of seed "
        "20261256: not measurably weaker than the model it replaces against `heuristic` and "
        "`search` (the interval of the difference reaches 0) and head to head (the interval "
        "reaches 50%), on the fresh seed and over every fresh seed of the comparison")
VERDICT = ("`PYTHONPATH=. .venv/bin/python experiments/recipes/reproduced/decide.py` prints "
           "every interval; the games: `bash experiments/recipes/reproduced/run.sh` and the "
           "`eval.sh` of each earlier comparison in `experiments/recipes/`.")


def extras_dir(setting: str) -> Path:
    """Where run.sh and levels.sh left the setting's round-robin, greedy and oracle games."""
    return RECIPES / "all_fives_3p" / "ship" if setting == "all_fives_3p" else HERE / setting


def extras(where: Path) -> tuple[list[Path], list[Path]]:
    """(round-robin pairings at seed 20261130, other files: greedy and oracle)."""
    rr = sorted(where.glob("rr_*.json"))
    other = [p for p in sorted(where.glob("*.json")) if p.stem.startswith(("greedy", "oracle"))]
    return rr, other


def seed_of(path: Path) -> int:
    return int(json.loads(path.read_text())["seed"])


def comparison_md(dirs: list[Path], old: str, rule: str, verdict: str) -> str:
    lines = ["## How it came to be shipped", "",
             f"It is the output of its recipe run from nothing (above). It replaced `{old}` "
             "(now `experiments/checkpoints/" + old + "`) by " + rule + ". "
             "2,000 duplicate games per pairing, the same deals for both:", "",
             "| seed | vs `heuristic` (replaced model) | vs `search` (replaced model) | head to head |",
             "|---|---|---|---|"]
    for d in dirs:
        cells = []
        for bot in ("heuristic", "search"):
            mine, theirs = (json.loads((d / f"{n}.json").read_text())["pairings"][0]
                            for n in (bot, f"control_{bot}"))
            cells.append(f"{100 * mine['win_rate']:.1f}% ({100 * theirs['win_rate']:.1f}%)")
        h = json.loads((d / "h2h.json").read_text())["pairings"][0]
        lo, hi = h["ci95"]
        cells.append(f"{100 * h['win_rate']:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}]")
        lines.append(f"| {seed_of(d / 'h2h.json')} | " + " | ".join(cells) + " |")
    lines += ["", verdict, ""]
    return "\n".join(lines)


def strength_rows(model: str, setting: str, flags: str, dirs: list[Path],
                  where: Path, extras_date: str = "2026-12-04") -> str:
    rows = [pool(bot, [str(d / f"{bot}.json") for d in dirs]) for bot in decide.BOTS]
    _, other = extras(where)
    for path in other:
        (pairing,) = json.loads(path.read_text())["pairings"]
        rows.append({**pool(pairing["b"], [str(path)]),
                     "date": extras_date})
    out = []
    for r in rows:
        seed = r["seeds"][0] if len(r["seeds"]) == 1 else "SEED"
        out.append(f"      - {{vs: {r['vs']}, win_rate: {r['win_rate']}, ci95: {r['ci95']}, "
                   f"games: {r['games']},\n         seeds: {r['seeds']}, date: {r.get('date', '2026-12-04')},\n"
                   f"         command: \"allfives eval --agents ckpt:{model} {r['vs']}{flags} "
                   f"--games {2000 if len(r['seeds']) > 1 else r['games']} --seed {seed}\"}}")
    return "\n".join(out)


def main(setting: str) -> int:
    return ship(setting, CANDIDATE[setting], decide.comparison_dirs(setting),
                extras_dir(setting), RULE, VERDICT,
                extras_date="2026-12-03" if setting == "all_fives_3p" else "2026-12-04")


def ship_over_copy(setting: str, candidate: str, dirs: list[Path], where: Path, rule: str,
                   verdict: str, card_edit: Callable[[dict], None] | None = None) -> int:
    """:func:`ship` where the shipped model's former name in ``experiments/checkpoints/`` is
    a copy of its weights (a recipe's output kept before it shipped): that copy gives way to
    the shipped folder, with its card and fresh-seed files; the new round robin joins the
    levels table's current one."""
    registry = yaml.safe_load(Path("checkpoints/models.yaml").read_text())["models"]
    attic = Path("experiments/checkpoints") / registry[setting]["formerly"][0]
    same = (attic / "policy.npz").read_bytes() == (
        Path("checkpoints") / setting / "policy.npz").read_bytes()
    if not same:
        raise SystemExit(f"ship: {attic} holds other weights than checkpoints/{setting}")
    subprocess.run(["git", "rm", "-r", "-q", str(attic)], check=True)
    return ship(setting, candidate, dirs, where, rule, verdict, card_edit,
                base=f"{setting}_recipe.json")


def ship(setting: str, candidate: str, dirs: list[Path], where: Path, rule: str,
         verdict: str, card_edit: Callable[[dict], None] | None = None,
         base: str | None = None, extras_date: str = "2026-12-04") -> int:
    """Ship ``experiments/checkpoints/<candidate>`` as the setting's model (the module's
    docstring), by ``rule`` on the comparisons in ``dirs``; its other games are in ``where``;
    ``card_edit`` may amend the card first; ``base``: the round robin (in
    ``experiments/strength/``) its pairings join, by default the setting's in LEVEL_SOURCE;
    ``extras_date``: the date of
    its greedy and oracle rows."""
    registry = yaml.safe_load(Path("checkpoints/models.yaml").read_text())["models"]
    model = setting
    old = registry[model]["formerly"][0]
    cand = Path("experiments/checkpoints") / candidate
    dest, attic = Path("checkpoints") / model, Path("experiments/checkpoints") / old
    if attic.exists():
        raise SystemExit(f"ship: {attic} exists already")
    subprocess.run(["git", "mv", str(dest), str(attic)], check=True)
    dest.mkdir()
    for name in ("policy.npz", "config.yaml"):
        shutil.copy2(cand / name, dest / name)
    card = json.loads((cand / "card.json").read_text())
    if card_edit is not None:
        card_edit(card)
    (dest / "card.json").write_text(json.dumps(card, indent=1) + "\n")
    (dest / "card.md").write_text(card_markdown(card) + "\n" + comparison_md(dirs, old, rule,
                                                                             verdict))
    rules = dict(card["rules"])
    plot_curve(card["eval_history"], dest / "learning_curve.png", make_rules(rules.pop("preset"), **rules))
    for d in dirs:
        seed = seed_of(d / "h2h.json")
        for bot in ("heuristic", "search"):
            shutil.copy2(d / f"{bot}.json", dest / f"eval_{bot}_seed{seed}.json")
        shutil.copy2(d / "h2h.json", dest / f"eval_{old}_seed{seed}.json")
    rr, other = extras(where)
    for path in other:
        shutil.copy2(path, dest / f"eval_{path.stem.split('_')[0]}_seed{seed_of(path)}.json")
    table = merge([f"experiments/strength/{base or LEVEL_SOURCE[setting]}", *map(str, rr)])
    source = Path(f"experiments/strength/{setting}_recipe.json")
    source.write_text(json.dumps(table, indent=1) + "\n")
    shutil.copy2(source, dest / "eval.json")
    (dest / "eval.md").write_text(
        f"# allfives eval: {model} (`ckpt:experiments/checkpoints/{candidate}`, the same "
        f"weights) joined to the round robin of its setting (seed {table['seed']}; "
        "experiments/strength/merge.py)\n\n" + cross_table(table) + "\n")
    flags = {"all_fives_3p": " --players 3", "all_fives_4p_teams": " --players 4 --teams",
             "five_up_2p": " --preset five_up"}.get(setting, "")
    print(strength_rows(model, setting, flags, dirs, where, extras_date))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
