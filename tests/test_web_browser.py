"""``allfives serve`` in a real browser: Debian's headless Chromium driven by Playwright.

A whole game against ``greedy`` played by clicking a tile and then an end, the level picker
(strongest by default, the levels at each table, custom ids), bots watched to the end, a
recorded game replayed move by move, a reload that keeps the game (the page keeps its token),
and a bot slower than the server's move budget (the page asks again). CI installs ``chromium``
(see ``.ci/run``); without ``/usr/bin/chromium`` these tests skip. Playwright never downloads
a browser here.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
if not CHROMIUM.exists():
    pytest.skip("no /usr/bin/chromium (apt-get install chromium; .ci/run installs it)",
                allow_module_level=True)
from playwright import sync_api  # noqa: E402  (the dev extra; CI installs it)

pytestmark = pytest.mark.slow  # a real browser: the marked set (.ci/run runs it)

from allfives_agents import base  # noqa: E402
from allfives_agents.base import Agent, make_agent  # noqa: E402
from allfives_agents.web.games import Limits  # noqa: E402
from allfives_agents.web.server import create_app, serving  # noqa: E402
from allfives_env.game.match import play_game  # noqa: E402
from allfives_env.game.rules import make_rules  # noqa: E402
from allfives_env.records.record import game_record, read_records, replay, write_records  # noqa: E402

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-dev-shm-usage"]  # small /dev/shm in CI containers
READY = "() => document.body.dataset.ready === 'yes'"  # app.js: init() has finished
SETTLED = ("() => ['you', 'next_hand', 'over'].includes("
           "document.getElementById('table').dataset.waiting)")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield b
        b.close()


@pytest.fixture
def site(tmp_path: Path) -> Iterator[tuple[str, Path, Path]]:
    records, replays = tmp_path / "games", tmp_path / "replays"
    replays.mkdir()
    rules = make_rules("five_up", target=40)
    state = play_game(rules, [make_agent("greedy"), make_agent("random")], seed=5)
    write_records(replays / "sample.jsonl", [game_record(state, 5, ["greedy", "random"])])
    with serving(create_app(records, replays)) as url:
        yield url, records, replays


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    pg = browser.new_page(viewport={"width": 1200, "height": 900})
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    yield pg
    pg.close()
    assert not errors, f"JavaScript errors: {errors}"


def _start(page: Any, url: str, mode: str, seats: list[str], target: int) -> None:
    page.goto(f"{url}/#{mode}")
    page.wait_for_function(READY)
    page.wait_for_selector("#seat-1")
    for s, agent in enumerate(seats):
        page.fill(f"#seat-{s}", agent)
    page.fill("#overrides", f"target={target}")
    page.fill("#seed", "11")
    page.click("#start")
    page.wait_for_selector("#speed")
    page.fill("#speed", "2000")  # bots as fast as possible


def test_a_whole_game_against_greedy_by_clicks(page: Any, site: tuple[str, Path, Path]) -> None:
    url, records, _ = site
    _start(page, url, "play", ["human", "greedy"], target=120)
    moves, hands = 0, 1
    for _ in range(400):
        page.wait_for_function(SETTLED)
        waiting = page.get_attribute("#table", "data-waiting")
        if waiting == "over":
            break
        version = page.get_attribute("#table", "data-version")
        if waiting == "next_hand":
            assert "End-of-hand points" in page.inner_text("#banner")
            page.click("#next-hand")
            hands += 1
        else:
            assert page.locator("#board .target").count() == 0
            page.locator("#hand .tile.legal").first.click()
            page.locator("#board .target").first.click()  # a tile, then an end
            moves += 1
        page.wait_for_function("v => document.getElementById('table').dataset.version !== v",
                               arg=version)
    assert page.get_attribute("#table", "data-waiting") == "over"
    banner = page.inner_text("#banner")
    assert "Game over" in banner and "Record saved to" in banner
    [saved] = list(records.glob("web-*.jsonl"))
    [record] = list(read_records(saved))
    final = replay(record)  # the saved record replays exactly
    assert record["agents"] == ["human", "greedy"] and moves > 0
    assert hands == len(record["hands"]) >= 2  # dealt again after each hand, to the end
    assert f"seat 0 (you) {final.scores[0]}, seat 1 (greedy) {final.scores[1]}" in banner
    assert max(final.scores) >= 120


def _seats(page: Any) -> list[str]:
    return page.eval_on_selector_all("#seats input", "els => els.map((e) => e.value)")


def test_levels_choose_the_opponents_strongest_first(page: Any,
                                                     site: tuple[str, Path, Path]) -> None:
    url, _, _ = site
    page.goto(f"{url}/#play")
    page.wait_for_function(READY)
    page.wait_for_selector("#seat-1")
    assert page.input_value("#level") == "strongest"  # the default: the strongest level
    assert _seats(page) == ["human", "level:strongest"]
    note = page.inner_text("#level-note")
    assert "The strongest level" in note and "all_fives_2p" in note
    assert "Elo over heuristic" in note and "against hard (search)" in note
    options = page.eval_on_selector_all("#level option", "els => els.map((e) => e.value)")
    assert options == ["beginner", "easy", "medium", "hard", "strongest", "custom"]
    page.select_option("#players", "4")  # 4 seats without teams: no shipped model plays
    assert page.input_value("#level") == "hard"
    assert page.locator("#level option[value=strongest]").is_disabled()
    assert "(the strongest here)" in page.inner_text("#level option[value=hard]")
    assert _seats(page) == ["human"] + ["level:hard"] * 3
    assert "no shipped model plays 4 seats" in page.inner_text("#level-note")
    page.check("#teams")  # in teams the model plays again, and medium is search there
    assert page.input_value("#level") == "strongest"
    assert "medium: search" in page.inner_text("#level option[value=medium]")
    page.select_option("#players", "2")
    page.select_option("#level", "easy")  # picked: kept, and fills every seat but yours
    assert _seats(page) == ["human", "level:easy"]
    assert "greedy" in page.inner_text("#level-note")
    page.fill("#seat-1", "random")  # an id typed by hand: custom
    assert page.input_value("#level") == "custom" and _seats(page) == ["human", "random"]
    page.select_option("#level", "easy")
    page.fill("#overrides", "target=30")
    page.click("#start")
    page.wait_for_function(SETTLED)
    assert "greedy" in page.inner_text("#seat-list")  # level:easy plays as greedy


def test_watching_bots_with_pause_and_step(page: Any, site: tuple[str, Path, Path]) -> None:
    url, records, _ = site
    _start(page, url, "watch", ["greedy", "random"], target=30)
    page.click("#pause")
    page.wait_for_function("() => document.getElementById('pause').textContent === 'Resume'")
    before = page.inner_text("#log")
    page.click("#step")
    page.wait_for_function(f"() => document.getElementById('log').innerText !== "
                           f"{json.dumps(before)}")
    assert page.locator("#seat-list svg .tile").count() > 0  # watching shows every hand
    page.click("#pause")  # resume
    page.wait_for_function("() => document.getElementById('table').dataset.waiting === 'over'",
                           timeout=60_000)
    assert "Game over" in page.inner_text("#banner")
    assert len(list(records.glob("web-*.jsonl"))) == 1


def test_replay_an_uploaded_record_move_by_move(page: Any, site: tuple[str, Path, Path]) -> None:
    url, _, replays = site
    [record] = list(read_records(replays / "sample.jsonl"))
    page.goto(f"{url}/#replay")
    page.wait_for_function(READY)  # not before the page has set itself up
    page.set_input_files("#upload", str(replays / "sample.jsonl"))
    page.wait_for_selector("#move-text")
    assert "the deal" in page.inner_text("#move-text")
    page.click("#next")
    assert "leads" in page.inner_text("#move-text")
    assert page.locator("#board .tile").count() == 1
    page.click("#next")
    assert page.locator("#board .tile").count() == 2
    page.click("#prev")
    assert page.locator("#board .tile").count() == 1
    page.click("#last")
    banner = page.inner_text("#banner")
    scores = record["final_scores"]
    assert "Game over" in banner
    assert f"seat 0 (greedy) {scores[0]}, seat 1 (random) {scores[1]}" in banner
    page.select_option("#file-pick", "sample.jsonl")  # the same game from --replay-dir
    page.wait_for_function("() => document.getElementById('move-text').innerText"
                           ".includes('the deal')")


SLOW_META = """(() => {  // /api/meta answers 1.5 s late, as on a loaded machine
  const fetch0 = window.fetch;
  window.fetch = (url, opts) => String(url).includes("/api/meta")
    ? new Promise((r) => setTimeout(r, 1500)).then(() => fetch0(url, opts))
    : fetch0(url, opts);
})();"""


def test_an_upload_before_the_page_has_set_itself_up_is_not_lost(
        page: Any, site: tuple[str, Path, Path]) -> None:
    """app.js listens before it asks the server for its lists; CI once lost an upload here."""
    url, _, replays = site
    page.add_init_script(SLOW_META)
    page.goto(f"{url}/#replay")
    page.set_input_files("#upload", str(replays / "sample.jsonl"))  # while /api/meta waits
    page.wait_for_function(READY)
    page.wait_for_function("() => document.getElementById('move-text')?.innerText"
                           ".includes('the deal')", timeout=10_000)


def test_a_reload_continues_the_game_with_its_token(page: Any,
                                                   site: tuple[str, Path, Path]) -> None:
    url, _, _ = site
    _start(page, url, "play", ["human", "greedy"], target=60)
    page.wait_for_function(SETTLED)
    stored = json.loads(page.evaluate("() => sessionStorage.getItem('allfives-game-play')"))
    assert set(stored) == {"id", "token"} and len(stored["token"]) >= 32
    log = page.inner_text("#log")
    page.reload()
    page.wait_for_function(READY)
    page.wait_for_function(SETTLED)
    assert page.inner_text("#log") == log  # the same game, fetched with its token
    assert page.locator("#setup").is_hidden()


class _Slow(Agent):
    """Greedy's first legal move, after the test lets it go."""

    needs_obs = False
    go: Any = None

    def act(self, obs: Any, view: Any) -> int:
        type(self).go.wait(timeout=60)
        return int(view.legal[0])


def test_a_bot_over_the_move_budget_is_asked_again(page: Any, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    base._load_builtin()
    monkeypatch.setitem(base._REGISTRY, "web_slow", _Slow)
    _Slow.go = threading.Event()
    app = create_app(tmp_path / "games", None, limits=Limits(move_seconds=0.3))
    try:
        with serving(app) as url:
            _start(page, url, "watch", ["web_slow", "web_slow"], target=30)
            page.wait_for_function("() => document.getElementById('error').innerText"
                                   ".includes('still thinking')")
            assert page.locator("#board .tile").count() == 0
            _Slow.go.set()
            page.wait_for_function("() => document.querySelectorAll('#board .tile').length > 0")
            assert page.inner_text("#error") == ""
    finally:
        _Slow.go.set()
