"""cv2.remap refuses a map side of 32767 or more: the samplers lay their points out
within it, so a finer print grid or many points read instead of failing."""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np
import pytest

from companion.sim import sample_photo
from companion.vision.colours import sample_bilinear
from companion.vision.reader import read_image


@cache
def _frame() -> Any:
    return sample_photo(12, "mounted")


def test_many_points_are_sampled_in_parts() -> None:
    rng = np.random.default_rng(0)
    image = rng.integers(0, 256, (90, 120, 3)).astype(np.float32)
    # one column of 70,000 rows failed; at whole and half pixels remap's quantised
    # weights are exact
    pts = rng.integers(0, 88, (70000, 2)) + rng.choice([0.0, 0.5], (70000, 2))
    got = sample_bilinear(image, pts)
    assert got.shape == (70000, 3)
    # bilinear by hand at a few of them
    for k in (0, 32765, 32766, 32767, 69999):
        x, y = pts[k]
        x0, y0 = int(x), int(y)
        fx, fy = x - x0, y - y0
        patch = image[y0:y0 + 2, x0:x0 + 2].astype(np.float64)
        want = ((1 - fy) * ((1 - fx) * patch[0, 0] + fx * patch[0, 1])
                + fy * ((1 - fx) * patch[1, 0] + fx * patch[1, 1]))
        assert np.allclose(got[k], want, atol=1e-3), k


def test_a_print_grid_past_one_rows_limit_reads() -> None:
    # 54 sites x 26 x 26 samples in one row was past remap's limit (an OpenCV
    # assertion in the middle of a read); a site a row is not
    photo = sample_photo(10, "mounted")
    colors = photo.truth["expected"]["colors"]
    fine = read_image(photo.image, None, colors, {"sites": {"print_grid": 26}})
    shipped = read_image(photo.image, None, colors)
    # this frame reads the same at either grid: 16 towers, the same 18 sites unseen
    # (17 before the print check looked past the unseen sites' guesses)
    assert len(fine.sites) == 16 and len(fine.unseen) == 18
    assert fine.sites == shipped.sites and sorted(fine.unseen) == sorted(shipped.unseen)


def _ranged() -> list[tuple[str, str, float]]:
    from companion.vision.settings import default_config

    return [(section, key, bound) for section, values in default_config().items()
            if isinstance(values, dict)
            for key, bounds in values.get("_ranges", {}).items() for bound in bounds]


@pytest.mark.parametrize(("section", "key", "value"), _ranged())
def test_every_ranged_key_reads_at_both_ends(section: str, key: str, value: float) -> None:
    # the ranges `--config` is held to (the sizes of arrays, a division, threads hang
    # on those keys): at either end a frame is still read, not refused mid-read
    # (sharpness.trigger_px under reference_px took the root of a negative number)
    photo = _frame()
    reading = read_image(photo.image, None, photo.truth["expected"]["colors"],
                         {section: {key: value}})
    assert len(reading.unseen) < 54
