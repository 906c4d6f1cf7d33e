"""``companion demo``: a simulated game served on the page, end to end.

For now greedy bots stand in for the table: :class:`BotDriver` plays their
moves into the :class:`GameSession` on a timer (showing each card first, so
the page lights its sites), and starts a new game when one ends. The lead will
swap it for the simulated camera -> vision -> rules pipeline; anything with
``start()`` and ``stop()`` that plays into the session can take its place.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from companion.live import BackgroundDriver, StopSignals
from companion.rules import Build, GameConfig, Pass, Phase, Player, RulesError, make_config
from companion.session import GameSession

log = logging.getLogger(__name__)

DEMO_NAMES = ("Ada", "Ben", "Cleo", "Dev")
DEFAULT_INTERVAL = 1.5  # seconds per move at speed 1


def demo_config(seed: int, players: int = 4, edition: str = "classic") -> GameConfig:
    """A bot game with friendly names; hands are dealt so the bots play real cards."""
    from companion.rules import get_edition
    from companion.rules.state import default_players

    seated = [Player(DEMO_NAMES[i], p.seat, p.colors)
              for i, p in enumerate(default_players(get_edition(edition), players))]
    return make_config(seated, edition=edition, track_cards=True, seed=seed)


class BotDriver(BackgroundDriver):
    """Plays GreedyBot moves into the session on a timer, looping game after game."""

    name = "bot-driver"

    def __init__(self, session: GameSession, *, speed: float = 1.0, seed: int = 0,
                 config_factory: Callable[[int], GameConfig] | None = None,
                 pause_after_game: float = 12.0,
                 on_game_over: Callable[[GameSession], None] | None = None) -> None:
        if speed <= 0:
            raise ValueError("speed must be above 0")
        super().__init__()
        self.session = session
        self.interval = DEFAULT_INTERVAL / speed
        self.seed = seed
        self.games = 0
        self.config_factory = config_factory or demo_config
        self.pause_after_game = pause_after_game / max(1.0, speed)
        self.on_game_over = on_game_over
        self._bots: dict[int, Any] = {}

    def new_game(self) -> None:
        self.session.new_game(self.config_factory(self.seed + self.games),
                              meta={"source": "demo"})
        self.games += 1
        self._bots.clear()

    def _bot(self, player: int) -> Any:
        from companion.bots import GreedyBot

        if player not in self._bots:
            self._bots[player] = GreedyBot((self.seed + self.games) * 1000 + player)
        return self._bots[player]

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                if not self.session.has_game:
                    self.new_game()
                    continue
                if self.session.state.is_over:
                    if self.on_game_over is not None:
                        self.on_game_over(self.session)
                    if self._stop.wait(self.pause_after_game):
                        return
                    self.new_game()
                    continue
                self._stop.wait(self.step())
            except Exception:  # the demo must keep running whatever the page does
                log.exception("bot driver step failed")
                self._stop.wait(self.interval)

    def step(self) -> float:
        """Play one move; returns how long to wait before the next."""
        state = self.session.state
        move = self._bot(state.to_move).choose(state)
        if isinstance(move, Build | Pass):
            # the camera sees the card first: the page and LEDs light its sites
            version = self.session.version
            self.session.see_card(move.seat, move.card)
            if self._stop.wait(self.interval * 0.6):
                return 0.0
            if self.session.version != version + 1:
                return 0.0  # someone changed the game meanwhile: think again
        try:
            self.session.play(move)
        except RulesError as exc:  # a move made on the page got there first
            log.info("bot move %s refused: %s", move, exc)
            return 0.0
        if state.phase is Phase.COMMIT:
            return self.interval * 0.25
        return self.interval * 0.4


# -- the command ---------------------------------------------------------------

def _table_driver(session: GameSession, args: argparse.Namespace,
                  finish: Callable[[GameSession], None]) -> tuple[Any, dict[str, Any]]:
    """The simulated camera -> vision -> rules pipeline, with a fake LED strip."""
    from companion.leds import TableLeds
    from companion.live import TableDriver
    from companion.pipeline import CameraView
    from hardware.leds.backends import FakeBackend
    from hardware.leds.ledmap import serpentine
    from hardware.leds.strip import LedStrip

    ledmap = serpentine()
    strip = LedStrip(ledmap.count, backend=FakeBackend())
    view = CameraView()
    driver = TableDriver(session, seed=args.seed, players=args.players, edition=args.edition,
                         speed=args.speed, names=DEMO_NAMES, leds=TableLeds(strip, ledmap),
                         camera_view=view, on_game_over=finish)
    services = {"camera_view": view,
                "leds": lambda: strip.last_output or [(0, 0, 0)] * ledmap.count,
                "second_looks": lambda: [] if driver.controller is None
                else driver.controller.second_looks()}
    return driver, services


def _open_journal(data_dir: str | None) -> tuple[Any, str | None]:
    """The journal in ``data_dir`` (companion.store), or None with a note why not."""
    if not data_dir:
        return None, None
    try:
        from companion.store import open_data_dir
    except ImportError:
        return None, "--data-dir ignored: the journal (companion.store) is not available"
    return open_data_dir(Path(data_dir)), None


def run_demo(args: argparse.Namespace) -> int:
    """Serve the page and play bot games until SIGINT or SIGTERM."""
    from companion.web import create_app
    from companion.web.server import WebServer

    journal, note = _open_journal(args.data_dir)
    session = GameSession(journal=journal)

    def factory(seed: int) -> GameConfig:
        return demo_config(seed, args.players, args.edition)

    factory(args.seed)  # a bad --edition / --players fails now, in one line
    resumed = False
    if journal is not None:
        from companion.store import resume_or_start

        if args.driver == "table":
            from companion.simtable import SimTable

            def first() -> GameConfig:
                return SimTable(seed=args.seed, players=args.players, edition=args.edition,
                                names=DEMO_NAMES).companion_config()
        else:
            def first() -> GameConfig:
                return factory(args.seed)
        game_id, resumed = resume_or_start(session, journal, first)
        for notice in journal.notices:
            print(f"companion demo: warning: {notice}", file=sys.stderr)

    def finish(sess: GameSession) -> None:
        if journal is not None and sess.game_id:
            journal.finish(sess.game_id)

    services: dict[str, Any] = {}
    if journal is not None:
        from companion.store import table_game_service

        services["evidence"] = journal.evidence
        services["table_game"] = table_game_service(session, journal)
    driver: Any
    if args.driver == "table":
        driver, table_services = _table_driver(session, args, finish)
        services.update(table_services)
    else:
        driver = BotDriver(session, speed=args.speed, seed=args.seed, config_factory=factory,
                           on_game_over=finish)
        if journal is not None:
            driver.games = 1  # resume_or_start used the first seed
    from companion.replay_service import make_replay_service

    services["replay"] = make_replay_service(session, journal=journal)
    app = create_app({"PIN": args.pin} if args.pin else None, session=session,
                     services=services)
    try:
        server = WebServer(app, args.host, args.port, threads=args.threads)
    except OSError as exc:
        from companion.cli import CommandError

        if journal is not None:
            journal.close()
        raise CommandError(f"cannot serve on {args.host}:{args.port}: "
                           f"{exc.strerror or exc} (is another companion running?)") from None

    with StopSignals() as stop:  # the handlers before put back when it ends
        server.start()
        driver.start()
        host = "localhost" if args.host in ("127.0.0.1", "::1") else args.host
        print(f"companion demo: the page is on http://{host}:{server.port}/", flush=True)
        print(f"companion demo: table PIN {app.config['PIN']} (changing the game needs it)",
              flush=True)
        if note:
            print(f"companion demo: {note}", file=sys.stderr, flush=True)
        if journal is not None:
            print(f"companion demo: journal in {args.data_dir}"
                  f"{' (resumed the unfinished game)' if resumed else ''}", flush=True)
        if args.driver == "table":
            print("companion demo: a simulated camera films a bot game; every move is read by "
                  "the vision pipeline; Ctrl-C stops", flush=True)
        else:
            print("companion demo: bots play one move every "
                  f"{driver.interval:.1f} s; Ctrl-C stops", flush=True)
        try:
            stop.wait()
        finally:
            driver.stop()
            server.stop()
            if journal is not None:
                journal.close()
    print("companion demo: stopped", flush=True)
    return 0
