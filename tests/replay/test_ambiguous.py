"""Moves the photos tell two ways are marked to check, not settled silently.

Two photos that disagree (one reads a new tower 4 storeys taller, the next only 1)
make two stories of the same cost, and the final tie-break took the one the last
photo shows. And a build on an illegal build read a storey low took that storey
(a black 2 flagged illegal and a red 4 on it, for a black 3 and a red 3): the photos
show their storeys only together, yet only the first was marked.
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


def test_a_build_on_an_illegal_build_is_marked_too():
    config, moves, photos = _game()
    b, c = 41, 50  # North's green 2 on Sao Paulo NE, then South's red 2 on it
    assert (str(moves[b]), str(moves[c])) == ("N c20 green2@4NE", "S c02 red2@4NE")
    site = moves[b].site
    # every photo of the tower between them reads it a storey low: green 1, too few
    # storeys to take it, and so red 3 after it
    shown = [_lower(p, site, 1) if b < k <= c else p for k, p in enumerate(photos[:c + 4])]
    result = replay(shown, config)
    got = [m["notation"] for m in result.moves]
    assert got == [str(m) for m in moves[:b]] + ["N c20 green1@4NE"] + [
        str(m) for m in moves[b + 1:c]] + ["S c02 red3@4NE"] + [str(m) for m in moves[c + 1:c + 3]]
    red = result.moves[c]
    assert (red["legal"], red["doubtful"], red["doubt"]) == (True, True, "built-on-doubtful")
    assert check_reason(red) == "built on a move to check"
    assert [(w["photo"], w["reason"]) for w in result.warnings] == [
        ("p042", "too-few-storeys"), ("p051", "built-on-doubtful")]
    assert result.warnings[1]["message"] == (
        "p051: S c02 red3@4NE: built on N c20 green1@4NE, which is to be checked; the photos "
        "show their storeys only together: check both")
