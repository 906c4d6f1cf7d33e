"""The reader on photos of the third renderer (``raycast.py``).

That renderer was written from the spec alone, sharing nothing with the
project's other two: rays cast per sub-pixel through a distorted lens (k1 and
k2), light in linear units with shadow rays and glossy plastic, board art of
its own (rivers, tinted cities, parks), tablecloths, spare blocks and a mug
beside the board, and a camera's white balance, exposure, tone curve and JPEG.
The bounds are the errors measured when this test was written (a regression
fails); docs/vision-errors.md says what they are made of.
"""

from __future__ import annotations

import numpy as np
import pytest

from companion.vision.evaluate import compare
from companion.vision.reader import read_image
from tests.vision.raycast import shoot

#: name: (kind, seed). mounted-14: a lamp's glare on the far half of the board turns
#: black tops beige and red ones pink (most of its errors); mounted-11: four markers,
#: felt cloth; phone-18: wood table; phone-13: k1 -0.11 with k2 0.06, 74 degrees
CASES: dict[str, tuple[str, int]] = {
    "mounted-14": ("mounted", 14),
    "mounted-11": ("mounted", 11),
    "phone-18": ("phone", 18),
    "phone-13": ("phone", 13),
}

#: measured (wrong, visible reported unseen, hidden sites read other than they are)
MEASURED: dict[str, tuple[int, int, int]] = {
    # (14, 10, 1) before an empty reading of another colour than the print went to
    # unseen (sites.print_colour_offset): tests/vision/test_covered_towers.py; the
    # bound stood at (11, 12, 1) until it was measured again after the glare and
    # close rules: (3, 12, 0), (3, 13, 0) since sites.steep_storey_mm is the profile's
    # placement jitter (3 mm, not 2); (3, 14, 0) since the print is learnt from the
    # sure empty sites (sites.print_template_margin; test_covered_towers.py);
    # (3, 21, 0) since the steep-view limit is a third more than that jitter
    # (sites.steep_jitter_factor: seven right heights at 3-4 mm a storey unresolved)
    "mounted-14": (3, 21, 0),
    # (0, 2, 0) while sites.steep_storey_mm was 2 mm, (0, 3, 0) at the jitter (3 mm);
    # (0, 6, 0) before a storey more or less within a point of the reading made it
    # unseen (sites.storey_doubt_margin)
    "mounted-11": (0, 7, 0),
    "phone-18": (0, 1, 0),  # (0, 0, 0) at the jitter, not a third more
    # (4, 8, 0) before sites.steep_storey_mm; (3, 7, 0) while it was 2 mm (the bound
    # stood at (3, 9, 0)); (2, 10, 0) at the jitter, not a third more; (2, 11, 0)
    # before sites.storey_doubt_margin; (2, 12, 0) before a tower that beat the empty
    # site by under half a point went to unseen (sites.tower_empty_doubt_margin);
    # (1, 13, 0) before the empty site lost points on a plastic footprint
    # (sites.empty_plastic_weight; measured (3, 10, 0): 0SE and 4N read right, 0W and
    # 3N wrong blue towers, under this lens's distortion)
    "phone-13": (3, 13, 0),
}


@pytest.fixture(scope="module")
def readings() -> dict[str, tuple[object, dict, dict[str, int]]]:
    out = {}
    for name, (kind, seed) in CASES.items():
        image, truth = shoot(seed, kind)
        reading = read_image(image, None, truth["expected"]["colors"])
        out[name] = (reading, truth, compare(reading.to_json(), truth))
    return out


@pytest.mark.parametrize("name", list(CASES))
def test_reading_errors_stay_within_the_measured_bounds(readings, name: str) -> None:
    _, _, t = readings[name]
    wrong, unseen, hidden_read = MEASURED[name]
    assert t["visible_sites"] >= 44
    assert t["wrong"] <= wrong and t["unseen_visible"] <= unseen
    assert t["hidden_read"] <= hidden_read
    # every card whose grids are in view is read, and read right
    assert t["cards_expected"] == 4
    assert (t["cards_missed"], t["cards_wrong"], t["cards_extra"]) == (0, 0, 0)


def test_a_lens_term_the_markers_cannot_tell_from_the_focal_length_is_left_out(
        readings) -> None:
    # mounted-14 sees three markers, all about as far from the photo's centre: a fitted
    # k1 of -0.106 (the lens: k1 -0.016, k2 0.018) gave f = 773 px for 967, and the
    # camera 208 mm off; the fit without k1 (reprojection 0.94 px against 0.83) is kept
    reading, truth, _ = readings["mounted-14"]
    f_true = truth["camera"]["camera_matrix"][0][0]
    assert reading.pose.intrinsics.dist[0] == 0.0
    assert abs(reading.pose.intrinsics.K[0, 0] / f_true - 1) < 0.06
    centre = np.array(truth["meta"]["camera_position_mm"])
    assert np.linalg.norm(reading.pose.camera_centre - centre) < 60
    # with four markers spread over the frame the camera comes out within a few mm
    reading, truth, _ = readings["mounted-11"]
    centre = np.array(truth["meta"]["camera_position_mm"])
    assert np.linalg.norm(reading.pose.camera_centre - centre) < 5
