"""The OpenSpiel game's state machine, without pyspiel: :class:`Match`.

OpenSpiel wants every random event as an explicit chance node: the deal (one tile at a
time), a random leader, and every draw (uniform over the tiles not yet placed). The engine
(:class:`~allfives_env.game.engine.GameState`) resolves forced draws inside one ``apply`` call and
reads the boneyard in order. :class:`Match` drives the unchanged engine with a boneyard
(:class:`Bones`) whose order chance reveals lazily: when the engine reaches a tile chance has
not chosen yet it raises :class:`NeedChance`; the match becomes a chance node, and once the
outcome is known the step is run again from the snapshot taken before it. The deal and the
leader work the same way, through the engine's ``dealer`` hook (:class:`ChanceDeal`).

A :class:`Match` also keeps each player's view of the history as tokens (the information
state string), the current hand's actions (for resampling,
:mod:`allfives_env.spiel.openspiel_resample`), and the finished hands' deals (for records,
:meth:`Match.record`).
"""

from __future__ import annotations

from typing import Any

from allfives_env.game.engine import Deal, GameState
from allfives_env.game.rules import Rules
from allfives_env.game.tiles import N_TILES, action_to_str, mask_to_tiles, tile_str
from allfives_env.game.view import SeatView
from allfives_env.records.record import game_record

DEAL, LEADER, DRAW, PLAY, OVER = range(5)
PHASES = ("deal", "leader", "draw", "play", "over")
CHANCE, TERMINAL = -1, -4  # pyspiel.PlayerId.CHANCE / TERMINAL
REWARDS = ("win", "points")


class NeedChance(Exception):
    """The engine asked for a random outcome that chance has not chosen yet."""


class Bones:
    """The boneyard as the engine reads it: its size, and the tiles chance has drawn so far
    (in draw order). Reading further raises :class:`NeedChance`."""

    __slots__ = ("size", "drawn")

    def __init__(self, size: int, drawn: list[int] | None = None) -> None:
        self.size, self.drawn = size, drawn if drawn is not None else []

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, i: int) -> int:
        if i < len(self.drawn):
            return self.drawn[i]
        raise NeedChance


class ChanceDeal:
    """What the dealer hook hands the engine: the dealt hands, a placeholder boneyard of the
    right size (replaced by :class:`Bones` once the hand starts) and the leader, which raises
    :class:`NeedChance` when the rules ask for a random leader that chance has not chosen."""

    def __init__(self, hands: list[list[int]], size: int, leader: int | None) -> None:
        self.hands, self.boneyard, self._leader = hands, [-1] * size, leader

    @property
    def leader(self) -> int:
        if self._leader is None:
            raise NeedChance
        return self._leader


def returns_of(game: GameState | None, reward: str) -> list[float]:
    """Per seat: the env's ``reward`` summed over a game that ended (zeros otherwise)."""
    if game is None or not game.game_over:
        return [0.0] * (game.n if game else 0)
    rules, n = game.rules, game.n
    if reward == "points":
        mean = sum(game.scores) / rules.n_sides
        return [(game.scores[rules.side_of(s)] - mean) / rules.target for s in range(n)]
    if game.winner is None:
        return [0.0] * n
    lose = -1.0 / (rules.n_sides - 1)
    return [1.0 if rules.side_of(s) == game.winner else lose for s in range(n)]


def _play_token(seat: int, action: int) -> str:
    return f"{seat}:{action_to_str(action)}"


def _event_tokens(ev: tuple, n: int) -> list[str]:
    """One engine log event as each player sees it."""
    if ev[0] == "play":
        tok = _play_token(ev[1], ev[2] * 5 + ev[3])
        return [tok] * n
    if ev[0] == "draw":
        return [f"{ev[1]}+{tile_str(ev[2])}" if p == ev[1] else f"{ev[1]}+?" for p in range(n)]
    return [f"{ev[1]}-"] * n


class Match:
    """A whole game as OpenSpiel sees it (see the module docstring). ``phase`` is one of
    ``DEAL, LEADER, DRAW, PLAY, OVER``."""

    __slots__ = ("rules", "reward", "n", "game", "base", "pending", "phase", "dealing", "bones",
                 "leader", "tokens", "start", "mark", "acts", "deals", "log0", "from_view")
    rules: Rules
    reward: str
    n: int
    game: GameState | None  # None only before the first hand is dealt
    base: GameState | None  # the snapshot a pending play is run again from (DRAW)
    pending: int  # that play
    phase: int
    dealing: list[list[int]]  # per seat, the tiles dealt so far this hand
    bones: Bones
    leader: int | None  # the leader chance chose this hand
    tokens: list[list[str]]  # per player, the history as it saw it (committed)
    start: GameState | None  # the game before this hand was dealt
    mark: list[int]  # per player, len(tokens) when this hand's deal began
    acts: list[tuple[Any, ...]]  # this hand's actions: deal, leader, draw, play
    deals: list[Deal]  # the finished hands' deals, for records
    log0: int  # len(base.log) before the pending play
    from_view: bool  # made from a seat's view: no true history

    @property
    def g(self) -> GameState:
        """The engine state (there is one once the first hand is dealt)."""
        if self.game is None:
            raise ValueError("no hand has been dealt yet")
        return self.game

    def __init__(self, rules: Rules, reward: str = "win") -> None:
        self.rules, self.reward, self.n = rules, reward, rules.players
        self.game = self.base = None
        self.pending = -1
        self.tokens = [[] for _ in range(self.n)]
        self.deals = []
        self.from_view = False
        self.log0 = 0
        self._new_hand()

    # ------------------------------------------------------------------ copying
    def copy(self) -> Match:
        """An independent copy (the engine states copied with their logs)."""
        new = object.__new__(Match)
        for name in ("rules", "reward", "n", "pending", "phase", "leader", "start", "mark",
                     "log0", "from_view"):
            setattr(new, name, getattr(self, name))
        new.bones = Bones(self.bones.size, self.bones.drawn[:])
        new.game = self._copy_game(self.game, new.bones)
        new.base = self._copy_game(self.base, new.bones)
        new.dealing = [h[:] for h in self.dealing]
        new.tokens = [t[:] for t in self.tokens]
        new.acts = self.acts[:]
        new.deals = self.deals[:]
        return new

    def _copy_game(self, game: GameState | None, bones: Bones) -> GameState | None:
        if game is None:
            return None
        new = game.copy(log=True)
        if game.boneyard is self.bones:
            new.boneyard = bones  # type: ignore[assignment]  # Bones reads as a list
        return new

    def __deepcopy__(self, memo: dict) -> Match:
        return self.copy()

    # ------------------------------------------------------------------ queries
    def current_player(self) -> int:
        if self.phase == PLAY:
            return self.g.current
        return TERMINAL if self.phase == OVER else CHANCE

    def chance_outcomes(self) -> list[int]:
        """The possible outcomes of the chance node, each equally likely."""
        if self.phase == LEADER:
            return list(range(self.n))
        if self.phase == DEAL:
            taken = sum(1 << t for h in self.dealing for t in h)
        elif self.phase == DRAW:
            g = self.g
            taken = sum(1 << t for t, s in enumerate(g.played_by) if s >= 0)
            for h in g.hands:
                taken |= h
        else:
            return []
        return [t for t in range(N_TILES) if not taken >> t & 1]

    def legal_actions(self) -> list[int]:
        return self.g.legal_actions() if self.phase == PLAY else []

    def returns(self) -> list[float]:
        return returns_of(self.game, self.reward) if self.phase == OVER else [0.0] * self.n

    def drawer(self) -> int:
        """The seat that draws at a DRAW node."""
        last = (self.g.log or [("play", -1)])[-1]
        return last[1] if last[0] == "draw" else (last[1] + 1) % self.n

    def chance_string(self, outcome: int) -> str:
        if self.phase == LEADER:
            return f"leader {outcome}"
        if self.phase == DEAL:
            seat = len(self.dealing_flat()) // self.rules.hand_size
            return f"deal {tile_str(outcome)} to {seat}"
        return f"draw {tile_str(outcome)} by {self.drawer()}"

    def dealing_flat(self) -> list[int]:
        return [t for h in self.dealing for t in h]

    # ------------------------------------------------------------------ moves
    def apply_chance(self, outcome: int) -> None:
        if self.phase == DEAL:
            k = self.rules.hand_size
            seat = sum(len(h) for h in self.dealing) // k
            self.dealing[seat].append(outcome)
            self.acts.append(("deal", seat, outcome))
            if seat == self.n - 1 and len(self.dealing[seat]) == k:
                self._start_hand()
        elif self.phase == LEADER:
            self.leader = outcome
            self.acts.append(("leader", outcome))
            self._start_hand()
        elif self.phase == DRAW:
            self.acts.append(("draw", self.drawer(), outcome, self.g.open_numbers()))
            self.bones.drawn.append(outcome)
            self._resolve()
        else:
            raise ValueError(f"not a chance node (phase {PHASES[self.phase]})")

    def apply_play(self, action: int) -> None:
        g = self.g
        if self.phase != PLAY or action not in g.legal_actions():
            legal = self.legal_actions()
            raise ValueError(f"illegal action {action} for player {self.current_player()}; "
                             f"legal: {legal}")
        self.acts.append(("play", g.current, action))
        self.base, self.pending = g, action
        self.log0 = len(g.log or [])
        self._resolve()

    def _resolve(self) -> None:
        """Run the pending play on a copy of the snapshot; stop at the next draw node."""
        g = self._copy_game(self.base, self.bones)
        assert g is not None and g.log is not None
        try:
            g.apply(self.pending)
        except NeedChance:
            self.game, self.phase = g, DRAW
            g.current = self.drawer()
            return
        self.game, self.base, self.pending = g, None, -1
        for p, toks in enumerate(zip(*(_event_tokens(ev, self.n) for ev in g.log[self.log0:]))):
            self.tokens[p].extend(toks)
        if not g.hand_over:
            self.phase = PLAY
            return
        self._end_hand(g)

    def _end_hand(self, g: GameState) -> None:
        drawn = self.bones.drawn
        rest = sorted(set(range(N_TILES)) - set(self.dealing_flat()) - set(drawn))
        self.deals.append(Deal([h[:] for h in self.dealing], drawn + rest, g.leader))
        result: dict[str, Any] = g.hand_result or {}
        for toks in self.tokens:
            toks.append(f"end:{result['reason']}:{','.join(map(str, g.scores))}")
        if g.game_over:
            self.phase = OVER
        else:
            self._new_hand()

    def _new_hand(self) -> None:
        self.phase, self.leader = DEAL, None
        self.dealing = [[] for _ in range(self.n)]
        self.bones = Bones(N_TILES - self.n * self.rules.hand_size)
        self.start, self.acts = self.game, []
        self.mark = [len(t) for t in self.tokens]

    def _start_hand(self) -> None:
        """The deal is complete (and the leader chosen if chance must): start the hand."""
        deal = ChanceDeal([h[:] for h in self.dealing], self.bones.size, self.leader)

        def dealer(_k: int, _rng: Any) -> Any:
            return deal

        try:
            if self.start is None:
                g = GameState(self.rules, seed=0, dealer=dealer)
            else:
                g = self.start.copy(log=True)
                g.dealer = dealer
                g.next_hand()
        except NeedChance:
            self.phase = LEADER
            return
        g.dealer, g.boneyard = None, self.bones  # type: ignore[assignment]
        self.game, self.phase = g, PLAY
        for p, toks in enumerate(self.tokens):
            own = "".join(tile_str(t) for t in sorted(self.dealing[p]))
            toks.append(f"hand{g.hand_index}:{own}:lead{g.leader}")

    # ------------------------------------------------------------------ views
    def info_string(self, player: int) -> str:
        text = f"p{player} " + " ".join(self.tokens[player])
        if self.phase == DEAL:
            own = "".join(tile_str(t) for t in sorted(self.dealing[player]))
            text += f" dealing:{own}"
        elif self.phase == DRAW:
            part = [_event_tokens(ev, self.n)[player] for ev in (self.g.log or [])[self.log0:]]
            text += " " + " ".join(part) + " drawing"
        return text

    def record(self, agents: list[str] | None = None) -> dict[str, Any]:
        """The ``allfives-record/1`` record of the finished hands (a whole game when over)."""
        if self.from_view:
            raise ValueError("a match built from a seat's view has no true history to record")
        g = self.game
        if g is None:
            raise ValueError("no hand has been dealt yet")
        g = g.copy(log=True)
        g.history = [dict(h, deal=d) for h, d in zip(g.history, self.deals)]
        return game_record(g, agents=agents)

    # ------------------------------------------------------------------ worlds from views
    @classmethod
    def from_world(cls, world: GameState, reward: str, tokens: list[list[str]]) -> Match:
        """A match at a decision node made from a full engine state (e.g. one sampled from a
        :class:`SeatView`): draws still to come are chance nodes over the tiles left."""
        self = object.__new__(cls)
        self.rules, self.reward, self.n = world.rules, reward, world.n
        world = world.copy(log=True)
        world.log = []
        remaining = len(world.boneyard) - world.bone_pos
        self.bones = Bones(remaining)
        world.boneyard = self.bones  # type: ignore[assignment]
        world.bone_end -= world.bone_pos
        world.bone_pos, world.dealer = 0, None
        self.game, self.base, self.pending, self.phase = world, None, -1, PLAY
        self.dealing = [[] for _ in range(self.n)]
        self.leader, self.start, self.acts, self.deals, self.log0 = None, None, [], [], 0
        self.tokens = [t[:] for t in tokens]
        self.mark = [len(t) for t in tokens]
        self.from_view = True
        return self


def view_tokens(view: SeatView) -> str:
    """A canonical text of everything ``view`` shows (the root token of a view-built match)."""
    own = "".join(tile_str(t) for t in mask_to_tiles(view.hand))
    played = ",".join(f"{t}:{s}" for t, s in enumerate(view.played_by) if s >= 0)
    return (f"view{view.hand_index}:{own}|{played}|{view.ends}{view.dbl}{view.cnt}"
            f"{view.n_arms}{view.spinner}{view.spin_wait}|{view.hand_sizes}|"
            f"{view.boneyard_size},{view.drawable}|{view.lacks}|{view.scores}|"
            f"{view.leader},{view.current},{view.last_domino_seat}")
