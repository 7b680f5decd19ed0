"""Writing checkpoints: atomically, with a model card and the config beside every model.

A checkpoint directory holds ``policy.npz`` (numpy actor, what ``ckpt:`` agents play),
``card.json`` (the model card, read by :mod:`allfives_agents.trained.checkpoint`), ``card.md`` (the
same for
people), ``config.yaml`` (the full training config) and, unless left out, ``model.zip`` (the
SB3 model with its optimizer state, for ``--resume``). It is written into a temporary
directory beside the target and then renamed into place, so a reader sees the old checkpoint
or the new one, never half of one. What is written into the run directory of the run in
progress is recorded in its ``manifest.json`` (:mod:`allfives_train.shell.manifest`) first.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from allfives_agents.trained.checkpoint import CARD_FORMAT
from allfives_agents.trained.policy_numpy import NumpyPolicy, card_spec
from allfives_env.game.observation import OBS_LAYOUT_ID, OBS_SIZE
from allfives_env.game.rules import Rules
from allfives_env.game.tiles import N_ACTIONS
from allfives_train.shell import manifest
from allfives_train.shell.faults import fault_point


def machine() -> dict[str, Any]:
    import numpy as np

    info = {"platform": platform.platform(), "processor": platform.processor() or None,
            "cpu_count": os.cpu_count(), "python": platform.python_version(),
            "numpy": np.__version__}
    try:
        import sb3_contrib
        import stable_baselines3
        import torch

        info.update(torch=torch.__version__, stable_baselines3=stable_baselines3.__version__,
                    sb3_contrib=sb3_contrib.__version__)
    except ImportError:
        pass
    return info


def make_card(rules: Rules, policy: NumpyPolicy, steps: int, wall_time_s: float,
              config: dict[str, Any], eval_history: list[dict[str, Any]],
              warm_start: dict[str, Any] | None = None) -> dict[str, Any]:
    """The model card. ``warm_start``: the imitation's teacher, decisions, held-out accuracy.
    ``policy``: :func:`~allfives_agents.trained.policy_numpy.card_spec` (a policy that reads
    per-action inputs has its kind and their names there)."""
    latest = eval_history[-1] if eval_history else None
    card: dict[str, Any] = {
        "format": CARD_FORMAT,
        "obs_layout": OBS_LAYOUT_ID, "obs_size": OBS_SIZE, "n_actions": N_ACTIONS,
        "players": rules.players, "teams": rules.teams,
        "rules": {**rules.to_dict(), "preset": rules.preset},
        "algo": "MaskablePPO (sb3-contrib), self-play against an opponent pool",
        "policy_file": "policy.npz",
        "policy": card_spec(policy),
        "warm_start": warm_start,
        "steps": int(steps), "wall_time_s": round(wall_time_s, 1),
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": machine(),
        "eval": latest, "eval_history": eval_history,
        "config": config,
    }
    return card


def card_markdown(card: dict[str, Any]) -> str:
    rules = card["rules"]
    table = "teams" if card["teams"] else "no teams"
    lines = [f"# Model card: {card['rules']['preset']}, {card['players']} seats ({table})", "",
             f"- algorithm: {card['algo']}",
             f"- observation layout: `{card['obs_layout']}` ({card['obs_size']} floats), "
             f"{card['n_actions']} actions",
             f"- network: actor {card['policy']['hidden']} {card['policy']['activation']}"
             + (f", kind `{card['policy']['kind']}` (per-action features: "
                f"{', '.join(card['policy']['features'])})" if "kind" in card["policy"] else ""),
             *_warm_line(card.get("warm_start")),
             *_trained_lines(card),
             f"- rules: {', '.join(f'{k}={v}' for k, v in rules.items())}", ""]
    if card["eval"]:
        at = card["eval"]["steps"]
        lines += [f"## Evaluation at {at:,} learner steps (duplicate deals, its best action)",
                  "", f"Measured during training at step {at:,}"
                  + ("" if at == card["steps"] else f"; this checkpoint is at step "
                     f"{card['steps']:,}") + ".", "",
                  "| opponent | games | win rate | 95% interval | mean margin |",
                  "|---|---|---|---|---|"]
        for name, r in card["eval"]["results"].items():
            lo, hi = r["ci95"]
            lines.append(f"| {name} | {r['games']} | {r['win_rate']:.3f} | "
                         f"[{lo:.3f}, {hi:.3f}] | {r['mean_margin']:+.1f} |")
        lines.append("")
    lines += _recipe_lines(card.get("recipe"))
    if card.get("note"):
        lines += [f"Note: {card['note']}.", ""]
    lines += ["Full configuration: `config.yaml`; everything above: `card.json`.", ""]
    return "\n".join(lines)


def _recipe_lines(recipe: dict[str, Any] | None) -> list[str]:
    """The recipe that made the model from nothing: its one command and every stage's time."""
    if not recipe:
        return []
    lines = [f"## Recipe `{recipe['name']}`: from nothing, one command", "", "```bash",
             recipe["command"], "```", "", "| stage | algo | steps | wall time |",
             "|---|---|---|---|"]
    for s in recipe["stages"]:
        lines.append(f"| `{s['name']}` | `{s['algo']}` | {s['steps']:,} | "
                     f"{float(s['wall_time_s'] or 0) / 60:.1f} min |")
    return lines + [f"| in all | | | {recipe['wall_time_s'] / 60:.1f} min |", ""]


def _trained_lines(card: dict[str, Any]) -> list[str]:
    where = f"on {card['machine'].get('cpu_count')} CPUs ({card['machine']['platform']})"
    d = card.get("distill")
    if not d:
        config = card.get("config", {})
        method, parts = ("Deep Monte-Carlo", "Deep Monte-Carlo from "
                         f"{config.get('init_from') or 'a fresh actor'} and evaluations") \
            if config.get("algo") == "dmc" else ("PPO", "warm start, PPO and evaluations")
        return [f"- trained for {card['steps']:,} {method} learner steps, "
                f"{card['wall_time_s']:.0f} s in all (every session's time from its command's "
                f"start to this checkpoint: {parts}), {where}"]
    before, after = d["held_out_before"], d["held_out_after"]
    labelled, fitted = d.get("labelled", d["positions"]), "and fitted"
    if labelled != d["positions"]:  # distill_extra_labels: earlier runs' positions too
        folders = ", ".join(f"`{f}`" for f in d.get("extra_labels", []))
        fitted = (f"plus {d['positions'] - labelled:,} of earlier runs' ({folders}); "
                  f"{d['positions']:,} fitted")
    return [f"- teacher: `{d['teacher']}`; {labelled:,} positions labelled ({d['shards']} "
            f"shards) {fitted}, {card['wall_time_s']:.0f} s in all (every session's time: "
            f"labels, fit and evaluations), {where}",
            f"- held out (5% of the positions): agreement with the teacher's best move "
            f"{before['agree']:.3f} -> {after['agree']:.3f}, regret {before['regret']:.2f} -> "
            f"{after['regret']:.2f} points per decision"]


def _warm_line(ws: dict[str, Any] | None) -> list[str]:
    if not ws:
        return []
    return [f"- warm start: imitated `{ws['teacher']}` on {ws['decisions']:,} of its decisions "
            f"(held-out accuracy {ws['accuracy']:.3f}) before PPO"]


def write_atomic_dir(target: Path, fill: Callable[[Path], None]) -> None:
    """Build a directory with ``fill(tmp)`` and rename it to ``target`` (replacing it). In a
    run's folder every path is confined (no symlink on the way) and the temporaries are
    listed in its manifest before they are made
    (:func:`allfives_train.shell.manifest.temporary`)."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.parent / f".{target.name}.tmp-{os.getpid()}"
    old = target.parent / f".{target.name}.old-{os.getpid()}"
    with manifest.temporary(tmp), manifest.temporary(old):
        try:
            tmp.mkdir()
            fill(tmp)
            manifest.note_pending(target, tmp)  # listed before it is in place
            fault_point("checkpoint_write")
            if target.exists() or target.is_symlink():
                os.replace(target, old)
                fault_point("checkpoint_swap")
            os.replace(tmp, target)
        finally:
            _remove_tree(tmp)
            _remove_tree(old)


def _remove_tree(path: Path) -> None:
    """Remove a temporary (a folder whole, a file or a link itself, never its target)."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    elif path.is_symlink() or path.exists():
        path.unlink(missing_ok=True)


def save_checkpoint(target: Path, card: dict[str, Any], policy: NumpyPolicy,
                    model: Any | None = None) -> None:
    """Write a checkpoint directory atomically (``model``: the SB3 model, or None)."""
    def fill(tmp: Path) -> None:
        policy.save(tmp / "policy.npz")
        (tmp / "card.json").write_text(json.dumps(card, indent=1) + "\n")
        (tmp / "card.md").write_text(card_markdown(card))
        (tmp / "config.yaml").write_text(yaml.safe_dump(card["config"], sort_keys=False))
        if model is not None:
            model.save(tmp / "model.zip")

    write_atomic_dir(target, fill)


def write_text_atomic(path: Path, text: str) -> None:
    write_bytes_atomic(path, text.encode())


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """``data`` into ``path`` through a temporary file renamed into place (in a run's folder:
    confined and listed, :func:`write_atomic_dir`)."""
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with manifest.temporary(tmp):
        try:
            manifest.write_new(tmp, data)
            manifest.note_pending(path, tmp)
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)


def save_policy_atomic(path: Path, policy: NumpyPolicy) -> None:
    """Write ``policy`` to ``path`` through a temporary file renamed into place, so a
    reader (or a resumed run) never finds half a file."""
    import io

    import numpy as np

    buf = io.BytesIO()
    np.savez(buf, allow_pickle=False, **policy.arrays())
    data = buf.getvalue()
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with manifest.temporary(tmp):
        try:
            manifest.write_new(tmp, data[:len(data) // 2])
            with open(tmp, "ab") as f:
                f.flush()
                fault_point("snapshot_write")
                f.write(data[len(data) // 2:])
            manifest.note_pending(path, tmp)
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)
