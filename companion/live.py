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
from contextlib import ExitStack
from typing import Any

from companion.controller import Controller
from companion.rules import Commit
from companion.session import GameSession, JournalFailure

log = logging.getLogger(__name__)


class BackgroundDriver:
    """A loop in a daemon thread with start() and stop(): what the demo drivers share."""

    name = "driver"

    def __init__(self) -> None:
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is not None and self._thread.is_alive():
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def _run(self) -> None:
        raise NotImplementedError


class TableDriver(BackgroundDriver):
    """Runs simulated-table frames through the real vision pipeline into the session.

    The bots' game (with dealt hands) is the world; the companion sees only the
    rendered frames. When the world's game ends a new one starts.
    """

    def __init__(self, session: GameSession, *, seed: int = 1, players: int = 4,
                 edition: str = "classic", speed: float = 1.0, names: tuple[str, ...] = (),
                 leds: Any = None, camera_view: Any = None, reader: Any = None,
                 pause_after_game: float = 12.0,
                 on_game_over: Callable[[GameSession], None] | None = None) -> None:
        super().__init__()
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
        #: the game the simulated table plays (the session's game key when it began)
        self._driving: tuple[int, str | None] | None = None

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
        self._driving = self.session.game_key
        self.games += 1

    def _elsewhere(self) -> bool:
        """Whether the page shows another game than the simulated table plays: one set
        up on the page (played by hand there), or one replayed from photos. The table
        waits (its moves went into that game, each out of turn) until the page's game
        is over, or the page goes back to the table's own (the journal's same id)."""
        if self._driving is None or not self.session.has_game:
            return False
        key = self.session.game_key
        if key == self._driving:
            return False
        if key[1] is not None and key[1] == self._driving[1]:
            self._driving = key  # the table's own game, resumed
            return False
        return True

    name = "table-driver"

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                if self.table is None:
                    self.new_table(resume=self.session.has_game)
                if self._elsewhere():
                    if self.session.state.is_over and not self.session.from_photos:
                        self.new_table()  # the page's game played out: the table's next
                    elif self._stop.wait(0.5):
                        return
                    continue
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


class StopSignals:
    """SIGINT and SIGTERM asking the main loop to stop (installed by ``with``, the
    handlers before put back after), as a flag the handler sets.

    Not a ``threading.Event``: its ``set`` takes a lock, and a second signal handled
    while the first handler holds it (Ctrl-C pressed twice, a service manager's
    SIGTERM after a Ctrl-C) waits in the same thread for that lock forever: the
    demo hung so, every thread idle, the page still served.
    """

    def __init__(self) -> None:
        self.asked = False
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> StopSignals:
        import signal

        for sig in (signal.SIGINT, signal.SIGTERM):
            self._previous[sig] = signal.signal(sig, self._ask)
        return self

    def __exit__(self, *exc: object) -> None:
        import signal

        for sig, handler in self._previous.items():
            signal.signal(sig, handler)

    def _ask(self, signum: int, frame: Any) -> None:
        self.asked = True

    def wait(self, seconds: float | None = None) -> bool:
        """Sleep until asked to stop (at most ``seconds``); whether asked."""
        end = None if seconds is None else time.monotonic() + seconds
        while not self.asked:
            left = 0.25 if end is None else min(0.25, end - time.monotonic())
            if left <= 0:
                break
            time.sleep(left)
        return self.asked


# -- companion run: the real table ---------------------------------------------

def handle_buttons(session: GameSession, events: list[Any]) -> list[str]:
    """Confirm accepts the open warnings, undo takes back the last move, and
    next round re-lights the last round's scoring (LEDs and page)."""
    done = []
    for event in events:
        name = getattr(event, "name", event)
        if not session.has_game:
            continue
        try:
            done.extend(_button(session, name))
        except JournalFailure as exc:  # the page says so at the next move; the loop goes on
            log.error("%s button: %s", name, exc)
    return done


def _button(session: GameSession, name: str) -> list[str]:
    """What one button press did (nothing: an undo with no move to take back)."""
    if name == "confirm":
        for w in session.snapshot()["warnings"]:
            if not w["resolved"]:
                session.resolve_warning(w["id"])
        return ["confirm"]
    if name == "undo":
        try:
            session.undo()
        except ValueError:  # no move to take back
            return []
        return ["undo"]
    return ["next_round"] if name == "next_round" else []


def run_live(args: Any) -> int:
    """``companion run``: camera -> vision -> rules -> LEDs and page, until stopped."""
    from pathlib import Path

    from calibration import file as calfile
    from companion.commands import ledmap_spec
    from companion.rules.record import config_from_file
    from companion.store import open_data_dir
    from hardware.buttons import TableButtons
    from hardware.camera import open_camera
    from hardware.leds.ledmap import LedMap, builtin
    from hardware.leds.strip import LedStrip

    cal_path = args.calibration or Path(args.data_dir) / "calibration.json"
    if args.calibration and not Path(args.calibration).exists():
        # named, it is wanted: a typo must not start the table uncalibrated (the data
        # folder's own file may be missing: no calibration made yet)
        raise calfile.CalibrationFileError(f"{args.calibration}: no such calibration file")
    # checked before anything starts; the reader then takes the intrinsics as they are
    intrinsics = calfile.camera_intrinsics(calfile.load(cal_path), cal_path)
    # so is the game file: whether or not a game is then resumed (it is not passed
    # over in silence)
    game_config = config_from_file(args.game) if args.game else None
    spec = ledmap_spec(args.ledmap, args.data_dir)
    ledmap = LedMap.load(spec) if spec.endswith(".json") else builtin(spec)
    # the devices next: one missing stops run before the journal is opened
    with ExitStack() as opened:
        camera = opened.enter_context(
            open_camera(args.camera, **folder_camera_options(args.camera)))
        strip = LedStrip(ledmap.count, backend=args.leds, brightness=args.brightness,
                         budget_ma=args.budget_ma)
        opened.callback(strip.close)
        buttons = TableButtons(backend=args.buttons) if args.buttons != "none" else None
        if buttons is not None:
            opened.callback(buttons.close)
        journal = open_data_dir(Path(args.data_dir))
        opened.callback(journal.close)
        return _run(args, intrinsics, game_config, camera, strip, buttons, ledmap, journal)


def folder_camera_options(spec: str | None) -> dict[str, Any]:
    """A folder of photos as the camera reads them as `companion replay` would: HEIC
    too, each file checked before decoding, in game order (EXIF time across cameras,
    a counter that wrapped)."""
    if not spec or spec.partition(":")[0].strip().lower() != "folder":
        return {}
    from pathlib import Path

    from companion.photos import IMAGE_SUFFIXES, ordered_photos
    from companion.vision.reader import load_image

    def decode(path: str) -> Any:
        try:
            return load_image(path)
        except ValueError:  # the reader's one-line refusals: the source skips the file
            return None

    def order(folder: str, names: list[str]) -> list[str]:
        wanted = set(names)
        return [p.name for p in ordered_photos(Path(folder))[0] if p.name in wanted]

    return {"decode": decode, "extensions": tuple(sorted(IMAGE_SUFFIXES)), "order": order}


def _run(args: Any, intrinsics: Any, game_config: Any, camera: Any, strip: Any,
         buttons: Any, ledmap: Any, journal: Any) -> int:
    """The loop of :func:`run_live`, its devices and journal open (closed by it)."""
    import sys

    from companion.leds import TableLeds
    from companion.pipeline import CameraView, VisionReader
    from companion.replay_service import make_replay_service
    from companion.rules.state import make_config
    from companion.store import resume_or_start, table_game_service
    from companion.web import create_app
    from companion.web.server import WebServer
    from hardware.errors import EndOfStream
    from hardware.sdnotify import Notifier

    def first_config() -> Any:
        return game_config if game_config is not None else make_config(4)

    session = GameSession(journal=journal)
    game_id, resumed = resume_or_start(session, journal, first_config)
    if resumed and game_config is not None:
        print(f"companion run: warning: game {game_id} is in progress and goes on; "
              f"{args.game} is not used (a new game is set up on the page)", file=sys.stderr)
    for notice in journal.notices:
        print(f"companion run: warning: {notice}", file=sys.stderr)
    leds = TableLeds(strip, ledmap)
    view = CameraView()
    reader = VisionReader(camera=intrinsics, colors=list(session.state.config.colors))
    notifier = Notifier()
    last_ping = [0.0]
    # every 5 s, or half the unit's WatchdogSec where a drop-in makes it under 10 s
    ping_every = min(5.0, notifier.watchdog_interval() or 5.0)

    def watchdog() -> None:  # fed while frames arrive (and the page stays after a recording)
        now = time.monotonic()
        if now - last_ping[0] > ping_every:
            notifier.watchdog()
            last_ping[0] = now

    controller = Controller(session, reader, leds=leds, on_frame=view.update, watchdog=watchdog,
                            still_seconds=args.still,
                            change_config=None if getattr(args, "arm_timeout", None) is None
                            else {"arm_timeout_seconds": args.arm_timeout})
    app = create_app({"PIN": args.pin} if args.pin else None, session=session, services={
        "camera_view": view, "evidence": journal.evidence,
        "second_looks": controller.second_looks,
        "leds": lambda: strip.last_output or [(0, 0, 0)] * ledmap.count,
        "replay": make_replay_service(session, journal=journal),
        "table_game": table_game_service(session, journal)})
    server = WebServer(app, args.host, args.port, threads=args.threads)

    def press() -> None:
        """The buttons pressed since the last frame; next round shows the last round's
        scoring again (drawn at the next refresh)."""
        if buttons is not None and "next_round" in handle_buttons(session, buttons.drain()):
            leds.replay_round()

    with StopSignals() as stop:  # the handlers before put back when the loop ends
        server.start()
        print(f"companion run: page on http://{args.host}:{server.port}/ ; table PIN "
              f"{app.config['PIN']}", flush=True)
        locked = False
        try:
            first = camera.read()
            notifier.ready(f"camera {camera.describe().get('kind', '')} delivers frames")
            frame = first
            failed = 0
            while not stop.asked:
                try:
                    controller.process(frame.image, frame.timestamp)
                except Exception:  # one frame's fault must not end the table
                    # (a restart would drop the page and the camera, and systemd gives up
                    # restarting after a few): said with its traceback, then every 100th
                    failed += 1
                    if failed == 1 or failed % 100 == 0:
                        log.exception("a frame could not be processed (%d so far)", failed)
                if not locked and controller.stats.frames > 30:
                    camera.lock_exposure()
                    camera.lock_white_balance()
                    locked = True
                press()
                try:
                    frame = camera.read()
                except EndOfStream:
                    # a recorded game (folder:, video:) played to its end: the page stays,
                    # the buttons still work, the strip follows and systemd's watchdog is
                    # still fed (it restarted the companion after 30 s of silence)
                    print("companion run: the camera's recording has no more frames; the "
                          "page stays up until the companion is stopped", file=sys.stderr,
                          flush=True)
                    while not stop.wait(0.1):
                        watchdog()
                        press()
                        controller.refresh_leds()
        finally:
            notifier.stopping()
            server.stop()
    return 0
