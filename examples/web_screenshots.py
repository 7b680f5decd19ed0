"""Screenshots of the ``allfives serve`` pages for the docs (docs/images/web_*.png).

    apt-get install -y chromium          # the system browser; nothing is downloaded
    python examples/web_screenshots.py   # writes docs/images/web_play.png, web_watch.png, ...
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from playwright.sync_api import Page, sync_playwright

from allfives_agents.base import make_agent
from allfives_agents.web.server import create_app, serving
from allfives_env.game.match import play_game
from allfives_env.game.rules import make_rules
from allfives_env.records.record import game_record, write_records

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
OUT = Path(__file__).resolve().parents[1] / "docs" / "images"
WAITING = "document.getElementById('table').dataset.waiting"


def _start(page: Page, url: str, mode: str, seats: list[str], players: int, seed: int) -> None:
    page.goto(f"{url}/#{mode}")
    page.select_option("#players", str(players))
    for s, agent in enumerate(seats):
        page.fill(f"#seat-{s}", agent)
    if players == 4:
        page.check("#teams")
    page.fill("#seed", str(seed))
    page.click("#start")
    page.wait_for_selector("#speed")


def play(page: Page, url: str) -> None:
    """A person against three bots, a tile chosen and its ends shown as targets."""
    _start(page, url, "play", ["human", "heuristic", "greedy", "heuristic"], 4, seed=4)
    page.fill("#speed", "2000")
    for _ in range(40):
        page.wait_for_function(f"() => ['you', 'next_hand', 'over'].includes({WAITING})")
        if page.locator("#board .tile").count() >= 8 and page.locator("#hand .legal").count():
            break
        page.locator("#legal button").first.click()
        page.wait_for_timeout(150)
    page.fill("#speed", "800")
    page.locator("#hand .tile.legal").first.click()
    page.screenshot(path=str(OUT / "web_play.png"), full_page=True)


def watch(page: Page, url: str) -> None:
    _start(page, url, "watch", ["heuristic", "greedy", "search", "random"], 4, seed=9)
    page.fill("#speed", "1990")
    page.wait_for_function("() => document.querySelectorAll('#board .tile').length >= 11")
    page.click("#pause")
    page.wait_for_timeout(300)
    page.screenshot(path=str(OUT / "web_watch.png"), full_page=True)


def replay(page: Page, url: str) -> None:
    page.goto(f"{url}/#replay")
    page.select_option("#file-pick", "greedy_vs_heuristic.jsonl")
    page.wait_for_selector("#move-text")
    for _ in range(60):
        page.click("#next")
        text = page.inner_text("#move-text")
        if "scores" in text and page.locator("#board .tile").count() >= 9:
            break
    page.screenshot(path=str(OUT / "web_replay.png"), full_page=True)


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        rules = make_rules("all_fives", players=2)
        ids = ["greedy", "heuristic"]
        state = play_game(rules, [make_agent(i) for i in ids], seed=3)
        write_records(folder / "greedy_vs_heuristic.jsonl", [game_record(state, 3, ids)])
        with serving(create_app(folder / "games", folder)) as url, sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
            for shot in (play, watch, replay):
                page = browser.new_page(viewport={"width": 1200, "height": 960})
                shot(page, url)
                page.close()
            browser.close()
    print(f"wrote {OUT}/web_play.png, web_watch.png, web_replay.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
