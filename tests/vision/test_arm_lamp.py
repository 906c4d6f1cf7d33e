"""A lamp switched or moved is not an arm: the live table goes on reading.

A lamp that changes while the game goes on changes much of the picture, and the
edges of the shadows it moves reach the picture's edge as an arm does. Before
the arm watch told the two apart, every still scene after such a change was
held back as "an arm over the board" until the players paused for
``arm_timeout_seconds``: at a brisk table, no move was read again.
"""

from __future__ import annotations

import dataclasses

from companion.controller import Controller
from companion.pipeline import VisionReader
from companion.rules import Commit
from companion.session import GameSession
from companion.sim import random_hand
from companion.simtable import SimTable
from companion.vision.change import ArmWatch, arm_over_board, board_mask, thumbnail
from companion.vision.reader import read_image


def _mirrored_lamp(table: SimTable) -> None:
    light = table.lighting
    x, y, z = light.light_pos
    table.lighting = dataclasses.replace(light, light_pos=(-x, -y, z))


def test_a_lamp_moved_is_not_an_arm_and_a_hand_still_is() -> None:
    table = SimTable(seed=2)
    table.fast_forward(10)
    before, _ = table._render([])
    reading = read_image(before, None, list(table.companion_config().colors))
    watch = ArmWatch()
    watch.settle(before, reading.pose)
    hand, _ = table._render([random_hand(table.rng, table.world.board)])
    assert watch.check(hand)
    assert watch.last is not None and "reaches from outside the picture" in watch.last.reason
    _mirrored_lamp(table)
    relit, _ = table._render([])
    assert not watch.check(relit)
    assert watch.last.reason == "the light changed (a lamp), not an arm"
    # without relighting the reference, the lamp's shadows pass for an arm
    ref, cur = thumbnail(before, 160), thumbnail(relit, 160)
    board = board_mask(reading.pose, (before.shape[1], before.shape[0]), ref.shape[:2])
    assert arm_over_board(ref, cur, board, {"arm_relight_px": 0}).arm


def test_the_live_table_reads_on_after_a_lamp_is_moved() -> None:
    table = SimTable(seed=2, hand_frames=2, still_frames=8)  # stills of half a second
    session = GameSession(table.companion_config())
    ctl = Controller(session, VisionReader(colors=list(table.companion_config().colors)))
    moved = False
    while len(table.moves) <= 6:
        if len(table.moves) == 4 and not moved:
            _mirrored_lamp(table)  # while the fourth build's hand is over the board
            moved = True
        frame = table.read()
        assert frame is not None
        ctl.process(frame.image, frame.timestamp)
    builds = [str(e.move) for e in session.record.effective() if not isinstance(e.move, Commit)]
    assert builds == [str(m) for m in table.moves[:6]]
    assert ctl.stats.arm_frames == 0 and ctl.stats.arm_timeouts == 0
