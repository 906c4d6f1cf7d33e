"""Readings the reader once got wrong on the vision tests' own renderer.

Each photo here (``synth.py``, one from ``companion.sim``) held one such
case: a card whose artwork runs off the photo, a red cell touching red
artwork, a grid cut by the photo's edge; under a warm lamp, shaded empty
sites whose bluish grey passed for blue plastic because the empty-site print
was not recognised; a tall phantom tower on a site whose footprint plainly
shows the print; a phantom guess on an unseen site hiding four sites behind
it; towers whose foot a nearer tower hides though their top settles the
height; empty sites under a tower's soft shadow; an empty site partly behind
a nearer tower whose visible part plainly shows the board; a marker whose
detected corner a tower's shadow bent (four markers, and three); a marker
found on a second look whose corners would bend the camera; cards partly
behind towers; a card read one cell off (or left out) because the hypothesis
a cell off was judged only on the part of the card it covered; red tower
faces over an empty seat's place; an empty-site print nearly of a block's
colour; towers under an arm read as empty sites. The narrow wins are listed
as doubtful.
"""

from __future__ import annotations

import numpy as np
import pytest

from companion.rules.board import Site
from companion.rules.topology import Seat
from companion.vision.cards import read_card
from companion.vision.colours import ColourModel, estimate_white_balance
from companion.vision.evaluate import compare
from companion.vision.geometry import board_geometry
from companion.vision.reader import read_image
from companion.vision.sites import fit_site_print
from tests.vision.synth import shoot, truth_json

LAMPS = ("white", "warm", "cold")
SETS = ("classic", "2017")
#: the markers alone, as before the board's outline refined poses from three
#: markers or fewer (companion/vision/outline.py)
NO_OUTLINE = {"outline": {"enabled": False}}
#: the tests of the markers' pose as it was before the edges of a marker the detector
#: missed were fitted too (outline.refine_by_marker_edges)
NO_EDGES = {"marker_edges": {"enabled": False}}


def _shot(seed: int):
    return shoot(seed, kind="mounted", light=LAMPS[seed % 3], colour_set=SETS[seed % 2])


@pytest.mark.parametrize("seed, seat, cell", [
    (7, Seat.N, (1, 2)),  # the card's lower part runs off the bottom of the photo
    (14, Seat.W, (2, 2)),  # the left red cell touches red-purple artwork below it
    (8, Seat.W, (1, 1)),  # the photo's edge cuts a corner off the left grid
])
def test_a_card_is_read_wherever_its_red_pair_and_grids_are_seen(seed, seat, cell):
    shot = _shot(seed)
    g = board_geometry()
    wb = estimate_white_balance(shot.image, shot.pose, g)
    read = read_card(shot.image, shot.pose, g, seat, wb)
    assert read is not None
    assert read.cell == cell


def test_a_card_mostly_off_the_photo_is_left_out():
    shot = _shot(11)  # the E stack lies wholly outside this photo
    g = board_geometry()
    wb = estimate_white_balance(shot.image, shot.pose, g)
    assert shot.card_visible[Seat.E] == 0.0
    assert read_card(shot.image, shot.pose, g, Seat.E, wb) is None


@pytest.mark.parametrize("kind, seed, seat, cell", [
    # a purple tower stands over the right grid's top row: its face, compared as
    # card, made the grid one row higher fit better
    ("phone", 55, Seat.W, (1, 0)),
    # a blue tower hides the left grid's top row: no cell scored enough
    ("mounted", 45, Seat.S, (2, 2)),
])
def test_a_card_is_read_around_the_towers_standing_in_front_of_it(kind, seed, seat, cell):
    shot = shoot(seed, kind=kind, light=LAMPS[seed % 3], colour_set=SETS[seed % 2])
    assert shot.card_visible[seat] > 0.9  # the towers hide little of the grids
    reading = read_image(shot.image, None, shot.scene.colors)
    assert reading.cards.get(seat) == cell


def test_a_card_across_a_towers_shadow_edge_is_read():
    # the shadow's edge runs through both grids: the pattern fits at 0.35, less
    # than a clear card but well clear of any wrong cell's fit (0.30 at most)
    shot = shoot(52, kind="phone", light=LAMPS[52 % 3], colour_set=SETS[52 % 2])
    reading = read_image(shot.image, None, shot.scene.colors)
    assert reading.cards.get(Seat.S) == (1, 1)


@pytest.mark.parametrize("kind, seed, seat, cell", [
    # a red pair whose grids are periodic: one row up fitted the part of the card it
    # covered as well (margin 0.00005, left out); it leaves the card's top edge and
    # frame, and the grid's top line, outside the card, where it predicts a flat level
    ("mounted", 104, Seat.E, (1, 2)),
    # one column off fitted better on the part it covered: read (1, 2)
    ("phone", 143, Seat.E, (1, 0)),
])
def test_a_card_one_cell_off_must_explain_the_whole_card(kind, seed, seat, cell):
    shot = shoot(seed, kind=kind, light=LAMPS[seed % 3],
                 colour_set="classic" if kind == "mounted" else "2017")
    reading = read_image(shot.image, None, shot.scene.colors)
    assert reading.cards.get(seat) == cell


def test_red_tower_faces_beside_the_board_are_not_a_card():
    # no stack at E; tall red towers' faces, seen low, lie over the stack's place, and
    # the split between them and the table explains much of the window: the printed
    # pattern itself does not fit (0.03) and the card is not read
    shot = shoot(195, kind="mounted", light=LAMPS[195 % 3], colour_set="classic")
    assert Seat.E not in shot.scene.cards
    reading = read_image(shot.image, None, shot.scene.colors)
    assert Seat.E not in reading.cards


def test_shaded_empty_sites_under_a_warm_lamp_are_not_blue_towers():
    shot = _shot(7)  # warm lamp, 2017 colours: shaded print looks bluish grey
    reading = read_image(shot.image, None, shot.scene.colors)
    details = {d.site.code: d for d in reading.details}
    for code in ("0NE", "2SW", "4N"):
        site = next(s for s in board_geometry().sites if s.code == code)
        assert site not in shot.scene.towers or not shot.scene.towers[site]
        assert shot.visible[site] == 1.0
        view = reading.sites.get(site)
        assert view is None or view.height == 0
        if code == "0NE":
            # its footprint's shaded print looks like blue plastic (-0.72): the empty
            # site, losing points for that (sites.empty_plastic_weight), falls 0.08
            # under a blue 1-storey tower, and the print that shows clearly there
            # refutes the tower (sites.print_empty_ncc): empty. Before that penalty the
            # empty site beat the tower by 0.63 only: too close to call, so unseen
            # (sites.empty_doubt_margin); read empty before that rule
            before = read_image(shot.image, None, shot.scene.colors,
                                {"sites": {"empty_plastic_weight": 0.0}})
            was = {d.site.code: d for d in before.details}[code]
            assert site in before.unseen and was.reason == "close"
            assert was.rivals[0][:2] == (1, "blue")
            assert details[code].height == 0 and details[code].reason == ""
        assert site not in reading.unseen


def _lavender_footprints(n_print: int) -> tuple[np.ndarray, ColourModel]:
    """Footprint colours of a board whose empty-site print is nearly purple."""
    model = ColourModel.for_colours(board_geometry(), ["orange", "yellow", "purple", "blue"])
    rng = np.random.default_rng(3)
    lavender = np.array([0.07, -0.06, -0.15])  # phone seed 14's print, cold lamp
    prints = lavender + rng.normal(0.0, 0.004, (n_print, 3))
    tops = np.concatenate([np.repeat(c.mean[None], 6, axis=0) for c in model.classes])
    tops = tops + rng.normal(0.0, 0.01, tops.shape)
    return np.concatenate([prints, tops]), model


def test_a_print_nearly_of_a_block_colour_is_still_found():
    feats, model = _lavender_footprints(12)
    d2 = model.distance2(feats[:12]).min(axis=1)
    assert np.all((d2 > 2.0) & (d2 < 4.0))  # too near purple for the first look
    assert fit_site_print(feats, model, min_block_d2=4.0) is None
    found = fit_site_print(feats, model, min_block_d2=4.0, near_block_d2=2.0,
                           near_min_sites=6)
    assert found is not None
    assert np.allclose(found.mean, [0.07, -0.06, -0.15], atol=0.01)
    # five such sites are not enough: tops of one colour shaded alike could be
    few, model = _lavender_footprints(5)
    assert fit_site_print(few, model, min_block_d2=4.0, near_block_d2=2.0,
                          near_min_sites=6) is None


def test_empty_sites_on_a_lavender_print_beside_purple_blocks_are_not_towers():
    # phone seed 14 (2017 colours, cold lamp): the print lay within 2.6 of purple,
    # no print model was found, and nine empty sites read as towers up to 26 tall
    # (the yellow-green board beyond taken for their tops)
    shot = shoot(14, kind="phone", light="cold", colour_set="2017")
    reading = read_image(shot.image, None, shot.scene.colors)
    for code in ("0N", "0E", "0SE", "1C", "1S", "2NW", "2SE", "5C"):
        site = next(s for s in board_geometry().sites if s.code == code)
        assert not shot.scene.towers.get(site)
        view = reading.sites.get(site)
        assert site not in reading.unseen and (view is None or view.height == 0), code


def test_a_tower_read_where_the_footprint_shows_clear_print_is_no_tower():
    # seed 9: a 6-storey blue tower was read on 2NW, its top the face of a tower
    # farther back; the site's footprint, in full view, shows the empty print
    shot = _shot(9)
    reading = read_image(shot.image, None, shot.scene.colors)
    site = next(s for s in board_geometry().sites if s.code == "2NW")
    assert not shot.scene.towers.get(site)
    assert shot.visible[site] == 1.0
    view = reading.sites.get(site)
    assert site not in reading.unseen and (view is None or view.height == 0)


def test_a_phantom_guess_on_an_unseen_site_does_not_hide_the_sites_behind_it():
    # seed 6: the empty site 1S, its foot hidden, guessed a 21-storey red tower
    # (a farther tower's top) that hid four sites behind it; those sites, read
    # without the guess, settle surely and stand
    shot = _shot(6)
    reading = read_image(shot.image, None, shot.scene.colors)
    sites = {s.code: s for s in board_geometry().sites}
    assert sites["1S"] in reading.unseen
    expected = {"4N": (3, "red"), "4NE": (1, "blue"), "4E": (0, None), "4SE": (4, "red")}
    for code, (height, owner) in expected.items():
        site = sites[code]
        assert shot.visible[site] >= 1.0
        assert shot.scene.heights().get(site, (0, None)) == (height, owner)
        assert site not in reading.unseen
        view = reading.sites.get(site)
        got = (view.height, view.owner) if view is not None and view.height else (0, None)
        assert got == (height, owner)


@pytest.mark.parametrize("seed, code, tower", [(30, "1E", (12, "blue")),
                                                (5, "2N", (6, "yellow"))])
def test_a_tower_whose_foot_is_hidden_is_read_when_no_rival_height_comes_close(
        seed, code, tower):
    # phone photos: a nearer tower hides the foot; the top alone, with the
    # placement prior, leaves every other height far behind (margin >= 8). Seed
    # 30's 1E (four markers) fits less well than the score gate asks (13.8 against
    # 14): the margin reads it. (Seed 5's 0NW was that case until the board's outline
    # refined its pose from two markers: its top is then too little in view to read)
    shot = shoot(seed, kind="phone", light=LAMPS[seed % 3], colour_set=SETS[seed % 2])
    reading = read_image(shot.image, None, shot.scene.colors)
    site = next(s for s in board_geometry().sites if s.code == code)
    detail = next(d for d in reading.details if d.site == site)
    assert shot.scene.heights()[site] == tower
    assert detail.foot_visible < 0.1 and detail.margin >= 8.0
    assert (detail.height, detail.color) == tower


@pytest.mark.parametrize("seed, code", [(0, "1W"), (10, "5E")])
def test_an_empty_site_under_a_soft_tower_shadow_is_read_empty(seed, code):
    # the shadow's brightness ramp across the site hid the print's pattern from
    # the plain comparison, and the site went to unseen as "covered"
    shot = _shot(seed)
    reading = read_image(shot.image, None, shot.scene.colors)
    site = next(s for s in board_geometry().sites if s.code == code)
    assert not shot.scene.towers.get(site) and shot.visible[site] >= 0.99
    assert site not in reading.unseen
    view = reading.sites.get(site)
    assert view is None or view.height == 0


@pytest.mark.parametrize("seed, code", [(30, "3N"), (24, "2W"), (10, "0NE")])
def test_an_empty_site_partly_behind_a_tower_is_read_empty_when_its_board_shows_clearly(
        seed, code):
    # a nearer tower hides up to two thirds of the footprint; what shows of it is
    # plainly board (margin >= 5 over any tower): a tower would cover its own
    # footprint, so the site is empty, not unseen as a hidden top would be. (Seed
    # 18's 0N and 2NW were two such sites until the board's outline refined that
    # photo's pose from two markers: more than half of each footprint is then seen)
    shot = _shot(seed)
    site = next(s for s in board_geometry().sites if s.code == code)
    assert not shot.scene.towers.get(site) and shot.visible[site] >= 0.5
    reading = read_image(shot.image, None, shot.scene.colors)
    detail = next(d for d in reading.details if d.site == site)
    assert 0.3 <= detail.visible < 0.5 and detail.margin >= 5.0
    assert site not in reading.unseen and site not in reading.sites
    # with the rule for tops (half the footprint in view) it would be unseen
    strict = read_image(shot.image, None, shot.scene.colors,
                        {"sites": {"empty_min_visible": 1.0}})
    assert site in strict.unseen


def _truth(cards: dict[str, list[int]], stacks: dict[str, list[int]]) -> dict:
    return {"board": {"sites": []},
            "expected": {"sites": [], "unseen": [],
                         "cards": {k: {"cell": v} for k, v in cards.items()}},
            "card_stacks": {k: {"cell": v} for k, v in stacks.items()}}


def test_a_hidden_stack_read_right_is_no_error_and_read_wrong_is_one():
    truth = _truth({"S": [0, 1]}, {"S": [0, 1], "N": [2, 2], "E": [1, 0]})
    reading = {"sites": [], "unseen": [],
               "cards": {"S": {"cell": [0, 1]}, "N": {"cell": [2, 2]}, "E": {"cell": [1, 1]},
                         "W": {"cell": [0, 0]}}}
    out = compare(reading, truth)
    assert (out["cards_expected"], out["cards_wrong"], out["cards_missed"]) == (1, 0, 0)
    assert out["cards_extra"] == 2  # E read wrong, W read where no stack lies


def test_a_marker_a_shadow_bent_is_mended_or_left_out_of_the_pose():
    # phone photo: a tower's shadow touches marker 2 and one detected corner lands
    # 17 px off; solved with it, f and k1 went wrong (camera 41 mm off, 12 visible
    # sites unseen). That corner is now put where the other fifteen say (2 mm
    # off); without that, the whole marker is left out (the other three: 5 mm)
    shot = shoot(13, kind="phone", light=LAMPS[13 % 3], colour_set=SETS[13 % 2])
    whole = read_image(shot.image, config={"pose": {"corner_px": 1e9}})
    assert whole.pose.markers == (0, 1, 3)
    reading = read_image(shot.image)
    assert reading.pose.markers == (0, 1, 2, 3)
    for r, mm in ((reading, 3.0), (whole, 6.0)):
        assert float(((r.pose.camera_centre - shot.pose.camera_centre) ** 2).sum() ** 0.5) < mm
    truth = shot.scene.heights()
    visible = [s for s, v in shot.visible.items() if v >= 0.5]
    unseen = [s for s in visible if s in reading.unseen]

    def seen(site):
        view = reading.sites.get(site)
        return (view.height, view.owner) if view is not None and view.height else None

    wrong = [s for s in visible if s not in unseen and seen(s) != truth.get(s)]
    # (0, 4) before a reading that beat a far different one by a hair went to unseen
    # (sites.empty_doubt_margin, tower_doubt_margin): a right one here
    assert (len(wrong), len(unseen)) == (0, 5)


def test_one_bent_corner_of_three_markers_no_longer_bends_the_camera():
    # mounted, 77 degrees, markers 0-2: a nearby tower's shadow pulls one corner of
    # marker 0 by 4 px; fitted with f and k1 from twelve corners it set the camera
    # 293 mm off (f 712 px against 992) and the tall towers near the camera were
    # read as empty sites (19 visible sites wrong). Solved without it: 53 mm, 13.
    # Since a k1 is kept only when it earns its place (intrinsics.k1_gain), the bent
    # corner's k1 (-0.077) is not, and the camera is 139 mm off even unmended; mended,
    # 15 mm (f 1003) but 16 sites wrong: readings at 77 degrees flip with any pose
    shot = shoot(5, kind="mounted", light=LAMPS[5 % 3], colour_set="classic")

    def off(reading):
        return float(((reading.pose.camera_centre - shot.pose.camera_centre) ** 2).sum() ** 0.5)

    def wrong(reading):
        out = compare(reading.to_json(), truth_json(shot))
        return out["wrong"], out["unseen_visible"]

    # as shipped, with the camera file: three markers and known intrinsics leave the
    # board's outline out (outline.below_markers), and the mended corner takes the
    # camera from 23 to 10 mm off (readings at 77 degrees flip with any pose: one more
    # site unseen). (9, 10) and (9, 11) before a reading that beat a far different one
    # by a hair went to unseen (sites.empty_doubt_margin, tower_doubt_margin); (8, 11)
    # and (8, 12) while sites.steep_storey_mm was 2 mm, not the profile's jitter;
    # (7, 14) and (5, 16) at the jitter, not a third more (sites.steep_jitter_factor);
    # (7, 16) and (3, 22) before a storey more or less within a point of the reading
    # made it unseen (sites.storey_doubt_margin); (2, 26) before a site found hidden
    # behind a first reading that later changed was read again (sites.uncover_margin);
    # (6, 17) before the empty site lost points on a plastic footprint
    # (sites.empty_plastic_weight)
    camera = shot.pose.intrinsics
    # All of it without marker 3's edges (outline.refine_by_marker_edges), which this
    # test's poses were measured before: looked for where the three markers put it,
    # they set the camera 0.5 mm off, with the camera file or without (below)
    for config, mm, tally in (({"pose": {"corner_px": 1e9}}, (20.0, 25.0), (4, 18)),
                              (None, (8.0, 12.0), (2, 25))):
        known = read_image(shot.image, camera, shot.scene.colors, {**(config or {}), **NO_EDGES})
        assert known.pose.markers == (0, 1, 2)
        assert mm[0] < off(known) < mm[1] and wrong(known) == tally
    # Without a camera file the reader refines a pose from three markers with the
    # board's outline (outline.below_markers_estimated), fitted to the markers'
    # corners as the pose used them, the bent one mended: the camera 13 -> 6 mm off
    # (one site more wrong: readings at 77 degrees flip with any pose). Until the
    # outline was handed the mended corners it fitted the bent one again (13 mm
    # mended or not). With the bent corner's k1 kept (intrinsics.k1_gain 1) the
    # markers alone set the camera 293 mm off (f 712 px against 992; 13 wrong, 11
    # unseen); the board's edges bring it to 4 mm
    unmended = read_image(shot.image, None, shot.scene.colors,
                          config={"pose": {"corner_px": 1e9}, **NO_EDGES})
    mended = read_image(shot.image, None, shot.scene.colors, config=NO_EDGES)
    bent_k1 = {"pose": {"corner_px": 1e9}, "intrinsics": {"k1_gain": 1.0}, **NO_EDGES}
    bent = read_image(shot.image, None, shot.scene.colors, config=bent_k1)
    alone = read_image(shot.image, None, shot.scene.colors, config={**bent_k1, **NO_OUTLINE})
    assert unmended.pose.markers == mended.pose.markers == bent.pose.markers == (0, 1, 2)
    assert 10.0 < off(unmended) < 15.0 and off(mended) < 8.0
    # mended (7, 13) before the close rule: two wrong sites went to unseen
    # (6, 13) and (5, 15) while sites.steep_storey_mm was 2 mm, not the profile's
    # placement jitter (3 mm); (5, 16) and (4, 18) at the jitter, not a third more;
    # unmended (3, 21) before sites.storey_doubt_margin (a right height); both one
    # more wrong while a tower whose footprint showed the print's pattern in another
    # colour was read empty (5N, test_covered_towers); each one more unseen before a
    # site found hidden behind a first reading that later changed was read again
    # (sites.uncover_margin); unmended (2, 21) before the empty site lost points on a
    # plastic footprint (sites.empty_plastic_weight)
    assert wrong(unmended) == (2, 20) and wrong(mended) == (2, 22)
    assert off(alone) > 250.0 and off(bent) < 6.0
    # the camera file's intrinsics and marker 3's edges: 0.5 mm; estimated, the edges
    # keep f as the markers fitted it (too little gained by freeing it), 6 mm
    edged = read_image(shot.image, camera, shot.scene.colors)
    assert edged.pose.markers == (0, 1, 2) and off(edged) < 1.0
    assert 5.0 < off(read_image(shot.image, None, shot.scene.colors)) < 7.0


def test_a_marker_found_on_the_second_look_that_bends_the_fit_is_not_used():
    # phone photo: marker 1, missed at full size, decodes on the enlarged crop with
    # its corners 3-4.5 px off; solved with it (k1 estimated from three markers)
    # the camera went 92 mm off (and, before the card reader judged every cell
    # hypothesis on the whole card, the E card was misread). The fit with it misses
    # a marker by 3 px, so the two-marker pose (35 mm off) stands.
    shot = shoot(46, kind="phone", light=LAMPS[46 % 3], colour_set=SETS[46 % 2])

    def off(pose):
        return float(((pose.camera_centre - shot.pose.camera_centre) ** 2).sum() ** 0.5)

    # Both poses are then refined with the board's outline (outline.*): the two
    # markers' to 59 mm off (35 from the markers alone), the bent three's to 945 mm
    # (999 unrefined; over a metre while the outline was fitted to the corners as
    # first found), and 4 visible sites wrong and 12 unseen against 12 and 19 (9, 10
    # and 15, 15 from the markers alone; 16 and 17 with the corners as first found)
    # The first look samples each cell at 8 pixels whenever a marker is missing
    # (pose.retry's first entry, "below" 4): marker 1 then decodes at full size with
    # corners that fit (the camera 2 mm off, 1 visible site wrong and 19 unseen). The
    # second look is what this test is about: it runs with the finer first look
    # kept to under two markers, as it was. (19 unseen before a cast was fitted to
    # the tops, tone.gains)
    from tests.vision.retries import finer_look_under_two

    coarse = finer_look_under_two()
    finer = read_image(shot.image, None, shot.scene.colors)
    assert finer.pose.markers == (0, 1, 2) and off(finer.pose) < 5.0
    out = compare(finer.to_json(), truth_json(shot))
    assert (out["wrong"], out["unseen_visible"]) == (1, 20)
    # (and without the missed markers' edges, outline.refine_by_marker_edges: from
    # the two markers with 1 and 3's edges the camera is 49 mm off, and the sites
    # read (4, 19))
    reading = read_image(shot.image, None, shot.scene.colors,
                         config={"pose": coarse, **NO_EDGES})
    assert reading.pose.markers == (0, 2) and off(reading.pose) < 60.0
    assert reading.cards[Seat.E] == shot.scene.cards[Seat.E] == (1, 2)
    found = read_image(shot.image, None, shot.scene.colors,
                       config={"pose": {**coarse, "find_px": 9.0}, **NO_EDGES})
    assert found.pose.markers == (0, 1, 2) and 900.0 < off(found.pose) < 1000.0
    tally = [compare(r.to_json(), truth_json(shot)) for r in (reading, found)]
    # [(4, 12), (12, 19)] while sites.steep_storey_mm was 2 mm, not the profile's placement jitter
    # (3 mm); [(1, 17), (10, 21)] while the print was learnt from every site read
    # empty, not the sure ones (sites.print_template_margin); [(1, 18), (10, 20)] while
    # the steep-view limit was the profile's jitter, not a third more
    # (sites.steep_jitter_factor: four heights a storey off unresolved in the second);
    # [(1, 19), (6, 25)] before a storey more or less within a point of the reading
    # made it unseen (sites.storey_doubt_margin: two right heights in each); [(1, 21),
    # (6, 27)] before two markers' focal length leaned on a typical camera's
    # (intrinsics.focal_prior_px); [(0, 21), (6, 27)] before a one-storey tower on a
    # footprint that looks like the board went to unseen (sites.board_foot_doubt: two
    # right ones in the second); (6, 29) while an empty site that won by a hair was
    # doubted whatever its footprint showed (sites.empty_doubt_board: a tower read empty);
    # (7, 28) while an empty site won by a hair passed a half match of the print
    # (sites.print_close_ncc: a tower read empty, unseen since)
    assert [(c["wrong"], c["unseen_visible"]) for c in tally] == [(0, 21), (6, 29)]


def test_the_readings_that_won_narrowly_are_listed_as_doubtful():
    # seed 2, 78 degrees: 9 visible sites read wrong; 3 of them won by less than
    # one point of score and are listed, with 2 right readings as narrow (16, 15 and 9
    # before the heights this view cannot tell went to unseen, sites.steep_storey_mm;
    # 17, 12 and 4 while a k1 the markers could not tell from f was kept; 10, 7 and 4
    # before the board's outline refined the pose from three markers, outline.*).
    # Read with a storey more or less by a hair still reported (as before
    # sites.storey_doubt_margin): as shipped, all three narrow ones are unseen
    shot = _shot(2)
    # (seed 2's three-marker pose, as measured: fitted with marker 2's edges too the
    # camera is 0.8 mm off, not 2.9, and the sites read (6, 18), not (2, 21): at 78
    # degrees readings flip with any pose; outline.refine_by_marker_edges)
    storeys = {"sites": {"storey_doubt_margin": 0.0}, **NO_EDGES}
    reading = read_image(shot.image, None, shot.scene.colors, config=storeys)
    narrow = {d.site for d in reading.details if d.height is not None and d.margin < 1.0}
    assert set(reading.doubtful) == narrow
    # the only unseen ones among them are heights this view cannot tell (flagged in
    # the JSON's "unresolved", not its "doubtful")
    shown = set(reading.doubtful) - set(reading.unresolved)
    assert shown.isdisjoint(reading.unseen)
    truth = shot.scene.heights()
    wrong = set()
    for site, seen in shot.visible.items():
        if seen < 0.5 or site in reading.unseen:
            continue
        height, owner = truth.get(site, (0, None))
        view = reading.sites.get(site)
        read = (view.height, view.owner) if view else (0, None)
        if read != ((height, owner) if height else (0, None)):
            wrong.add(site)
    # (9, 5, 3) before a reading that beat a far different one by a hair went to
    # unseen (sites.empty_doubt_margin, tower_doubt_margin): one wrong doubtful one
    # (8, 4, 2) while sites.steep_storey_mm was 2 mm, not the profile's placement jitter (3 mm);
    # (5, 3, 2) before a narrow tower whose side is nearly as bright as its top went to
    # unseen (sites.bright_side_margin: 4S, a one-storey black on an empty site, and
    # 3E, a right one); (4, 3, 2) before a site found hidden behind a first reading that
    # later changed was read again (sites.uncover_margin: 4S again, read under the
    # final silhouettes as that black by 3 points, over the bright-side doubt's margin);
    # (5, 3, 2) before the empty site lost points on a plastic footprint
    # (sites.empty_plastic_weight: a wrong one read right)
    assert (len(wrong), len(shown), len(wrong & shown)) == (4, 3, 2)
    assert reading.to_json()["doubtful"] == [
        {"city": s.city, "row": s.row, "col": s.col} for s in sorted(shown)]
    assert read_image(shot.image, None, shot.scene.colors,
                      config={"sites": {"doubt_margin": 0.0, "storey_doubt_margin": 0.0},
                              **NO_EDGES}).doubtful == []
    shipped = read_image(shot.image, None, shot.scene.colors, NO_EDGES)
    assert shown <= set(shipped.unseen) and set(shipped.doubtful) <= set(shipped.unresolved)
    assert all(shipped.unresolved[s] == reading.sites[s] for s in shown)  # the guesses


def test_a_marker_a_hard_shadow_joins_to_its_border_is_found_on_a_second_look():
    # synth.py mounted seed 1011: two markers behind towers, one cut by the frame's
    # edge, and a tower's hard shadow across the fourth's corner, which joins its
    # black border to the shadow under the detector's local threshold: no marker
    # was found. With no marker the detector looks again with a lower and with a
    # wider threshold (pose.retry); markers 0 and 2 are found (4 sites wrong, 2 since
    # the board's outline refines a pose from two markers: outline.*)
    from companion.vision.errors import BoardNotFoundError

    shot = shoot(1011, kind="mounted", light=LAMPS[1011 % 3], colour_set="classic")
    reading = read_image(shot.image, None, shot.scene.colors)
    assert reading.pose.markers == (0, 2)
    out = compare(reading.to_json(), truth_json(shot))
    # (42, 2, 1) before the close rule (sites.empty_doubt_margin): 4N, truly empty, is
    # unseen since its empty site beats a black tower by 0.93 only; (42, 2, 2) while the
    # steep-view limit was the profile's jitter, not a third more (three right heights
    # at 79 degrees unresolved); (42, 2, 5) before a storey more or less within a point
    # of the reading made it unseen (sites.storey_doubt_margin: a wrong height);
    # (42, 1, 6) before two markers' focal length leaned on a typical camera's
    # (intrinsics.focal_prior_px: f 0.998 of the truth instead of 0.996, and readings at
    # 79 degrees flip with any pose); (42, 2, 3) before the empty site lost points on a
    # plastic footprint (sites.empty_plastic_weight: a right one now too close to call)
    assert (out["visible_sites"], out["wrong"], out["unseen_visible"]) == (42, 2, 4)
    with pytest.raises(BoardNotFoundError, match="no board markers found"):
        read_image(shot.image, None, shot.scene.colors, config={"pose": {"retry_below": 0}})


def test_a_small_marker_whose_bits_are_misread_is_read_on_a_finer_look():
    # the ray-traced renderer's mounted frame 214: the board far off, its markers'
    # cells about five pixels wide. The first look decodes marker 3 alone (the
    # others' outlines are found, their bits misread), and a pose from one marker
    # with a guessed focal length left 34 visible sites unseen and both cards out.
    # Sampling each cell at 8 pixels decodes marker 2 too, from the same outline: a
    # look made first since the thirty-second session (pose.first), before only when
    # the first look at 4 pixels found under two markers.
    # Both poses are then refined with the board's outline (tests/vision/test_outline.py:
    # 4 wrong, 26 unseen and 4, 34 from the markers alone). One marker's pose reads
    # a pair of covered neighbours as towers (sites.covered_tower_cluster; 6 unseen
    # while any covered neighbour kept a site unseen)
    import cv2

    from companion.vision.pose import detect_markers
    from companion.vision.settings import section
    from tests.vision.raycast import shoot as raycast_shoot
    from tests.vision.retries import looks_before_the_middle

    image, truth = raycast_shoot(214, "mounted")
    g = board_geometry()
    gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    pose_cfg = section("pose")
    # (the look at each cell's middle, pose.retry's last entry, decodes markers 0 and
    # 2 even from the coarse first look, and marker 0 beside 2 and 3 as shipped)
    coarse = {**pose_cfg, "first": {}, "retry": looks_before_the_middle()[1:]}
    assert sorted(detect_markers(gray, g, coarse)) == [3]
    assert sorted(detect_markers(gray, g, {**pose_cfg, "retry": looks_before_the_middle()})
                  ) == [2, 3]
    assert sorted(detect_markers(gray, g, pose_cfg)) == [0, 2, 3]
    assert sorted(detect_markers(gray, g, {**pose_cfg, "first": {},
                                            "retry": pose_cfg["retry"][1:]})) == [0, 2, 3]
    cols = truth["expected"]["colors"]
    tally = []
    for config in (None, {"pose": {"retry": looks_before_the_middle()}}, {"pose": coarse}):
        reading = read_image(image, None, cols, config)
        out = compare(reading.to_json(), truth)
        tally.append((reading.pose.markers, out["wrong"], out["unseen_visible"],
                      out["cards_expected"] - out["cards_missed"]))
    # ((2, 3), 2, 4, 2) and ((3,), 4, 5, 2) before a reading that beat a far different
    # one by a hair went to unseen (sites.empty_doubt_margin, tower_doubt_margin);
    # ((2, 3), 2, 5, 2) and ((3,), 2, 7, 2) while every top seen without its foot and
    # scoring under 14 was unseen (sites.foot_hidden_keep_score: right ones here);
    # ((2, 3), 2, 4, 2) before two markers' focal length leaned on a typical camera's
    # (intrinsics.focal_prior_px; the outline then brings f within 0.4% either way,
    # see test_outline.py); ((3,), 2, 6, 2) before a narrow tower whose side is nearly
    # as bright as its top went to unseen (sites.bright_side_margin: 5NW, a wrong blue)
    # and as shipped, three markers (the third from the look at the cells' middles):
    # 0 wrong and 8 unseen against the two markers' 2 and 5
    assert tally == [((0, 2, 3), 0, 8, 2), ((2, 3), 2, 5, 2), ((3,), 1, 7, 2)]


def test_a_blurred_marker_missed_beside_others_is_read_on_a_finer_look():
    # the ray-traced renderer's mounted frame 9002 (64 degrees, 1 px of blur, a night
    # board): all four markers in full view, but a look sampling each cell at 4 pixels
    # decodes markers 1 and 3 alone (0 and 2, their cells about seven pixels wide,
    # misread). Sampling at 8 pixels was tried only when under two were found; the
    # first look now samples at 8 (pose.first), and finds all four. The focal
    # length from two markers is loose: 980 px against a true 1024, the sites eight
    # storeys up 2.1 px off; from four 1014 px and 0.4 px
    import cv2

    from companion.vision.pose import detect_markers
    from companion.vision.settings import section
    from tests.vision.raycast import shoot as raycast_shoot
    from tests.vision.retries import finer_look_under_two

    image, truth = raycast_shoot(9002, "mounted")
    g = board_geometry()
    gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    pose_cfg = section("pose")
    before = {**pose_cfg, **finer_look_under_two()}
    assert sorted(detect_markers(gray, g, before)) == [1, 3]
    assert sorted(detect_markers(gray, g, {**pose_cfg, "retry_below": 0})) == [0, 1, 2, 3]
    f_true = truth["camera"]["camera_matrix"][0][0]
    tally = []
    for config in (None, {"pose": before, **NO_EDGES}, {"pose": before}):
        reading = read_image(image, None, truth["expected"]["colors"], config)
        out = compare(reading.to_json(), truth)
        f_off = abs(reading.pose.intrinsics.K[0, 0] / f_true - 1)
        tally.append((reading.pose.markers, f_off < 0.015, out["visible_sites"],
                      out["wrong"], out["unseen_visible"]))
    # ((1, 3), False, 46, 0, 8) before the empty site lost points on a plastic
    # footprint (sites.empty_plastic_weight). The third: from two markers, with the
    # other two's edges fitted where they put them (outline.refine_by_marker_edges),
    # f within 1.5% again
    assert tally == [((0, 1, 2, 3), True, 46, 0, 2), ((1, 3), False, 46, 1, 4),
                     ((1, 3), True, 46, 0, 3)]


def test_a_marker_the_first_look_misses_is_looked_for_again_unless_the_camera_is_still():
    # synth.py mounted seed 26: the first look (each cell sampled at 8 pixels) misses
    # marker 2, which a look at 4 pixels decodes (pose.retry's first entry, run
    # whenever a marker is missing). A camera being tracked whose markers lie where
    # its last pose puts them has not moved: its pose is kept, and that further look
    # (a pass over the whole frame) is skipped; moved by a bump, it looks again
    import dataclasses

    import cv2

    from companion.vision.pose import detect_markers
    from companion.vision.settings import section

    shot = shoot(26, "mounted")
    g = board_geometry()
    gray = cv2.cvtColor(shot.image, cv2.COLOR_BGR2GRAY)
    pose_cfg = section("pose")
    assert sorted(detect_markers(gray, g, {**pose_cfg, "retry_below": 0})) == [0, 1, 3]
    assert sorted(detect_markers(gray, g, pose_cfg)) == [0, 1, 2, 3]
    still = read_image(shot.image, None, shot.scene.colors).pose
    assert still.markers == (0, 1, 2, 3)
    assert sorted(detect_markers(gray, g, pose_cfg, still)) == [0, 1, 3]
    bumped = dataclasses.replace(still, tvec=still.tvec + np.array([[6.0], [0.0], [0.0]]))
    assert sorted(detect_markers(gray, g, pose_cfg, bumped)) == [0, 1, 2, 3]
    tracked = read_image(shot.image, None, shot.scene.colors, previous_pose=still)
    assert tracked.pose is still


def test_the_print_under_a_hard_shadow_edge_is_still_the_print():
    from companion.vision.sites import SiteReader

    reader = SiteReader(board_geometry())
    rng = np.random.default_rng(5)
    n = 24
    yy, xx = np.mgrid[0:n, 0:n]
    # a print: an outline and a few faint lines, with paper grain (lines darker than
    # print_split_ratio of the paper would be split from it instead: see the docstring)
    tmpl = 1.0 - 0.15 * ((xx % 8 < 2) | (yy == 3) | (yy == 20)) + rng.normal(0, 0.02, (n, n))
    shadow = np.where(xx + yy < 26, 0.45, 1.0)  # a hard edge across the site
    shaded = (tmpl * shadow).ravel()
    t = tmpl.ravel()
    assert reader._split_shadow_ncc(shaded, t) > 0.9
    # plastic with a shadow on it, or another pattern under it, is not the print
    flat = (np.full((n, n), 0.8) * shadow + rng.normal(0, 0.02, (n, n))).ravel()
    other = ((1.0 - 0.15 * (yy % 5 < 2)) * shadow).ravel()
    assert reader._split_shadow_ncc(flat, t) < 0.3
    assert reader._split_shadow_ncc(other, t) < 0.3
    # no shadow edge: nothing to split (the plain correlation decides)
    assert reader._split_shadow_ncc(t, t) == -1.0
    # synth.py phone seed 56 (cold lamp): Manhattan SW, Sydney W and Sao Paulo N,
    # empty, lie across towers' hard shadow edges; read empty. Sydney W is reported
    # unseen ("covered") without the split (4 visible sites unseen against 2). (Phone
    # seed 43's Cairo E was this case until the board's outline refined that photo's
    # pose from three markers: it then reads empty without the split too; so do
    # Manhattan SW and Sao Paulo N since the print check looks past the unseen sites'
    # guesses, sites.print_past_guesses: more of their footprints in view match the
    # print. Looked at as before, all three need the split)
    shot = shoot(56, kind="phone", light=LAMPS[56 % 3], colour_set=SETS[56 % 2])
    reading = read_image(shot.image, None, shot.scene.colors)
    before = read_image(shot.image, None, shot.scene.colors,
                        config={"sites": {"print_split_ncc": 9.0}})
    hidden = read_image(shot.image, None, shot.scene.colors,
                        config={"sites": {"print_split_ncc": 9.0, "print_past_guesses": False}})
    for site in (Site(0, 2, 0), Site(1, 1, 0), Site(4, 0, 1)):
        assert shot.scene.heights().get(site) is None and shot.visible[site] > 0.8
        assert site not in reading.unseen and site not in reading.sites
        assert site in hidden.unseen
        assert (site in before.unseen) == (site == Site(1, 1, 0))
    # [1, 4] before the close rule (sites.empty_doubt_margin, tower_doubt_margin)
    assert [compare(r.to_json(), truth_json(shot))["unseen_visible"]
            for r in (reading, before, hidden)] == [2, 4, 5]


def test_heights_a_steep_view_cannot_tell_are_unseen_with_the_guess_kept_apart():
    # seed 2, 78 degrees: a storey moves a top near the camera's foot by under 3 mm
    # (the profile's placement jitter; the numbers below are for 2 mm, the limit
    # until the twentieth session). Nine towers whose reading beat a tower one storey taller or
    # shorter by under 2 points go to unseen; 6 of the nine guesses were wrong (ten,
    # 6 wrong and 8 doubtful, before the board's outline refined the pose from three
    # markers, outline.*)
    shot = _shot(2)
    truth = shot.scene.heights()
    # (the close, bright-side and hidden-top rules off: their doubted towers are listed
    # unresolved too, here 2SW, a right 12-storey green, by sites.shared_hidden_lead;
    # and the empty site's plastic-footprint penalty, which reads a sixteenth tower
    # here: sites.empty_plastic_weight)
    open_ = {"empty_doubt_margin": 0.0, "tower_doubt_margin": 0.0, "storey_doubt_margin": 0.0,
             "bright_side_margin": None, "empty_plastic_weight": 0.0,
             "shared_hidden_lead": None}
    # (on the three markers' pose, as measured: see the test above)
    reading = read_image(shot.image, None, shot.scene.colors,
                         config={"sites": open_, **NO_EDGES})
    plain = read_image(shot.image, None, shot.scene.colors,
                       config={"sites": {"steep_storey_mm": 0.0, **open_}, **NO_EDGES})
    steep = reading.unresolved
    # fifteen, 10 of their guesses wrong, since the limit is the board profile's
    # placement jitter (3 mm; nine, 6 wrong, at 2 mm)
    assert len(steep) == 15 and plain.unresolved == {}
    assert sum(truth.get(s) == (v.height, v.owner) for s, v in steep.items()) == 5
    g = board_geometry()
    C = reading.pose.camera_centre
    by_site = {d.site: d for d in reading.details}
    for site, view in steep.items():
        assert site in reading.unseen and site not in reading.sites
        assert plain.sites[site] == view and by_site[site].reason == "steep"
        above = C[2] - view.height * g.storey
        shift = g.storey * float(np.hypot(*(g.site_xy[site.index] - C[:2]))) / above
        assert shift < 3.0
        assert any(abs(h - view.height) == 1 and by_site[site].score - sc < 2.0
                   for h, _, sc in by_site[site].rivals)
    assert reading.to_json()["unresolved"] == [
        {"city": s.city, "row": s.row, "col": s.col, "height": v.height, "owner": v.owner,
         "doubtful": s in plain.doubtful, "reason": "steep"} for s, v in sorted(steep.items())]
    assert sum(e["doubtful"] for e in reading.to_json()["unresolved"]) == 9  # 7 at 2 mm
    # the replay and the live table weigh the guesses: read back as the reader had
    # them before it told them apart (the narrow ones doubtful)
    back = reading.with_guesses()
    assert back.sites == plain.sites and back.unseen == plain.unseen
    assert back.doubtful == plain.doubtful and back.unresolved == {}


def test_sites_under_an_arm_are_not_read_empty_when_the_arm_blurs_the_print_template():
    # companion/sim phone photo with an arm across the board (labelled_set seed 21,
    # photo 26; four markers). Many of the sites read empty lie under the arm or its
    # shadow, so the median of the empty sites, the print template, came out flat
    # (contrast 0.044, a third of the 0.127 of the 15 of 32 that agree): used as it
    # is, the whole of Sao Paulo, out of view under the arm, a 7-storey and a 1-storey
    # tower among it, was read empty, and three visible empty sites that did not match it went to
    # unseen; with no print check 3 visible sites were wrong and 5 hidden ones read.
    # The sites that agree with each other (after a plane through each, so the arm's
    # shading ramps do not) give the template, whenever it has twice the median's
    # contrast: the towers read empty fail it and go to unseen as "covered". (Photo 7
    # was this case until the board's outline refined its pose from three markers:
    # its median's contrast, 0.029, is then under print_min_contrast, and the
    # agreeing sites' template is taken either way)
    from companion.sim.scenes import labelled_photo

    _, photo = labelled_photo(21, 26, "phone")
    assert len(photo.truth["hands"]) == 1

    def tally(config):
        reading = read_image(photo.image, None, photo.truth["expected"]["colors"], config)
        out = compare(reading.to_json(), photo.truth)
        return out["wrong"], out["unseen_visible"], out["hidden_read"], reading

    wrong, unseen, hidden_read, reading = tally(None)
    assert reading.pose.markers == (0, 1, 2, 3)
    # (1, 2, 1) before a narrow tower whose side is nearly as bright as its top went to
    # unseen (sites.bright_side_margin: 5W, a wrong one-storey green, 5NW, a hidden
    # site read, and 3SE and 5S, right ones; the same four in each read below); (0, 5,
    # 0) before the empty site lost points on a plastic footprint
    # (sites.empty_plastic_weight: 5W, a 5-storey black whose footprint shows plastic,
    # -0.61, is read as a one-storey green by 1.6, over the bright-side doubt's margin;
    # 5SW, covered before, is too close to call, its guess the right green 2)
    assert (wrong, unseen, hidden_read) == (1, 4, 0)
    reasons = {str(r.site): r.reason for r in reading.details if r.height is None
               and r.site.to_json() not in photo.truth["expected"]["unseen"]}
    assert reasons == {"3SW": "covered"}
    # (3, 0, 5) before a reading that beat a far different one by a hair went to
    # unseen (sites.empty_doubt_margin, tower_doubt_margin); (1, 4, 4) before 5W's
    # one-storey green (above)
    assert tally({"sites": {"print_check": False}})[:3] == (2, 3, 4)
    # the median itself as the template
    wrong, unseen, hidden_read, median = tally({"sites": {"print_agree_gain": 1e9}})
    assert (wrong, unseen, hidden_read) == (1, 7, 2)  # (0, 8, 2) before 5W's green
    board = {Site.from_json(e): e["height"] for e in photo.truth["board"]["sites"]}
    for site in (Site(4, 1, 1), Site(4, 2, 1)):  # 4C, 4S: towers under the arm
        assert board[site] > 0 and site in reading.unseen
        assert site not in median.unseen and site not in median.sites  # read empty


def test_an_empty_site_under_a_hard_shadow_is_read_by_the_print_hue():
    # mounted seed 2, cold lamp: two empty sites (Hong Kong W, Cairo S) lie
    # partly in a tower's hard shadow. In grey the lit and shaded parts are two
    # levels no print template matches, so the print check called them covered;
    # the print's hue pattern survives the shade, and they read empty. Nothing else
    # in the photo changes. (Mounted seed 12 under a white lamp, Hong Kong SE and
    # Sao Paulo SE, was this case until the board's outline refined its pose from
    # three markers: the split then takes both, without the hue)
    shot = _shot(2)
    # (on the three markers' pose, as measured: see the doubtful readings' test)
    now = read_image(shot.image, None, shot.scene.colors, NO_EDGES)
    def changed(config):
        other = read_image(shot.image, None, shot.scene.colors, {**config, **NO_EDGES})
        return {str(a.site): (a.height, b.height, b.reason)
                for a, b in zip(now.details, other.details, strict=True)
                if (a.height, a.color) != (b.height, b.color)}

    # without the hue, and without the two-level split of a hard shadow's edge
    grey = changed({"sites": {"print_chroma_ncc": 1.01, "print_split_ncc": 9.0}})
    assert grey == {"3W": (0, None, "covered"), "5S": (0, None, "covered")}
    heights = shot.scene.heights()
    assert not any(str(s) in grey for s in heights)  # both truly empty
    # the split alone takes Cairo S (sites.print_split_ncc), not Hong Kong W
    assert changed({"sites": {"print_chroma_ncc": 1.01}}) == {"3W": (0, None, "covered")}


def test_blue_tops_read_black_are_told_apart_by_their_own_group():
    # the ray-traced renderer's mounted frame 9216 (red, blue and black; a warm lamp,
    # a flat tone curve): its blue tops come out pale and lamp-tinted, and black,
    # re-centred on the photo's tops, fits each of them as well as blue does. Read one
    # top at a time, all seven blue towers are black; the photo's black tops fall into
    # two tight groups, one near the neutral point and one toward blue, which no
    # other top claims (sites.split_min_tops and the other split_ thresholds)
    from tests.vision.raycast import shoot as raycast_shoot

    image, truth = raycast_shoot(9216, "mounted")
    blue = [("0C", 5), ("1N", 6), ("1SE", 2), ("2SW", 2), ("3N", 7), ("4NW", 1), ("4SE", 7)]
    tally = []
    for config in (None, {"sites": {"split_min_tops": 0}}):
        reading = read_image(image, None, truth["expected"]["colors"], config)
        out = compare(reading.to_json(), truth)
        tops = sorted((site.code, view.height) for site, view in reading.sites.items()
                      if view.owner == "blue")
        tally.append((tops, out["visible_sites"], out["wrong"], out["unseen_visible"]))
    assert tally == [(blue, 46, 0, 6), ([], 46, 7, 6)]
