"""Reference checker for ``allfives-record/1`` game records.

A second, independent implementation of the All Fives rules of ``docs/rules.md``, written
from the rules text alone (it imports nothing from the project), for differential testing.
``check_record(record)`` replays every hand from its deal and boneyard and returns a list of
human-readable errors; an empty list means the record is exactly right.

A play's ``points``, a hand's ``result`` and ``scores`` and the game's ending are compared with
the replay. A wrong ``points`` is reported and the replay goes on with the right value; wrong
hand ``scores`` are reported and the next hand starts from the recorded ones, so that one
mistake gives one error rather than a cascade. An illegal event ends the check: nothing after
it can be replayed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

FORMAT = "allfives-record/1"
RULE_KEYS = frozenset(
    {
        "players",
        "teams",
        "hand_size",
        "target",
        "win_check",
        "first_leader",
        "next_leader",
        "spinner",
        "hand_end",
        "rounding",
        "boneyard_reserve",
        "max_hands",
    }
)
CHOICES: dict[str, tuple[str, ...]] = {
    "win_check": ("immediate", "end_of_hand"),
    "first_leader": ("random", "highest_double"),
    "next_leader": ("hand_winner", "highest_double", "random"),
    "hand_end": ("subtract_own", "winner_collects"),
    "rounding": ("per_hand", "total"),
}
HAND_KEYS = ("leader", "deal", "boneyard", "events", "result", "scores")
EVENT_TYPES = ("play", "draw", "pass")
SPINNER_ENDS = ("up", "down")
ALL_TILES = frozenset((a, b) for a in range(7) for b in range(a, 7))

Tile = tuple[int, int]


class _Stop(Exception):
    """An error after which the replay cannot go on."""


def check_record(record: dict) -> list[str]:
    """Replay a whole ``allfives-record/1`` game; return its errors (empty: exactly right)."""
    errors: list[str] = []
    try:
        _check_game(record, errors)
    except _Stop as stop:
        errors.append(str(stop))
    return errors


# --- small helpers -------------------------------------------------------------------------


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _same(got: object, want: object) -> bool:
    """Equality that does not let ``True`` stand for ``1`` or ``1.0`` for ``1``."""
    if isinstance(want, list):
        return (
            isinstance(got, list)
            and len(got) == len(want)
            and all(_same(g, w) for g, w in zip(got, want, strict=True))
        )
    if isinstance(want, bool) or want is None:
        return got is want
    if _is_int(want):
        return _is_int(got) and got == want
    return got == want


def round5(pips: int) -> int:
    """Nearest multiple of 5: remainder 1 or 2 rounds down, 3 or 4 rounds up."""
    rest = pips % 5
    return pips - rest if rest < 3 else pips + 5 - rest


def _score(total: int) -> int:
    return total if total > 0 and total % 5 == 0 else 0


def _is_tile(raw: object) -> bool:
    return (
        isinstance(raw, list | tuple)
        and len(raw) == 2
        and all(_is_int(half) and 0 <= half <= 6 for half in raw)
    )


def _tile(raw: object, where: str) -> Tile:
    """A tile as a sorted pair; a ``_Stop`` if ``raw`` is not a double-six tile."""
    if not _is_tile(raw):
        raise _Stop(f"{where}: {raw!r} is not a double-six tile")
    low, high = sorted(raw)  # type: ignore[arg-type]
    return (low, high)


def _show(tile: Tile) -> str:
    return f"[{tile[0]},{tile[1]}]"


def _pips(tiles: set[Tile]) -> int:
    return sum(a + b for a, b in tiles)


# --- rules ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Rules:
    players: int
    teams: bool
    hand_size: int
    target: int
    win_check: str
    first_leader: str
    next_leader: str
    spinner: bool
    hand_end: str
    rounding: str
    boneyard_reserve: int
    max_hands: int

    @property
    def sides(self) -> int:
        return 2 if self.teams else self.players

    def side(self, seat: int) -> int:
        return seat % 2 if self.teams else seat


def _parse_rules(raw: object) -> Rules:
    if not isinstance(raw, dict):
        raise _Stop("rules: expected an object")
    keys = set(raw)
    if keys != RULE_KEYS:
        missing, extra = sorted(RULE_KEYS - keys), sorted(keys - RULE_KEYS)
        raise _Stop(f"rules: missing keys {missing}, unexpected keys {extra}")
    problems = _rule_type_problems(raw) or _rule_size_problems(raw)
    if problems:
        raise _Stop("rules: " + "; ".join(problems))
    return Rules(**raw)


def _rule_type_problems(raw: dict) -> list[str]:
    problems = []
    if not (_is_int(raw["players"]) and raw["players"] in (2, 3, 4)):
        problems.append(f"players must be 2, 3 or 4, not {raw['players']!r}")
    for key in ("teams", "spinner"):
        if not isinstance(raw[key], bool):
            problems.append(f"{key} must be true or false, not {raw[key]!r}")
    for key in ("hand_size", "target", "max_hands"):
        if not (_is_int(raw[key]) and raw[key] >= 1):
            problems.append(f"{key} must be a resolved positive int, not {raw[key]!r}")
    if not (_is_int(raw["boneyard_reserve"]) and raw["boneyard_reserve"] >= 0):
        problems.append(f"boneyard_reserve must be an int >= 0, not {raw['boneyard_reserve']!r}")
    for key, choices in CHOICES.items():
        if not (isinstance(raw[key], str) and raw[key] in choices):
            problems.append(f"{key} must be one of {list(choices)}, not {raw[key]!r}")
    return problems


def _rule_size_problems(raw: dict) -> list[str]:
    problems = []
    if raw["teams"] and raw["players"] != 4:
        problems.append("teams needs 4 players")
    left = len(ALL_TILES) - raw["players"] * raw["hand_size"]
    if left < 0:
        problems.append(f"{raw['players']} hands of {raw['hand_size']} need more than 28 tiles")
    elif raw["boneyard_reserve"] > left:
        problems.append(f"boneyard_reserve {raw['boneyard_reserve']} exceeds the boneyard ({left})")
    return problems


# --- the table -----------------------------------------------------------------------------


@dataclass
class _Arm:
    value: int  # the number a tile played here must match
    double: bool  # the exposed tile is a double: it counts both halves
    tiles: int = 0  # tiles played on this arm (the lead is on no arm)

    def pips(self) -> int:
        return 2 * self.value if self.double else self.value


class _Board:
    """The open ends of the line of play, with the spinner's up and down arms."""

    def __init__(self, spinner_rule: bool) -> None:
        self.spinner_rule = spinner_rule
        self.lead: Tile | None = None
        self.arms: dict[str, _Arm] = {}
        self.spinner_at: str | None = None  # "lead", "left" or "right"
        self.spinner_value = 0
        self.spinner_mark = 0  # tiles on the spinner's arm, the spinner included

    def matches(self, tile: Tile) -> bool:
        return self.lead is None or any(arm.value in tile for arm in self.arms.values())

    def lay_lead(self, left: int, right: int) -> None:
        double = left == right
        self.lead = (left, right)
        self.arms = {"left": _Arm(left, double), "right": _Arm(right, double)}
        if double and self.spinner_rule:
            self.spinner_at, self.spinner_value = "lead", left

    def lay(self, tile: Tile, end: str) -> None:
        """Play ``tile`` on the open ``end``, which it must match."""
        arm = self.arms[end]
        arm.value = tile[0] + tile[1] - arm.value
        arm.double = tile[0] == tile[1]
        arm.tiles += 1
        if arm.double and self.spinner_rule and self.spinner_at is None:
            self.spinner_at, self.spinner_value, self.spinner_mark = (
                end,
                tile[0],
                arm.tiles,
            )
        if "up" not in self.arms and self._spinner_sides_covered():
            for name in SPINNER_ENDS:
                self.arms[name] = _Arm(self.spinner_value, False)

    def _spinner_sides_covered(self) -> bool:
        if self.spinner_at == "lead":
            return self.arms["left"].tiles > 0 and self.arms["right"].tiles > 0
        if self.spinner_at is not None:
            return self.arms[self.spinner_at].tiles > self.spinner_mark
        return False

    def total(self) -> int:
        """The sum of the open ends."""
        assert self.lead is not None
        if self.arms["left"].tiles == 0 and self.arms["right"].tiles == 0:
            return sum(self.lead)  # a lone lead counts its pips once
        return sum(
            arm.pips()
            for name, arm in self.arms.items()
            if arm.tiles > 0 or name not in SPINNER_ENDS
        )


# --- one hand ------------------------------------------------------------------------------


@dataclass
class _Outcome:
    reason: str
    winner: int | None  # side that won the hand
    domino_seat: int | None
    hand_points: list[int]
    scores: list[int]  # scores after the hand, as the replay computes them


class _HandReplay:
    """Replays one hand's events, raising ``_Stop`` at the first illegal one."""

    def __init__(self, rules: Rules, where: str, deal: list[list[Tile]], boneyard: list[Tile]):
        self.rules = rules
        self.where = where
        self.hands = [set(tiles) for tiles in deal]
        self.boneyard = boneyard
        self.drawable = len(boneyard) - rules.boneyard_reserve
        self.drawn = 0
        self.board = _Board(rules.spinner)
        self.turn = 0
        self.pending: Tile | None = None  # a drawn tile that must be played at once
        self.lead_tile: Tile | None = None  # the tile the leader must lead, if the rule says
        self.reason: str | None = None
        self.end_seat: int | None = None  # the seat that dominoed or reached the target
        self.errors: list[str] = []
        self.scores: list[int] = []

    def run(self, leader: int, scores: list[int], events: object) -> None:
        if not isinstance(events, list):
            raise _Stop(f"{self.where}: events must be a list")
        self.turn, self.scores = leader, list(scores)
        for number, event in enumerate(events):
            where = f"{self.where} event {number}"
            if self.reason is not None:
                raise _Stop(f"{where}: the hand is already over ({self.reason})")
            kind, seat = self._head(event, where)
            if number == 0 and (kind != "play" or event.get("end") != "lead"):
                raise _Stop(f"{where}: a hand must open with the leader's lead")
            getattr(self, f"_{kind}")(event, seat, where)
        if self.reason is None:
            raise _Stop(f"{self.where}: the events stop before the hand is over")

    def _head(self, event: object, where: str) -> tuple[str, int]:
        if not isinstance(event, dict) or event.get("type") not in EVENT_TYPES:
            raise _Stop(f"{where}: {event!r} is not a play, draw or pass event")
        seat = event.get("seat")
        if not _same(seat, self.turn):
            raise _Stop(f"{where}: seat {seat!r} acts, but it is seat {self.turn}'s turn")
        if self.pending is not None and event["type"] != "play":
            raise _Stop(f"{where}: seat {seat} must play the drawn {_show(self.pending)} at once")
        return event["type"], seat  # type: ignore[return-value]

    def _can_play(self, seat: int) -> bool:
        return any(self.board.matches(tile) for tile in self.hands[seat])

    def _blocked(self) -> bool:
        exhausted = self.drawn >= self.drawable
        return exhausted and not any(self._can_play(seat) for seat in range(self.rules.players))

    def _advance(self) -> None:
        self.turn = (self.turn + 1) % self.rules.players

    def _play(self, event: dict, seat: int, where: str) -> None:
        tile = _tile(event.get("tile"), where)
        points = event.get("points")
        if not _is_int(points):
            raise _Stop(f"{where}: points must be an int, not {points!r}")
        if tile not in self.hands[seat]:
            raise _Stop(f"{where}: seat {seat} plays {_show(tile)}, which it does not hold")
        if self.pending is not None and tile != self.pending:
            raise _Stop(f"{where}: seat {seat} must play the drawn {_show(self.pending)} at once")
        self._lay(tile, event, where)
        self.hands[seat].remove(tile)
        self.pending = None
        total = self.board.total()
        scored = _score(total)
        if points != scored:
            self.errors.append(
                f"{where}: seat {seat} plays {_show(tile)} for {points} points,"
                f" expected {scored} (open ends total {total})"
            )
        self.scores[self.rules.side(seat)] += scored
        self._after_play(seat, scored)

    def _lay(self, tile: Tile, event: dict, where: str) -> None:
        end = event.get("end")
        if self.board.lead is None:
            if self.lead_tile is not None and tile != self.lead_tile:
                self.errors.append(
                    f"{where}: the lead must be {_show(self.lead_tile)}, not {_show(tile)}"
                )
            self.board.lay_lead(*event["tile"])
            return
        if not isinstance(end, str) or end not in self.board.arms:
            raise _Stop(f"{where}: end {end!r} is not open (open: {sorted(self.board.arms)})")
        value = self.board.arms[end].value
        if value not in tile:
            raise _Stop(f"{where}: {_show(tile)} does not match the {end} end ({value})")
        self.board.lay(tile, end)

    def _after_play(self, seat: int, points: int) -> None:
        side = self.rules.side(seat)
        immediate = self.rules.win_check == "immediate"
        if immediate and points > 0 and self.scores[side] >= self.rules.target:
            self.reason, self.end_seat = "target", seat
        elif not self.hands[seat]:
            self.reason, self.end_seat = "domino", seat
        elif self._blocked():
            self.reason = "blocked"
        else:
            self._advance()

    def _draw(self, event: dict, seat: int, where: str) -> None:
        tile = _tile(event.get("tile"), where)
        if self._can_play(seat):
            raise _Stop(f"{where}: seat {seat} draws although it has a legal play")
        if self.drawn >= self.drawable:
            raise _Stop(
                f"{where}: seat {seat} draws, but the boneyard can give no more"
                f" ({self.drawn} drawn, {self.rules.boneyard_reserve} kept in reserve)"
            )
        expected = self.boneyard[self.drawn]
        if tile != expected:
            raise _Stop(
                f"{where}: seat {seat} draws {_show(tile)},"
                f" but the next boneyard tile is {_show(expected)}"
            )
        self.drawn += 1
        self.hands[seat].add(tile)
        if self.board.matches(tile):
            self.pending = tile

    def _pass(self, event: dict, seat: int, where: str) -> None:
        if self._can_play(seat):
            raise _Stop(f"{where}: seat {seat} passes although it has a legal play")
        if self.drawn < self.drawable:
            raise _Stop(f"{where}: seat {seat} passes while the boneyard can still give a tile")
        if self._blocked():
            self.reason = "blocked"
        else:
            self._advance()


# --- end of a hand -------------------------------------------------------------------------


def _blocked_winner(rules: Rules, hands: list[set[Tile]]) -> int | None:
    """Under winner_collects: fewest pips, then fewest tiles; still equal, nobody."""
    pips, tiles = [0] * rules.sides, [0] * rules.sides
    for seat, held in enumerate(hands):
        pips[rules.side(seat)] += _pips(held)
        tiles[rules.side(seat)] += len(held)
    ranks = [(pips[side], tiles[side]) for side in range(rules.sides)]
    best = min(ranks)
    return ranks.index(best) if ranks.count(best) == 1 else None


def _hand_end(
    rules: Rules, hands: list[set[Tile]], domino_seat: int | None
) -> tuple[int | None, list[int]]:
    """The hand's winning side (or None) and its end-of-hand points per side."""
    points = [0] * rules.sides
    winner = None if domino_seat is None else rules.side(domino_seat)
    if rules.hand_end == "subtract_own":
        for seat, held in enumerate(hands):
            points[rules.side(seat)] -= round5(_pips(held))
        return winner, points
    if domino_seat is None:
        winner = _blocked_winner(rules, hands)
    if winner is None:
        return None, points
    losers = [_pips(held) for seat, held in enumerate(hands) if rules.side(seat) != winner]
    if rules.rounding == "per_hand":
        points[winner] = sum(round5(pips) for pips in losers)
    else:
        points[winner] = round5(sum(losers))
    return winner, points


def _outcome(replay: _HandReplay) -> _Outcome:
    rules = replay.rules
    assert replay.reason is not None
    if replay.reason == "target":
        assert replay.end_seat is not None
        zero = [0] * rules.sides
        return _Outcome("target", rules.side(replay.end_seat), None, zero, replay.scores)
    domino_seat = replay.end_seat if replay.reason == "domino" else None
    winner, points = _hand_end(rules, replay.hands, domino_seat)
    scores = [score + gain for score, gain in zip(replay.scores, points, strict=True)]
    return _Outcome(replay.reason, winner, domino_seat, points, scores)


def _top_side(scores: list[int], target: int) -> int | None:
    top = max(scores)
    if top < target or scores.count(top) > 1:
        return None
    return scores.index(top)


def _opening(deal: list[list[Tile]]) -> tuple[int, Tile]:
    """The seat that must lead, and its tile, when the leader is the highest double."""
    holder = {tile: seat for seat, tiles in enumerate(deal) for tile in tiles}
    doubles = [tile for tile in holder if tile[0] == tile[1]]
    best = max(doubles) if doubles else max(holder, key=lambda t: (t[0] + t[1], t[1]))
    return holder[best], best


# --- the game ------------------------------------------------------------------------------


class _Game:
    def __init__(self, rules: Rules, errors: list[str]) -> None:
        self.rules = rules
        self.errors = errors
        self.scores = [0] * rules.sides  # after the last hand, as recorded if it was wrong
        self.final_scores = self.scores  # after the last hand, as replayed
        self.previous: _Outcome | None = None
        self.winner: int | None = None
        self.truncated = False

    @property
    def over(self) -> bool:
        return self.winner is not None or self.truncated

    def play_hand(self, index: int, hand: object) -> None:
        where = f"hand {index}"
        if not isinstance(hand, dict) or any(key not in hand for key in HAND_KEYS):
            raise _Stop(f"{where}: expected an object with keys {list(HAND_KEYS)}")
        deal, boneyard = _parse_deal(self.rules, hand, where)
        leader = hand["leader"]
        if not (_is_int(leader) and 0 <= leader < self.rules.players):
            raise _Stop(f"{where}: leader {leader!r} is not a seat")
        replay = _HandReplay(self.rules, where, deal, boneyard)
        replay.lead_tile = self._check_leader(index, leader, deal)
        replay.run(leader, self.scores, hand["events"])
        self.errors.extend(replay.errors)
        outcome = _outcome(replay)
        self._check_result(where, hand["result"], outcome)
        self.scores = self._checked_scores(where, hand["scores"], outcome.scores)
        self.final_scores = outcome.scores
        self.previous = outcome
        if outcome.reason == "target":
            self.winner = outcome.winner
        else:
            self.winner = _top_side(self.scores, self.rules.target)
        self.truncated = self.winner is None and index + 1 >= self.rules.max_hands

    def _check_leader(self, index: int, leader: int, deal: list[list[Tile]]) -> Tile | None:
        """Report a wrong leader; return the tile that must be led, if the rule fixes it."""
        rule = self.rules.first_leader if index == 0 else self.rules.next_leader
        if rule == "hand_winner":
            assert self.previous is not None
            seat = self.previous.domino_seat
            if seat is not None:
                if leader != seat:
                    self.errors.append(f"hand {index}: leader {leader}, expected {seat} (dominoed)")
                return None
            rule = self.rules.first_leader
        if rule != "highest_double":
            return None
        seat, tile = _opening(deal)
        if leader != seat:
            self.errors.append(f"hand {index}: leader {leader}, expected {seat} ({_show(tile)})")
        return tile

    def _check_result(self, where: str, raw: object, outcome: _Outcome) -> None:
        if not isinstance(raw, dict):
            raise _Stop(f"{where}: result must be an object")
        for key in ("reason", "winner", "hand_points"):
            want = getattr(outcome, key)
            if not _same(raw.get(key), want):
                self.errors.append(f"{where}: result {key} is {raw.get(key)!r}, expected {want!r}")

    def _checked_scores(self, where: str, raw: object, want: list[int]) -> list[int]:
        if _same(raw, want):
            return want
        self.errors.append(f"{where}: scores {raw!r}, expected {want!r}")
        shaped = isinstance(raw, list) and len(raw) == len(want) and all(map(_is_int, raw))
        return list(raw) if shaped else want  # type: ignore[arg-type]

    def check_ending(self, record: dict, hands: int) -> None:
        if not self.over:
            self.errors.append(f"the record stops after {hands} hands, but the game is not over")
        expected: dict[str, Any] = {
            "final_scores": self.final_scores,
            "winner": self.winner,
            "truncated": self.truncated,
        }
        for key, want in expected.items():
            if not _same(record.get(key), want):
                self.errors.append(f"{key} is {record.get(key)!r}, expected {want!r}")


def _parse_deal(rules: Rules, hand: dict, where: str) -> tuple[list[list[Tile]], list[Tile]]:
    raw_deal, raw_boneyard = hand["deal"], hand["boneyard"]
    if not isinstance(raw_deal, list) or len(raw_deal) != rules.players:
        raise _Stop(f"{where}: deal must list {rules.players} hands")
    deal = []
    for seat, tiles in enumerate(raw_deal):
        if not isinstance(tiles, list) or len(tiles) != rules.hand_size:
            raise _Stop(f"{where}: seat {seat} must be dealt {rules.hand_size} tiles")
        deal.append([_tile(tile, f"{where} deal of seat {seat}") for tile in tiles])
    if not isinstance(raw_boneyard, list):
        raise _Stop(f"{where}: boneyard must be a list")
    boneyard = [_tile(tile, f"{where} boneyard") for tile in raw_boneyard]
    every = [tile for tiles in deal for tile in tiles] + boneyard
    if len(every) != len(ALL_TILES) or set(every) != ALL_TILES:
        twice = sorted({_show(tile) for tile in every if every.count(tile) > 1})
        missing = sorted(_show(tile) for tile in ALL_TILES - set(every))
        raise _Stop(
            f"{where}: deal + boneyard is not the 28 tiles (twice {twice}, missing {missing})"
        )
    return deal, boneyard


def _check_game(record: object, errors: list[str]) -> None:
    if not isinstance(record, dict):
        raise _Stop("the record is not a JSON object")
    if record.get("format") != FORMAT:
        errors.append(f"format is {record.get('format')!r}, expected {FORMAT!r}")
    rules = _parse_rules(record.get("rules"))
    agents = record.get("agents")
    if "agents" in record and not (isinstance(agents, list) and len(agents) == rules.players):
        errors.append(f"agents must list one id per seat, not {agents!r}")
    hands = record.get("hands")
    if not isinstance(hands, list) or not hands:
        raise _Stop("hands must be a non-empty list")
    game = _Game(rules, errors)
    for index, hand in enumerate(hands):
        if game.over:
            errors.append(f"hand {index}: the game was already over after hand {index - 1}")
            break
        game.play_hand(index, hand)
    game.check_ending(record, len(hands))
