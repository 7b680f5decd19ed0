"""``allfives serve``: a web page to play bots, watch them play each other, and replay records.

    allfives serve                         # then open http://127.0.0.1:8000/
    allfives serve --port 8080 --replay-dir runs/ --records-dir runs/games/
    allfives serve --model mine=runs/main_all_fives_2p/final   # clients may ask for ckpt:mine

The games live in the server (the page sends only the action it chose); every finished game is
written to ``--records-dir`` as an ``allfives-record/1`` file. It listens on 127.0.0.1 unless
``--host`` says otherwise. Needs the ``web`` extra (FastAPI and uvicorn).

Trust: a client names agents only as built-in bots (``random``, ``greedy``, ``heuristic``,
``search`` with options, ``openspiel:ismcts|mcts`` when installed), ``human``, or ``ckpt:<name>``
for a shipped checkpoint or a model the operator named with ``--model NAME=PATH``; never a path,
never a format that can carry code (:mod:`allfives_agents.web.gate`). A game belongs to the
client that created it, bodies are capped while read, a bot's move has a time budget, and no
client can evict another's game in play (:mod:`allfives_agents.web.games`,
:mod:`allfives_agents.web.routes`); every bot move runs on a bounded pool of workers (one per
core, ``--bot-workers``) under a deadline (``--move-seconds``, default 3: a search stops
there and plays its best move so far; the move is cancelled when its game is deleted, evicted
or expires); slow or oversized headers and bodies are cut off
(:mod:`allfives_agents.web.hardening`; every bound is in docs/faults.md).

API (JSON; a refused request gets a 4xx status and ``{"error": "<one line>"}``):
``GET /api/meta`` (``agents``: exactly the ids a client may use); ``POST /api/games``
``{"agents": ["human", "greedy"], "preset", "players", "teams", "overrides": ["target=100"],
"seed"}`` answers the view plus ``token``, the game's secret; every request below on that game
carries it in the ``X-Game-Token`` header (403 without it): ``GET /api/games/{id}``;
``POST /api/games/{id}/act`` ``{"action": 17}``; ``POST /api/games/{id}/step`` (next bot move or
next hand; 503 "step again" when no worker is free or the move is not in a second past
``--move-seconds``); ``DELETE /api/games/{id}`` (the game goes, its move in progress stops);
``GET /api/status`` (counts: games, moves being computed, workers); ``GET /api/replays``;
``GET /api/replays/file?name=...&game=0``; ``POST /api/replay?game=0`` with a record file's
text as the body (at most 2 MiB).
"""

from __future__ import annotations

import argparse
import contextlib
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from allfives_agents.evaluation.threads import one_thread
from allfives_agents.planning.deadline import MAX_SECONDS, check_seconds
from allfives_agents.web.games import Limits

STATIC = Path(__file__).resolve().parent / "static"
INSTALL_HINT = "the web page needs the 'web' extra: pip install 'allfives[web]' (fastapi, uvicorn)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (default 127.0.0.1: this machine only)")
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    parser.add_argument("--records-dir", default="runs/games", metavar="DIR",
                        help="finished games are saved here (default runs/games/, under the "
                             "git-ignored runs/)")
    parser.add_argument("--replay-dir", default=None, metavar="DIR",
                        help="record files under DIR can be picked on the replay page")
    parser.add_argument("--model", action="append", default=[], metavar="NAME=PATH",
                        help="a checkpoint directory (card.json + policy.npz) that clients may "
                             "ask for as ckpt:NAME; repeat for more (the shipped ones are "
                             "always there)")
    parser.add_argument("--move-seconds", type=float, default=Limits.move_seconds,
                        metavar="S", help="every bot move's deadline: a search stops after S "
                                          "seconds and plays its best move so far, so a move "
                                          "costs at most about S seconds of one core "
                                          f"(default {Limits.move_seconds:g}, at most "
                                          f"{MAX_SECONDS:g})")
    parser.add_argument("--bot-workers", type=int, default=0, metavar="N",
                        help="bot moves computed at once, on N threads (default 0: one per "
                             "core this process may use; one network may use half of them); "
                             "a step that finds none free answers 503 'step again'")


def parse_models(entries: list[str]) -> dict[str, str]:
    """``["mine=runs/x/final"]`` -> ``{"mine": "runs/x/final"}`` (ValueError in one line)."""
    out: dict[str, str] = {}
    for entry in entries:
        name, sep, path = entry.partition("=")
        if not sep or not name.strip() or not path.strip():
            raise ValueError(f"--model {entry!r}: give NAME=PATH, e.g. "
                             "--model mine=runs/main_all_fives_2p/final")
        if name.strip() in out:
            raise ValueError(f"--model {name.strip()}: named twice")
        out[name.strip()] = path.strip()
    return out


def run(args: argparse.Namespace) -> int:
    try:
        import uvicorn
    except ImportError:
        raise ValueError(INSTALL_HINT) from None
    if not 0 < args.port < 65536:
        raise ValueError(f"--port {args.port}: ports are 1..65535")
    replay_dir = Path(args.replay_dir) if args.replay_dir else None
    if replay_dir is not None and not replay_dir.is_dir():
        raise ValueError(f"--replay-dir {replay_dir}: not a directory")
    check_seconds(args.move_seconds, "--move-seconds")
    if not 0 <= args.bot_workers <= 1024:
        raise ValueError(f"--bot-workers {args.bot_workers}: give 0 (one per core) to 1024")
    from allfives_agents.web.gate import check_models

    models = check_models(parse_models(args.model))
    with socket.socket(socket.AF_INET6 if ":" in args.host else socket.AF_INET) as probe:
        try:
            probe.bind((args.host, args.port))
        except OSError as exc:
            raise OSError(f"cannot listen on {args.host}:{args.port} ({exc.strerror}); "
                          "try another --port") from None
    app = create_app(Path(args.records_dir), replay_dir, models,
                     Limits(move_seconds=args.move_seconds, workers=args.bot_workers))
    shown = f"[{args.host}]" if ":" in args.host else args.host
    print(f"allfives serve: open http://{shown}:{args.port}/  (records go to "
          f"{args.records_dir}/; Ctrl-C stops)", flush=True)
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        print(f"  note: listening on {args.host}: anyone who can reach it can use the page",
              flush=True)
    one_thread()  # the bots' forward passes, one game per request thread: one BLAS thread
    _warm_in_background()
    from allfives_agents.web.hardening import uvicorn_options

    uvicorn.run(app, host=args.host, port=args.port, log_level="warning", **uvicorn_options())
    return 0


def _warm_in_background() -> None:
    """Compile the level ``strongest``'s search in a daemon thread (a no-op once numba has
    cached it): the first game against it then starts at once. A failure here (numba
    missing, say) only means the first game compiles it, or reports the failure itself."""
    def warm() -> None:
        try:
            from allfives_agents.planning.netsearch import warm_up

            warm_up()
        except Exception:  # noqa: BLE001, S110 (best effort; the game reports real failures)
            pass

    import threading

    threading.Thread(target=warm, name="allfives-warm-up", daemon=True).start()


def create_app(records_dir: Path, replay_dir: Path | None = None,
               models: dict[str, Path] | None = None, limits: Limits | None = None) -> Any:
    """The FastAPI app (see the module docstring for its routes). ``models``: the operator's
    checkpoints by name (checked by :func:`allfives_agents.web.gate.check_models`)."""
    try:
        from fastapi import FastAPI
    except ImportError:
        raise ValueError(INSTALL_HINT) from None
    from allfives_agents.web.gate import AgentGate
    from allfives_agents.web.routes import add_routes

    app = FastAPI(title="allfives", docs_url=None, redoc_url=None, openapi_url=None)
    add_routes(app, records_dir, replay_dir, STATIC, AgentGate(models), limits)
    return app


@contextlib.contextmanager
def serving(app: Any, host: str = "127.0.0.1") -> Iterator[str]:
    """Run ``app`` with uvicorn in a background thread on a free port; yields its base URL
    (tests, the screenshot script)."""
    import threading
    import time

    import uvicorn

    from allfives_agents.web.hardening import uvicorn_options

    sock = socket.socket()
    sock.bind((host, 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", **uvicorn_options()))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        while not server.started:
            if not thread.is_alive():
                raise RuntimeError("the test server did not start")
            time.sleep(0.02)
        yield f"http://{host}:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
