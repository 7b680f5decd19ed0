"""A real ``allfives serve`` process against hostile clients (issue 49): every hostile request
is answered 4xx, grows the server's peak memory (``VmHWM``) by at most 64 MiB, and writes no
traceback to its log; a flood of games from many loopback addresses leaves an earlier
client's game playable; slow clients are cut off within the documented deadlines; oversized
headers are refused. Traffic goes to 127.0.0.0/8 only, every loop is bounded.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")

from web_server import TOKEN, Server  # noqa: E402

from allfives_agents.web.hardening import HEADER_SECONDS, MAX_HEADERS  # noqa: E402
from allfives_agents.web.routes import BODY_SECONDS, MAX_FIELD, MAX_UPLOAD  # noqa: E402

GROWTH_KIB = 64 * 1024  # the most a hostile request may grow the server's peak memory


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("hostile")
    replays, outside = tmp / "replays", tmp / "outside.json"
    replays.mkdir()
    outside.write_text(json.dumps({"format": "secret-field-value"}))
    (replays / "link.json").symlink_to(outside)
    (replays / "sub").symlink_to(tmp)
    srv = Server(tmp, "--replay-dir", str(replays))
    srv.request("POST", "/api/games", {"agents": ["human", "search:net=all_fives_2p,batched=1"]})
    srv.upload(b"[[]]")  # warm up both paths
    yield srv
    log = srv.stop()
    assert "Traceback" not in log and len(log) < 20_000, log[-2000:]


def _refused(server: Server, status: Any, answer: Any, before: int, *words: str) -> str:
    grown = server.memory() - before
    assert 400 <= status < 500, (status, answer)
    error = answer["error"]
    assert isinstance(error, str) and "\n" not in error and len(error) <= 1000, error[:300]
    for word in words:
        assert word in error, (word, error)
    assert grown <= GROWTH_KIB, f"peak memory grew by {grown // 1024} MiB"
    return error


def _alias_chain(levels: int) -> str:
    """A YAML value of ``levels`` anchors, each nine aliases of the one before."""
    parts = ["&a0 [1,1,1,1,1,1,1,1,1]"]
    parts += [f"&a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, levels)]
    return "[" + ",".join(parts) + "]"


def test_yaml_alias_overrides_are_refused_cheaply(server: Server) -> None:
    for levels in (5, 8, 10):  # 200, 340 and 426 bytes
        before = server.memory()
        status, answer = server.request("POST", "/api/games", {
            "agents": ["human", "greedy"], "overrides": [f"target={_alias_chain(levels)}"]})
        _refused(server, status, answer, before)
    status, answer = server.request("POST", "/api/games", {
        "agents": ["human", "greedy"], "overrides": ["target=100"] * 33})
    _refused(server, status, answer, before, "at most 32")
    status, answer = server.request("POST", "/api/games", {
        "agents": ["human", "x" * (MAX_FIELD + 1)]})
    _refused(server, status, answer, before, f"at most {MAX_FIELD}")


def test_agent_options_are_bounded(server: Server) -> None:
    """A batched net search over its memory budget, and non-finite numbers."""
    for agent, word in (("search:net=all_fives_2p,batched=1,min_worlds=10000", "budget"),
                        ("ckpt:all_fives_2p,sample=true,temperature=.inf", "finite"),
                        ("heuristic:reply=.nan", "finite"), ("search:sims=1e400", "number")):
        before = server.memory()
        status, answer = server.request("POST", "/api/games", {"agents": ["human", agent]})
        _refused(server, status, answer, before, word)


def _nested(size: int) -> bytes:
    return b"[" + b"[]," * (size // 3) + b"[]]"


def test_hostile_uploads_are_refused_within_budget(server: Server) -> None:
    cases = [(_nested(int(15.3 * 2**20)), "MiB"),  # over the body cap: 413 unread
             (_nested(MAX_UPLOAD - 16), "values"),  # under it, but too many values
             (b"[" * 300_000, "nests"),
             (b"[" * 500_000, "values"),
             (b"[" + b"[0],[\"abcdefgh\"]," * 43_000 + b"[0]]", "object"),
             (b"[" * 900 + b"]" * 900, "nests"),
             (b'{"a": ' * 1500 + b"1" + b"}" * 1500, "nests")]
    for body, word in cases:
        before = server.memory()
        status, answer = server.upload(body)
        _refused(server, status, answer, before, word if len(body) < MAX_UPLOAD else "MiB")
    resident = server.memory("VmRSS")
    assert resident < 400 * 1024, f"{resident // 1024} MiB resident after the uploads"


def _record(**changes: Any) -> bytes:
    from allfives_agents.base import make_agent
    from allfives_env.game.match import play_game
    from allfives_env.game.rules import make_rules
    from allfives_env.records.record import game_record

    state = play_game(make_rules("five_up", target=40), [make_agent("greedy")] * 2, seed=3)
    record = game_record(state, 3, ["greedy", "greedy"])
    record.update(changes)
    return json.dumps(record).encode()


def test_record_fields_are_bounded(server: Server) -> None:
    status, _ = server.upload(_record())
    assert status == 200  # a valid record replays
    for changes, word in (({"seed": int("9" * 4000)}, "seed"),
                          ({"agents": ["a" * 2**20, "greedy"]}, "at most 1000")):
        before = server.memory()
        status, answer = server.upload(_record(**changes))
        _refused(server, status, answer, before, word)
    status, answer = server.upload(_record(agents=["a" * 5 * 2**20, "greedy"]))
    assert status == 413, (status, answer)


def test_the_replay_folder_serves_no_symlink(server: Server) -> None:
    status, answer = server.request("GET", "/api/replays")
    assert status == 200 and answer["files"] == [], answer
    for name in ("link.json", "sub/outside.json", "../outside.json"):
        status, answer = server.request("GET", f"/api/replays/file?name={name}")
        assert status == 404 and "secret" not in json.dumps(answer), (status, answer)


def _held_for(port: int, first: bytes, drip: bytes, limit: float) -> float:
    """Send ``first``, then ``drip`` every 0.5 s; the seconds until the server hangs up
    (``limit`` if it never does)."""
    start = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(first)
        sock.setblocking(False)
        while time.monotonic() - start < limit:
            try:
                sock.send(drip)
                if sock.recv(65536) == b"":
                    break
            except BlockingIOError:
                pass
            except OSError:
                break
            time.sleep(0.5)
    return time.monotonic() - start


@pytest.mark.slow
def test_slow_clients_are_cut_off(server: Server) -> None:
    """Headers dribbled, and a body dribbled (both well within the header size cap)."""
    import threading

    held: list[float] = []
    head = b"GET /api/meta HTTP/1.1\r\nHost: x\r\n"
    body_head = (b"POST /api/games HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 b"Content-Length: 60000\r\n\r\n")
    jobs = [(head, b"X: y\r\n", HEADER_SECONDS)] * 10 + [(b"", b"", HEADER_SECONDS)] * 3
    jobs += [(body_head, b" ", BODY_SECONDS)] * 3
    threads = [threading.Thread(target=lambda j=j: held.append(
        _held_for(server.port, j[0], j[1], 4 * j[2]) - j[2])) for j in jobs]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert len(held) == len(jobs), held
    assert -1 < min(held) and max(held) < 4, held  # cut off within 4 s after the deadline
    assert server.request("GET", "/api/meta")[0] == 200


def test_oversized_headers_are_refused(server: Server) -> None:
    before = server.memory()
    for headers in ({"X-Big": "a" * 100_000},
                    {f"X-{i}": "1" for i in range(10_000)},
                    {f"X-{i}": "1" for i in range(MAX_HEADERS + 1)}):
        status, _ = server.request("GET", "/api/meta", headers=headers)
        assert 400 <= status < 500 or status == 0, status
    assert server.memory() - before <= GROWTH_KIB
    assert server.request("GET", "/api/meta", headers={"X-Ok": "1"})[0] == 200


@pytest.mark.slow
def test_a_flood_from_many_addresses_leaves_a_game_playable(tmp_path: Path) -> None:
    srv = Server(tmp_path)
    try:
        status, game = srv.request("POST", "/api/games", {"agents": ["human", "greedy"],
                                                          "seed": 1})
        assert status == 200
        codes = [srv.request("POST", "/api/games", {"agents": ["greedy", "greedy"]},
                             source=f"127.0.0.{2 + k % 20}")[0] for k in range(400)]
        assert set(codes) <= {200, 429} and 0 < codes.count(200) <= 64, codes
        auth = {TOKEN: game["token"]}
        status, view = srv.request("GET", f"/api/games/{game['id']}", headers=auth)
        assert status == 200 and view["waiting"] in ("you", "bot"), view
        if view["waiting"] == "bot":
            status, view = srv.request("POST", f"/api/games/{game['id']}/step", {}, auth)
        status, view = srv.request("POST", f"/api/games/{game['id']}/act",
                                   {"action": view["legal"][0]["action"]}, auth)
        assert status == 200, view
    finally:
        log = srv.stop()
    assert "Traceback" not in log, log[-2000:]


def test_a_full_store_evicts_the_longest_idle_game_never_a_recent_one(tmp_path: Path) -> None:
    """Full of games in play: a new game evicts the one that made no move for the longest
    past the eviction window (polling it does not count); while every game moved within it,
    new games get 503."""
    from fastapi.testclient import TestClient

    from allfives_agents.web.games import Limits
    from allfives_agents.web.server import create_app

    app = create_app(tmp_path / "games", limits=Limits(max_games=3, evict_seconds=60))
    now = [1000.0]
    app.state.games.clock = lambda: now[0]
    clients = [TestClient(app, client=(f"10.0.{k}.1", 1)) for k in range(5)]
    games = []
    for c in clients[:3]:
        games.append(c.post("/api/games", json={"agents": ["human", "greedy"]}).json())
        now[0] += 10
    r = clients[3].post("/api/games", json={"agents": ["human", "greedy"]})
    assert r.status_code == 503 and "none without a move" in r.json()["error"], r.text
    now[0] += 45  # game 0 idle 75 s, game 1 65 s, game 2 55 s: game 0 moves, game 1 polled
    auth = {TOKEN: games[0]["token"]}
    if games[0]["waiting"] == "bot":
        assert clients[0].post(f"/api/games/{games[0]['id']}/step", headers=auth).is_success
    else:
        action = games[0]["legal"][0]["action"]
        assert clients[0].post(f"/api/games/{games[0]['id']}/act", json={"action": action},
                               headers=auth).is_success
    for _ in range(3):
        assert clients[1].get(f"/api/games/{games[1]['id']}",
                              headers={TOKEN: games[1]["token"]}).status_code == 200
    assert clients[3].post("/api/games", json={"agents": ["human", "greedy"]}).is_success
    status = [c.get(f"/api/games/{g['id']}", headers={TOKEN: g["token"]}).status_code
              for c, g in zip(clients, games)]
    assert status == [200, 404, 200], status  # game 1 went: the longest idle past 60 s
    r = clients[4].post("/api/games", json={"agents": ["human", "greedy"]})
    assert r.status_code == 503, r.text  # game 2 is idle 55 s only, game 0 just moved


def test_cheap_addresses_share_their_network_cap(tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from allfives_agents.web.games import Limits, address_of, network_of
    from allfives_agents.web.server import create_app

    assert network_of("192.0.2.7") == network_of("192.0.2.200") == "192.0.2.0/24"
    assert network_of("2001:db8::1") == network_of("2001:db8:0:ffff::1") == "2001:db8::/48"
    assert address_of("2001:db8::1") == address_of("2001:db8::ffff") == "2001:db8::/64"
    assert address_of("192.0.2.7") == "192.0.2.7"
    assert network_of("::ffff:192.0.2.9") == "192.0.2.0/24"
    app = create_app(tmp_path / "games", limits=Limits(per_address=2, per_network=5))
    codes = [TestClient(app, client=(f"192.0.2.{k}", 1)).post(
        "/api/games", json={"agents": ["greedy", "greedy"]}).status_code for k in range(8)]
    assert codes == [200] * 5 + [429] * 3, codes
    other = TestClient(app, client=("198.51.100.1", 1))
    assert other.post("/api/games", json={"agents": ["greedy", "greedy"]}).is_success


def test_agent_options_refuse_non_finite_numbers_everywhere() -> None:
    """The shared option parser (CLI and server alike), and the batched search's budget."""
    from allfives_agents.base import make_agent

    for agent in ("ckpt:checkpoints/all_fives_2p,temperature=.inf", "heuristic:reply=.nan",
                  "search:eps=-.inf", "greedy:x=.NaN"):
        with pytest.raises(ValueError, match="finite"):
            make_agent(agent)
    with pytest.raises(ValueError, match="MiB budget"):
        make_agent("search:net=checkpoints/all_fives_2p,batched=1,min_worlds=10000")
    make_agent("search:net=checkpoints/all_fives_2p,batched=1,min_worlds=1000")


def test_the_batched_search_scales_worlds_down_to_its_budget() -> None:
    import numpy as np

    from allfives_agents.batched.netsearch import within_budget

    worlds, counts = np.array([500, 0, 20]), np.array([30, 0, 2])
    assert within_budget(worlds, counts, 20_000).tolist() == [500, 0, 20]  # 15,040 fit
    scaled = within_budget(worlds, counts, 1_000)
    assert scaled.tolist() == [33, 0, 1] and int((scaled * counts).sum()) <= 1_000
