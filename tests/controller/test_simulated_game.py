"""The controller on the simulated table: rendered frames with hands in between,
the motion gate, stillness, change localisation, the rules' ranking, the LEDs.

The reader here answers from the renderer's ground truth, so this test pins
everything around the vision reader (which has its own accuracy tests).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from companion.controller import Controller
from companion.leds import TableLeds, color_rgb
from companion.rules import Card, Commit, Seat, Site, SiteView
from companion.session import GameSession
from companion.simtable import SimTable
from companion.vision.geometry import Intrinsics, Pose
from hardware.leds import patterns
from hardware.leds.backends import FakeBackend
from hardware.leds.ledmap import serpentine
from hardware.leds.strip import LedStrip


@dataclass
class TruthReading:
    sites: dict
    unseen: list
    cards: dict
    pose: Any = None
    timings: dict = field(default_factory=dict)


def test_a_filmed_game_gives_the_exact_move_list_and_led_frames():
    table = SimTable(seed=5, hand_frames=2, still_frames=8)
    cam = table.camera
    pose = Pose(cam.rvec, cam.tvec, Intrinsics(cam.K, cam.dist, (cam.width, cam.height)))
    truths: dict[int, dict] = {}
    reads: list[str] = []

    def reader(image, previous_pose=None):
        truth = truths[id(image)]
        reads.append(truth["phase"])
        exp = truth["expected"]
        sites = {Site(s["city"], s["row"], s["col"]): SiteView(s["height"], s["owner"])
                 for s in exp["sites"]}
        unseen = [Site(u["city"], u["row"], u["col"]) for u in exp.get("unseen", [])]
        cards = {Seat(k): Card(*v["cell"]) for k, v in exp.get("cards", {}).items()}
        return TruthReading(sites, unseen, cards, pose)

    session = GameSession(table.companion_config())
    ledmap = serpentine()
    backend = FakeBackend()
    leds = TableLeds(LedStrip(ledmap.count, backend=backend), ledmap, clock=lambda: 0.0)
    ctl = Controller(session, reader, leds=leds)
    while len(table.moves) <= 14:
        frame = table.read()
        truths[id(frame.image)] = {**frame.truth, "phase": frame.phase}
        ctl.process(frame.image, frame.timestamp)
    recorded = [m for m in session.record.moves if not isinstance(m, Commit)]
    assert [str(m) for m in recorded] == [str(m) for m in table.moves[:len(recorded)]]
    assert len(recorded) == 14
    assert set(reads) == {"still"}  # a frame with a hand is never read
    assert session.snapshot()["warnings"] == []
    # after the last move the strip shows whose turn it is, in their colour
    state = session.state
    rgb = color_rgb(state.player.colors[0], state.config.colors)
    backend.assert_frame(patterns.seat_only(ledmap, state.seat.value, rgb))
    assert all(lat < 0.5 for lat in ctl.stats.decide_latency)
