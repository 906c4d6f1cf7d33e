"""A phone's wide lens, without a camera file: the field of view is estimated up to 130 deg.

The estimate was bounded at 110 degrees; a wider photo (an ultra-wide phone
lens, or a board in the middle of a large frame) fell back to the 65-degree
prior and was read with a wrong camera. Two markers' fit leans on that prior
now, but only near it: a lens they tell far from typical keeps its own f.
"""

from __future__ import annotations

import numpy as np
import pytest

from companion.vision.evaluate import compare
from companion.vision.reader import read_image
from tests.vision.synth import shoot, truth_json


@pytest.fixture(scope="module")
def wide():
    """synth phone photo (seed 5, 73.9 deg across) in the middle of a frame twice its
    size: the same camera with a 112.8 deg field of view."""
    shot = shoot(5, kind="phone", light="cold", colour_set="2017")
    h, w = shot.image.shape[:2]
    frame = np.full((2 * h, 2 * w, 3), 90, np.uint8)
    frame[h // 2:h // 2 + h, w // 2:w // 2 + w] = shot.image
    return shot, frame


def _hfov(reading, width: int) -> float:
    return float(2 * np.degrees(np.arctan(width / 2 / reading.pose.intrinsics.K[0, 0])))


def test_a_wide_field_of_view_is_estimated(wide) -> None:
    shot, frame = wide
    reading = read_image(frame, None, shot.scene.colors)
    assert _hfov(reading, frame.shape[1]) == pytest.approx(112.8, abs=2.0)
    res = compare(reading.to_json(), truth_json(shot))
    # (1, 7) before the board's outline refined the pose of its three markers; (0, 6)
    # before a reading that beat a far different one by a hair went to unseen
    # (sites.empty_doubt_margin, tower_doubt_margin); (0, 7) at 112.8 degrees before
    # two markers' focal length leaned on a typical camera's (112.97 now:
    # intrinsics.focal_prior_px, whose pull fades beyond focal_prior_scale); (0, 8)
    # before the empty site lost points on a plastic footprint
    # (sites.empty_plastic_weight)
    assert (res["wrong"], res["unseen_visible"]) == (0, 7)


def test_bounded_at_95_degrees_it_falls_back_to_the_prior(wide) -> None:
    shot, frame = wide
    # the prior's 65 degrees, which the board's outline (two markers here) refines
    # to 65.7: far from the camera's 112.8 still. The bound was 110 degrees until the
    # two markers' focal length leaned on a typical camera's (intrinsics.focal_prior_px):
    # from the prior's start their fit now stops at 99 degrees, within 110, and the
    # outline takes it to 113
    reading = read_image(frame, None, shot.scene.colors, {"intrinsics": {"max_hfov_deg": 95}})
    assert _hfov(reading, frame.shape[1]) == pytest.approx(65.70, abs=0.01)
    res = compare(reading.to_json(), truth_json(shot))
    # at 110 degrees, before the focal prior: (11, 13) from the markers alone, before
    # the outline; (13, 9) before an empty reading of another colour than the print
    # went to unseen (sites.print_colour_offset); (15, 11) while the print was learnt
    # from every site read empty, not the sure ones (sites.print_template_margin);
    # (15, 12) before a storey more or less within a point of the reading made it
    # unseen (sites.storey_doubt_margin); (15, 13) before a footprint too hidden for
    # the print's pattern was checked for the print's colour
    # (sites.print_colour_min_visible: a purple 3 read empty is covered, so is an
    # empty site under this wrong camera); (14, 15) while every top seen without its
    # foot and scoring under 14 was unseen (sites.foot_hidden_keep_score: under this
    # wrong camera 4N, a blue 3, is read as a blue 8); (15, 14) at 66.9 degrees;
    # (11, 18) before a narrow tower whose side is nearly as bright as its top went to
    # unseen (sites.bright_side_margin: a wrong one); (10, 19) before the empty site
    # lost points on a plastic footprint (sites.empty_plastic_weight; the field of
    # view 47 degrees short); (13, 16) before the print check looked past the unseen
    # sites' guesses (sites.print_past_guesses: a tower read empty is covered)
    assert (res["wrong"], res["unseen_visible"]) == (12, 17)
