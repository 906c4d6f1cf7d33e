"""The live table end to end with the real vision reader: the demo's game (SimTable
seed 1) filmed with hands, read frame by frame, to the exact move list."""

from __future__ import annotations

from typing import Any

import numpy as np

from companion.controller import Controller
from companion.pipeline import VisionReader
from companion.rules import Commit, Site, SiteView
from companion.session import GameSession
from companion.simtable import SimTable

HONG_KONG_S, HONG_KONG_C = Site.parse("3S"), Site.parse("3C")


def test_the_demo_game_is_tracked_exactly_by_the_vision_reader() -> None:
    table = SimTable(seed=1, hand_frames=2, still_frames=6)
    session = GameSession(table.companion_config())
    reader = VisionReader(colors=list(table.companion_config().colors))
    seen: list[tuple[np.ndarray, Any]] = []
    ctl = Controller(session, reader, on_frame=lambda image, reading: seen.append(
        (image, reading.pose)))
    while len(table.moves) <= 8:
        frame = table.read()
        ctl.process(frame.image, frame.timestamp)
    recorded = [str(m) for m in session.record.moves if not isinstance(m, Commit)]
    assert recorded == [str(m) for m in table.moves[:8]]
    assert session.snapshot()["warnings"] == []
    # move 7: North's green 4 on Hong Kong S's red 8. Read alone, the 12-storey
    # tower's top passes for an 8-storey tower on Hong Kong C behind it, and its
    # lower part for a red 4 (two sites changed: the move was not recorded, and every
    # later move was the wrong player's). The record says Hong Kong S stands 8-12
    # storeys tall: read within that, the tower hides Hong Kong C.
    assert str(table.moves[6]) == "N c01 green4@3S"
    assert len(seen) == 9  # one still scene read before the first move, one after each
    image, pose = seen[7]
    free = reader(image, pose)
    assert (free.sites.get(HONG_KONG_S), free.sites.get(HONG_KONG_C)) == (
        SiteView(4, "red"), SiteView(8, "green"))
    builds = [n for n, e in enumerate(session.record.effective())
              if not isinstance(e.move, Commit)]
    before = list(session.record.states())[builds[6]].board  # the position move 7 met
    assert before.height(HONG_KONG_S) == 8
    held = reader(image, pose, height_range={
        s: (before.height(s), before.height(s) + 4) for s in map(Site.from_index, range(54))})
    assert held.sites.get(HONG_KONG_S) == SiteView(12, "green")
    assert HONG_KONG_C in held.unseen
