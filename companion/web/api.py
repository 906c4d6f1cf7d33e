"""The JSON API the page (and scripts) use: read the game, change it with the PIN.

Reading is open to everyone at the table. Every change goes through the
:class:`GameSession`, so the journal records it and every page hears of it.
"""

from __future__ import annotations

import logging
import re
import tempfile
import time
from pathlib import Path
from typing import Any

from flask import Blueprint, Response, jsonify, request

from companion.rules import (
    EDITIONS,
    REASONS,
    Card,
    IllegalMoveError,
    NotationError,
    RulesError,
    Seat,
    Variant,
    config_from_json,
    make_config,
    parse_move,
)
from companion.rules.topology import default_topology
from companion.session import GameSession
from companion.web.app import table
from companion.web.auth import fail, is_unlocked, require_json, require_table

log = logging.getLogger(__name__)


def _failed(what: str, exc: Exception) -> None:
    """A provider's failure, logged the first time it happens: the page goes on
    without what it provides, but a bug there must not stay silent (and the page
    asks on every update: a line per phone per update would drown the log)."""
    key = f"{what}: {type(exc).__name__}: {exc}"
    logged = table().failures_logged
    if key not in logged:
        logged.add(key)
        log.warning("the page goes on without %s", key, exc_info=exc)

bp = Blueprint("api", __name__, url_prefix="/api")

NO_GAME = "no game is set up yet"


def _session() -> GameSession:
    return table().session


def _require_game() -> GameSession:
    sess = _session()
    if not sess.has_game:
        fail(409, NO_GAME)
    return sess


def _no_store(resp: Response) -> Response:
    resp.headers["Cache-Control"] = "no-store"
    return resp


# -- reading -------------------------------------------------------------------

@bp.get("/state")
def state() -> Response:
    """``session.snapshot()`` plus what only the web side knows (LEDs, log-in)."""
    raw = request.args.get("ply")
    ply: int | None = None
    if raw is not None and raw != "":
        if not re.fullmatch(r"\d{1,6}", raw.strip()):
            fail(400, f"ply must be a whole number from 0, not {raw!r}")
        ply = int(raw)
    snap = _session().snapshot(ply)
    live = ply is None or snap["game"] is None or ply >= snap["game"]["plies"]
    snap["table"] = {"unlocked": is_unlocked(), "services": table().services.flags(),
                     "live": live}
    snap["leds"] = led_frame() if live else None  # the strip shows now, not the past
    for ply in second_looks() if live else ():
        if 0 <= ply < len(snap["moves"]) and snap["moves"][ply].get("doubtful"):
            snap["moves"][ply]["second_look"] = True
    return _no_store(jsonify(snap))


def second_looks() -> list[int]:
    """The doubtful builds the camera will weigh again, by ply (none without a camera)."""
    provider = table().services.second_looks
    if provider is None:
        return []
    try:
        return [int(p) for p in provider()]
    except Exception as exc:  # the camera's bookkeeping must not break the page
        _failed("the second looks", exc)
        return []


def led_frame() -> list[str] | None:
    """The real strip's current frame as CSS colours (None: the page draws a virtual one)."""
    provider = table().services.leds
    if provider is None:
        return None
    try:
        frame = provider()
    except Exception as exc:  # a broken strip must not break the page
        _failed("the LED frame", exc)
        return None
    return None if frame is None else [_css_color(c) for c in frame]


def _css_color(value: Any) -> str:
    if isinstance(value, str) and re.fullmatch(r"#[0-9a-fA-F]{6}", value):
        return value.lower()
    try:
        r, g, b = (max(0, min(255, int(v))) for v in list(value)[:3])
    except (TypeError, ValueError):
        return "#000000"
    return f"#{r:02x}{g:02x}{b:02x}"


@bp.get("/leds")
def leds() -> Response:
    return _no_store(jsonify({"leds": led_frame()}))


@bp.get("/meta")
def meta() -> Response:
    return jsonify(meta_json())


def meta_json() -> dict[str, Any]:
    """Static facts for the set-up form and the board drawing."""
    topo = default_topology()
    return {
        "cities": list(topo.city_names),
        "site_names": [list(r) for r in topo.site_names],
        "seats": [s.value for s in Seat],
        "editions": [{
            "name": e.name, "title": e.title, "colors": list(e.colors),
            "tie_break": e.tie_break.value,
            "players": {str(n): {"rounds": r.rounds, "blocks_per_color": r.blocks_per_color,
                                 "colors_per_player": r.colors_per_player}
                        for n, r in sorted(e.players.items())},
        } for e in EDITIONS.values()],
        "variants": [v.value for v in Variant],
        "reasons": dict(REASONS),
        "services": table().services.flags(),
    }


@bp.get("/record")
def record() -> Response:
    """The game record (manhattan-game/1) as a download."""
    sess = _require_game()
    rec = sess.record
    name = f"manhattan-{rec.date}-{_slug(sess.game_id or time.strftime('%H%M%S'))}.json"
    resp = Response(rec.dumps() + "\n", mimetype="application/json")
    resp.headers["Content-Disposition"] = f'attachment; filename="{name}"'
    return _no_store(resp)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", text).strip("-")[:40] or "game"


# -- changing ------------------------------------------------------------------

@bp.post("/setup")
def setup() -> tuple[Response, int]:
    """A new game: edition, players (names, seats, colours) and variants.

    ``players`` is the game.json list, or a number for the default seating.
    """
    require_table()
    data = require_json()
    players = data.get("players")
    try:
        if isinstance(players, int) and not isinstance(players, bool):
            variants = data.get("variants") or []
            if not isinstance(variants, list):
                fail(400, "'variants' must be a list")
            config = make_config(players, edition=str(data.get("edition", "classic")),
                                 variants=[str(v) for v in variants],
                                 track_cards=_flag(data, "track_cards"),
                                 seed=_int(data.get("seed", 0), "seed"))
        else:
            config = config_from_json(data)
    except RulesError as exc:
        fail(400, _strip_prefix(str(exc)))
    _session().new_game(config)
    return jsonify({"game": _session().snapshot()["game"]["header"]}), 201


def _move_at(data: dict[str, Any], sess: GameSession, ply: int, verb: str) -> None:
    """Move ``ply`` is there to ``verb`` (404), and is the one the phone showed (409)."""
    n = len(sess.record.effective())
    if ply >= n:
        fail(404, f"no move number {ply} to {verb} (the game has {n})")
    _expected(data, sess, ply)


def _expected(data: dict[str, Any], sess: GameSession, ply: int,
              what: str | None = None) -> None:
    """``expect``: the move the phone showed at ``ply`` (its notation). Two phones (or a
    phone and the camera) acting at once must not both land: the second finds another
    move there and is refused (409) instead of taking back or changing that one."""
    if "expect" not in data:
        return
    want = data["expect"]
    if not isinstance(want, str):
        fail(400, "'expect' must be the move's notation")
    moves = sess.record.moves
    have = str(moves[ply]) if 0 <= ply < len(moves) else None
    if have != " ".join(want.split()):
        fail(409, f"{what or f'move {ply + 1}'} is no longer {want.strip()[:60]}: the game "
                  "changed meanwhile (another phone or the camera); look again")


def _in_play(sess: GameSession) -> bool:
    """A game of the table under way (one replayed from photos is not the table's)."""
    with sess.lock:  # (the game as it stands: its state is kept, not replayed)
        return (sess.has_game and not sess.from_photos and bool(sess.record.entries)
                and not sess.state.is_over)


def _strip_prefix(message: str) -> str:
    return message.removeprefix("bad set-up: ")


def _int(value: Any, what: str) -> int:
    """A whole number sent as one (1.9, true or "7" are not; 1e400 is no 500)."""
    if isinstance(value, bool) or not isinstance(value, int):
        fail(400, f"{what} must be a whole number")
    return value


def _flag(data: dict[str, Any], key: str) -> bool:
    """A yes/no sent as JSON true or false: the text "false" meant yes (a truthy
    string), and deleted a move."""
    value = data.get(key, False)
    if not isinstance(value, bool):
        fail(400, f"'{key}' must be true or false")
    return value


def _parse(text: Any) -> Any:
    if not isinstance(text, str) or not text.strip():
        fail(400, "give the move in notation, e.g. \"S c02 red1@1NE\"")
    try:
        return parse_move(text)
    except NotationError as exc:
        fail(400, str(exc))


@bp.post("/moves")
def play() -> tuple[Response, int]:
    """A move entered by hand (or any client). ``allow_illegal`` records what
    really happened at the table, with a warning, instead of refusing it."""
    require_table()
    data = require_json()
    move = _parse(data.get("move"))
    sess = _require_game()
    try:
        outcome = sess.play(move, allow_illegal=_flag(data, "allow_illegal"))
    except IllegalMoveError as exc:
        fail(409, str(exc), reason=exc.reason)
    except RulesError as exc:
        fail(409, str(exc))
    return jsonify({
        "ply": len(sess.record.effective()) - 1, "move": str(outcome.move),
        "legal": outcome.legal,
        "warning": None if outcome.warning is None else outcome.warning.to_json(),
    }), 201


@bp.post("/cards")
def see_card() -> Response:
    """A card seen on a seat's stack (manual entry): lights its sites."""
    require_table()
    data = require_json()
    try:
        seat = Seat.parse(str(data.get("seat", "")))
        card = Card.parse(str(data.get("card", "")))
    except NotationError as exc:
        fail(400, str(exc))
    sess = _require_game()
    try:
        sess.see_card(seat, card)
    except RulesError as exc:
        fail(409, str(exc))
    return jsonify({"seat": seat.value, "card": str(card), "guidance": sess.guidance()})


@bp.post("/moves/<int:ply>/correct")
def correct(ply: int) -> Response:
    """Replace move ``ply`` (0-based) with new notation, or delete it (``move``: null).
    Later moves are checked again on the new position, as after an insertion."""
    require_table()
    data = require_json()
    if "move" not in data:
        fail(400, "give the corrected move, or \"move\": null to delete it")
    move = None if data["move"] is None or _flag(data, "delete") else _parse(data["move"])
    note = data.get("note", "")
    if not isinstance(note, str):
        fail(400, "'note' must be text")
    sess = _require_game()
    with sess.lock:
        _move_at(data, sess, ply, "correct")
        try:
            done = sess.correct(ply, move, note.strip()[:200])
        except RulesError as exc:
            fail(409, f"cannot make that correction: {exc}")
    return jsonify({"ply": ply, "move": None if move is None else str(move), **done})


@bp.post("/moves/<int:ply>/keep")
def keep(ply: int) -> Response:
    """The players looked at move ``ply`` (0-based) and keep it as it is: its
    "check this site" mark and its warnings go, also after a restart."""
    require_table()
    data = require_json()
    sess = _require_game()
    with sess.lock:
        _move_at(data, sess, ply, "keep")
        try:
            sess.keep(ply)
        except RulesError as exc:  # an undo from another phone came first
            fail(404, str(exc))
    return jsonify({"ply": ply, "kept": True})


@bp.post("/moves/<int:ply>/insert")
def insert(ply: int) -> Response:
    """Put a move the camera missed before move ``ply`` (0-based; the number of
    moves puts it last). Later moves are checked again on the new position."""
    require_table()
    data = require_json()
    if data.get("move") is None:
        fail(400, "give the missing move in the move notation")
    move = _parse(data["move"])
    note = data.get("note", "")
    if not isinstance(note, str):
        fail(400, "'note' must be text")
    sess = _require_game()
    n = len(sess.record.effective())
    if ply > n:
        fail(404, f"no place {ply} to insert a move (the game has {n})")
    try:
        done = sess.insert(ply, move, note.strip()[:200])
    except RulesError as exc:
        fail(409, f"cannot insert that move: {exc}")
    return jsonify({"ply": ply, "move": str(move), **done})


@bp.post("/undo")
def undo() -> Response:
    """Take back the last move."""
    require_table()
    data = require_json()
    sess = _require_game()
    with sess.lock:  # the move taken back is the one named: none slips in between
        moves = sess.record.effective()
        if not moves:
            fail(409, "there is no move to undo")
        _expected(data, sess, len(moves) - 1, "the last move")
        try:
            sess.undo()
        except RulesError as exc:
            fail(409, str(exc))
    return jsonify({"undone": str(moves[-1].move), "ply": len(moves) - 1})


@bp.post("/warnings/<int:warning_id>/resolve")
def resolve(warning_id: int) -> Response:
    """The players agree: what the table shows stands."""
    require_table()
    require_json()
    sess = _require_game()
    if not any(w["id"] == warning_id for w in sess.snapshot()["warnings"]):
        fail(404, f"no warning {warning_id}")
    try:
        sess.resolve_warning(warning_id)
    except RulesError:  # an undo from another phone took it away first
        fail(404, f"no warning {warning_id}")
    return jsonify({"id": warning_id, "resolved": True})


@bp.post("/table-game")
def table_game() -> Response:
    """The table's game in play back on the page, after a replay from photos."""
    require_table()
    back = table().services.table_game
    if back is None:
        fail(501, "this companion keeps no journal to go back to the table's game from")
    game_id = back()
    if game_id is None:
        fail(404, "the journal has no game of the table in play")
    return jsonify({"game": game_id})


@bp.post("/upload")
def upload() -> Response:
    """Photos of a game (several files or one zip) for the replay service."""
    from companion.web.uploads import collect_files

    require_table(form_ok=True)
    if request.mimetype != "multipart/form-data":
        fail(415, "send the photos as multipart/form-data")
    replay = table().services.replay
    if replay is None:
        fail(501, "replaying photos is not available here: this companion has no replay "
                  "service")
    if request.form.get("replace", "") not in ("1", "true", "yes") and _in_play(_session()):
        # the replayed game would take the place on the page of the game at the table
        fail(409, "a game is in play at the table: its replay from photos would take its "
                  "place on the page (the journal keeps it); send replace=1 to go on")
    with tempfile.TemporaryDirectory(prefix="companion-spool-") as spool:
        files = collect_files(request.files.getlist("photos") or list(request.files.values()),
                              Path(spool))
        try:
            result = replay(files)
        except ValueError as exc:
            fail(400, str(exc))
    return jsonify({"files": len(files), **dict(result)})
