"""The empty-site print is the lit print, not a larger cluster of shaded tower faces.

Raycast phone 1001 (41 degrees, a warm lamp behind the towers): the
footprints of ten sites, most of them under orange towers whose faces the
camera sees in shadow, share one dark warm colour; seven empty sites show
the lit print. The densest footprint cluster was the faces: the print model
then took tower feet for print, and nearly every tower read as an empty site.
"""

from __future__ import annotations

import numpy as np

from companion.vision.colours import ColourModel
from companion.vision.geometry import board_geometry
from companion.vision.sites import fit_site_print

# footprint medians (features: chroma, chroma, log intensity) as that photo showed them
FACES = [[0.37, 0.12, -1.56], [0.44, 0.12, -1.64], [0.41, 0.13, -1.65], [0.44, 0.14, -1.64],
         [0.46, 0.14, -1.48], [0.44, 0.14, -1.64], [0.35, 0.14, -1.63], [0.44, 0.14, -1.65],
         [0.40, 0.14, -1.59], [0.42, 0.11, -1.67]]
PRINT = [[0.03, -0.02, 0.01], [0.03, -0.02, 0.02], [0.04, -0.03, -0.01], [0.02, -0.01, 0.00],
         [0.01, 0.01, -0.02], [0.01, -0.01, 0.00], [0.02, -0.02, -0.01]]


def _model() -> ColourModel:
    return ColourModel.for_colours(board_geometry(), ["orange", "yellow", "blue"])


def test_the_lit_print_wins_over_more_shaded_faces():
    feats = np.array(FACES + PRINT)
    model = _model()
    densest = fit_site_print(feats, model, min_block_d2=4.0)
    assert densest is not None and densest.mean[2] < -1.5  # the faces, as before
    found = fit_site_print(feats, model, min_block_d2=4.0, brighter_log=0.7)
    assert found is not None
    assert np.allclose(found.mean, [0.02, -0.02, 0.0], atol=0.015)


def test_a_darker_cluster_does_not_displace_the_print():
    # the print is the densest: a smaller darker cluster (its shadowed sites) stays out
    feats = np.array(PRINT + PRINT[:3] + FACES[:4])
    found = fit_site_print(feats, _model(), min_block_d2=4.0, brighter_log=0.7)
    assert found is not None and abs(found.mean[2]) < 0.05


def test_a_cluster_only_a_little_brighter_does_not_displace_the_densest():
    dim = (np.array(PRINT) + [0.0, 0.0, -0.5]).tolist()  # the print half a log step darker
    feats = np.array(dim + dim[:3] + PRINT[:4])
    found = fit_site_print(feats, _model(), min_block_d2=4.0, brighter_log=0.7)
    assert found is not None and abs(found.mean[2] + 0.5) < 0.05


def test_too_few_bright_sites_do_not_count():
    feats = np.array(FACES + PRINT[:2])
    found = fit_site_print(feats, _model(), min_block_d2=4.0, brighter_log=0.7)
    assert found is not None and found.mean[2] < -1.5
