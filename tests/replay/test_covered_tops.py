"""An unseen site's top colour weighs in the replay.

A tower the reader cannot give a height (no print where the scorer read an
empty site: "covered") often shows its top colour plainly: its best towers all
agree on it. From a camera nearly above the table, the block fitted to what
changed there can take the colour of the print round it; the top the photos
show says which of the mover's two colours it was (ray-traced stands at 70-81
degrees: three moves more of 80 right, docs/vision-errors.md).
"""

from __future__ import annotations

import numpy as np

from companion.replay import SITE_CAP, TOP_PRICE, Observation, _candidates, _legal_at, _scored
from companion.rules import Build, Site, SiteView, apply_move, make_config, new_game
from companion.tracking import committed
from companion.vision.reader import Reading
from companion.vision.sites import SiteResult

X = Site(0, 1, 1)


def _reading(*details: SiteResult) -> Reading:
    return Reading({}, [d.site for d in details], {}, None,  # type: ignore[arg-type]
                   ["red", "blue"], details=list(details))


def _covered(site: Site, rivals, tower_colour: str, reason: str = "covered") -> SiteResult:
    r = SiteResult(site, None, None, 11.0, 0.8, reason=reason, rivals=rivals)
    r.tower = (rivals[0][0], tower_colour, 0.0, 1.0, 0.9, 0.8, np.zeros(3))
    return r


def test_a_covered_sites_top_colour_is_its_best_towers_when_they_agree() -> None:
    agree = _covered(X, [(3, "blue", 9.6), (4, "blue", 9.5), (0, None, 9.0), (2, "blue", 8.0)],
                     "blue")
    mixed = _covered(Site(1, 0, 0), [(3, "blue", 9.6), (4, "red", 9.5)], "blue")
    hidden = _covered(Site(2, 0, 0), [(3, "red", 9.6)], "red", reason="hidden")
    none = SiteResult(Site(3, 0, 0), None, None, reason="covered", rivals=[(2, "red", 5.0)])
    assert _reading(agree, mixed, hidden, none).covered_tops() == {X: "blue"}


def _state_with_tower_at_x():
    cfg = make_config(2, seed=3)
    state = committed(new_game(cfg))
    colour = state.player.colors[0]
    build = next(b for b in _legal_at(state, X)
                 if b.block.color == colour)
    return apply_move(state, build), colour, state.player.colors[1]


def test_an_unseen_site_whose_top_shows_another_colour_costs_the_hypothesis() -> None:
    state, mine, other = _state_with_tower_at_x()
    assert state.board.views()[X].owner == mine
    views = {s: v for s, v in state.board.views().items() if s != X}
    same = Observation("p", views, frozenset({X}), tops={X: mine})
    differs = Observation("p", views, frozenset({X}), tops={X: other})
    assert _scored(state, same)[1][X] == 0.0
    assert _scored(state, differs)[1][X] == TOP_PRICE
    assert _scored(state, differs)[2] == _scored(state, same)[2] + TOP_PRICE
    # a site the photo reads is judged by its reading, a top seen or not
    read = Observation("p", {**views, X: SiteView(9, other)}, frozenset(), tops={X: mine})
    assert _scored(state, read)[1][X] == SITE_CAP
    # nothing predicted there: no tower to contradict
    empty = committed(new_game(make_config(2, seed=3)))
    assert _scored(empty, differs)[1][X] == 0.0


def test_a_build_that_tops_the_tower_with_another_colour_is_tried_there() -> None:
    # the next player's turn: the photo shows X's top in another colour, its height
    # not at all, and no card: a build there is among the moves tried
    state, mine, _ = _state_with_tower_at_x()
    views = state.board.views()
    theirs = state.player.colors[0]
    assert theirs != mine
    seen = Observation("p", {s: v for s, v in views.items() if s != X}, frozenset({X}),
                       tops={X: theirs})
    at_x = {m.block for m, _legal in _candidates(state, seen, views)
            if isinstance(m, Build) and m.site == X}
    assert at_x == {b.block for b in _legal_at(state, X)}
    assert at_x
    # the same top as before: nothing says a build went there
    same = Observation("p", seen.sites, seen.unseen, tops={X: mine})
    assert not [m for m, _legal in _candidates(state, same, views)
                if isinstance(m, Build) and m.site == X]


def test_a_covered_sites_far_best_tower_is_the_rescues_guess_without_its_arm_rule() -> None:
    from types import SimpleNamespace

    from companion.vision.reader import _covered_guesses
    from companion.vision.settings import section

    cfg = section("sites")
    assert (cfg["covered_tower_margin"], cfg["covered_tower_empty_margin"]) == (3.0, 2.0)

    def covered(site: Site, margin: float, rivals, visible: float = 1.0) -> SiteResult:
        r = _covered(site, rivals, rivals[0][1])
        r.margin = margin
        r.tower = (rivals[0][0], rivals[0][1], 0.0, visible, 0.9, 0.8, np.zeros(3))
        return r

    far = covered(X, 0.6, [(3, "blue2017", 6.3), (11, "black", -0.7)])
    near = covered(Site(1, 0, 0), 0.6, [(3, "blue2017", 6.3), (4, "blue2017", 4.0)])
    empty_far_ahead = covered(Site(2, 0, 0), 2.5, [(3, "blue2017", 6.3), (9, "black", 1.0)])
    half_seen = covered(Site(3, 0, 0), 0.6, [(3, "blue2017", 6.3), (9, "black", 1.0)], 0.4)
    sites = SimpleNamespace(reader=SimpleNamespace(cfg=cfg),
                            results=[far, near, empty_far_ahead, half_seen])
    assert _covered_guesses(sites, {"blue2017": "blue"}) == {X: SiteView(3, "blue")}


def test_the_replay_takes_a_covered_guess_as_a_doubtful_reading(tmp_path, monkeypatch) -> None:
    import companion.commands as commands

    other = Site(1, 1, 1)
    (tmp_path / "a.png").write_bytes(b"")

    def read_one(job):
        reading = {"format": "manhattan-board/1", "colors": ["red", "blue"], "sites": [],
                   "unseen": [X.to_json(), other.to_json()], "cards": {}, "doubtful": []}
        return {"path": job[0], "reading": reading, "pose": None, "wb": None,
                "hypotheses": {}, "tops": {X: "red", other: "blue"},
                "guesses": {X: SiteView(3, "red")}}

    monkeypatch.setattr(commands, "_read_one", read_one)
    observations, skipped, _ = commands.read_folder(tmp_path, None, ["red", "blue"],
                                                    workers=1, fixed_camera=False)
    assert skipped == []
    (obs,) = observations
    assert obs.sites == {X: SiteView(3, "red")}
    assert obs.unseen == frozenset({other}) and obs.doubtful == frozenset({X})
    assert obs.tops == {other: "blue"}
