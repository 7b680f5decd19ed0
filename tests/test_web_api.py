"""``allfives serve``'s JSON API through FastAPI's TestClient: games kept on the server, bad
requests refused without a change, concurrent games, records saved and replayable. (The trust
boundary, limits and tokens: tests/test_web_trust.py.)"""

from __future__ import annotations

import json
import socket
import threading
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the 'web' extra (fastapi, uvicorn) is not installed")
from fastapi.testclient import TestClient  # noqa: E402

from allfives.cli import main  # noqa: E402
from allfives_agents.base import make_agent  # noqa: E402
from allfives_agents.levels import playable  # noqa: E402
from allfives_agents.web.server import create_app  # noqa: E402
from allfives_env.game.match import play_game  # noqa: E402
from allfives_env.game.rules import make_rules  # noqa: E402
from allfives_env.game.tiles import TILE_INDEX  # noqa: E402
from allfives_env.records.record import game_record, read_records, replay  # noqa: E402

STRONGEST_HERE = playable("search:net=best,batched=1")  # strongest (unbatched without numba)


class TokenClient(TestClient):
    """Sends each game's token (``X-Game-Token``) with the requests on that game, as the page
    does: the token comes back when the game is created."""

    tokens: dict[str, str]

    def request(self, method: str, url: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        parts = str(url).split("/")
        if len(parts) > 3 and parts[1:3] == ["api", "games"] and parts[3] in self.tokens:
            kwargs["headers"] = {"X-Game-Token": self.tokens[parts[3]],
                                 **(kwargs.get("headers") or {})}
        response = super().request(method, url, **kwargs)
        if str(url) == "/api/games" and response.status_code == 200:
            self.tokens[response.json()["id"]] = response.json()["token"]
        return response


@pytest.fixture
def client(tmp_path: Path) -> TestClient:
    (tmp_path / "replays").mkdir()
    out = TokenClient(create_app(tmp_path / "games", tmp_path / "replays"))
    out.tokens = {}
    return out


def _new(client: TestClient, agents: list[str], **extra: Any) -> dict[str, Any]:
    body = {"agents": agents, "overrides": ["target=40"], "seed": 7, **extra}
    r = client.post("/api/games", json=body)
    assert r.status_code == 200, r.text
    view = r.json()
    del view["token"]  # the other views never carry it
    return view


def _finish(client: TestClient, view: dict[str, Any]) -> dict[str, Any]:
    """Play to the end: the person takes the first legal move, bots are stepped (again
    after a 503 "step again", as the page does: a bot's first move may load its compiled
    search past the move deadline)."""
    for _ in range(2000):
        if view["waiting"] == "over":
            return view
        path = f"/api/games/{view['id']}/"
        if view["waiting"] == "you":
            r = client.post(path + "act", json={"action": view["legal"][0]["action"]})
        else:
            r = client.post(path + "step")
            if r.status_code == 503 and "step again" in r.text:
                continue
        assert r.status_code == 200, r.text
        view = r.json()
    raise AssertionError("the game did not end")


def test_meta_lists_presets_agents_and_pips(client: TestClient) -> None:
    meta = client.get("/api/meta").json()
    assert {"all_fives", "five_up"} <= set(meta["presets"])
    assert {"greedy", "random", "ckpt:all_fives_2p"} <= set(meta["agents"])
    [two] = [t for t in meta["levels"]["tables"]
             if (t["preset"], t["players"], t["teams"]) == ("all_fives", 2, False)]
    assert [lv["id"] for lv in two["levels"]] == [
        "level:beginner", "level:easy", "level:medium", "level:hard", "level:strongest"]
    assert two["levels"][-1]["agent"] == STRONGEST_HERE
    assert meta["levels"]["strongest"] == "strongest"
    assert meta["pips"]["5"] == [[-1, -1], [1, -1], [0, 0], [-1, 1], [1, 1]]
    assert client.get("/").status_code == 200
    for name in ("app.js", "draw.js", "style.css", "favicon.svg"):
        assert client.get(f"/static/{name}").status_code == 200


def test_the_person_sees_only_their_own_hand(client: TestClient) -> None:
    view = _new(client, ["greedy", "human"])
    for _ in range(200):
        assert set(view["hands"]) <= {"1"} or view["hand_over"]
        assert "boneyard_order" not in view and isinstance(view["boneyard"], int)
        for ev in view["events"]:
            if ev["type"] == "draw" and ev["seat"] != 1:
                assert "tile" not in ev  # another seat's draw is a count, never a tile
        if view["waiting"] == "over":
            break
        assert "seed" not in view  # the seed would give the deals away
        view = _finish_one(client, view)
    text = json.dumps(client.get(f"/api/games/{view['id']}").json())
    assert "deal" not in text


def _finish_one(client: TestClient, view: dict[str, Any]) -> dict[str, Any]:
    path = f"/api/games/{view['id']}/"
    if view["waiting"] == "you":
        return client.post(path + "act", json={"action": view["legal"][-1]["action"]}).json()
    return client.post(path + "step").json()


@pytest.mark.parametrize("body,status,words", [
    ({"agents": ["human", "nobody"]}, 400, "unknown agent 'nobody'"),
    ({"agents": ["human", "human"]}, 400, "one person per game"),
    ({"agents": ["human", "greedy"], "overrides": ["target=-1"]}, 400, "target"),
    ({"agents": ["human", "greedy"], "overrides": ["colour=red"]}, 400, "unknown rule option"),
    ({"agents": ["human", "greedy"], "preset": "chess"}, 400, "unknown preset"),
    ({"agents": ["human", "greedy"], "players": 3}, 400, "one per seat"),
    ({"agents": ["greedy"] * 3, "teams": True}, 400, "teams=true needs players=4"),
    ({"agents": ["human", "greedy", "ckpt:all_fives_2p"]}, 400, "trained for 2 seats"),
    ({"agents": ["human", "greedy"], "seed": -1}, 400, "seed=-1"),
    ({"agents": "greedy"}, 422, "agents"),
    ({"agents": ["human", "greedy"], "seed": "x"}, 422, "seed"),
    ({"agents": ["human", "greedy"], "cheat": 1}, 422, "cheat"),
    ({}, 422, "agents"),
])
def test_bad_new_games_are_refused(client: TestClient, body: dict, status: int,
                                   words: str) -> None:
    r = client.post("/api/games", json=body)
    assert r.status_code == status and words in r.json()["error"], r.text
    assert "\n" not in r.json()["error"]


def test_illegal_and_malformed_moves_change_nothing(client: TestClient) -> None:
    view = _new(client, ["human", "greedy"], seed=3)
    while view["waiting"] != "you":
        view = client.post(f"/api/games/{view['id']}/step").json()
    url = f"/api/games/{view['id']}"
    before = client.get(url).json()
    legal = {m["action"] for m in view["legal"]}
    illegal = next(a for a in range(140) if a not in legal)
    for body, status in (({"action": illegal}, 400), ({"action": 999}, 400),
                         ({"action": -1}, 400), ({"action": "3"}, 422), ({"action": 1.5}, 422),
                         ({"action": True}, 422), ({}, 422), ({"action": 1, "x": 2}, 422)):
        r = client.post(url + "/act", json=body)
        assert r.status_code == status, (body, r.text)
        assert r.json()["error"]
    r = client.post(url + "/act", content=b"{not json", headers={"content-type":
                                                                  "application/json"})
    assert r.status_code == 422 and "error" in r.json()
    assert client.post(url + "/step").status_code == 409  # the person's turn, not a bot's
    assert client.get(url).json() == before
    assert client.get("/api/games/nope").status_code == 404
    assert client.post("/api/games/nope/act", json={"action": 0}).status_code == 404


@pytest.mark.parametrize("bot,recorded", [("greedy", "greedy"),
                                          ("ckpt:all_fives_2p", "ckpt:all_fives_2p"),
                                          ("level:strongest", STRONGEST_HERE)])
def test_a_finished_game_is_saved_and_replays(client: TestClient, tmp_path: Path,
                                              bot: str, recorded: str) -> None:
    view = _finish(client, _new(client, ["human", bot]))
    assert view["game_over"] and view["saved"] and view["agents"] == ["human", recorded]
    [record] = list(read_records(view["saved"]))
    state = replay(record)
    assert state.scores == view["scores"] and record["agents"] == ["human", recorded]
    assert client.post(f"/api/games/{view['id']}/step").status_code == 409
    assert client.post(f"/api/games/{view['id']}/act", json={"action": 0}).status_code == 409
    assert len(list((tmp_path / "games").glob("*.jsonl"))) == 1


def test_concurrent_games_do_not_interfere(client: TestClient) -> None:
    """Four games in four threads, each replaying exactly as it would alone."""
    rules = make_rules("all_fives", players=2, target=40)
    results: dict[int, Any] = {}

    def one(seed: int) -> None:
        try:
            results[seed] = _finish(client, _new(client, ["greedy", "random"], seed=seed))
        except BaseException as exc:  # noqa: BLE001 (reported below)
            results[seed] = exc

    threads = [threading.Thread(target=one, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for seed, view in results.items():
        assert isinstance(view, dict), view
        [record] = list(read_records(view["saved"]))
        replay(record)
        alone = play_game(rules, [make_agent("greedy", 0), make_agent("random", 1)], seed)
        assert alone.scores == view["scores"]  # same game as play_game with the same seed


def test_watch_mode_shows_every_hand_and_refuses_actions(client: TestClient) -> None:
    view = _new(client, ["greedy", "random", "heuristic", "random"], players=4, teams=True)
    assert view["mode"] == "watch" and set(view["hands"]) == {"0", "1", "2", "3"}
    assert len(view["scores"]) == 2
    r = client.post(f"/api/games/{view['id']}/act", json={"action": 0})
    assert r.status_code == 409 and "bot" in r.json()["error"]


def test_replay_upload_and_replay_dir(client: TestClient, tmp_path: Path) -> None:
    rules = make_rules("five_up", target=40)
    records = [game_record(play_game(rules, [make_agent("greedy"), make_agent("random")], s),
                           s, ["greedy", "random"]) for s in (1, 2)]
    text = "\n".join(json.dumps(r) for r in records)
    (tmp_path / "replays" / "two.jsonl").write_text(text)
    r = client.post("/api/replay?game=1", content=text.encode())
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["count"] == 2 and out["final_scores"] == records[1]["final_scores"]
    plays = [f["move"] for f in out["frames"] if f["move"]]
    events = [e for h in records[1]["hands"] for e in h["events"] if e["type"] == "play"]
    assert [m["points"] for m in plays] == [e["points"] for e in events]
    assert out["frames"][-1]["game_over"] and out["frames"][-1]["scores"] == out["final_scores"]
    assert client.get("/api/replays").json()["files"] == ["two.jsonl"]
    r = client.get("/api/replays/file", params={"name": "two.jsonl", "game": 0})
    assert r.json()["final_scores"] == records[0]["final_scores"]


@pytest.mark.parametrize("content,words", [
    (b"{oops", "not valid JSON"),
    (b'{"format": "other"}', "not an allfives-record/1 record"),
    (b"\xff\xfe", "UTF-8"),
    (b"", "no records"),
])
def test_bad_uploads_get_one_clear_line(client: TestClient, content: bytes, words: str) -> None:
    r = client.post("/api/replay", content=content)
    assert r.status_code == 400 and words in r.json()["error"], r.text


def test_a_tampered_record_is_refused(client: TestClient) -> None:
    rules = make_rules("five_up", target=40)
    rec = game_record(play_game(rules, [make_agent("greedy"), make_agent("random")], 4), 4)
    rec["final_scores"][0] += 5
    r = client.post("/api/replay", content=json.dumps(rec).encode())
    assert r.status_code == 400 and "final_scores" in r.json()["error"]
    r = client.post("/api/replay?game=3", content=json.dumps(rec).encode())
    assert r.status_code == 400 and "games 0..0" in r.json()["error"]


def test_replay_dir_cannot_be_escaped(client: TestClient) -> None:
    for name in ("../games", "/etc/passwd", "../../x.json"):
        r = client.get("/api/replays/file", params={"name": name})
        assert r.status_code == 404


def test_layout_geometry_matches_the_picture_placements(client: TestClient) -> None:
    """The page's tiles are the rgb_array picture's tiles: same function, same numbers."""
    from allfives_env.rendering.render_image import _placements

    view = _new(client, ["greedy", "greedy"], seed=2)
    for _ in range(6):
        view = client.post(f"/api/games/{view['id']}/step").json()
    tiles = view["layout"]["tiles"]
    assert len(tiles) >= 3
    assert all(TILE_INDEX[(t["a"], t["b"])] == t["tile"] for t in tiles)
    state = client.app.state.games.games[view["id"]].state
    assert [(t["cx"], t["cy"], t["vertical"]) for t in tiles] == [
        (p[0], p[1], p[2]) for p in _placements(state)]


def test_serve_cli_errors_are_one_line(capsys: pytest.CaptureFixture[str],
                                       tmp_path: Path) -> None:
    assert main(["serve", "--port", "0"]) == 2
    assert "ports are 1..65535" in capsys.readouterr().err
    assert main(["serve", "--replay-dir", str(tmp_path / "none")]) == 2
    assert "not a directory" in capsys.readouterr().err
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert main(["serve", "--port", str(port)]) == 2
    assert f"cannot listen on 127.0.0.1:{port}" in capsys.readouterr().err


def test_a_broken_bot_is_one_line_and_changes_nothing(client: TestClient,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    view = _new(client, ["greedy", "greedy"])
    game = client.app.state.games.games[view["id"]]
    monkeypatch.setattr(game.bots[view["current"]], "act", lambda obs, v: 1 / 0)
    r = client.post(f"/api/games/{view['id']}/step")
    assert r.status_code == 500 and "ZeroDivisionError" in r.json()["error"]
    assert client.get(f"/api/games/{view['id']}").json() == view


def test_without_the_web_extra_serve_says_what_to_install(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "uvicorn", None)  # import uvicorn now fails
    assert main(["serve"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install 'allfives[web]'" in err


def test_bots_get_only_their_observation_and_seat_view(client: TestClient,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Bots are called as play_game calls them: act(obs, SeatView), never the GameState."""
    from allfives_agents import base
    from allfives_agents.base import Agent
    from allfives_env.game.engine import GameState
    from allfives_env.game.view import SeatView

    seen: list[tuple[Any, Any]] = []

    class Spy(Agent):
        def act(self, obs: Any, view: SeatView) -> int:
            seen.append((obs, view))
            return int(view.legal[0])

    base._load_builtin()
    monkeypatch.setitem(base._REGISTRY, "web_spy", Spy)

    _finish(client, _new(client, ["human", "web_spy"]))
    assert seen
    for obs, view in seen:
        assert set(obs) == {"observation", "action_mask"} and isinstance(view, SeatView)
        assert view.seat == view.current == 1
        assert not any(isinstance(v, GameState) for v in (*obs.values(), *vars(view).values()))


def test_end_spots_are_where_the_next_tile_lands() -> None:
    """For every legal move of a non-double on an arm, the page's target for that end is
    where the rgb_array layout then puts the tile (relative to the lead tile)."""
    from allfives_agents.web.views import end_spots
    from allfives_env.game.engine import GameState
    from allfives_env.game.tiles import END_NAMES, IS_DOUBLE, N_ENDS
    from allfives_env.rendering.render_image import layout_geometry

    def anchor(geo: dict, lead: int) -> tuple[float, float]:
        p = next(q for q in geo["tiles"] if q["tile"] == lead)
        return p["cx"], p["cy"]

    checked = 0
    for seed in range(4):
        state = GameState(make_rules("all_fives", players=4), seed)
        while not state.hand_over:
            geo = layout_geometry(state)
            if state.n_played:
                spots = end_spots(state, geo)
                ax, ay = anchor(geo, state.lead_tile)
                for a in state.legal_actions():
                    t = a // N_ENDS
                    if IS_DOUBLE[t]:
                        continue
                    after = state.copy(log=True)
                    after.apply(a)
                    new_geo = layout_geometry(after)
                    p = next(q for q in new_geo["tiles"] if q["tile"] == t)
                    bx, by = anchor(new_geo, state.lead_tile)
                    sx, sy = spots[END_NAMES[a % N_ENDS]]
                    assert (round(p["cx"] - bx, 6), round(p["cy"] - by, 6)) == \
                        (round(sx - ax, 6), round(sy - ay, 6))
                    checked += 1
            state.apply(state.legal_actions()[0])
    assert checked > 50


def test_the_page_loads_nothing_from_elsewhere() -> None:
    """No CDN: the only URL in the static files is the SVG namespace."""
    import re

    from allfives_agents.web.server import STATIC

    files = sorted(STATIC.iterdir())
    assert {f.name for f in files} >= {"index.html", "app.js", "draw.js", "style.css"}
    for f in files:
        urls = set(re.findall(r"(?:https?:)?//[\w.-]+\.\w+[^\s\"'`)]*", f.read_text()))
        assert urls <= {"http://www.w3.org/2000/svg"}, (f.name, urls)
