"""What keeps ``allfives serve`` up against slow or hostile clients (docs/faults.md).

* :class:`DeadlineH11` (uvicorn's h11 protocol): a connection must send a request's whole
  header block within :data:`HEADER_SECONDS` of opening or of its last answer, else it is
  closed; an incomplete header block over :data:`MAX_HEADER_BYTES` is refused by h11 (400).
* :class:`HeaderLimit` (ASGI): more than :data:`MAX_HEADERS` header lines, or more than
  :data:`MAX_HEADER_BYTES` of them, is answered 431 in one line.
* :class:`OneLineErrors` (ASGI): anything unexpected is a 500 with one line and a request id;
  the log gets that id and the error's type in one line, never a traceback.
* :func:`uvicorn_options`: the rest of the limits (concurrency, keep-alive).

A request's body has its own deadline and size cap
(:class:`allfives_agents.web.routes.BodyLimit`).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from typing import Any

import h11
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

HEADER_SECONDS = 10.0  # a request's header block must arrive within this
MAX_HEADER_BYTES = 16 * 1024  # header names and values together
MAX_HEADERS = 64  # header lines per request
MAX_CONNECTIONS = 256  # connections and requests at once (503 above)
KEEP_ALIVE_SECONDS = 5  # an idle connection after an answer is closed after this
LOG = logging.getLogger("allfives.serve")


class DeadlineH11(H11Protocol):
    """uvicorn's h11 protocol with a header-read deadline (see the module docstring)."""

    _header_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
        super().connection_lost(exc)

    def _arm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
        self._header_timer = self.loop.call_later(HEADER_SECONDS, self._deadline)

    def _deadline(self) -> None:
        """Close the connection unless a request on it is being answered."""
        serving = self.cycle is not None and not self.cycle.response_complete
        if not serving and not self.transport.is_closing():
            if self.conn.our_state not in (h11.ERROR, h11.CLOSED):
                try:
                    self.conn.send(h11.ConnectionClosed())
                except h11.LocalProtocolError:
                    pass
            self.transport.close()


def uvicorn_options() -> dict[str, Any]:
    """The keyword arguments of ``uvicorn.Config`` that bound a client's connections."""
    return {"http": DeadlineH11, "h11_max_incomplete_event_size": MAX_HEADER_BYTES,
            "limit_concurrency": MAX_CONNECTIONS, "timeout_keep_alive": KEEP_ALIVE_SECONDS,
            "proxy_headers": False}  # the client's address is the TCP peer, never a header


class HeaderLimit:
    """ASGI middleware: too many header lines or bytes is a 431 in one line."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = scope.get("headers", ()) if scope["type"] == "http" else ()
        size = sum(len(k) + len(v) for k, v in headers)
        if len(headers) > MAX_HEADERS or size > MAX_HEADER_BYTES:
            await _answer(send, 431, f"the request has {len(headers)} headers of {size} bytes; "
                                     f"this server reads at most {MAX_HEADERS} headers and "
                                     f"{MAX_HEADER_BYTES // 1024} KiB of them")
            return
        await self.app(scope, receive, send)


class OneLineErrors:
    """ASGI middleware: an exception no handler took is a 500 with one line naming a request
    id, logged as one line with that id (never a traceback)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def watched_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, watched_send)
        except Exception as exc:  # noqa: BLE001 (one line, never a traceback)
            rid = secrets.token_hex(4)
            LOG.error("request %s %s %s failed: %s", rid, scope.get("method", ""),
                      str(scope.get("path", ""))[:80], type(exc).__name__)
            if not started:
                await _answer(send, 500, f"internal error ({type(exc).__name__}) in request "
                                         f"{rid}; the request changed nothing it could "
                                         "not finish")


async def _answer(send: Send, status: int, line: str) -> None:
    import json

    body = json.dumps({"error": line}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode()),
                            (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})
