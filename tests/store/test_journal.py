"""The journal: replaying it equals the live game, whatever the session did."""

from __future__ import annotations

import json
import sqlite3
import tempfile
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from companion.bots import RandomBot
from companion.rules import (
    Block,
    Build,
    Card,
    GameRecord,
    RecordError,
    RulesError,
    Site,
    apply_move,
    legal_moves,
    make_config,
)
from companion.session import GameSession
from companion.store import Journal, JournalError, UnknownGameError, open_data_dir, resume_or_start
from companion.store.journal import APPLICATION_ID, SCHEMA_VERSION


def _assert_same(journal: Journal, session: GameSession) -> None:
    """The journal's game equals the session's: record, state and JSON."""
    assert session.game_id is not None
    loaded = journal.load(session.game_id)
    assert loaded == session.record
    assert loaded.replay() == session.state
    assert loaded.to_json() == session.record.to_json()


def test_bot_game_round_trip(make_journal, play) -> None:
    journal = make_journal()
    session = GameSession(make_config(4, seed=3, track_cards=True), journal=journal)
    assert play(session, seed=3) == 112
    assert session.state.is_over
    _assert_same(journal, session)
    # the file alone (a new process after a power cut) gives the same game
    journal.close()
    again = Journal(journal.path)
    gid = session.game_id
    assert gid is not None
    assert again.load(gid) == session.record
    assert again.current_game() is not None  # over, but nobody marked it finished yet
    again.finish(gid)
    assert again.current_game() is None
    [info] = again.list_games()
    assert (info.id, info.moves, info.rounds_played, info.rounds, info.status) == (
        gid, 112, 4, 4, "finished")
    assert list(info.winners) == session.record.to_json()["result"]["winners"]
    again.close()


def test_file_is_ours_and_durable(make_journal) -> None:
    journal = make_journal()
    db = sqlite3.connect(journal.path)
    assert db.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    db.close()
    conn = journal._conn
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1


def test_corrections_and_warnings_journaled(make_journal, play) -> None:
    journal = make_journal()
    session = GameSession(make_config(4, seed=5, track_cards=True), journal=journal)
    play(session, moves=10, seed=5)
    # replace the last build with another legal build from the same position
    states = list(session.record.states())
    index = len(session.record.effective()) - 1
    before = states[index]
    others = [m for m in legal_moves(before) if m != session.record.moves[index]]
    session.correct(index, others[0], "camera misread the site")
    session.undo()
    # a build the table let stand although illegal: kept, flagged, journaled
    state = session.state
    hand = state.hand()
    assert hand is not None
    taken = next(s for s in state.board.occupied())
    bad = Build(state.seat, hand[0], taken, Block(state.player.colors[0], 1))
    outcome = session.play(bad, allow_illegal=True)
    assert not outcome.legal and outcome.warning is not None  # the seeded game: a taken site
    _assert_same(journal, session)
    raw = journal.raw(session.game_id or "")["entries"]
    assert raw[-3] == {"type": "correction", "replaces": index, "move": str(others[0]),
                       "note": "camera misread the site"}
    assert raw[-2] == {"type": "correction", "replaces": index, "move": None, "note": "undo"}
    assert raw[-1]["forced"] is True and raw[-1]["warning"]
    # a resumed session shows the same warning again
    resumed = GameSession(journal=journal)
    resume_or_start(resumed, journal, lambda: pytest.fail("must resume"))
    assert [w["reason"] for w in resumed.snapshot()["warnings"]] == \
        [w["reason"] for w in session.snapshot()["warnings"]]


def test_a_warning_the_players_keep_stays_settled_after_a_restart(make_journal, play) -> None:
    journal = make_journal()
    session = GameSession(make_config(4, seed=5, track_cards=True), journal=journal)
    play(session, moves=10, seed=5)
    state = session.state
    hand = state.hand()
    assert hand is not None
    bad = Build(state.seat, hand[0], Site.parse("0NW"), Block(state.player.colors[0], 1))
    outcome = session.play(bad, allow_illegal=True)
    assert outcome.warning is not None and outcome.warning.reason == "wrong-site"
    ply = outcome.warning.ply
    # a camera report about no move: resolving it records nothing
    report = session.report("several", "two sites changed at once")
    session.resolve_warning(report.id)
    assert len(journal.raw(session.game_id or "")["entries"]) == len(session.record.entries)
    assert not session.record.effective()[ply].agreed
    # "It happened: keep it"
    session.resolve_warning(outcome.warning.id)
    raw = journal.raw(session.game_id or "")["entries"]
    assert raw[-1] == {"type": "correction", "replaces": ply, "move": str(bad),
                       "note": "kept by the players", "forced": True, "agreed": True}
    _assert_same(journal, session)
    kept = session.snapshot()["moves"][ply]
    assert (kept["forced"], kept["agreed"], kept["warning"]) == (
        True, True, outcome.warning.reason + ": " + outcome.warning.message)
    resumed = GameSession(journal=journal)
    resume_or_start(resumed, journal, lambda: pytest.fail("must resume"))
    assert resumed.snapshot()["warnings"] == []
    assert resumed.snapshot()["moves"][ply] == kept


def test_a_missed_move_inserted_is_journaled_with_the_moves_it_rechecks(make_journal,
                                                                         play) -> None:
    journal = make_journal()
    session = GameSession(make_config(4, seed=5, track_cards=True), journal=journal)
    play(session, moves=8, seed=5)
    before = session.state
    missed = legal_moves(before)[0]
    seen = legal_moves(apply_move(before, missed))[0]
    # the camera missed ``missed``; the next player's build is out of turn
    outcome = session.play(seen, allow_illegal=True)
    assert not outcome.legal and outcome.warning is not None
    assert outcome.warning.reason == "wrong-turn"
    session.report("unexplained", "a tower grew elsewhere")  # about no move: stays open
    done = session.insert(8, missed, "the camera missed it")
    assert done == {"rechecked": [9], "flagged": []}
    assert session.record.moves[8:] == [missed, seen]
    assert [(e.forced, e.warning) for e in session.record.effective()[8:]] == [
        (False, None), (False, None)]
    assert [(w["ply"], w["reason"], w["resolved"]) for w in session.snapshot()["warnings"]] == [
        (9, "wrong-turn", True), (10, "unexplained", False)]
    _assert_same(journal, session)
    raw = journal.raw(session.game_id or "")["entries"]
    assert raw[-2:] == [
        {"type": "correction", "inserts": 8, "move": str(missed),
         "note": "the camera missed it"},
        {"type": "correction", "replaces": 9, "move": str(seen),
         "note": "legal after the inserted move"}]
    # the same move deleted again: the build after it is flagged by a correction,
    # which records no text; after a restart its warning is shown all the same
    assert session.correct(8, None, "not there after all") == {"rechecked": [],
                                                                "flagged": [8]}
    [flagged] = [w for w in session.snapshot()["warnings"] if not w["resolved"]
                 and w["ply"] == 8]
    _assert_same(journal, session)
    resumed = GameSession(journal=journal)
    resume_or_start(resumed, journal, lambda: pytest.fail("must resume"))
    again = [w for w in resumed.snapshot()["warnings"] if w["ply"] == 8]
    assert [(w["reason"], w["message"], w["site"]) for w in again] == [
        (flagged["reason"], flagged["message"], flagged["site"])]
    assert flagged["reason"] == "wrong-turn"


CONFIGS = [
    (4, "classic", ()), (2, "2017", ()), (3, "mayfair", ("monster",)),
    (4, "classic", ("godzilla",)), (3, "classic", ("slow-growth", "anti-trust")),
]


@settings(derandomize=True, database=None, max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(config=st.sampled_from(CONFIGS), seed=st.integers(0, 50),
       actions=st.lists(st.tuples(
           st.sampled_from(["play", "play", "play", "play", "illegal", "correct", "undo",
                            "insert", "keep", "restart"]),
           st.integers(0, 10 ** 6)), min_size=1, max_size=45))
def test_replay_equals_live_state(config, seed, actions) -> None:
    """Random legal moves, forced illegal builds, corrections, insertions, moves the
    players keep, undos and restarts: the journal always replays to exactly the live
    state, and a resumed table warns about exactly the flagged moves nobody kept."""
    n, edition, variants = config
    cfg = make_config(n, edition=edition, variants=variants, seed=seed, track_cards=True)
    with tempfile.TemporaryDirectory() as tmp:
        journal = open_data_dir(tmp)
        session = GameSession(cfg, journal=journal)
        for kind, k in actions:
            state = session.state
            effective = len(session.record.effective())
            if kind == "play" and not state.is_over:
                moves = legal_moves(state)
                session.play(moves[k % len(moves)])
            elif kind == "illegal" and not state.is_over:
                color = state.config.colors[k % len(state.config.colors)]
                move = Build(state.seat, Card(k % 3, (k // 3) % 3), Site.from_index(k % 54),
                             Block(color, 1 + k % 4))
                try:
                    session.play(move, allow_illegal=True)
                except RulesError:
                    pass  # wrong phase / card not held: refused, nothing recorded
            elif kind in ("correct", "insert") and effective:
                index = max(0, effective - 1 - k % (3 if kind == "correct" else 4))
                options = legal_moves(session.record.state_at(index))
                if options:
                    record_before = session.record
                    change = session.correct if kind == "correct" else session.insert
                    try:
                        done = change(index, options[k % len(options)], f"{kind} {k}")
                    except RulesError:
                        assert session.record == record_before  # refused: unchanged
                    else:
                        later = session.record.effective()
                        assert all(later[n].forced for n in done["flagged"])
                        assert not any(later[n].forced for n in done["rechecked"])
            elif kind == "keep" and effective:
                session.keep(k % effective)
                assert session.record.effective()[k % effective].agreed
            elif kind == "undo" and effective:
                session.undo()
            elif kind == "restart":
                _assert_same(journal, session)
                journal.close()
                journal = open_data_dir(tmp)
                assert journal.notices == []
                session = GameSession(journal=journal)
                resume_or_start(session, journal, lambda: cfg)
                flagged = [n for n, e in enumerate(session.record.effective())
                           if e.forced and not e.agreed]
                assert [w["ply"] for w in session.snapshot()["warnings"]
                        if not w["resolved"]] == flagged
        _assert_same(journal, session)
        journal.close()


def test_resume_or_start(make_journal, play) -> None:
    journal = make_journal()
    cfg = make_config(2, seed=1, track_cards=True)
    session = GameSession(journal=journal)
    assert resume_or_start(session, journal, lambda: cfg) == ("g1", False)
    play(session, moves=7)
    # restart: the same game, same position
    other = GameSession(journal=journal)
    assert resume_or_start(other, journal, lambda: cfg) == ("g1", True)
    assert other.state == session.state and other.record == session.record
    # the game ends: the next start marks it finished and opens a new one
    play(other, fast=True)
    third = GameSession(journal=journal)
    assert resume_or_start(third, journal, lambda: cfg) == ("g2", False)
    assert [(g.id, g.status) for g in journal.list_games()] == [("g1", "finished"),
                                                               ("g2", "in play")]
    # a session without this journal would lose moves: refused
    with pytest.raises(JournalError):
        resume_or_start(GameSession(), journal, lambda: cfg)


def test_an_imported_unfinished_game_does_not_take_the_table_over(make_journal,
                                                                  play) -> None:
    """`companion import` of an unfinished record beside the table's game in play: on
    restart the table resumed the imported game (the newer) and wrote its moves there;
    its own game could only be exported. The table's game comes first; an imported
    one is resumed when the table has none, and is the table's once played on."""
    elsewhere = GameSession(make_config(3, seed=4, track_cards=True))
    play(elsewhere, moves=5)
    journal = make_journal()
    cfg = make_config(2, seed=1, track_cards=True)
    session = GameSession(journal=journal)
    assert resume_or_start(session, journal, lambda: cfg) == ("g1", False)
    play(session, moves=7)
    assert journal.import_record(elsewhere.record.to_json()) == "g2"
    assert journal.latest_unfinished() == "g1"
    restarted = GameSession(journal=journal)
    assert resume_or_start(restarted, journal, lambda: cfg) == ("g1", True)
    assert restarted.record == session.record
    # a journal with only the imported game: the table carries it on
    carried = make_journal("carried.sqlite3")
    assert carried.import_record(elsewhere.record.to_json()) == "g1"
    after = GameSession(journal=carried)
    assert resume_or_start(after, carried, lambda: cfg) == ("g1", True)
    play(after, moves=1)  # played on at this table: now the table's own
    assert carried.import_record(elsewhere.record.to_json()) == "g2"
    assert carried.latest_unfinished() == "g1"


def test_unreplayable_game_is_kept_and_skipped(make_journal) -> None:
    journal = make_journal()
    cfg = make_config(4, seed=2, track_cards=True)
    session = GameSession(cfg, journal=journal)
    journal.append("g1", {"type": "move", "move": "S c00 red9@0NW"})  # hand-damaged
    fresh = GameSession(journal=journal)
    assert resume_or_start(fresh, journal, lambda: cfg) == ("g2", False)
    assert len(journal.notices) == 1
    [notice] = journal.notices
    assert notice.startswith("could not resume game g1 (") and "S c00 red9@0NW" in notice
    assert notice.endswith("); it is kept, a new game starts")
    infos = {g.id: g for g in journal.list_games()}
    assert infos["g1"].status == "damaged" and infos["g1"].error
    assert journal.export("g1", check=False)["entries"] == [
        {"type": "move", "move": "S c00 red9@0NW"}]
    with pytest.raises(RecordError):
        journal.export("g1")
    assert session.game_id == "g1"


def test_resume_failure_in_the_session_does_not_stop_the_table(make_journal) -> None:
    """An entry that cannot be taken back (here a non-text warning) sets that game
    aside with a notice instead of crashing every start."""
    journal = make_journal()
    cfg = make_config(4, seed=2, track_cards=True)
    GameSession(cfg, journal=journal)
    first = legal_moves(GameSession(cfg).state)[0]
    journal.append("g1", {"type": "move", "move": str(first), "warning": 5})
    fresh = GameSession(journal=journal)
    assert resume_or_start(fresh, journal, lambda: cfg) == ("g2", False)
    assert journal.notices[0] == ("could not resume game g1 (entries[0]: 'warning' must be "
                                  "text); it is kept, a new game starts")
    assert {g.id: g.status for g in journal.list_games()} == {"g1": "damaged",
                                                             "g2": "in play"}
    # and such a record cannot be imported in the first place
    data = journal.export("g1", check=False)
    with pytest.raises(RecordError, match="'warning' must be text"):
        journal.import_record(data)


def test_export_import_round_trip(make_journal, finished_record) -> None:
    journal = make_journal()
    gid = journal.import_record(finished_record.to_json())
    assert journal.load(gid) == finished_record
    assert journal.export(gid) == finished_record.to_json()
    [info] = journal.list_games()
    assert (info.status, info.moves) == ("finished", len(finished_record.effective()))
    assert journal.current_game() is None  # an imported finished game is not resumed
    # an unfinished record is resumable
    half = GameRecord(finished_record.config, finished_record.entries[:30],
                      finished_record.date)
    gid2 = journal.import_record(half.to_json())
    current = journal.current_game()
    assert current is not None and current[0] == gid2 and current[1] == half


@pytest.mark.parametrize("mutate, message", [
    (lambda d: d.update(format="manhattan-board/1"), "not a game record"),
    (lambda d: d.pop("header"), "no header"),
    (lambda d: d["entries"].append({"type": "move", "move": "S c00 red1@9NW"}), "entries["),
    (lambda d: d["rounds"][0]["colors"]["red"].update(total=99), "round 1: recorded scores"),
])
def test_import_rejects_bad_records(make_journal, finished_record, mutate, message) -> None:
    journal = make_journal()
    data = json.loads(json.dumps(finished_record.to_json()))
    mutate(data)
    with pytest.raises(RecordError, match=message.replace("[", r"\[")):
        journal.import_record(data)
    assert journal.list_games() == []


def test_unknown_games(make_journal) -> None:
    journal = make_journal()
    for call in (lambda: journal.load("nope"), lambda: journal.append("nope", {"type": "move",
                                                                             "move": "x"}),
                 lambda: journal.finish("nope"), lambda: journal.export("nope"),
                 lambda: journal.add_evidence("nope", 0, "crop", b"x")):
        with pytest.raises(UnknownGameError):
            call()
    with pytest.raises(JournalError):
        journal.append("nope", {"no": "type"})


def test_late_correction_reopens_finished_game(make_journal, play) -> None:
    journal = make_journal()
    session = GameSession(make_config(2, seed=4, track_cards=True), journal=journal)
    play(session, fast=True)
    journal.finish("g1")
    assert journal.current_game() is None
    session.undo()  # the table fixes the last move after the end
    current = journal.current_game()
    assert current is not None and current[1] == session.record
    assert journal.list_games()[0].status == "in play"


def test_many_threads(make_journal) -> None:
    """The web server's threads write and read at once: nothing lost, order kept."""
    journal = make_journal()
    cfg = make_config(4, seed=9, track_cards=True)
    sessions = [GameSession(cfg, journal=journal) for _ in range(4)]
    errors: list[BaseException] = []

    def run(session: GameSession, seed: int) -> None:
        try:
            bots = [RandomBot(seed + i) for i in range(4)]
            for _ in range(25):
                session.play(bots[session.state.to_move].choose(session.state))
                journal.list_games()
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(s, k)) for k, s in enumerate(sessions)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    for s in sessions:
        _assert_same(journal, s)


def test_data_dir_layout(tmp_path: Path) -> None:
    folder = tmp_path / "a" / "b"
    with open_data_dir(folder) as journal:
        assert journal.path == folder / "companion.sqlite3"
        assert journal.evidence_dir == folder / "evidence"
    (tmp_path / "file").write_text("x")
    with pytest.raises(JournalError, match="not a folder"):
        open_data_dir(tmp_path / "file")


def test_a_full_card_refuses_the_entry_in_its_own_words_and_the_journal_goes_on(
        tmp_path: Path) -> None:
    """SQLite rolls a transaction back by itself when the disk is full; the journal's
    own ROLLBACK then failed ("cannot rollback - no transaction is active") and hid
    the reason. The card filling up is played here by SQLite's page limit."""
    from companion.rules import Commit, Seat
    from companion.session import JournalFailure

    journal = Journal(tmp_path / "journal.sqlite")
    session = GameSession(make_config(4), journal=journal)
    session.play(Commit(Seat.S, None))
    filler = journal.begin_game(session.record.to_json()["header"])
    pages = journal._conn.execute("PRAGMA page_count").fetchone()[0]
    journal._conn.execute(f"PRAGMA max_page_count = {pages}")
    with pytest.raises(sqlite3.OperationalError, match="^database or disk is full$"):
        journal.append(filler, {"type": "correction", "note": "x" * 20000})
    # the card's last bytes go to another game, down to entries of a few bytes: the
    # session's next entry finds no room
    for size in (2000, 500, 100, 20, 1):
        with pytest.raises(sqlite3.OperationalError, match="^database or disk is full$"):
            while True:
                journal.append(filler, {"type": "correction", "note": "x" * size})
    with pytest.raises(JournalFailure, match=r"^the game could not be saved \(database or "
                                             r"disk is full\)$"):
        session.play(Commit(Seat.W, None))
    assert [str(m) for m in session.record.moves] == ["S commit ?"]  # as it was
    journal._conn.execute("PRAGMA max_page_count = 1000000")  # space freed
    session.play(Commit(Seat.W, None))
    _assert_same(journal, session)
