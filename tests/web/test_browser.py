"""The page in a real browser: Debian's Chromium, driven by Playwright.

The test plays the moves itself (no timers), so every step is deterministic:
a move appears without a reload, a finished round shows its breakdown, the
PIN unlocks the controls, and the screenshots are not blank.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from companion.session import GameSession
from companion.web import create_app
from companion.web.server import WebServer

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
PIN = "135790"

pytestmark = pytest.mark.skipif(not os.path.exists(CHROMIUM),
                                reason=f"{CHROMIUM} is missing: apt-get install chromium")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture
def table(session: GameSession) -> Iterator[WebServer]:
    app = create_app({"PIN": PIN}, session=session)
    with WebServer(app, port=0) as server:
        yield server



def _unlock(page: Any) -> None:
    """Type the table PIN on the page and wait for the table controls."""
    page.fill("#pin", PIN)
    page.click("#login-form button[type=submit]")
    page.wait_for_selector("body.unlocked")

def _check_screenshot(png: bytes, name: str) -> None:
    """Not blank: many distinct colours, and not (nearly) all white."""
    import cv2
    import numpy as np

    img = cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_COLOR)
    assert img is not None and img.shape[0] > 300
    q = (img.reshape(-1, 3) // 8).astype(np.int32)
    colours = np.unique((q[:, 0] << 10) | (q[:, 1] << 5) | q[:, 2])
    assert len(colours) > 150, f"{name}: only {len(colours)} colours"
    white = np.all(img > 245, axis=2).mean()
    assert white < 0.6, f"{name}: {white:.0%} white"
    out = os.environ.get("WEB_SCREENSHOT_DIR")
    if out:
        Path(out).mkdir(parents=True, exist_ok=True)
        (Path(out) / f"{name}.png").write_bytes(png)


def _log_has(page: Any, text: str) -> None:
    page.wait_for_function("t => document.getElementById('log').textContent.includes(t)",
                           arg=text, timeout=5000)


def _pos_is(page: Any, text: str) -> None:
    page.wait_for_function("t => document.getElementById('step-pos').textContent === t",
                           arg=text, timeout=5000)


def test_live_page(browser: Any, table: WebServer, session: GameSession, driver: Any) -> None:
    ctx = browser.new_context(viewport={"width": 1366, "height": 900})
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" and "status of 400"
            not in m.text else None)  # the one 400 is the bad notation entered on purpose
    page.on("dialog", lambda d: d.accept())
    page.goto(table.url + "/")
    page.wait_for_selector("#board svg")
    page.wait_for_selector("#conn.ok", timeout=5000)  # the event stream is open
    page.evaluate("window.__marker = 42")

    # a move made at the table appears without a reload
    move = driver.play(1)[0]
    _log_has(page, str(move))
    _pos_is(page, "move 1 of 1 · live")
    assert page.evaluate("window.__marker") == 42

    # a card seen lights its sites on the board and on the virtual LED strip
    driver.to_build_phase()
    nxt = driver.next_move()
    session.see_card(nxt.seat, nxt.card)  # type: ignore[union-attr]
    page.wait_for_function("() => document.querySelectorAll('#board .tile.lit, #board .tile.dim')"
                           ".length === 6")
    assert page.locator(".leds .led.on").count() >= 1 or page.locator(".leds .led.dim").count()
    assert str(nxt.card) in page.inner_text("#card")  # type: ignore[union-attr]
    session.play(nxt)
    _log_has(page, str(nxt))
    page.wait_for_selector("#board .tile.last")

    # the round ends: the breakdown per colour and the chart appear
    driver.finish_round()
    page.wait_for_selector("#breakdown table", timeout=5000)
    text = page.inner_text("#scores")
    assert "Round 1" in text and "Tallest building" in text and "City majorities" in text
    totals = session.snapshot()["scores"]["players"]
    for name, points in totals.items():
        assert name in text and str(points) in text
    assert page.locator("#chart svg polyline").count() == 4
    assert page.evaluate("window.__marker") == 42
    _check_screenshot(page.screenshot(full_page=True), "desktop")

    # stepping back with the arrow keys, and back to live
    plies = len(session.record.moves)
    page.locator("body").press("ArrowLeft")
    _pos_is(page, f"move {plies - 1} of {plies}")
    assert page.is_visible("#history-bar")
    page.locator("body").press("Home")
    _pos_is(page, f"move 0 of {plies}")
    assert page.locator("#board .towers .tower").count() == 0
    page.click("[data-step='last']")
    page.wait_for_function("() => document.getElementById('step-pos').textContent.includes('live')")

    # a warning in plain words, until resolved (with the PIN)
    session.report("unexplained", "Cairo S grew by two storeys", "Cairo S")
    page.wait_for_selector("#warnings:not([hidden])")
    assert "Cairo S grew by two storeys" in page.inner_text("#warnings")
    assert "no move explains" in page.inner_text("#warnings").lower()

    # unlock with the PIN, enter a move by hand, resolve the warning, undo
    _unlock(page)
    page.click("#warnings button:has-text('keep it')")
    page.wait_for_selector("#warnings", state="hidden")
    # what a replayed photo was (mirrored, cropped...) is only taken note of
    session.report("mirrored", "IMG_2.jpg and IMG_5.jpg: the photo is mirrored")
    page.wait_for_selector("#warnings:not([hidden])")
    assert "A mirrored photo" in page.inner_text("#warnings .warning-title")
    assert page.locator("#warnings button:has-text('keep it')").count() == 0
    page.click("#warnings button:has-text('Noted')")
    page.wait_for_selector("#warnings", state="hidden")
    by_hand = driver.next_move()
    page.click("#move-ctl summary")
    page.fill("#move-input", str(by_hand))
    page.click("#move-form button[type=submit]")
    _log_has(page, str(by_hand))
    assert session.record.moves[-1] == by_hand
    page.fill("#move-input", "S c99 nonsense")
    page.click("#move-form button[type=submit]")
    page.wait_for_selector(".toast.error")
    assert "cannot read move" in page.inner_text("#toast")
    page.click("#undo-btn")
    _pos_is(page, f"move {plies} of {plies} · live")
    assert len(session.record.moves) == plies

    # the game ends: the result with the edition's tie-break
    driver.finish_game()
    page.wait_for_selector("#result:not([hidden])", timeout=5000)
    result = page.inner_text("#result")
    assert "final result" in result.lower()
    assert "no tie-break: tied players share the place" in result  # the classic edition
    assert page.evaluate("window.__marker") == 42
    assert not errors, errors
    ctx.close()


def test_phone_layout(browser: Any, table: WebServer, session: GameSession,
                      driver: Any) -> None:
    driver.play(40)
    session.set_unseen([])
    ctx = browser.new_context(viewport={"width": 390, "height": 844}, device_scale_factor=2,
                              is_mobile=True, has_touch=True)
    page = ctx.new_page()
    page.goto(table.url + "/")
    page.wait_for_selector("#board svg.compact")
    page.wait_for_selector("#breakdown table")
    overflow = page.evaluate("document.scrollingElement.scrollWidth") - 390
    assert overflow <= 0, f"the page is {overflow}px wider than the phone"
    # tap a site: its tower is described
    site = session.snapshot()["board"]["sites"][0]
    idx = site["city"] * 9 + site["row"] * 3 + site["col"]
    page.locator(f"#board [data-site='{idx}']").tap()
    assert f"{site['height']} storey" in page.inner_text("#site-info")
    _check_screenshot(page.screenshot(), "phone")
    ctx.close()


@pytest.mark.parametrize("width", [320, 390])
def test_the_table_controls_fit_a_phone(browser: Any, table: WebServer, width: int) -> None:
    """Every control opened, unlocked: the set-up's edition list (its longest title
    is wider than a small phone) made the page scroll sideways."""
    ctx = browser.new_context(viewport={"width": width, "height": 740}, is_mobile=True,
                              has_touch=True)
    page = ctx.new_page()
    page.goto(table.url + "/")
    _unlock(page)
    page.evaluate("document.querySelectorAll('details.ctl').forEach((d) => { d.open = true; })")
    page.wait_for_timeout(200)
    # (a phone's browser widens its layout to what is too wide: against the screen's width)
    overflow = page.evaluate("document.scrollingElement.scrollWidth") - width
    assert overflow <= 0, f"the page is {overflow}px wider than the phone"
    ctx.close()


def test_page_without_a_game(browser: Any) -> None:
    session = GameSession()
    app = create_app({"PIN": PIN}, session=session)
    with WebServer(app, port=0) as server:
        ctx = browser.new_context(viewport={"width": 1000, "height": 700})
        page = ctx.new_page()
        page.goto(server.url + "/")
        page.wait_for_function(
            "() => document.getElementById('turn').textContent.includes('No game is set up')")
        # set a game up from the page
        _unlock(page)
        page.click("#setup-ctl summary")
        page.select_option("#setup-count", "2")
        page.fill("input[name=name0]", "Ann")
        page.fill("input[name=name1]", "Bo")
        page.click("#setup-form button[type=submit]")
        page.wait_for_function(
            "() => document.getElementById('turn').textContent.includes('Ann')")
        assert "Bo" in page.inner_text("#players")
        assert page.locator("#players .swatch").count() == 4  # two colours each
        # three players whose seats are picked out of order: play still goes
        # clockwise from player 1 (the list the page sends is the turn order)
        page.on("dialog", lambda dialog: dialog.accept())
        if not page.is_visible("#setup-count"):
            page.click("#setup-ctl summary")
        page.select_option("#setup-count", "3")
        for i, (name, seat) in enumerate((("Ann", "N"), ("Bo", "W"), ("Cy", "E"))):
            page.fill(f"input[name=name{i}]", name)
            page.select_option(f"select[name=seat{i}]", seat)
        page.click("#setup-form button[type=submit]")
        page.wait_for_function(
            "() => document.getElementById('players').textContent.includes('Cy')")
        players = session.snapshot()["game"]["header"]["players"]
        assert [(p["name"], p["seat"]) for p in players] == [
            ("Ann", "N"), ("Cy", "E"), ("Bo", "W")]
        ctx.close()


@contextmanager
def _marked_page(browser: Any, session: GameSession, driver: Any,
                 marks: Callable[[list[int]], dict[int, dict[str, bool]]],
                 second_looks: Callable[[list[int]], list[int]] | None = None,
                 ) -> Iterator[tuple[Any, list[int]]]:
    """The page of a game of eight moves whose record entries ``marks`` picks (given
    the plies of its builds) carry those flags (entry = ply: no corrections), and
    those plies; ``second_looks`` picks the builds the camera says it weighs again."""
    driver.play(8)
    record = session.record
    assert len(record.entries) == len(record.effective())
    builds = [n for n, e in enumerate(record.effective()) if type(e.move).__name__ == "Build"]
    flags = marks(builds)
    entries = tuple(dataclasses.replace(e, **flags[n]) if n in flags else e
                    for n, e in enumerate(record.entries))
    session.resume(dataclasses.replace(record, entries=entries))
    looks = [] if second_looks is None else second_looks(builds)
    app = create_app({"PIN": PIN}, session=session, services={"second_looks": lambda: looks})
    with WebServer(app, port=0) as server:
        ctx = browser.new_context(viewport={"width": 1000, "height": 800})
        page = ctx.new_page()
        page.goto(server.url + "/")
        page.wait_for_selector("#log .doubt")
        yield page, builds
        ctx.close()


def test_the_check_says_why(browser: Any, session: GameSession, driver: Any) -> None:
    """The "? check" hint's title tells a narrow reading from a build the camera never
    saw (a replayed one no photo showed, a live one out of its sight)."""
    with _marked_page(browser, session, driver, lambda builds: {
            builds[0]: {"doubtful": True},
            builds[1]: {"doubtful": True, "never_shown": True},
            builds[2]: {"doubtful": True}},
            second_looks=lambda builds: [builds[2], builds[3]]) as (page, builds):
        titles = {ply: page.locator(f"#log li[data-ply='{ply}'] .doubt").get_attribute("title")
                  for ply in builds[:3]}
        assert titles == {
            builds[0]: "the camera read this site by a narrow margin: it may be misread",
            builds[1]: "the camera never saw this build: its storeys are a guess",
            # the live camera keeps this one to weigh again
            builds[2]: "the camera read this site by a narrow margin: it may be misread; "
                       "it looks again when the next block is built there"}
        # a second look at a move not marked doubtful says nothing
        assert page.locator(f"#log li[data-ply='{builds[3]}'] .doubt").count() == 0
        site = session.record.effective()[builds[2]].move.site.name  # type: ignore[union-attr]
        assert page.locator(f"#log li[data-ply='{builds[2]}'] .doubt").inner_text() == (
            f"? check this site ({site}) \u2013 the camera looks again at the next block here")
        assert page.locator("#log .second-look").count() == 1


def test_a_doubtful_replayed_move_says_check_this_site(browser: Any, session: GameSession,
                                                        driver: Any) -> None:
    """A replayed move whose site its photo read narrowly: "check this site" beside it
    only, until the players say it looks right."""
    with _marked_page(browser, session, driver,
                      lambda builds: {builds[0]: {"doubtful": True}}) as (page, builds):
        ply = builds[0]
        assert page.locator("#log .doubt").count() == 1
        item = page.locator(f"#log li[data-ply='{ply}']")
        site = session.record.effective()[ply].move.site.name  # type: ignore[union-attr]
        assert item.locator(".doubt").inner_text() == f"? check this site ({site})"
        assert page.locator(f"#log li[data-ply='{ply + 1}'] .doubt").count() == 0
        # the players look at the site: the move is right, the mark goes for good
        _unlock(page)
        page.click("#log .doubt button:has-text('Looks right')")
        page.wait_for_selector("#log .doubt", state="detached")
        assert session.record.effective()[ply].agreed
        assert not session.record.effective()[ply].doubtful


def test_a_missed_move_is_inserted_from_its_warning(browser: Any, table: WebServer,
                                                    session: GameSession, driver: Any) -> None:
    """The camera missed a build; the next one came out of turn: entered in its place."""
    driver.to_build_phase()
    k = len(session.record.moves)
    missed, seen = driver.play(2)
    session.undo()
    session.undo()
    assert not session.play(seen, allow_illegal=True).legal
    ctx = browser.new_context(viewport={"width": 1200, "height": 900})
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(table.url + "/")
    page.wait_for_selector("#warnings:not([hidden])")
    _unlock(page)
    page.click("#warnings button:has-text('A move before it is missing')")
    row = page.locator("#log .insert-row")
    assert "Missed before move" in row.inner_text()
    # the seat after the last recorded move's is suggested
    assert row.locator("input").input_value() == f"{missed.seat.value} "
    row.locator("input").fill(str(missed))
    row.locator("button[type=submit]").click()
    page.wait_for_selector("#warnings", state="hidden")
    _log_has(page, str(missed))
    assert page.locator(f"#log li[data-ply='{k}'] .notation").inner_text() == str(missed)
    assert page.locator(f"#log li[data-ply='{k + 1}'] .notation").inner_text() == str(seen)
    assert page.locator("#log .flagged").count() == 0
    assert session.record.moves[k:] == [missed, seen]
    # the same form corrects a move: the seen build entered again, as itself
    page.locator(f"#log li[data-ply='{k + 1}'] button:has-text('Edit')").click()
    edit = page.locator("#log form.edit-row:not(.insert-row)")
    assert edit.locator("input").input_value() == str(seen)
    edit.locator("button[type=submit]").click()
    page.wait_for_selector(".toast:has-text('Move corrected')")
    assert session.record.moves[k:] == [missed, seen]
    assert len(session.record.entries) == len(session.record.effective()) + 6
    assert not errors, errors
    ctx.close()


def test_uploading_photos_says_what_it_is_doing(browser: Any, session: GameSession,
                                                tmp_path: Path) -> None:
    """The replay of an upload takes seconds a photo: the page says so while it waits,
    and takes an iPhone's HEIC photos as well as JPEGs."""
    import threading

    release = threading.Event()
    received: list[list[str]] = []

    def replay(files: Any) -> dict[str, Any]:
        received.append([f.name for f in files])
        if len(received) == 3:  # no game opened: the warnings are said with the outcome
            return {"moves": 0, "rounds": [], "opened": False, "listed": 0, "doubtful": [],
                    "warnings": [{"photo": "IMG_0002.jpg", "reason": "mirrored",
                                  "message": "IMG_0002.jpg: the photo is mirrored"}]}
        if len(received) == 4:  # ...as the list would say them: once for several photos
            return {"moves": 0, "rounds": [], "opened": False, "listed": 0, "doubtful": [],
                    "warnings": [{"photo": n, "reason": "mirrored",
                                  "message": f"{n}: the photo is mirrored"}
                                 for n in ("IMG_0001.HEIC", "IMG_0002.jpg")],
                    "grouped": ["IMG_0001.HEIC and IMG_0002.jpg: the photo is mirrored"]}
        if len(received) > 1:
            raise ValueError("no photo showed the board: IMG_0002.jpg: board not found")
        session.announce("replay-progress", {"done": 1, "total": 2, "photo": "IMG_0001.HEIC"})
        release.wait(10)
        return {"moves": 5, "rounds": [{"round": 1}], "doubtful": ["N c10 green2@2E"],
                "warnings": [{"photo": "IMG_0002.jpg", "reason": "unseen", "message": "x"}]}

    for name in ("IMG_0001.HEIC", "IMG_0002.jpg"):
        (tmp_path / name).write_bytes(b"\xff\xd8\xff\xd9")
    app = create_app({"PIN": PIN}, session=session, services={"replay": replay})
    with WebServer(app, port=0) as server:
        ctx = browser.new_context(viewport={"width": 1000, "height": 800})
        page = ctx.new_page()
        page.goto(server.url + "/")
        _unlock(page)
        page.wait_for_function("() => document.getElementById('upload-note').textContent"
                               ".includes('(JPEG, PNG or HEIC)')", timeout=5000)
        page.click("#upload-ctl summary")
        page.set_input_files("#upload-form input[type=file]",
                             [str(tmp_path / "IMG_0001.HEIC"), str(tmp_path / "IMG_0002.jpg")])
        page.click("#upload-form button")
        page.wait_for_function("() => document.getElementById('upload-note').textContent"
                               ".startsWith('Uploading and reading 2 files') || document"
                               ".getElementById('upload-note').textContent.startsWith('Reading')",
                               timeout=5000)
        # the companion's progress, pushed as it reads
        page.wait_for_function("t => document.getElementById('upload-note').textContent === t",
                               arg="Reading photo 1 of 2 (IMG_0001.HEIC)\u2026", timeout=5000)
        release.set()
        # the outcome in words stays, though the state refreshes after the upload
        outcome = ("Read 2 files: 5 moves replayed; 1 round scored; 1 warning in the list; "
                   "check N c10 green2@2E.")
        page.wait_for_function("t => document.getElementById('upload-note').textContent === t",
                               arg=outcome, timeout=5000)
        page.wait_for_timeout(500)
        assert page.inner_text("#upload-note") == outcome
        assert received == [["IMG_0001.HEIC", "IMG_0002.jpg"]]
        # a refused upload says why where the outcome would be
        page.click("#upload-form button")
        page.wait_for_function("t => document.getElementById('upload-note').textContent === t",
                               arg="Not replayed: no photo showed the board: IMG_0002.jpg: "
                                   "board not found", timeout=5000)
        page.click("#upload-form button")
        page.wait_for_function("t => document.getElementById('upload-note').textContent === t",
                               arg="Read 2 files: 0 moves replayed; 0 rounds scored; 1 "
                                   "warning: IMG_0002.jpg: the photo is mirrored.",
                               timeout=5000)
        page.click("#upload-form button")
        page.wait_for_function("t => document.getElementById('upload-note').textContent === t",
                               arg="Read 2 files: 0 moves replayed; 0 rounds scored; 1 "
                                   "warning: IMG_0001.HEIC and IMG_0002.jpg: the photo is "
                                   "mirrored.", timeout=5000)
        ctx.close()


def test_a_replay_over_the_tables_game_is_confirmed_and_the_page_goes_back(
        browser: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Photos uploaded while the table's game is in play: the page asks first, says the
    camera does not record the replayed game, and offers the way back to the table's."""
    from companion import commands
    from companion.replay_service import make_replay_service
    from companion.rules import make_config, parse_move
    from companion.store import Journal, table_game_service
    from tests.web.test_doubtful import _photos

    journal = Journal(tmp_path / "games.sqlite")
    session = GameSession(make_config(4), journal=journal)
    for move in ("S commit ?", "W commit ?", "N commit ?", "E commit ?", "S c11 red1@0C"):
        session.play(parse_move(move))
    monkeypatch.setattr(commands, "read_folder", lambda *a, **k: (_photos(), [], "file names"))
    (tmp_path / "IMG_1.jpg").write_bytes(b"\xff\xd8\xff\xd9")
    app = create_app({"PIN": PIN}, session=session, services={
        "replay": make_replay_service(session, journal=journal),
        "table_game": table_game_service(session, journal), "camera_view": lambda: None})
    with WebServer(app, port=0) as server:
        ctx = browser.new_context(viewport={"width": 1000, "height": 800})
        page = ctx.new_page()
        page.goto(server.url + "/")
        _unlock(page)
        asked: list[str] = []

        def answer(dialog: Any) -> None:
            asked.append(dialog.message)
            dialog.dismiss() if len(asked) == 1 else dialog.accept()

        page.on("dialog", answer)
        page.click("#upload-ctl summary")
        page.set_input_files("#upload-form input[type=file]", [str(tmp_path / "IMG_1.jpg")])
        page.click("#upload-form button")  # declined: nothing sent
        page.wait_for_timeout(300)
        assert len(asked) == 1 and asked[0].startswith("A game is in play at the table.")
        assert session.game_id is not None and not session.from_photos
        page.click("#upload-form button")  # confirmed
        page.wait_for_function("() => document.getElementById('turn').textContent"
                               ".includes('replayed from photos: the camera does not record "
                               "it')", timeout=10000)
        assert session.from_photos and len(asked) == 2
        page.click("#table-game-btn")
        page.wait_for_function("() => !document.getElementById('turn').textContent"
                               ".includes('replayed from photos')", timeout=10000)
        assert not session.from_photos and len(session.record.effective()) == 5
        assert page.locator("#table-game-btn").count() == 0
        ctx.close()
    journal.close()
