"""``allfives play``: play All Fives against bots in the terminal.

At your turn you see the layout, your hand, the scores and your legal moves, numbered.
Answer with a number from the list, a tile and an end (``2-5 left``, ``25l``, ``[2|5]@left``),
or a tile alone when it fits only one end; ``help`` shows this, ``quit`` leaves the game.
The other seats' draws are shown as counts, never as tiles. The finished game is saved as an
``allfives-record/1`` record (``--out``; by default ``runs/games/play-<time>.jsonl``, under the
git-ignored ``runs/``); ``--out`` is
checked before the game starts, and should it still fail to save at the end (the directory
removed meanwhile, say) the game is saved to the default path instead, and the message says
where. Ctrl-C (like ``quit``) leaves at once without a traceback; the unfinished game is not
saved (exit status 130).

The other seats play a level (``--level NAME``, :mod:`allfives_agents.levels`: beginner, easy,
medium, hard, strongest; ``--help`` lists each level's agent and measured strength) or the agent ids
given by ``--opponents``. The default is the strongest level: the shipped model for the
game's rules, inside the search where measured stronger (``search:net=best,batched=1``) or
alone (``ckpt:best``); at a table no shipped model plays (4 seats without teams), the strongest
level that can play, said in one line.

Every bot move runs under a deadline (``--move-seconds``, default 3): a search stops there and
plays its best move so far, so no move keeps a core for longer (about the deadline in CPU
time; :mod:`allfives_agents.planning.deadline`).
"""

from __future__ import annotations

import argparse
import textwrap
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from allfives_agents.base import Agent, Obs, make_agent
from allfives_agents.evaluation.threads import one_thread
from allfives_agents.levels import (
    STRONGEST,
    Level,
    agent_for,
    find,
    help_text,
    level_names,
    naming_model,
    resolve,
    strongest_available,
)
from allfives_agents.planning.deadline import DEFAULT_SECONDS, MAX_SECONDS, Timed, check_seconds
from allfives_env.game.engine import GameState
from allfives_env.game.gameconfig import add_game_arguments, rules_from_args
from allfives_env.game.match import play_game
from allfives_env.game.rules import Rules
from allfives_env.game.seeding import seed_arg
from allfives_env.game.tiles import (
    ACTION_TILE,
    END_NAMES,
    LEAD,
    N_ENDS,
    TILE_HIGH,
    TILE_LOW,
    mask_to_tiles,
    tile_str,
)
from allfives_env.game.view import SeatView
from allfives_env.records.record import game_record, write_records
from allfives_env.rendering.render import layout_text, open_ends_text, wrap_items

HELP = """Answer with one of:
  a number from the list of legal moves, e.g. 2
  a tile and an end: '2-5 left', '25l', '[2|5]@right', '3-3 up'
  a tile alone ('2-5') when it fits only one end; an end may be shortened ('25l')
  when only one legal end starts that way
  'help' for this text, 'quit' to leave (the game is then not saved)"""


class Quit(Exception):
    """The person at the keyboard left the game."""


class Human(Agent):
    """The person's seat: asks at the keyboard (through the :class:`Session`)."""

    needs_obs = False

    def __init__(self, session: Session) -> None:
        super().__init__()
        self.session, self.name = session, "human"

    def act(self, obs: Obs, view: SeatView) -> int:
        return self.session.ask(view)


# ---------------------------------------------------------------------- the session
class Session:
    """One game between a person (``seat``) and bots, printed as it happens: a
    :class:`~allfives_env.game.match.Watcher` of the one game loop, whose human seat is a
    :class:`Human` agent asking at the keyboard."""

    def __init__(self, rules: Rules, bots: dict[int, Agent], seat: int, seed: int,
                 names: Sequence[str], move_seconds: float = DEFAULT_SECONDS) -> None:
        self.rules, self.bots, self.seat, self.seed = rules, bots, seat, seed
        self.move_seconds = move_seconds
        self.names = list(names)
        self.seen = 0  # events of the current hand already shown

    def who(self, s: int) -> str:
        return "you" if s == self.seat else f"seat {s} ({self.names[s]})"

    def run(self) -> GameState:
        seats: list[Any] = [Timed(self.bots[s], self.move_seconds) if s in self.bots
                            else Human(self) for s in range(self.rules.players)]
        self.state = play_game(self.rules, seats, self.seed, log=True, watcher=self)
        self.show_game_end()
        return self.state

    # -------------------------------------------------------------- the loop's hooks
    def hand_started(self, state: GameState) -> None:
        self.state, self.seen = state, 0
        self.show_hand_start()

    def moved(self, state: GameState) -> None:
        self.show_events()
        if state.hand_over:
            self.show_hand_end()

    # -------------------------------------------------------------- output
    def show_hand_start(self) -> None:
        st = self.state
        print(f"\n=== Hand {st.hand_index + 1} === {self.who(st.leader)} lead"
              + ("s" if st.leader != self.seat else ""))

    def show_scores(self) -> str:
        r = self.rules
        parts = []
        for side, sc in enumerate(self.state.scores):
            seats = [s for s in range(r.players) if r.side_of(s) == side]
            label = " + ".join("you" if s == self.seat else f"seat {s}" for s in seats)
            parts.append(f"{label}: {sc}")
        return "Scores (target " + str(r.target) + "): " + ", ".join(parts)

    def show_events(self) -> None:
        log = self.state.log or []
        events, self.seen = log[self.seen:], len(log)
        k = 0
        while k < len(events):
            ev = events[k]
            if ev[0] == "draw":
                j = k
                while j < len(events) and events[j][0] == "draw" and events[j][1] == ev[1]:
                    j += 1
                if ev[1] == self.seat:
                    tiles = " ".join(tile_str(e[2]) for e in events[k:j])
                    print(f"  you draw {tiles}")
                else:
                    print(f"  {self.who(ev[1])} draws {j - k} tile{'s' * (j - k > 1)}")
                k = j
                continue
            if ev[0] == "pass":
                verb = "cannot play and pass" + ("" if ev[1] == self.seat else "es")
                print(f"  {self.who(ev[1])} {verb}")
            else:
                _, s, t, end, pts = ev
                you = s == self.seat
                verb = ("lead" if end == LEAD else "play") + ("" if you else "s")
                where = "" if end == LEAD else f" on the {END_NAMES[end]}"
                score = f": score{'' if you else 's'} {pts}" if pts else ""
                print(f"  {self.who(s)} {verb} {tile_str(t)}{where}{score}")
            k += 1

    def show_hand_end(self) -> None:
        st = self.state
        res: dict[str, Any] = st.hand_result or {}
        reason = {"domino": "dominoed", "blocked": "blocked", "target": "target reached"}
        print(f"--- Hand {st.hand_index + 1} over ({reason.get(str(res.get('reason')), '?')})")
        for s in range(st.n):
            tiles = " ".join(tile_str(t) for t in mask_to_tiles(st.hands[s])) or "-"
            print(f"  {self.who(s)} held {tiles} ({st.pips_left(s)} pips)")
        print(f"  end-of-hand points per side: {res.get('hand_points')}")
        print("  " + self.show_scores())

    def show_game_end(self) -> None:
        st = self.state
        if st.winner is None:
            print("\n=== Game over: no winner (the game reached max_hands) ===")
        else:
            mine = self.rules.side_of(self.seat) == st.winner
            print(f"\n=== Game over: {'you win' if mine else 'you lose'}! ===")
        print(self.show_scores())

    # -------------------------------------------------------------- input
    def show_turn(self, view: SeatView) -> None:
        print("\nLayout:")
        print("\n".join(layout_text(self.state)))
        print("  " + open_ends_text(self.state))
        hand = [tile_str(t) for t in mask_to_tiles(view.hand)]
        others = ", ".join(f"seat {s}: {view.hand_sizes[s]}" for s in range(view.n)
                           if s != self.seat)
        print("\n".join(wrap_items("Your hand: ", hand, " ")))  # never past 100 columns
        print(f"  (tiles held: {others}; boneyard {view.drawable})")
        print(self.show_scores())
        print("Your moves:")
        for k, a in enumerate(view.legal, 1):
            pts = view.points_if(a)
            print(f"  {k:>2}. {tile_str(ACTION_TILE[a])} {END_NAMES[a % N_ENDS]}"
                  + (f"  scores {pts}" if pts else ""))

    def ask(self, view: SeatView) -> int:
        self.show_turn(view)
        while True:
            try:
                text = input("Your move> ").strip()
            except EOFError:
                raise Quit from None
            try:
                return parse_move(text, view.legal)
            except Quit:
                raise
            except ValueError as exc:
                print(f"  {exc}")


def parse_move(text: str, legal: Sequence[int]) -> int:
    """The legal action meant by ``text`` (see :data:`HELP`); ValueError says what is wrong.
    Raises :class:`Quit` for 'quit'."""
    low = text.strip().lower()
    if low in ("q", "quit", "exit"):
        raise Quit
    if low in ("", "h", "help", "?"):
        raise ValueError(HELP if low else "type a move, or 'help'")
    tile_like = len(low) == 2 and max(low, default="0") <= "6"
    if low.isdigit() and (1 <= int(low) <= len(legal) or not tile_like):
        k = int(low)
        if 1 <= k <= len(legal):
            return legal[k - 1]
        raise ValueError(f"{k} is not on the list: choose 1 to {len(legal)}")
    parts = _split(low)
    if parts is None:
        raise ValueError(f"cannot read {text!r}: write a tile and an end, e.g. '2-5 left', "
                         "or a number from the list")
    a, b, prefix = parts
    if a > 6 or b > 6:
        raise ValueError(f"{text!r}: tile halves must be 0..6")
    if not any(name.startswith(prefix) for name in END_NAMES):
        raise ValueError(f"{text!r}: end must be one of {', '.join(END_NAMES)}")
    tile = (min(a, b), max(a, b))
    of_tile = [x for x in legal if (TILE_LOW[ACTION_TILE[x]], TILE_HIGH[ACTION_TILE[x]]) == tile]
    fits = [x for x in of_tile if END_NAMES[x % N_ENDS].startswith(prefix)]
    if len(fits) == 1:
        return fits[0]
    if len(fits) > 1:
        ends = " or ".join(END_NAMES[x % N_ENDS] for x in fits)
        raise ValueError(f"[{a}|{b}] fits more than one end: say which ({ends})")
    if not of_tile:
        raise ValueError(f"[{a}|{b}] cannot be played now (not in your hand, or no end fits)")
    shown = ", ".join(f"{tile_str(ACTION_TILE[x])} {END_NAMES[x % N_ENDS]}" for x in legal)
    raise ValueError(f"{text!r} is not a legal move now; legal: {shown}")


def _split(text: str) -> tuple[int, int, str] | None:
    """``'2-5 left'``, ``'[2|5]@le'``, ``'25l'``, ``'2 5'`` -> (2, 5, end prefix or '')."""
    for ch in "[]|@,-:/":
        text = text.replace(ch, " ")
    compact = text.replace(" ", "")
    if len(compact) >= 2 and compact[:2].isdigit() and compact[2:].isalpha() | (
            len(compact) == 2):
        return int(compact[0]), int(compact[1]), compact[2:]
    return None


# ---------------------------------------------------------------------- CLI
def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter  # the levels' table as is
    parser.epilog = help_text()
    parser.add_argument("--level", metavar="NAME",
                        help=f"every other seat plays this level: {', '.join(level_names())} "
                             "(weakest first, listed below); default strongest, the shipped "
                             "model for the game's rules, alone or inside search. Not with "
                             "--opponents")
    parser.add_argument("--opponents", nargs="+", default=None, metavar="ID",
                        help="bot id for every other seat, or one per other seat in seat order "
                             "(with teams your partner is one of them): random, greedy, "
                             "heuristic, search, ckpt:best, ckpt:<model> (allfives models), "
                             "level:<name>, ... Not with --level")
    add_game_arguments(parser)
    parser.add_argument("--seat", type=int, default=0, help="your seat (default 0)")
    parser.add_argument("--seed", type=seed_arg, default=None, help="game seed (default: random)")
    parser.add_argument("--out", metavar="PATH",
                        help="record file (default runs/games/play-<date>-<time>.jsonl)")
    parser.add_argument("--move-seconds", type=float, default=DEFAULT_SECONDS, metavar="S",
                        help="every bot move's deadline: a search stops after S seconds and "
                             f"plays its best move so far (default {DEFAULT_SECONDS:g}, at "
                             f"most {MAX_SECONDS:g})")


def _bots(rules: Rules, seat: int, ids: Sequence[str], seed: int) -> dict[int, Agent]:
    others = [s for s in range(rules.players) if s != seat]
    if len(ids) == 1:
        ids = list(ids) * len(others)
    if len(ids) != len(others):
        raise ValueError(f"--opponents: give one id, or {len(others)} ids (one per other "
                         f"seat); got {len(ids)}")
    try:
        ids = [_concrete(i, rules) for i in ids]
    except ValueError as exc:
        raise ValueError(f"--opponents: {exc}") from None
    seeds = np.random.SeedSequence([seed, 1]).generate_state(rules.players)
    return {s: make_agent(i, int(seeds[s])) for s, i in zip(others, ids)}


def _concrete(agent_id: str, rules: Rules) -> str:
    """``level:NAME`` -> its agent at this table; ``best`` (``ckpt:best``,
    ``search:net=best``) -> the shipped model's name (so the table is checked before the game
    and the record names the model)."""
    return naming_model(agent_for(agent_id, rules), rules)


def _opponents(args: argparse.Namespace, rules: Rules) -> tuple[list[str], Level | None]:
    """The ids for the other seats, and the level they play (None for --opponents)."""
    if args.level is not None and args.opponents is not None:
        raise ValueError("--level and --opponents do not go together: --level NAME gives "
                         "every other seat that level, --opponents names an id per seat")
    if args.opponents is not None:
        return list(args.opponents), None
    if args.level is not None:
        try:
            resolve(args.level, rules)  # unknown, or unavailable at this table: one line
        except ValueError as exc:
            raise ValueError(f"--level: {exc}") from None
        level = find(args.level, rules)
    else:
        level = find(STRONGEST, rules)
        if not level.available:  # the default: the strongest level that can play here
            print(textwrap.fill(f"No level {STRONGEST} at this table ({level.unavailable}): "
                                "the other seats play the strongest level that can.", 100))
            level = strongest_available(rules)
    return [level.agent], level


def _show_level(level: Level) -> None:
    """The level the other seats play, what it does and its measured strength (lines of at
    most 100 columns)."""
    model = f" ({level.model})" if level.model else ""
    print(f"Opponents: level {level.name}, {level.agent}{model}")
    for text in (level.description, level.strength_text()):
        print(textwrap.fill(text, 100, initial_indent="  ", subsequent_indent="    "))


def _check_tables(rules: Rules, bots: dict[int, Agent]) -> None:
    """Refuse, before the game starts, a checkpoint bot made for another table."""
    from allfives_agents.trained.checkpoint import check_table

    for s, bot in bots.items():
        card = getattr(bot, "card", None)
        if isinstance(card, dict) and card:
            try:
                check_table(card, rules, repr(bot.name))
            except ValueError as exc:
                raise ValueError(f"--opponents (seat {s}): {exc}") from None


#: where a played game is saved without ``--out`` (under ``runs/``, which git ignores)
DEFAULT_DIR = Path("runs") / "games"


def _default_out() -> Path:
    return DEFAULT_DIR / f"play-{time.strftime('%Y%m%d-%H%M%S')}.jsonl"


def _save(out: Path, record: dict) -> None:
    """Save the played game to ``out``; if that fails, to the default path, then to the
    system's temporary directory (never lose a game a person played), saying so."""
    import tempfile

    name = _default_out()
    tried = []
    for path in dict.fromkeys([out, name, Path(tempfile.gettempdir()) / name.name]):
        try:
            write_records(path, [record])
        except OSError as exc:
            tried.append(f"{path} ({exc})")
            continue
        if tried:
            print(f"Could not save to {'; '.join(tried)}; saved to {path} instead")
        print(f"Game saved to {path}")
        return
    raise OSError(f"the game could not be saved anywhere: {'; '.join(tried)}")


def run(args: argparse.Namespace) -> int:
    from allfives_env.inputs.paths import check_output_path

    if args.out:
        check_output_path(args.out, "--out")
    check_seconds(args.move_seconds, "--move-seconds")
    rules = rules_from_args(args)
    if not 0 <= args.seat < rules.players:
        raise ValueError(f"--seat={args.seat}: seats are 0..{rules.players - 1}")
    entropy = np.random.SeedSequence().entropy
    assert isinstance(entropy, int)
    seed = args.seed if args.seed is not None else entropy % 10**9
    ids, level = _opponents(args, rules)
    one_thread()  # the bots' forward passes: numpy's BLAS on one thread
    bots = _bots(rules, args.seat, ids, seed)
    _check_tables(rules, bots)
    names = ["human" if s == args.seat else bots[s].name for s in range(rules.players)]
    out = Path(args.out) if args.out else _default_out()
    print(f"All Fives: {rules.preset}, {rules.players} players"
          f"{' in teams' if rules.teams else ''}, target {rules.target}, seed {seed}. "
          f"You are seat {args.seat}.")
    if level is not None:
        _show_level(level)
    print(", ".join(f"seat {s}: {n}" for s, n in enumerate(names)) + ". Type 'help' for help.")
    session = Session(rules, bots, args.seat, seed, names, args.move_seconds)
    try:
        state = session.run()
    except Quit:
        print("\nYou left the game; it was not saved.")
        return 0
    except KeyboardInterrupt:
        print("\nInterrupted (Ctrl-C); the unfinished game was not saved.")
        return 130
    _save(out, game_record(state, seed, names))
    return 0
