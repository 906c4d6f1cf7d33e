"""The demo's simulated table and a game set up on the page.

`companion demo --driver table` fed the simulated table's moves into any game the
page showed: a game set up on the page to be played by hand got the bots' moves,
each out of turn. The table now waits while the page shows another game, and
goes on when the page's game is over or the page goes back to the table's own.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from companion.live import TableDriver
from companion.rules import make_config
from companion.session import GameSession
from companion.store import Journal
from tests.controller.test_controller_fake_reader import Reading


def test_the_simulated_table_waits_while_the_page_shows_another_game(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "games.sqlite")
    session = GameSession(journal=journal)
    reads: list[Any] = []

    def reader(image: Any, previous_pose: Any = None) -> Reading:
        reads.append(image.shape)
        return Reading({})

    driver = TableDriver(session, seed=3, speed=50.0, reader=reader)
    driver.new_table()
    table_game = session.game_id
    assert not driver._elsewhere()
    session.new_game(make_config(2))  # set up on the page, to be played by hand
    assert driver._elsewhere()
    frames = driver.table._index
    driver.start()
    time.sleep(1.5)
    driver.stop()
    assert driver.table._index == frames and reads == []
    assert session.record.entries == ()
    # back to the table's own game (as the page's "Back to the table's game" does)
    session.resume(journal.load(str(table_game)), table_game)
    assert not driver._elsewhere()
    driver.start()
    deadline = time.monotonic() + 30
    while not reads and time.monotonic() < deadline:
        time.sleep(0.1)
    driver.stop()
    assert reads and driver.table._index > frames
    journal.close()
