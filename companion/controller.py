"""The live table: camera -> vision -> rules -> LEDs and page.

The controller owns no game logic. Each frame passes a cheap motion gate; a
moving hand keeps the scene "moving" and is never read. Once the scene has
been still for a short time, and no arm rests over the board (compared with
the last scene read, companion.vision.change.ArmWatch), one full reading is
taken and the rules engine explains it (companion.tracking); the session
records the move and the LEDs follow the session.
"""

from __future__ import annotations

import functools
import inspect
import logging
import threading
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from companion.rules import (
    Block,
    Build,
    Card,
    Commit,
    Phase,
    RulesError,
    Seat,
    Site,
    SiteView,
    apply_move,
    check_move,
    is_legal,
    legal_builds,
)
from companion.rules.board import MAX_STOREYS, all_sites
from companion.session import GameSession, JournalFailure
from companion.tracking import (
    MAX_SUGGESTED,
    Decision,
    best_build,
    committed,
    decide,
    stack_card,
    stacked_pair,
)
from companion.vision.change import ArmWatch, DiffMotionGate
from companion.vision.errors import CameraFileError, MirroredError, TooSmallError
from companion.vision.geometry import view_advice

__all__ = ["ArmWatch", "Controller", "ControllerStats", "DiffMotionGate", "pose_shift_px"]

log = logging.getLogger(__name__)


class ReadingLike(Protocol):
    """What the controller takes from a reading (read-only, so any reading's own
    containers fit)."""

    @property
    def sites(self) -> Mapping[Site, SiteView]: ...
    @property
    def unseen(self) -> Sequence[Site]: ...
    @property
    def cards(self) -> Mapping[Seat, Any]: ...
    @property
    def pose(self) -> Any: ...


class Reader(Protocol):
    """Reads a still frame (companion.pipeline.VisionReader adapts the vision reader).

    A reader that also takes ``height_range=`` (site -> lowest and highest height)
    is given what the game record allows each site.
    """

    def __call__(self, image: np.ndarray, previous_pose: Any = None) -> ReadingLike: ...


class MotionGate(Protocol):
    """Says whether anything moves in a frame (cheap; runs on every frame)."""

    def update(self, image: np.ndarray, timestamp: float) -> bool: ...


class LedSink(Protocol):
    def show_guidance(self, guidance: dict[str, Any] | None, warning_sites: Sequence[int],
                      state: Any) -> object: ...


@dataclass
class ControllerStats:
    frames: int = 0
    moving_frames: int = 0
    readings: int = 0
    moves: int = 0
    warnings: int = 0
    bumps: int = 0  # camera (or board) moved: pose re-estimated
    arm_frames: int = 0  # still frames not read: an arm rests over the board
    arm_timeouts: int = 0  # read anyway after arm_watch.timeout_seconds
    arm_rests: int = 0  # of those, read over an arm at rest: nothing decided from them
    arm_fixtures: int = 0  # read: the same change from outside the board, scene after scene
    takebacks: int = 0  # the last build taken back at the table, out of the record
    read_seconds: list[float] = field(default_factory=list)
    decide_latency: list[float] = field(default_factory=list)  # still -> move recorded
    fit_seconds: list[float] = field(default_factory=list)  # each new-block fit
    revisions: int = 0  # doubtful builds revised when the next block there was fitted
    not_saved: int = 0  # scenes whose move the journal refused (tried again)
    disturbed: int = 0  # changes no move explains, the players told (a block knocked off)
    restored: int = 0  # sites put back as they were before such a change


@dataclass(frozen=True)
class _Fitted:
    """The new block fitted in the last still scene and how it settled."""

    site: Site
    doubts: bool  # the move is doubtful
    decided: bool  # the fit (not the reading) decided it
    base: int  # the record's tower under it
    #: (storeys, colour) -> weighed total, when the reader's scores were weighed in
    totals: Mapping[tuple[int, str], float] | None = None
    #: the fit itself, on the scene's towers (None when a revision changed the tower
    #: under it): a second look at the same site need not fit it again
    fit: Any = None


@dataclass(frozen=True)
class _Scene:
    """The last two still scenes compared: what changed per site, for a second look."""

    before: np.ndarray
    after: np.ndarray
    pose: Any
    heights: Mapping[Site, int]  # the record's towers before the change
    scores: Sequence[Any]  # vision.sitechange.SiteChange, highest first


@dataclass
class _Look:
    """One still scene being explained. The state, views and unseen sites follow
    the record as a build missed or revised on the way is recorded."""

    image: np.ndarray
    reading: ReadingLike
    state: Any
    views: dict[Site, SiteView]
    unseen: list[Site]
    new_cards: dict[Seat, Card]
    pixel_site: Site | None
    #: what the second looks made of the scene on the way: the site of the last build
    #: taken back (its change explained), a thing set down over these sites
    #: (:meth:`_set_down`)
    took_back: Site | None = None
    set_aside: frozenset[Site] = frozenset()
    #: sites whose look no move explains (a thing set down there, a block knocked
    #: off): what is built there may not show, as at a site out of sight
    disturbed: frozenset[Site] = frozenset()

    def out_of_sight(self) -> list[Site]:
        """The sites where a build may not show: those the reading left unseen and
        those disturbed. Every decision on this scene, first or second look, takes
        the same ones."""
        hidden = list(self.reading.unseen)
        return hidden + sorted(self.disturbed - set(hidden), key=lambda s: s.index)

    def decide(self, cards_read: Mapping[Seat, Card] | None = None,
               views: Mapping[Site, SiteView] | None = None) -> Decision:
        return decide(self.state, self.views if views is None else views, self.unseen,
                      self.new_cards, self.pixel_site, out_of_sight=self.out_of_sight(),
                      cards_read=cards_read)


def _explained(look: _Look) -> tuple[Site, ...]:
    """The sites whose change in this scene a second look has explained already: the
    last build's, taken back (its site looks as before it), is no one's new block."""
    return () if look.took_back is None else (look.took_back,)


def _out_of_turn(decision: Decision, state: Any) -> Build | None:
    """The build of ``decision`` if it is by another player than the one to move."""
    move = decision.move
    if decision.kind == "move" and decision.reason == "wrong-turn" \
            and isinstance(move, Build) and move.seat != state.seat:
        return move
    return None


def _stacked_site(decision: Decision) -> Site | None:
    """The site two of a "several" decision's suggested builds stand at, one on the
    other, if one does."""
    if decision.kind != "several" or not decision.suggested:
        return None
    sites = [m.site for m in decision.suggested if isinstance(m, Build)]
    twice = {site for site in sites if sites.count(site) > 1}
    return twice.pop() if len(twice) == 1 else None


def _plays(decision: Decision, seat: Seat, card: Card | None) -> bool:
    """Whether ``decision`` has ``seat`` play ``card`` first (True without a card)."""
    if card is None:
        return True
    first = decision.suggested[0] if decision.suggested else decision.move
    return getattr(first, "seat", None) == seat and getattr(first, "card", None) == card


def _next_card_builds_there(state: Any, move: Build, new_cards: Mapping[Seat, Card]) -> bool:
    """Whether the player after ``move``'s shows a new card that builds at its site."""
    if move.seat != state.seat or not any(seat != move.seat for seat in new_cards):
        return False  # (most scenes: no other new card, and no position to work out)
    try:
        after = apply_move(state, move, check=False)
    except RulesError:
        return False
    card = new_cards.get(after.seat)
    return (after.phase is Phase.BUILD and card is not None and after.seat != move.seat
            and card.site_cell(after.seat) == (move.site.row, move.site.col))


@dataclass(frozen=True)
class _LastScene:
    """The scene the last moves were recorded from, while no move came since."""

    scene: _Scene
    game: tuple[int, str | None]  # GameSession.game_key
    ply: int  # the record's length after them
    sites: tuple[Site, ...]  # where they were built


@dataclass(frozen=True)
class _OffColour:
    """The last build, recorded although the colour read on top was another."""

    game: tuple[int, str | None]  # GameSession.game_key
    ply: int
    move: Build
    before: Any  # the position it was played from
    new_cards: Mapping[Seat, Card]  # the new cards seen with it


@dataclass(frozen=True)
class _Doubt:
    """A doubtful build, kept until the next block at its site is fitted (found
    again in the record by its site: ``doubt_ply``)."""

    game: tuple[int, str | None]  # GameSession.game_key
    move: Build
    base: int
    totals: Mapping[tuple[int, str], float]


def doubt_ply(moves: Sequence[Any], move: Build) -> int | None:
    """Where the doubtful build ``move`` now stands in the record: the last build at
    its site, if that is still ``move`` (None: corrected by the players, or built
    on since). Found by its site, not its number: the players may have inserted
    or deleted a move before it meanwhile."""
    ply = last_build_at(moves, move.site)
    return ply if ply is not None and moves[ply] == move else None


def last_build_at(moves: Sequence[Any], site: Site) -> int | None:
    """Where the last build at ``site`` stands in the move list (None: no build there)."""
    return next((n for n in range(len(moves) - 1, -1, -1)
                 if isinstance(moves[n], Build) and moves[n].site == site), None)


def builds_of(moves: Sequence[Any]) -> tuple[Build, ...]:
    return tuple(m for m in moves if isinstance(m, Build))


def pose_shift_px(before: Any, after: Any) -> float:
    """How far (pixels) the board's sites moved in the image between two poses.

    0 when either pose is unknown or they differ in image size (nothing to compare).
    """
    if before is None or after is None or before is after \
            or not hasattr(before, "project") or not hasattr(after, "project"):
        return 0.0
    if getattr(before.intrinsics, "size", None) != getattr(after.intrinsics, "size", None):
        return 0.0
    from companion.vision.geometry import board_geometry

    g = board_geometry()
    pts = np.column_stack([g.site_xy, np.zeros(len(g.site_xy))])
    return float(np.max(np.linalg.norm(before.project(pts) - after.project(pts), axis=1)))


class Controller:
    """Drives one live game from frames."""

    def __init__(self, session: GameSession, reader: Reader, *,
                 gate: MotionGate | None = None, leds: LedSink | None = None,
                 still_seconds: float = 0.2, min_still_seconds: float = 0.15,
                 auto_commit: bool = True,
                 on_frame: Callable[[np.ndarray, Any], None] | None = None,
                 watchdog: Callable[[], None] | None = None,
                 bump_px: float = 3.0, arm_watch: ArmWatch | None = None,
                 change_config: Mapping[str, Any] | None = None) -> None:
        self.session = session
        self.reader = reader
        self.gate = gate or DiffMotionGate()
        self.leds = leds
        self.still_seconds = still_seconds
        self.min_still_seconds = min_still_seconds
        self.auto_commit = auto_commit
        self.on_frame = on_frame
        self.watchdog = watchdog
        self.bump_px = bump_px
        self.change = {**_change_config(), **(change_config or {})}
        self.arm_watch = arm_watch if arm_watch is not None else ArmWatch(self.change)
        self._reader_takes_range = _takes(reader, "height_range")
        #: the reader, called with ``height_range=`` when it takes one
        self._ranged: Callable[..., ReadingLike] = reader
        self._arm_since: float | None = None
        #: the next reading is one the arm watch held back, then let through: after
        #: its timeout ("timeout": an arm at rest, or a thing just laid at the edge) or
        #: as the same thing at the edge again ("fixture"); None: not held
        self._held: str | None = None
        #: the last two readings: each held or not (as ``_held``)
        self._held_reads: tuple[str | None, str | None] = (None, None)
        #: the first frames (the arm watch's thumbnails) of the last still scenes held
        #: back as an arm (since one was read), each with how many held scenes showed
        #: its change from outside the board
        self._arm_scenes: list[tuple[np.ndarray, int]] = []
        self.stats = ControllerStats()
        self._still_since: float | None = None
        self._dirty = True
        #: a refused move is tried again this long after (the card stays full a while)
        self.journal_retry_seconds = 5.0
        self._retry_at = -np.inf
        self._unsaved: int | None = None  # the players' warning while the journal refuses
        self._camera_refused = False  # told the players their camera file does not fit
        self._small_told = False  # told the players their camera shows the board small
        self._view_told = False  # told them it looks at the board too steeply or too low
        self._pose: Any = None
        self._cards: dict[Seat, Any] = {}
        #: the game whose played cards ``_cards`` was last seeded with (:meth:`_known_cards`)
        self._cards_game: tuple[int, str | None] | None = None
        self._prev_still: np.ndarray | None = None
        #: recent still scenes read, each with the builds the record then had: the
        #: scene before the last build, to see it taken back (by the builds, not a
        #: count of entries: the round's block selections, and a move the players
        #: insert on the page, shift that)
        self._stills: list[tuple[tuple[Build, ...], np.ndarray]] = []
        self._last_still: tuple[np.ndarray, float] | None = None
        self._stop = threading.Event()
        self.last_reading: ReadingLike | None = None
        self.new_block = _new_block_config()
        #: the new block fitted in the last still scene
        self._fitted: _Fitted | None = None
        self._scene: _Scene | None = None
        self._last: _LastScene | None = None
        self._off_colour: _OffColour | None = None
        #: doubtful builds by site, to weigh again when the next block there is fitted
        self._doubted: dict[Site, _Doubt] = {}
        #: sites a change no move explained disturbed (a block knocked off its tower,
        #: something set down on the board), each with the still scene from before it
        self._disturbed: dict[Site, np.ndarray] = {}
        #: the game they belong to, and the players' open warning about them
        self._disturbed_game: tuple[int, str | None] | None = None
        self._disturbance: int | None = None
        #: how often the strip is drawn again between readings (:meth:`refresh_leds`)
        self.led_refresh_seconds = 0.1
        self._leds_at = -np.inf

    @property
    def weighing_again(self) -> dict[Site, Build]:
        """The doubtful builds kept to be weighed again when the next block at their
        site is fitted (:meth:`_reconsider`), by site."""
        return {site: doubt.move for site, doubt in self._doubted.items()}

    def second_looks(self) -> list[int]:
        """The plies of the doubtful builds kept to be weighed again, as the record
        numbers them now: the page tells the players the camera will look at them
        once more when the next block is built there (called from the page's
        threads, so it works on a copy)."""
        doubts = list(self._doubted.values())
        current = self.session.current() if doubts else None
        if current is None:
            return []
        game, record = current
        moves, effective = record.moves, record.effective()
        plies = (doubt_ply(moves, d.move) for d in doubts if d.game == game)
        return sorted(p for p in plies if p is not None and not effective[p].agreed)

    # -- one frame -----------------------------------------------------------
    def process(self, image: np.ndarray, timestamp: float) -> str:
        """Feed one frame; returns what happened: moving, waiting, idle, read (or
        not-saved: the journal refused the move, which is tried again)."""
        self.stats.frames += 1
        if self.watchdog is not None:
            self.watchdog()
        try:
            result = self._process(image, timestamp)
        except JournalFailure as exc:
            self._not_saved(exc, timestamp)
            return "not-saved"
        finally:
            self.refresh_leds()
        if self._unsaved is not None and result in ("read", "read-before-motion"):
            # saved again: the players' warning about it goes
            self.session.resolve_warning(self._unsaved)
            self._unsaved = None
            log.warning("the journal takes the game's moves again")
        return result

    def _not_saved(self, exc: JournalFailure, timestamp: float) -> None:
        """The journal refused the scene's move (the record is as it was): the scene is
        read again once it has been still for ``journal_retry_seconds`` more, and the
        players are told once, not at each try."""
        self.stats.not_saved += 1
        self._dirty = True
        self._still_since = None
        self._last_still = None
        self._retry_at = timestamp + self.journal_retry_seconds
        if self._unsaved is None and self.session.has_game:
            log.error("%s: the move is held and tried again", exc)
            self._unsaved = self.session.report(
                "not-saved", f"{exc}: the companion keeps the move and tries again; "
                "free space on its card").id

    def _process(self, image: np.ndarray, timestamp: float) -> str:
        self._auto_commit()
        if self.gate.update(image, timestamp):
            self.stats.moving_frames += 1
            result = "moving"
            last = self._last_still
            if self._dirty and last is not None and self._still_since is not None \
                    and last[1] - self._still_since >= self.min_still_seconds \
                    and not self._arm_over_board(last[0], last[1]):
                # The next hand came before the full pause: read the short still
                # scene now rather than merge two moves into one change.
                self._dirty = False
                self._read(last[0], last[1])
                result = "read-before-motion"
            self._still_since = None
            self._last_still = None
            self._arm_since = None
            self._dirty = True
            return result
        if self._still_since is None:
            self._still_since = timestamp
        self._last_still = (image, timestamp)
        if not self._dirty:
            return "idle"
        if timestamp - self._still_since + 1e-6 < self.still_seconds or timestamp < self._retry_at:
            return "waiting"
        if self._arm_over_board(image, timestamp):
            self.stats.arm_frames += 1
            return "arm"
        self._dirty = False
        self._last_still = None
        self._read(image, timestamp)
        return "read"

    def _arm_over_board(self, image: np.ndarray, timestamp: float) -> bool:
        """A hand resting still passes the motion gate: hold it back, for a while."""
        self._held = None
        if not self.arm_watch.check(image):
            self._arm_since = None
            self._arm_scenes = []
            return False
        if self._arm_since is None:
            self._arm_since = timestamp
            last = self.arm_watch.last
            log.info("not read: %s", last.reason if last else "an arm over the board")
            # the same change from outside the board as in a scene held back before
            # (hands came and went meanwhile): a thing at the edge, a camera turned.
            # The last few held scenes count, not only the last: a hand resting a
            # moment after each build makes every other held scene differ
            seen = self.arm_watch.seen
            assert seen is not None  # (held back: the watch had a thumbnail of it)
            repeats = 1 + max((n for held, n in self._arm_scenes
                               if self.arm_watch.same_outside(held, seen)), default=0)
            self._arm_scenes = [*self._arm_scenes[-2:], (seen, repeats)]
            if 0 < self.arm_watch.fixture_scenes <= repeats:
                log.warning("the same change from outside the board in %d still scenes "
                            "in a row: not an arm; reading it", repeats)
                self.stats.arm_fixtures += 1
                self._arm_since = None
                self._arm_scenes = []
                self._held = "fixture"  # (see ArmWatch.settle)
                return False
        if timestamp - self._arm_since + 1e-6 < self.arm_watch.timeout_seconds:
            return True
        log.warning("the scene has changed from outside the board for %.0f s: reading it",
                    self.arm_watch.timeout_seconds)
        self.stats.arm_timeouts += 1
        self._arm_since = None
        self._held = "timeout"  # read over whatever stays there (see ArmWatch.settle)
        return False

    def _auto_commit(self) -> None:
        """The camera cannot see block selection: record it as undeclared."""
        if not self.auto_commit or not self.session.has_game or self.session.from_photos:
            return
        while self.session.state.phase is Phase.COMMIT:
            self.session.play(Commit(self.session.state.seat, None))

    def _read(self, image: np.ndarray, timestamp: float) -> None:
        """A still scene: read, explained against the record, and recorded."""
        t0 = time.perf_counter()
        reading = self._take_reading(image, t0)
        if reading is None:
            return
        cards = {seat: _as_card(c) for seat, c in reading.cards.items()}
        self._known_cards()
        new_cards = {s: c for s, c in cards.items() if self._cards.get(s) != c}
        seen = dict(self._cards)
        self._cards.update(cards)
        if not self.session.has_game or self.session.from_photos:
            return  # (a game replayed from photos is not the one on the table)
        if self._held_reads[1] == "timeout" and self.change["arm_rest_waits"]:
            # read over an arm at rest (the arm watch timed out): the sites under it
            # read changed (a black tower where the sleeve lies), the block it put down
            # may be hidden, its stack's card too. Nothing is decided from it, and the
            # scene before the arm stays the one the next is compared with: compared
            # with the arm, the sites it leaves would read as changed
            log.info("read over an arm at rest: waiting for it to go")
            self.stats.arm_rests += 1
            self._cards = seen  # (its new cards stay new)
            return
        self.session.set_unseen(list(reading.unseen))
        views, unseen, pixel_site = self._focus(image, reading, self.session.state, new_cards)
        # (an earlier doubtful build may have been revised by the focus)
        look = _Look(image, reading, self.session.state, dict(views), unseen, new_cards,
                     pixel_site, disturbed=frozenset(self._disturbances()))
        decision = self._explain(look)
        try:
            self._record(decision, look, timestamp, t0)
            if look.took_back is None:  # (a build taken back explains its change)
                self._note_disturbed(decision, look.set_aside)
            self._stills = [*self._stills[-2:], (builds_of(self.session.record.moves), image)]
        except JournalFailure:
            self._cards = seen  # the cards seen stay new for the try again
            raise

    def _known_cards(self) -> None:
        """A game this controller has not read before (resumed after a restart, or
        from the journal): the card on top of each seat's stack is the last one the
        record has it play. Before, every card in view was new to a fresh controller,
        and the player to move's own last card, seen again, was recorded as a pass
        with it."""
        current = self.session.current()
        if current is None or current[0] == self._cards_game:
            return
        self._cards_game = current[0]
        for entry in current[1].effective():
            card = getattr(entry.move, "card", None)
            if card is not None:
                self._cards[entry.move.seat] = card

    def _take_reading(self, image: np.ndarray, t0: float) -> ReadingLike | None:
        """The still frame read (each site held to what the record allows), the pose
        followed and the arm watch settled on it; None when no board is found."""
        try:
            if self._reader_takes_range and self.session.has_game:
                reading = self._ranged(image, self._pose, height_range=self._height_range())
            else:
                reading = self.reader(image, self._pose)
        except (CameraFileError, TooSmallError, MirroredError) as exc:
            # the calibration does not fit the camera's pictures, or the camera shows
            # the board too small or mirrored: every frame fails alike, so the players
            # are told once (not a line per frame in a log)
            if not self._camera_refused:
                self._camera_refused = True
                log.error("frames cannot be read: %s", exc)
                if self.session.has_game:
                    self.session.report("camera", f"The camera's frames cannot be read: {exc}")
            self._dirty = True
            return None
        except ValueError as exc:  # board not found: a hand, a bump, darkness
            log.info("frame not read: %s", exc)
            self._dirty = True
            return None
        self.stats.readings += 1
        self.stats.read_seconds.append(time.perf_counter() - t0)
        self.last_reading = reading
        small = getattr(reading, "small", None)
        if small and not self._small_told and self.session.has_game:
            # read all the same, less surely: a cheap webcam's 640 x 480 mode, a camera
            # mounted far; the players can fix it, so they are told once
            self._small_told = True
            log.warning("%s", small)
            self.session.report("camera", f"{small[:1].upper()}{small[1:]}; move the camera "
                                          "closer or raise its resolution")
        elevation = (None if self._view_told  # (told once: not worked out again)
                     else getattr(reading.pose, "elevation_deg", None))  # (a fake's: none)
        if elevation is not None and self.session.has_game:
            # a camera looking down too steeply reads many heights a storey off or not at
            # all, one too low hides sites behind tall towers: told once, as `companion
            # doctor` tells it (the moves are still decided from the record and the fit of
            # each new block)
            advice = view_advice(float(elevation))
            if advice is not None:
                self._view_told = True
                log.warning("%s", advice)
                self.session.report("camera", f"{advice[:1].upper()}{advice[1:]}")
        if pose_shift_px(self._pose, reading.pose) > self.bump_px:
            # the earlier still frame no longer lines up: trust the whole reading once
            log.warning("the camera or the board moved: pose re-estimated")
            self.stats.bumps += 1
            self._prev_still = None
            self._stills = []
            self._disturbed, self._disturbance = {}, None  # (they no longer line up)
        self._pose = reading.pose
        self.arm_watch.settle(image, reading.pose, self._towers(reading),
                              held=self._held is not None)
        # this scene and the one before read over an arm (or a thing at the edge): a
        # change no move explains there is the arm's, come or gone
        self._held_reads = (self._held_reads[1], self._held)
        self._held = None
        if self.on_frame is not None:
            self.on_frame(image, reading)
        return reading

    def _explain(self, look: _Look) -> Decision:
        """The scene's decision: the rules' ranking of the reading, then the second
        looks, each tried only when the scene does not already explain itself (a
        build out of turn, a card that builds elsewhere, one change where two
        blocks may stand). A build the mover made out of sight is recorded on the
        way (the decision that follows is the next player's)."""
        decision = self._taken_back(look, look.decide(self._cards))
        decision = self._record_missed(look, decision)
        decision = self._unseen_build_shown(look, decision)
        decision = self._taller_pair(look, decision)
        decision = self._pair_out_of_turn(look, decision)
        decision = self._revised_pair(look, decision)
        decision = self._card_elsewhere(look, decision)
        decision = self._repeated(look, self._next_players_block(look, decision))
        return self._set_down(look, self._without_its_card(look, decision))

    def _set_down(self, look: _Look, decision: Decision) -> Decision:
        """A thing set down on the board (a cup, a phone, a box) while a block was
        built: the thing's sites were taken for a second build (reported, and
        recorded when some pair of builds explained the two changes, else nothing
        was), and every move after was recorded one turn off. Where the sites that
        changed by ``disturbed_group_score`` or more hold one group of
        ``disturbed_group_sites`` or more next to each other (no block changes so
        many so much: its shadow and silhouette change a few sites round it less)
        and one changed site lies apart from it (the sites read changed next to the
        group are the thing's too: its edge changed them less), the scene is decided
        with that group as the record has it: the build is recorded, and the group
        is a disturbance (:meth:`_note_disturbed`)."""
        scene = self._scene
        if decision.kind != "several" or scene is None:
            return decision
        from companion.vision.sitechange import clusters

        least = float(self.change["disturbed_group_score"])
        groups = [group for group in clusters([c.site for c in scene.scores
                                               if c.score >= least])
                  if len(group) >= int(self.change["disturbed_group_sites"])]
        if len(groups) != 1:
            return decision
        # the sites read changed next to the group are the thing's too (its edge over
        # them changed them less: a phone lying across a city)
        group = next(g for g in clusters([*groups[0], *decision.changed]) if groups[0] <= g)
        rest = [site for site in decision.changed if site not in group]
        if len(rest) != 1:
            return decision
        record = look.state.board.views()
        views = {site: view for site, view in look.views.items() if site not in group}
        views.update({site: record[site] for site in group if site in record})
        again = look.decide(self._cards, views)
        if again.kind != "move" or getattr(again.move, "site", None) != rest[0]:
            return decision
        log.info("a thing set down over %s: %s recorded apart from it",
                 ", ".join(sorted(site.name for site in group)), again.move)
        look.views = views
        look.set_aside = frozenset(group)
        return again

    def _repeated(self, look: _Look, decision: Decision) -> Decision:
        """The last build again, its card not played anew: the reading cannot put a
        tower lower than the record's, so a block fallen off the tower just built
        (lying beside it) read as the same block built again, out of turn. No seat
        plays one card twice without a new one on its stack: no move, and the change
        is the players' to set right (:meth:`_note_disturbed`)."""
        move = decision.move
        if decision.kind != "move" or not isinstance(move, Build) \
                or move.seat in look.new_cards:
            return decision
        entries = self.session.record.effective()
        if not entries or entries[-1].move != move:
            return decision
        log.info("%s again, with no new card: not a move", move)
        return Decision("none", message=f"{move} again, with no new card")

    def _without_its_card(self, look: _Look, decision: Decision) -> Decision:
        """A build out of turn by a player whose stack shows no new card, and whose
        card on top does not build there, is no move: a block knocked off a tower
        and lying on another site read as that player's build (SimTable's fall,
        seed 4: East's black 4 off Frankfurt S onto Frankfurt C, recorded as East's
        c11 out of turn, marked, and South's move after it one turn late). Each
        build takes a card from the hand onto the stack; the change is the
        players' to set right (:meth:`_note_disturbed`)."""
        move = _out_of_turn(decision, look.state)
        if move is None or move.seat in look.new_cards:
            return decision
        top = self._cards.get(move.seat)
        if top is None or top == move.card:
            return decision  # (no card read there yet, or the same card played again)
        log.info("%s out of turn, but %s's stack shows %s: not a move", move, move.seat.name,
                 top)
        return Decision("none", message=f"{move} out of turn, with no new card")

    def _record_missed(self, look: _Look, decision: Decision) -> Decision:
        """The player to move built out of sight, and the next player's build is what
        shows: the one the card says is recorded, and the scene explained again
        (and so each build out of sight in turn before the one seen). Its storeys
        are a guess: the move is marked so, as a build the camera never saw is,
        beside the warning that names it."""
        if decision.kind != "missed" or decision.move is None:
            return decision
        site = decision.changed[0].name if decision.changed else None
        self.session.report(decision.reason or "unseen-move", decision.message, site)
        self.session.play(decision.move, allow_illegal=True, doubtful=True, never_shown=True)
        self.stats.moves += 1
        self.stats.warnings += 1
        self._auto_commit()
        look.state = self.session.state
        look.unseen = [*look.unseen, *decision.changed]
        again = look.decide(self._cards)
        # the next player's build out of sight too: tracking chains them only up to
        # the build seen, so this ends there
        return self._record_missed(look, again) if again.kind == "missed" else again

    def _taken_back(self, look: _Look, decision: Decision) -> Decision:
        """The last build taken back by hand (the player changed their mind, or moves
        the block to another site): its site looks again as it did before the build,
        and changed since the last still scene. The tower read there cannot be lower
        than the record's, so the change read as a new block, or the block moved
        read as a second build out of turn, and the tower taken back stayed in the
        record. The build is taken out of the record (the players told), and the
        scene decided again."""
        scene = self._scene
        entries = self.session.record.effective()
        if scene is None or not entries or scene.pose is None:
            return decision
        ply = len(entries) - 1
        last = entries[ply].move
        if not isinstance(last, Build) or entries[ply].agreed:
            return decision
        builds = builds_of([e.move for e in entries])
        before = next((frame for seen, frame in reversed(self._stills)
                       if seen == builds[:-1]), None)
        if before is None or before.shape != look.image.shape:
            return decision
        cfg = self.change
        since = {c.site: c.score for c in scene.scores}
        # (no guard for a bumped camera or a lamp: the site would not look as before)
        if since.get(last.site, 0.0) < float(cfg["focus_clear_score"]):
            return decision
        from companion.vision.sitechange import site_change_scores

        earlier = self.session.record.state_at(ply)
        heights = {site: v.height for site, v in earlier.board.views().items()}
        back = {c.site: c.score for c in site_change_scores(before, look.image, scene.pose,
                                                              heights)}
        if back.get(last.site, np.inf) > float(cfg["takeback_score"]):
            return decision
        try:
            self.session.correct(ply, None, "taken back at the table", expect=last)
        except RulesError:
            return decision  # the players changed the record meanwhile
        message = (f"{last} was taken back at the table (its site looks as before it): "
                   "removed from the record; put it back with the page if it stands")
        log.info("%s", message)
        self.session.report("taken-back", message, last.site.name)
        self.stats.takebacks += 1
        look.took_back = last.site
        self._doubted.pop(last.site, None)
        # the seat's card: the one the record now has it play last (taken back too, the
        # card on its stack is no longer new)
        self._cards_game = None
        self._known_cards()
        look.new_cards = {seat: card for seat, card in look.new_cards.items()
                          if self._cards.get(seat) != card}
        look.state = self.session.state
        view = look.state.board.views().get(last.site)
        if view is None:
            look.views.pop(last.site, None)
        else:
            look.views[last.site] = view
        return look.decide(self._cards)

    def _unseen_build_shown(self, look: _Look, decision: Decision) -> Decision:
        """A build recorded unseen (its site hidden, by an arm resting over it, say: the
        storeys a guess, marked never shown) comes into view: more of that player's
        colour on it, with the same card on their stack, is that build's block, not a
        second build out of turn. The build is corrected to what shows, the players
        told, and the scene decided again."""
        seen = decision.move
        if decision.kind != "move" or decision.legal or not isinstance(seen, Build) \
                or seen.seat == look.state.seat:
            return decision
        record = self.session.record
        entries = record.effective()
        ply = last_build_at([e.move for e in entries], seen.site)
        if ply is None:
            return decision
        guessed, entry = entries[ply].move, entries[ply]
        if not (isinstance(guessed, Build) and entry.never_shown and not entry.agreed
                and (guessed.seat, guessed.card, guessed.block.color)
                == (seen.seat, seen.card, seen.block.color)
                and guessed.block.storeys + seen.block.storeys <= MAX_STOREYS):
            return decision
        shown = Build(guessed.seat, guessed.card, guessed.site,
                      Block(guessed.block.color,
                            guessed.block.storeys + seen.block.storeys))
        try:
            check_move(record.state_at(ply), shown)
            record.with_correction(ply, shown).replay()
        except RulesError:
            return decision  # the rules never allowed that block, or a later move then
        try:
            self.session.correct(ply, shown, "shown by the camera", expect=guessed,
                                 doubtful=True)
        except RulesError:
            return decision  # the players changed the record meanwhile
        message = (f"{guessed.block.color} {guessed.block.storeys} at {seen.site.name}, "
                   f"recorded while the site was out of sight, shows as "
                   f"{shown.block.color} {shown.block.storeys}: revised; check it")
        log.info("%s", message)
        self.session.report("revised", message, seen.site.name, ply=ply)
        self.stats.revisions += 1
        look.state = self.session.state
        return look.decide(self._cards)

    def _taller_pair(self, look: _Look, decision: Decision) -> Decision:
        """Two blocks stacked under one hand can stand taller than the one block the
        reading was held to (the build seen is the next player's, out of turn; or
        the next player shows a new card for this very site): that site read again
        allowing two, and the pair kept (the mover's build and the next player's
        on it) if the rules and that reading make one of it. The same where several
        builds were suggested, two of them stacked at one site (three players built
        at once): the reading held that site to one block."""
        site = _stacked_site(decision)
        if site is None:
            built = decision.move if decision.kind == "move" \
                and isinstance(decision.move, Build) else None
            if built is None or (_out_of_turn(decision, look.state) is None
                                 and not _next_card_builds_there(look.state, built,
                                                                 look.new_cards)):
                return decision
            site = built.site
        view = self._wide_view(look.image, look.reading, site)
        if view is None or view == look.views.get(site):
            return decision
        again = look.decide(self._cards, {**look.views, site: view})
        # (a "several" decision at one site is always a pair suggested)
        return again if again.kind == "several" and again.suggested else decision

    def _pair_out_of_turn(self, look: _Look, decision: Decision) -> Decision:
        """A build out of turn: the player to move built too, but their block changed
        few pixels (a storey on a tower, mostly hidden). Looked for where their
        new card builds, then in the scene before (beside the build recorded from
        it), then under the build seen (the same card played again)."""
        other = _out_of_turn(decision, look.state)
        if other is None:
            return decision
        for find in (self._pair_with_missed, self._pair_in_scene_before, self._pair_by_sides):
            pair = find(look, other)
            if pair is not None:
                return pair
        return decision

    def _revised_pair(self, look: _Look, decision: Decision) -> Decision:
        """The build before was recorded against the colour on top, which is the
        skipped player's: both built there under one hand (the same card played
        again shows no new card). It is revised into the pair, and the scene
        decided again."""
        off_colour = self._off_colour  # checked against the record: the last move
        if off_colour is None or _out_of_turn(decision, look.state) is None:
            return decision
        revised = self._revise_into_pair(look.reading, look.state, off_colour)
        if revised is None:
            return decision
        was = look.state.board.views().get(revised)
        look.state = self.session.state
        if look.views.get(revised) == was:  # unchanged since: the revised tower
            look.views[revised] = look.state.board.views()[revised]
        return look.decide(self._cards)

    def _card_elsewhere(self, look: _Look, decision: Decision) -> Decision:
        """The mover's new card builds elsewhere: at a site of that card which
        changed about as much, two blocks stacked under one hand may stand taller
        than the reading there was held to (its new top hides the site behind,
        which then changed most). After a build where its card does not build
        (the rules' warning), only in another city: not a site the new tower
        hides in part."""
        state = look.state
        if decision.kind not in ("move", "several") or (
                decision.reason != "wrong-site"
                and _plays(decision, state.seat, look.new_cards.get(state.seat))):
            return decision
        wrong_site = decision.move.site.city \
            if decision.reason == "wrong-site" and isinstance(decision.move, Build) else None
        elsewhere = self._card_site_again(look, wrong_site)
        if elsewhere is None and wrong_site is not None and isinstance(decision.move, Build):
            elsewhere = self._card_site_behind(look, decision.move)
        return decision if elsewhere is None else elsewhere

    def _card_site_behind(self, look: _Look, seen: Build) -> Decision | None:
        """The build seen where the mover's card does not build, and the card's site in
        the same city: a block there, seen past the nearer tower, changes the pixels
        of that tower's volume. When a block at the card's site explains the change
        at least as well as the one seen (their new-block fits, on one scale), the
        scene is decided again with it: the decision if it is in turn and plays that
        card, else None (the build seen stands, with the rules' warning)."""
        state, scene = look.state, self._scene
        card = self._card_of(look.new_cards, state.seat)
        if card is None or scene is None:
            return None
        row, col = card.site_cell(state.seat)
        site = Site(seen.site.city, row, col)
        if site == seen.site:
            return None
        there = self._fit_block(scene.before, scene.after, scene.pose, site, state,
                                look.reading, scene.heights)
        focused = self._fitted
        here = focused.fit if focused is not None and focused.site == seen.site \
            and focused.fit is not None else self._fit_block(
                scene.before, scene.after, scene.pose, seen.site, state, look.reading,
                scene.heights)
        log.info("card site %s: fit %s; build seen at %s: fit %s", site.name, there,
                 seen.site.name, here)
        if there is None or (here is not None and there.score < here.score):
            return None
        from companion.vision.newblock import doubt_totals, settle

        base = scene.heights.get(site, 0)
        read_scores = _read_scores(look.reading, site)
        view, _, decided = settle(there, look.reading.sites.get(site), base, self.new_block,
                                  read_scores)
        views = {**state.board.views(), site: view}
        again = decide(state, views, [s for s in look.unseen if s != site], look.new_cards,
                       site, out_of_sight=look.out_of_sight(), cards_read=self._cards)
        if again.kind != "move" or again.reason is not None \
                or not _plays(again, state.seat, card):
            return None
        # a block seen only past a nearer tower, placed by the card: always for the
        # players to check (and weighed again when the next block there is fitted)
        self._fitted = _Fitted(site, True, decided, base,
                               doubt_totals(there, read_scores, base, self.new_block))
        return again

    def _next_players_block(self, look: _Look, decision: Decision) -> Decision:
        """The next player may have built too, in the same scene, where their new card
        builds: a block on a tower changes too little to count as a second change
        beside the mover's."""
        if decision.kind != "move" or decision.reason is not None \
                or not isinstance(decision.move, Build) \
                or decision.move.seat != look.state.seat:
            return decision
        pair = self._pair_with_next(look, decision.move)
        return decision if pair is None else pair

    def _record(self, decision: Decision, look: _Look, timestamp: float, t0: float) -> None:
        """The decision into the session: a move (marked for the players to check when
        read by a narrow margin), a pair (each marked), or the warning; the LEDs
        follow."""
        state, new_cards = look.state, look.new_cards
        if decision.kind == "none":
            if state.phase is Phase.BUILD and state.seat in new_cards:
                self.session.see_card(state.seat, new_cards[state.seat])
            self._update_leds()
            return
        if decision.kind == "move" and decision.move is not None:
            # a site read by a narrow margin: the page asks the players to look
            moved = getattr(decision.move, "site", None)
            doubtful = moved in set(getattr(look.reading, "doubtful", ()) or ())
            fitted = self._fitted if self._fitted is not None \
                and self._fitted.site == moved else None
            if fitted is not None:
                # the reading's own doubt counts only where the reading stood
                doubtful = fitted.doubts or (doubtful and not fitted.decided)
            # nothing fitted there, and the reading saw no new block (the site out of
            # sight, or its tower as before): the pixels that changed or the card
            # placed it, and its storeys are the smallest that fit the rules, a guess
            guessed = fitted is None and isinstance(decision.move, Build) and (
                decision.move.site in set(look.reading.unseen)
                or look.reading.sites.get(decision.move.site)
                == state.board.views().get(decision.move.site))
            doubtful = doubtful or guessed
            outcome = self.session.play(decision.move, allow_illegal=True, doubtful=doubtful,
                                        never_shown=guessed)
            seen = look.views.get(moved) if isinstance(moved, Site) else None
            self._off_colour = None
            if isinstance(decision.move, Build) and seen is not None \
                    and seen.owner != decision.move.block.color:
                self._off_colour = _OffColour(self.session.game_key,
                                              len(self.session.record.effective()) - 1,
                                              decision.move, state, dict(new_cards))
            if isinstance(moved, Site):
                self._doubted.pop(moved, None)
                if doubtful and fitted is not None and fitted.totals \
                        and isinstance(decision.move, Build):
                    self._doubted[moved] = _Doubt(self.session.game_key, decision.move,
                                                  fitted.base, fitted.totals)
                    # the pages asked for the state when the move was played, before
                    # this: they ask again to say the camera will look once more
                    self.session.announce("second-look", {"site": moved.name})
            self.stats.moves += 1
            if outcome.warning is not None:
                self.stats.warnings += 1
            self.stats.decide_latency.append(
                timestamp - (self._still_since or timestamp) + time.perf_counter() - t0)
        elif decision.kind == "several" and decision.suggested:
            # two builds in one scene (a hand hid the board between them): recorded
            # as the likeliest pair, each marked for the players to check, and the
            # warning names them; the turn order (and the LEDs) stay right
            ply = len(self.session.record.effective())
            for move in decision.suggested:
                self.session.play(move, allow_illegal=True, doubtful=True)
                self._doubted.pop(move.site, None)
                self.stats.moves += 1
                self._auto_commit()
            site = decision.changed[0].name if decision.changed else None
            self.session.report(decision.kind, decision.message, site, ply=ply)
            self.stats.warnings += 1
        else:
            site = decision.changed[0].name if decision.changed else None
            self.session.report(decision.kind, decision.message, site)
            self.stats.warnings += 1
        if self._scene is not None and decision.kind in ("move", "several"):
            played = decision.suggested or (decision.move,)
            self._last = _LastScene(self._scene, self.session.game_key,
                                    len(self.session.record.effective()),
                                    tuple(m.site for m in played if isinstance(m, Build)))
        self._update_leds()

    def _revise_into_pair(self, reading: ReadingLike, state: Any, off: _OffColour
                          ) -> Site | None:
        """The last move, recorded although the colour on top was the player's after
        it, revised into two builds at its site (that player's on the mover's) when
        that player is the one now skipped and the site, read again allowing two
        blocks, is better explained so; the record is corrected and the missed
        build inserted, and the players told. Returns the site, or None."""
        record = self.session.record
        ply = len(record.effective()) - 1
        if off.game != self.session.game_key or off.ply != ply or record.moves[ply] != off.move:
            return None
        site = off.move.site
        if self._scene is None:
            return None
        # read as it stood then: the build seen now may stand on it
        view = self._wide_view(self._scene.before, reading, site)
        if view is None:
            return None
        pair = stacked_pair(off.before, site, view, off.new_cards)
        single = best_build(off.before, site, view, off.new_cards)
        if pair is None or single is None or pair[0] >= single[0] \
                or pair[1][1].seat is not state.seat:
            return None
        first, second = pair[1]
        try:
            if first != off.move:
                self.session.correct(ply, first, "revised by the camera: two blocks there",
                                     expect=off.move, doubtful=True)
            self.session.insert(ply + 1, second, "missed by the camera: built on the move before",
                                doubtful=True)
        except RulesError:
            return None
        message = (f"two blocks were built at {site.name} at once: recorded as {first}, "
                   f"then {second}; check each move")
        log.info("%s", message)
        self.session.report("several", message, site.name, ply=ply)
        self.stats.moves += 1
        self.stats.warnings += 1
        return site

    @property
    def _clear_score(self) -> float:
        """A site whose pixels changed this much changed clearly (change.focus_clear_score)."""
        return float(self.change["focus_clear_score"])

    @property
    def _card_score(self) -> float:
        """Where a card just played builds, this much change may be its block
        (change.focus_card_score)."""
        return float(self.change["focus_card_score"])

    def _card_of(self, new_cards: Mapping[Seat, Card], seat: Seat) -> Card | None:
        """:func:`~companion.tracking.stack_card` with the stacks as last read."""
        return stack_card(seat, new_cards, self._cards)

    def _pair_with_missed(self, look: _Look, seen: Build) -> Decision | None:
        """The build seen was the next player's, out of turn, and the player to move
        played their new card (or the card on their stack: the same card played
        again shows no new card): their block is at one of the sites it gives,
        where the pixels changed (most, and at least ``focus_card_score``) and a
        block of theirs fits the change. Both builds, in turn order, as a
        "several" decision (each recorded for the players to check); None if that
        does not explain the scene. The card on the stack counts only in another
        city than the build seen: that build's shadow and silhouette change its
        own. A stack never read (out of the picture) says nothing: any site that
        changed clearly (``focus_clear_score``), the build seen held in front."""
        state, scene = look.state, self._scene
        card = self._card_of(look.new_cards, state.seat)
        if scene is None or (card is None and state.seat in self._cards):
            return None
        if card is None:
            heights = {**scene.heights,
                       seen.site: scene.heights.get(seen.site, 0) + seen.block.storeys}
            first = self._block_where_changed(
                scene, state, look.reading, heights, None,
                self._clear_score, {seen.site, *_explained(look)}, None)
            return self._pair_ending_with(look, first, seen, None)
        anywhere = state.seat in look.new_cards
        first = self._block_where_changed(
            scene, state, look.reading, scene.heights, card,
            self._card_score, {seen.site, *_explained(look)},
            None if anywhere else seen.site.city, shadowed_city=seen.site.city)
        return self._pair_ending_with(look, first, seen, "the picture")

    def _pair_in_scene_before(self, look: _Look, seen: Build) -> Decision | None:
        """As ``_pair_with_missed``, the mover's block looked for in the scene the last
        move was recorded from (no move since): where it changed clearly
        (``focus_clear_score``) at a site the card gives, in any city, beside that
        move's tower (held in front, as the record has it now)."""
        state, last = look.state, self._last
        card = self._card_of(look.new_cards, state.seat)
        if card is None or last is None or last.game != self.session.game_key \
                or last.ply != len(self.session.record.effective()):
            return None
        heights = {site: state.board.height(site) for site in all_sites()}
        first = self._block_where_changed(
            last.scene, state, look.reading, heights, card,
            self._clear_score, {seen.site, *last.sites}, None)
        return self._pair_ending_with(look, first, seen, "the picture before")

    def _pair_ending_with(self, look: _Look, first: Build | None, seen: Build,
                          where: str | None) -> Decision | None:
        """``first`` (the mover's block found) and then the build seen, as a "several"
        decision, if the rules allow the one and the scene, with it recorded, is
        that build in turn; None otherwise. ``where``: the picture the block was
        found in, for the message (None: found by its change alone, no card)."""
        state = look.state
        if first is None or not is_legal(state, first):
            return None
        after = apply_move(state, first)
        if after.phase is not Phase.BUILD or after.seat is not seen.seat:
            return None
        held = {**look.views, first.site: after.board.views()[first.site]}
        again = decide(after, held, look.unseen, look.new_cards, look.pixel_site,
                       out_of_sight=look.out_of_sight(), cards_read=self._cards)
        if again.kind != "move" or again.reason is not None or not isinstance(again.move, Build):
            return None
        told = (f"a block at {first.site.name} barely changed {where}, and "
                f"{again.move.site.name} changed" if where is not None else
                f"2 sites changed at once ({first.site.name}, {again.move.site.name})")
        return Decision("several", changed=(first.site, again.move.site),
                        suggested=(first, again.move),
                        message=f"{told}: recorded as {first}, then {again.move}; check each "
                                "move")

    def _pair_by_sides(self, look: _Look, seen: Build) -> Decision | None:
        """The build seen out of turn, on a site the card on the mover's stack
        gives: the mover's block may stand under it (the same card played again
        shows no new card), the pair as tall as the one block. Told apart by the
        lower block's side faces (``fit_stacks``): the best such pair the rules
        allow, if it fits the change better than the one block by ``pair_lead``
        percent, as a "several" decision; None otherwise."""
        state, reading = look.state, look.reading
        card = self._cards.get(state.seat)
        scene = self._scene
        if card is None or scene is None \
                or card.site_cell(state.seat) != (seen.site.row, seen.site.col):
            return None
        site, total = seen.site, seen.block.storeys
        pairs: dict[tuple[tuple[str, int], tuple[str, int]], tuple[Build, Build]] = {}
        for first in legal_builds(state):
            if first.site != site or first.card != card or first.block.storeys >= total \
                    or first.block.color == seen.block.color:
                continue
            after = apply_move(state, first)
            if after.phase is not Phase.BUILD or after.seat is not seen.seat:
                continue
            second = Build(seen.seat, seen.card, site,
                           Block(seen.block.color, total - first.block.storeys))
            if is_legal(after, second):
                key = ((first.block.color, first.block.storeys),
                       (second.block.color, second.block.storeys))
                pairs.setdefault(key, (first, second))
        if not pairs:
            return None
        from companion.vision.newblock import fit_stacks

        model = _colour_model(_in_play(state))
        keys = list(pairs)
        stacks = [[(seen.block.color, total)], *([a, b] for a, b in keys)]
        try:
            scores = fit_stacks(scene.before, scene.after, scene.pose, site,
                                scene.heights.get(site, 0), stacks, model, towers=scene.heights,
                                wb=getattr(reading, "wb", None), config=self.new_block)
        except ValueError:
            return None
        if scores is None:
            return None
        single, best = scores[0], max(range(len(keys)), key=lambda i: scores[1 + i])
        lead = 100.0 * (scores[1 + best] - single) / max(abs(single), 1.0)
        log.info("pair under the build at %s: %s leads the one block by %.1f%%", site.name,
                 keys[best], lead)
        if lead < float(self.new_block["pair_lead"]):
            return None
        first, second = pairs[keys[best]]
        return Decision("several", changed=(site,), suggested=(first, second),
                        message=f"two blocks were built at {site.name} at once: recorded as "
                                f"{first}, then {second}; check each move")

    def _card_site_again(self, look: _Look, not_city: int | None = None) -> Decision | None:
        """The scene decided again at the site of the mover's new card that changed
        most (at least ``focus_near_ratio`` of the most, among the
        ``focus_near_top`` first; not in city ``not_city``), read allowing two
        blocks, the other sites held as recorded: the decision if it is in turn and
        plays that card, else None."""
        image, reading, state = look.image, look.reading, look.state
        unseen, new_cards = look.unseen, look.new_cards
        card = new_cards.get(state.seat)
        scene = self._scene
        if card is None or scene is None or not scene.scores \
                or scene.scores[0].score < self._clear_score:
            return None
        cell = card.site_cell(state.seat)
        floor = float(self.change["focus_near_ratio"]) * scene.scores[0].score
        for c in scene.scores[:int(self.change["focus_near_top"])]:
            if c.score < floor:
                return None
            if (c.site.row, c.site.col) != cell or c.site.city == not_city:
                continue
            view = self._wide_view(image, reading, c.site)
            if view is None:
                return None
            views = {**state.board.views(), c.site: view}
            again = decide(state, views, [s for s in unseen if s != c.site], new_cards,
                           c.site, out_of_sight=look.out_of_sight(), cards_read=self._cards)
            clean = (again.kind == "several" and bool(again.suggested)) \
                or (again.kind == "move" and again.reason is None)
            return again if clean and _plays(again, state.seat, card) else None
        return None

    def _pair_with_next(self, look: _Look, first: Build) -> Decision | None:
        """The mover's build decided, and the next player may have built too: where
        the card on their stack builds, the site whose pixels changed most (at
        least ``focus_clear_score``; the first build's tower held in front of it)
        gets a block of theirs fitted to the change. A block the rules allow makes
        the pair, as a "several" decision; None otherwise. A card they played
        before (the same card played again shows no new card), or none read,
        counts only in another city: the first build's shadow and silhouette
        change its own (where a new card builds there, a site that fits no block
        of theirs is passed over)."""
        state, reading, new_cards = look.state, look.reading, look.new_cards
        scene = self._scene
        if scene is None:
            return None
        try:
            after = committed(apply_move(state, first))
        except RulesError:
            return None
        if after.phase is not Phase.BUILD or after.seat is first.seat:
            return None
        anywhere = after.seat in new_cards
        # (a stack never read, out of the picture, says nothing: any site)
        card = self._card_of(new_cards, after.seat)
        floor = self._clear_score
        heights = {**scene.heights, first.site: after.board.height(first.site)}
        second = self._block_where_changed(scene, after, reading, heights, card, floor,
                                           {first.site, *_explained(look)},
                                           None if anywhere else first.site.city,
                                           shadowed_city=first.site.city)
        if second is None or not is_legal(after, second):
            return None
        return Decision("several", changed=(first.site, second.site),
                        suggested=(first, second),
                        message=f"2 sites changed at once ({first.site.name}, "
                                f"{second.site.name}): recorded as {first}, then "
                                f"{second}; check each move")

    def _block_where_changed(self, scene: _Scene, state: Any, reading: ReadingLike,
                             heights: Mapping[Site, int], card: Card | None, floor: float,
                             skip: Collection[Site], not_city: int | None,
                             shadowed_city: int | None = None) -> Build | None:
        """The block of the player to move at the site that changed most (at least
        ``floor``) of those ``card`` gives (any site without a card; none in
        ``skip``), fitted to the change with ``heights`` standing; None when none
        changed so, or the fit is not of their colours. A site in ``shadowed_city``
        (the other build's) that fits no block of theirs is passed over: that
        build's shadow and silhouette change it. One in city ``not_city`` (the
        other build's, where a card played before, showing nothing new, is weighed)
        counts only where the reading shows the block fitted there too (its colour
        on top, at the height it makes): a shadow changes the pixels, not the top."""
        cell = card.site_cell(state.seat) if card is not None else None
        for c in scene.scores:  # highest first
            if c.score < floor:
                return None
            if c.site in skip or (cell is not None and (c.site.row, c.site.col) != cell):
                continue
            if c.site.city == not_city and reading.sites.get(c.site) is None:
                continue  # (nothing read there to confirm a block)
            fit = self._fit_block(scene.before, scene.after, scene.pose, c.site, state,
                                  reading, heights)
            if fit is None or fit.colour not in state.player.colors:
                if c.site.city in (shadowed_city, not_city):
                    continue
                return None
            if c.site.city == not_city and reading.sites.get(c.site) != SiteView(
                    heights.get(c.site, 0) + fit.storeys, fit.colour):
                continue
            return Build(state.seat, card or Card.for_site(state.seat, c.site.row, c.site.col),
                         c.site, Block(fit.colour, fit.storeys))
        return None

    def _wide_view(self, image: np.ndarray, reading: ReadingLike, site: Site
                   ) -> SiteView | None:
        """``site`` read again allowing two blocks more than the record's tower (the
        others held as before); None when the reader takes no range."""
        if not self._reader_takes_range or not self.session.has_game:
            return None
        ranges = self._height_range()
        low, high = ranges[site]
        try:
            wide = self._ranged(image, getattr(reading, "pose", None), height_range={
                **ranges, site: (low, high + MAX_STOREYS)})
        except ValueError:
            return None
        return wide.sites.get(site)

    def _towers(self, reading: ReadingLike) -> dict[int, int]:
        """Site index -> storeys of the towers in the scene just read: the record's,
        or the reading's where it reads taller (the move not yet recorded)."""
        board = self.session.state.board if self.session.has_game else None
        out = {s.index: board.height(s) for s in all_sites()} if board is not None else {}
        for site, view in reading.sites.items():
            if view.height > out.get(site.index, 0):
                out[site.index] = view.height
        return out

    def _height_range(self) -> dict[Site, tuple[int, int]]:
        """What the record allows each site now: its tower, or up to one block taller.
        A tall tower's lower part cannot then pass for the whole of it."""
        state = self.session.state
        # a monster variant knocks towers down (the players take the blocks away)
        shrinks = state.config.monster is not None
        return {site: (0 if shrinks else h, h + MAX_STOREYS)
                for site in all_sites() for h in (state.board.height(site),)}

    def _focus(self, image: np.ndarray, reading: ReadingLike, state: Any,
               new_cards: Mapping[Seat, Card] | None = None,
               ) -> tuple[Mapping[Site, SiteView], list[Site], Site | None]:
        """Trust the reading only where the pixels changed since the last still scene.

        A whole-board reading may misread a site now and then; the move is where
        the image changed. Sites that did not change keep the record's towers. With
        no pose, no earlier frame or a camera bump, the whole reading is used.
        Also returns the one site whose pixels clearly changed (None if none or
        several did). ``new_cards``: every stack's new card in this scene (the mover's
        gives the site where the change is too small to see; several, several
        builds: :meth:`_built_with_cards`).
        """
        new_cards = new_cards or {}
        card = new_cards.get(state.seat)
        prev, self._prev_still = self._prev_still, image
        self._fitted = None
        self._scene = None
        pose = getattr(reading, "pose", None)
        if prev is None or pose is None or not hasattr(pose, "project") \
                or prev.shape != image.shape:
            return reading.sites, list(reading.unseen), None
        from companion.vision.sitechange import focus, site_change_scores

        record = state.board.views()
        heights = {s: v.height for s, v in record.items()}
        scores = self._restored(image, pose, site_change_scores(prev, image, pose, heights))
        self._scene = _Scene(prev, image, pose, heights, scores)

        def grew(c: Site) -> bool:
            now = reading.sites.get(c)
            return now is not None and now.height > heights.get(c, 0)

        found = focus(scores, lambda c: reading.sites.get(c) != record.get(c), self.change,
                      grew)
        if found.bumped:
            log.info("many sites changed at once: camera bumped? reading the whole board")
            return reading.sites, list(reading.unseen), None
        site, candidates, pixel_site = found.site, found.candidates, found.pixel_site
        more = self._built_with_cards(scores, candidates, new_cards, reading, record)
        if more:
            site, candidates, pixel_site = None, [*candidates, *more], None
        fit = None
        if site is None and not candidates and card is not None:
            site, fit = self._card_site(prev, image, pose, state, reading, heights, card, scores)
            pixel_site = site
        views = dict(record)
        if site is not None:
            candidates = [site]
        for c in candidates:
            views.pop(c, None)
            if c in reading.sites:
                views[c] = reading.sites[c]
        unseen = [c for c in candidates if c in set(reading.unseen)]
        if site is not None:
            # the block itself, from what changed: its storeys and colour
            if fit is None:
                fit = self._fit_block(prev, image, pose, site, state, reading, heights)
            if fit is not None:
                from companion.vision.newblock import doubt_totals, settle, steep_site

                read_scores = _read_scores(reading, site)
                revised = self._reconsider(prev, image, pose, site, reading, heights, fit,
                                           read_scores)
                if revised is not None:
                    fit, heights = revised
                base = heights.get(site, 0)
                view, doubts, decided = settle(fit, reading.sites.get(site), base,
                                               self.new_block, read_scores,
                                               steep=steep_site(pose, site, base,
                                                                self.new_block))
                if decided:
                    views[site] = view
                    unseen = [c for c in unseen if c != site]
                self._fitted = _Fitted(site, doubts, decided, base,
                                       doubt_totals(fit, read_scores, base, self.new_block),
                                       fit if revised is None else None)
        return views, unseen, pixel_site

    def _built_with_cards(self, scores: Sequence[Any], taken: Sequence[Site],
                          new_cards: Mapping[Seat, Card], reading: ReadingLike,
                          record: Mapping[Site, SiteView]) -> list[Site]:
        """Sites that changed clearly, apart from those ``taken``, where a new card of
        this scene builds and the reading differs from the record, when two or more
        stacks show a new card or two sites changed already: several players built
        while hands hid the board, and a small block changes its site less than a
        tall one changes the sites beside it (SimTable seed 1, three builds at once:
        North's green 2 scored 24, the red 4 stacked on East's black 4 scored 86 at
        Hong Kong S and 51 beside it), so the focus's rival ratio passed it over and
        the scene was explained by the tall tower alone."""
        if not new_cards or not taken or not self.change["focus_with_cards"] \
                or (len(new_cards) < 2 and len(taken) < 2):
            return []
        from companion.vision.sitechange import near

        floor = float(self.change["focus_clear_score"])
        cells = {card.site_cell(seat) for seat, card in new_cards.items()}
        hidden = set(reading.unseen)
        out: list[Site] = []
        for c in scores:
            if c.score < floor or len(taken) + len(out) >= MAX_SUGGESTED:
                break
            site = c.site
            if (site.row, site.col) in cells and site not in hidden \
                    and not any(near(site, t) for t in [*taken, *out]) \
                    and reading.sites.get(site) != record.get(site):
                out.append(site)
        return out

    def _restored(self, image: np.ndarray, pose: Any, scores: list[Any]) -> list[Any]:
        """The change scores, each disturbed site that is back as it was scored by
        how it differs from then (a change that is no move's).

        A block knocked off its tower (or a thing set down on the board) changes a
        few sites that no move explains; when it is put back, those sites change
        again, and that change took the focus from the build made meanwhile (the
        build was missed, and every move after it recorded one turn off). A
        disturbed site that changed since the last scene and now looks as it did
        before its disturbance (within ``takeback_score``, the whole tower's volume
        compared) is put back: it scores that likeness, not its change.
        """
        if not self._disturbances():
            return scores
        from companion.vision.sitechange import SiteChange, site_change_scores

        clear = float(self.change["focus_clear_score"])
        moved = {c.site for c in scores if c.score >= clear and c.site in self._disturbed}
        if not moved:
            return scores
        # each site's whole tower and a block more, from the table up: a block that
        # fell off took storeys under the record's top with it
        reach = max((v.height for v in self.session.state.board.views().values()),
                    default=0) + 4
        by_site = {c.site: c for c in scores}
        frames = {id(frame): frame for site, frame in self._disturbed.items() if site in moved}
        back: list[Site] = []
        for frame in frames.values():
            if frame.shape != image.shape:
                continue
            was = {c.site: c.score for c in site_change_scores(
                frame, image, pose, {}, headroom_storeys=reach)}
            for site in moved:
                if self._disturbed.get(site) is frame and was.get(site, np.inf) <= float(
                        self.change["takeback_score"]):
                    by_site[site] = SiteChange(site, was[site])
                    del self._disturbed[site]
                    back.append(site)
        if not back:
            return scores
        self.stats.restored += len(back)
        log.info("put back as before: %s", ", ".join(sorted(s.name for s in back)))
        if not self._disturbed and self._disturbance is not None:
            try:
                self.session.resolve_warning(self._disturbance)
            except RulesError:
                pass  # (the players started another game meanwhile)
            self._disturbance = None
        return sorted(by_site.values(), key=lambda c: -c.score)

    def _disturbances(self) -> dict[Site, np.ndarray]:
        """The disturbed sites of the game in play (another game's are forgotten)."""
        if self._disturbed_game != self.session.game_key:
            self._disturbed, self._disturbance = {}, None
            self._disturbed_game = self.session.game_key
        return self._disturbed

    def _note_disturbed(self, decision: Decision, aside: frozenset[Site] = frozenset()
                        ) -> None:
        """A still scene whose sites changed clearly and which no move explains (or,
        ``aside``, the sites of a thing set down as a block was built): the players
        are told (the LEDs show the site) and the sites are kept, with the scene
        before, to see them put back (:meth:`_restored`)."""
        scene = self._scene
        if decision.kind in ("move", "several", "missed"):
            for move in decision.suggested or (decision.move,):
                if isinstance(move, Build):
                    # the record changed there: what stood before is no reference now
                    self._disturbed.pop(move.site, None)
            if not aside:
                return
        if scene is None or any(self._held_reads) or self.session.state.is_over:
            return  # (an arm's change; the players clearing the board after the game)
        least = float(self.change["disturbed_score"])
        hit = [c.site for c in scene.scores if c.score >= least
               and (not aside or c.site in aside)]
        if not hit or len(hit) > int(self.change["focus_bump_sites"]):
            return  # nothing changed clearly, or a lamp or a bump changed everything
        new = [site for site in hit if site not in self._disturbances()]
        for site in new:
            self._disturbed[site] = scene.before
        if not new:
            return
        self.stats.disturbed += 1
        if self._disturbance is not None and not self.session.warning_open(self._disturbance):
            self._disturbance = None  # (the players dismissed it on the page)
        if self._disturbance is None and (decision.kind == "none" or aside):
            names = ", ".join(site.name for site in new[:3])
            warning = self.session.report(
                "disturbed", f"{names} changed, and no move explains it (a block knocked "
                             "off its tower, or something set down on the board?): put it "
                             "back as it was, or correct the record on the page", new[0].name)
            self._disturbance = warning.id
            self.stats.warnings += 1

    def _reconsider(self, before: np.ndarray, after: np.ndarray, pose: Any, site: Site,
                    reading: ReadingLike, heights: Mapping[Site, int], fit: Any,
                    read_scores: Mapping[tuple[int, str], float] | None,
                    ) -> tuple[Any, dict[Site, int]] | None:
        """Revise the doubtful build at ``site`` when the block now built on it fits
        only on another (companion.vision.newblock.reconsider): the record is
        corrected, the players are told, and the new block's fit on the revised
        tower and the revised heights are returned. None when nothing changes.
        """
        doubt = self._doubted.pop(site, None)
        if doubt is None:
            return None
        from companion.vision.newblock import contradicts, reconsider

        record = self.session.record
        ply = doubt_ply(record.moves, doubt.move) \
            if doubt.game == self.session.game_key else None
        if ply is None or record.effective()[ply].agreed:
            return None  # corrected or kept by the players, or built on since
        recorded = (doubt.move.block.storeys, doubt.move.block.color)
        near = float(self.new_block["weighed_doubt"])
        top = doubt.totals.get(recorded)
        if top is None:
            return None
        allowed = {recorded: self._allowed(self.session.state, site)}
        if not contradicts(fit, read_scores, heights.get(site, 0), allowed[recorded],
                           self.new_block):
            return None  # the block built on it is one the rules allow: nothing to revise
        before_state = record.state_at(ply)
        fits = {recorded: fit}
        moved: dict[tuple[int, str], tuple[Build, dict[Site, int]]] = {}
        for key, total in doubt.totals.items():
            if key == recorded or top - total >= near:
                continue
            move = Build(doubt.move.seat, doubt.move.card, site, Block(key[1], key[0]))
            try:
                check_move(before_state, move)
                state = record.with_correction(ply, move).replay()
            except RulesError:
                continue  # the rules never allowed that block, or a later move then
            tall = {**heights, site: heights.get(site, 0) - recorded[0] + key[0]}
            alt = self._fit_block(before, after, pose, site, state, reading, tall)
            if alt is not None:
                fits[key], allowed[key] = alt, self._allowed(state, site)
                moved[key] = (move, tall)
        choice = reconsider(doubt.totals, recorded, fits, allowed, read_scores, doubt.base,
                            self.new_block)
        if choice is None or choice not in moved:
            return None
        move, tall = moved[choice]
        message = (f"{doubt.move.block.color} {recorded[0]} at {site.name} revised to "
                   f"{move.block.color} {move.block.storeys}: the block built on it fits "
                   "that tower better; check it")
        try:
            self.session.correct(ply, move, "revised by the camera", expect=doubt.move)
        except RulesError:
            return None  # the players changed the record meanwhile
        log.info("%s", message)
        self.session.report("revised", message, site.name, ply=ply)
        self.stats.revisions += 1
        return fits[choice], tall

    @staticmethod
    def _allowed(state: Any, site: Site) -> set[tuple[int, str]]:
        """The blocks the rules allow the player to move at ``site`` (storeys, colour)."""
        return {(m.block.storeys, m.block.color) for m in legal_builds(state)
                if m.site == site}

    def _card_site(self, before: np.ndarray, after: np.ndarray, pose: Any, state: Any,
                   reading: ReadingLike, heights: Mapping[Site, int], card: Card,
                   scores: Sequence[Any]) -> tuple[Site | None, Any]:
        """Where a block barely in view was built: the player to move just played
        ``card`` and nothing changed clearly, but at one of the sites the card
        gives, the pixels changed a little (a block behind a tall tower shows a
        sliver). The site that changed most there, if a block fits the change."""
        cell = card.site_cell(state.seat)
        floor = self._card_score
        for c in scores:  # highest first
            if c.score < floor:
                break
            if (c.site.row, c.site.col) == cell:
                fit = self._fit_block(before, after, pose, c.site, state, reading, heights)
                return (c.site, fit) if fit is not None else (None, None)
        return None, None

    def _fit_block(self, before: np.ndarray, after: np.ndarray, pose: Any, site: Site,
                   state: Any, reading: ReadingLike, heights: Mapping[Site, int]) -> Any:
        """The new block at ``site`` fitted to the change between the two still scenes
        (companion.vision.newblock), or None to go by the reading alone.

        Its colour is one of the player to move's, or the one read there (a player
        building out of turn is reported, not corrected). Not with a monster
        variant: a monster's path shrinks towers, the fit only knows growth.
        """
        if not self.change.get("focus_fit_block", True) or state.config.monster is not None \
                or not hasattr(pose, "camera_centre"):
            return None
        from companion.vision.newblock import fit_new_block

        in_play = _in_play(state)
        colours = list(state.player.colors)
        view = reading.sites.get(site)
        if view is not None and view.owner in in_play:
            colours.append(view.owner)
        model = _colour_model(in_play)
        t0 = time.perf_counter()
        try:
            fit = fit_new_block(before, after, pose, site, heights.get(site, 0), colours, model,
                                towers=heights, wb=getattr(reading, "wb", None),
                                config=self.new_block)
        except ValueError as exc:
            log.info("new block at %s not fitted: %s", site.name, exc)
            return None
        finally:
            self.stats.fit_seconds.append(time.perf_counter() - t0)
        return fit

    def refresh_leds(self) -> None:
        """The strip follows the game between readings too, ``led_refresh_seconds``
        apart: a warning blinks, the round's scoring goes out after its seconds, and
        an undo on a button or the page, or a card entered there, shows. It was
        drawn only after a still scene was read."""
        now = time.monotonic()
        if self.leds is None or now - self._leds_at < self.led_refresh_seconds:
            return
        self._update_leds()

    def _update_leds(self) -> None:
        self._leds_at = time.monotonic()
        if self.leds is None or not self.session.has_game:
            return
        warn_sites = [site.index for site in self.session.warning_sites()]
        self.leds.show_guidance(self.session.guidance(), warn_sites, self.session.state)

    # -- loop ------------------------------------------------------------------
    def run(self, frames: Any, *, max_frames: int | None = None) -> ControllerStats:
        """Consume a frame source (anything with ``read()`` giving .image/.timestamp)."""
        n = 0
        while not self._stop.is_set():
            frame = frames.read()
            if frame is None:
                break
            self.process(frame.image, frame.timestamp)
            n += 1
            if max_frames is not None and n >= max_frames:
                break
        return self.stats

    def stop(self) -> None:
        self._stop.set()


def _read_scores(reading: Any, site: Site) -> Mapping[tuple[int, str], float] | None:
    """The reader's scores for the heights it weighed at ``site`` ((height, colour) ->
    score), for :func:`companion.vision.newblock.settle`; None from a reader that
    keeps none (a fake reader)."""
    weighed = getattr(reading, "hypotheses", None)
    return weighed().get(site) if weighed else None


def _takes(func: Any, name: str) -> bool:
    """Whether ``func`` accepts the keyword ``name`` (readers written for tests may not)."""
    try:
        return name in inspect.signature(func).parameters
    except (TypeError, ValueError):
        return False


def _in_play(state: Any) -> tuple[str, ...]:
    """Every colour of every player in the game."""
    return tuple(c for p in state.config.players for c in p.colors)


@functools.lru_cache(maxsize=8)
def _colour_model(in_play: tuple[str, ...]) -> Any:
    """The default colour model of the colours in play: one per game, not per fit."""
    from companion.vision.colours import ColourModel
    from companion.vision.geometry import board_geometry

    return ColourModel.for_colours(board_geometry(), list(in_play))


def _change_config() -> dict[str, Any]:
    from companion.vision.settings import section

    return dict(section("change"))


def _new_block_config() -> dict[str, Any]:
    from companion.vision.settings import section

    return dict(section("new_block"))


def _as_card(value: Any) -> Card:
    if isinstance(value, Card):
        return value
    if isinstance(value, dict):
        value = value.get("cell")
    r, c = value
    return Card(int(r), int(c))
