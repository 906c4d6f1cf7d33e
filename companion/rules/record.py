"""Game records: a JSON header, the move list, corrections and round scores.

Corrections are entries of their own (never silent edits), so a record shows
what the companion first believed and what the table fixed.
"""

from __future__ import annotations

import datetime as _dt
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from companion.rules import jsonkeys
from companion.rules.board import Site
from companion.rules.editions import get_edition
from companion.rules.errors import RecordError, RulesError
from companion.rules.legality import apply_move
from companion.rules.moves import Move
from companion.rules.notation import parse_move
from companion.rules.state import GameConfig, GameState, NoBuildPolicy, Player, new_game
from companion.rules.topology import Seat
from companion.rules.variants import Variant

RECORD_FORMAT = "manhattan-game/1"


@dataclass(frozen=True)
class MoveEntry:
    """A move as it happened; ``forced`` marks an illegal build the table let stand,
    ``doubtful`` one whose site the camera read by a narrow margin (worth a look),
    ``agreed`` one the players looked at and kept as it is (its warning is settled).
    ``never_shown`` (with ``doubtful``): a replayed build no photo showed as built,
    or a live one the camera never saw (its site out of sight, its tower read as
    before), its storeys chosen among equals: the players are told why it is worth
    a look."""

    move: Move
    forced: bool = False
    warning: str | None = None
    doubtful: bool = False
    agreed: bool = False
    never_shown: bool = False


@dataclass(frozen=True)
class Correction:
    """Replace move number ``index`` (0-based) with ``move``, or delete it (None);
    with ``insert``, put ``move`` before move ``index`` (a move the camera missed);
    ``agreed``: the players kept move ``index`` as it is (it keeps its warning text,
    and its warning is not raised again when the game is resumed); ``doubtful``:
    the camera's own correction, worth a look (as ``MoveEntry.doubtful``)."""

    index: int
    move: Move | None
    note: str = ""
    forced: bool = False
    insert: bool = False
    agreed: bool = False
    doubtful: bool = False


Entry = MoveEntry | Correction


#: ``meta.source`` of a game replayed from photos: not the game on the table
PHOTOS_SOURCE = "photos"


def is_from_photos(meta: Any) -> bool:
    """Whether a record's (or a header's) ``meta`` says it was replayed from photos."""
    return isinstance(meta, dict) and meta.get("source") == PHOTOS_SOURCE


@dataclass(frozen=True)
class GameRecord:
    config: GameConfig
    entries: tuple[Entry, ...] = ()
    date: str = field(default_factory=lambda: _dt.date.today().isoformat())
    meta: dict[str, Any] = field(default_factory=dict)

    # -- building ----------------------------------------------------------
    def with_move(self, move: Move, *, forced: bool = False,
                  warning: str | None = None, doubtful: bool = False) -> GameRecord:
        return replace(self, entries=self.entries + (MoveEntry(move, forced, warning,
                                                               doubtful),))

    def with_correction(self, index: int, move: Move | None, note: str = "",
                        *, forced: bool = False, doubtful: bool = False) -> GameRecord:
        n = len(self.effective())
        if not 0 <= index < n:
            raise RecordError(f"no move number {index} to correct (the game has {n})")
        return replace(self, entries=self.entries + (
            Correction(index, move, note, forced, doubtful=doubtful and move is not None),))

    def with_agreement(self, index: int, note: str = "") -> GameRecord:
        """Move ``index`` kept as it stands, flags and all: the players settled its
        warning (or the camera's doubt about it)."""
        effective = self.effective()
        if not 0 <= index < len(effective):
            raise RecordError(f"no move number {index} to keep (the game has {len(effective)})")
        entry = effective[index]
        return replace(self, entries=self.entries + (
            Correction(index, entry.move, note, entry.forced, agreed=True),))

    def with_insertion(self, index: int, move: Move, note: str = "",
                       *, forced: bool = False, doubtful: bool = False) -> GameRecord:
        """``move`` put before move ``index`` (``index`` = the number of moves: after
        the last); the moves after it keep their own flags."""
        n = len(self.effective())
        if not 0 <= index <= n:
            raise RecordError(f"no place {index} to insert a move (the game has {n})")
        return replace(self, entries=self.entries + (Correction(index, move, note, forced,
                                                                insert=True,
                                                                doubtful=doubtful),))

    # -- reading -----------------------------------------------------------
    def effective(self) -> list[MoveEntry]:
        """The move list with every correction applied, in order."""
        moves: list[MoveEntry] = []
        for e in self.entries:
            if isinstance(e, MoveEntry):
                moves.append(e)
            elif e.insert:
                assert e.move is not None
                moves.insert(e.index, MoveEntry(e.move, e.forced, None, e.doubtful))
            elif e.move is None:
                del moves[e.index]
            elif e.agreed and moves[e.index].move == e.move:
                moves[e.index] = MoveEntry(e.move, e.forced, moves[e.index].warning,
                                           agreed=True)
            else:
                moves[e.index] = MoveEntry(e.move, e.forced, None, e.doubtful, e.agreed)
        return moves

    @property
    def moves(self) -> list[Move]:
        return [e.move for e in self.effective()]

    def states(self) -> Iterator[GameState]:
        """The start position and the position after every effective move."""
        state = new_game(self.config)
        yield state
        for n, e in enumerate(self.effective()):
            try:
                state = apply_move(state, e.move, check=not e.forced)
            except RulesError as exc:
                raise RecordError(f"move {n + 1} ({e.move}): {exc}") from None
            yield state

    def replay(self) -> GameState:
        *_, final = self.states()
        return final

    def state_at(self, ply: int) -> GameState:
        """The position after the first ``ply`` effective moves (0: the start)."""
        for n, state in enumerate(self.states()):
            if n == ply:
                return state
        raise RulesError(f"no position {ply}")

    # -- JSON --------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        final = self.replay()
        entries = [entry_json(e) for e in self.entries]
        players = [(p.name, p.colors) for p in self.config.players]
        rounds = [{"round": k + 1, **s.to_json(), "players": s.players(players)}
                  for k, s in enumerate(final.scores)]
        out: dict[str, Any] = {
            "format": RECORD_FORMAT,
            "header": header_json(self.config, self.date, self.meta),
            "entries": entries,
            "rounds": rounds,
        }
        if final.is_over:
            out["result"] = final_result(final)
        return out

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=1)

    @classmethod
    def from_json(cls, data: Any) -> GameRecord:
        if not isinstance(data, dict) or data.get("format") != RECORD_FORMAT:
            raise RecordError(f"not a game record (expected format {RECORD_FORMAT!r})")
        header = data.get("header")
        if not isinstance(header, dict):
            raise RecordError("game record has no header")
        config = config_from_json(header)
        entries: list[Entry] = []
        if "entries" not in data:
            # a record under another key ("moves") would load as a game of no moves
            raise RecordError("game record has no 'entries' (its moves)")
        raw_entries = data["entries"]
        if not isinstance(raw_entries, list):
            raise RecordError("'entries' must be a list")
        for n, item in enumerate(raw_entries):
            if not isinstance(item, dict):
                raise RecordError(f"entries[{n}] must be an object")
            try:
                if item.get("type") == "move":
                    entries.append(MoveEntry(parse_move(str(item["move"])),
                                             _flag(item.get("forced", False), "forced"),
                                             _text_or_none(item.get("warning")),
                                             _flag(item.get("doubtful", False), "doubtful"),
                                             _flag(item.get("agreed", False), "agreed"),
                                             _flag(item.get("never_shown", False),
                                                   "never_shown")))
                elif item.get("type") == "correction" and "inserts" in item:
                    if item.get("move") is None:
                        raise RecordError("an insertion needs a move")
                    entries.append(Correction(int(item["inserts"]), parse_move(str(item["move"])),
                                              _text(item.get("note", ""), "note"),
                                              _flag(item.get("forced", False), "forced"),
                                              insert=True,
                                              doubtful=_flag(item.get("doubtful", False),
                                                             "doubtful")))
                elif item.get("type") == "correction":
                    mv = item.get("move")
                    entries.append(Correction(int(item["replaces"]),
                                              None if mv is None else parse_move(str(mv)),
                                              _text(item.get("note", ""), "note"),
                                              _flag(item.get("forced", False), "forced"),
                                              agreed=_flag(item.get("agreed", False), "agreed"),
                                              doubtful=_flag(item.get("doubtful", False),
                                                             "doubtful")))
                else:
                    raise RecordError(f"entries[{n}]: unknown entry type {item.get('type')!r}")
            except RulesError as exc:
                raise RecordError(f"entries[{n}]: {exc}") from None
            except KeyError as exc:
                raise RecordError(f"entries[{n}]: missing field {exc}") from None
            except (TypeError, ValueError, OverflowError) as exc:
                field_ = next((k for k in ("replaces", "inserts") if k in item), None)
                what = f"bad field {field_!r}" if field_ else "a bad field"
                raise RecordError(f"entries[{n}]: {what} ({exc})") from None
        meta = header.get("meta", {}) or {}
        if not isinstance(meta, dict):
            raise RecordError("'meta' in the header must be an object")
        date = header.get("date", "")
        if not isinstance(date, str) or len(date) > 40:
            # shown in `companion games` and the page as it is: [1, 2] was stored as text
            raise RecordError("'date' in the header must be text (e.g. 2026-11-28)")
        rec = cls(config, tuple(entries), date, dict(meta))
        rec._check_corrections()
        final = rec.replay()
        recorded = data.get("rounds")
        if recorded is not None:
            _check_rounds(recorded, final)
        return rec

    @classmethod
    def loads(cls, text: str) -> GameRecord:
        try:
            data = jsonkeys.loads(text)
        except json.JSONDecodeError as exc:
            raise RecordError(f"malformed JSON: {exc.msg} at line {exc.lineno}") from None
        except jsonkeys.DuplicateKeyError as exc:
            raise RecordError(f"malformed JSON: {exc}") from None
        except RecursionError:
            raise RecordError("malformed JSON: nested too deeply") from None
        return cls.from_json(data)

    def _check_corrections(self) -> None:
        count = 0
        for e in self.entries:
            if isinstance(e, MoveEntry):
                count += 1
                continue
            if e.insert:
                if not 0 <= e.index <= count:
                    raise RecordError(f"an insertion names place {e.index}, which does not exist")
                count += 1
                continue
            if not 0 <= e.index < count:
                raise RecordError(f"a correction names move {e.index}, which does not exist")
            if e.move is None:
                count -= 1


def entry_json(e: Entry) -> dict[str, Any]:
    """One entry of a record as JSON (also what the journal stores, line by line)."""
    if isinstance(e, MoveEntry):
        item: dict[str, Any] = {"type": "move", "move": str(e.move)}
        if e.forced:
            item["forced"] = True
        if e.warning:
            item["warning"] = e.warning
        if e.doubtful:
            item["doubtful"] = True
        if e.agreed:
            item["agreed"] = True
        if e.never_shown:
            item["never_shown"] = True
        return item
    item = {"type": "correction", "inserts" if e.insert else "replaces": e.index,
            "move": None if e.move is None else str(e.move)}
    if e.note:
        item["note"] = e.note
    if e.forced:
        item["forced"] = True
    if e.agreed:
        item["agreed"] = True
    if e.doubtful:
        item["doubtful"] = True
    return item


def _check_rounds(recorded: Any, final: GameState) -> None:
    if not isinstance(recorded, list):
        raise RecordError("'rounds' must be a list")
    if len(recorded) > len(final.scores):
        raise RecordError(f"the record lists {len(recorded)} scored rounds, the moves give "
                          f"{len(final.scores)}")
    for k, item in enumerate(recorded):
        got = final.scores[k].to_json()["colors"]
        want = item.get("colors") if isinstance(item, dict) else None
        if want != got:
            raise RecordError(f"round {k + 1}: recorded scores {want} differ from the moves' {got}")


def header_json(config: GameConfig, date: str,
                meta: dict[str, Any] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "edition": config.edition.name,
        "variants": sorted(v.value for v in config.variants),
        "players": [p.to_json() for p in config.players],
        "date": date,
        "seed": config.seed,
        "track_cards": config.track_cards,
        "no_build": config.no_build.value,
    }
    if config.reshuffle_at_round_end is not None:
        out["reshuffle_at_round_end"] = config.reshuffle_at_round_end
    if config.monster_start is not None:
        out["monster_start"] = config.monster_start.code
    if config.monster_wrap is not None:
        out["monster_wrap"] = config.monster_wrap
    if config.slow_growth_order != (0, 1, 2, 3, 4, 5):
        out["slow_growth_order"] = list(config.slow_growth_order)
    if meta:
        out["meta"] = meta
    return out


def config_from_file(path: str | Path) -> GameConfig:
    """The set-up in a ``game.json`` file (formats.md); a RecordError naming the file."""
    if Path(path).exists() and not Path(path).is_file():
        raise RecordError(f"{path}: not a regular file")  # a folder, a pipe, a device
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RecordError(f"{path}: no such file") from None
    except UnicodeDecodeError:
        raise RecordError(f"{path}: not a text file") from None
    except OSError as exc:
        raise RecordError(f"{path}: cannot read ({exc.strerror or exc})") from None
    try:
        data = jsonkeys.loads(text)
    except json.JSONDecodeError as exc:
        raise RecordError(f"{path}: malformed JSON at line {exc.lineno}") from None
    except jsonkeys.DuplicateKeyError as exc:
        raise RecordError(f"{path}: malformed JSON: {exc}") from None
    except RecursionError:
        raise RecordError(f"{path}: malformed JSON: nested too deeply") from None
    try:
        return config_from_json(data)
    except RecordError as exc:
        raise RecordError(f"{path}: {exc}") from None


def config_from_json(header: dict[str, Any]) -> GameConfig:
    """Read a game set-up: a record header or a ``game.json`` (formats.md)."""
    if not isinstance(header, dict):
        raise RecordError(f"the set-up must be an object, not {type(header).__name__}")
    try:
        edition = get_edition(str(header.get("edition", "classic")))
        raw_players = header.get("players")
        if not isinstance(raw_players, list) or not raw_players:
            raise RecordError("the set-up needs a list of players")
        players = []
        for n, p in enumerate(raw_players):
            if not isinstance(p, dict):
                raise RecordError(f"players[{n}] must be an object")
            colors = p.get("colors")
            if not isinstance(colors, list) or not all(isinstance(c, str) for c in colors):
                raise RecordError(f"players[{n}]: 'colors' must be a list of colour names")
            name = p.get("name")
            if name is not None and not isinstance(name, str):
                raise RecordError(f"players[{n}]: 'name' must be text")
            players.append(Player(name or f"Player {n + 1}",
                                  Seat.parse(str(p.get("seat", ""))), tuple(colors)))
        variants = header.get("variants", []) or []
        if not isinstance(variants, list):
            raise RecordError("'variants' must be a list")
        kw: dict[str, Any] = {}
        if "monster_start" in header:
            kw["monster_start"] = Site.parse(str(header["monster_start"]))
        # yes/no as JSON true or false: the text "false" is truthy, and would have
        # turned the house rule on
        if header.get("monster_wrap") is not None:
            kw["monster_wrap"] = _flag(header["monster_wrap"], "monster_wrap")
        if header.get("reshuffle_at_round_end") is not None:
            kw["reshuffle_at_round_end"] = _flag(header["reshuffle_at_round_end"],
                                                 "reshuffle_at_round_end")
        if "slow_growth_order" in header:
            order = header["slow_growth_order"]
            if not isinstance(order, list) or not all(
                    isinstance(x, int) and not isinstance(x, bool) for x in order):
                # the text "012345" read as six digits, true as 1
                raise RecordError("'slow_growth_order' must be a list of city numbers")
            kw["slow_growth_order"] = tuple(order)
        return GameConfig(
            edition, tuple(players), frozenset(Variant.parse(str(v)) for v in variants),
            no_build=NoBuildPolicy(str(header.get("no_build", "pass"))),
            track_cards=(header.get("track_cards") is not None
                         and _flag(header["track_cards"], "track_cards")),
            seed=header.get("seed", 0), **kw)  # GameConfig refuses what cannot replay
    except RecordError:
        raise
    except RulesError as exc:
        raise RecordError(f"bad set-up: {exc}") from None
    except (TypeError, ValueError, OverflowError) as exc:
        raise RecordError(f"bad set-up: {exc}") from None


def _text_or_none(value: Any) -> str | None:
    if value is not None and not isinstance(value, str):
        raise RecordError("'warning' must be text")
    return value


def _text(value: Any, name: str) -> str:
    if not isinstance(value, str):  # a note given as an object was stored as its repr
        raise RecordError(f"'{name}' must be text")
    return value


def _flag(value: Any, name: str) -> bool:
    if not isinstance(value, bool):
        raise RecordError(f"'{name}' must be true or false")
    return value


def final_result(state: GameState) -> dict[str, Any]:
    """Standings with the edition's tie-break; ``winners`` may hold several names."""
    from companion.rules.endgame import standings

    rows = standings(state)
    return {
        "standings": [r.to_json() for r in rows],
        "winners": [r.name for r in rows if r.rank == 1],
        "tie_break": state.config.edition.tie_break.value,
    }


def record_from_moves(config: GameConfig, moves: Sequence[Move], **kw: Any) -> GameRecord:
    return GameRecord(config, tuple(MoveEntry(m) for m in moves), **kw)
