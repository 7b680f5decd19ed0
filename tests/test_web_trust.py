"""``allfives serve``'s trust boundary and bounds: what a web client may not do.

Each attack of issue 33 is reproduced with a harmless payload and shown refused: agent ids that
name a path or a code-carrying format (a crafted directory whose pickles would create a marker
file), bad option syntax, deep JSON nesting, an oversized upload streamed to a real server
process (its memory stays bounded), requests on another client's game, a flood of new games,
and a bot that takes too long to move.
"""

from __future__ import annotations

import importlib.util
import json
import pickle
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("fastapi", reason="the 'web' extra (fastapi, uvicorn) is not installed")
from fastapi.testclient import TestClient  # noqa: E402
from web_server import ROOT, TOKEN, Server, memory_kib, request  # noqa: E402

from allfives.cli import main  # noqa: E402
from allfives_agents import base  # noqa: E402
from allfives_agents.base import Agent  # noqa: E402
from allfives_agents.trained.models import shipped_models  # noqa: E402
from allfives_agents.web.games import Limits  # noqa: E402
from allfives_agents.web.gate import AgentGate, check_models  # noqa: E402
from allfives_agents.web.routes import MAX_BODY, MAX_UPLOAD  # noqa: E402
from allfives_agents.web.server import create_app, serving  # noqa: E402

#: Whether the ``openspiel`` extra is installed: the gate offers ``openspiel:`` ids only then.
OPENSPIEL = importlib.util.find_spec("pyspiel") is not None
from allfives_env.game.rules import make_rules  # noqa: E402
from allfives_env.game.view import SeatView  # noqa: E402


def _client(tmp_path: Path, address: str = "10.0.0.1", **app: Any) -> TestClient:
    return TestClient(create_app(tmp_path / "games", None, **app), client=(address, 40000))


def _state(client: TestClient) -> Any:
    """The app's state: ``games`` (the GameStore), ``gate`` (the AgentGate)."""
    app: Any = client.app
    return app.state


def _new(client: TestClient, agents: list[str], **extra: Any) -> dict[str, Any]:
    r = client.post("/api/games", json={"agents": agents, "overrides": ["target=40"],
                                        "seed": 7, **extra})
    assert r.status_code == 200, r.text
    return r.json()


def _one_line_error(r: Any, status: int, *words: str) -> str:
    assert r.status_code == status, (r.status_code, r.text)
    error = r.json()["error"]
    assert isinstance(error, str) and "\n" not in error and "Traceback" not in error, error
    for word in words:
        assert word in error, (word, error)
    return error


def _play_out(client: TestClient, view: dict[str, Any], token: str) -> dict[str, Any]:
    """Play a game to its end (the person plays its first legal move, bots are stepped)."""
    path, headers = f"/api/games/{view['id']}/", {TOKEN: token}
    for _ in range(2000):
        if view["waiting"] == "over":
            return view
        if view["waiting"] == "you":
            r = client.post(path + "act", json={"action": view["legal"][0]["action"]},
                            headers=headers)
        else:
            r = client.post(path + "step", headers=headers)
        assert r.status_code == 200, r.text
        view = r.json()
    raise AssertionError("the game did not end")


# ---------------------------------------------------------------------- 1. agent ids
class _Payload:
    """Unpickling this creates the marker file (and does nothing else)."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, tuple[str, str]]:
        return open, (str(self.marker), "w")


def _crafted_checkpoint(folder: Path, marker: Path) -> Path:
    """A directory that looks like an RLlib checkpoint and like a ckpt: checkpoint, whose
    pickles (RLlib module state, an object array in policy.npz) would create ``marker``."""
    folder.mkdir()
    card = {"format": "allfives-rllib/1", "algo": "PPO", "players": 2, "teams": False}
    (folder / "allfives_rllib.json").write_text(json.dumps(card))
    (folder / "card.json").write_text(json.dumps({**card, "format": "allfives-checkpoint/1"}))
    state = folder / "learner_group" / "learner" / "rl_module" / "main"
    state.mkdir(parents=True)
    (state / "module_state.pkl").write_bytes(pickle.dumps(_Payload(marker)))
    np.save(folder / "policy.npy", np.array([_Payload(marker)], dtype=object),
            allow_pickle=True)
    shutil.copy(folder / "policy.npy", folder / "policy.npz")
    return folder


def test_the_crafted_payload_is_live(tmp_path: Path) -> None:
    """The control: unpickling the crafted files does create the marker."""
    marker = tmp_path / "control_marker"
    folder = _crafted_checkpoint(tmp_path / "crafted", marker)
    path = folder / "learner_group" / "learner" / "rl_module" / "main" / "module_state.pkl"
    pickle.loads(path.read_bytes())
    assert marker.exists()


def test_paths_and_code_carrying_formats_are_refused(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    marker = tmp_path / "MARKER"
    crafted = _crafted_checkpoint(tmp_path / "crafted", marker)
    monkeypatch.setenv("ALLFIVES_TRUST_CHECKPOINT", "1")  # even with trust on in the server
    monkeypatch.chdir(tmp_path)  # ckpt:crafted would be a relative path from here
    client = _client(tmp_path)
    ids = [f"rllib:{crafted}", f"rllib:{crafted},module=main", f"ckpt:{crafted}", "ckpt:crafted",
           f"ckpt:{crafted}/card.json", "ckpt:../crafted", "ckpt:./crafted",
           "ckpt:/etc", "ckpt:~/x", f"search:net={crafted}", "search:net=crafted",
           f"{crafted}", "ensemble:greedy+random", "openspiel:/tmp/x"]
    for agent_id in ids:
        r = client.post("/api/games", json={"agents": ["human", agent_id]})
        _one_line_error(r, 400, "allowed are human", "ckpt:<name>")
    assert not marker.exists()
    assert _state(client).games.games == {}


def test_meta_lists_exactly_the_allowed_ids(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    for name in ("card.json", "policy.npz"):  # a copy of a shipped model, under another name
        shutil.copy(ROOT / "checkpoints" / "all_fives_2p" / name, mine / name)
    models = check_models({"house": mine})
    client = _client(tmp_path, models=models)
    listed = client.get("/api/meta").json()["agents"]
    base._load_builtin()
    names = [n for m in shipped_models() for n in (m.name, *m.formerly)]
    spiel = ["openspiel:ismcts", "openspiel:mcts"] if OPENSPIEL else []
    want = (sorted(base._REGISTRY) + spiel
            + [f"ckpt:{n}" for n in ["best", *names, "house"]])
    assert listed == want
    gate: AgentGate = _state(client).gate
    rules = make_rules("all_fives", players=2)
    for agent_id in listed:  # each one is made
        assert gate.make(agent_id, 0, rules).name == agent_id
    view = _new(client, ["human", "ckpt:house,temperature=0.5,sample=true"])
    assert view["agents"][1] == "ckpt:house,temperature=0.5,sample=true"
    r = client.post("/api/games", json={"agents": ["human", str(mine)]})
    assert "house" in _one_line_error(r, 400, "is refused")


@pytest.mark.parametrize("agent_id,words", [
    ("search:sims=[1", "search:sims=[1"),
    ("search:sims=1000000000000", "sims"),
    ("openspiel:ismcts,sims=1000000000", "sims" if OPENSPIEL else "a client may name only"),
    ("search:sims={a: 1}", "sims"),
    ("search:sims=oops", "must be a number"),
    ("search:sims", "key=value"),
    ("heuristic:reply=[1, 2]", "reply"),
    ("ckpt:all_fives_2p,temperature=[", "temperature"),
    ("ckpt:all_fives_2p,weights=x", "unknown option"),
    ("openspiel:ismcts,eval=/etc/passwd", "eval" if OPENSPIEL else "a client may name only"),
    ("openspiel:alphazero", "algorithms are" if OPENSPIEL else "a client may name only"),
    ("greedy:x=1", "greedy"),
    ("nobody", "unknown agent 'nobody'"),
])
def test_bad_agent_options_are_one_line_400s(tmp_path: Path, agent_id: str,
                                             words: str) -> None:
    r = _client(tmp_path).post("/api/games", json={"agents": ["human", agent_id]})
    _one_line_error(r, 400, words)


def test_serve_refuses_bad_models_in_one_line(capsys: pytest.CaptureFixture[str],
                                              tmp_path: Path) -> None:
    crafted = _crafted_checkpoint(tmp_path / "crafted", tmp_path / "MARKER")
    for model, words in (("noequals", "give NAME=PATH"),
                         ("all_fives_2p=checkpoints/all_fives_2p", "shipped model's name"),
                         ("a/b=checkpoints/all_fives_2p", "a model name is"),
                         (f"x={tmp_path / 'none'}", "not found"),
                         (f"x={crafted}", "observation layout")):
        assert main(["serve", "--model", model, "--port", "1"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and words in err, err
    assert main(["serve", "--move-seconds", "0"]) == 2
    assert "--move-seconds" in capsys.readouterr().err
    assert not (tmp_path / "MARKER").exists()


# ---------------------------------------------------------------------- 2-3. bodies
def test_an_upload_over_the_limit_is_413(tmp_path: Path) -> None:
    client = _client(tmp_path)
    r = client.post("/api/replay", content=b" " * (MAX_UPLOAD + 1))
    _one_line_error(r, 413, f"{MAX_UPLOAD // 2**20} MiB")

    def chunks() -> Iterator[bytes]:  # no Content-Length: refused while reading
        for _ in range(MAX_UPLOAD // 2**20 + 2):
            yield b" " * 2**20

    _one_line_error(client.post("/api/replay", content=chunks()), 413)
    r = client.post("/api/games", content=b"[" * (MAX_BODY + 1),
                    headers={"content-type": "application/json"})
    _one_line_error(r, 413, "KiB")
    r = client.post("/api/replay", content=b"x", headers={"content-length": "12x"})
    assert r.status_code in (400, 413)


@pytest.mark.parametrize("body", [
    b"[" * 100_000,
    b"[" * 5_000 + b"]" * 5_000,
    b'{"a":' * 50_000,
    b'{"format": "allfives-record/1"}\n' + b"[" * 100_000,
])
def test_deep_nesting_is_a_one_line_400(tmp_path: Path, body: bytes) -> None:
    r = _client(tmp_path).post("/api/replay", content=body)
    _one_line_error(r, 400, "nests too deeply")


def test_deep_nesting_inside_a_record_or_a_game_body(tmp_path: Path) -> None:
    client = _client(tmp_path)
    deep: Any = "x"
    for _ in range(900):  # parses, but must not be echoed back or recursed into
        deep = [deep]
    record = {"format": "allfives-record/1", "agents": deep, "hands": deep}
    r = client.post("/api/replay", content=json.dumps(record).encode())
    error = _one_line_error(r, 400)
    assert len(error) < 600
    r = client.post("/api/games", content=b"[" * 60_000,
                    headers={"content-type": "application/json"})
    assert 400 <= r.status_code < 500 and "\n" not in r.json()["error"]


@pytest.fixture
def server_process(tmp_path: Path) -> Iterator[Server]:
    """``allfives serve`` in its own process (tests/web_server.py)."""
    srv = Server(tmp_path)
    try:
        yield srv
    finally:
        srv.stop()


def _raw_post(port: int, head: bytes, chunk: int = 0, total: int = 0) -> tuple[int, bytes]:
    """Send a POST's head, then ``total`` bytes in chunks of ``chunk`` (chunked encoding)
    until the server stops reading; (bytes sent, the answer read back, maybe empty)."""
    sent = 0
    with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
        sock.sendall(head)
        piece = b"%x\r\n" % chunk + b"x" * chunk + b"\r\n"
        try:
            while sent < total:
                sock.sendall(piece)
                sent += chunk
            if total:
                sock.sendall(b"0\r\n\r\n")
        except (TimeoutError, BrokenPipeError, ConnectionResetError):
            pass
        answer = b""
        try:
            while data := sock.recv(65536):
                answer += data
        except (TimeoutError, ConnectionResetError):
            pass
    return sent, answer


def test_a_huge_streamed_upload_keeps_the_server_small(server_process: Server) -> None:
    """256 MiB streamed without Content-Length: the server answers 413 after reading
    MAX_UPLOAD and a chunk, its peak memory grows by about that much, not by 256 MiB; a
    Content-Length over the limit is refused before any of the body is read."""
    pid, port = server_process.pid, server_process.port
    head = (b"POST /api/replay HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\n"
            b"Connection: close\r\nTransfer-Encoding: chunked\r\n\r\n")
    _raw_post(port, head, 2**16, 2**16)  # warm up the upload path
    before = memory_kib(pid)
    total = 256 * 2**20
    sent, answer = _raw_post(port, head, 2**20, total)
    grown = (memory_kib(pid) - before) / 1024
    assert sent < total // 4, f"the server read {sent >> 20} MiB of a refused upload"
    assert grown < MAX_UPLOAD / 2**20 + 24, f"peak memory grew by {grown:.0f} MiB"
    assert not answer or answer.startswith(b"HTTP/1.1 413"), answer[:200]
    big = (b"POST /api/replay HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\n"
           b"Content-Length: 1073741824\r\n\r\n")
    _, answer = _raw_post(port, big)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    body = json.loads(answer.split(b"\r\n\r\n", 1)[1])
    assert "MiB" in body["error"] and "\n" not in body["error"]


def test_the_served_process_plays_and_counts_games_by_peer(
        server_process: Server) -> None:
    """The real ``allfives serve``: a fresh process makes a search bot (its module imported
    on first use), the token works, and X-Forwarded-For does not dodge the per-address cap."""
    port = server_process.port
    status, view = request(port, "POST", "/api/games", {"agents": ["search:sims=20", "human"]})
    assert status == 200, view
    status, _ = request(port, "POST", f"/api/games/{view['id']}/step")
    assert status == 403
    status, after = request(port, "GET", f"/api/games/{view['id']}",
                             headers={TOKEN: view["token"]})
    assert status == 200 and after["agents"] == ["search:sims=20", "human"]
    codes = [request(port, "POST", "/api/games", {"agents": ["greedy", "greedy"]},
                      {"X-Forwarded-For": f"192.0.2.{k}"})[0] for k in range(Limits().per_address)]
    assert codes == [200] * (Limits().per_address - 1) + [429]


def test_stalled_uploads_hold_no_more_than_their_slots(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Two uploads that stop sending hold the two upload slots: a third is answered 503 at
    once, and the stalled ones 408 when their time is up."""
    monkeypatch.setattr("allfives_agents.web.routes.UPLOAD_SECONDS", 4.0)
    head = (b"POST /api/replay HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n4\r\n[{}]\r\n")
    with serving(create_app(tmp_path / "games")) as url:
        port = int(url.rsplit(":", 1)[1])
        stalled = [socket.create_connection(("127.0.0.1", port), timeout=20) for _ in range(2)]
        try:
            for sock in stalled:
                sock.sendall(head)
            deadline = time.monotonic() + 3
            while True:  # once both are being read, a third is refused at once
                status, body = request(port, "POST", "/api/replay", [])
                if status == 503 or time.monotonic() > deadline:
                    break
                time.sleep(0.05)
            assert status == 503 and "uploads are being read" in body["error"], body
            for sock in stalled:
                assert sock.recv(65536).startswith(b"HTTP/1.1 408")
        finally:
            for sock in stalled:
                sock.close()


# ---------------------------------------------------------------------- 6. ownership
def test_a_game_answers_only_to_its_token(tmp_path: Path) -> None:
    client = _client(tmp_path)
    view = _new(client, ["human", "greedy"], seed=3)
    other = _new(client, ["human", "greedy"], seed=4)
    token, url = view.pop("token"), f"/api/games/{view['id']}"
    assert len(token) >= 32 and token != other["token"]
    for headers in ({}, {TOKEN: "wrong"}, {TOKEN: other["token"]}, {TOKEN: token[:-1]},
                    {TOKEN: b"\xc3\xa9" * 20}):
        _one_line_error(client.get(url, headers=headers), 403, "X-Game-Token")
        _one_line_error(client.post(url + "/step", headers=headers), 403)
        _one_line_error(client.post(url + "/act", json={"action": 0}, headers=headers), 403)
    mine = client.get(url, headers={TOKEN: token})
    assert mine.status_code == 200 and "token" not in mine.json()
    assert mine.json()["events"] == view["events"]  # nothing changed
    _play_out(client, mine.json(), token)


# ---------------------------------------------------------------------- 7. no eviction
def test_a_flood_from_one_address_leaves_another_clients_game_playable(tmp_path: Path) -> None:
    app = create_app(tmp_path / "games")
    alice = TestClient(app, client=("10.0.0.1", 1))
    mallory = TestClient(app, client=("10.0.0.2", 1))
    view = _new(alice, ["human", "greedy"])
    codes = [mallory.post("/api/games", json={"agents": ["greedy", "greedy"]}).status_code
             for _ in range(300)]
    per_address = Limits().per_address
    assert codes[:per_address] == [200] * per_address
    assert set(codes[per_address:]) == {429}
    r = mallory.post("/api/games", json={"agents": ["greedy", "greedy"]})
    _one_line_error(r, 429, "unfinished games from your address")
    assert r.headers["retry-after"]
    _play_out(alice, view, view["token"])


def test_a_full_server_refuses_new_games_rather_than_dropping_one(tmp_path: Path) -> None:
    app = create_app(tmp_path / "games", limits=Limits(max_games=4))
    alice = TestClient(app, client=("10.0.0.1", 1))
    view = _new(alice, ["human", "greedy"])
    others = [TestClient(app, client=(f"10.0.{k + 1}.1", 1)) for k in range(5)]
    codes = [c.post("/api/games", json={"agents": ["greedy", "greedy"]}).status_code
             for c in others]
    assert codes == [200, 200, 200, 503, 503]
    _one_line_error(others[4].post("/api/games", json={"agents": ["greedy", "greedy"]}), 503,
                    "try again later")
    done = _play_out(alice, view, view["token"])
    assert done["game_over"]  # a finished game may make room: the next one is taken
    assert others[4].post("/api/games", json={"agents": ["greedy", "greedy"]}).status_code == 200


def test_idle_games_expire(tmp_path: Path) -> None:
    app = create_app(tmp_path / "games", limits=Limits(per_address=1, idle_seconds=60))
    now = [1000.0]
    app.state.games.clock = lambda: now[0]
    client = TestClient(app, client=("10.0.0.1", 1))
    view = _new(client, ["human", "greedy"])
    now[0] += 59
    assert client.get(f"/api/games/{view['id']}", headers={TOKEN: view["token"]}).is_success
    _one_line_error(client.post("/api/games", json={"agents": ["human", "greedy"]}), 429)
    now[0] += 59  # touched by the last request: still here
    assert client.get(f"/api/games/{view['id']}", headers={TOKEN: view["token"]}).is_success
    now[0] += 61
    r = client.get(f"/api/games/{view['id']}", headers={TOKEN: view["token"]})
    _one_line_error(r, 404, "expired")
    _new(client, ["human", "greedy"])  # the address's slot is free again


# ---------------------------------------------------------------------- 5. move budget
class _Slow(Agent):
    """Thinks until the test lets it go (:attr:`go`), then plays its first legal move."""

    needs_obs = False
    go = threading.Event()
    gave_up = False

    def act(self, obs: Any, view: SeatView) -> int:
        if not type(self).go.wait(timeout=60):
            type(self).gave_up = True
        return int(view.legal[0])


@pytest.fixture
def slow(monkeypatch: pytest.MonkeyPatch) -> Iterator[type[_Slow]]:
    base._load_builtin()
    monkeypatch.setitem(base._REGISTRY, "web_slow", _Slow)
    _Slow.go, _Slow.gave_up = threading.Event(), False
    yield _Slow
    _Slow.go.set()


def test_a_slow_bot_answers_503_and_the_game_stays_as_it_was(tmp_path: Path,
                                                            slow: type[_Slow]) -> None:
    client = _client(tmp_path, limits=Limits(move_seconds=0.2))
    view = _new(client, ["web_slow", "web_slow"])
    url, headers = f"/api/games/{view['id']}", {TOKEN: view["token"]}
    for _ in range(2):  # the second step waits for the same move; no second computation
        r = client.post(url + "/step", headers=headers)
        _one_line_error(r, 503, "still thinking", "step again")
        assert r.headers["retry-after"] == "1"
        assert _state(client).games.pool.running == 1
    now = client.get(url, headers=headers).json()
    assert now["thinking"] and now["events"] == view["events"] and now["waiting"] == "bot"
    _one_line_error(client.post(url + "/act", json={"action": 0}, headers=headers), 409)
    slow.go.set()
    for _ in range(100):  # the move lands on a later step, once
        r = client.post(url + "/step", headers=headers)
        if r.status_code == 200:
            break
    after = r.json()
    assert r.status_code == 200 and not after["thinking"]
    assert len(after["events"]) > len(view["events"]) and not slow.gave_up


def test_a_slow_bot_never_blocks_other_games(tmp_path: Path, slow: type[_Slow]) -> None:
    """On a real uvicorn server (one event loop for every request): bots that ignore the move
    deadline (they cannot move until the test says so) hold at most their network's share of
    the bot workers; the other steps of that network are answered 503 "step again" at once
    (no thread waits for them), the stuck games answer GET, and a game from another network
    is played to the end on the workers left; had any of that waited on the stuck bots, they
    would have given up first (after 60 s)."""
    limits = Limits(move_seconds=0.5, per_address=64, workers=4, network_workers=2)
    app = create_app(tmp_path / "games", limits=limits)
    with serving(app) as url:
        port = int(url.rsplit(":", 1)[1])
        stuck = [request(port, "POST", "/api/games", {"agents": ["web_slow", "web_slow"]})[1]
                 for _ in range(41)]
        answers = [request(port, "POST", f"/api/games/{g['id']}/step", {}, {TOKEN: g["token"]})
                   for g in stuck]
        codes = [a[0] for a in answers]
        assert codes == [503] * 41, codes  # two still thinking, 39 with no worker for them
        assert sum("still thinking" in a[1]["error"] for a in answers) == 2, answers[:3]
        assert all("step again" in a[1]["error"] for a in answers)
        thinking = [request(port, "GET", f"/api/games/{g['id']}", None,
                             {TOKEN: g["token"]})[1]["thinking"] for g in stuck]
        assert sum(thinking) == 2
        assert request(port, "GET", "/api/status")[1]["thinking"] == 2
        for seed in (1, 2):
            _, view = request(port, "POST", "/api/games",
                               {"agents": ["greedy", "human"], "seed": seed,
                                "overrides": ["target=40"]}, source="127.0.1.2")
            token = view["token"]
            while view["waiting"] != "over":
                path = f"/api/games/{view['id']}/"
                if view["waiting"] == "you":
                    status, view = request(port, "POST", path + "act",
                                            {"action": view["legal"][0]["action"]}, {TOKEN: token},
                                            source="127.0.1.2")
                else:
                    status, view = request(port, "POST", path + "step", {}, {TOKEN: token},
                                            source="127.0.1.2")
                assert status == 200, view
        slow.go.set()
    assert not slow.gave_up


def test_a_failing_bot_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    client = _client(tmp_path)
    view = _new(client, ["greedy", "greedy"])
    game = _state(client).games.games[view["id"]]
    monkeypatch.setattr(game.bots[view["current"]], "act", lambda obs, v: 1 / 0)
    r = client.post(f"/api/games/{view['id']}/step", headers={TOKEN: view["token"]})
    _one_line_error(r, 500, "ZeroDivisionError")


# ---------------------------------------------------------------------- 8. one line always
def test_no_request_gets_a_traceback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = create_app(tmp_path / "games")
    client = TestClient(app, raise_server_exceptions=False)
    monkeypatch.setattr("allfives_agents.web.routes.list_files",
                        lambda folder: (_ for _ in ()).throw(RuntimeError("disk on fire\nx")))
    r = client.get("/api/replays")
    error = _one_line_error(r, 500, "internal error (RuntimeError)")
    assert "disk on fire" not in error
    _one_line_error(client.get("/api/nothing"), 404)
    _one_line_error(client.delete("/api/games"), 405)
    _one_line_error(client.post("/api/games", content=b"{", headers={
        "content-type": "application/json"}), 422)
    _one_line_error(client.get("/api/replays/file", params={"name": "x", "game": "y"}), 422)


def test_the_serve_help_names_the_new_flags(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    out = capsys.readouterr().out
    assert "--model NAME=PATH" in out and "--move-seconds" in out
