"""Photos that begin mid-game are refused in one line, not replayed wrong.

The first photo of a folder that began after six builds showed nine towers; the
replay explained them by three builds and misreads (or dropped them), accused players
of illegal moves after it, and recorded the rest against the wrong players.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_infer import _bot_game

from companion import commands
from companion.cli import main
from companion.replay import ReplayError, replay
from companion.rules import make_config


def _game():
    cfg, moves, photos, _ = _bot_game(4, 5)
    return make_config(list(cfg.players), edition=cfg.edition), moves, photos


def test_photos_that_begin_mid_game_are_refused():
    config, moves, photos = _game()
    # three builds are the most one photo may show: the first three turns unphotographed
    result = replay(photos[3:31], config)
    assert [m["notation"] for m in result.moves] == [str(m) for m in moves[:30]]
    assert [m["photo"] for m in result.moves[:3]] == ["p003"] * 3
    # after four builds: two towers of 7 storeys (three blocks at least), a card on
    # every seat's stack (four moves)
    with pytest.raises(ReplayError) as err:
        replay(photos[4:31], config)
    assert str(err.value) == (
        "p004, the first photo, already shows 4 moves at least (2 towers of 7 storeys, a "
        "card played at 4 seats), more than the 3 one photo may show: the replay needs the "
        "photos from the game's start (the empty board, or its first builds)")
    with pytest.raises(ReplayError, match="^p020, the first photo, already shows 13 moves"):
        replay([photos[20]], config)


def test_companion_replay_says_it_in_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    config, _moves, photos = _game()
    # no card stack read: the towers alone tell (1 + 1 + 8 storeys: four blocks at least)
    readings = {}
    for k, obs in enumerate(photos[6:9], 6):
        path = tmp_path / f"IMG_{k:03d}.jpg"
        path.write_bytes(b"")
        readings[str(path)] = {
            "format": "manhattan-board/1", "colors": list(config.colors),
            "sites": [{**s.to_json(), "height": v.height, "owner": v.owner}
                      for s, v in sorted(obs.sites.items())], "unseen": [], "cards": {}}
    (tmp_path / "game.json").write_text(json.dumps({
        "players": [p.to_json() for p in config.players], "edition": config.edition.name}))
    monkeypatch.setattr(commands, "_read_one",
                        lambda job: {"path": job[0], "reading": readings[job[0]]})
    assert main(["replay", str(tmp_path), "--json", "--workers", "1"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        "companion replay: IMG_006.jpg, the first photo, already shows 4 moves at least "
        "(3 towers of 10 storeys, a card played at 0 seats), more than the 3 one photo may "
        "show: the replay needs the photos from the game's start (the empty board, or its "
        "first builds)\n")
