"""Summaries of ``allfives eval`` outcomes: the table, JSON, CSV and the records file."""

from __future__ import annotations

import csv
import dataclasses
import json
from collections.abc import Iterable, Sequence
from typing import Any

from allfives_agents.evaluation.stats import elo_ratings, wilson, win_rate
from allfives_env.game.match import seatings
from allfives_env.game.rules import Rules
from allfives_env.inputs.paths import atomic_write

CONVENTIONS = (
    "win rate = (wins + draws/2) / games of the first agent of the pairing; ci95 = Wilson score "
    "interval over games; points per hand = final score / hands played (an entry with several "
    "sides: their mean); elo = Bradley-Terry maximum likelihood over all pairings, 1 virtual "
    "draw per pairing, mean 1500; ms per move = mean wall time of act() over every decision"
)


@dataclasses.dataclass
class Outcome:
    """One game of a pairing: ``winner`` is 0 (entry a), 1 (entry b) or None (draw)."""

    pair: tuple[int, int]
    deal: int
    seating: int
    winner: int | None
    points: tuple[float, float]  # each entry's final score (mean over its sides)
    hands: int
    seconds: tuple[float, float]
    moves: tuple[int, int]
    slowest: tuple[float, float]
    record: dict[str, Any] | None = None


class Tally:
    """Running sums of outcomes, enough for :meth:`summary` (what :func:`summarize` gives for
    the same outcomes, in the same order): memory flat in the number of games."""

    def __init__(self) -> None:
        self.pairs: dict[tuple[int, int], list[float]] = {}  # games wins losses hands pa pb
        self.entries: dict[int, list[float]] = {}  # games score seconds moves slowest

    def add(self, o: Outcome) -> None:
        p = self.pairs.setdefault(o.pair, [0, 0, 0, 0, 0.0, 0.0])
        p[0] += 1
        p[1] += o.winner == 0
        p[2] += o.winner == 1
        p[3] += o.hands
        p[4] += o.points[0]
        p[5] += o.points[1]
        for e, k in enumerate(o.pair):
            a = self.entries.setdefault(k, [0, 0.0, 0.0, 0, 0.0])
            a[0] += 1
            a[1] += 1.0 if o.winner == e else 0.5 if o.winner is None else 0.0
            a[2] += o.seconds[e]
            a[3] += o.moves[e]
            a[4] = max(a[4], o.slowest[e])

    def pairing(self, ids: Sequence[str], pair: tuple[int, int]) -> dict[str, Any]:
        games, wins, losses, hands, sa, sb = self.pairs[pair]
        return _pairing(ids, pair, int(games), int(wins), int(losses), int(hands), sa, sb)

    def summary(self, rules: Rules, ids: Sequence[str], seed: int | None = None
                ) -> dict[str, Any]:
        """Everything the table, JSON and CSV show (:func:`summarize`)."""
        pairings = [self.pairing(ids, pair) for pair in sorted(self.pairs)]
        results = {pair: (p["wins"] + p["draws"] / 2, p["games"])
                   for pair, p in zip(sorted(self.pairs), pairings)}
        elo = elo_ratings(len(ids), results)
        agents = []
        for k, agent_id in enumerate(ids):
            games, score, seconds, moves, slowest = self.entries.get(k, [0, 0.0, 0.0, 0, 0.0])
            agents.append({"id": agent_id, "elo": elo[k], "games": int(games),
                           "win_rate": score / games if games else 0.5,
                           "ms_per_move": 1000 * seconds / moves if moves else 0.0,
                           "max_ms_per_move": 1000 * slowest, "moves": int(moves)})
        return {"rules": rules.to_dict(), "preset": rules.preset, "seed": seed,
                "seatings_per_deal": len(seatings(rules)), "agents": agents,
                "pairings": pairings, "conventions": CONVENTIONS}


def tally(stream: Iterable[Outcome], records_path: str | None) -> Tally:
    """Consume the outcomes into a :class:`Tally`, streaming their records to ``records_path``
    (JSON Lines, written to a hidden temporary file beside it and renamed into place when
    complete: :func:`allfives_env.inputs.paths.atomic_write`); no outcome is kept."""
    out = Tally()
    if not records_path:
        for o in stream:
            out.add(o)
        return out
    with atomic_write(records_path) as f:
        for o in stream:
            f.write(json.dumps(o.record, separators=(",", ":")) + "\n")
            o.record = None
            out.add(o)
    return out


def _pairing(ids: Sequence[str], pair: tuple[int, int], games: int, wins: int, losses: int,
             hands: int, sum_a: float, sum_b: float) -> dict[str, Any]:
    draws = games - wins - losses
    rate = win_rate(wins, draws, games)
    lo, hi = wilson(rate, games)
    pa, pb = sum_a / hands, sum_b / hands
    return {"a": ids[pair[0]], "b": ids[pair[1]], "games": games, "wins": wins,
            "losses": losses, "draws": draws, "win_rate": rate, "ci95": [lo, hi],
            "hands": hands, "points_per_hand_a": pa, "points_per_hand_b": pb,
            "margin_per_hand": pa - pb}


def pairing_summary(ids: Sequence[str], pair: tuple[int, int], outs: list[Outcome]
                    ) -> dict[str, Any]:
    """Wins, losses, draws, win rate with its Wilson interval and points per hand of the
    first entry of ``pair`` over ``outs``."""
    return _pairing(ids, pair, len(outs), sum(o.winner == 0 for o in outs),
                    sum(o.winner == 1 for o in outs), sum(o.hands for o in outs),
                    sum(o.points[0] for o in outs), sum(o.points[1] for o in outs))


def summarize(rules: Rules, ids: Sequence[str], outcomes: Iterable[Outcome],
              seed: int | None = None) -> dict[str, Any]:
    """Everything the table, JSON and CSV show; ``seed``: the tournament's, as reported."""
    out = Tally()
    for o in outcomes:
        out.add(o)
    return out.summary(rules, ids, seed)


def format_table(summary: dict[str, Any]) -> str:
    r = summary["rules"]
    teams = ", teams" if r["teams"] else ""
    seed = "" if summary["seed"] is None else f", seed {summary['seed']}"
    lines = [f"{summary['preset']}, {r['players']} players{teams}{seed}, "
             f"{summary['seatings_per_deal']} seatings per deal (duplicate)", ""]
    width = max(12, *(len(p["a"]) + len(p["b"]) + 4 for p in summary["pairings"]))
    lines.append(f"{'pairing':<{width}} {'games':>6} {'W-L-D':>13} {'win rate':>8} "
                 f"{'95% CI':>15} {'pts/hand':>15} {'margin':>7}")
    for p in summary["pairings"]:
        wld = f"{p['wins']}-{p['losses']}-{p['draws']}"
        ci = f"[{100 * p['ci95'][0]:.1f}, {100 * p['ci95'][1]:.1f}]"
        pts = f"{p['points_per_hand_a']:.2f} : {p['points_per_hand_b']:.2f}"
        lines.append(f"{p['a'] + ' vs ' + p['b']:<{width}} {p['games']:>6} {wld:>13} "
                     f"{100 * p['win_rate']:>7.1f}% {ci:>15} {pts:>15} "
                     f"{p['margin_per_hand']:>+7.2f}")
    lines += ["", f"{'agent':<{width}} {'Elo':>6} {'win rate':>8} {'ms/move':>9} {'max ms':>8}"]
    for a in sorted(summary["agents"], key=lambda a: -a["elo"]):
        lines.append(f"{a['id']:<{width}} {a['elo']:>6.0f} {100 * a['win_rate']:>7.1f}% "
                     f"{a['ms_per_move']:>9.2f} {a['max_ms_per_move']:>8.1f}")
    lines += ["", "win rate: of the first agent, draws count half; 95% CI: Wilson; "
              "Elo: Bradley-Terry, mean 1500"]
    return "\n".join(lines)


def write_json(path: str, summary: dict[str, Any]) -> None:
    with atomic_write(path) as f:
        f.write(json.dumps(summary, indent=2) + "\n")


CSV_FIELDS = ("a", "b", "games", "wins", "losses", "draws", "win_rate", "ci95_low", "ci95_high",
              "points_per_hand_a", "points_per_hand_b", "margin_per_hand", "elo_a", "elo_b")


def write_csv(path: str, summary: dict[str, Any]) -> None:
    elo = {a["id"]: a["elo"] for a in summary["agents"]}
    with atomic_write(path, newline="") as f:
        w = csv.writer(f)
        w.writerow(CSV_FIELDS)
        for p in summary["pairings"]:
            w.writerow([p["a"], p["b"], p["games"], p["wins"], p["losses"], p["draws"],
                        f"{p['win_rate']:.6f}", f"{p['ci95'][0]:.6f}", f"{p['ci95'][1]:.6f}",
                        f"{p['points_per_hand_a']:.4f}", f"{p['points_per_hand_b']:.4f}",
                        f"{p['margin_per_hand']:.4f}", f"{elo[p['a']]:.1f}",
                        f"{elo[p['b']]:.1f}"])
