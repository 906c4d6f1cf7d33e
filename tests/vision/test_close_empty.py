"""A reading that beat a far different one by a hair is reported unseen ("close").

On the raycast frames half the empty readings that won by under one point over
a tower were towers, and two in five of the towers that won by under one point
over a tower two storeys off or of another colour were wrong; reported, they
are wrong sites, unseen they are only unseen ones (the goals weigh a wrong site
as four unseen). sites.empty_doubt_margin, sites.tower_doubt_margin. A tower that
beat the empty site by under half a point is doubted too (on 26 sets of four
renderers a third of those were phantoms, hidden sites or the wrong tower):
sites.tower_empty_doubt_margin; an empty site whose footprint looks like the board
is not (70 of 76 were empty): sites.empty_doubt_board.
"""

from __future__ import annotations

from companion.rules.board import Site
from companion.sim.scenes import labelled_photo
from companion.vision.evaluate import compare
from companion.vision.geometry import board_geometry
from companion.vision.reader import read_image
from companion.vision.sites import SiteReader, SiteResult

# the print learnt from every site read empty (sites.print_template_margin null):
# learnt from the surely empty ones, the print check itself refutes the tower below
EVERY = {"sites": {"print_template_margin": None}}
OFF = {"sites": {"empty_doubt_margin": 0.0, "print_template_margin": None}}


def _result(height: int | None, margin: float, rival: int, reason: str = "",
            rival_colour: str = "blue", foot_board: float = -1.0) -> SiteResult:
    r = SiteResult(Site(0, 0, 0), height, "blue" if height else None, 10.0, margin,
                   foot_board=foot_board)
    r.rivals = [(rival, rival_colour if rival else None, 10.0 - margin)]
    r.reason = reason
    return r


def test_only_a_narrow_win_over_a_far_different_reading_is_doubted() -> None:
    reader = SiteReader(board_geometry())
    cases = [_result(0, 0.4, 3),  # empty, a 3-storey tower 0.4 behind: doubted
             _result(0, 1.0, 3),  # won by the margin itself: kept
             _result(0, 0.4, 3, foot_board=0.0),  # its footprint like the board: kept
             _result(2, 0.1, 0),  # a tower that beat the empty site by a hair: doubted
             _result(2, 0.5, 0),  # by sites.tower_empty_doubt_margin itself: kept
             _result(5, 0.3, 7),  # a blue 5 over a blue 7: doubted
             _result(5, 0.3, 6),  # over a storey more, by under a point: doubted
             _result(5, 1.0, 4),  # over a storey less, by the margin itself: kept
             _result(5, 0.3, 6, rival_colour="red"),  # a storey more in red: doubted
             _result(5, 1.2, 9),  # won clearly: kept
             _result(None, 0.1, 2, "covered")]  # already unseen: its reason kept
    reader._doubt_close_readings(cases)
    # a doubted tower keeps its reading as the guess (listed unresolved); an empty
    # site has none
    assert [(r.height, r.color, r.reason) for r in cases] == [
        (None, None, "close"), (0, None, ""), (0, None, ""), (2, "blue", "close"),
        (2, "blue", ""),
        (5, "blue", "close"),
        (5, "blue", "close"), (5, "blue", ""), (5, "blue", "close"), (5, "blue", ""),
        (None, None, "covered")]
    off = SiteReader(board_geometry(), {"empty_doubt_margin": 0.0, "tower_doubt_margin": 0.0,
                                        "storey_doubt_margin": 0.0,
                                        "tower_empty_doubt_margin": None})
    cases = [_result(0, 0.4, 3), _result(5, 0.3, 7), _result(5, 0.3, 6), _result(2, 0.1, 0)]
    off._doubt_close_readings(cases)
    assert [(r.height, r.reason) for r in cases] == [(0, ""), (5, ""), (5, ""), (2, "")]
    always = SiteReader(board_geometry(), {"empty_doubt_board": None})
    cases = [_result(0, 0.4, 3, foot_board=0.9)]
    always._doubt_close_readings(cases)
    assert [(r.height, r.reason) for r in cases] == [(None, "close")]


def test_a_doubted_tower_is_unseen_with_its_guess_kept_apart() -> None:
    # companion/sim phone seed 21 photo 0 at 1600x1200: 5E, a green 2, beats a blue
    # 26 (a farther tower's phantom) by 0.15
    from companion.sim import sample_photo
    from companion.vision.reader import json_with_guesses

    rendered = sample_photo(21, "phone")
    reading = read_image(rendered.image)
    site = Site.parse("5E")
    detail = next(d for d in reading.details if d.site == site)
    assert detail.reason == "close" and detail.rivals[0][:2] == (26, "blue")
    assert site in reading.unseen and site not in reading.sites
    assert reading.unresolved[site].height == 2 and reading.unresolved[site].owner == "green"
    entry = next(e for e in reading.to_json()["unresolved"] if Site.from_json(e) == site)
    assert (entry["height"], entry["owner"], entry["doubtful"], entry["reason"]) == (
        2, "green", True, "close")
    # the replay and the live table weigh the guess as a doubtful reading
    guessed = reading.with_guesses()
    assert guessed.sites[site].height == 2 and site not in guessed.unseen
    assert site in guessed.doubtful
    assert json_with_guesses(reading.to_json())["doubtful"].count(site.to_json()) == 1


def test_a_black_tower_the_empty_site_beat_by_a_hair_is_unseen() -> None:
    # companion/sim mounted seed 21 photo 11, read with its camera file: 1W is a black
    # 3-storey tower whose evidence the empty site explains a little better
    _, r = labelled_photo(21, 11, "mounted")
    camera, colors = r.truth["camera"], r.truth["expected"]["colors"]
    site = Site.parse("1W")
    assert next(e for e in r.truth["expected"]["sites"]
                if Site.from_json(e) == site)[("height")] == 3
    # (the print check's closer match for an empty site won by a hair off:
    # sites.print_close_margin also sends this one to unseen, "covered"; and the empty
    # site's plastic-footprint penalty, sites.empty_plastic_weight, which leaves the
    # two too close to call)
    # All on the pose from the three markers alone: fitted with marker 2's edges too
    # (outline.refine_by_marker_edges), 1W is seen from nearly above, as the steep
    # view's limit has it: unseen, "steep"
    narrow = {"print_close_margin": 0.0, "empty_plastic_weight": 0.0}
    alone = {"marker_edges": {"enabled": False}}
    shipped = read_image(r.image, camera, colors,
                         {"sites": {**EVERY["sites"], **narrow}, **alone})
    off = read_image(r.image, camera, colors, {"sites": {**OFF["sites"], **narrow}, **alone})
    detail = next(d for d in shipped.details if d.site == site)
    assert detail.reason == "close" and site in shipped.unseen
    now = read_image(r.image, camera, colors, alone)
    edged = read_image(r.image, camera, colors)
    assert edged.pose.markers == now.pose.markers and len(now.pose.markers) == 3
    assert next(d for d in edged.details if d.site == site).reason == "steep"
    # ("covered" before the empty site lost points on a plastic footprint: now the two
    # are too close to call, sites.empty_plastic_weight)
    assert next(d for d in now.details if d.site == site).reason == "close"
    assert off.sites.get(site) is None and site not in off.unseen  # read empty: wrong
    a, b = compare(shipped.to_json(), r.truth), compare(off.to_json(), r.truth)
    assert (a["wrong"], a["unseen_visible"]) == (b["wrong"] - 1, b["unseen_visible"] + 1)
