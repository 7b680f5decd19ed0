"""Issue 61, item 2: the work of a bot move is bounded in CPU time, not only in options.

Every bot move runs under a deadline (``--move-seconds``, default 3 s) on a bounded pool of
workers and stops when its game goes; admission holds when addresses are cheap (IPv6 /64 as
one address, /48 as one network, a reserve no set of busy networks can take, eviction by the
last move, not the last poll). The real ``allfives serve`` is measured through
``/proc/<pid>/stat``: the heaviest allowed agent id costs at most the deadline plus 1 s of
CPU per move, a game deleted mid-move leaves nothing computing, and a 5-minute soak keeps
memory flat and another client's moves fast. Traffic goes to 127.0.0.0/8 only.
"""

from __future__ import annotations

import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")

from fastapi.testclient import TestClient  # noqa: E402
from web_server import ALLFIVES, ROOT, TOKEN, Server  # noqa: E402

from allfives_agents import base  # noqa: E402
from allfives_agents.base import Agent, make_agent  # noqa: E402
from allfives_agents.planning.deadline import DEFAULT_SECONDS, move_deadline, out_of_time  # noqa: E402
from allfives_agents.web.games import Limits, address_of, network_of  # noqa: E402
from allfives_agents.web.server import create_app  # noqa: E402
from allfives_env.game.match import decide, new_game  # noqa: E402
from allfives_env.game.rules import make_rules  # noqa: E402
from allfives_env.game.view import SeatView  # noqa: E402

#: The heaviest agent id a web client may ask for: every work option at its bound, and every
#: per-rollout cost of the network variant on (issue 61).
HEAVIEST = ("search:net=all_fives_2p,sims=100000,min_worlds=10000,depth=20,value=1,prior=1,"
            "infer=1")
#: The heaviest batched one: the most worlds its memory budget allows.
HEAVIEST_BATCHED = "search:net=all_fives_2p,batched=1,sims=100000,min_worlds=7000,depth=20,value=1"


# ---------------------------------------------------------------------- the deadline itself
def _searching_state(seed: int = 3) -> Any:
    """A 2-seat game at its first decision with more than one legal move."""
    state = new_game(make_rules("all_fives"), seed, log=False)
    while len(state.legal_actions()) < 2:
        state.apply(state.legal_actions()[0])
    return state


def test_the_heaviest_search_stops_at_its_deadline_and_at_once_when_cancelled() -> None:
    agent = make_agent(HEAVIEST.replace("net=all_fives_2p", "net=checkpoints/all_fives_2p"), 1)
    agent.reset(seed=1)
    state = _searching_state()
    start, wall = time.thread_time(), time.monotonic()
    with move_deadline(0.5):
        action = decide(agent, state)
    spent, wall = time.thread_time() - start, time.monotonic() - wall
    assert action in state.legal_actions()
    assert spent < 1.5, spent  # at most the deadline and one world of CPU
    assert wall >= 0.5, wall  # it searched up to the deadline (its options ask for minutes)
    cancel = threading.Event()
    cancel.set()
    start = time.thread_time()
    with move_deadline(60, cancel):
        assert decide(agent, state) in state.legal_actions()
    assert time.thread_time() - start < 1.0  # one world, then it stopped


def test_without_a_deadline_nothing_is_cut_and_the_flag_refuses_non_finite_values() -> None:
    from allfives_agents.planning.deadline import check_seconds

    assert not out_of_time()
    with move_deadline(None):
        assert not out_of_time()
    with move_deadline(0.0):
        assert out_of_time()
    assert not out_of_time()
    for bad in (0, -1, float("inf"), float("nan"), 601):
        with pytest.raises(ValueError, match="--move-seconds"):
            check_seconds(bad)


@pytest.mark.slow
def test_the_batched_search_in_rounds_plays_the_same_moves() -> None:
    """Under a deadline the batched search deals its worlds in rounds (the same worlds from
    the same streams): while the deadline is not reached it plays what it plays without."""
    pytest.importorskip("numba")
    played = []
    for seconds in (None, 600.0):
        agent = make_agent("search:net=checkpoints/all_fives_2p,batched=1,sims=1500", 5)
        agent.reset(seed=5)
        state, moves = new_game(make_rules("all_fives"), 11, log=False), []
        while len(moves) < 4:
            with move_deadline(seconds):
                moves.append(decide(agent, state))
            state.apply(moves[-1])
        played.append(moves)
    assert played[0] == played[1]


# ---------------------------------------------------------------------- pool and cancellation
class _Patient(Agent):
    """Thinks until its move's deadline or cancellation, as a search does, then plays its
    first legal move; :attr:`stopped` counts the moves it gave up."""

    needs_obs = False
    stopped = 0

    def act(self, obs: Any, view: SeatView) -> int:
        end = time.monotonic() + 120
        while not out_of_time() and time.monotonic() < end:
            time.sleep(0.01)
        type(self).stopped += 1
        return int(view.legal[0])


@pytest.fixture
def patient(monkeypatch: pytest.MonkeyPatch) -> Iterator[type[_Patient]]:
    base._load_builtin()
    monkeypatch.setitem(base._REGISTRY, "web_patient", _Patient)
    _Patient.stopped = 0
    yield _Patient


def test_a_deleted_game_stops_its_move_and_frees_its_worker(tmp_path: Path,
                                                          patient: type[_Patient]) -> None:
    app = create_app(tmp_path / "games", limits=Limits(move_seconds=120, workers=2))
    store = app.state.games
    client = TestClient(app, client=("10.0.0.1", 1))
    view = client.post("/api/games", json={"agents": ["web_patient", "web_patient"]}).json()
    game = store.games[view["id"]]
    future = game.begin_step()
    assert store.pool.running == 1 and client.get("/api/status").json()["thinking"] == 1
    r = client.delete(f"/api/games/{view['id']}", headers={TOKEN: "wrong"})
    assert r.status_code == 403 and store.pool.running == 1
    r = client.delete(f"/api/games/{view['id']}", headers={TOKEN: view["token"]})
    assert r.status_code == 200, r.text
    future.result(timeout=5)  # stopped long before its 120 s deadline
    for _ in range(100):
        if store.pool.running == 0:
            break
        time.sleep(0.01)
    assert store.pool.running == 0 and patient.stopped == 1
    r = client.get(f"/api/games/{view['id']}", headers={TOKEN: view["token"]})
    assert r.status_code == 404


def test_an_expired_or_evicted_game_stops_its_move(tmp_path: Path,
                                                   patient: type[_Patient]) -> None:
    app = create_app(tmp_path / "games", limits=Limits(move_seconds=120, idle_seconds=60))
    store, now = app.state.games, [1000.0]
    store.clock = lambda: now[0]
    client = TestClient(app, client=("10.0.0.1", 1))
    view = client.post("/api/games", json={"agents": ["web_patient", "web_patient"]}).json()
    future = store.games[view["id"]].begin_step()
    now[0] += 61
    r = client.get(f"/api/games/{view['id']}", headers={TOKEN: view["token"]})
    assert r.status_code == 404
    future.result(timeout=5)
    assert patient.stopped == 1


def test_a_network_holds_at_most_its_share_of_the_workers(tmp_path: Path,
                                                          patient: type[_Patient]) -> None:
    """Steps past a network's share are answered 503 "step again" at once; another network
    still gets a worker; the status counts them."""
    app = create_app(tmp_path / "games", limits=Limits(move_seconds=120, workers=3,
                                                       network_workers=2))
    store = app.state.games
    mallory = TestClient(app, client=("10.0.0.1", 1))
    games = [mallory.post("/api/games", json={"agents": ["web_patient", "web_patient"]}).json()
             for _ in range(3)]
    futures = [store.games[g["id"]].begin_step() for g in games[:2]]
    r = mallory.post(f"/api/games/{games[2]['id']}/step", headers={TOKEN: games[2]["token"]})
    assert r.status_code == 503 and "your network (10.0.0.0/24)" in r.json()["error"], r.text
    assert "step again" in r.json()["error"] and r.headers["retry-after"] == "1"
    alice = TestClient(app, client=("10.9.0.1", 1))
    mine = alice.post("/api/games", json={"agents": ["web_patient", "web_patient"]}).json()
    futures.append(store.games[mine["id"]].begin_step())
    assert app.state.games.status()["thinking"] == 3
    late = TestClient(app, client=("10.8.0.1", 1))
    other = late.post("/api/games", json={"agents": ["web_patient", "web_patient"]}).json()
    r = late.post(f"/api/games/{other['id']}/step", headers={TOKEN: other["token"]})
    assert r.status_code == 503 and "all 3 of the server's bot workers" in r.json()["error"]
    for g in games[:2] + [mine]:
        store.delete(g["id"], g["token"])
    for f in futures:
        f.result(timeout=5)
    assert status_after(store, 0)


def status_after(store: Any, running: int, seconds: float = 5.0) -> bool:
    """Whether the pool gets to ``running`` moves within ``seconds``."""
    end = time.monotonic() + seconds
    while store.pool.running != running:
        if time.monotonic() > end:
            return False
        time.sleep(0.01)
    return True


# ---------------------------------------------------------------------- admission
def test_ipv6_addresses_count_by_64_and_networks_by_48(tmp_path: Path) -> None:
    assert address_of("2001:db8:0:1::5") == address_of("2001:db8:0:1:ffff::9")
    assert network_of("2001:db8:0:1::5") == network_of("2001:db8:0:ffff::1")
    app = create_app(tmp_path / "games", limits=Limits(per_address=2, per_network=5))
    body = {"agents": ["greedy", "greedy"]}
    codes = [TestClient(app, client=(f"2001:db8:0:1::{k:x}", 1)).post(
        "/api/games", json=body).status_code for k in range(1, 5)]
    assert codes == [200, 200, 429, 429], codes  # one /64: one address
    r = TestClient(app, client=("2001:db8:0:1::99", 1)).post("/api/games", json=body)
    assert "your address (2001:db8:0:1::/64)" in r.json()["error"]
    codes = [TestClient(app, client=(f"2001:db8:0:{k:x}::1", 1)).post(
        "/api/games", json=body).status_code for k in range(2, 8)]
    assert codes == [200, 200, 200, 429, 429, 429], codes  # one /48: 5 games in all
    r = TestClient(app, client=("2001:db8:0:99::1", 1)).post("/api/games", json=body)
    assert "your network (2001:db8::/48)" in r.json()["error"]
    assert TestClient(app, client=("2001:db8:1::1", 1)).post("/api/games", json=body).is_success


def test_busy_networks_cannot_take_the_reserve(tmp_path: Path) -> None:
    """Networks holding 4 or more unfinished games hold at most ``max_games - reserve``
    together; a network with fewer still gets in until the store itself is full."""
    limits = Limits(max_games=16, per_address=16, per_network=16, reserve=4)
    app = create_app(tmp_path / "games", limits=limits)
    body = {"agents": ["greedy", "greedy"]}

    def new(address: str) -> Any:
        return TestClient(app, client=(address, 1)).post("/api/games", json=body)

    assert [new(f"10.1.0.{k}").status_code for k in range(1, 13)] == [200] * 12
    assert [new(f"10.2.0.{k}").status_code for k in range(1, 4)] == [200] * 3
    r = new("10.2.0.9")  # a second busy network: 12 + 4 > 16 - 4
    assert r.status_code == 503 and "kept for other clients" in r.json()["error"], r.text
    assert new("10.1.0.99").status_code == 503  # the first one cannot grow either
    assert new("10.3.0.1").status_code == 200  # a network with fewer takes the reserve
    r = new("10.4.0.1")
    assert r.status_code == 503 and "none without a move" in r.json()["error"], r.text


def test_a_polled_game_that_makes_no_move_is_evicted(tmp_path: Path) -> None:
    """One request per game per window (a poll) no longer keeps a game in play from
    eviction: only a move does. Polling still keeps it from expiring."""
    app = create_app(tmp_path / "games", limits=Limits(max_games=4, evict_seconds=600))
    store, now = app.state.games, [1000.0]
    store.clock = lambda: now[0]
    body = {"agents": ["human", "greedy"], "seed": 1}
    held = []
    for k in range(4):
        client = TestClient(app, client=(f"10.{k}.0.1", 1))
        held.append((client, client.post("/api/games", json=body).json()))
    newcomer = TestClient(app, client=("10.99.0.1", 1))
    assert newcomer.post("/api/games", json=body).status_code == 503  # all moved just now
    for _ in range(7):  # 70 minutes, every game polled every 10 minutes
        now[0] += 599
        for client, game in held:
            r = client.get(f"/api/games/{game['id']}", headers={TOKEN: game["token"]})
            assert r.status_code == 200
    r = newcomer.post("/api/games", json=body)
    assert r.status_code == 200, r.text
    gone = [client.get(f"/api/games/{g['id']}", headers={TOKEN: g["token"]}).status_code
            for client, g in held]
    assert sorted(gone) == [200, 200, 200, 404], gone


# ---------------------------------------------------------------------- the real server
def _to_bot(srv: Server, game: Any) -> Any:
    """Play the person's moves (the first legal one) and deal hands until the bot is to
    move; the view, with the game's token."""
    auth = {TOKEN: game["token"]}
    path = f"/api/games/{game['id']}"
    view = game
    while view["waiting"] != "bot":
        if view["waiting"] == "you":
            status, view = srv.request("POST", path + "/act",
                                       {"action": view["legal"][0]["action"]}, auth)
        else:
            status, view = srv.request("POST", path + "/step", {}, auth)
        assert status == 200, view
    return {**view, "token": game["token"]}


def _bot_move_cpu(srv: Server, game: Any) -> tuple[float, float, Any]:
    """Let the bot of ``game`` move once, stepping again after 503: the server's CPU
    seconds and the wall seconds from the first step to the answer, and the new view."""
    game = _to_bot(srv, game)
    auth = {TOKEN: game["token"]}
    srv.settle(window=1.0)
    before, start = srv.cpu(), time.monotonic()
    for _ in range(100):
        status, after = srv.request("POST", f"/api/games/{game['id']}/step", {}, auth)
        if status != 503:
            break
    assert status == 200, after
    return srv.cpu() - before, time.monotonic() - start, {**after, "token": game["token"]}


@pytest.mark.slow
@pytest.mark.parametrize("agent", [HEAVIEST, HEAVIEST_BATCHED], ids=["scalar", "batched"])
def test_the_heaviest_agent_costs_at_most_the_deadline_per_move(tmp_path: Path,
                                                                agent: str) -> None:
    """The real server at its default deadline: each of the heaviest bot's moves costs at
    most the deadline plus 1 s of the server's CPU, and at least one of them searched until
    the deadline (without it a move takes minutes: issue 61 measured 176 CPU-s). The
    batched search's first move loads its compiled code (once per process) and is not
    counted."""
    if "batched" in agent:
        pytest.importorskip("numba")
    srv = Server(tmp_path)
    try:
        srv.settle()
        game = srv.new_game([agent, "human"], seed=3)
        if "batched" in agent:
            _, _, game = _bot_move_cpu(srv, game)
        costs, walls = [], []
        for _ in range(3):
            cpu, wall, game = _bot_move_cpu(srv, game)
            costs.append(cpu)
            walls.append(wall)
            if game["waiting"] == "over":
                break
    finally:
        log = srv.stop()
    print(f"{agent}: CPU s per move {costs}, wall s {walls}")
    assert max(costs) <= DEFAULT_SECONDS + 1.0, (costs, walls)
    assert max(walls) >= DEFAULT_SECONDS - 0.2, (costs, walls)  # searched until the deadline
    assert "Traceback" not in log, log[-2000:]


@pytest.mark.slow
def test_a_game_deleted_mid_move_leaves_nothing_computing(tmp_path: Path) -> None:
    """With a 60 s deadline, a heavy move is under way when its game is deleted: 5 s later
    the server reports no move computing and its CPU time no longer grows."""
    srv = Server(tmp_path, "--move-seconds", "60")
    try:
        srv.settle()
        game = _to_bot(srv, srv.new_game([HEAVIEST, "human"], seed=3))
        auth = {TOKEN: game["token"]}
        path = f"/api/games/{game['id']}"
        stepping = threading.Thread(target=srv.request, args=("POST", path + "/step", {}, auth),
                                    daemon=True)
        before = srv.cpu()
        stepping.start()
        time.sleep(3)
        assert srv.request("GET", "/api/status")[1]["thinking"] == 1
        assert srv.cpu() - before > 0.3  # the move is being computed
        status, _ = srv.request("DELETE", path, headers=auth)
        assert status == 200
        time.sleep(5)
        assert srv.request("GET", "/api/status")[1]["thinking"] == 0
        cpu = srv.cpu()
        time.sleep(3)
        assert srv.cpu() - cpu < 0.3, srv.cpu() - cpu  # nothing computes any more
        stepping.join(timeout=70)
    finally:
        log = srv.stop()
    assert "Traceback" not in log, log[-2000:]


# ---------------------------------------------------------------------- the soak
SOAK_SECONDS = 300.0
WARM_SECONDS = 60.0
GROWTH_MIB = 64.0


class _Soak:
    """The clients of the soak, each a thread looping until :attr:`stop` is set."""

    def __init__(self, srv: Server) -> None:
        self.srv, self.stop = srv, threading.Event()
        self.latencies: list[float] = []
        self.errors: list[str] = []
        self.codes: dict[int, int] = {}

    def count(self, status: int) -> None:
        self.codes[status] = self.codes.get(status, 0) + 1

    def heavy(self, game: Any) -> None:
        """One of the 16 heaviest games, stepped and played as fast as it is answered."""
        while not self.stop.is_set():
            auth = {TOKEN: game["token"]}
            path = f"/api/games/{game['id']}"
            if game.get("waiting") == "you":
                status, view = self.srv.request("POST", path + "/act",
                                                {"action": game["legal"][0]["action"]}, auth)
            elif game.get("waiting") == "over":
                status, view = self.srv.request("POST", "/api/games",
                                                {"agents": [HEAVIEST, "human"]})
                if status == 200:
                    game = view
                    continue
            else:
                status, view = self.srv.request("POST", path + "/step", {}, auth)
            self.count(status)
            if status == 200:
                game = {**view, "token": game["token"]}
            else:
                time.sleep(0.2)

    def flood(self) -> None:
        """New games from many addresses of the same /24, and plain GETs, 20 a second."""
        k = 0
        while not self.stop.is_set():
            k += 1
            source = f"127.0.0.{2 + k % 50}"
            status, _ = self.srv.request("POST", "/api/games",
                                         {"agents": ["greedy", "human"]}, source=source)
            self.count(status)
            self.count(self.srv.request("GET", "/api/meta", source=source)[0])
            time.sleep(0.1)

    def slow_client(self) -> None:
        """A request line sent one byte every 2 s, again whenever the server cuts it off."""
        while not self.stop.is_set():
            try:
                with socket.create_connection(("127.0.0.1", self.srv.port), timeout=5) as s:
                    for byte in b"POST /api/games HTTP/1.1\r\nHost: x\r\n":
                        if self.stop.wait(2):
                            return
                        s.sendall(bytes([byte]))
            except OSError:
                pass

    def player(self) -> None:
        """Another client, on another network: a person against heuristic, every request
        timed."""
        source = "127.0.1.2"
        game: Any = None
        while not self.stop.is_set():
            start = time.monotonic()
            if game is None or game["waiting"] == "over":
                status, view = self.srv.request("POST", "/api/games",
                                                {"agents": ["human", "heuristic"]},
                                                source=source)
                token = view["token"] if status == 200 else None
            else:
                path = f"/api/games/{game['id']}"
                auth = {TOKEN: game["token"]}
                if game["waiting"] == "you":
                    status, view = self.srv.request(
                        "POST", path + "/act", {"action": game["legal"][0]["action"]}, auth,
                        source=source)
                else:
                    status, view = self.srv.request("POST", path + "/step", {}, auth,
                                                    source=source)
                token = game["token"]
            self.latencies.append(time.monotonic() - start)
            if status != 200:
                self.errors.append(f"{status}: {view}")
                return
            game = {**view, "token": token}
            time.sleep(0.3)


@pytest.mark.slow
def test_a_five_minute_soak_keeps_memory_flat_and_another_client_fast(tmp_path: Path) -> None:
    """16 games of the heaviest agent stepped without pause, a flood of new games and GETs
    from 50 addresses of their /24, and 8 slow clients, for 5 minutes: the server's resident
    memory grows by less than 64 MiB after the first minute, another network's client playing
    heuristic gets 99% of its answers in under 1 s (every one within 4 s), and 5 s after the
    clients stop nothing is computing."""
    srv = Server(tmp_path)
    soak = _Soak(srv)
    try:
        srv.settle()
        games = [srv.new_game([HEAVIEST, "human"], seed=k) for k in range(16)]
        threads = [threading.Thread(target=soak.heavy, args=(g,), daemon=True) for g in games]
        threads += [threading.Thread(target=soak.flood, daemon=True)]
        threads += [threading.Thread(target=soak.slow_client, daemon=True) for _ in range(8)]
        threads += [threading.Thread(target=soak.player, daemon=True)]
        start = time.monotonic()
        for t in threads:
            t.start()
        rss: list[tuple[float, float]] = []
        while time.monotonic() - start < SOAK_SECONDS:
            rss.append((time.monotonic() - start, srv.rss_mib()))
            time.sleep(5)
        soak.stop.set()
        for t in threads:
            t.join(timeout=70)
        time.sleep(5)
        thinking = srv.request("GET", "/api/status")[1]["thinking"]
        cpu = srv.cpu()
        time.sleep(3)
        idle_cpu = srv.cpu() - cpu
    finally:
        log = srv.stop()
    warm = [m for t, m in rss if t >= WARM_SECONDS]
    growth = max(warm) - warm[0]
    print(f"soak: RSS MiB at {WARM_SECONDS:g} s {warm[0]:.0f}, max after {max(warm):.0f}, "
          f"end {warm[-1]:.0f}; player requests {len(soak.latencies)}, latency max "
          f"{max(soak.latencies):.3f} s; answers {soak.codes}")
    assert not soak.errors, soak.errors[:3]
    assert len(soak.latencies) > 100
    # Under 1 s for 99% of the answers and never past one move's deadline + 1 s: the slow set
    # runs beside other heavy tests (-n 2 on 2 cores), where one answer in hundreds can wait
    # on a starved core (3.2 s once in 900); alone, the slowest measured 0.55-0.77 s.
    ranked = sorted(soak.latencies)
    assert ranked[int(0.99 * (len(ranked) - 1))] < 1.0, ranked[-10:]
    assert ranked[-1] < 4.0, ranked[-5:]
    assert growth < GROWTH_MIB, rss
    assert soak.codes.get(200, 0) > 50 and soak.codes.get(503, 0) > 0, soak.codes
    assert thinking == 0 and idle_cpu < 0.3, (thinking, idle_cpu)
    assert "Traceback" not in log, log[-2000:]


# ---------------------------------------------------------------------- allfives play
def test_play_bots_move_under_the_deadline_and_the_flag_is_checked() -> None:
    from allfives_agents.planning.deadline import Timed

    agent = make_agent(HEAVIEST.replace("net=all_fives_2p", "net=checkpoints/all_fives_2p"), 1)
    timed = Timed(agent, 0.3)
    timed.reset(seed=1)  # every other attribute is the agent's own
    assert timed.name == agent.name
    state = _searching_state()
    start = time.thread_time()
    assert decide(timed, state) in state.legal_actions()
    assert time.thread_time() - start < 1.3
    for bad in ("0", "inf", "nan"):
        done = subprocess.run([str(ALLFIVES), "play", "--move-seconds", bad], cwd=ROOT,
                              capture_output=True, text=True, input="", timeout=120)
        assert done.returncode == 2, done
        assert "--move-seconds" in done.stderr and "Traceback" not in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr
