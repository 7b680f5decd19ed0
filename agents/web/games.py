"""Live games kept on the server: one :class:`LiveGame` per browser tab, in a :class:`GameStore`.

The browser never holds the game: it asks for a move to be made (its chosen action id, or
"step" for the next bot move or the next hand) and gets back what it may see
(:func:`allfives_agents.web.views.table_view`). A game belongs to whoever created it: creation
returns a secret ``token`` that every later request on the game must carry (compared with
:func:`secrets.compare_digest`).

Each game has its own lock, held only for short reads and changes, never while a bot thinks:
a bot's move is computed on the server's bounded pool of bot workers
(:class:`~allfives_agents.web.movepool.MovePool`, :meth:`LiveGame.begin_step`) under the move
deadline :attr:`Limits.move_seconds` (:mod:`allfives_agents.planning.deadline`: a search stops there
and answers its best move so far), and is cancelled (stops at its next check) when its game is
deleted, evicted or expires. A request waits for the move at most the deadline plus
:data:`GRACE_SECONDS`; past that, or when no worker is free for it, it is answered 503 "step
again" and the game stays as it was until the move is done. While a move is being computed
nothing else can change the game (an action is refused with 409, another step waits for the
same move), so the thinking thread reads a state no one writes. Bots move through
:func:`allfives_env.game.match.decide`, as in every other game (``act(obs, view)``
with their own seat's observation and :class:`~allfives_env.game.view.SeatView`, never the
state), and a game is seeded as :func:`allfives_env.game.match.play_game` seeds it: the
same ids and seed play the same game (a search stopped by its deadline aside).

The store holds at most :attr:`Limits.max_games` games. Games no request touched for
:attr:`Limits.idle_seconds` expire; each client address (an IPv4 address, an IPv6 /64: one
host's cheap addresses) may hold :attr:`Limits.per_address` unfinished games and each network
(an IPv4 /24, an IPv6 /48) :attr:`Limits.per_network` (429 above either). The networks that
hold :attr:`Limits.reserve_below` or more unfinished games each may hold together at most
``max_games - reserve`` of them (503 above): the last :attr:`Limits.reserve` places are kept
for networks with fewer, so no set of busy networks can fill the server. When the store is
full a new game evicts the least recently used finished game, else the game in play that made
no move for the longest past :attr:`Limits.evict_seconds` (polling it does not count as a
move; a move in progress keeps it); a game in play that moved within that window is never
evicted (503 when nothing can go).
"""

from __future__ import annotations

import collections
import concurrent.futures
import dataclasses
import ipaddress
import secrets
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from allfives_agents.base import Agent
from allfives_agents.planning.deadline import DEFAULT_SECONDS, move_deadline
from allfives_agents.web.gate import HUMAN
from allfives_agents.web.movepool import MovePool
from allfives_agents.web.views import table_view
from allfives_env.game.match import agent_seeds, decide, new_game
from allfives_env.game.rules import Rules
from allfives_env.game.tiles import N_ACTIONS, action_to_str
from allfives_env.records.record import game_record, write_records

AgentMaker = Callable[[str, int, Rules], Agent]
#: A step request waits for a bot's move at most its deadline plus this many seconds.
GRACE_SECONDS = 1.0


@dataclasses.dataclass(frozen=True)
class Limits:
    """What one server holds, and how long and on how many workers bots may think."""

    max_games: int = 256  # all games held, finished ones included
    per_address: int = 16  # unfinished games per IPv4 address or IPv6 /64
    per_network: int = 64  # unfinished games per IPv4 /24 or IPv6 /48
    reserve: int = 64  # places kept for networks holding fewer than reserve_below games
    # (at most a quarter of max_games)
    reserve_below: int = 4
    idle_seconds: float = 3600.0  # a game no request touched this long expires
    evict_seconds: float = 600.0  # a game that made no move this long may go when full
    move_seconds: float = DEFAULT_SECONDS  # a bot move's deadline (its search stops there)
    workers: int = 0  # bot moves computed at once (0: one per usable core)
    network_workers: int = 0  # of them for one network (0: half the workers, at least 1)


class GameError(Exception):
    """A request the game refuses (4xx), or a bot that failed (500): the HTTP status to answer,
    one clear line, and any headers (``Retry-After``)."""

    def __init__(self, status: int, message: str,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.headers = status, message, headers


class LiveGame:
    """One game between at most one person (agent id ``human``) and bots, owned by the
    client that holds :attr:`token`."""

    def __init__(self, game_id: str, rules: Rules, ids: Sequence[str], seed: int,
                 records_dir: Path, make: AgentMaker, owner: str = "",
                 clock: Callable[[], float] = time.monotonic,
                 pool: MovePool | None = None, move_seconds: float = DEFAULT_SECONDS) -> None:
        humans = [s for s, i in enumerate(ids) if i == HUMAN]
        if len(ids) != rules.players:
            raise GameError(400, f"{len(ids)} agents for {rules.players} seats: give one per "
                                 "seat")
        if len(humans) > 1:
            raise GameError(400, f"seats {humans} are all 'human': one person per game")
        self.id, self.rules, self.ids, self.seed = game_id, rules, list(ids), seed
        self.human = humans[0] if humans else None
        self.records_dir, self.owner, self.clock = records_dir, owner, clock
        self.token = secrets.token_urlsafe(24)
        self.bots: dict[int, Agent] = {}
        for s, agent_seed in enumerate(agent_seeds(seed, rules.players)):
            if ids[s] != HUMAN:
                bot = make(ids[s], s, rules)
                _check_table(bot, rules, ids[s])
                bot.reset(seed=agent_seed)
                self.bots[s] = bot
                self.ids[s] = bot.name  # level:<name> plays (and is recorded) as its agent
        self.state = new_game(rules, seed, log=True)
        self.lock = threading.Lock()
        self.pending: concurrent.futures.Future[int] | None = None  # a bot's move in progress
        self.cancel = threading.Event()  # set when the game goes: its move stops
        self.pool, self.move_seconds = pool, move_seconds
        self.saved: str | None = None
        self.save_error: str | None = None
        self.touched = self.moved = clock()  # any request / the last move (or the start)

    @property
    def mode(self) -> str:
        return "watch" if self.human is None else "play"

    def owned_by(self, token: str | None) -> bool:
        """Whether ``token`` is this game's secret (constant-time comparison)."""
        return token is not None and secrets.compare_digest(token.encode(), self.token.encode())

    def waiting_for(self) -> str:
        """What moves the game on: ``you`` (an action), ``bot`` or ``next_hand`` (a step)."""
        st = self.state
        if st.game_over:
            return "over"
        if st.hand_over:
            return "next_hand"
        return "you" if st.current == self.human else "bot"

    def view(self) -> dict[str, Any]:
        out = table_view(self.state, self.human, reveal=self.human is None)
        out.update(id=self.id, mode=self.mode, agents=self.ids, seat=self.human,
                   waiting=self.waiting_for(), thinking=self.pending is not None,
                   saved=self.saved, save_error=self.save_error)
        if self.human is None or self.state.game_over:  # the seed would give away the deals
            out["seed"] = self.seed
        return out

    # ---------------------------------------------------------------- moves
    def act(self, action: Any) -> dict[str, Any]:
        """The person's move: ``action`` must be one of their legal action ids."""
        with self.lock:
            self.touched = self.clock()
            waiting = self.waiting_for()
            if waiting != "you":
                raise GameError(409, _not_now(waiting))
            if isinstance(action, bool) or not isinstance(action, int):
                raise GameError(400, f"action {action!r} must be an integer action id")
            legal = self.state.legal_actions()
            if action not in legal:
                what = f" ({action_to_str(action)})" if 0 <= action < N_ACTIONS else ""
                shown = ", ".join(f"{a} ({action_to_str(a)})" for a in legal)
                raise GameError(400, f"illegal action {action}{what}; legal now: {shown}")
            self.state.apply(action)
            self.moved = self.clock()
            self._after_move()
            return self.view()

    def step(self, budget: float | None = None) -> dict[str, Any]:
        """One bot move, or the deal of the next hand, waiting at most ``budget`` seconds for
        the bot (:meth:`begin_step`, then :meth:`finish_step`)."""
        started = self.begin_step()
        if isinstance(started, dict):
            return started
        try:
            started.result(timeout=budget)
        except concurrent.futures.TimeoutError:
            raise self.still_thinking(budget or 0.0) from None
        except Exception:  # noqa: BLE001 (finish_step reports the bot's failure)
            pass
        return self.finish_step(started)

    def begin_step(self) -> dict[str, Any] | concurrent.futures.Future[int]:
        """Deal the next hand (the view), or the bot's move being computed on the pool under
        the move deadline (a future of its action; the one already running when a step came
        before). GameError 503 when no worker is free for it."""
        with self.lock:
            self.touched = self.clock()
            if self.pending is not None:
                return self.pending
            waiting = self.waiting_for()
            if waiting == "next_hand":
                self.state.next_hand()
                self.moved = self.clock()
                return self.view()
            if waiting != "bot":
                raise GameError(409, _not_now(waiting))
            if self.cancel.is_set():
                raise GameError(404, f"game {self.id!r} was closed: start a new one")
            bot, state, seconds, cancel = (self.bots[self.state.current], self.state,
                                           self.move_seconds, self.cancel)
            pool = self.pool or _own_pool()
            future = pool.submit(network_of(self.owner),
                                 lambda: _think(bot, state, seconds, cancel))
            if future is None:
                raise GameError(503, pool.busy_message(network_of(self.owner)),
                                {"Retry-After": "1"})
            self.pending = future
            return future

    def finish_step(self, future: concurrent.futures.Future[int]) -> dict[str, Any]:
        """Apply a finished move (once, whoever comes first) and return the view; a bot
        that failed is one line (500) and the game is unchanged."""
        with self.lock:
            self.touched = self.clock()
            if self.pending is future:
                self.pending = None
                seat = self.state.current
                exc = future.exception()
                if exc is not None:
                    raise GameError(500, f"bot {self.ids[seat]!r} at seat {seat} failed: "
                                         f"{type(exc).__name__}: {exc}")
                self.state.apply(future.result())
                self.moved = self.clock()
                self._after_move()
            return self.view()

    def close(self) -> None:
        """The game is gone (deleted, evicted, expired): its move in progress stops at its
        next check and no other starts."""
        self.cancel.set()

    def still_thinking(self, budget: float) -> GameError:
        """The answer to a step that waited ``budget`` seconds for a bot still thinking."""
        seat = self.state.current
        return GameError(503, f"bot {self.ids[seat]!r} at seat {seat} is still thinking after "
                              f"{budget:g} s (its deadline is {self.move_seconds:g} s): step "
                              "again", {"Retry-After": "1"})

    def _after_move(self) -> None:
        if not self.state.game_over or self.saved or self.save_error:
            return
        name = f"web-{time.strftime('%Y%m%d-%H%M%S')}-{self.id[:8]}.jsonl"
        path = self.records_dir / name
        try:
            write_records(path, [game_record(self.state, self.seed, self.ids)])
            self.saved = str(path)
        except OSError as exc:
            self.save_error = f"could not save the record to {path}: {exc}"


def _think(bot: Agent, state: Any, seconds: float, cancel: threading.Event) -> int:
    """A bot's move, on a pool worker, under the move deadline and the game's cancellation
    (nobody changes ``state`` until it is applied; a failure is reported by finish_step)."""
    with move_deadline(seconds, cancel):
        return decide(bot, state)


_POOL: list[MovePool] = []


def _own_pool() -> MovePool:
    """The pool of games made without a store (tests): one per process, made when needed."""
    if not _POOL:
        _POOL.append(MovePool())
    return _POOL[0]


def _check_table(bot: Any, rules: Rules, agent_id: str) -> None:
    """Refuse at once a trained agent (one with a model card) made for another table, rather
    than at its first move."""
    card = getattr(bot, "card", None)
    if isinstance(card, dict) and "players" in card:
        from allfives_agents.trained.checkpoint import check_table

        check_table(card, rules, repr(agent_id))


def _not_now(waiting: str) -> str:
    return {"over": "the game is over",
            "next_hand": "the hand is over: step to deal the next hand",
            "you": "it is the person's turn: send an action",
            "bot": "it is a bot's turn: step to let it move"}[waiting]


class GameStore:
    """The live games by id, within :class:`Limits` (see the module docstring): idle games
    expire, a client address and a network hold a bounded number of unfinished games, busy
    networks leave a reserve to the others, and a full store refuses new games instead of
    dropping one in play. Its bot moves run on one :class:`MovePool`."""

    def __init__(self, records_dir: Path, make: AgentMaker, limits: Limits | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.records_dir, self.make = records_dir, make
        self.limits = limits or Limits()
        self.clock = clock
        self.pool = MovePool(self.limits.workers, self.limits.network_workers)
        self.games: dict[str, LiveGame] = {}
        self.lock = threading.Lock()

    def create(self, rules: Rules, ids: Sequence[str], seed: int | None,
               owner: str = "") -> LiveGame:
        """A new game for the client at address ``owner`` (GameError 429/503 when it may not
        have one now)."""
        if seed is None:
            seed = secrets.randbelow(2**31)
        if not 0 <= seed < 2**63:
            raise GameError(400, f"seed={seed}: a seed is an integer from 0 to 2**63 - 1")
        with self.lock:
            self._make_room(owner)  # refuse before the agents are built
        game = LiveGame(secrets.token_hex(8), rules, ids, seed, self.records_dir, self.make,
                        owner, self.clock, self.pool, self.limits.move_seconds)
        with self.lock:
            self._make_room(owner)  # again: others may have come in meanwhile
            self.games[game.id] = game
        return game

    def get(self, game_id: str, token: str | None) -> LiveGame:
        """The game, for the client holding its token (404 unknown, 403 wrong token)."""
        with self.lock:
            self._expire()
            game = self.games.get(game_id)
        if game is None:
            raise GameError(404, f"no game {game_id!r} (expired after "
                                 f"{self.limits.idle_seconds / 60:g} minutes idle, deleted, or "
                                 "the server restarted): start a new one")
        if not game.owned_by(token):
            raise GameError(403, f"game {game_id!r} belongs to the page that started it: send "
                                 "its token in the X-Game-Token header")
        game.touched = self.clock()
        return game

    def delete(self, game_id: str, token: str | None) -> None:
        """Remove the game of the client holding its token; its move in progress stops."""
        game = self.get(game_id, token)
        with self.lock:
            self._drop(game)

    def status(self) -> dict[str, Any]:
        """Counts only (``GET /api/status``): games held and in play, bot moves being
        computed, the pool's size and each network's share, the move deadline."""
        with self.lock:
            playing = sum(1 for g in self.games.values() if not g.state.game_over)
            held = len(self.games)
        return {"games": held, "playing": playing, "thinking": self.pool.running,
                "workers": self.pool.workers, "network_workers": self.pool.per_network,
                "move_seconds": self.limits.move_seconds}

    def _drop(self, game: LiveGame) -> None:
        if self.games.get(game.id) is game:
            del self.games[game.id]
        game.close()

    def _expire(self) -> None:
        cutoff = self.clock() - self.limits.idle_seconds
        for game in [g for g in self.games.values() if g.touched < cutoff]:
            self._drop(game)

    def _make_room(self, owner: str) -> None:
        """Refuse a new game (429, 503) unless the limits leave room for it; a finished game
        (the least recently used first), else a game in play that made no move for
        :attr:`Limits.evict_seconds` (the longest first), may go to make room."""
        self._expire()
        lim = self.limits
        playing = [g for g in self.games.values() if not g.state.game_over]
        addr, net = address_of(owner), network_of(owner)
        mine = sum(1 for g in playing if address_of(g.owner) == addr)
        per_net = collections.Counter(network_of(g.owner) for g in playing)
        for count, most, whose in ((mine, lim.per_address, f"your address ({addr})"),
                                   (per_net[net], lim.per_network, f"your network ({net})")):
            if count >= most:
                raise GameError(429, f"{count} unfinished games from {whose} already (at "
                                     f"most {most}): finish one, or let one expire after "
                                     f"{lim.idle_seconds / 60:g} minutes idle",
                                {"Retry-After": "60"})
        if per_net[net] + 1 >= lim.reserve_below:
            self._keep_reserve(playing, per_net, net)
        if len(self.games) < lim.max_games:
            return
        done = [g for g in self.games.values() if g.state.game_over]
        victim = min(done, key=lambda g: g.touched, default=None) or self._idlest(playing)
        if victim is None:
            raise GameError(503, f"the server holds {len(self.games)} games in play (at most "
                                 f"{lim.max_games}), none without a move for "
                                 f"{lim.evict_seconds / 60:g} minutes: try again later",
                            {"Retry-After": "60"})
        self._drop(victim)

    def _keep_reserve(self, playing: list[LiveGame], per_net: collections.Counter[str],
                      net: str) -> None:
        """A new game for a network that would then hold ``reserve_below`` or more: refused
        (503) when the networks that do would hold more than ``max_games - reserve``
        together, unless one of their games in play idle past the eviction window can go."""
        lim = self.limits
        per_net = per_net.copy()
        per_net[net] += 1
        busy = {n for n, c in per_net.items() if c >= lim.reserve_below}
        held = sum(per_net[n] for n in busy)
        reserve = min(lim.reserve, lim.max_games // 4)
        most = lim.max_games - reserve
        if held <= most:
            return
        victim = self._idlest([g for g in playing if network_of(g.owner) in busy])
        if victim is None:
            raise GameError(503, f"networks holding {lim.reserve_below} or more unfinished "
                                 f"games each hold {held - 1} already, the most they may hold "
                                 f"together ({most}); the other {reserve} places are kept "
                                 "for other clients: finish a game or try again later",
                            {"Retry-After": "60"})
        self._drop(victim)

    def _idlest(self, games: list[LiveGame]) -> LiveGame | None:
        """The game in ``games`` that made no move for the longest, past the eviction window
        and with no move in progress (None when there is none)."""
        cutoff = self.clock() - self.limits.evict_seconds
        idle = [g for g in games if g.moved < cutoff and g.pending is None]
        return min(idle, key=lambda g: g.moved, default=None)


def _ip(address: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


def address_of(address: str) -> str:
    """The client for :attr:`Limits.per_address`: an IPv4 address itself, an IPv6 address's
    /64 (one host or link has all of it), anything else as given."""
    ip = _ip(address)
    if ip is None:
        return address
    if ip.version == 4:
        return str(ip)
    return str(ipaddress.ip_network(f"{ip}/64", strict=False))


def network_of(address: str) -> str:
    """The network an address belongs to for :attr:`Limits.per_network`: its IPv4 /24 or
    IPv6 /48 (a site's usual allocation; the address itself when it is not an IP address)."""
    ip = _ip(address)
    if ip is None:
        return address
    prefix = 24 if ip.version == 4 else 48
    return str(ipaddress.ip_network(f"{ip}/{prefix}", strict=False))
