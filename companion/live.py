"""Live tables: the simulated one of ``companion demo`` and the real one of ``companion run``.

Both are the same :class:`~companion.controller.Controller` fed by a frame
source; only the source (rendered frames or a camera) and the LED backend
(fake or real) differ.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from companion.controller import Controller
from companion.rules import Commit
from companion.session import GameSession

log = logging.getLogger(__name__)


class TableDriver:
    """Runs simulated-table frames through the real vision pipeline into the session.

    The bots' game (with dealt hands) is the world; the companion sees only the
    rendered frames. When the world's game ends a new one starts.
    """

    def __init__(self, session: GameSession, *, seed: int = 1, players: int = 4,
                 edition: str = "classic", speed: float = 1.0, names: tuple[str, ...] = (),
                 leds: Any = None, camera_view: Any = None, reader: Any = None,
                 pause_after_game: float = 12.0,
                 on_game_over: Callable[[GameSession], None] | None = None) -> None:
        self.session = session
        self.seed = seed
        self.players = players
        self.edition = edition
        self.speed = speed
        self.names = names
        self.leds = leds
        self.camera_view = camera_view
        self.reader = reader
        self.pause_after_game = pause_after_game / max(1.0, speed)
        self.on_game_over = on_game_over
        self.games = 0
        self.table: Any = None
        self.controller: Controller | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def interval(self) -> float:
        return 1.0 / (15.0 * self.speed)

    def new_table(self, resume: bool = False) -> None:
        from companion.pipeline import VisionReader
        from companion.simtable import SimTable

        self.table = SimTable(seed=self.seed + self.games, players=self.players,
                              edition=self.edition, names=self.names)
        config = self.table.companion_config()
        if resume and self.session.has_game:
            builds = sum(1 for m in self.session.record.moves if not isinstance(m, Commit))
            self.table.fast_forward(builds)
        else:
            self.session.new_game(config, meta={"source": "demo", "seed": self.seed + self.games})
        reader = self.reader or VisionReader(colors=list(config.colors))
        self.controller = Controller(self.session, reader, leds=self.leds,
                                     on_frame=self.camera_view.update if self.camera_view
                                     else None)
        self.games += 1

    def start(self) -> None:
        if self._thread is not None and self._thread.is_alive():
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="table-driver", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                if self.table is None:
                    self.new_table(resume=self.session.has_game)
                frame = self.table.read()
                if frame is None:
                    if self.on_game_over is not None and self.session.state.is_over:
                        self.on_game_over(self.session)
                    if self._stop.wait(self.pause_after_game):
                        return
                    self.new_table()
                    continue
                t0 = time.perf_counter()
                assert self.controller is not None
                self.controller.process(frame.image, frame.timestamp)
                self._stop.wait(max(0.0, self.interval - (time.perf_counter() - t0)))
            except Exception:  # the demo keeps running whatever happens
                log.exception("table driver step failed")
                self._stop.wait(1.0)
