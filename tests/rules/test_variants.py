"""Variants: Anti-trust, Slow Growth (Mayfair), Monster and Baby Monster (Mayfair),
Godzilla (Bankler & Moore)."""

from __future__ import annotations

import pytest
from rules_helpers import position, tower

from companion.rules import (
    Block,
    Build,
    Card,
    GameState,
    Pass,
    Seat,
    SetupError,
    Site,
    Variant,
    apply_move,
    legal_builds,
    make_config,
    new_game,
)
from companion.rules.variants import check_variants, default_monster_start, step_site

S, W, N, E = Seat.S, Seat.W, Seat.N, Seat.E
SEAT_INDEX = {S: 0, W: 1, N: 2, E: 3}
COLOR = {S: "red", W: "blue", N: "green", E: "black"}


def build_with(state: GameState, seat: Seat, card: Card, city: int,
               storeys: int = 1) -> GameState:
    """``seat`` plays ``card`` and builds in ``city`` on the site the card gives."""
    r, c = card.site_cell(seat)
    return apply_move(state, Build(seat, card, Site(city, r, c), Block(COLOR[seat], storeys)))


def monster_state(variant: str = "monster", start: Site | None = None, seat: Seat = S,
                  board=None, **kw) -> GameState:
    """A position with the monster at ``start`` (Godzilla's set-up allows only a
    city's centre: elsewhere it is put there as if it had walked)."""
    if variant == "godzilla":
        cfg = make_config(4, variants=[variant], **kw)
        monster = {} if start is None else {"monster": start}
        return position(cfg, board=board, to_move=SEAT_INDEX[seat], **monster)
    cfg = make_config(4, variants=[variant], monster_start=start, **kw)
    return position(cfg, board=board, to_move=SEAT_INDEX[seat])


# -- Monster --------------------------------------------------------------------

def test_monster_starts_lower_left_of_the_south_west_city() -> None:
    s = new_game(make_config(4, variants=["monster"]))
    assert s.monster == Site(3, 2, 0)  # Hong Kong SW, "Soho" seen from the South seat
    assert default_monster_start(Variant.BABY_MONSTER) == Site(3, 2, 0)
    assert new_game(make_config(4)).monster is None


@pytest.mark.parametrize(("seat", "end"), [
    (S, Site(4, 0, 0)),  # c00 from S is NW
    (W, Site(4, 0, 2)),  # from W it is NE
    (N, Site(4, 2, 2)),  # from N it is SE
    (E, Site(4, 2, 0)),  # from E it is SW
])
def test_monster_moves_in_the_board_direction_of_the_site_the_card_gives(
        seat: Seat, end: Site) -> None:
    s = monster_state(start=Site(4, 1, 1), seat=seat)
    after = build_with(s, seat, Card(0, 0), city=0)
    assert after.monster == end
    assert after.last_monster_step is not None
    assert after.last_monster_step.start == Site(4, 1, 1)


def test_monster_destroys_the_whole_building_and_the_pieces_leave_the_game() -> None:
    target = Site(3, 1, 1)
    board = {target: tower(("green", 4), ("black", 2), ("green", 1))}
    s = monster_state(seat=W, board=board)
    after = build_with(s, W, Card(0, 0), city=0)  # W's c00 is NE: (3,2,0) -> (3,1,1)
    assert after.monster == target
    assert after.board.tower(target) == ()
    assert after.removed["green"] == {4: 1, 1: 1}
    assert after.removed["black"] == {2: 1}
    assert after.last_monster_step is not None
    assert after.last_monster_step.removed == ((target, 3),)


def test_monster_crosses_city_borders_on_the_six_by_nine_grid() -> None:
    s = monster_state(start=Site(3, 1, 2))
    assert build_with(s, S, Card(1, 2), city=0).monster == Site(4, 1, 0)  # east
    s = monster_state(start=Site(3, 0, 1))
    assert build_with(s, S, Card(0, 1), city=1).monster == Site(0, 2, 1)  # north
    s = monster_state(start=Site(1, 2, 2))
    assert build_with(s, S, Card(2, 2), city=0).monster == Site(5, 0, 0)  # south-east


@pytest.mark.parametrize(("start", "card"), [
    (Site(3, 2, 0), Card(0, 0)),  # corner, diagonal out of the board
    (Site(3, 2, 1), Card(2, 1)),  # south edge, south
    (Site(3, 2, 1), Card(2, 2)),  # south edge, diagonal: no sideways slide
    (Site(0, 0, 1), Card(0, 0)),  # north edge, diagonal
    (Site(2, 1, 2), Card(1, 2)),  # east edge, east
])
def test_monster_stops_at_the_outer_edge(start: Site, card: Card) -> None:
    s = monster_state(start=start)
    after = build_with(s, S, card, city=0 if start.city != 0 else 1)
    assert after.monster == start


def test_monster_can_wrap_when_configured() -> None:
    s = monster_state(start=Site(3, 2, 1), monster_wrap=True)
    assert build_with(s, S, Card(2, 1), city=1).monster == Site(0, 0, 1)


def test_centre_card_does_not_move_the_monster() -> None:
    s = monster_state(start=Site(4, 1, 1))
    after = build_with(s, S, Card(1, 1), city=0)
    assert after.monster == Site(4, 1, 1)


def test_monster_moves_after_the_build_and_may_destroy_it() -> None:
    # South builds on Hong Kong S with c21 (south) ... the monster at Hong Kong C
    # steps south onto the new building.
    s = monster_state(start=Site(3, 1, 1))
    after = build_with(s, S, Card(2, 1), city=3, storeys=4)
    assert after.monster == Site(3, 2, 1)
    assert after.board.tower(Site(3, 2, 1)) == ()
    assert after.removed["red"] == {4: 1}


def test_monster_moves_on_a_pass_too() -> None:
    # every (0,0) site is blocked for South's last block: a pass with c00
    board = {Site(c, 0, 0): tower(("blue", 4)) for c in range(6)}
    cfg = make_config(4, variants=["monster"], monster_start=Site(4, 1, 1))
    s = position(cfg, board=board, pending={"red": (1,)})
    after = apply_move(s, Pass(S, Card(0, 0)))
    assert after.monster == Site(4, 0, 0)


def test_no_block_under_the_monster() -> None:
    s = monster_state(start=Site(2, 0, 2))
    sites = {b.site for b in legal_builds(s)}
    assert Site(2, 0, 2) not in sites
    assert Site(1, 0, 2) in sites


# -- Baby Monster -----------------------------------------------------------------

def test_baby_monster_removes_only_the_top_piece() -> None:
    target = Site(3, 1, 1)
    board = {target: tower(("green", 2), ("black", 3))}
    s = monster_state("baby-monster", seat=W, board=board)
    after = build_with(s, W, Card(0, 0), city=0)
    assert after.monster == target
    assert after.board.tower(target) == tower(("green", 2))
    assert after.removed["black"] == {3: 1}
    assert after.removed["green"] == {}


def test_baby_monster_centre_card_removes_another_piece() -> None:
    here = Site(4, 1, 1)
    board = {here: tower(("green", 2), ("black", 3), ("blue", 1))}
    s = monster_state("baby-monster", start=here, board=board)
    after = build_with(s, S, Card(1, 1), city=0)
    assert after.monster == here
    assert after.board.tower(here) == tower(("green", 2), ("black", 3))
    assert after.removed["blue"] == {1: 1}


def test_baby_monster_centre_card_on_an_empty_site_removes_nothing() -> None:
    s = monster_state("baby-monster", start=Site(4, 1, 1))
    after = build_with(s, S, Card(1, 1), city=0)
    assert after.removed == {c: {} for c in ("red", "blue", "green", "black")}


def test_full_monster_centre_card_removes_nothing() -> None:
    here = Site(4, 1, 1)
    s = monster_state(start=here, board={Site(0, 1, 1): tower(("blue", 1))})
    after = build_with(s, S, Card(1, 1), city=1)
    assert after.board.tower(Site(0, 1, 1)) == tower(("blue", 1))
    assert after.monster == here


# -- Godzilla ----------------------------------------------------------------------

def test_godzilla_starts_in_the_centre_of_a_city() -> None:
    assert new_game(make_config(4, variants=["godzilla"])).monster == Site(0, 1, 1)
    assert default_monster_start(Variant.GODZILLA) == Site(0, 1, 1)
    # "set it in the center of any city": any city, but only its centre
    assert new_game(make_config(4, variants=["godzilla"],
                                monster_start=Site(4, 1, 1))).monster == Site(4, 1, 1)
    with pytest.raises(SetupError, match="^Godzilla starts in the centre of a "
                                   "city, not at 2NE$"):
        make_config(4, variants=["godzilla"], monster_start=Site(2, 0, 2))


@pytest.mark.parametrize(("start", "card", "end"), [
    (Site(0, 1, 0), Card(1, 0), Site(2, 1, 2)),  # west edge wraps to the east
    (Site(0, 0, 1), Card(0, 1), Site(3, 2, 1)),  # north edge wraps to the south
    (Site(5, 2, 2), Card(2, 2), Site(0, 0, 0)),  # SE corner wraps diagonally
    (Site(0, 1, 1), Card(1, 2), Site(0, 1, 2)),  # an ordinary step
])
def test_godzilla_wraps_at_both_edges(start: Site, card: Card, end: Site) -> None:
    s = monster_state("godzilla", start=start)
    city = 4 if start.city != 4 and end.city != 4 else 1
    assert build_with(s, S, card, city=city).monster == end


def test_godzilla_destroys_what_it_steps_on() -> None:
    board = {Site(2, 1, 2): tower(("blue", 4), ("blue", 4))}
    s = monster_state("godzilla", start=Site(0, 1, 0), board=board)
    after = build_with(s, S, Card(1, 0), city=4)
    assert after.board.tower(Site(2, 1, 2)) == ()
    assert after.removed["blue"] == {4: 2}


def test_step_site_grid() -> None:
    assert step_site(Site(0, 2, 2), 1, 1, wrap=False) == Site(4, 0, 0)
    assert step_site(Site(4, 0, 0), -1, -1, wrap=False) == Site(0, 2, 2)
    assert step_site(Site(2, 0, 2), -1, 1, wrap=True) == Site(3, 2, 0)
    assert step_site(Site(2, 0, 2), -1, 1, wrap=False) == Site(2, 0, 2)


def test_only_one_monster_at_a_time() -> None:
    with pytest.raises(SetupError, match="only one monster at a time: baby-monster, monster"):
        check_variants(frozenset({Variant.MONSTER, Variant.BABY_MONSTER}))
    check_variants(frozenset({Variant.MONSTER, Variant.ANTI_TRUST, Variant.SLOW_GROWTH}))


@pytest.mark.parametrize(("text", "variant"), [
    ("anti-trust", Variant.ANTI_TRUST), ("Antitrust", Variant.ANTI_TRUST),
    ("slow_growth", Variant.SLOW_GROWTH), ("baby", Variant.BABY_MONSTER),
    ("Baby Monster", Variant.BABY_MONSTER), ("godzilla", Variant.GODZILLA),
])
def test_variant_names(text: str, variant: Variant) -> None:
    assert Variant.parse(text) is variant


# -- Slow Growth ----------------------------------------------------------------------

@pytest.mark.parametrize(("players", "expected"), [
    (4, [(0, 1, 2), (0, 1, 2, 3), (0, 1, 2, 3, 4), (0, 1, 2, 3, 4, 5)]),
    (3, [(0, 1, 2), (0, 1, 2, 3), (0, 1, 2, 3, 4)] + [(0, 1, 2, 3, 4, 5)] * 3),
])
def test_slow_growth_opens_three_cities_then_one_more_each_round(players, expected) -> None:
    cfg = make_config(players, variants=["slow-growth"])
    s = new_game(cfg)
    from dataclasses import replace

    got = [replace(s, round=k).open_cities() for k in range(1, cfg.rounds + 1)]
    assert got == expected


def test_slow_growth_custom_order_and_legal_builds() -> None:
    cfg = make_config(4, variants=["slow-growth"], slow_growth_order=(5, 3, 1, 0, 2, 4))
    s = position(cfg)
    assert s.open_cities() == (1, 3, 5)
    assert {b.site.city for b in legal_builds(s)} == {1, 3, 5}
    assert new_game(make_config(4)).open_cities() == (0, 1, 2, 3, 4, 5)


def test_anti_trust_leaves_other_builds_alone() -> None:
    cfg = make_config(4, variants=["anti-trust"])
    site = Site(0, 0, 0)
    s = position(cfg, board={site: tower(("red", 1))})
    sites = {b.site for b in legal_builds(s)}
    assert site not in sites
    assert Site(1, 0, 0) in sites
