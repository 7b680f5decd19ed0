"""``allfives replay FILE --game K``: verify a recorded game and show it hand by hand.

Every record is first checked against the ``allfives-record/1`` schema
(:func:`allfives_env.records.record_schema.validate`), then replayed from its deals with
:func:`allfives_env.records.record.replay`. Each problem is one line on stderr naming the file,
line,
game, hand, event and field: exit code 2 for input that is not a record (not UTF-8 text, not
JSON, a wrong or missing field), 1 for a record that the rules do not reproduce.
``--verify-only`` checks without printing the game (all games when ``--game`` is omitted).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from allfives_env.game.rules import Rules, rules_from_dict
from allfives_env.records.record import FORMAT, RecordError, RecordSchemaError, read_located, replay


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a JSON Lines file of allfives-record/1 games")
    parser.add_argument("--game", type=int, default=None, metavar="K",
                        help="which game, counting from 0 (default: 0; all with --verify-only)")
    parser.add_argument("--verify-only", action="store_true",
                        help="only check that the record(s) replay exactly")


def run(args: argparse.Namespace) -> int:
    located = list(read_located(args.file))
    if not located:
        raise ValueError(f"{args.file} holds no records")
    lines = [n for n, _ in located]
    records = [rec for _, rec in located]
    if args.game is not None and not 0 <= args.game < len(records):
        raise ValueError(f"--game {args.game}: {args.file} holds {len(records)} games, "
                         f"numbered 0..{len(records) - 1}")
    if args.game is None and args.verify_only:
        wanted = list(range(len(records)))
    else:
        wanted = [args.game or 0]
    for k in wanted:
        where = f"{args.file} line {lines[k]}: game {k}"
        try:
            replay(records[k])
        except RecordSchemaError as exc:
            _say(f"allfives replay: error: {where}: not an {FORMAT} record: {exc}")
            return 2
        except RecordError as exc:
            _say(f"allfives replay: {where}: does not replay: {exc}")
            return 1
    if args.verify_only:
        print(f"{len(wanted)} game(s) of {args.file} replay exactly")
        return 0
    try:
        print(format_game(records[wanted[0]], wanted[0]), flush=True)
    except BrokenPipeError:  # e.g. `allfives replay ... | head`: not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


def _say(line: str) -> None:
    """One line on stderr, whatever the message holds."""
    print(" ".join(line.split()), file=sys.stderr)


def _tile(t: list[int]) -> str:
    return f"[{t[0]}|{t[1]}]"


def _scores(scores: list[int]) -> str:
    return " ".join(f"{s:>4}" for s in scores)


def format_game(record: dict[str, Any], index: int = 0) -> str:
    """A verified record as readable plain text, hand by hand."""
    rules = rules_from_dict(record["rules"])
    options = ", ".join(f"{k}={v}" for k, v in record["rules"].items())
    lines = [
        f"game {index}: seed {record.get('seed')}; agents: "
        + ", ".join(f"seat {s} {a}" for s, a in enumerate(record.get("agents", []))),
        f"rules: {options}",
        "replay: every play, hand result and score checks out",
    ]
    scores = [0] * rules.n_sides
    for h, hand in enumerate(record["hands"]):
        lines.append("")
        lines.extend(_format_hand(rules, hand, h, scores))
        scores = list(hand["scores"])
    lines.append("")
    winner = record["winner"]
    lines.append(f"final scores: {_scores(record['final_scores'])}; "
                 + (f"winner: {rules.side_name(winner)}" if winner is not None else
                    "no winner" + (" (truncated)" if record.get("truncated") else "")))
    return "\n".join(lines)


def _format_hand(rules: Rules, hand: dict[str, Any], h: int, scores: list[int]) -> list[str]:
    lines = [f"hand {h + 1}: seat {hand['leader']} leads; scores before {_scores(scores)}"]
    for seat, tiles in enumerate(hand["deal"]):
        lines.append(f"  deal seat {seat}: {' '.join(_tile(t) for t in tiles)}")
    bone = hand["boneyard"]
    lines.append(f"  boneyard ({len(bone)}): {' '.join(_tile(t) for t in bone) or '-'}")
    scores = list(scores)
    for j, ev in enumerate(hand["events"], 1):
        seat = ev["seat"]
        if ev["type"] == "play":
            where = "leads" if ev["end"] == "lead" else f"on {ev['end']:<5}"
            text = f"seat {seat} plays {_tile(ev['tile'])} {where}"
            if ev["points"]:
                scores[rules.side_of(seat)] += ev["points"]
                text = f"{text:<32} +{ev['points']:<3} scores {_scores(scores)}"
        elif ev["type"] == "draw":
            text = f"seat {seat} draws {_tile(ev['tile'])}"
        else:
            text = f"seat {seat} passes"
        lines.append(f"  {j:>3}. {text}")
    res = hand["result"]
    who = "nobody" if res["winner"] is None else rules.side_name(res["winner"])
    lines.append(f"  result: {res['reason']}, hand won by {who}; end-of-hand points "
                 f"{' '.join(f'{p:+d}' for p in res['hand_points'])}")
    lines.append(f"  scores after hand {h + 1}: {_scores(hand['scores'])}")
    return lines
