"""Photos missing from a per-turn folder: two builds show in the next photo."""

from __future__ import annotations

import pytest
from test_infer import _bot_game, _up_to

from companion.replay import replay
from companion.rules import Build, make_config


def test_a_build_covered_by_the_next_one_before_the_photo_is_found():
    cfg, moves, photos, final = _bot_game(4, 5)
    # moves 76 and 77: East builds on Cairo NW, South builds on top of it; the photo
    # between them (p077) is missing, so Cairo NW shows only South's red on top
    assert isinstance(moves[76], Build) and isinstance(moves[77], Build)
    assert moves[76].site == moves[77].site
    assert (str(moves[76]), str(moves[77])) == ("E c02 black1@4NW", "S c00 red1@4NW")
    result = replay(photos[:77] + photos[78:], make_config(list(cfg.players),
                                                           edition=cfg.edition))
    assert [m["notation"] for m in result.moves] == [str(m) for m in moves]
    assert [w["reason"] for w in result.warnings] == ["photo-skipped-turn"]
    assert result.state.totals() == final.totals()


@pytest.mark.parametrize("n_players,seed", [(4, 6), (2, 11)])
def test_every_other_photo_missing_still_gives_the_exact_game(n_players, seed):
    cfg, moves, photos, final = _bot_game(n_players, seed)
    kept = [p for k, p in enumerate(photos) if k % 2 == 0 or k == len(photos) - 1]
    result = replay(kept, make_config(list(cfg.players), edition=cfg.edition))
    assert [m["notation"] for m in result.moves] == [str(m) for m in moves]
    assert result.state.totals() == final.totals()
    # the game's last photo shows two builds too: both are in, not one and a misread
    assert result.state.is_over
    skipped = [w for w in result.warnings if w["reason"] == "photo-skipped-turn"]
    assert len(skipped) == len(moves) // 2


@pytest.mark.parametrize("k", [20, 41])
def test_three_builds_in_one_photo_are_all_found_in_it(k):
    # two photos in a row missing: the photo after them shows three new builds (at
    # move 20 the second covers the first: W builds on S's red 4 on Sydney SW)
    cfg, moves, photos, _ = _bot_game(4, 5)
    assert all(isinstance(m, Build) for m in moves[k:k + 3])
    moves, photos = _up_to(moves, photos, k + 3)  # the game to a few photos past it
    kept = photos[:k + 1] + photos[k + 3:]
    result = replay(kept, make_config(list(cfg.players), edition=cfg.edition))
    assert [m["notation"] for m in result.moves] == [str(m) for m in moves]
    shown = photos[k + 3].name
    assert [m["photo"] for m in result.moves[k:k + 3]] == [shown] * 3
    assert [(w["photo"], w["reason"]) for w in result.warnings] == [
        (shown, "photo-skipped-turn")] * 2
    # (the game cut short: its end is the last photo's board, not the game's totals)
    assert result.state.board.views() == photos[-1].sites
