"""Replay photos from a camera that stayed put: each new block fitted to what changed.

A phone on a stand, or the companion's own camera saving a still per move,
photographs the table from one place. Two such photos in a row line up pixel
for pixel, so the block built between them is all that changed, as on the
live table (:mod:`companion.vision.newblock`): its storeys and colour are
fitted to the change on the tower the earlier photo showed, instead of being
read from one photo, where a tower one storey taller with its top a few
millimetres nearer looks the same. Photos taken from a hand (the camera
moved more than ``bump_px``) are left as read.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from companion.replay import Observation
from companion.rules import Site, SiteView
from companion.rules.board import MAX_STOREYS

if TYPE_CHECKING:
    from companion.vision.sitechange import SiteChange

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PhotoPose:
    """Where a photo was read from: its file, the pose and white balance found."""

    path: str
    pose: Any  # companion.vision.geometry.Pose
    wb: Any = None  # companion.vision.colours.WhiteBalance
    #: the reader's scores per site: (height, colour) -> score (Reading.hypotheses)
    hypotheses: Mapping[Site, Mapping[tuple[int, str], float]] | None = None


@dataclass
class StillsReport:
    pairs: int = 0  # consecutive photos from one camera position
    fitted: int = 0  # builds whose reading the fit replaced
    kept: int = 0  # builds whose reading the fit confirmed


def fit_fixed_camera(observations: Sequence[Observation],
                     poses: Sequence[PhotoPose | None], colors: Sequence[str], *,
                     load: Callable[[str], np.ndarray] | None = None,
                     config: Mapping[str, Any] | None = None,
                     bump_px: float = 3.0) -> tuple[list[Observation], StillsReport]:
    """The observations with each build between two still photos fitted to the change.

    ``poses[i]`` belongs to ``observations[i]`` (None: not known, left as read).
    Only the one site whose pixels clearly changed is fitted, on the tower the
    earlier photo read there; photos with several changes (one photo per
    round), from a moved camera or with colours unknown are left as read.
    """
    from companion.controller import pose_shift_px
    from companion.vision.colours import ColourModel
    from companion.vision.geometry import board_geometry
    from companion.vision.reader import load_image, working_view
    from companion.vision.settings import merged_config

    cfg = merged_config(config)
    change = cfg["change"]
    nb = cfg["new_block"]
    still = float(change["unchanged_score"])  # a site changing less looks as before
    max_side = int(cfg.get("image", {}).get("max_side_px", 0))
    load = load or load_image
    out = list(observations)
    report = StillsReport()
    if len(out) < 2:
        return out, report
    model = None
    if colors:
        try:
            model = ColourModel.for_colours(board_geometry(), list(colors))
        except (KeyError, ValueError) as exc:
            log.info("new blocks not fitted: %s", exc)
    cache: dict[str, tuple[np.ndarray, Any]] = {}

    def work(pp: PhotoPose) -> tuple[np.ndarray, Any]:
        """The photo at the reader's working size, decoded and shrunk once."""
        if pp.path not in cache:
            if len(cache) > 1:  # two photos at a time: phone photos are large
                cache.clear()
            cache[pp.path] = working_view(load(pp.path), pp.pose, max_side)
        return cache[pp.path]

    for i in range(1, len(out)):
        a, b = poses[i - 1], poses[i]
        if a is None or b is None or a.pose is None or b.pose is None \
                or a.pose.intrinsics.size != b.pose.intrinsics.size \
                or pose_shift_px(a.pose, b.pose) > bump_px:
            continue
        try:
            before, _ = work(a)
            after, wpose = work(b)
        except ValueError as exc:
            log.info("%s and %s not compared: %s", a.path, b.path, exc)
            continue
        if before.shape != after.shape:
            continue
        report.pairs += 1
        site, scores = _changed_site(out[i - 1], out[i], before, after, wpose, change)
        # one camera repeats one misread in every photo: what did not change is no
        # new evidence for the replay, which counts photos as independent views
        out[i] = replace(out[i], unchanged=frozenset(c.site for c in scores if c.score < still))
        if site is None or model is None:
            continue
        fitted = _fit(out[i - 1], out[i], site, before, after, wpose, b.wb, colors, model, nb,
                      (b.hypotheses or {}).get(site))
        if fitted is None:
            continue
        view, doubtful, replaced, steep_split = fitted
        report.fitted += int(replaced)
        report.kept += int(not replaced)
        o = out[i]
        sites = dict(o.sites)
        sites[site] = view
        marks = (set(o.doubtful) | {site}) if doubtful or steep_split \
            else (set(o.doubtful) - {site})
        # a sure fit is also evidence about the move itself (the replay weighs it):
        # the block seen built, which a misread tower under it does not change
        under = out[i - 1].sites.get(site)
        grown = view.height - (under.height if under is not None else 0)
        build = (site, grown, view.owner) if not doubtful and 1 <= grown <= MAX_STOREYS \
            and view.owner is not None else None
        out[i] = replace(o, sites=sites, unseen=o.unseen - {site}, doubtful=frozenset(marks),
                         build=build, tops={k: v for k, v in o.tops.items() if k != site})
    return out, report


def _changed_site(prev: Observation, cur: Observation, before: np.ndarray,
                  after: np.ndarray, pose: Any, change: Mapping[str, Any],
                  ) -> tuple[Site | None, list[SiteChange]]:
    """The one site that changed between two still photos, found as the live table
    finds it (None for none, several, a lamp or a bump), and every site's change."""
    from companion.vision.sitechange import focus, site_change_scores

    heights = {s: v.height for s, v in prev.sites.items()}
    scores = site_change_scores(before, after, pose, heights)
    found = focus(scores, lambda c: cur.sites.get(c) != prev.sites.get(c), change)
    return found.site, scores


def _fit(prev: Observation, cur: Observation, site: Site, before: np.ndarray,
         after: np.ndarray, pose: Any, wb: Any, colors: Sequence[str], model: Any,
         nb: Mapping[str, Any], weighed: Mapping[tuple[int, str], float] | None = None,
         ) -> tuple[SiteView, bool, bool, bool] | None:
    """The tower at ``site`` after the build, whether it is doubtful, whether the
    fit replaced the reading, and whether a steep view splits the fit and the
    reading (:func:`~companion.vision.newblock.split`: marked for the players, the
    fit still weighed); None when the tower before is unknown or nothing fits."""
    from companion.vision.newblock import fit_new_block, settle, steep_site, steep_split, weighs

    if site in prev.unseen:
        return None  # what the block stands on is not known
    heights = {s: v.height for s, v in prev.sites.items()}
    base = heights.get(site, 0)
    try:
        fit = fit_new_block(before, after, pose, site, base, list(colors), model,
                            towers=heights, wb=wb, config=nb)
    except ValueError as exc:
        log.info("new block at %s not fitted: %s", site.name, exc)
        return None
    if fit is None:
        return None
    # a sure fit is evidence the replay weighs (a doubtful one is not): sure from
    # 'weighed_doubt' points, as chosen for it
    view, doubts, decided = settle(fit, cur.sites.get(site), base, nb, weighed,
                                   sure=float(nb["weighed_doubt"]))
    # where a steep view splits the fit and the reading the players are asked, but
    # the fit still counts: taken as no evidence it cost more right moves on the
    # ray-traced stands than marking them (docs/vision-errors.md, seventy-second session)
    split = steep_split(fit, weighed, base, view, steep_site(pose, site, base, nb), nb)
    if weighed and weighs(nb):
        return view, doubts, decided, split  # the reading's margin is weighed in already
    # the reading's own narrow margin counts where the reading stands
    return view, doubts or (site in cur.doubtful and not decided), decided, split
