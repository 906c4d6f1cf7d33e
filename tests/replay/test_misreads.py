"""Replay of exact photos with the mover's build misread: the next photos say which it was."""

from __future__ import annotations

from dataclasses import replace

import pytest
from test_infer import _bot_game, _up_to

from companion.replay import replay
from companion.rules import Build, make_config


def _builds(moves):
    """Photo numbers (1-based, as in the photo list) of builds after the first round's start."""
    return [k + 1 for k, m in enumerate(moves) if isinstance(m, Build) and k >= 6]


def _check(cfg, moves, photos, k):
    """The game a few photos past the misread photo ``k`` replays to its exact moves."""
    moves, photos = _up_to(moves, photos, k)
    result = replay(photos, make_config(list(cfg.players), edition=cfg.edition))
    assert [m["notation"] for m in result.moves] == [str(m) for m in moves]
    assert [w["reason"] for w in result.warnings] == []


@pytest.mark.parametrize("pick", [0, 5, 11])
def test_a_build_the_photo_reads_unchanged_without_its_card(pick):
    """The photo shows the built site as before and no card: the next photo shows it."""
    cfg, moves, photos, _ = _bot_game(4, 5)
    k = _builds(moves)[pick]
    site, seat = moves[k - 1].site, moves[k - 1].seat
    before = photos[k - 1].sites
    sites = {s: v for s, v in photos[k].sites.items() if s != site}
    if site in before:
        sites[site] = before[site]
    cards = {s: c for s, c in photos[k].cards.items() if s != seat}
    photos[k] = replace(photos[k], sites=sites, cards=cards)
    _check(cfg, moves, photos, k)


@pytest.mark.parametrize("pick", [0, 5, 11])
def test_a_build_unseen_then_read_unchanged_with_its_card_read(pick):
    """The built site is unseen, the card is read; the next photo reads the tower as before
    (tall towers are read worst): the card says where it was built."""
    cfg, moves, photos, _ = _bot_game(4, 5)
    k = _builds(moves)[pick]
    site = moves[k - 1].site
    before = photos[k - 1].sites
    photos[k] = replace(photos[k], sites={s: v for s, v in photos[k].sites.items() if s != site},
                        unseen=frozenset({site}))
    sites = {s: v for s, v in photos[k + 1].sites.items() if s != site}
    if site in before:
        sites[site] = before[site]
    photos[k + 1] = replace(photos[k + 1], sites=sites)
    _check(cfg, moves, photos, k)


@pytest.mark.parametrize("card_read", [True, False])
def test_a_last_build_no_photo_shows_is_reported_not_dropped(card_read):
    """The last photo does not show the last build (its site hidden), and no photo
    comes after to say which it was: it is not recorded, and the warning says so."""
    cfg, moves, photos, _ = _bot_game(4, 5)
    k = 10
    last = moves[k - 1]
    assert str(last) == "W c10 blue1@2N"
    photos = photos[:k + 1]
    cards = photos[k].cards if card_read else {
        s: c for s, c in photos[k].cards.items() if s != last.seat}
    photos[k] = replace(photos[k], sites={s: v for s, v in photos[k].sites.items()
                                          if s != last.site},
                        unseen=frozenset({last.site}), cards=cards)
    result = replay(photos, make_config(list(cfg.players), edition=cfg.edition))
    assert [m["notation"] for m in result.moves] == [str(m) for m in moves[:k - 1]]
    played = "with card c10 (at Frankfurt N)" if card_read else "(no card read)"
    assert result.warnings == [{
        "photo": "p010", "reason": "build-not-shown",
        "message": f"p010: W's build {played} shows in no photo; not recorded: "
                   "photograph the table again to add it"}]
