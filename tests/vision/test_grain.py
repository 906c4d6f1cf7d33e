"""A grainy photo (a dim room, a small sensor) is smoothed before its sites are read.

Each strip sample is one pixel; with noise of about 10 of 255 a top looks
mottled and off its colour, and towers were read as empty sites (then
reported unseen, "covered", as the print check found no print there).
"""

from __future__ import annotations

import numpy as np
import pytest

from companion.sim import sample_photo
from companion.vision.evaluate import compare
from companion.vision.reader import read_image

NO_SMOOTHING = {"image": {"denoise_noise": 1.0}}


@pytest.fixture(scope="module")
def grainy():
    """A mounted frame (seed 1) with Gaussian noise of 10 grey levels added."""
    r = sample_photo(1, "mounted")
    rng = np.random.default_rng(1)
    noisy = np.clip(r.image + rng.normal(0, 10, r.image.shape), 0, 255).astype(np.uint8)
    return r, noisy


def _tally(reading, truth) -> tuple[int, int]:
    res = compare(reading.to_json(), truth)
    return res["wrong"], res["unseen_visible"]


def test_a_grainy_frame_is_read_nearly_as_the_clean_one(grainy) -> None:
    r, noisy = grainy
    cols = r.truth["expected"]["colors"]
    clean = read_image(r.image, r.truth["camera"], cols)
    smoothed = read_image(noisy, r.truth["camera"], cols)
    # (0, 2) while every top seen without its foot and scoring under 14 was unseen
    # (sites.foot_hidden_keep_score)
    assert _tally(clean, r.truth) == (0, 1)
    # (0, 1) before a reading that beat a far different one by a hair went to unseen
    # (sites.empty_doubt_margin, tower_doubt_margin): a right one here; (0, 2) before
    # a tower that beat the empty site by under half a point went to unseen
    # (sites.tower_empty_doubt_margin: a right one)
    assert _tally(smoothed, r.truth) == (0, 3)
    # the reading's white balance keeps the raw frame's noise (the new-block fit
    # compares raw frames), well above the smoothing threshold
    assert clean.wb.noise < 0.028 < smoothed.wb.noise


def test_unsmoothed_the_grain_hides_towers(grainy) -> None:
    r, noisy = grainy
    raw = read_image(noisy, r.truth["camera"], r.truth["expected"]["colors"], NO_SMOOTHING)
    # (1, 6) before the close rule, as above; (1, 7) before a storey more or less
    # within a point of the reading made it unseen (sites.storey_doubt_margin); (0, 9)
    # before a tower that beat the empty site by under half a point went to unseen
    # (sites.tower_empty_doubt_margin: a right one); (0, 10) before a site found hidden
    # behind a first reading that later changed was read again (sites.uncover_margin:
    # two right ones), (0, 8) before it was after the print check too (a right one);
    # (0, 7) before a top half in view past the silhouettes was read whatever its
    # sample lines showed (sites.exact_visible: a right one); (0, 6) before the empty
    # site lost points on a plastic footprint (sites.empty_plastic_weight: 2NE read
    # right, 0N a wrong black 3)
    assert _tally(raw, r.truth) == (1, 4)


def test_a_clean_frame_is_not_smoothed() -> None:
    # below the threshold the photo is read as it is: a smoothing threshold of 1
    # (never) reads it identically
    r = sample_photo(1, "mounted")
    cols = r.truth["expected"]["colors"]
    a = read_image(r.image, r.truth["camera"], cols)
    b = read_image(r.image, r.truth["camera"], cols, NO_SMOOTHING)
    assert a.sites == b.sites and a.unseen == b.unseen
    assert [d.score for d in a.details] == [d.score for d in b.details]
