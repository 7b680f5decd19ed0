"""The routes of ``allfives serve`` (see :mod:`agents.web.server` for the list)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, StrictBool, StrictInt
from starlette.concurrency import run_in_threadpool

from agents.base import available_agents
from agents.web.games import HUMAN, GameError, GameStore
from agents.web.replays import frames_of, list_files, parse_records_text, read_listed, summary
from allfives_env.gameconfig import GameConfig
from allfives_env.record import RecordError
from allfives_env.render_image import _PIPS
from allfives_env.rules import OPTION_NAMES, PRESETS, make_rules, parse_overrides

MAX_UPLOAD = 32 * 1024 * 1024
SHIPPED_DIR = Path(__file__).resolve().parents[2] / "checkpoints"  # ckpt:<name> finds these


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


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def _validation_line(exc: RequestValidationError) -> str:
    parts = []
    for err in exc.errors()[:3]:
        where = ".".join(str(x) for x in err.get("loc", ()) if x != "body") or "body"
        parts.append(f"{where}: {err.get('msg', 'invalid')}")
    return "bad request: " + "; ".join(parts)


def meta(replay_dir: Path | None) -> dict[str, Any]:
    """What the page needs to build its forms and draw pips."""
    shipped = sorted(p.name for p in SHIPPED_DIR.glob("*") if (p / "card.json").is_file())
    agents = [a for a in available_agents() if not a.endswith(":<...>")]
    return {"presets": {p: make_rules(p).to_dict() for p in PRESETS},
            "options": list(OPTION_NAMES), "human": HUMAN,
            "agents": agents + [f"ckpt:{name}" for name in shipped],
            "pips": {str(k): [list(p) for p in v] for k, v in _PIPS.items()},
            "replay_files": list_files(replay_dir)}


def add_routes(app: FastAPI, records_dir: Path, replay_dir: Path | None, static: Path) -> None:
    store = GameStore(records_dir)
    app.state.games = store

    @app.exception_handler(GameError)
    def game_error(_req: Request, exc: GameError) -> JSONResponse:
        return _error(exc.status, exc.message)

    @app.exception_handler(RequestValidationError)
    def invalid(_req: Request, exc: RequestValidationError) -> JSONResponse:
        return _error(422, _validation_line(exc))

    @app.exception_handler(ValueError)  # RulesError, RecordError, unknown agent ids
    def value_error(_req: Request, exc: ValueError) -> JSONResponse:
        return _error(400, str(exc).splitlines()[0] if str(exc) else type(exc).__name__)

    app.mount("/static", StaticFiles(directory=static), name="static")

    @app.get("/", include_in_schema=False)
    def index() -> FileResponse:
        return FileResponse(static / "index.html")

    @app.get("/api/meta")
    def get_meta() -> dict[str, Any]:
        return meta(replay_dir)

    @app.post("/api/games")
    def new_game(req: NewGame) -> dict[str, Any]:
        players = req.players if req.players is not None else len(req.agents)
        config = GameConfig(preset=req.preset, players=players, teams=req.teams,
                            overrides=parse_overrides(req.overrides))
        game = store.create(config.rules, req.agents, req.seed)
        with game.lock:
            return game.view()

    @app.get("/api/games/{game_id}")
    def get_game(game_id: str) -> dict[str, Any]:
        game = store.get(game_id)
        with game.lock:
            return game.view()

    @app.post("/api/games/{game_id}/act")
    def act(game_id: str, move: Move) -> dict[str, Any]:
        return store.get(game_id).act(move.action)

    @app.post("/api/games/{game_id}/step")
    def step(game_id: str) -> dict[str, Any]:
        return store.get(game_id).step()

    @app.get("/api/replays")
    def replays() -> dict[str, Any]:
        return {"files": list_files(replay_dir)}

    @app.get("/api/replays/file")
    def replay_file(name: str, game: int = 0) -> dict[str, Any]:
        try:
            text = read_listed(replay_dir, name)
        except FileNotFoundError as exc:
            raise GameError(404, str(exc)) from None
        return _replay(parse_records_text(text, name), game)

    @app.post("/api/replay")
    async def replay_upload(request: Request, game: int = 0) -> Any:
        body = await request.body()
        if len(body) > MAX_UPLOAD:
            return _error(413, f"the file is over {MAX_UPLOAD // 2**20} MiB")
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            return _error(400, "the file is not UTF-8 text (an allfives-record/1 JSON file)")
        try:
            return await run_in_threadpool(lambda: _replay(parse_records_text(text), game))
        except (ValueError, GameError) as exc:
            status = exc.status if isinstance(exc, GameError) else 400
            return _error(status, str(exc))


def _replay(records: list[Any], game: int) -> dict[str, Any]:
    if not 0 <= game < len(records):
        raise GameError(400, f"game={game}: the file holds games 0..{len(records) - 1}")
    if not isinstance(records[game], dict):
        raise RecordError(f"game {game}: a record must be a JSON object")
    out = frames_of(records[game])
    out.update(game=game, count=len(records), games=[summary(r) for r in records[:1000]])
    return out
