"""``allfives serve``: a web page to play bots, watch them play each other, and replay records.

    allfives serve                         # then open http://127.0.0.1:8000/
    allfives serve --port 8080 --replay-dir runs/ --records-dir games/

The games live in the server (the page sends only the action it chose); every finished game is
written to ``--records-dir`` as an ``allfives-record/1`` file. It listens on 127.0.0.1 unless
``--host`` says otherwise. Needs the ``web`` extra (FastAPI and uvicorn).

API (JSON; a refused request gets a 4xx status and ``{"error": "<one line>"}``):
``GET /api/meta``; ``POST /api/games`` ``{"agents": ["human", "greedy"], "preset", "players",
"teams", "overrides": ["target=100"], "seed"}``; ``GET /api/games/{id}``;
``POST /api/games/{id}/act`` ``{"action": 17}``; ``POST /api/games/{id}/step`` (next bot move or
next hand); ``GET /api/replays``; ``GET /api/replays/file?name=...&game=0``;
``POST /api/replay?game=0`` with a record file's text as the body.
"""

from __future__ import annotations

import argparse
import contextlib
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

STATIC = Path(__file__).resolve().parent / "static"
INSTALL_HINT = "the web page needs the 'web' extra: pip install 'allfives[web]' (fastapi, uvicorn)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (default 127.0.0.1: this machine only)")
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    parser.add_argument("--records-dir", default="games", metavar="DIR",
                        help="finished games are saved here (default games/)")
    parser.add_argument("--replay-dir", default=None, metavar="DIR",
                        help="record files under DIR can be picked on the replay page")


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
    with socket.socket(socket.AF_INET6 if ":" in args.host else socket.AF_INET) as probe:
        try:
            probe.bind((args.host, args.port))
        except OSError as exc:
            raise OSError(f"cannot listen on {args.host}:{args.port} ({exc.strerror}); "
                          "try another --port") from None
    app = create_app(Path(args.records_dir), replay_dir)
    shown = f"[{args.host}]" if ":" in args.host else args.host
    print(f"allfives serve: open http://{shown}:{args.port}/  (records go to "
          f"{args.records_dir}/; Ctrl-C stops)", flush=True)
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        print(f"  note: listening on {args.host}: anyone who can reach it can use the page",
              flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0


def create_app(records_dir: Path, replay_dir: Path | None = None) -> Any:
    """The FastAPI app (see the module docstring for its routes)."""
    try:
        from fastapi import FastAPI
    except ImportError:
        raise ValueError(INSTALL_HINT) from None
    from agents.web.routes import add_routes

    app = FastAPI(title="allfives", docs_url=None, redoc_url=None, openapi_url=None)
    add_routes(app, records_dir, replay_dir, STATIC)
    return app


@contextlib.contextmanager
def serving(app: Any, host: str = "127.0.0.1") -> Iterator[str]:
    """Run ``app`` with uvicorn in a background thread on a free port; yields its base URL
    (tests, the screenshot script)."""
    import threading
    import time

    import uvicorn

    sock = socket.socket()
    sock.bind((host, 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
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
