"""The routes of ``allfives serve`` (see :mod:`allfives_agents.web.server` for the list).

Every refused request gets a 4xx status and ``{"error": "<one line>"}``; anything unexpected
is a 500 with one line naming the error's type and a request id, never a traceback
(:mod:`allfives_agents.web.hardening`). Request bodies are capped while they are read
(:class:`BodyLimit`): :data:`MAX_UPLOAD` for a record upload, :data:`MAX_BODY` for everything
else, refused at once when ``Content-Length`` says more, and must arrive within
:data:`BODY_SECONDS` (408). A new game's rule overrides and agent ids are short strings
(:data:`MAX_OVERRIDES` of at most :data:`MAX_FIELD` characters).
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Header, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, StrictBool, StrictInt
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from allfives_agents.levels import STRONGEST, level_names, levels_for
from allfives_agents.web.games import GRACE_SECONDS, GameError, GameStore, Limits
from allfives_agents.web.gate import HUMAN, AgentGate
from allfives_agents.web.hardening import HeaderLimit, OneLineErrors
from allfives_agents.web.replays import (
    frames_of,
    list_files,
    parse_records_text,
    read_listed,
    summary,
)
from allfives_env.game.gameconfig import GameConfig
from allfives_env.game.rules import OPTION_NAMES, PRESETS, make_rules, parse_overrides
from allfives_env.records.record import RecordError
from allfives_env.rendering.render_image import _PIPS

MAX_UPLOAD = 2 * 1024 * 1024  # a record upload (about 140 two-seat games)
MAX_BODY = 64 * 1024  # any other request body
UPLOAD_SECONDS = 30.0  # a record upload must arrive within this
BODY_SECONDS = 10.0  # any other request body must arrive within this
MAX_OVERRIDES = 32  # rule overrides in a new game
MAX_FIELD = 200  # characters in one override or agent id
UPLOAD_SLOTS = 2  # uploads read and parsed at once
TOKEN_HEADER = "X-Game-Token"


class NewGame(BaseModel):
    """The body of ``POST /api/games``."""

    model_config = ConfigDict(extra="forbid")
    agents: list[str]
    preset: str = "all_fives"
    players: StrictInt | None = None
    teams: StrictBool | None = None
    overrides: list[str] = []
    seed: StrictInt | None = None


class Move(BaseModel):
    """The body of ``POST /api/games/{id}/act``: one action id."""

    model_config = ConfigDict(extra="forbid")
    action: StrictInt


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": _one_line(message)}, status_code=status, headers=headers)


def _one_line(text: str) -> str:
    line = " ".join(str(text)[:4000].split())
    return line if len(line) <= 1000 else line[:997] + "..."


def _validation_line(exc: RequestValidationError) -> str:
    parts = []
    for err in exc.errors()[:3]:
        where = ".".join(str(x) for x in err.get("loc", ()) if x != "body") or "body"
        parts.append(f"{where}: {err.get('msg', 'invalid')}")
    return "bad request: " + "; ".join(parts)


class BodyLimit:
    """ASGI middleware: a request body over its route's limit is answered 413 in one line,
    at once when ``Content-Length`` says so, else as soon as the bytes read pass the limit
    (the route sees the client as gone and nothing more is read)."""

    def __init__(self, app: ASGIApp, limit_for: Callable[[str], int],
                 seconds_for: Callable[[str], float] = lambda _path: BODY_SECONDS) -> None:
        self.app, self.limit_for, self.seconds_for = app, limit_for, seconds_for

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limit_for(scope.get("path", ""))
        declared = _content_length(scope)
        if declared is not None and (declared < 0 or declared > limit):
            await self._refuse(scope, receive, send, limit)
            return
        seen, over, late, started, whole = 0, False, False, False, False
        deadline = asyncio.get_running_loop().time() + self.seconds_for(scope.get("path", ""))

        async def capped_receive() -> Message:
            nonlocal seen, over, late, whole
            if over or late:
                return {"type": "http.disconnect"}
            if whole:  # the body is in: no deadline on waiting for a disconnect
                return await receive()
            try:
                message = await asyncio.wait_for(
                    receive(), max(0.0, deadline - asyncio.get_running_loop().time()))
            except asyncio.TimeoutError:
                late = True
                return {"type": "http.disconnect"}
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    over = True
                    return {"type": "http.disconnect"}
                whole = not message.get("more_body", False)
            return message

        async def guarded_send(message: Message) -> None:
            nonlocal started
            if over or late:
                return  # the route's own answer to a vanished client is dropped
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, capped_receive, guarded_send)
        except (ClientDisconnect, OSError, RuntimeError):
            if not (over or late):
                raise
        if over and not started:
            await self._refuse(scope, receive, send, limit)
        elif late and not started:
            seconds = self.seconds_for(scope.get("path", ""))
            await _error(408, f"the request body took over {seconds:g} s: send it in one go",
                         {"Connection": "close"})(scope, receive, send)

    @staticmethod
    async def _refuse(scope: Scope, receive: Receive, send: Send, limit: int) -> None:
        size = f"{limit // 2**20} MiB" if limit >= 2**20 else f"{limit // 1024} KiB"
        response = _error(413, f"the request body is over {size}, the most this server "
                               "reads for it", {"Connection": "close"})
        await response(scope, receive, send)


def body_limit(path: str) -> int:
    """The most bytes a request body to ``path`` may hold."""
    return MAX_UPLOAD if path == "/api/replay" else MAX_BODY


def body_seconds(path: str) -> float:
    """The most seconds a request body to ``path`` may take to arrive."""
    return UPLOAD_SECONDS if path == "/api/replay" else BODY_SECONDS


def check_new_game(req: NewGame) -> None:
    """Refuse (400, one line) rule overrides and agent ids past :data:`MAX_OVERRIDES` and
    :data:`MAX_FIELD`, before any of them is parsed."""
    if len(req.overrides) > MAX_OVERRIDES:
        raise GameError(400, f"{len(req.overrides)} rule overrides: give at most "
                             f"{MAX_OVERRIDES}")
    if len(req.agents) > 4:
        raise GameError(400, f"{len(req.agents)} agents: a game has 2 to 4 seats")
    for what, items in (("rule override", req.overrides), ("agent id", req.agents)):
        for item in items:
            if len(item) > MAX_FIELD:
                raise GameError(400, f"a {what} of {len(item)} characters ({item[:30]!r}...): "
                                     f"at most {MAX_FIELD}")


def _content_length(scope: Scope) -> int | None:
    for key, value in scope.get("headers", ()):
        if key == b"content-length":
            text = value.decode("latin-1").strip()
            return int(text) if text.isdigit() else -1
    return None


def meta(gate: AgentGate, replay_dir: Path | None) -> dict[str, Any]:
    """What the page needs to build its forms and draw pips; ``agents`` lists exactly the
    agent ids a client may ask for (with options where the bot takes them), ``levels`` the
    levels at every table the form offers (:func:`levels_meta`)."""
    return {"presets": {p: make_rules(p).to_dict() for p in PRESETS},
            "options": list(OPTION_NAMES), "human": HUMAN, "agents": gate.ids(),
            "levels": levels_meta(),
            "pips": {str(k): [list(p) for p in v] for k, v in _PIPS.items()},
            "replay_files": list_files(replay_dir)}


#: The tables the page's form offers: (seats, teams).
TABLES = ((2, False), (3, False), (4, False), (4, True))


@functools.lru_cache(maxsize=1)
def levels_meta() -> dict[str, Any]:
    """The levels (``level:<name>``, weakest first) at each preset's tables: name, id, the
    agent it plays, description, measured strength, and whether it can play there. The page
    picks the table of its form; the server resolves a level for the game's own rules."""
    tables = []
    for preset in PRESETS:
        for players, teams in TABLES:
            rules = make_rules(preset, players=players, teams=teams)
            tables.append({"preset": preset, "players": players, "teams": teams,
                           "levels": [level.to_dict() for level in levels_for(rules)]})
    return {"names": level_names(), "strongest": STRONGEST, "tables": tables}


def add_handlers(app: FastAPI) -> None:
    """Every error as 4xx/5xx and one line (see the module docstring)."""

    @app.exception_handler(GameError)
    def game_error(_req: Request, exc: GameError) -> JSONResponse:
        return _error(exc.status, exc.message, exc.headers)

    @app.exception_handler(RequestValidationError)
    def invalid(_req: Request, exc: RequestValidationError) -> JSONResponse:
        return _error(422, _validation_line(exc))

    @app.exception_handler(ValueError)  # RulesError, RecordError, refused agent ids
    def value_error(_req: Request, exc: ValueError) -> JSONResponse:
        return _error(400, str(exc) or type(exc).__name__)

    @app.exception_handler(HTTPException)  # unknown routes, wrong methods, unparsable bodies
    def http_error(_req: Request, exc: HTTPException) -> JSONResponse:
        detail = exc.detail if isinstance(exc.detail, str) else "bad request"
        return _error(exc.status_code, detail, dict(exc.headers or {}))

    # anything else: OneLineErrors answers 500 in one line and logs one line, no traceback


def add_routes(app: FastAPI, records_dir: Path, replay_dir: Path | None, static: Path,
               gate: AgentGate | None = None, limits: Limits | None = None) -> None:
    gate = gate or AgentGate()
    limits = limits or Limits()
    store = GameStore(records_dir, gate.make, limits)
    app.state.games = store
    app.state.gate = gate
    add_handlers(app)
    app.add_middleware(BodyLimit, limit_for=body_limit, seconds_for=body_seconds)
    app.add_middleware(OneLineErrors)
    app.add_middleware(HeaderLimit)
    app.mount("/static", StaticFiles(directory=static), name="static")

    @app.get("/", include_in_schema=False)
    def index() -> FileResponse:
        return FileResponse(static / "index.html")

    @app.get("/api/meta")
    def get_meta() -> dict[str, Any]:
        return meta(gate, replay_dir)

    @app.post("/api/games")
    def new_game(req: NewGame, request: Request) -> dict[str, Any]:
        check_new_game(req)
        players = req.players if req.players is not None else len(req.agents)
        config = GameConfig(preset=req.preset, players=players, teams=req.teams,
                            overrides=parse_overrides(req.overrides))
        game = store.create(config.rules, req.agents, req.seed, client_address(request))
        with game.lock:
            return {**game.view(), "token": game.token}

    @app.get("/api/games/{game_id}")
    def get_game(game_id: str, x_game_token: str | None = Header(None)) -> dict[str, Any]:
        game = store.get(game_id, x_game_token)
        with game.lock:
            return game.view()

    @app.post("/api/games/{game_id}/act")
    def act(game_id: str, move: Move, x_game_token: str | None = Header(None)
            ) -> dict[str, Any]:
        return store.get(game_id, x_game_token).act(move.action)

    @app.post("/api/games/{game_id}/step")
    async def step(game_id: str, x_game_token: str | None = Header(None)) -> dict[str, Any]:
        game = store.get(game_id, x_game_token)
        started = await run_in_threadpool(game.begin_step)
        if isinstance(started, dict):
            return started
        done = asyncio.wrap_future(started)
        wait = limits.move_seconds + GRACE_SECONDS
        try:  # wait without holding a worker thread or the game's lock
            await asyncio.wait_for(asyncio.shield(done), timeout=wait)
        except asyncio.TimeoutError:
            raise game.still_thinking(wait) from None
        except Exception:  # noqa: BLE001 (finish_step reports the bot's failure)
            pass
        return await run_in_threadpool(game.finish_step, started)

    @app.delete("/api/games/{game_id}")
    def delete_game(game_id: str, x_game_token: str | None = Header(None)) -> dict[str, Any]:
        store.delete(game_id, x_game_token)  # its bot move in progress stops
        return {"deleted": game_id}

    @app.get("/api/status")
    def status() -> dict[str, Any]:
        return store.status()

    @app.get("/api/replays")
    def replays() -> dict[str, Any]:
        return {"files": list_files(replay_dir)}

    @app.get("/api/replays/file")
    def replay_file(name: str, game: int = 0) -> dict[str, Any]:
        try:
            text = read_listed(replay_dir, name, MAX_UPLOAD)
        except FileNotFoundError as exc:
            raise GameError(404, str(exc)) from None
        return _replay(parse_records_text(text, name), game)

    slots = asyncio.Semaphore(UPLOAD_SLOTS)

    @app.post("/api/replay")
    async def replay_upload(request: Request, game: int = 0) -> Any:
        if slots.locked():
            return _error(503, f"{UPLOAD_SLOTS} uploads are being read already: try again in "
                               "a moment", {"Retry-After": "2"})
        async with slots:
            try:
                body = await asyncio.wait_for(_read_body(request), UPLOAD_SECONDS)
            except ClientDisconnect:  # (past the limit, BodyLimit answers 413 instead)
                return _error(400, "the upload was cut off before its end")
            except asyncio.TimeoutError:  # (BodyLimit's deadline answers first)
                return _error(408, f"the upload took over {UPLOAD_SECONDS:g} s: send the file "
                                   "in one go", {"Connection": "close"})
            try:
                text = body.decode("utf-8")
            except UnicodeDecodeError:
                return _error(400, "the file is not UTF-8 text (an allfives-record/1 JSON file)")
            del body
            return await run_in_threadpool(lambda: _replay(parse_records_text(text), game))


async def _read_body(request: Request) -> bytearray:
    """The body, read chunk by chunk (:class:`BodyLimit` stops it past :data:`MAX_UPLOAD`)."""
    data = bytearray()
    async for chunk in request.stream():
        data += chunk
    return data


def client_address(request: Request) -> str:
    """The client's address (the TCP peer; ``allfives serve`` ignores forwarding headers)."""
    return request.client.host if request.client else ""


def _replay(records: list[Any], game: int) -> dict[str, Any]:
    if not 0 <= game < len(records):
        raise GameError(400, f"game={game}: the file holds games 0..{len(records) - 1}")
    if not isinstance(records[game], dict):
        raise RecordError(f"game {game}: a record must be a JSON object")
    out = frames_of(records[game])
    out.update(game=game, count=len(records), games=[summary(r) for r in records[:1000]])
    return out
