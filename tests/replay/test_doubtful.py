"""Doubtful sites (read by a narrow margin) mark the replayed moves built there."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from test_infer import _bot_game

from companion import commands
from companion.cli import main
from companion.replay import replay
from companion.report import replay_html
from companion.rules import Site, make_config

E2 = Site.parse("2E")  # built on by moves 2-5 of seed 5 (photos 2-5)


def _first_photos(n: int = 13) -> tuple[Any, list[Any], list[Any]]:
    cfg, moves, photos, _ = _bot_game(4, 5)
    return make_config(list(cfg.players), edition=cfg.edition), moves[:n - 1], photos[:n]


def test_only_the_move_whose_photo_read_its_site_doubtfully_is_marked() -> None:
    config, moves, photos = _first_photos()
    assert [str(moves[k].site) for k in (1, 2, 3, 4)] == ["2E"] * 4
    # photo 3 (N builds on 2E) reads 2E and 1NW (built at photo 1) doubtfully;
    # photo 6 (W builds on 1SW) reads 2E doubtfully
    photos[3] = replace(photos[3], doubtful=frozenset({E2, Site.parse("1NW")}))
    photos[6] = replace(photos[6], doubtful=frozenset({E2}))
    out = replay(photos, config).to_json()
    assert [m["notation"] for m in out["moves"]] == [str(m) for m in moves]
    assert [k for k, m in enumerate(out["moves"]) if "doubtful" in m] == [2]
    assert out["moves"][2]["doubtful"] is True
    assert out["moves"][2]["photo"] == "p003"
    assert out["warnings"] == []
    json.dumps(out)


def test_doubtful_sites_do_not_change_the_replay() -> None:
    config, moves, photos = _first_photos()
    plain = replay(photos, config).to_json()
    marked = [replace(p, doubtful=frozenset({E2})) for p in photos]
    out = replay(marked, config).to_json()
    for m in out["moves"]:
        m.pop("doubtful", None)
    # the game record keeps the mark on the entries of the four builds on 2E, only
    marked_entries = [e["move"] for e in out["record"]["entries"] if e.pop("doubtful", False)]
    assert marked_entries == [str(m) for m in moves[1:5]]
    assert out == plain


def test_per_round_photos_mark_the_doubtful_site_of_the_round() -> None:
    cfg, _moves, photos, _ = _bot_game(4, 5)
    round_photos = [photos[0]] + [photos[k] for k in range(24, len(photos), 24)]
    site = sorted(round_photos[1].sites)[3]
    round_photos[1] = replace(round_photos[1], doubtful=frozenset({site}))
    out = replay(round_photos, make_config(list(cfg.players))).to_json()
    marked = [(m["round"], Site(m["city"], m["row"], m["col"]))
              for m in out["moves"] if m.get("doubtful")]
    assert marked == [(1, site)]


def test_the_html_report_shows_the_marker_beside_that_move_only() -> None:
    config, _moves, photos = _first_photos()
    photos[3] = replace(photos[3], doubtful=frozenset({E2}))
    page = replay_html(replay(photos, config).to_json(), [])
    items = page.split("<ol class='moves'>")[1].split("</ol>")[0].split("<li>")[1:]
    assert [k for k, li in enumerate(items) if "check this site" in li] == [2]
    assert "N c10 green2@2E" in items[2]


def test_companion_replay_reads_doubtful_from_the_reader(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str],
                                                         ) -> None:
    """The reader's ``doubtful`` (companion read --json) reaches the replay's moves."""
    config, _moves, photos = _first_photos(6)
    readings = {}
    for k, obs in enumerate(photos):
        path = tmp_path / f"IMG_{k + 1}.jpg"
        path.write_bytes(b"")
        readings[str(path)] = {
            "format": "manhattan-board/1", "colors": list(config.colors),
            "sites": [{**s.to_json(), "height": v.height, "owner": v.owner}
                      for s, v in sorted(obs.sites.items())],
            "unseen": [], "cards": {s.value: {"cell": [c.row, c.col]}
                                    for s, c in obs.cards.items()},
            "doubtful": [E2.to_json()] if k == 3 else []}
    monkeypatch.setattr(commands, "_read_one",
                        lambda job: {"path": job[0], "reading": readings[job[0]]})
    assert main(["replay", str(tmp_path), "--json", "--workers", "1"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [(m["notation"], m.get("doubtful", False)) for m in out["moves"]] == [
        ("S c00 red1@1NW", False), ("W c01 blue2@2E", False), ("N c10 green2@2E", True),
        ("E c21 black2@2E", False), ("S c12 red2@2E", False)]
    assert main(["replay", str(tmp_path), "--workers", "1"]) == 0
    text = capsys.readouterr().out.splitlines()
    assert [line for line in text if "check" in line] == [
        "N c10 green2@2E  ? check Frankfurt E: read by a narrow margin"]


def test_a_narrow_new_tower_in_the_last_photo_is_no_turn_left_unphotographed() -> None:
    """The last photo shows the 10th build and, narrowly, a tower where the 11th goes.

    The 11th builder's card stack is not read, so two moves in that photo and one
    move plus a misread site cost the same, and no later photo breaks the tie. Read
    surely, the tower is a turn the photos skipped; read by a narrow margin (often a
    nearer tower's top seen past the site), it is not: the photo's sure sites show
    both stories alike, and the fewer moves win.
    """
    cfg, moves, photos, _ = _bot_game(4, 5)
    config = make_config(list(cfg.players), edition=cfg.edition)
    assert str(moves[10]) == "N c12 green1@5W"
    assert Site.parse("5W") not in photos[10].sites
    last = replace(photos[10], sites=photos[11].sites,
                   cards={s: c for s, c in photos[10].cards.items() if s != moves[10].seat})
    sure = replay([*photos[:10], last], config).to_json()
    assert [m["notation"] for m in sure["moves"]] == [str(m) for m in moves[:11]]
    narrow = replay([*photos[:10], replace(last, doubtful=frozenset({Site.parse("5W")}))],
                    config).to_json()
    assert [m["notation"] for m in narrow["moves"]] == [str(m) for m in moves[:10]]
    assert narrow["warnings"] == []


@pytest.mark.parametrize("content, message", [
    (b"[]", "{game}: the set-up must be an object, not list"),
    (b"{bad", "{game}: malformed JSON at line 1"),
    (b"\xff\xfe\x00", "{game}: not a text file"),
])
def test_a_game_json_that_is_no_set_up_is_one_line(tmp_path, capsys, content, message):
    # checked before any photo is read
    game = tmp_path / "game.json"
    game.write_bytes(content)
    (tmp_path / "IMG_1.jpg").write_bytes(b"")
    assert main(["replay", str(tmp_path), "--json", "--workers", "1"]) == 1
    assert capsys.readouterr().err == f"companion replay: {message.format(game=game)}\n"
