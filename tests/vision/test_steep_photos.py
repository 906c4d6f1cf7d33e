"""A photo taken from steeper than the board profile advises is read with a warning:
from above, a storey more or less barely moves a tower's top."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import cv2
import pytest

from companion.sim import sample_photo
from companion.vision.geometry import good_elevation, intrinsics_for_fov, look_at_pose
from companion.vision.reader import read_paths, steep_warning

STEEP = ("taken from steeper than 70 degrees above the table: from there a storey more or "
         "less barely moves a tower's top, so many heights are left unseen or read a storey "
         "off; photos from 50-65 degrees read them")


def _at(elevation: float) -> Any:
    intr = intrinsics_for_fov((1280, 720), 65.0)
    return SimpleNamespace(pose=look_at_pose(intr, 900.0, elevation, 30.0))


def test_the_band_is_the_board_profiles() -> None:
    assert good_elevation() == ((45.0, 70.0), (50.0, 65.0))
    assert steep_warning(_at(70.5)) == STEEP
    assert steep_warning(_at(69.5)) is None
    # a low view hides sites behind tall towers, but reads the rest as well as any
    # (40-50 degrees: 0.5% wrong on the 26 sets): no warning
    assert steep_warning(_at(40.0)) is None


# companion.sim mounted frames seen from 75.2 and 66.0 degrees (the camera's centre over
# the board's); the reader estimates 73.7 and 66.3
@pytest.mark.parametrize("seed, steep", [(10, True), (12, False)])
def test_a_read_says_it(tmp_path: Path, seed: int, steep: bool) -> None:
    photo = sample_photo(seed, "mounted")
    path = tmp_path / f"mounted_{seed}.png"
    cv2.imwrite(str(path), photo.image)
    (out,) = read_paths([path], colors=photo.truth["expected"]["colors"])
    assert out["warnings"] == ([{"reason": "steep", "message": STEEP}] if steep else [])
