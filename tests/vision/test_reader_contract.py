"""The reader's contract on rendered photos: pose, intrinsics, cards, the output
format and clean errors. (Per-site accuracy is measured by `companion evaluate`.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.rules import Seat
from companion.sim import sample_photo
from companion.vision.errors import BoardNotFoundError, ImageReadError
from companion.vision.geometry import board_geometry
from companion.vision.pose import detect_markers
from companion.vision.reader import read_image

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def photos():
    return {k: sample_photo(seed, k) for k, seed in (("mounted", 11), ("phone", 12))}


def test_markers_are_found_with_the_spec_ids(photos):
    for rendered in photos.values():
        found = detect_markers(rendered.image, board_geometry())
        assert sorted(found) == sorted(rendered.truth["markers_visible"])


@pytest.mark.parametrize("kind", ["mounted", "phone"])
def test_pose_and_estimated_intrinsics_match_the_camera(photos, kind):
    rendered = photos[kind]
    reading = read_image(rendered.image, colors=rendered.truth["board"]["colors"])
    true_f = rendered.camera.K[0, 0]
    assert abs(reading.pose.intrinsics.K[0, 0] - true_f) / true_f < 0.05
    centre = reading.pose.camera_centre
    truth_centre = np.asarray(rendered.truth["pose"]["centre_mm"], float)
    assert np.linalg.norm(centre - truth_centre) / np.linalg.norm(truth_centre) < 0.05


@pytest.mark.parametrize("kind", ["mounted", "phone"])
def test_cards_read_are_the_cards_on_the_stacks(photos, kind):
    # A card is never misread; a stack the reader is unsure of is left out (the
    # tracker then takes the card from the site). Recall is measured by evaluate.
    rendered = photos[kind]
    reading = read_image(rendered.image, colors=rendered.truth["board"]["colors"])
    expected = {Seat(s): tuple(c["cell"]) for s, c in rendered.truth["expected"]["cards"].items()}
    assert reading.cards and all(expected.get(seat) == cell
                                 for seat, cell in reading.cards.items())
    if kind == "mounted":
        assert reading.cards == expected


def test_two_markers_suffice(photos):
    rendered = photos["mounted"]
    image = rendered.image.copy()
    geometry = board_geometry()
    found = detect_markers(image, geometry)
    for mid in sorted(found)[:2]:  # hide two markers under paper
        pts = found[mid].astype(np.int32)
        cv2.fillConvexPoly(image, cv2.convexHull(pts), (200, 200, 200))
    assert len(detect_markers(image, geometry)) == len(found) - 2
    reading = read_image(image, colors=rendered.truth["board"]["colors"])
    assert len(reading.pose.markers) == len(found) - 2


def test_no_board_is_a_clean_error(tmp_path, capsys):
    blank = np.full((720, 1280, 3), 120, np.uint8)
    with pytest.raises(BoardNotFoundError):
        read_image(blank)
    # the command names the photo once (it was "PHOTO: no board markers found in PHOTO")
    path = tmp_path / "table.png"
    cv2.imwrite(str(path), blank)
    from companion.cli import main

    assert main(["read", str(path)]) == 1
    assert capsys.readouterr().err.strip() == (
        f"companion read: no board markers found in {path}")


def test_read_command_output_and_errors(tmp_path, photos):
    path = tmp_path / "photo.jpg"
    cv2.imwrite(str(path), photos["phone"].image)
    bad = tmp_path / "notes.jpg"
    bad.write_text("not a photo")
    proc = subprocess.run([sys.executable, "-m", "companion", "read", str(path), str(bad),
                           "--json"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    [line] = proc.stdout.splitlines()
    data = json.loads(line)
    assert data["format"] == "manhattan-board/1"
    assert set(data) >= {"sites", "unseen", "cards", "colors"}
    assert all(set(s) == {"city", "row", "col", "height", "owner"} for s in data["sites"])
    assert proc.stderr.strip() == f"companion read: {bad}: not an image (or an unsupported format)"


def test_a_marker_missed_at_full_size_is_found_where_the_pose_puts_it():
    # a small, steeply seen marker (id 2) that does not decode at 1600x1200
    rendered = sample_photo(20, "phone")
    g = board_geometry()
    first = detect_markers(rendered.image, g)
    assert sorted(first) == [0, 1, 3] and 2 in rendered.truth["markers_visible"]
    reading = read_image(rendered.image)
    assert reading.pose.markers == (0, 1, 2, 3)
    truth = rendered.camera.project(g.marker_corners(2))
    assert np.abs(reading.pose.project(g.marker_corners(2)) - truth).max() < 1.5
    # without the second look the pose comes from three markers, which the board's
    # outline then refines (outline.below_markers_estimated: the intrinsics are
    # estimated): (wrong, unseen) (3, 5) with the second look against (4, 3) without;
    # with the fitted k1 (0.022 and 0.024; the lens: k1 0.061, k2 -0.026) kept,
    # (3, 2) against (3, 3). It is not kept, since a k1 must bring the corners' error
    # to intrinsics.k1_gain of the fit without it (docs/vision-errors.md). From the
    # markers alone, before the outline: (3, 5) against (2, 3), and (3, 2) against
    # (2, 4), the one case measured where the second look cost
    plain = read_image(rendered.image, config={"pose": {"find_missing": False}})
    assert plain.pose.markers == (0, 1, 3)
    from companion.vision.evaluate import compare

    def tally(r):
        c = compare(r.to_json(), rendered.truth)
        return c["wrong"], c["unseen_visible"]

    # ((3, 5), (4, 3) before a reading that beat a far different one by a hair went to
    # unseen: sites.empty_doubt_margin, tower_doubt_margin; a right one here);
    # ((3, 6), (4, 3)) while the steep-view limit was the profile's jitter, not a third
    # more (sites.steep_jitter_factor: a height a storey off unresolved in each);
    # ((2, 7), (3, 4)) before a storey more or less within a point of the reading
    # made it unseen (sites.storey_doubt_margin: two wrong and one right in the first);
    # ((0, 10), (2, 7)) while every top seen without its foot and scoring under 14
    # was unseen (sites.foot_hidden_keep_score: a right one here); ((0, 10), (2, 6))
    # before a tower that beat the empty site by under half a point went to unseen
    # (sites.tower_empty_doubt_margin: a right one); ((0, 10), (2, 7)) before a narrow
    # tower whose side is nearly as bright as its top went to unseen
    # (sites.bright_side_margin: 0E and 3NE, right black towers, in the first);
    # ((0, 12), (2, 7)) before a site found hidden behind a first reading that later
    # changed was read again (sites.uncover_margin: two right ones in the first);
    # ((0, 10), (2, 7)) before the empty site lost points on a plastic footprint
    # (sites.empty_plastic_weight: a right one in each)
    assert (tally(reading), tally(plain)) == ((0, 9), (2, 6))
    k1 = {"intrinsics": {"k1_gain": 1.0}}
    # (3, 2) at the jitter; (3, 3) before sites.storey_doubt_margin
    assert tally(read_image(rendered.image, config=k1)) == (0, 9)
    # (from the markers alone (2, 4); (2, 5) before a lone tower the print check
    # refutes the empty site for was read: sites.covered_tower_margin; (3, 3) before
    # the close rule; (2, 5) at the profile's jitter, not a third more; (1, 6) before
    # sites.storey_doubt_margin; (1, 8) before a site found hidden behind a first
    # reading that later changed was read again: sites.uncover_margin, two right ones)
    alone = {**k1, "pose": {"find_missing": False}, "marker_edges": {"enabled": False}}
    assert tally(read_image(rendered.image, config=alone)) == (1, 6)
    # the missed marker's edges, found where the three others' pose puts them, mend
    # most of it without the finer look (outline.refine_by_marker_edges)
    assert tally(read_image(rendered.image, config={**k1, "pose": {"find_missing": False}})) == (
        0, 8)


def test_a_covered_marker_is_not_invented():
    rendered = sample_photo(20, "phone")
    g = board_geometry()
    found = detect_markers(rendered.image, g)
    reading = read_image(rendered.image)
    image = rendered.image.copy()
    corners = reading.pose.project(g.marker_corners(2))
    hull = cv2.convexHull(corners.astype(np.float32)).astype(np.int32)
    cv2.fillConvexPoly(image, hull, (90, 80, 70))  # a hand over marker 2
    from companion.vision.pose import find_missing
    assert find_missing(image, found, reading.pose, g) == {}
    assert sorted(find_missing(rendered.image, found, reading.pose, g)) == [2]


def test_a_read_through_a_distorting_lens_warns_of_nothing():
    # labelled_set seed 21 photo 13, mounted, read with its camera file (a distorting
    # lens): strip samples near the camera plane went to ~1e50 px and overflowed
    # float32 on the way to cv2.remap, printing a RuntimeWarning on every read
    import warnings

    from companion.vision.geometry import Intrinsics

    rendered = sample_photo([21, 13], "mounted", colors="classic", tall=False, hands=0)
    camera = Intrinsics.from_json(rendered.truth["camera"])
    assert np.any(camera.dist != 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        reading = read_image(rendered.image, camera, rendered.truth["expected"]["colors"])
    assert reading.pose.markers == (0, 1, 2, 3)


def test_a_greyscale_photo_is_a_clean_error(tmp_path, photos):
    grey = cv2.cvtColor(photos["phone"].image, cv2.COLOR_BGR2GRAY)
    with pytest.raises(ImageReadError, match="greyscale"):
        read_image(cv2.cvtColor(grey, cv2.COLOR_GRAY2BGR), source="grey.png")
    path = tmp_path / "grey.png"
    cv2.imwrite(str(path), grey)
    proc = subprocess.run([sys.executable, "-m", "companion", "read", str(path), "--json"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.strip() == (f"companion read: {path}: a greyscale photo (the block "
                                   "colours cannot be told apart)")


@pytest.mark.parametrize("colors, message", [
    ([], "no colours in play named"), (["red", "blue", "red"], "colour 'red' named twice")])
def test_colours_in_play_are_named_once_each(photos, colors, message):
    with pytest.raises(ValueError, match=message):
        read_image(photos["phone"].image, None, colors)


@pytest.mark.parametrize("text, message", [
    ("red,red", "argument --colors: colour 'red' named twice"),
    (" , ", "argument --colors: no colour named in ' , ' (e.g. red,blue,green,black)")])
def test_the_read_command_refuses_a_bad_colour_list(tmp_path, photos, text, message):
    path = tmp_path / "photo.jpg"
    cv2.imwrite(str(path), photos["phone"].image)
    proc = subprocess.run([sys.executable, "-m", "companion", "read", str(path), "--colors",
                           text, "--json"], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.strip().splitlines()[-1] == f"companion read: error: {message}"


def test_colour_names_are_read_in_any_case(photos):
    from companion.cli import colour_list

    assert colour_list("Red, BLUE,green ,black") == ["red", "blue", "green", "black"]
