"""LED guidance from the session, checked frame by frame on the fake backend."""

from __future__ import annotations

from companion.bots import GreedyBot
from companion.leds import TableLeds, color_rgb
from companion.rules import Block, Build, Card, Commit, Seat, Site, make_config
from companion.session import GameSession
from hardware.leds.backends import FakeBackend
from hardware.leds.ledmap import serpentine
from hardware.leds.strip import LedStrip

RED = (190, 35, 40)


def _session():
    session = GameSession(make_config(4))
    for seat, color in ((Seat.S, "red"), (Seat.W, "blue"), (Seat.N, "green"), (Seat.E, "black")):
        session.play(Commit(seat, tuple(Block(color, s) for s in (4, 3, 2, 1, 1, 1))))
    return session


def _leds(clock):
    ledmap = serpentine()
    backend = FakeBackend()
    return TableLeds(LedStrip(ledmap.count, backend=backend), ledmap, clock=clock), backend, ledmap


def test_colours_come_from_the_profile():
    assert color_rgb("red", ("red", "blue", "green", "black")) == RED
    assert color_rgb("blue", ("orange", "yellow", "purple", "blue")) == (40, 110, 200)
    assert color_rgb("blue", ("red", "blue", "green", "black")) == (35, 75, 170)


def test_card_guidance_lights_the_cards_site_in_six_cities_and_the_seat():
    session = _session()
    # an empty board: all six NW sites are open to red
    session.see_card(Seat.S, Card(0, 0))
    leds, backend, ledmap = _leds(lambda: 0.0)
    leds.show_guidance(session.guidance(), [], session.state)
    expected = {}
    for city in range(6):
        for led in ledmap.site_leds(Site(city, 0, 0).index):
            expected[led] = RED
    for led in ledmap.seat_leds("S"):
        expected[led] = RED
    backend.assert_frame(expected)


def test_a_site_no_block_can_take_is_dimmed():
    session = _session()
    session.play(Build(Seat.S, Card(0, 0), Site(0, 0, 0), Block("red", 4)))  # red S
    session.play(Build(Seat.W, Card.for_site(Seat.W, 0, 0), Site(1, 0, 0), Block("blue", 4)))
    session.play(Build(Seat.N, Card.for_site(Seat.N, 0, 0), Site(2, 0, 0), Block("green", 4)))
    session.play(Build(Seat.E, Card.for_site(Seat.E, 0, 0), Site(3, 0, 0), Block("black", 1)))
    # red to move with 3,2,1,1,1: can't reach 4 storeys on blue/green towers
    session.see_card(Seat.S, Card(0, 0))
    g = session.guidance()
    assert g["lit"] == [Site(0, 0, 0).index, Site(3, 0, 0).index, Site(4, 0, 0).index,
                        Site(5, 0, 0).index]
    assert g["dim"] == [Site(1, 0, 0).index, Site(2, 0, 0).index]
    leds, backend, ledmap = _leds(lambda: 0.0)
    leds.show_guidance(g, [], session.state)
    dim = (47, 8, 10)  # a quarter of red, floored
    for site in (1, 2):
        for led in ledmap.site_leds(Site(site, 0, 0).index):
            assert backend.last_frame[led] == dim


def test_a_warning_blinks_on_its_site():
    session = _session()
    t = [0.0]
    leds, backend, ledmap = _leds(lambda: t[0])
    site = Site(2, 1, 1).index
    leds.show_guidance(None, [site], session.state)
    backend.assert_frame({led: (255, 0, 0) for led in ledmap.site_leds(site)})
    t[0] = 0.5  # second half of a 0.8 s period
    leds.show_guidance(None, [site], session.state)
    backend.assert_frame({led: (255, 255, 255) for led in ledmap.site_leds(site)})


def test_round_end_shows_majorities_then_returns_to_guidance():
    cfg = make_config(4, seed=4, track_cards=True)
    session = GameSession(cfg)
    bot = GreedyBot(4)
    while not session.state.scores:
        session.play(bot.choose(session.state))
    t = [100.0]
    leds, backend, ledmap = _leds(lambda: t[0])
    leds.show_guidance(None, [], session.state)
    score = session.state.scores[0]
    city = next(c for c, owner in enumerate(score.majorities) if owner)
    rgb = color_rgb(score.majorities[city], cfg.colors)
    led = next(x for x in ledmap.city_leds(city)
               if not score.tallest_owner or x not in ledmap.site_leds(
                   score.tallest_sites[0].index))
    assert backend.last_frame[led] == rgb
    t[0] = 109.0  # after the round-end display: the player to move's seat
    leds.show_guidance(None, [], session.state)
    seat = session.state.seat.value
    lit = backend.lit()
    assert set(lit) == set(ledmap.seat_leds(seat))
    # the next round button: the round's scoring once more, for its seconds
    shown = backend.frames[0]
    leds.replay_round()
    leds.show_guidance(None, [], session.state)
    assert backend.last_frame[led] == rgb and backend.last_frame == shown
    t[0] = 118.0
    leds.show_guidance(None, [], session.state)
    assert set(backend.lit()) == set(ledmap.seat_leds(seat))


def test_a_strip_that_fails_does_not_stop_the_game(caplog):
    """An OSError from the strip (its SPI device gone) went up through the controller
    and ended `companion run`; the LEDs are help, not the game."""
    session = _session()
    session.see_card(Seat.S, Card(0, 0))
    leds, backend, ledmap = _leds(lambda: 0.0)
    leds.show_guidance(session.guidance(), [], session.state)
    assert len(backend.frames) == 1 and leds.failure is None
    backend.failure = OSError(19, "No such device")
    frame = leds.show_guidance(session.guidance(), [], session.state)
    leds.show_guidance(session.guidance(), [], session.state)
    assert frame == list(backend.frames[0]) and len(backend.frames) == 1
    assert leds.failure == "[Errno 19] No such device"
    assert caplog.text.count("the LED strip failed ([Errno 19] No such device): the game "
                             "goes on without it") == 1  # said once, not every frame
    backend.failure = None
    leds.show_guidance(session.guidance(), [], session.state)
    assert len(backend.frames) == 2 and leds.failure is None
    assert "the LED strip works again" in caplog.text


def test_the_strip_follows_the_game_between_readings():
    """Drawn only after a still scene was read, the strip never blinked a warning,
    kept the round's scoring past its seconds, and showed neither an undo from a
    button or the page nor a card entered there. Now every frame the camera gives
    draws it again, ``led_refresh_seconds`` apart; the next round button shows the
    last round's scoring once more."""
    import numpy as np

    from companion.controller import Controller

    session = _session()
    now = [0.0]
    leds, backend, ledmap = _leds(lambda: now[0])
    from tests.controller.test_controller_fake_reader import Reading

    ctl = Controller(session, lambda image, previous_pose=None: Reading(
        session.state.board.views()), leds=leds)
    ctl.led_refresh_seconds = 0.0
    still = np.zeros((72, 128, 3), np.uint8)
    ctl.process(still, 0.0)
    seat_only = backend.last_frame
    session.see_card(Seat.S, Card(0, 0))  # a card entered on the page
    ctl.process(still, 0.1)
    lit = backend.last_frame
    assert lit != seat_only and lit[ledmap.site_leds(Site(0, 0, 0).index)[0]] == RED
    warning = session.report("unexplained", "Manhattan NW grew", "Manhattan NW")
    frames = []
    for k in range(4):  # a warning blinks: the strip changes with the clock
        now[0] = 0.4 * k
        ctl.process(still, 0.2 + 0.1 * k)
        frames.append(backend.last_frame)
    assert len(set(frames)) == 2
    session.resolve_warning(warning.id)
    ctl.process(still, 1.0)
    assert backend.last_frame == lit
