"""The live game: one record shared by the controller, the page and the journal.

The game record is the source of truth. Everything that changes the game goes
through :class:`GameSession`, which appends an entry to the record, hands the
same entry to the journal (so a crash loses nothing), and wakes the page.
"""

from __future__ import annotations

import itertools
import queue
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, Protocol, TypeVar

from companion.rules import (
    Build,
    Card,
    Commit,
    GameConfig,
    GameRecord,
    GameState,
    IllegalMoveError,
    Move,
    Pass,
    Phase,
    RulesError,
    Seat,
    Site,
    apply_move,
    check_move,
    check_new_game,
    legal_builds,
    new_game,
)
from companion.rules.record import (
    Entry,
    MoveEntry,
    entry_json,
    final_result,
    header_json,
    is_from_photos,
)

_T = TypeVar("_T")


class JournalFailure(RuntimeError):
    """The journal refused an entry (a full or failing SD card): the game is as it was
    before the change, which the caller may try again."""


class JournalSink(Protocol):
    """What the session needs from a journal (companion.store implements it)."""

    def begin_game(self, header: dict[str, Any]) -> str: ...

    def append(self, game_id: str, entry: dict[str, Any]) -> None: ...


@dataclass(frozen=True)
class TableWarning:
    """A legality warning shown until resolved (by a correction or by the players)."""

    id: int
    ply: int  # index of the move in the effective move list
    reason: str
    message: str
    site: str | None = None
    crop: str | None = None  # evidence id of the photo crop, if any
    resolved: bool = False
    # False: a camera report about no recorded move (``ply`` is then the number of
    # moves at the time, which a later move takes over)
    about_move: bool = True

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "ply": self.ply, "reason": self.reason, "message": self.message,
                "site": self.site, "crop": self.crop, "resolved": self.resolved,
                "about_move": self.about_move}


@dataclass(frozen=True)
class Outcome:
    """What happened to a move handed to the session."""

    move: Move
    legal: bool
    warning: TableWarning | None = None


@dataclass
class _Live:
    record: GameRecord
    state: GameState
    game_id: str | None = None
    #: this game among those the session has set up (a journal's id may be None)
    serial: int = 0
    warnings: list[TableWarning] = field(default_factory=list)
    evidence: dict[int, str] = field(default_factory=dict)  # ply -> crop id
    card_seen: tuple[Seat, Card] | None = None
    unseen: list[str] = field(default_factory=list)

    @property
    def key(self) -> tuple[int, str | None]:
        return self.serial, self.game_id


class GameSession:
    """Thread-safe holder of the current game; every change is an event."""

    def __init__(self, config: GameConfig | None = None, *, journal: JournalSink | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self._lock = threading.RLock()
        self._journal = journal
        self._clock = clock
        self._subscribers: list[queue.Queue[dict[str, Any]]] = []
        self._ids = itertools.count(1)
        self._serials = itertools.count(1)
        self.version = 0
        self._live: _Live | None = None
        if config is not None:
            self.new_game(config)

    # -- set-up ------------------------------------------------------------
    def new_game(self, config: GameConfig, *, date: str | None = None,
                 meta: dict[str, Any] | None = None) -> None:
        check_new_game(config)
        record = GameRecord(config, meta=dict(meta or {}))
        if date:
            record = replace(record, date=date)
        with self._lock:
            live = _Live(record, new_game(config), serial=next(self._serials))
            journal = self._journal
            if journal is not None:
                header = header_json(config, record.date, record.meta)
                live.game_id = _saved(lambda: journal.begin_game(header))
            self._live = live
            self._changed("setup")

    def resume(self, record: GameRecord, game_id: str | None = None) -> None:
        """Continue a game read back from the journal, exactly where it was.

        Moves whose site the camera read by a narrow margin (``MoveEntry.doubtful``)
        stay marked "check this site" on the page until they are corrected or
        kept. A move kept against the rules shows its warning again, unless the
        players kept it so (``MoveEntry.agreed``): the one recorded with it, or (a
        move flagged by a correction, which records no text) the rules' objection
        on its position.
        """
        with self._lock:
            states = list(record.states())
            live = _Live(record, states[-1], game_id, serial=next(self._serials))
            for ply, entry in enumerate(record.effective()):
                if entry.agreed:
                    continue
                if entry.warning:
                    reason, _, message = entry.warning.partition(": ")
                    live.warnings.append(TableWarning(next(self._ids), ply, reason, message))
                elif entry.forced:
                    try:
                        check_move(states[ply], entry.move)
                    except IllegalMoveError as exc:
                        site = entry.move.site.name if isinstance(entry.move, Build) else None
                        live.warnings.append(TableWarning(next(self._ids), ply, exc.reason,
                                                          str(exc), site))
            self._live = live
            self._changed("resume")

    @property
    def lock(self) -> threading.RLock:
        """The session's own (re-entrant) lock: a caller that checks the game and then
        changes it (the page's "the move I saw" test) holds it across both."""
        return self._lock

    @property
    def has_game(self) -> bool:
        return self._live is not None

    @property
    def from_photos(self) -> bool:
        """Whether the game shown was replayed from photos (its record's
        ``meta.source`` is "photos"): the table's camera does not record into it,
        for the table does not show that game."""
        with self._lock:
            live = self._live
            return live is not None and is_from_photos(live.record.meta)

    def _require(self) -> _Live:
        if self._live is None:
            raise RulesError("no game is set up yet")
        return self._live

    @property
    def state(self) -> GameState:
        with self._lock:
            return self._require().state

    @property
    def record(self) -> GameRecord:
        with self._lock:
            return self._require().record

    @property
    def game_id(self) -> str | None:
        with self._lock:
            return self._require().game_id

    @property
    def game_key(self) -> tuple[int, str | None]:
        """Which game is live, for what is kept about one game until later: unlike
        ``game_id`` (None without a journal) it tells every game set up apart."""
        with self._lock:
            return self._require().key

    def current(self) -> tuple[tuple[int, str | None], GameRecord] | None:
        """The game's key and record taken together (None: no game yet), for a page
        thread: read one after the other, a game set up in between paired one
        game's key with another's record, or raised for want of a game."""
        with self._lock:
            live = self._live
            return None if live is None else (live.key, live.record)

    # -- moves ---------------------------------------------------------------
    def play(self, move: Move, *, allow_illegal: bool = False,
             evidence: str | None = None, doubtful: bool = False,
             never_shown: bool = False) -> Outcome:
        """Apply a move. An illegal one raises unless ``allow_illegal`` (what the
        camera saw really happened): then it is recorded with a warning.
        ``doubtful``: the camera read its site by a narrow margin (the page asks the
        players to check it); ``never_shown`` (with ``doubtful``): the camera never
        saw the block, its storeys are a guess."""
        with self._lock:
            live = self._require()
            warning: TableWarning | None = None
            try:
                check_move(live.state, move)
                legal = True
            except IllegalMoveError as exc:
                if not allow_illegal or exc.reason in ("game-over", "wrong-phase"):
                    raise
                legal = False
                site = move.site.name if isinstance(move, Build) else None
                warning = TableWarning(next(self._ids), len(live.record.effective()), exc.reason,
                                  str(exc), site, evidence)
            state = apply_move(live.state, move, check=legal)
            entry = MoveEntry(move, forced=not legal,
                              warning=None if warning is None
                              else f"{warning.reason}: {warning.message}",
                              doubtful=doubtful, never_shown=doubtful and never_shown)
            ply = len(live.record.effective())
            # Journal first: if the disk refuses, the live game stays as it was.
            self._journal_entries(live, [entry])
            live.record = replace(live.record, entries=live.record.entries + (entry,))
            live.state = state
            live.card_seen = None
            if evidence:
                live.evidence[ply] = evidence
            if warning is not None:
                live.warnings.append(warning)
            self._changed("move", {"ply": ply, "move": str(move), "legal": legal})
            return Outcome(move, legal, warning)

    def correct(self, index: int, move: Move | None, note: str = "", *,
                expect: Move | None = None, doubtful: bool = False) -> dict[str, list[int]]:
        """Replace (or delete, with None) move ``index``; recorded as a correction.

        The corrected move is kept, flagged, if the rules refuse it (what the
        table did). The moves after it are checked again (see ``insert``); returns
        the numbers of those that lost their flag ("rechecked") or got one
        ("flagged").

        ``expect``: correct only if move ``index`` is still this one (else
        RulesError): the camera's revision must not land on a move the players
        changed meanwhile. ``doubtful``: the camera's own correction, marked "check
        this site" as a doubtful move is.
        """
        with self._lock:
            live = self._require()
            if expect is not None:
                moves = live.record.moves
                if index >= len(moves) or moves[index] != expect:
                    raise RulesError(f"move {index} is no longer {expect}")
            record = live.record.with_correction(index, move, note, doubtful=doubtful)
            before = record.state_at(index)
            forced = move is not None and not _allowed(before, move)
            if forced:
                record = live.record.with_correction(index, move, note, forced=True,
                                                     doubtful=doubtful)
            fixes, state = (_recheck(record, index, before) if move is None else
                            _recheck(record, index + 1, apply_move(before, move, check=False)))
            fixed = _with_fixes(record, fixes, "the correction")
            self._journal_entries(live, fixed.entries[len(record.entries) - 1:])
            live.record = record
            live.warnings = [replace(w, resolved=True) if w.ply == index and w.about_move
                             else w for w in live.warnings]
            if move is None:
                live.warnings = [w if w.ply < index else replace(w, ply=w.ply - 1)
                                 for w in live.warnings if w.ply != index or not w.about_move]
                live.evidence = {p if p < index else p - 1: crop
                                 for p, crop in live.evidence.items() if p != index}
            done = self._apply_fixes(live, fixes, fixed)
            live.state = state
            self._changed("correction", {"ply": index, "move": None if move is None
                                         else str(move), "forced": forced, **done})
            return done

    def insert(self, index: int, move: Move, note: str = "", *,
               doubtful: bool = False) -> dict[str, list[int]]:
        """Put ``move`` before move ``index`` (a move the camera missed).

        The moves after it are checked again on the new position: one recorded
        against the rules (a build out of turn, because this one was missing) that
        the rules now allow is corrected to itself, which clears its flag and
        resolves its warning ("rechecked"); one that the rules now refuse is kept,
        flagged, with a warning ("flagged"). Each is a correction in the record.
        The inserted move itself is kept, flagged, if the rules refuse it.
        ``doubtful``: inserted by the camera, marked "check this site".
        """
        with self._lock:
            live = self._require()
            record = live.record.with_insertion(index, move, note, doubtful=doubtful)
            before = record.state_at(index)
            forced = not _allowed(before, move)
            if forced:
                record = live.record.with_insertion(index, move, note, forced=True,
                                                    doubtful=doubtful)
            fixes, state = _recheck(record, index + 1, apply_move(before, move, check=False))
            fixed = _with_fixes(record, fixes, "the inserted move")
            self._journal_entries(live, fixed.entries[len(record.entries) - 1:])
            live.record = record
            live.warnings = [w if w.ply < index else replace(w, ply=w.ply + 1)
                             for w in live.warnings]
            live.evidence = {p if p < index else p + 1: crop
                             for p, crop in live.evidence.items()}
            done = self._apply_fixes(live, fixes, fixed)
            live.state = state
            self._changed("insertion", {"ply": index, "move": str(move), "forced": forced,
                                        **done})
            return done

    def _apply_fixes(self, live: _Live, fixes: list[tuple[int, Move, IllegalMoveError | None]],
                     fixed: GameRecord) -> dict[str, list[int]]:
        """Apply what ``_recheck`` found (journaled with the change, ``fixed``)."""
        done: dict[str, list[int]] = {"rechecked": [], "flagged": []}
        live.record = fixed
        for n, later, problem in fixes:
            if problem is None:
                live.warnings = [replace(w, resolved=True) if w.ply == n and w.about_move
                                 else w for w in live.warnings]
                done["rechecked"].append(n)
            else:
                site = later.site.name if isinstance(later, Build) else None
                live.warnings.append(TableWarning(next(self._ids), n, problem.reason,
                                                  str(problem), site))
                done["flagged"].append(n)
        return done

    def undo(self) -> None:
        """Take back the last move (a deleting correction)."""
        with self._lock:
            n = len(self._require().record.effective())
            if n == 0:
                raise RulesError("there is no move to undo")
            self.correct(n - 1, None, "undo")

    def report(self, reason: str, message: str, site: str | None = None,
               evidence: str | None = None, ply: int | None = None) -> TableWarning:
        """A warning shown until the players resolve it: about no recorded move
        (two changes at once, a change no move explains), or about move ``ply``
        (a build the camera revised), which a correction of that move resolves."""
        with self._lock:
            live = self._require()
            warning = TableWarning(next(self._ids),
                                   len(live.record.effective()) if ply is None else ply,
                                   reason, message, site, evidence, about_move=ply is not None)
            live.warnings.append(warning)
            self._changed("warning", {"reason": reason, "message": message})
            return warning

    def resolve_warning(self, warning_id: int) -> None:
        """The players keep what the table shows. A warning about a move settles
        that move (``keep``), so it does not come back when the game is resumed."""
        with self._lock:
            live = self._require()
            warning = next((w for w in live.warnings if w.id == warning_id), None)
            if warning is None:
                raise RulesError(f"no warning {warning_id}")
            if (warning.about_move and not warning.resolved
                    and warning.ply < len(live.record.effective())):
                self._keep(live, warning.ply)
            live.warnings = [replace(w, resolved=True) if w.id == warning_id else w
                             for w in live.warnings]
            self._changed("warning", {"ply": warning.ply} if warning.about_move else None)

    def keep(self, index: int) -> None:
        """The players looked at move ``index`` and keep it as it is: recorded as a
        correction (``agreed``) that clears its "check this site" mark and resolves
        its warnings, for good (the camera no longer revises it either)."""
        with self._lock:
            live = self._require()
            self._keep(live, index)
            self._changed("kept", {"ply": index})

    def _keep(self, live: _Live, index: int) -> None:
        record = live.record.with_agreement(index, "kept by the players")
        self._journal_entries(live, record.entries[-1:])
        live.record = record
        live.warnings = [replace(w, resolved=True) if w.ply == index and w.about_move else w
                         for w in live.warnings]

    def see_card(self, seat: Seat, card: Card) -> None:
        """The camera saw a new card on ``seat``'s stack: the page and LEDs show its sites."""
        with self._lock:
            live = self._require()
            # a seat nobody sits at (the camera's, or a page's, mistake): refused before
            # it is kept, or the guidance (and every phone's state) failed until the
            # next move
            live.state.config.player_of(seat)
            live.card_seen = (seat, card)
            self._changed("card", {"seat": seat.value, "card": str(card)})

    def warning_open(self, warning_id: int) -> bool:
        """Whether warning ``warning_id`` of the game in play is still shown (not
        resolved by the players, nor by the camera)."""
        with self._lock:
            live = self._live
            return live is not None and any(w.id == warning_id and not w.resolved
                                            for w in live.warnings)

    def warning_sites(self) -> list[Site]:
        """The sites of the open warnings, oldest first: what the LED strip blinks
        (drawn ten times a second, it has no use for the page's whole snapshot)."""
        with self._lock:
            live = self._live
            return [] if live is None else [Site.parse(w.site) for w in live.warnings
                                            if not w.resolved and w.site]

    def set_unseen(self, sites: list[Site]) -> None:
        with self._lock:
            self._require().unseen = [s.code for s in sites]
            self._changed("unseen")

    # -- reading -------------------------------------------------------------
    def guidance(self) -> dict[str, Any] | None:
        """The sites the current card allows: lit, or dimmed where no block fits."""
        with self._lock:
            live = self._require()
            state = live.state
            if live.card_seen is None or state.phase is not Phase.BUILD:
                return None
            seat, card = live.card_seen
            row, col = card.site_cell(seat)
            ok = {b.site for b in legal_builds(state, (card,))} if seat == state.seat else set()
            sites = [Site(city, row, col) for city in range(6)]
            return {
                "seat": seat.value, "card": str(card),
                "colors": list(state.config.player_of(seat).colors),
                "lit": [s.index for s in sites if s in ok],
                "dim": [s.index for s in sites if s not in ok],
                "monster": state.monster.index if state.monster else None,
            }

    def snapshot(self, ply: int | None = None) -> dict[str, Any]:
        """Everything the page shows, as JSON (``GET /api/state``)."""
        with self._lock:
            live = self._live
            if live is None:
                return {"board": {"format": "manhattan-board/1", "sites": []}, "moves": [],
                        "scores": {"rounds": [], "totals": {}, "players": {}},
                        "game": None, "warnings": [], "version": self.version}
            record = live.record
            effective = record.effective()
            if ply is None or ply >= len(effective):
                state, shown = live.state, len(effective)
            else:
                shown = max(0, ply)
                state = record.state_at(shown)
            return _snapshot(record, effective, state, shown, live, self.version,
                             live.card_seen if shown == len(effective) else None,
                             self.guidance() if shown == len(effective) else None)

    # -- events --------------------------------------------------------------
    def subscribe(self) -> queue.Queue[dict[str, Any]]:
        q: queue.Queue[dict[str, Any]] = queue.Queue(maxsize=256)
        with self._lock:
            self._subscribers.append(q)
        return q

    def unsubscribe(self, q: queue.Queue[dict[str, Any]]) -> None:
        with self._lock:
            if q in self._subscribers:
                self._subscribers.remove(q)

    def announce(self, kind: str, data: dict[str, Any]) -> None:
        """Tell the pages of something under way that changes no state (a replay's
        progress: ``replay-progress``), as an event of its own kind."""
        self._changed(kind, data)

    def _changed(self, kind: str, data: dict[str, Any] | None = None) -> None:
        self.version += 1
        event = {"type": kind, "version": self.version, "time": self._clock(), **(data or {})}
        for q in list(self._subscribers):
            try:
                q.put_nowait(event)
            except queue.Full:  # a stalled page must not stall the table
                pass

    def _journal_entries(self, live: _Live, entries: Sequence[Entry]) -> None:
        """Journal ``entries`` together: one transaction where the journal has them."""
        if self._journal is None or live.game_id is None:
            return
        journal, game_id = self._journal, live.game_id
        texts = [entry_json(e) for e in entries]
        append_all = getattr(journal, "append_all", None)
        if append_all is not None:
            _saved(lambda: append_all(game_id, texts))
            return
        for text in texts:
            _saved(partial(journal.append, game_id, text))


def _with_fixes(record: GameRecord, fixes: list[tuple[int, Move, IllegalMoveError | None]],
                after: str) -> GameRecord:
    """``record`` with one correction per move ``_recheck`` found (legal again, or now
    against the rules, kept and flagged)."""
    for n, later, problem in fixes:
        if problem is None:
            record = record.with_correction(n, later, f"legal after {after}")
        else:
            record = record.with_correction(n, later, f"against the rules after {after}",
                                            forced=True)
    return record


def _saved(write: Callable[[], _T]) -> _T:
    """A journal write, its failure a :class:`JournalFailure` in words a player reads."""
    try:
        return write()
    except (sqlite3.Error, OSError) as exc:
        raise JournalFailure(f"the game could not be saved ({exc})") from exc


def _allowed(state: GameState, move: Move) -> bool:
    """Whether the rules allow ``move``; False if only the table let it stand.
    A move in the wrong phase or after the end cannot be recorded at all."""
    try:
        check_move(state, move)
    except IllegalMoveError as exc:
        if exc.reason in ("game-over", "wrong-phase"):
            raise
        return False
    return True


def _recheck(record: GameRecord, start: int, state: GameState
             ) -> tuple[list[tuple[int, Move, IllegalMoveError | None]], GameState]:
    """The moves from ``start`` on (``state``: the position before move ``start``)
    whose flag no longer fits the position before them (a forced move the rules
    now allow, or an unflagged one they refuse), with the rules' objection; and
    the final position. Nothing is changed, so a refusal (RulesError) leaves the
    game as it was."""
    fixes: list[tuple[int, Move, IllegalMoveError | None]] = []
    for n, entry in enumerate(record.effective()[start:], start):
        problem: IllegalMoveError | None = None
        try:
            check_move(state, entry.move)
        except IllegalMoveError as exc:
            if exc.reason in ("game-over", "wrong-phase"):
                raise RulesError(f"move {n + 1} ({entry.move}) cannot follow: {exc}") from None
            problem = exc
        if entry.forced != (problem is not None):
            fixes.append((n, entry.move, problem))
        try:
            state = apply_move(state, entry.move, check=False)
        except RulesError as exc:
            raise RulesError(f"move {n + 1} ({entry.move}) cannot follow: {exc}") from None
    return fixes, state


def move_json(n: int, entry: MoveEntry) -> dict[str, Any]:
    m = entry.move
    out: dict[str, Any] = {"ply": n, "notation": str(m), "seat": m.seat.value,
                           "type": type(m).__name__.lower()}
    if isinstance(m, Build):
        out.update(color=m.block.color, storeys=m.block.storeys, city=m.site.city,
                   row=m.site.row, col=m.site.col, site=m.site.name, card=str(m.card))
    elif isinstance(m, Pass):
        out.update(card=str(m.card), forfeit=str(m.forfeit) if m.forfeit else None)
    elif isinstance(m, Commit):
        out["blocks"] = None if m.blocks is None else [str(b) for b in m.blocks]
    if entry.forced:
        out["forced"] = True
    if entry.warning:
        out["warning"] = entry.warning
    if entry.doubtful:
        out["doubtful"] = True
        if entry.never_shown:
            out["never_shown"] = True
    if entry.agreed:
        out["agreed"] = True
    return out


def _snapshot(record: GameRecord, effective: list[MoveEntry], state: GameState, shown: int,
              live: _Live, version: int, card_seen: tuple[Seat, Card] | None,
              guidance: dict[str, Any] | None) -> dict[str, Any]:
    config = state.config
    board = state.board.to_json(config.colors)
    board["players"] = [p.to_json() for p in config.players]
    if shown == len(effective) and live.unseen:
        board["unseen"] = [_site_ref(code) for code in live.unseen]
    players_cs = [(p.name, p.colors) for p in config.players]
    rounds = [{"round": k + 1, **s.to_json(), "players": s.players(players_cs)}
              for k, s in enumerate(state.scores)]
    moves = [move_json(n, e) for n, e in enumerate(effective)]
    for mv in moves:
        crop = live.evidence.get(mv["ply"])
        if crop:
            mv["crop"] = crop
    last_build = next((e.move for e in reversed(effective[:shown]) if isinstance(e.move, Build)),
                      None)
    game: dict[str, Any] = {
        "header": header_json(config, record.date, record.meta),
        "edition_title": config.edition.title,
        "round": state.round, "rounds": config.rounds, "phase": state.phase.value,
        "to_move": None if state.is_over else state.player.name,
        "to_move_seat": None if state.is_over else state.seat.value,
        "start_player": config.players[state.start].name,
        "ply": shown, "plies": len(effective),
        "players": [{
            **p.to_json(),
            "blocks_left": [str(b) for b in (state.remaining_blocks(i) or ())],
            "blocks_left_count": state.blocks_left_this_round(i),
            "declared": state.remaining_blocks(i) is not None,
            "played_top": str(state.played[p.seat][-1]) if state.played[p.seat] else None,
        } for i, p in enumerate(config.players)],
        "last_move": str(last_build) if last_build else None,
        "last_site": last_build.site.index if last_build else None,
        "card_seen": {"seat": card_seen[0].value, "card": str(card_seen[1])}
        if card_seen else None,
        "monster": state.monster.index if state.monster else None,
        "over": state.is_over,
        "result": final_result(state) if state.is_over else None,
        # replayed from photos: the table's camera does not record into it
        "from_photos": is_from_photos(record.meta),
    }
    return {
        "board": board,
        "moves": moves,
        "scores": {"rounds": rounds, "totals": state.totals(), "players": state.player_totals()},
        "game": game,
        "warnings": [w.to_json() for w in live.warnings],
        "guidance": guidance,
        "version": version,
    }


def _site_ref(code: str) -> dict[str, int]:
    return Site.parse(code).to_json()
