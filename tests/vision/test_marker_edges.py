"""Marker corners from the marker's edges, not the detector's corner search.

A lens blurs in linear light and the camera's tone curve comes after it: across
a blurred edge of black on white, the grey halfway between the two then lies
on the black side, and a threshold's contour and a saddle-point corner search
both put the corners inside the square. pose.refine_corners_by_edges finds the
outer edges along their length and corrects their lean by the black border's
inner edge, which leans the other way.
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from companion.vision.geometry import board_geometry
from companion.vision.pose import _marker_cells, detect_markers, refine_corners_by_edges

#: where the marker's outer corners lie in the photo (TL, TR, BR, BL), a tilted view
TRUE = np.array([[212.3, 140.6], [281.9, 151.2], [276.4, 214.8], [205.1, 206.3]])


def _photo(gamma: float, blur_px: float, marker_id: int = 2) -> np.ndarray:
    """A marker on white paper, drawn 8x oversampled, blurred in linear light, then
    tone-mapped by ``gamma`` (1: no tone curve)."""
    d = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50)
    art = cv2.aruco.generateImageMarker(d, marker_id, 600)
    paper = np.full((1000, 1000), 255, np.uint8)
    paper[200:800, 200:800] = art  # the quiet zone: a third of the marker around it
    ss = 8
    # the art's edges lie half a pixel outside its first and last pixels' centres
    src = np.array([[199.5, 199.5], [799.5, 199.5], [799.5, 799.5], [199.5, 799.5]], np.float32)
    H = cv2.getPerspectiveTransform(src, (TRUE * ss).astype(np.float32))
    big = cv2.warpPerspective(paper, H, (480 * ss, 360 * ss), flags=cv2.INTER_AREA,
                              borderValue=255)
    # pixel centres at integer coordinates: an 8x8 block averages to its centre
    lin = cv2.resize(big.astype(np.float32) / 255.0, (480, 360), interpolation=cv2.INTER_AREA)
    shift = (ss - 1) / (2 * ss)
    lin = cv2.warpAffine(lin, np.float32([[1, 0, shift], [0, 1, shift]]),
                         (480, 360), borderValue=1.0)
    lin = 0.04 + 0.9 * cv2.GaussianBlur(lin, (0, 0), blur_px)
    grey = np.clip(255.0 * np.power(lin, 1.0 / gamma), 0, 255).astype(np.uint8)
    return grey


def _outward(found: np.ndarray) -> float:
    """Mean distance (px) the corners lie outside the true ones, along the diagonals."""
    centre = TRUE.mean(axis=0)
    radial = (TRUE - centre) / np.linalg.norm(TRUE - centre, axis=1, keepdims=True)
    return float(np.mean(np.sum((found - TRUE) * radial, axis=1)))


@pytest.mark.parametrize("gamma,blur", [(2.2, 1.2), (2.2, 0.7), (1.0, 1.2)])
def test_the_corners_lie_on_the_true_edges_whatever_the_tone_curve(gamma: float,
                                                                  blur: float) -> None:
    grey = _photo(gamma, blur)
    g = board_geometry()
    found = detect_markers(grey, g)[2]
    refined = refine_corners_by_edges(grey, found, _marker_cells(g.marker_dictionary, 2))
    # the detector's own corners sit 0.4-1.1 px inside the square (-1.07 with the tone
    # curve and the wider blur); these 0.07-0.17 px
    assert _outward(found) < -0.35
    assert np.max(np.linalg.norm(refined - TRUE, axis=1)) < 0.25
    assert abs(_outward(refined)) < 0.2
    # the shipped reader asks for it in its config
    assert np.allclose(detect_markers(grey, g, {"edge_refine": True})[2], refined)


def test_a_marker_too_faint_to_trust_keeps_the_detectors_corners() -> None:
    grey = _photo(2.2, 1.2)
    g = board_geometry()
    found = detect_markers(grey, g)[2]
    faint = refine_corners_by_edges(grey, found, _marker_cells(g.marker_dictionary, 2),
                                    {"edge_min_contrast": 300.0})
    assert np.array_equal(faint, found)
    # a marker at the photo's edge (its quiet zone cut off) keeps them too
    cut = found - np.array([found[:, 0].min() - 2.0, 0.0])
    assert np.array_equal(refine_corners_by_edges(grey, cut, _marker_cells(
        g.marker_dictionary, 2)), cut)


def test_the_cells_are_the_dictionarys() -> None:
    cells = _marker_cells("DICT_4X4_50", 2)
    assert cells.shape == (6, 6)
    # the border is black all round; the data cells are the marker's bits
    assert not cells[0].any() and not cells[-1].any()
    assert not cells[:, 0].any() and not cells[:, -1].any()
    d = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50)
    bits = cv2.aruco.Dictionary.getBitsFromByteList(d.bytesList[2:3], 4)
    assert np.array_equal(cells[1:5, 1:5], np.asarray(bits).reshape(4, 4) > 0)
