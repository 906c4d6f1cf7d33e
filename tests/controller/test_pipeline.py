"""The pipeline's reader adapter and camera view: doubtful sites reach the page's image."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import cv2
import numpy as np
import pytest

from companion import pipeline
from companion.pipeline import CameraView, Reading, VisionReader, _draw_board
from companion.profiles import load_profile
from companion.rules import Seat, Site, SiteView

DOUBT = Site(1, 1, 1)  # Sydney C
SITES = {DOUBT: SiteView(2, "red"), Site(4, 0, 2): SiteView(1, "blue")}


class FlatPose:
    """Board millimetres to pixels: 1.5 px/mm, towers lean up the image by 0.6 px/mm."""

    def project(self, pts: np.ndarray) -> np.ndarray:
        pts = np.asarray(pts, float)
        return np.stack([320 + 1.5 * pts[:, 0], 200 - 1.5 * pts[:, 1] - 0.6 * pts[:, 2]], 1)


def _outline(site: Site, height: int) -> np.ndarray:
    """The site's square at its tower's top in pixels, as _draw_board places it."""
    prof = load_profile()
    pitch, half = prof["sites"]["pitch_mm"], prof["blocks"]["footprint_mm"] / 2
    cx, cy = prof["cities"]["centres_mm"][site.city]
    x, y, z = cx + (site.col - 1) * pitch, cy + (1 - site.row) * pitch, 12.0 * height
    square = np.array([[x - half, y - half, z], [x + half, y - half, z],
                       [x + half, y + half, z], [x - half, y + half, z]])
    return FlatPose().project(square).astype(np.int32)


def _drawn(doubtful: list[Site]) -> np.ndarray:
    canvas = np.zeros((400, 640, 3), np.uint8)
    reading = Reading(dict(SITES), [Site(0, 0, 0)], {}, FlatPose(), doubtful=doubtful)
    _draw_board(canvas, FlatPose(), reading)
    return canvas


def _edge_midpoints(pts: np.ndarray) -> list[tuple[int, int]]:
    """(row, col) of the middle pixel of each edge of the outline."""
    return [(int((a[1] + b[1]) // 2), int((a[0] + b[0]) // 2))
            for a, b in zip(pts, np.roll(pts, -1, axis=0), strict=True)]


def test_a_doubtful_site_is_outlined_in_amber_and_nothing_else_changes() -> None:
    plain, marked = _drawn([]), _drawn([DOUBT])
    pts = _outline(DOUBT, 2)
    for r, c in _edge_midpoints(pts):
        b, g, red = (int(v) for v in plain[r, c])  # yellow, a little dimmed by anti-aliasing
        assert pipeline.READ_BGR == (0, 255, 255) and b == 0 and g == red >= 200
        assert tuple(marked[r, c]) == pipeline.DOUBTFUL_BGR == (0, 160, 255)
    rows, cols = np.nonzero(np.any(plain != marked, axis=2))
    assert len(rows) > 0
    # every changed pixel is on or inside that site's outline (the "?" is drawn inside)
    assert rows.min() >= pts[:, 1].min() - 2 and rows.max() <= pts[:, 1].max() + 2
    assert cols.min() >= pts[:, 0].min() - 2 and cols.max() <= pts[:, 0].max() + 2
    # inside the outline only the "?" is new: amber (anti-aliased), right of the centre
    top, left = pts[:, 1].min() + 3, pts[:, 0].min() + 3
    inside = (rows >= top) & (rows <= pts[:, 1].max() - 3) & (cols >= left) & \
        (cols <= pts[:, 0].max() - 3)
    mark = marked[rows[inside], cols[inside]].astype(int)
    assert len(mark) >= 15 and cols[inside].min() > pts[:, 0].mean()
    assert np.all(mark[:, 0] == 0) and np.all(np.abs(mark[:, 1] * 255 - mark[:, 2] * 160)
                                               <= 2 * 255)


def test_unseen_and_empty_sites_are_drawn_as_before() -> None:
    """A doubtful site that is also unseen (or unread) keeps the usual outline."""
    unseen, empty = Site(0, 0, 0), Site(5, 2, 2)
    plain = _drawn([])
    assert np.array_equal(_drawn([unseen, empty]), plain)
    r, c = _edge_midpoints(_outline(unseen, 0))[0]
    b, g, red = (int(v) for v in plain[r, c])
    assert b == g == 0 and red >= 200  # red: unseen
    r, c = _edge_midpoints(_outline(empty, 0))[0]
    assert len(set(plain[r, c].tolist())) == 1 and plain[r, c][0] >= 150  # grey: empty


def test_camera_view_jpeg_shows_the_amber_outline() -> None:
    view = CameraView()
    view.update(np.zeros((400, 640, 3), np.uint8),
                Reading(dict(SITES), [], {}, FlatPose(), doubtful=[DOUBT]))
    data = view()
    assert data is not None
    img = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    r, c = _edge_midpoints(_outline(DOUBT, 2))[0]
    # JPEG blurs colours a little: amber (B 0, G 160, R 255), not the read sites' yellow
    b, g, red = (int(v) for v in img[r, c])
    assert b < 60 and 120 < g < 200 and red > 200


def _fake_read_image(doubtful: bool) -> Any:
    def read_image(image: np.ndarray, **kw: Any) -> Any:
        r = SimpleNamespace(sites=dict(SITES), unseen=[Site(0, 0, 0)], cards={Seat.S: (1, 2)},
                            pose="pose", timings={"total": 1.0})
        if doubtful:
            r.doubtful = [DOUBT]
        return r
    return read_image


@pytest.mark.parametrize("has_field,expected", [(True, [DOUBT]), (False, [])])
def test_vision_reader_passes_the_doubtful_sites_on(monkeypatch: pytest.MonkeyPatch,
                                                    has_field: bool, expected: list[Site],
                                                    ) -> None:
    import companion.vision.reader as reader

    monkeypatch.setattr(reader, "read_image", _fake_read_image(has_field))
    out = VisionReader()(np.zeros((4, 4, 3), np.uint8))
    assert out.doubtful == expected
    assert out.sites == SITES and out.unseen == [Site(0, 0, 0)]
