"""Game records (manhattan-game/1): round-trips, corrections, verified round scores."""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import pytest
from rules_helpers import first_build_game

from companion.rules import (
    Block,
    Build,
    Card,
    Commit,
    GameRecord,
    NoBuildPolicy,
    RecordError,
    Seat,
    Site,
    Variant,
    apply_move,
    config_from_json,
    legal_moves,
    make_config,
    new_game,
)
from companion.rules.record import Correction, MoveEntry, record_from_moves

S, W, N, E = Seat.S, Seat.W, Seat.N, Seat.E
SIX = (4, 3, 2, 1, 1, 1)


def commits4() -> list[Commit]:
    return [Commit(seat, tuple(Block(color, k) for k in SIX))
            for seat, color in ((S, "red"), (W, "blue"), (N, "green"), (E, "black"))]


def b(seat: Seat, site: Site, color: str, storeys: int) -> Build:
    return Build(seat, Card.for_site(seat, site.row, site.col), site, Block(color, storeys))


def one_round_record(**kw: Any) -> GameRecord:
    """A full first round played with the first legal move."""
    cfg = make_config(4, seed=4, **kw)
    s = new_game(cfg)
    moves = []
    while s.round == 1:
        m = legal_moves(s)[0]
        moves.append(m)
        s = apply_move(s, m)
    return record_from_moves(cfg, moves, date="2024-05-01")


def test_whole_game_round_trip() -> None:
    cfg = make_config(4, edition="mayfair", variants=["anti-trust", "monster"],
                      track_cards=True, seed=9, no_build="forfeit")
    s = new_game(cfg)
    moves = []
    while not s.is_over:
        m = legal_moves(s)[0]
        moves.append(m)
        s = apply_move(s, m)
    rec = record_from_moves(cfg, moves, date="2024-05-01", meta={"table": "kitchen"})
    data = rec.to_json()
    assert data["format"] == "manhattan-game/1"
    assert data["header"] == {
        "edition": "mayfair", "variants": ["anti-trust", "monster"],
        "players": [{"name": f"Player {k + 1}", "seat": seat, "colors": [color]}
                    for k, (seat, color) in enumerate(zip("SWNE", cfg.colors, strict=True))],
        "date": "2024-05-01", "seed": 9, "track_cards": True, "no_build": "forfeit",
        "meta": {"table": "kitchen"}}
    assert len(data["rounds"]) == 4
    assert [r["round"] for r in data["rounds"]] == [1, 2, 3, 4]
    assert data["rounds"][0]["colors"] == s.scores[0].to_json()["colors"]
    assert data["rounds"][0]["players"] == s.scores[0].players(
        [(p.name, p.colors) for p in cfg.players])
    assert "result" in data and data["result"]["tie_break"] == "shared"
    again = GameRecord.loads(json.dumps(data))
    assert again == rec
    assert again.to_json() == data
    assert again.replay() == s
    assert first_build_game(cfg)[0] == s
    assert again.config.no_build is NoBuildPolicy.FORFEIT
    assert again.config.variants == frozenset({Variant.ANTI_TRUST, Variant.MONSTER})


def test_header_options_round_trip() -> None:
    cfg = make_config(3, edition="2017", variants=["godzilla", "slow-growth"],
                      monster_start=Site(4, 1, 1), monster_wrap=False,
                      reshuffle_at_round_end=True, slow_growth_order=(5, 4, 3, 2, 1, 0))
    rec = GameRecord(cfg, (), date="2024-01-01")
    header = rec.to_json()["header"]
    assert header["monster_start"] == "4C"
    assert header["monster_wrap"] is False
    assert header["reshuffle_at_round_end"] is True
    assert header["slow_growth_order"] == [5, 4, 3, 2, 1, 0]
    assert config_from_json(header) == cfg
    assert GameRecord.from_json(rec.to_json()) == rec


def test_game_json_of_formats_md_is_a_set_up() -> None:
    game = {"players": [{"name": "Ann", "seat": "S", "colors": ["red", "green"]},
                        {"name": "Bob", "seat": "N", "colors": ["blue", "black"]}],
            "edition": "classic", "variants": []}
    cfg = config_from_json(game)
    assert [(p.name, p.seat, p.colors) for p in cfg.players] == [
        ("Ann", S, ("red", "green")), ("Bob", N, ("blue", "black"))]
    assert cfg.rounds == 6


def test_corrections_replace_and_delete_are_entries_of_their_own() -> None:
    cfg = make_config(4)
    rec = record_from_moves(cfg, commits4() + [
        b(S, Site(0, 0, 0), "red", 4),
        b(W, Site(1, 0, 0), "blue", 4),
        b(N, Site(2, 0, 0), "green", 4),  # index 6: a phantom the camera saw
    ], date="2024-05-01")
    rec = rec.with_correction(6, None, "nobody built there")
    rec = rec.with_correction(4, b(S, Site(0, 1, 1), "red", 4), "it was the centre")
    rec = rec.with_move(b(N, Site(2, 2, 2), "green", 3))
    assert len(rec.entries) == 10
    assert isinstance(rec.entries[7], Correction) and rec.entries[7].move is None
    assert [str(m) for m in rec.moves[4:]] == [
        "S c11 red4@0C", "W c20 blue4@1NW", "N c00 green3@2SE"]
    state = rec.replay()
    assert state.board.owner(Site(0, 0, 0)) is None
    assert state.board.owner(Site(0, 1, 1)) == "red"
    assert state.board.owner(Site(2, 0, 0)) is None
    assert state.seat is E
    data = rec.to_json()
    assert data["entries"][7] == {"type": "correction", "replaces": 6, "move": None,
                                  "note": "nobody built there"}
    assert data["entries"][8] == {"type": "correction", "replaces": 4,
                                  "move": "S c11 red4@0C", "note": "it was the centre"}
    again = GameRecord.from_json(data)
    assert again == rec
    assert again.replay() == state


def test_correction_of_a_move_that_does_not_exist() -> None:
    rec = record_from_moves(make_config(4), commits4())
    with pytest.raises(RecordError, match=r"no move number 4 to correct \(the game has 4\)"):
        rec.with_correction(4, None)
    data = rec.to_json()
    data["entries"].append({"type": "correction", "replaces": 9, "move": None})
    with pytest.raises(RecordError, match="a correction names move 9, which does not exist"):
        GameRecord.from_json(data)


def test_an_insertion_puts_a_missed_move_back_in_its_place() -> None:
    cfg = make_config(4)
    north = b(N, Site(2, 0, 0), "green", 4)  # the camera missed it
    east = b(E, Site(3, 0, 0), "black", 4)
    rec = record_from_moves(cfg, commits4() + [
        b(S, Site(0, 0, 0), "red", 4), b(W, Site(1, 0, 0), "blue", 4)])
    rec = rec.with_move(east, forced=True, warning="wrong-turn: it is another player's turn")
    rec = rec.with_insertion(6, north, "missed by the camera")
    assert isinstance(rec.entries[-1], Correction) and rec.entries[-1].insert
    assert rec.moves[6:] == [north, east]
    # the later move keeps its own flag: the record does not judge it again
    assert [(e.forced, e.warning) for e in rec.effective()[6:]] == [
        (False, None), (True, "wrong-turn: it is another player's turn")]
    assert rec.replay().seat is S
    data = rec.to_json()
    assert data["entries"][-1] == {"type": "correction", "inserts": 6,
                                   "move": "N c22 green4@2NW", "note": "missed by the camera"}
    assert GameRecord.from_json(data) == rec
    # at the end, and at the very start
    last = rec.with_insertion(8, b(S, Site(0, 1, 1), "red", 3))
    assert str(last.moves[-1]) == "S c11 red3@0C"
    first = record_from_moves(cfg, commits4()[1:]).with_insertion(0, commits4()[0])
    assert first.moves == commits4()
    assert first.replay().phase.value == "build"


def test_insertion_errors() -> None:
    rec = record_from_moves(make_config(4), commits4())
    with pytest.raises(RecordError, match=r"^no place 5 to insert a move \(the game has 4\)$"):
        rec.with_insertion(5, b(S, Site(0, 0, 0), "red", 4))
    data = rec.to_json()
    data["entries"].append({"type": "correction", "inserts": 5, "move": "S c00 red4@0NW"})
    with pytest.raises(RecordError, match="^an insertion names place 5, which does not exist$"):
        GameRecord.from_json(data)
    data["entries"][-1] = {"type": "correction", "inserts": 4, "move": None}
    with pytest.raises(RecordError, match=r"^entries\[4\]: an insertion needs a move$"):
        GameRecord.from_json(data)
    # an illegal insertion without the forced flag does not load
    data["entries"][-1] = {"type": "correction", "inserts": 4, "move": "W c20 blue4@1NW"}
    with pytest.raises(RecordError, match=r"^move 5 \(W c20 blue4@1NW\): "):
        GameRecord.from_json(data)
    data["entries"][-1]["forced"] = True
    assert GameRecord.from_json(data).replay().board.owner(Site(1, 0, 0)) == "blue"


def test_forced_moves_are_kept_and_flagged() -> None:
    cfg = make_config(4)
    moves = commits4() + [b(S, Site(0, 0, 0), "red", 4)]
    rec = record_from_moves(cfg, moves)
    # West put a blue 1 on red's 4: illegal, but the table let it stand.
    rec = rec.with_move(b(W, Site(0, 0, 0), "blue", 1), forced=True, warning="too few storeys")
    data = rec.to_json()
    assert data["entries"][-1] == {"type": "move", "move": "W c20 blue1@0NW", "forced": True,
                                   "warning": "too few storeys"}
    again = GameRecord.from_json(data)
    assert again.replay().board.owner(Site(0, 0, 0)) == "blue"
    # without the flag the same record is refused
    data["entries"][-1].pop("forced")
    with pytest.raises(RecordError, match=r"^move 6 \(W c20 blue1@0NW\): .*Blue needs 4"):
        GameRecord.from_json(data)


def test_a_doubtful_move_keeps_its_mark_until_corrected() -> None:
    cfg = make_config(4)
    rec = record_from_moves(cfg, commits4())
    rec = rec.with_move(b(S, Site(0, 0, 0), "red", 4), doubtful=True)
    rec = rec.with_move(b(W, Site(1, 0, 0), "blue", 4))
    data = rec.to_json()
    assert data["entries"][4] == {"type": "move", "move": "S c00 red4@0NW", "doubtful": True}
    assert data["entries"][5] == {"type": "move", "move": "W c20 blue4@1NW"}
    again = GameRecord.from_json(data)
    assert again == rec
    assert [e.doubtful for e in again.effective()[4:]] == [True, False]
    # the players looked and confirmed the move: a correction carries no mark
    looked = again.with_correction(4, b(S, Site(0, 0, 0), "red", 4), "looked")
    assert [e.doubtful for e in looked.effective()[4:]] == [False, False]
    data["entries"][4]["doubtful"] = "yes"
    with pytest.raises(RecordError, match=r"^entries\[4\]: 'doubtful' must be true or false$"):
        GameRecord.from_json(data)
    # the camera's own corrections carry the mark (a deletion cannot)
    camera = (again.with_correction(4, b(S, Site(0, 0, 0), "red", 3), "revised", doubtful=True)
              .with_insertion(5, b(W, Site(0, 0, 0), "blue", 4), "missed", doubtful=True)
              .with_correction(6, None, "gone", doubtful=True))
    assert [(str(e.move), e.doubtful) for e in camera.effective()[4:]] == [
        ("S c00 red3@0NW", True), ("W c20 blue4@0NW", True)]
    cdata = camera.to_json()
    assert cdata["entries"][-3:] == [
        {"type": "correction", "replaces": 4, "move": "S c00 red3@0NW", "note": "revised",
         "doubtful": True},
        {"type": "correction", "inserts": 5, "move": "W c20 blue4@0NW", "note": "missed",
         "doubtful": True},
        {"type": "correction", "replaces": 6, "move": None, "note": "gone"}]
    assert GameRecord.from_json(cdata) == camera
    cdata["entries"][-2]["doubtful"] = 1
    with pytest.raises(RecordError, match=r"^entries\[7\]: 'doubtful' must be true or false$"):
        GameRecord.from_json(cdata)


def test_a_move_the_players_keep_keeps_its_flag_and_warning_and_loses_its_doubt() -> None:
    cfg = make_config(4)
    rec = record_from_moves(cfg, commits4() + [b(S, Site(0, 0, 0), "red", 4)])
    rec = rec.with_move(b(W, Site(0, 0, 0), "blue", 1), forced=True, warning="too few storeys",
                        doubtful=True)
    kept = rec.with_agreement(5, "kept by the players")
    assert kept.entries[-1] == Correction(5, b(W, Site(0, 0, 0), "blue", 1),
                                          "kept by the players", True, agreed=True)
    assert kept.effective()[5] == MoveEntry(b(W, Site(0, 0, 0), "blue", 1), True,
                                            "too few storeys", False, True)
    data = kept.to_json()
    assert data["entries"][-1] == {"type": "correction", "replaces": 5,
                                   "move": "W c20 blue1@0NW", "note": "kept by the players",
                                   "forced": True, "agreed": True}
    assert GameRecord.from_json(data) == kept
    # a later correction to another move is not kept
    other = kept.with_correction(5, b(W, Site(1, 0, 0), "blue", 1))
    assert other.effective()[5] == MoveEntry(b(W, Site(1, 0, 0), "blue", 1))
    with pytest.raises(RecordError, match=r"^no move number 6 to keep \(the game has 6\)$"):
        rec.with_agreement(6)
    data["entries"][-1]["agreed"] = 1
    with pytest.raises(RecordError, match=r"^entries\[6\]: 'agreed' must be true or false$"):
        GameRecord.from_json(data)


def test_recorded_round_scores_are_checked_on_load() -> None:
    rec = one_round_record()
    data = rec.to_json()
    assert len(data["rounds"]) == 1
    GameRecord.from_json(copy.deepcopy(data))
    tampered = copy.deepcopy(data)
    first = next(iter(tampered["rounds"][0]["colors"]))
    tampered["rounds"][0]["colors"][first]["total"] += 1
    with pytest.raises(RecordError, match=r"^round 1: recorded scores .* differ from the moves'"):
        GameRecord.from_json(tampered)
    tampered = copy.deepcopy(data)
    tampered["rounds"][0]["colors"]["red"]["majorities"] = 99
    with pytest.raises(RecordError, match="round 1"):
        GameRecord.from_json(tampered)
    extra = copy.deepcopy(data)
    extra["rounds"].append(copy.deepcopy(data["rounds"][0]))
    with pytest.raises(RecordError, match="the record lists 2 scored rounds, the moves give 1"):
        GameRecord.from_json(extra)


def _mutate(path: str, value: Any):
    def apply(data: dict[str, Any]) -> dict[str, Any]:
        target: Any = data
        keys = path.split(".")
        for k in keys[:-1]:
            target = target[int(k)] if isinstance(target, list) else target[k]
        last = keys[-1]
        if value is _DELETE:
            del target[last]
        elif isinstance(target, list):
            target[int(last)] = value
        else:
            target[last] = value
        return data
    return apply


_DELETE = object()

MALFORMED = [
    (_mutate("format", "manhattan-game/2"), "not a game record"),
    (_mutate("header", _DELETE), "game record has no header"),
    (_mutate("header", []), "game record has no header"),
    (_mutate("header.players", []), "the set-up needs a list of players"),
    (_mutate("header.players.0", "Ann"), "players[0] must be an object"),
    (_mutate("header.players.0.seat", "Q"), "bad set-up: unknown seat 'Q'"),
    (_mutate("header.players.0.colors", "red"), "'colors' must be a list of colour names"),
    (_mutate("header.players.1.colors", ["red"]), "bad set-up: a colour is given to two players"),
    (_mutate("header.edition", "chess"), "bad set-up: unknown edition 'chess'"),
    (_mutate("header.variants", "monster"), "'variants' must be a list"),
    (_mutate("header.variants", ["kaiju"]), "bad set-up: unknown variant 'kaiju'"),
    (_mutate("header.seed", "abc"), "bad set-up"),
    (_mutate("header.no_build", "shrug"), "bad set-up"),
    (_mutate("header.monster_start", "9ZZ"), "bad set-up"),
    (_mutate("header.meta", 5), "'meta' in the header must be an object"),
    (_mutate("entries", {}), "'entries' must be a list"),
    (_mutate("entries", _DELETE), "game record has no 'entries' (its moves)"),
    (_mutate("entries.0", "S commit ?"), "entries[0] must be an object"),
    (_mutate("entries.0.type", "comment"), "entries[0]: unknown entry type 'comment'"),
    (_mutate("entries.0.move", _DELETE), "entries[0]: missing field 'move'"),
    (_mutate("entries.0.move", "S builds a tower"), "entries[0]: cannot read move"),
    (_mutate("entries.1", {"type": "correction", "move": None}),
     "entries[1]: missing field 'replaces'"),
    (_mutate("entries.1", {"type": "correction", "replaces": "first", "move": None}),
     "entries[1]: bad field 'replaces' (invalid literal for int() with base 10: 'first')"),
    (_mutate("entries.1.move", "S commit ?"), "move 2 (S commit ?): "),
    (_mutate("rounds", {"colors": {}}), "'rounds' must be a list"),
]


@pytest.mark.parametrize(("mutate", "message"), MALFORMED,
                         ids=[m for _, m in MALFORMED])
def test_malformed_records_raise_record_error(mutate, message: str) -> None:
    data = one_round_record().to_json()
    data = mutate(data)
    with pytest.raises(RecordError) as info:
        GameRecord.from_json(data)
    assert message in str(info.value)
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize(("text", "message"), [
    ("{", "malformed JSON"), ("[]", "not a game record"), ("null", "not a game record"),
    ('{"format": "manhattan-board/1"}', "not a game record"),
])
def test_loads_refuses_what_is_not_a_record(text: str, message: str) -> None:
    with pytest.raises(RecordError, match=message):
        GameRecord.loads(text)


def test_effective_moves_and_entries() -> None:
    rec = record_from_moves(make_config(4), commits4())
    assert all(isinstance(e, MoveEntry) for e in rec.entries)
    assert rec.moves == commits4()
    states = list(rec.states())
    assert len(states) == 5
    assert states[0] == new_game(make_config(4))


@pytest.mark.parametrize("header", [[], "classic", 4, None])
def test_a_set_up_that_is_no_object_is_a_record_error(header: Any) -> None:
    with pytest.raises(RecordError, match=f"^the set-up must be an object, not "
                                          f"{type(header).__name__}$"):
        config_from_json(header)


def test_a_game_file_is_read_or_named_in_its_error(tmp_path: Any) -> None:
    from companion.rules.record import config_from_file

    good = tmp_path / "game.json"
    good.write_text(json.dumps({"players": [
        {"name": "Ann", "seat": "S", "colors": ["red", "green"]},
        {"name": "Bob", "seat": "N", "colors": ["blue", "black"]}]}), encoding="utf-8")
    assert [p.name for p in config_from_file(good).players] == ["Ann", "Bob"]
    for content, message in ((None, "no such file"), (b"\xff\xfe", "not a text file"),
                             (b"{", "malformed JSON at line 1"),
                             (b"{}", "the set-up needs a list of players")):
        bad = tmp_path / "bad.json"
        if bad.exists():
            bad.unlink()
        if content is not None:
            bad.write_bytes(content)
        with pytest.raises(RecordError, match=f"^{re.escape(str(bad))}: {message}$"):
            config_from_file(bad)


@pytest.mark.parametrize(("kw", "message"), [
    ({"seed": -1}, "the seed must be a whole number from 0 to 2**63-1, not '-1'"),
    ({"seed": 2 ** 63}, "the seed must be a whole number from 0 to 2**63-1, not "
                        "'9223372036854775808'"),
    ({"seed": True}, "the seed must be a whole number from 0 to 2**63-1, not 'True'"),
])
def test_a_game_is_set_up_only_as_its_record_can_keep_it(kw: dict, message: str) -> None:
    """A seed of -1 was taken by the page and `play`, and the record then refused."""
    from companion.rules import SetupError, make_config

    with pytest.raises(SetupError, match=f"^{re.escape(message)}$"):
        make_config(2, **kw)


def test_a_players_name_is_one_short_line() -> None:
    from companion.rules import Player, Seat, SetupError, get_edition
    from companion.rules.state import GameConfig

    ed = get_edition("classic")
    for name in ("x" * 41, "Ann\nBob", "\x1b[31mred"):
        with pytest.raises(SetupError, match="^a player's name is at most 40 printable"):
            GameConfig(ed, (Player(name, Seat.S, ("red", "green")),
                            Player("Bo", Seat.N, ("blue", "black"))))
    assert GameConfig(ed, (Player("x" * 40, Seat.S, ("red", "green")),
                           Player("Bo", Seat.N, ("blue", "black")))).players[0].name == "x" * 40


@pytest.mark.parametrize(("key", "value"), [
    ("track_cards", "false"), ("monster_wrap", "yes"), ("reshuffle_at_round_end", 1)])
def test_a_set_ups_yes_or_no_is_true_or_false(key: str, value: Any) -> None:
    """The text "false" is truthy: a game.json or record saying so turned the rule on."""
    from companion.rules.record import config_from_json

    header = {"players": [{"name": "A", "seat": "S", "colors": ["red", "green"]},
                          {"name": "B", "seat": "N", "colors": ["blue", "black"]}],
              key: value}
    with pytest.raises(RecordError, match=f"^'{key}' must be true or false$"):
        config_from_json(header)
    assert config_from_json({**header, key: None}).track_cards is False  # null: the default


def test_a_records_date_is_text_and_its_flags_are_true_or_false() -> None:
    """A date of [1, 2] was stored as the text "[1, 2]"; a correction "forced": "false"
    was taken as forced (replayed without its legality checked)."""
    from companion.rules import GameRecord, make_config

    record = GameRecord(make_config(2)).to_json()
    for date in ([1, 2], 123, "x" * 41):
        bad = copy.deepcopy(record)
        bad["header"]["date"] = date
        with pytest.raises(RecordError, match=r"^'date' in the header must be text"):
            GameRecord.from_json(bad)
    bad = copy.deepcopy(record)
    bad["entries"] = [{"type": "move", "move": "S commit ?", "forced": "false"}]
    with pytest.raises(RecordError, match="^entries\\[0\\]: 'forced' must be true or false$"):
        GameRecord.from_json(bad)
