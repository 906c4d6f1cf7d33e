"""Which site changed between two still frames, from the pixels themselves.

A reading of the whole board can misread a site now and then; the move is
where the image changed. Each site's tower volume (its footprint from the
table up to a little above the taller of its old and new heights) is
projected into both frames and the mean difference inside it scores the site.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from companion.profiles import load_profile
from companion.rules import Site
from companion.vision.geometry import pixel_hull

#: Work on half-size images: plenty for a 26 mm block at a metre.
SCALE = 0.5


@dataclass(frozen=True)
class SiteChange:
    site: Site
    score: float  # mean absolute colour difference inside the site's projected volume


def _small(image: np.ndarray) -> np.ndarray:
    small = cv2.resize(image, None, fx=SCALE, fy=SCALE, interpolation=cv2.INTER_AREA)
    return cv2.GaussianBlur(small, (3, 3), 0)


def _difference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Mean absolute difference over the colour channels.

    Not of grey images: a red block on a blue tower (or on a dark print) can
    have nearly the grey of what it covers, and would not show at all.
    """
    diff = cv2.absdiff(a, b)
    if diff.ndim == 2:
        return diff.astype(np.float32)
    out: np.ndarray = diff.astype(np.float32).mean(axis=2)
    return out


def site_change_scores(before: np.ndarray, after: np.ndarray, pose: Any,
                       heights: Mapping[Site, int], *, headroom_storeys: int = 4,
                       profile: dict[str, Any] | None = None) -> list[SiteChange]:
    """Every site's change score, highest first. ``heights`` are the towers
    before the move (storeys); a new block adds at most ``headroom_storeys``."""
    prof = profile or load_profile()
    pitch = float(prof["sites"]["pitch_mm"])
    half = float(prof["blocks"]["footprint_mm"]) / 2 + 2.0
    storey = float(prof["blocks"]["storey_mm"])
    a, b = _small(before), _small(after)
    if a.shape != b.shape:
        raise ValueError("the two frames differ in size")
    diff = _difference(a, b)
    h, w = diff.shape
    out = []
    for index in range(54):
        site = Site.from_index(index)
        cx, cy = prof["cities"]["centres_mm"][site.city]
        x, y = cx + (site.col - 1) * pitch, cy + (1 - site.row) * pitch
        base = storey * heights.get(site, 0)  # a new block can only be above the old top
        top = base + storey * headroom_storeys
        corners = np.array([[x + dx, y + dy, z] for z in (base, top)
                            for dx in (-half, half) for dy in (-half, half)])
        pts = pose.project(corners) * SCALE
        if not np.all(np.isfinite(pts)):
            continue
        hull = pixel_hull(pts.astype(np.float32), (h, w), truncate=True)
        if hull is None:
            continue
        x0, y0 = np.maximum(hull.reshape(-1, 2).min(axis=0), 0)
        x1, y1 = np.minimum(hull.reshape(-1, 2).max(axis=0) + 1, (w, h))
        if x1 <= x0 or y1 <= y0:
            continue
        mask = np.zeros((y1 - y0, x1 - x0), np.uint8)
        cv2.fillConvexPoly(mask, hull - np.array([x0, y0], np.int32), 1)
        n = int(mask.sum())
        if n == 0:
            continue
        score = float((diff[y0:y1, x0:x1] * mask).sum()) / n
        out.append(SiteChange(site, score))
    out.sort(key=lambda c: -c.score)
    return out


def changed_site(scores: list[SiteChange], *, threshold: float = 6.0, ratio: float = 0.55
                 ) -> tuple[Site | None, list[Site]]:
    """The one site that clearly changed, or (None, candidates) when none or several did.

    Neighbours of the changed site pick up some difference (the new block's
    shadow, a taller silhouette in front of them), so a second site counts as
    changed only when it scores near the first and is not its neighbour.
    """
    if not scores or scores[0].score < threshold:
        return None, []
    top = scores[0]
    rivals = [c.site for c in scores[1:]
              if c.score >= max(threshold, ratio * top.score) and not near(c.site, top.site)]
    if rivals:
        return None, [top.site, *rivals]
    return top.site, [top.site]


def near(a: Site, b: Site) -> bool:
    """Next to each other in one city (diagonals too), or the same site."""
    return a.city == b.city and abs(a.row - b.row) <= 1 and abs(a.col - b.col) <= 1


def clusters(sites: list[Site]) -> list[set[Site]]:
    """``sites`` grouped by neighbourhood (next to each other in a city, diagonals
    too): one thing over several sites changes a group of them at once."""
    out: list[set[Site]] = []
    for site in sites:
        joined = [group for group in out if any(near(site, other) for other in group)]
        merged = {site}.union(*joined)
        out = [group for group in out if group not in joined] + [merged]
    return out


@dataclass(frozen=True)
class Focus:
    """Where a still scene changed since the last one, as the move is looked for."""

    bumped: bool  # many sites changed: a bumped camera or a lamp, nothing lines up
    pixel_site: Site | None  # the one site whose pixels clearly changed
    site: Site | None  # the one site that changed, the reading settling near ties
    candidates: list[Site]  # the sites the reading chooses among (several: reported)


def focus(scores: list[SiteChange], differs: Callable[[Site], bool],
          config: Mapping[str, Any], grew: Callable[[Site], bool] | None = None) -> Focus:
    """The site that changed, from the change scores and where the reading differs.

    A tall tower's new top also covers the sites behind it in the image: among
    the sites whose pixels changed most, the one whose reading differs from
    before is the one that grew. When none of them differs, a site next to them
    that changed less but clearly and reads taller than before (``grew``; None:
    none is looked for) is. ``config``: the ``change`` section.
    """
    if sum(1 for c in scores if c.score >= config["focus_bump_score"]) \
            > config["focus_bump_sites"]:
        return Focus(True, None, None, [])
    site, candidates = changed_site(scores, threshold=config["focus_clear_score"],
                                    ratio=config["focus_rival_ratio"])
    pixel_site = site
    if scores and scores[0].score >= config["focus_clear_score"]:
        near_top = [c.site for c in scores[:int(config["focus_near_top"])]
                    if c.score >= config["focus_near_ratio"] * scores[0].score]
        differing = [c for c in near_top if differs(c)]
        if not differing and grew is not None:
            # the sites that changed most read as before: a new top beside them covers
            # them in the photo, and the site it stands on changes less (only the new
            # top is new there: a 4-storey block on a 4-storey tower scored 8.6 against
            # the 18.2 of the site behind it). A site next to them that changed
            # clearly and reads taller than before is the one that grew (not one that
            # reads lower: a block knocked off it)
            differing = [c.site for c in scores[:int(config["focus_near_top"])]
                         if c.score >= config["focus_clear_score"]
                         and c.site not in near_top and grew(c.site)
                         and any(near(c.site, t) for t in near_top)]
        if len(differing) == 1:
            site, candidates = differing[0], differing
        elif site is None and differing:
            candidates = differing
    return Focus(False, pixel_site, site, candidates)
