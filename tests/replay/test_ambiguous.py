"""Moves the photos tell two ways are marked to check, not settled silently.

Two photos that disagree (one reads a new tower 4 storeys taller, the next only 1)
make two stories of the same cost, and the final tie-break took the one the last
photo shows.
"""

from __future__ import annotations

from dataclasses import replace

from test_infer import _bot_game

from companion.replay import replay
from companion.report import check_reason
from companion.rules import SiteView, make_config


def _game():
    cfg, moves, photos, _ = _bot_game(4, 5)
    return make_config(list(cfg.players), edition=cfg.edition), moves, photos


def _lower(photo, site, storeys: int):
    view = photo.sites[site]
    return replace(photo, sites={**photo.sites,
                                 site: SiteView(view.height - storeys, view.owner)})


def test_a_move_two_stories_tell_alike_is_marked_and_said():
    config, moves, photos = _game()
    k = 23  # North's green 4 on Frankfurt N, photographed at p023
    built = moves[k - 1]
    assert str(built) == "N c21 green4@2N"
    # the last photo reads the tower three storeys lower: a green 1 fits it as well
    result = replay([*photos[:k + 1], _lower(photos[k + 1], built.site, 3)], config)
    got = [m["notation"] for m in result.moves]
    assert got == [str(m) for m in moves[:k - 1]] + ["N c21 green1@2N", str(moves[k])]
    marked = [m for m in result.moves if m.get("doubtful")]
    assert [(m["notation"], m["doubt"]) for m in marked] == [("N c21 green1@2N", "ambiguous")]
    assert check_reason(marked[0]) == "the photos fit another move as well"
    assert result.warnings == [{
        "photo": "p023", "turn": k, "reason": "ambiguous", "instead": ["N c21 green4@2N"],
        "message": "p023: N c21 green1@2N: the photos fit N c21 green4@2N as well (they "
                   "disagree): check it"}]
    assert [str(e.move) for e in result.record.effective() if e.doubtful] == [
        "N c21 green1@2N"]
