"""Live games kept on the server: one :class:`LiveGame` per browser tab, in a :class:`GameStore`.

The browser never holds the game: it asks for a move to be made (its chosen action id, or
"step" for the next bot move or the next hand) and gets back what it may see
(:func:`allfives_agents.web.views.table_view`). A game belongs to whoever created it: creation
returns a secret ``token`` that every later request on the game must carry (compared with
:func:`secrets.compare_digest`).

Each game has its own lock, held only for short reads and changes, never while a bot thinks:
a bot's move is computed in its own thread (:meth:`LiveGame.begin_step`), and a request waits
for it at most the store's move budget (:attr:`Limits.move_seconds`); past it the request is
answered "still thinking, step again" and the game stays as it was until the move is done.
While a move is being computed nothing else can change the game (an action is refused with
409, another step waits for the same move), so the thinking thread reads a state no one
writes. Bots move through :func:`allfives_env.match.decide`, as in every other game
(``act(obs, view)`` with their own seat's observation and
:class:`~allfives_env.view.SeatView`, never the state), and a game is seeded as
:func:`allfives_env.match.play_game` seeds it: the same ids and seed play the same game.

The store holds at most :attr:`Limits.max_games` games. Games idle longer than
:attr:`Limits.idle_seconds` expire; each client address may hold :attr:`Limits.per_address`
unfinished games and each network (an IPv4 /24, an IPv6 /64: addresses that are cheap to
have many of) :attr:`Limits.per_network` (429 above either). When the store is full a new
game evicts the least recently used finished game, else the game in play idle the longest
past :attr:`Limits.evict_seconds`; a game in play touched within that window is never
evicted (503 when nothing can go).
"""

from __future__ import annotations

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
from allfives_agents.web.gate import HUMAN
from allfives_agents.web.views import table_view
from allfives_env.match import agent_seeds, decide, new_game
from allfives_env.record import game_record, write_records
from allfives_env.rules import Rules
from allfives_env.tiles import N_ACTIONS, action_to_str

AgentMaker = Callable[[str, int, Rules], Agent]


@dataclasses.dataclass(frozen=True)
class Limits:
    """What one server holds and how long a bot may take per request."""

    max_games: int = 256  # all games held, finished ones included
    per_address: int = 16  # unfinished games per client address
    per_network: int = 64  # unfinished games per IPv4 /24 or IPv6 /64
    idle_seconds: float = 3600.0  # a game untouched this long expires
    evict_seconds: float = 600.0  # a game untouched this long may go when the store is full
    move_seconds: float = 10.0  # a step request waits this long for a bot's move


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
                 clock: Callable[[], float] = time.monotonic) -> None:
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
        self.saved: str | None = None
        self.save_error: str | None = None
        self.touched = clock()

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
        """Deal the next hand (the view), or the bot's move being computed in its own thread
        (a future of its action; the one already running when a step came before)."""
        with self.lock:
            self.touched = self.clock()
            if self.pending is not None:
                return self.pending
            waiting = self.waiting_for()
            if waiting == "next_hand":
                self.state.next_hand()
                return self.view()
            if waiting != "bot":
                raise GameError(409, _not_now(waiting))
            future: concurrent.futures.Future[int] = concurrent.futures.Future()
            future.set_running_or_notify_cancel()
            bot = self.bots[self.state.current]
            thread = threading.Thread(target=_think, args=(bot, self.state, future),
                                      name=f"allfives-bot-{self.id}", daemon=True)
            self.pending = future
            thread.start()
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
                self._after_move()
            return self.view()

    def still_thinking(self, budget: float) -> GameError:
        """The answer to a step that waited ``budget`` seconds for a bot still thinking."""
        seat = self.state.current
        return GameError(503, f"bot {self.ids[seat]!r} at seat {seat} is still thinking after "
                              f"{budget:g} s (the server's move budget): step again",
                         {"Retry-After": "1"})

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


def _think(bot: Agent, state: Any, future: concurrent.futures.Future[int]) -> None:
    """A bot's move, in its own thread (nobody changes ``state`` until it is applied)."""
    try:
        future.set_result(decide(bot, state))
    except BaseException as exc:  # noqa: BLE001 (reported by finish_step, in one line)
        future.set_exception(exc)


def _check_table(bot: Any, rules: Rules, agent_id: str) -> None:
    """Refuse at once a trained agent (one with a model card) made for another table, rather
    than at its first move."""
    card = getattr(bot, "card", None)
    if isinstance(card, dict) and "players" in card:
        from allfives_agents.checkpoint import check_table

        check_table(card, rules, repr(agent_id))


def _not_now(waiting: str) -> str:
    return {"over": "the game is over",
            "next_hand": "the hand is over: step to deal the next hand",
            "you": "it is the person's turn: send an action",
            "bot": "it is a bot's turn: step to let it move"}[waiting]


class GameStore:
    """The live games by id, within :class:`Limits` (see the module docstring): idle games
    expire, a client address holds a bounded number of unfinished games, and a full store
    refuses new games instead of dropping one in play."""

    def __init__(self, records_dir: Path, make: AgentMaker, limits: Limits | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.records_dir, self.make = records_dir, make
        self.limits = limits or Limits()
        self.clock = clock
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
                        owner, self.clock)
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
                                 f"{self.limits.idle_seconds / 60:g} minutes idle, or the "
                                 "server restarted): start a new one")
        if not game.owned_by(token):
            raise GameError(403, f"game {game_id!r} belongs to the page that started it: send "
                                 "its token in the X-Game-Token header")
        game.touched = self.clock()
        return game

    def _expire(self) -> None:
        cutoff = self.clock() - self.limits.idle_seconds
        for gid in [g.id for g in self.games.values() if g.touched < cutoff]:
            del self.games[gid]

    def _make_room(self, owner: str) -> None:
        """Refuse a new game (429, 503) unless the limits leave room for it; a finished game
        (the least recently used first), else a game in play idle past
        :attr:`Limits.evict_seconds` (the longest idle first), may go to make room."""
        self._expire()
        lim = self.limits
        playing = [g for g in self.games.values() if not g.state.game_over]
        mine = sum(1 for g in playing if g.owner == owner)
        net = network_of(owner)
        ours = sum(1 for g in playing if network_of(g.owner) == net)
        for count, most, whose in ((mine, lim.per_address, "your address"),
                                   (ours, lim.per_network, f"your network ({net})")):
            if count >= most:
                raise GameError(429, f"{count} unfinished games from {whose} already (at "
                                     f"most {most}): finish one, or let one expire after "
                                     f"{lim.idle_seconds / 60:g} minutes idle",
                                {"Retry-After": "60"})
        if len(self.games) < lim.max_games:
            return
        cutoff = self.clock() - lim.evict_seconds
        done = [g for g in self.games.values() if g.state.game_over]
        idle = [g for g in playing if g.touched < cutoff and g.pending is None]
        victim = min(done or idle, key=lambda g: g.touched, default=None)
        if victim is None:
            raise GameError(503, f"the server holds {len(self.games)} games in play (at most "
                                 f"{lim.max_games}), none idle for {lim.evict_seconds / 60:g} "
                                 "minutes: try again later", {"Retry-After": "60"})
        del self.games[victim.id]


def network_of(address: str) -> str:
    """The network an address belongs to for :attr:`Limits.per_network`: its IPv4 /24 or
    IPv6 /64 (the address itself when it is not an IP address)."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    prefix = 24 if ip.version == 4 else 64
    return str(ipaddress.ip_network(f"{ip}/{prefix}", strict=False))
