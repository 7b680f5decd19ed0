"""Live games kept on the server: one :class:`LiveGame` per browser tab, in a :class:`GameStore`.

The browser never holds the game: it asks for a move to be made (its chosen action id, or
"step" for the next bot move or the next hand) and gets back what it may see
(:func:`agents.web.views.table_view`). Each game has its own lock, so games in different tabs
never wait on each other and two requests on one game are applied one after the other. Bots
move through :func:`allfives_env.match.decide`, as in every other game (``act(obs, view)`` with
their own seat's observation and :class:`~allfives_env.view.SeatView`, never the state), and a
game is seeded as :func:`allfives_env.match.play_game` seeds it: the same ids and seed play the
same game.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agents.base import Agent, make_agent
from agents.web.views import table_view
from allfives_env.match import agent_seeds, decide, new_game
from allfives_env.record import game_record, write_records
from allfives_env.rules import Rules
from allfives_env.tiles import N_ACTIONS, action_to_str

HUMAN = "human"


class GameError(Exception):
    """A request the game refuses (4xx), or a bot that failed (500): the HTTP status to answer
    and one clear line."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


class LiveGame:
    """One game between at most one person (agent id ``human``) and bots."""

    def __init__(self, game_id: str, rules: Rules, ids: Sequence[str], seed: int,
                 records_dir: Path) -> None:
        humans = [s for s, i in enumerate(ids) if i == HUMAN]
        if len(ids) != rules.players:
            raise GameError(400, f"{len(ids)} agents for {rules.players} seats: give one per "
                                 "seat")
        if len(humans) > 1:
            raise GameError(400, f"seats {humans} are all 'human': one person per game")
        self.id, self.rules, self.ids, self.seed = game_id, rules, list(ids), seed
        self.human = humans[0] if humans else None
        self.records_dir = records_dir
        self.bots: dict[int, Agent] = {}
        for s, agent_seed in enumerate(agent_seeds(seed, rules.players)):
            if ids[s] != HUMAN:
                bot = make_agent(ids[s], seed=s)
                _check_table(bot, rules, ids[s])
                bot.reset(seed=agent_seed)
                self.bots[s] = bot
        self.state = new_game(rules, seed, log=True)
        self.lock = threading.Lock()
        self.saved: str | None = None
        self.save_error: str | None = None
        self.touched = time.monotonic()

    @property
    def mode(self) -> str:
        return "watch" if self.human is None else "play"

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
                   waiting=self.waiting_for(), saved=self.saved, save_error=self.save_error)
        if self.human is None or self.state.game_over:  # the seed would give away the deals
            out["seed"] = self.seed
        return out

    # ---------------------------------------------------------------- moves
    def act(self, action: Any) -> dict[str, Any]:
        """The person's move: ``action`` must be one of their legal action ids."""
        with self.lock:
            self.touched = time.monotonic()
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

    def step(self) -> dict[str, Any]:
        """One bot move, or the deal of the next hand."""
        with self.lock:
            self.touched = time.monotonic()
            waiting = self.waiting_for()
            if waiting == "next_hand":
                self.state.next_hand()
            elif waiting == "bot":
                self._bot_move()
            else:
                raise GameError(409, _not_now(waiting))
            return self.view()

    def _bot_move(self) -> None:
        seat = self.state.current
        try:
            action = decide(self.bots[seat], self.state)
        except Exception as exc:  # a broken bot: one line for the page, the game unchanged
            raise GameError(500, f"bot {self.ids[seat]!r} at seat {seat} failed: "
                                 f"{type(exc).__name__}: {exc}") from exc
        self.state.apply(action)
        self._after_move()

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


def _check_table(bot: Any, rules: Rules, agent_id: str) -> None:
    """Refuse at once a trained agent (one with a model card) made for another table, rather
    than at its first move."""
    card = getattr(bot, "card", None)
    if isinstance(card, dict) and "players" in card:
        from agents.checkpoint import check_table

        check_table(card, rules, repr(agent_id))


def _not_now(waiting: str) -> str:
    return {"over": "the game is over",
            "next_hand": "the hand is over: step to deal the next hand",
            "you": "it is the person's turn: send an action",
            "bot": "it is a bot's turn: step to let it move"}[waiting]


class GameStore:
    """The live games by id; the least recently used go when there are too many."""

    def __init__(self, records_dir: Path, max_games: int = 256) -> None:
        self.records_dir, self.max_games = records_dir, max_games
        self.games: dict[str, LiveGame] = {}
        self.lock = threading.Lock()

    def create(self, rules: Rules, ids: Sequence[str], seed: int | None) -> LiveGame:
        if seed is None:
            seed = secrets.randbelow(2**31)
        if not 0 <= seed < 2**63:
            raise GameError(400, f"seed={seed}: a seed is an integer from 0 to 2**63 - 1")
        game = LiveGame(secrets.token_hex(8), rules, ids, seed, self.records_dir)
        with self.lock:
            while len(self.games) >= self.max_games:
                oldest = min(self.games.values(), key=lambda g: g.touched)
                del self.games[oldest.id]
            self.games[game.id] = game
        return game

    def get(self, game_id: str) -> LiveGame:
        with self.lock:
            game = self.games.get(game_id)
        if game is None:
            raise GameError(404, f"no game {game_id!r} (finished long ago, or the server "
                                 "restarted): start a new one")
        return game
