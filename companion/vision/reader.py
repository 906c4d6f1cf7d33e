"""Read a photo of the board: pose, every site's height and top colour, played cards.

``read_image`` returns rules-engine values (``Site`` -> ``SiteView``) plus the
sites it could not see and each seat's top card; ``Reading.to_json`` is the
``companion read`` object of formats.md. ``read_paths`` is the command-line
entry: every bad input ends in a one-line ``ValueError`` subclass.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from companion.heif import HeifError, decode_heif, is_heif
from companion.imagefiles import (
    BadImageError,
    TruncatedImageError,
    check_complete,
    damage_of,
    damage_warning,
    decoder_messages,
    image_kind,
    image_size,
    jpeg_size,
    opencv_silent,
)
from companion.inputfiles import input_size
from companion.rules import jsonkeys
from companion.rules.board import BOARD_FORMAT, Site, SiteView
from companion.rules.topology import Seat
from companion.vision.cards import read_cards
from companion.vision.colours import (
    REFERENCE_WHITE,
    ColourModel,
    WhiteBalance,
    estimate_white_balance,
    fit_gains,
    fit_tone,
    resolve_colour,
    toned_model,
)
from companion.vision.errors import (
    BoardNotFoundError,
    CameraFileError,
    ImageReadError,
    MirroredError,
    TooSmallError,
)
from companion.vision.geometry import (
    BoardGeometry,
    FloatArray,
    Intrinsics,
    Pose,
    board_geometry,
    good_elevation,
    steep_storey_limit,
    storey_shift_mm,
)
from companion.vision.outline import EdgeFit, edge_rms, refine_by_marker_edges, refine_pose
from companion.vision.pose import (
    Markers,
    detect_markers,
    estimate_intrinsics,
    find_missing,
    focal_prior,
    gross_outlier,
    marker_residuals,
    repair_bent_corner,
    solve_pose,
)
from companion.vision.settings import merged_config
from companion.vision.sharpness import deblur, estimate_blur, noise_to_signal_for
from companion.vision.sites import SiteReader, SiteResult, covered_tower_lead


@dataclass
class Reading:
    """What one photo shows."""

    sites: dict[Site, SiteView]
    unseen: list[Site]
    cards: dict[Seat, tuple[int, int]]
    pose: Pose
    colors: list[str]
    timings: dict[str, float] = field(default_factory=dict)
    details: list[SiteResult] = field(default_factory=list, repr=False)
    model: ColourModel | None = field(default=None, repr=False)
    #: sites read whose reading won by less than ``sites.doubt_margin``: about half
    #: the wrong readings are among them, so they are worth a look (an unresolved
    #: height's guess among them too: the JSON flags it there, not in ``doubtful``)
    doubtful: list[Site] = field(default_factory=list)
    #: the white balance the photo was read with (the live table's new-block fit reuses it)
    wb: WhiteBalance | None = field(default=None, repr=False)
    #: the tone exponent the colours were read under (1.0: the nominal colours)
    tone: float = 1.0
    #: the raised black taken off the photo, as a share of the marker paper (0: none)
    lift: float = 0.0
    #: the photo's blur across the markers' edges (Gaussian sigma, working pixels)
    blur: float | None = None
    #: towers this view cannot tell the height of (seen from nearly above, a storey
    #: moves the top no more than a block may stand off its site), or cannot tell
    #: from a far different reading or a storey more or less (won by a hair:
    #: "close"), or one-storey towers of a colour read more often than the colour
    #: has one-storey blocks ("supply"), or whose footprint looks like the board
    #: ("board"), or won narrowly with a side face as bright as the top ("side"):
    #: in ``unseen``,
    #: with the reader's best guess here for tools that weigh it against other
    #: evidence (the replay and the live table, which know a block went there)
    unresolved: dict[Site, SiteView] = field(default_factory=dict)
    #: the red and blue gains (relative to green) of the cast the colours were read
    #: under: one the markers' white balance left on the plastic ((1, 1): none)
    gains: tuple[float, float] = (1.0, 1.0)
    #: covered sites (in ``unseen``) whose best tower beat every other by far, the
    #: empty site having won by a hair: the tower the covered-tower rescue would
    #: have read but for its arm rule (``sites.covered_tower_lead``). The replay
    #: weighs it as a doubtful reading; a single photo does not report it.
    covered_guesses: dict[Site, SiteView] = field(default_factory=dict)
    #: the colour set (a board profile ``colour_sets`` name) the photo's tops vote for
    #: when read with every colour of every set, checked against the colours named
    #: (``read_image``'s ``check_colours``); None when not asked, when the colours
    #: named cannot tell (none, of no one set, or of every set), or when fewer towers
    #: than ``colour_check.min_towers`` voted
    colours_shown: str | None = None
    #: how many pixels across a site's footprint shows (the median over the 54 sites;
    #: :func:`site_pixels`): under ``image.small_site_px`` a reading is worth a warning
    site_px: float | None = None
    #: the photo was mirrored (a front camera's, saved as previewed) and was read
    #: flipped back: the sites and cards are the board's as it stands
    mirrored: bool = False

    def _rename(self) -> dict[str, str]:
        """The model's class names -> the colour names reported (a set may rename)."""
        return dict(zip(self.model.names, self.colors, strict=False)) if self.model else {}

    def hypotheses(self) -> dict[Site, dict[tuple[int, str], float]]:
        """Per site the reader read a height at (a guess included), its score for
        that reading and for its best rivals: (height, colour) -> score, the empty
        site as (0, ""). The live table and the replay weigh them against the fit
        of a block just built (:func:`companion.vision.newblock.settle`)."""
        rename = self._rename()
        out: dict[Site, dict[tuple[int, str], float]] = {}
        for r in self.details:
            if r.height is None:
                continue  # covered or hidden: no reading to weigh
            scores = {(r.height, rename.get(r.color, r.color) if r.color else ""): r.score}
            for h, c, v in r.rivals:
                scores.setdefault((h, rename.get(c, c) if c else ""), v)
            out[r.site] = scores
        return out

    def covered_tops(self) -> dict[Site, str]:
        """The top colour of each site left unseen as covered (no print where the scorer
        read an empty site) whose best towers agree on it: their height is anyone's
        guess, their colour is not (on the 22 raycast sets that colour is the
        truth's at 402 of 455 such sites with a tower). The replay weighs it against
        the tops of its hypotheses."""
        rename = self._rename()
        out: dict[Site, str] = {}
        for r in self.details:
            if r.reason != "covered" or r.tower is None:
                continue
            colour = r.tower[1]
            towers = [c for h, c, _ in r.rivals if h > 0][:3]
            if towers and all(c == colour for c in towers):
                out[r.site] = rename.get(colour, colour)
        return out

    def to_json(self) -> dict[str, Any]:
        """The formats.md ``companion read`` object (manhattan-board/1 without blocks)."""
        sites = [{**s.to_json(), "height": v.height, "owner": v.owner}
                 for s, v in sorted(self.sites.items())]
        why = {d.site: d.reason for d in self.details}
        return {
            "format": BOARD_FORMAT,
            "colors": list(self.colors),
            "sites": sites,
            "unseen": [s.to_json() for s in sorted(self.unseen)],
            "cards": {seat.value: {"cell": [rc[0], rc[1]]}
                      for seat, rc in sorted(self.cards.items(), key=lambda kv: "SWNE".index(
                          kv[0].value))},
            "doubtful": [s.to_json() for s in sorted(self.doubtful)
                         if s not in self.unresolved],
            # reason: why the guess is kept apart (steep, close, supply, board)
            "unresolved": [{**s.to_json(), "height": v.height, "owner": v.owner,
                            "doubtful": s in self.doubtful,
                            **({"reason": why[s]} if why.get(s) else {})}
                           for s, v in sorted(self.unresolved.items())],
        }

    def with_guesses(self) -> Reading:
        """This reading with the unresolved heights' best guesses read as sites (as the
        reader had them before it told them apart: the narrow ones doubtful)."""
        if not self.unresolved:
            return self
        return replace(self, sites={**self.sites, **self.unresolved},
                       unseen=[s for s in self.unseen if s not in self.unresolved],
                       unresolved={})


def json_with_guesses(reading: Mapping[str, Any]) -> dict[str, Any]:
    """:meth:`Reading.with_guesses` on a ``companion read`` object (the replay gets
    its readings as JSON from worker processes): each ``unresolved`` guess read as
    a site, out of ``unseen``, in ``doubtful`` when it won narrowly."""
    entries = reading.get("unresolved", [])
    if not entries:
        return dict(reading)
    where = ("city", "row", "col")
    keys = {tuple(e[k] for k in where) for e in entries}
    return {**reading,
            "sites": [*reading.get("sites", []),
                      *({k: e[k] for k in (*where, "height", "owner")} for e in entries)],
            "unseen": [u for u in reading.get("unseen", [])
                       if tuple(u[k] for k in where) not in keys],
            "doubtful": [*reading.get("doubtful", []),
                         *({k: e[k] for k in where} for e in entries if e.get("doubtful"))],
            "unresolved": []}


def _intrinsics(camera: Intrinsics | Mapping[str, Any] | str | Path | None,
                size: tuple[int, int]) -> Intrinsics | None:
    if camera is None:
        return None
    if isinstance(camera, Intrinsics):
        intr = camera
    else:
        try:
            intr = Intrinsics.from_json(dict(camera) if isinstance(camera, Mapping) else camera)
        except (OSError, ValueError) as exc:  # json.JSONDecodeError is a ValueError
            raise CameraFileError(f"camera file {camera}: {exc}") from None
    try:
        return intr.scaled_to(size)
    except ValueError as exc:  # a picture of another shape than the camera's
        raise CameraFileError(str(exc)) from None


def _colour_sets(g: BoardGeometry) -> dict[str, dict[str, str]]:
    return {k: dict(v) for k, v in g.colour_sets.items()}


def read_image(image_bgr: np.ndarray, camera: Intrinsics | Mapping[str, Any] | str | Path | None
               = None, colors: Sequence[str] | ColourModel | None = None,
               config: Mapping[str, Any] | None = None, previous_pose: Pose | None = None,
               geometry: BoardGeometry | None = None, source: str = "image",
               height_range: Mapping[Site, tuple[int, int]] | None = None,
               check_colours: bool = False, mirrored: bool = True,
               find_centre: bool = True) -> Reading:
    """Read one BGR photo.

    ``camera``: intrinsics (object, formats.md JSON dict, or file); without
    one they are estimated from the markers. ``colors``: names in play
    (``["red", "blue", "green", "black"]``) or a calibrated ``ColourModel``;
    without them the colour set is recognised from the photo.
    ``previous_pose``: the last pose when tracking a fixed camera.
    ``height_range``: the lowest and highest height a site can have (tracking a
    game from its record: a tower never shrinks, and one move adds 1-4 storeys).
    ``check_colours``: with colours named, also find which colour set the tops
    show (:attr:`Reading.colours_shown`): the colours named are the only ones a
    top is compared with, so a wrong set reads quietly (one more scoring of the
    sites, about a quarter of a read; the live table knows its colours).
    ``mirrored``: a photo whose markers decode only when it is flipped left to
    right (a front camera's, saved as previewed) is read flipped back
    (:attr:`Reading.mirrored`); False: refused (:class:`MirroredError`): a live
    camera's frames are also compared unflipped by the motion gate and the new
    block's fit, so its mirror is set right at the camera instead. A camera file
    is the camera's own, as calibrated on pictures the right way round.
    ``find_centre``: a photo of no camera's shape read without a camera file is
    read again with its lens's centre looked for (:func:`_find_centre`, about 25
    reads); False: not (a live camera's frames are the sensor's, never cropped on
    one side, and a still scene must be decided in half a second).
    """
    cfg = merged_config(config)
    g = geometry or board_geometry()
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    if image_bgr is None or image_bgr.ndim != 3 or image_bgr.shape[2] != 3:
        raise ImageReadError(f"{source}: not a colour image")
    if min(image_bgr.shape[:2]) < MIN_PHOTO_SIDE:
        # a marker needs tens of pixels; OpenCV's resize asserts on a 1 x N picture
        raise ImageReadError(f"{source}: too small to show a board ({image_bgr.shape[1]} x "
                             f"{image_bgr.shape[0]} pixels)")
    gray = cv2.cvtColor(image_bgr, cv2.COLOR_BGR2GRAY)
    markers = detect_markers(gray, g, cfg.get("pose"), previous_pose)
    flipped = False
    if not markers:
        # a mirrored picture's markers do not decode (no board marker mirrored is
        # within a bit of any code of the dictionary): one marker found shows the
        # picture the right way round (one and the tracked pose are read as ever),
        # and a flipped look finds none in such a picture
        gray_flipped = np.ascontiguousarray(gray[:, ::-1])
        found = detect_markers(gray_flipped, g, cfg.get("pose"))
        if len(found) >= 2:
            if not mirrored:
                raise MirroredError(f"{source}: the picture is mirrored (the board's markers "
                                    "read only flipped back): turn the camera's mirror off")
            image_bgr = np.ascontiguousarray(image_bgr[:, ::-1])
            gray, markers, flipped = gray_flipped, found, True
    timings["markers"] = time.perf_counter() - t0
    if not markers:
        raise BoardNotFoundError(f"no board markers found in {source}")
    if _greyscale(image_bgr):
        # read anyway it would show every tower as unseen or empty: say why instead
        raise ImageReadError(f"{source}: a greyscale photo (the block colours cannot be "
                             "told apart)")
    reading, view = _read_located(image_bgr, gray, markers, camera, colors, cfg, g,
                                  previous_pose, source, height_range, check_colours, timings,
                                  t0)
    reading.mirrored = flipped
    if (find_centre and camera is None and previous_pose is None
            and cfg["image"]["centre_price"] is not None
            and _looks_cropped(view.pose.intrinsics, cfg)):
        t = time.perf_counter()
        site_px = reading.site_px
        reading = _find_centre(reading, image_bgr, gray, markers, colors, cfg, g, source,
                               height_range, check_colours)
        reading.timings["centre_search"] = time.perf_counter() - t
        reading.site_px, reading.mirrored = site_px, flipped
    return reading


def _read_located(image_bgr: np.ndarray, gray: np.ndarray, markers: Markers,
                  camera: Intrinsics | Mapping[str, Any] | str | Path | None,
                  colors: Sequence[str] | ColourModel | None, cfg: Mapping[str, Any],
                  g: BoardGeometry, previous_pose: Pose | None, source: str,
                  height_range: Mapping[Site, tuple[int, int]] | None, check_colours: bool,
                  timings: dict[str, float], t0: float) -> tuple[Reading, _View]:
    """:func:`read_image` once the markers are found: the pose, the sites, the colour
    check and the cards (the centre search reads a photo again from here, its markers
    found once)."""
    t = time.perf_counter()
    view = _locate(image_bgr, gray, markers, camera, g, cfg, previous_pose, source)
    site_px = site_pixels(view.pose, g)
    least = float(cfg["image"]["min_site_px"])
    if site_px < least:
        raise TooSmallError(f"{source}: the board shows too small to be read (a site is "
                            f"{site_px:.1f} pixels across, {least:g} or more are needed): take "
                            "it closer or at a higher resolution")
    timings["pose"] = time.perf_counter() - t
    t = time.perf_counter()
    limits = {site.index: (int(lo), int(hi)) for site, (lo, hi) in (height_range or {}).items()}
    sites = _read_sites(g, cfg, view, colors, limits)
    timings["sites"] = time.perf_counter() - t
    shown = None
    if check_colours and _checkable(g, colors):
        t = time.perf_counter()
        shown = colour_set_shown(g, cfg, view.work, view.wpose, view.wb, sites.strips, limits,
                                 sites.reader)
        timings["colour_check"] = time.perf_counter() - t
    t = time.perf_counter()
    hide = cfg.get("cards", {}).get("towers_hide", True)
    shape = sites.image.shape[:2]
    covered = (sites.reader.tower_mask(view.wpose, sites.strips, sites.results, shape)
               if hide else None)
    guessed = (sites.reader.guessed_mask(view.wpose, sites.strips, sites.results, shape,
                                         covered)
               if hide and cfg.get("cards", {}).get("guess_share") is not None else None)
    saturation = _saturation(sites.results, sites.model, cfg.get("tone", {}))
    cards = read_cards(sites.image, view.wpose, g, sites.wb, cfg.get("cards"), covered,
                       sites.tone, saturation, guessed)
    timings["cards"] = time.perf_counter() - t
    reading = _reading(sites, view, cards)
    timings["total"] = time.perf_counter() - t0
    reading.timings = timings
    reading.colours_shown = shown
    reading.site_px = site_px
    return reading, view


def _looks_cropped(intr: Intrinsics, cfg: Mapping[str, Any]) -> bool:
    """Whether a photo read without a camera file has a shape no camera saves (long side
    over short not within ``image.aspect_tolerance`` of ``image.camera_aspects``)."""
    if not intr.estimated:
        return False
    w, h = intr.size
    aspect = max(w, h) / max(min(w, h), 1)
    tolerance = float(cfg["image"]["aspect_tolerance"])
    return not any(abs(aspect / float(a) - 1) <= tolerance for a in cfg["image"]["camera_aspects"])


def _total_score(reading: Reading) -> float:
    return float(sum(r.score for r in reading.details if r.height is not None))


def _find_centre(reading: Reading, image: np.ndarray, gray: np.ndarray, markers: Markers,
                 colors: Sequence[str] | ColourModel | None, cfg: Mapping[str, Any],
                 g: BoardGeometry, source: str,
                 height_range: Mapping[Site, tuple[int, int]] | None,
                 check_colours: bool) -> Reading:
    """A cropped photo read again with its lens's centre looked for.

    The markers lie on one plane, which leaves the centre free, and the reader
    takes it at the photo's middle; a crop moves it. Where a crop moved it far,
    the reading under the true centre scores higher in total (a third cut off
    one side of raycast phone photos: 24 of 24). The intrinsics are fitted again
    to the markers with the centre held at each offset of ``image.centre_steps``
    (shares of the photo's width, then of its height); along each side the
    offset (the middle's own among them) whose reading scores highest, less
    ``image.centre_price`` points per share of offset, is kept, and the photo is
    read at both (a small offset's gain is noise: docs/vision-errors.md,
    fifty-sixth session).
    """
    price = float(cfg["image"]["centre_price"])
    h, w = image.shape[:2]
    steps = [0.0, *(float(d) for d in cfg["image"]["centre_steps"] if float(d) != 0.0)]
    reads: dict[tuple[float, float], Reading | None] = {(0.0, 0.0): reading}
    cameras: dict[tuple[float, float], Intrinsics] = {}

    def read_at(dx: float, dy: float, check: bool = False) -> Reading | None:
        if (dx, dy) not in reads or check:
            if (dx, dy) not in cameras:
                centre = (w / 2 + dx * w, h / 2 + dy * h)
                cameras[(dx, dy)] = estimate_intrinsics(markers, g, (w, h),
                                                        cfg.get("intrinsics"), centre)
            try:
                # the trials are judged by their sites alone: the colour check is
                # made once, on the reading kept; the markers are the photo's, found once
                reads[(dx, dy)] = _read_located(
                    image, gray, markers, cameras[(dx, dy)], colors, cfg, g, None, source,
                    height_range, check, {"markers": reading.timings["markers"]},
                    time.perf_counter())[0]
            except (BoardNotFoundError, ImageReadError):  # no pose at that centre
                reads[(dx, dy)] = None
        return reads[(dx, dy)]

    def best(along: int) -> float:
        scored = [(d, read_at(*((d, 0.0) if along == 0 else (0.0, d)))) for d in steps]
        return max(((d, r) for d, r in scored if r is not None),
                   key=lambda dr: _total_score(dr[1]) - price * abs(dr[0]))[0]

    at = (best(0), best(1))
    if at == (0.0, 0.0):
        return reading
    return read_at(*at, check=check_colours) or reading


def site_pixels(pose: Pose, g: BoardGeometry) -> float:
    """How many pixels across a site's footprint shows in the photo: the median over
    the 54 sites of the square root of its projected area.

    The reader's strips and the cards' cells scale with the photo, but a block's
    top needs some pixels to show its colour, its storeys and its edges. On 211
    ray-traced photos, whole and shrunk to a half down to 0.15 of their size
    (the spec's cameras show a site 16 pixels across or more; these sets 24-42
    whole): under 10 pixels about 6% of the sites are read wrong (2-4% above)
    and one card in five is missed; under 6, 10% and 85%.
    """
    half = g.footprint / 2
    xy = g.site_xy
    corners = np.stack([np.column_stack([xy[:, 0] + dx * half, xy[:, 1] + dy * half,
                                         np.zeros(len(xy))])
                        for dx, dy in ((-1, 1), (1, 1), (1, -1), (-1, -1))], axis=1)
    p = pose.project(corners.reshape(-1, 3)).reshape(len(xy), 4, 2)
    x, y = p[..., 0], p[..., 1]
    area = 0.5 * np.abs(np.sum(x * np.roll(y, -1, axis=1) - np.roll(x, -1, axis=1) * y, axis=1))
    return float(np.median(np.sqrt(area)))


def photo_warnings(reading: Reading, config: Mapping[str, Any] | None = None
                   ) -> list[dict[str, str]]:
    """What a player should know of how a photo was read (``companion read``'s and the
    replay's warnings, beside the colours and a damaged file): a board shown small,
    a mirrored photo read flipped back, a photo that looks cropped, a photo taken
    from so steep a view that many heights go unread."""
    out = []
    small = small_warning(reading.site_px, config)
    if small is not None:
        out.append({"reason": "small", "message": small})
    if reading.mirrored:
        out.append({"reason": "mirrored", "message": (
            "the photo is mirrored (a front camera's, saved as previewed): it was read "
            "flipped back")})
    cropped = cropped_warning(reading, config)
    if cropped is not None:
        out.append({"reason": "cropped", "message": cropped})
    steep = steep_warning(reading)
    if steep is not None:
        out.append({"reason": "steep", "message": steep})
    return out


def steep_warning(reading: Reading) -> str | None:
    """The warning for a photo taken from steeper than the board profile's good
    elevations (``camera_advice``; None: not so steep, or no advice).

    From above a storey more or less barely moves a tower's top: on the 26 sets of
    four renderers, 70-80 degrees read 3-4% of the visible sites wrong and left
    21-27% unseen, 50-60 degrees 0.5% and 8-9% (docs/vision-errors.md, sixtieth
    session). The words are the same for every such photo, so a replay says them
    once for all its photos."""
    (_, high), (best_low, best_high) = good_elevation()
    if reading.pose.elevation_deg <= high:
        return None
    return (f"taken from steeper than {high:.0f} degrees above the table: from there a "
            "storey more or less barely moves a tower's top, so many heights are left "
            f"unseen or read a storey off; photos from {best_low:.0f}-{best_high:.0f} "
            "degrees read them")


def cropped_warning(reading: Reading, config: Mapping[str, Any] | None = None) -> str | None:
    """The warning for a photo of no camera's shape read without a camera file (None:
    a camera's shape, or a camera file given).

    Without a camera file the lens's centre is taken at the photo's middle. A
    crop moves it: raycast phone photos cropped round the board read 30 sites
    wrong for 25, with a third cut off one side 73 (16 with the true centre);
    such a photo's centre is looked for (:func:`_find_centre`). Cameras save a
    few shapes (``image.camera_aspects``, long side over short, within
    ``image.aspect_tolerance``); another is most likely a crop.
    """
    intr = reading.pose.intrinsics
    if not _looks_cropped(intr, merged_config(config)):
        return None
    w, h = intr.size
    return (f"the photo's shape ({w} x {h}) is no camera's: if it was cropped, its lens's "
            "centre was looked for, but the sites may be read less surely than in the whole "
            "photo")


def small_warning(site_px: float | None, config: Mapping[str, Any] | None = None,
                  where: str = "in this photo") -> str | None:
    """The warning for a photo whose board is small (None: large enough)."""
    limit = float(merged_config(config)["image"]["small_site_px"])
    if site_px is None or site_px >= limit:
        return None
    return (f"the board is small {where} (a site is {site_px:.1f} pixels across, "
            f"under {limit:g}): more sites may be read wrong or unseen than in a larger one")


@dataclass
class _View:
    """The photo located: its pose, and the image and pose the sites are read at."""

    pose: Pose
    work: np.ndarray
    wpose: Pose
    #: the white balance the sites are read with (after smoothing a grainy photo)
    wb: WhiteBalance
    #: the photo's own (the live table's new-block fit compares raw frames: their noise)
    wb_raw: WhiteBalance
    blur: float | None


def _locate(image_bgr: np.ndarray, gray: np.ndarray, markers: Markers, camera: Any,
            g: BoardGeometry, cfg: Mapping[str, Any], previous_pose: Pose | None,
            source: str) -> _View:
    """The pose from the markers (found again on a sharpened copy of a blurry photo),
    the working view, and its white balance (a grainy photo smoothed)."""
    pose, used, edges = _solve(gray, markers, camera, g, cfg, previous_pose, source)
    pose, small = _outline(image_bgr, pose, used, previous_pose, g, cfg, edges)
    max_side = int(cfg.get("image", {}).get("max_side_px", 0))
    work, wpose = working_view(image_bgr, pose, max_side, small)
    wb = estimate_white_balance(work, wpose, g, pose.markers or None)
    wb_raw = wb
    grainy = wb.noise > float(cfg.get("image", {}).get("denoise_noise", np.inf))
    blur = None
    if (cfg.get("sharpness", {}).get("enabled", False) and work is image_bgr
            and pose is not previous_pose):  # a still camera's pose is kept as it was
        blur = estimate_blur(gray, pose, g, pose.markers or None, cfg["sharpness"])
        sharp_gray = None if grainy else _sharpen(gray, blur, cfg["sharpness"])
        if sharp_gray is not None:
            # a blur bends the markers' corners as found, and the pose with them: it is
            # found again on the sharpened photo. The sites and cards are read on the
            # photo as taken: a deconvolution rings around dark plastic, and black
            # tops lose their uniform look
            found = detect_markers(sharp_gray, g, cfg.get("pose"))
            if len(found) >= len(markers):
                pose, used, edges = _solve(sharp_gray, found, camera, g, cfg, previous_pose,
                                           source)
                pose, small = _outline(image_bgr, pose, used, previous_pose, g, cfg, edges)
                work, wpose = working_view(image_bgr, pose, max_side, small)
    if grainy:
        # a grainy photo: each strip sample is one pixel, and noise that large makes
        # a top look mottled and off its colour (towers read as empty sites)
        work = cv2.GaussianBlur(work, (0, 0), float(cfg["image"]["denoise_sigma_px"]))
        wb = estimate_white_balance(work, wpose, g, pose.markers or None)
    return _View(pose, work, wpose, wb, wb_raw, blur)


def _outline(image: np.ndarray, pose: Pose, markers: Markers, previous_pose: Pose | None,
             g: BoardGeometry, cfg: Mapping[str, Any], edges: Sequence[EdgeFit] = ()
             ) -> tuple[Pose, np.ndarray | None]:
    """The pose refined with the board's outline when few markers fixed it, and the
    photo shrunk to the working size when that was needed for it (or None).
    ``edges``: the edges of missed markers the pose was refined with already
    (photo pixels). They lie where the profile says; the board's outline only as
    near as its art and its thickness let it be found (8-14 px off on a
    ray-traced board), so the outline's pose is kept only if it leaves them
    within ``marker_edges.outline_px`` (RMS, working-size pixels)."""
    found, small = _outline_pose(image, pose, markers, previous_pose, g, cfg)
    if edges and found is not pose:
        px = image.shape[1] / (small.shape[1] if small is not None else image.shape[1])
        if edge_rms(found, edges) > float(cfg.get("marker_edges", {}).get("outline_px", 1.0)) * px:
            return pose, small
    return found, small


def _outline_pose(image: np.ndarray, pose: Pose, markers: Markers,
                  previous_pose: Pose | None, g: BoardGeometry, cfg: Mapping[str, Any]
                  ) -> tuple[Pose, np.ndarray | None]:
    """:func:`_outline`'s fit to the board's outline (``pose`` itself when none)."""
    ocfg = dict(cfg.get("outline", {}))
    # a camera file's intrinsics and three markers fix the pose to a fraction of a
    # pixel; estimated ones leave the focal length loose with as many
    below = int(ocfg.get("below_markers_estimated" if pose.intrinsics.estimated
                         else "below_markers", 3))
    if (pose is previous_pose or not ocfg.get("enabled", False)
            or len(pose.markers) >= below):
        return pose, None
    used = {k: markers[k] for k in pose.markers if k in markers}
    # looked for at the working size: the thresholds are in its pixels, and a
    # 12-megapixel photo smoothed whole would cost more than the read
    work, wpose = working_view(image, pose, int(cfg.get("image", {}).get("max_side_px", 0)))
    # the prior the markers' own fit of f paid (at the working size)
    prior = focal_prior((work.shape[1], work.shape[0]), len(used), cfg.get("intrinsics", {}))
    if work is image:
        return refine_pose(image, pose, used, g, ocfg, prior), None
    sx = work.shape[1] / image.shape[1]
    sy = work.shape[0] / image.shape[0]
    scale = np.array([sx, sy])
    small = {k: (c + 0.5) * scale - 0.5 for k, c in used.items()}
    found = refine_pose(work, wpose, small, g, ocfg, prior)
    if found is wpose:
        return pose, work
    # back to the photo's pixels (working_view's scaling, inverted)
    intr = Intrinsics(_rescaled(found.intrinsics.K, 1.0 / sx, 1.0 / sy),
                      found.intrinsics.dist.copy(), pose.intrinsics.size,
                      pose.intrinsics.estimated)
    return replace(found, intrinsics=intr), work


@dataclass
class _Sites:
    """The sites read, and what they were read with and on."""

    reader: SiteReader
    results: list[SiteResult]
    strips: Any
    model: ColourModel
    names: list[str]
    #: the photo as read (a lift taken off) and its white balance
    image: np.ndarray
    wb: WhiteBalance
    tone: float
    lift: float
    gains: tuple[float, float] = (1.0, 1.0)


def _read_sites(g: BoardGeometry, cfg: Mapping[str, Any], view: _View,
                colors: Sequence[str] | ColourModel | None,
                limits: Mapping[int, tuple[int, int]]) -> _Sites:
    """Every site, read again when the colour set or the photo's tone needs it."""
    reader = SiteReader(g, cfg.get("sites"))
    work, wpose, wb = view.work, view.wpose, view.wb
    model, names = _colour_model(g, colors)
    results, strips, model = reader.read(work, wpose, wb, model, height_range=limits)
    if colors is None:
        model, names, results = _settle_colour_set(
            g, reader, work, wpose, wb, results, model, strips, limits,
            float(cfg.get("colour_check", {}).get("close_vote", 0.0)))
    tone, lift, gains = 1.0, 0.0, (1.0, 1.0)
    if not isinstance(colors, ColourModel):  # a calibrated model has the camera's curve
        model, results, tone, work, wb, lift, gains = _fit_tone(
            g, reader, work, wpose, wb, results, model, strips, limits, cfg.get("tone", {}),
            view.pose.markers or None)
    return _Sites(reader, results, strips, model, list(names), work, wb, tone, lift, gains)


def _reading(sites: _Sites, view: _View, cards: dict[Seat, tuple[int, int]]) -> Reading:
    """The rules-engine values of the sites read (unseen and doubtful ones apart)."""
    found: dict[Site, SiteView] = {}
    unseen: list[Site] = []
    unresolved: dict[Site, SiteView] = {}
    rename = dict(zip(sites.model.names, sites.names, strict=True))
    steep = _unresolved_heights(sites, view.pose)
    beyond = _beyond_supply(sites.reader.g, sites.results)
    for r in sites.results:
        if r.height is None:
            unseen.append(r.site)
        elif r.height > 0 and r.color is not None:
            view_ = SiteView(r.height, rename.get(r.color, r.color))
            if r.site in beyond:
                r.reason = "supply"
            if r.reason in ("close", "supply", "board", "side", "shared") or r.site in steep:
                # the guess kept apart; the details keep the reading (a tower that beat
                # a far different reading or a storey more or less by a hair,
                # sites.tower_doubt_margin and storey_doubt_margin, or a
                # height this view cannot tell)
                r.reason = r.reason or "steep"
                unresolved[r.site] = view_
                unseen.append(r.site)
            else:
                found[r.site] = view_
    doubt = float(sites.reader.cfg["doubt_margin"])
    doubtful = sorted(r.site for r in sites.results
                      if r.height is not None and r.margin < doubt)
    return Reading(found, unseen, cards, view.pose, list(sites.names), {}, sites.results,
                   sites.model, doubtful, view.wb_raw, sites.tone, sites.lift, view.blur,
                   unresolved, sites.gains, _covered_guesses(sites, rename))


def _beyond_supply(g: BoardGeometry, results: Sequence[SiteResult]) -> set[Site]:
    """One-storey towers of a colour read more often than the colour has one-storey
    blocks (the board profile's ``supply``): reported ``unseen`` (reason "supply").

    A one-storey tower is one block. More of them than the box holds is a board
    whose print looks like that colour's plastic (a blue board under blue
    blocks, seen from above): which of them are blocks the photo cannot tell,
    so none is reported (their guesses are listed ``unresolved``).
    """
    most = g.supply.get(1)
    if not most:
        return set()
    ones: dict[str, list[Site]] = {}
    for r in results:
        if r.height == 1 and r.color is not None:
            ones.setdefault(r.color, []).append(r.site)
    return {s for found in ones.values() if len(found) > most for s in found}


def _covered_guesses(sites: _Sites, rename: Mapping[str, str]) -> dict[Site, SiteView]:
    """:attr:`Reading.covered_guesses`: the covered-tower rescue's own tests
    (:func:`covered_tower_lead`) without its arm rule."""
    cfg = sites.reader.cfg
    return {r.site: SiteView(r.tower[0], rename.get(r.tower[1], r.tower[1]))
            for r in sites.results
            if r.reason == "covered" and r.tower is not None
            and covered_tower_lead(r, cfg) is not None}


def _unresolved_heights(sites: _Sites, pose: Pose) -> set[Site]:
    """Towers whose height this view cannot tell: reported ``unseen`` (reason "steep").

    Seen from nearly above, a storey moves a top in the image about as far as
    the few millimetres a block may stand off its site: with ``c`` the top's
    horizontal distance from the camera over the camera's height above it, one
    storey shows as ``storey * c`` mm of placement. Where that is under
    ``steep_storey_mm`` (null: ``steep_jitter_factor`` times the profile's
    ``jitter_mm``, 4 mm on the reference board) and a tower one storey taller
    or shorter (among the reading's three best rivals) scores within
    ``steep_margin`` of it, the height is a guess, and a guess is not reported.
    The factor: a top stands off its site by its blocks' placement and is
    found by the reader to within its own error too (pose, blur), so a storey
    worth a third more than one block's jitter is still a guess a third of the
    time (docs/vision-errors.md, twenty-second session). The thresholds are the
    site reader's own (its sites section laid over the shipped one).
    """
    out: set[Site] = set()
    g = sites.reader.g
    cfg = sites.reader.cfg
    # null: the board profile's placement jitter (a storey shifting the top by less
    # than a block may stand off its site cannot be told from that placement)
    limit = steep_storey_limit(g, cfg["steep_storey_mm"], cfg["steep_jitter_factor"])
    margin = float(cfg["steep_margin"])
    if limit <= 0 or margin <= 0:
        return out
    C = pose.camera_centre
    for r in sites.results:
        if not r.height or storey_shift_mm(g, C, r.site, r.height) >= limit:
            continue
        if any(abs(h - r.height) == 1 and r.score - score < margin
               for h, _, score in r.rivals):
            out.add(r.site)
    return out


def _greyscale(image_bgr: np.ndarray) -> bool:
    """Whether the three channels are one (a black-and-white photo saved as colour, a
    camera's night mode); every 4th pixel each way is enough to tell."""
    sub = image_bgr[::4, ::4]
    return bool(np.array_equal(sub[..., 0], sub[..., 1])
                and np.array_equal(sub[..., 1], sub[..., 2]))


def _second_look(gray: np.ndarray, markers: Markers, intr: Intrinsics, pose: Pose,
                 g: BoardGeometry, cfg: Mapping[str, Any], source: str, refit: bool,
                 px: float = 1.0) -> tuple[Pose, Markers]:
    """The pose again after looking for missed markers and dropping a bent one, and
    the markers it rests on.

    A marker found on the second look is kept only if the pose solved with it
    still fits every marker (within ``find_px``, or twice the first fit's worst):
    a partly hidden marker can decode with corners a few pixels off, and with
    three markers k1 is estimated too, so such corners bend the whole camera.
    ``refit``: estimate the intrinsics again from the markers kept. ``px``: photo
    pixels per working-size pixel (the thresholds are in working-size pixels).
    """
    pcfg = cfg.get("pose", {})
    h, w = gray.shape[:2]

    def solve(found: Markers) -> tuple[Intrinsics, Pose]:
        k = estimate_intrinsics(found, g, (w, h), cfg.get("intrinsics")) if refit else intr
        return k, solve_pose(found, k, g, None, pcfg, source).pose

    if len(markers) < len(g.marker_centres) and pcfg.get("find_missing", True):
        extra = find_missing(gray, markers, pose, g, pcfg)
        if extra:  # more corners: a better focal length and pose, if they fit
            more = {**markers, **extra}
            k2, p2 = solve(more)
            before = max(marker_residuals(markers, pose, g).values())
            after = max(marker_residuals(more, p2, g).values())
            if after <= max(float(pcfg.get("find_px", 1.5)) * px, 2 * before):
                markers, intr, pose = more, k2, p2
    bad = gross_outlier(markers, pose, g, float(pcfg.get("outlier_px", 3.0)) * px,
                        float(pcfg.get("outlier_ratio", 2.5)))
    if bad is not None:  # solve again without the marker a tower or shadow bent
        markers = {k: v for k, v in markers.items() if k != bad}
        _, pose = solve(markers)
    return pose, markers


def work_scale(size: tuple[int, int], max_side: int) -> float:
    """The factor (at most 1) that brings a photo of ``size`` to the working size."""
    longest = max(size)
    return max_side / longest if 0 < max_side < longest else 1.0


def _rescaled(K: FloatArray, sx: float, sy: float) -> FloatArray:
    """A camera matrix for the photo resized by ``sx``, ``sy`` (pixel centres:
    x' + 0.5 = (x + 0.5) * s, as cv2.resize maps them)."""
    out = K.copy()
    out[0, :2] *= sx
    out[0, 2] = (K[0, 2] + 0.5) * sx - 0.5
    out[1, 1] *= sy
    out[1, 2] = (K[1, 2] + 0.5) * sy - 0.5
    return out


def working_view(image: np.ndarray, pose: Pose, max_side: int,
                 small: np.ndarray | None = None) -> tuple[np.ndarray, Pose]:
    """The photo and pose that sites and cards are read at.

    A photo whose longest side exceeds ``max_side`` is shrunk with area
    averaging (the anti-aliasing a sparse sampling needs), and the pose's
    camera matrix follows it; the board-to-camera transform and the lens
    distortion are unchanged. ``small``: the photo already shrunk (by an earlier
    call: the shrinking does not depend on the pose).
    """
    h, w = image.shape[:2]
    s = work_scale((w, h), max_side)
    if s >= 1.0:
        return image, pose
    size = (max(1, round(w * s)), max(1, round(h * s)))
    K = _rescaled(pose.intrinsics.K, size[0] / w, size[1] / h)
    intr = Intrinsics(K, pose.intrinsics.dist.copy(), size, pose.intrinsics.estimated)
    if small is None or small.shape[1::-1] != size:
        small = area_shrink(image, size)
    return small, replace(pose, intrinsics=intr)


def area_shrink(image: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """``image`` area-averaged down to ``size`` (width, height): halved (2 x 2 pixels
    averaged) while twice the size still fits, then the rest of the way.

    The same average as one step to within half a grey level, in a third of the
    time or less (a 12 MP photo to 1600 px: 29 -> 12 ms; 48 MP: 82 -> 23 ms):
    OpenCV's area averaging is slow for factors that are not 2 or 4. A side of
    odd length is not halved (a dropped row would move the picture).
    """
    while (image.shape[0] % 2 == 0 and image.shape[1] % 2 == 0
           and image.shape[1] // 2 >= size[0] and image.shape[0] // 2 >= size[1]):
        image = cv2.resize(image, (image.shape[1] // 2, image.shape[0] // 2),
                           interpolation=cv2.INTER_AREA)
    out: np.ndarray = cv2.resize(image, size, interpolation=cv2.INTER_AREA)
    return out


def _colour_model(g: BoardGeometry, colors: Sequence[str] | ColourModel | None
                  ) -> tuple[ColourModel, list[str]]:
    """The model to read with, and the names to report its classes under."""
    if isinstance(colors, ColourModel):
        return colors, colors.names
    if colors is not None:
        names = [str(c) for c in colors]
        if not names:
            raise ValueError("no colours in play named (e.g. red, blue, green, black)")
        twice = sorted({c for c in names if names.count(c) > 1})
        if twice:
            raise ValueError(f"colour {twice[0]!r} named twice")
        return ColourModel.for_colours(g, names), names
    # unknown set: every colour of every set, by profile key
    keys: list[str] = []
    for mapping in _colour_sets(g).values():
        for key in mapping.values():
            if key not in keys:
                keys.append(key)
    model = ColourModel.from_rgb({k: g.colours[k] for k in keys})
    return model, keys


def _solve(gray: np.ndarray, markers: Markers, camera: Any, g: BoardGeometry,
           cfg: Mapping[str, Any], previous_pose: Pose | None, source: str
           ) -> tuple[Pose, Markers, list[EdgeFit]]:
    """The camera's pose (and intrinsics) from the markers found in ``gray``, the
    markers' corners as it used them (a bent corner mended, a missed marker found):
    the outline's fit must start from those, not from the corners as first found;
    and the edges of markers the detector missed that refined it."""
    h, w = gray.shape[:2]
    intr = _intrinsics(camera, (w, h))
    if intr is None:
        if previous_pose is not None and previous_pose.intrinsics.size == (w, h):
            intr = previous_pose.intrinsics
        else:
            intr = estimate_intrinsics(markers, g, (w, h), cfg.get("intrinsics"))
    pose = solve_pose(markers, intr, g, previous_pose, cfg.get("pose"), source).pose
    max_side = int(cfg.get("image", {}).get("max_side_px", 0))
    if pose is not previous_pose:  # solved afresh (not tracking a still camera)
        px = 1.0 / work_scale((w, h), max_side)  # photo pixels per working-size pixel
        mended = repair_bent_corner(markers, pose, g, intr.estimated and previous_pose is None,
                                    cfg.get("intrinsics"), cfg.get("pose"), px)
        if mended is not markers:
            markers = mended
            if intr.estimated and previous_pose is None:
                intr = estimate_intrinsics(markers, g, (w, h), cfg.get("intrinsics"))
            pose = solve_pose(markers, intr, g, None, cfg.get("pose"), source).pose
        # a camera still being tracked keeps its intrinsics (a bump moved, not refocused, it)
        pose, markers = _second_look(gray, markers, intr, pose, g, cfg, source,
                                     refit=intr.estimated and previous_pose is None, px=px)
        pose, edges = _by_marker_edges(gray, pose, markers, g, cfg,
                                       intr.estimated and previous_pose is None, px)
        return pose, markers, edges
    return pose, markers, []


def _by_marker_edges(gray: np.ndarray, pose: Pose, markers: Markers, g: BoardGeometry,
                     cfg: Mapping[str, Any], refit: bool, px: float
                     ) -> tuple[Pose, list[EdgeFit]]:
    """The pose refined with the edges of the markers a tower hid a piece of
    (:func:`refine_by_marker_edges`). ``px``: photo pixels per working-size pixel
    (the section's pixels are the working size's)."""
    mcfg = dict(cfg.get("marker_edges", {}))
    if not mcfg.get("enabled", False) or len(pose.markers) >= len(g.marker_centres):
        return pose, []
    for key in ("search_px", "narrow_search_px", "spacing_px", "min_side_px", "marker_px"):
        if key in mcfg:
            mcfg[key] = float(mcfg[key]) * px
    used = {k: markers[k] for k in pose.markers if k in markers}
    h, w = gray.shape[:2]
    prior = focal_prior((w, h), len(used), cfg.get("intrinsics", {})) if refit else None
    return refine_by_marker_edges(gray, pose, used, g, mcfg, refit, prior)


def _sharpen(image: np.ndarray, blur: float | None, cfg: Mapping[str, Any]
             ) -> np.ndarray | None:
    """The photo with the blur beyond the usual taken out; None if it is not blurry.

    The renderers the reader was fitted on blur 0.5-1.3 px (the markers' edges
    say so); in a blurrier photo the markers' corners are found off their
    place, the pose with them, and towers read one storey off. The excess over
    ``reference_px`` is deconvolved when the photo is blurrier than
    ``trigger_px``, the grain amplified at most ``max_noise_gain`` times. The
    caller sees that a grainy photo is not sharpened (it is smoothed instead),
    nor one larger than the working size (shrinking it takes most of the blur
    away).
    """
    if blur is None or blur < float(cfg["trigger_px"]):
        return None
    excess2 = min(blur, float(cfg["max_px"])) ** 2 - float(cfg["reference_px"]) ** 2
    if excess2 <= 0:
        return None  # no blurrier than the reference (a trigger set under it)
    excess = float(np.sqrt(excess2))
    k = noise_to_signal_for(excess, float(cfg["max_noise_gain"]), float(cfg["noise_to_signal"]))
    return deblur(image, excess, k)


def _fit_tone(g: BoardGeometry, reader: SiteReader, image: np.ndarray, pose: Pose,
              wb: WhiteBalance, results: list[SiteResult], model: ColourModel, strips: Any,
              limits: Mapping[int, tuple[int, int]] | None, cfg: Mapping[str, Any],
              markers: Sequence[int] | None = None,
              ) -> tuple[ColourModel, list[SiteResult], float, np.ndarray, WhiteBalance, float,
                         tuple[float, float]]:
    """Read the sites again under the photo's own tone curve when it is far from nominal.

    A steeper or flatter curve than the nominal colours assume (another camera,
    another renderer) moves every colour a little, and a top a little off its
    colour loses much of its score: blue towers read as empty sites. The tops
    read surely despite that settle one curve for all colours
    (:func:`fit_tone`). A lifted black (flare, a low-contrast rendering) is
    taken off the photo itself, not only off the colours: it also flattens
    every edge and makes black plastic look like a shadow.
    A cast the markers' white balance left on the plastic is fitted to the same
    tops (:func:`_fit_gains`) and read under too. A curve (or cast) under which
    more sites read as one-storey towers beyond the box's supply of them
    (:func:`_beyond_supply`) than under the nominal colours is refused: it
    reads the board's print as plastic (raycast phone 23015: paper clipped in
    two channels, three clipped yellow tops fitting the flattest curve, the
    cream squares then read as 22 yellow blocks).
    Returns the model, the results, the exponent, the photo and its white
    balance (the lift taken off), the lift and the cast's gains.
    """
    unchanged = model, results, 1.0, image, wb, 0.0, (1.0, 1.0)
    if not cfg.get("enabled", True):
        return unchanged
    fallback = cfg.get("fallback_margin")
    samples = [(str(r.color), r.top_feature) for r in _voting_tops(
        [r for r in results if r.color], cfg, None if fallback is None else float(fallback))
        if r.top_feature is not None]
    if len(samples) < int(cfg["min_samples"]):
        return unchanged
    try:
        colours = {n: g.colours[resolve_colour(g, model.names, n)] for n in model.names}
    except ValueError:  # colours the profile does not know: nothing nominal to tone
        return unchanged
    exponent, _, cost, _ = fit_tone(samples, colours, {**cfg, "lifts": None})
    lo, hi = (float(x) for x in cfg["keep"])
    lifts = _lift_range(colours, wb, cfg, _dark_floor(image, wb, cfg)) if exponent < lo else None
    lift = 0.0
    if lifts is not None:
        # a flatter photo: a raised black may explain it better than a curve, if
        # clearly better (a sheen on black plastic fits a lift a little better too)
        p, q, lifted, _ = fit_tone(samples, colours, {**cfg, "lifts": lifts, "lifts_only": True})
        if lifted <= float(cfg["lift_gain"]) * cost:
            exponent, lift = p, q
    if lift > 0:
        image = _take_lift(image, wb, lift)
        wb = estimate_white_balance(image, pose, g, markers)
    if lo <= exponent <= hi:
        exponent = 1.0
    gains = (1.0, 1.0) if lift > 0 else _fit_gains(samples, colours, exponent, cfg)
    if exponent == 1.0 and lift == 0.0 and gains == (1.0, 1.0):
        return unchanged
    toned_results, _, toned = reader.read(image, pose, wb, toned_model(
        colours, exponent, lift=0.0, gains=gains), strips, limits)
    if len(_beyond_supply(g, toned_results)) > len(_beyond_supply(g, results)):
        # more one-storey blocks of a colour than the box holds: the print read as
        # plastic, not the photo's curve
        return unchanged
    return toned, toned_results, exponent, image, wb, lift, gains


def _fit_gains(samples: Sequence[tuple[str, FloatArray]], colours: Mapping[str, Sequence[float]],
               exponent: float, cfg: Mapping[str, Any]) -> tuple[float, float]:
    """A cast the markers' white balance left on the plastic (:func:`fit_gains`),
    or none: with ``gains`` null, fewer than ``gains_min_samples`` tops, a fit not
    ``gains_gain`` of the cost without or better, or gains within ``gains_keep``
    of 1."""
    if not cfg.get("gains") or len(samples) < int(cfg.get("gains_min_samples", 1)):
        return 1.0, 1.0
    gains, cost, at_one = fit_gains([f for _, f in samples], colours, exponent, 0.0, cfg)
    keep = float(cfg["gains_keep"])
    if cost > float(cfg["gains_gain"]) * at_one or max(
            abs(gains[0] - 1.0), abs(gains[1] - 1.0)) < keep:
        return 1.0, 1.0
    return gains


def _saturation(results: list[SiteResult], model: ColourModel, cfg: Mapping[str, Any]) -> float:
    """How saturated the photo shows the block colours, against the colours' own
    saturation: the median over the tops read surely (those of a coloured class).

    A muted camera or renderer (or a photo desaturated after the fact) pales
    every colour alike, the cards' red cells too.
    """
    sat = {c.name: c.sat for c in model.classes if not c.neutral}
    # too few sure tops: every uniform top read votes (a pale photo has few sure ones)
    pick = _voting_tops([r for r in results if r.color in sat], cfg, -np.inf)
    if len(pick) < int(cfg.get("min_samples", 1)):
        return 1.0
    return float(np.median([float(np.hypot(*r.top_feature[:2])) / sat[str(r.color)]
                            for r in pick if r.top_feature is not None]))


def _voting_tops(tops: Sequence[SiteResult], cfg: Mapping[str, Any],
                 fallback: float | None) -> list[SiteResult]:
    """The uniform ``tops`` won surely (``tone`` section's ``min_margin``); with fewer
    than ``min_samples`` of those, the uniform ones won by ``fallback`` or more (None:
    the sure ones all the same). A photo far off the nominal colours reads few tops
    surely, and it is the photo they have to describe."""
    uniform = [r for r in tops if r.top_feature is not None and _sure_top(r, cfg, margin=False)]
    sure = [r for r in uniform if _sure_top(r, cfg)]
    if fallback is None or len(sure) >= int(cfg.get("min_samples", 1)):
        return sure
    return [r for r in uniform if r.margin >= fallback]


def _sure_top(r: SiteResult, cfg: Mapping[str, Any], margin: bool = True) -> bool:
    """A top read surely enough to say what the photo does to colours (``tone``
    section): uniform, and (``margin``) won by a clear margin."""
    return bool(r.height) and r.uniform >= float(cfg.get("min_uniform", np.inf)) and (
        not margin or r.margin >= float(cfg.get("min_margin", np.inf)))


def _lift_range(colours: Mapping[str, Sequence[float]], wb: WhiteBalance,
                cfg: Mapping[str, Any], floor: float = 1.0) -> list[float] | None:
    """The lifts worth trying (from, to, step), or None when none can be told.

    A raised black shows on black plastic: without a dark colour in play a
    flatter curve fits the colours as well, and taking off a lift that is not
    there blackens the shadows. Flare lifts the markers' black ink too, so no
    more than the ink shows over its own reflectance (``lift_ink``) is tried:
    a washed-out, desaturated photo is not a hazy one. Flare lifts every pixel,
    so no more than the photo's darkest pixels show (``floor``, a share of the
    paper) either, and it lifts them as much as the ink: a photo whose darkest
    pixels lie far below the ink (under ``lift_floor_ink`` of it) is a camera
    whose tone curve lifts dark print and plastic, not a hazy one.
    """
    if not cfg.get("lifts"):
        return None
    dark_max = float(cfg["lift_dark"]) * REFERENCE_WHITE
    if not any(float(np.mean(c)) <= dark_max for c in colours.values()):
        return None
    ink = float(np.mean(np.asarray(wb.black) / np.maximum(np.asarray(wb.white), 8.0)))
    if floor < float(cfg.get("lift_floor_ink", 0.0)) * ink:
        return None  # shadows far darker than the ink: the ink is dark print, not flare
    a, b, step = (float(x) for x in cfg["lifts"])
    most = min(b, float(np.floor((min(ink - float(cfg["lift_ink"]), floor)) / step + 1e-9)
                        * step))
    return [a, most, step] if most >= a - 1e-9 else None


def _dark_floor(image: np.ndarray, wb: WhiteBalance, cfg: Mapping[str, Any]) -> float:
    """How bright the photo's darkest pixels are (the ``lift_floor_percent``
    percentile of each channel, averaged), as a share of the marker paper."""
    q = float(cfg.get("lift_floor_percent", 0.0)) / 100.0
    if q <= 0:
        return 1.0
    white = np.maximum(np.asarray(wb.white, np.float64), 8.0)
    out = []
    for c in range(3):
        hist = cv2.calcHist([image], [c], None, [256], [0, 256]).ravel()
        cum = np.cumsum(hist)
        out.append(float(np.searchsorted(cum, q * cum[-1])) / white[c])
    return float(np.mean(out))


def _take_lift(image: np.ndarray, wb: WhiteBalance, lift: float) -> np.ndarray:
    """The photo with a raised black of ``lift`` times the paper taken off."""
    white = np.asarray(wb.white, np.float32)
    x = (image.astype(np.float32) - np.float32(lift) * white) / np.float32(1.0 - lift)
    out: np.ndarray = np.clip(np.round(x), 0, 255).astype(np.uint8)
    return out


def _settle_colour_set(g: BoardGeometry, reader: SiteReader, image: np.ndarray, pose: Pose,
                       wb: Any, results: list[SiteResult], model: ColourModel, strips: Any,
                       limits: Mapping[int, tuple[int, int]] | None = None,
                       close_vote: float = 0.0,
                       ) -> tuple[ColourModel, list[str], list[SiteResult]]:
    """Pick the colour set the tops vote for, then read again with just its colours.

    A close vote (another set with ``close_vote`` of the winner's votes or more) is
    settled by reading with each: the set whose own colours read the towers with
    the larger margins is kept. A lamp-washed red top sits between red and orange,
    and two or three such tops outvoted a board's plain red ones (raycast mounted 0
    saved as a JPEG went to the 2017 set, and its 2017 colours read 3 of 10 towers).
    """
    best_set = _voted_set(g, results)
    if best_set is None:
        return model, model.names, results
    support = _set_support(g, results, telling=True)
    # (no vote at all, when no tower was read with every colour: each set is tried)
    tried = [best_set] + [name for name, votes in support.items() if name != best_set
                          and close_vote > 0
                          and votes >= close_vote * support.get(best_set, 0.0)]
    best: tuple[float, ColourModel, list[str], list[SiteResult]] | None = None
    for name in tried:
        mapping = _colour_sets(g)[name]
        names = list(mapping)
        set_model = ColourModel.from_rgb({n: g.colours[mapping[n]] for n in names})
        read, _, set_model = reader.read(image, pose, wb, set_model, strips, limits)
        towers = sum(_vote(r) for r in read)
        if best is None or towers > best[0]:
            best = (towers, set_model, names, read)
    assert best is not None
    return best[1], best[2], best[3]


def _vote(r: SiteResult) -> float:
    """What a site's reading weighs for its colour: a tower's margin (at least 0.1)."""
    return max(r.margin, 0.1) if r.height and r.color else 0.0


def _set_support(g: BoardGeometry, results: Sequence[SiteResult], telling: bool
                 ) -> dict[str, float]:
    """Each colour set's votes: the margins of the towers read in its colours (with
    ``telling``, not counting a colour more than one set names)."""
    votes: dict[str, float] = {}
    for r in results:
        if r.height and r.color:
            votes[r.color] = votes.get(r.color, 0.0) + _vote(r)
    sets = _colour_sets(g)
    named = [n for mapping in sets.values() for n in mapping]
    shared = {n for n in named if named.count(n) > 1}
    return {name: sum(votes.get(k, 0.0) for n, k in mapping.items()
                      if not (telling and n in shared)) for name, mapping in sets.items()}


def _voted_set(g: BoardGeometry, results: Sequence[SiteResult], telling_only: bool = False
               ) -> str | None:
    """The colour set whose colours the towers read with every colour take, each
    weighed by its margin (the first set on a tie; None with no set).

    A colour named in more than one set (blue) tells little: its shades lie
    near each other, and the 2017 blue under a lamp is read as the 1994 one
    about as often as not (four 2017 photos of 552 went to the 1994 set on
    their blue tops alone). Only the other colours vote, unless none of them
    was read (then every colour does; ``telling_only``: None instead).
    """
    best_set: str | None = None
    for telling in (True, False):
        best_set, best = None, -1.0
        for name, support in _set_support(g, results, telling).items():
            if support > best:
                best_set, best = name, support
        if best > 0 or telling_only:
            return best_set if best > 0 else None
    return best_set


def _checkable(g: BoardGeometry, colors: Sequence[str] | ColourModel | None) -> bool:
    """Whether the photo's colour set could tell against the colours named: they are
    all of one set, and not of every set (blue alone fits either)."""
    if colors is None or isinstance(colors, ColourModel):
        return False
    named = set(colors)
    fits = [named <= set(m) for m in g.colour_sets.values()]
    return any(fits) and not all(fits)


def colour_set_shown(g: BoardGeometry, cfg: Mapping[str, Any], image: np.ndarray, pose: Pose,
                     wb: WhiteBalance, strips: Any,
                     limits: Mapping[int, tuple[int, int]] | None = None,
                     like: SiteReader | None = None) -> str | None:
    """The colour set a photo's tops show: its sites scored with every colour of every
    set (as a photo read without colours named is, before its set is settled). None
    when fewer than ``colour_check.min_towers`` towers are read that way (a game's
    first photos: two tops tell little), or when only colours of both sets were."""
    model, _keys = _colour_model(g, None)
    # a reader of its own: the one that read the photo keeps its print model and range
    # (``like``, the photo's reader: its board model and evidence, where they match)
    reader = like.sharing_photo() if like is not None else SiteReader(g, cfg.get("sites"))
    results, _, _ = reader.read(image, pose, wb, model, strips, limits)
    if sum(1 for r in results if r.height and r.color) < int(
            cfg.get("colour_check", {}).get("min_towers", 3)):
        return None
    return _voted_set(g, results, telling_only=True)


def colour_set_warning(shown: Sequence[str | None], colors: Sequence[str] | None,
                       geometry: BoardGeometry | None = None, *, photos: bool = False
                       ) -> str | None:
    """A one-line warning when the photos show another colour set than the colours named.

    ``shown``: :attr:`Reading.colours_shown` of the photos checked. Said only when
    every photo that tells (not None) shows the same set and the colours named
    are not all in it. Colours the photo could not tell (:func:`_checkable`: of
    no one set, a table's own blocks, or of every set) are not judged.
    """
    g = geometry or board_geometry()
    if colors is None or not _checkable(g, colors):
        return None
    sets = g.colour_sets
    told = {s for s in shown if s is not None}
    if len(told) != 1:
        return None
    [seen] = told
    if seen not in sets or set(colors) <= set(sets[seen]):
        return None
    what, read = ("photos show", "moves") if photos else ("photo shows", "towers")
    return (f"the {what} the {seen} colours ({', '.join(sets[seen])}), not the colours "
            f"named ({', '.join(colors)}): the {read} read with those may be wrong")


#: cv2.imdecode flags that have the JPEG decoder scale the photo down by 2, 4 or 8.
_REDUCED = {2: cv2.IMREAD_REDUCED_COLOR_2, 4: cv2.IMREAD_REDUCED_COLOR_4,
            8: cv2.IMREAD_REDUCED_COLOR_8}


def decode_reduction(size: tuple[int, int] | None, min_side: int | None) -> int:
    """How much the JPEG decoder may shrink a photo of ``size``: the largest of 2, 4
    and 8 leaving its longest side at least ``min_side`` (1: decoded whole)."""
    if size is None or min_side is None or min_side <= 0:
        return 1
    longest = max(size)
    return max([f for f in _REDUCED if longest // f >= min_side], default=1)


def load_image(path: str | Path, config: Mapping[str, Any] | None = None,
               damage: list[str] | None = None) -> np.ndarray:
    """Decode a photo file, with one-line errors for missing, non-image and truncated files
    (``damage``: :func:`decode_photo`'s).

    A JPEG far larger than the reader needs (a 48-megapixel phone photo) is
    decoded smaller by the JPEG decoder itself (``image.decode_min_side``):
    decoding it whole costs more than reading it, and four times the memory.
    """
    p = Path(path)
    size = input_size(p, "a photo", ImageReadError)
    if size > MAX_PHOTO_BYTES:
        raise ImageReadError(f"{path}: too large for a photo ({size} bytes; at most "
                             f"{MAX_PHOTO_BYTES})")
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise ImageReadError(f"{path}: cannot read ({exc.strerror})") from None
    if not data:
        raise ImageReadError(f"{path}: empty file")
    kind = image_kind(data[:16])
    try:
        # a JPEG's image data to its end marker, a PNG's chunks within the file (one
        # claiming 2 GB keeps the decoder busy for seconds) to its IEND
        check_complete(kind or "", data)
    except TruncatedImageError:
        raise ImageReadError(f"{path}: truncated {_KIND_NAMES[kind or '']} file") from None
    except BadImageError:
        pass  # damaged otherwise: the decoder judges
    refuse_huge(path, data, config)
    try:
        img = decode_photo(data, config, damage)
    except HeifError as exc:
        raise ImageReadError(f"{path}: {exc}") from None
    if img is None:
        raise ImageReadError(f"{path}: not an image (or an unsupported format)")
    return img


#: the shortest side a photo can show the board in (four markers and 54 sites)
MIN_PHOTO_SIDE = 64
#: the largest photo file read: a 200-megapixel phone's JPEG is some 60 MB
MAX_PHOTO_BYTES = 256 * 1024 * 1024
_KIND_NAMES = {"jpeg": "JPEG", "png": "PNG", "webp": "WebP"}  # the kinds a file can be cut of


def refuse_huge(path: str | Path, data: bytes, config: Mapping[str, Any] | None) -> None:
    """Refuse a file whose header declares more pixels than ``image.max_decoded_pixels``
    once decoded (a large JPEG at the size its decoder shrinks it to): a few
    kilobytes can declare 30000 x 30000 pixels, gigabytes of the Pi's memory. A
    header not understood here is left to the decoder."""
    cfg = merged_config(config).get("image", {})
    try:
        w, h = image_size(data)
    except BadImageError:
        return
    factor = 1
    if data[:3] == b"\xff\xd8\xff":
        least = cfg.get("decode_min_side")
        factor = decode_reduction((w, h), None if least is None else int(least))
    limit = int(cfg["max_decoded_pixels"])
    if (w // factor) * (h // factor) > limit:
        raise ImageReadError(f"{path}: too large to read ({w} x {h} pixels; at most "
                             f"{limit} once decoded)")


def decode_photo(data: bytes, config: Mapping[str, Any] | None = None,
                 damage: list[str] | None = None) -> np.ndarray | None:
    """A photo file's bytes decoded (None if OpenCV cannot), a large JPEG at the size
    ``image.decode_min_side`` allows (:func:`load_image`).

    ``damage``: given, gets the decoder's words for a damaged file it decoded
    anyway (libjpeg's "Corrupt JPEG data: ..."; a process of one thread only:
    :func:`companion.imagefiles.decoder_messages`), or, where they cannot be
    caught, what the picture shows of it (:func:`_grey_end`).

    A HEIC photo (an iPhone's) is decoded by libheif (:mod:`companion.heif`,
    which raises its one-line :class:`HeifError`), then shrunk by the factor a
    JPEG of its size would have been decoded at: libheif has no scaled decoding.
    """
    if not data:
        return None  # OpenCV asserts on an empty buffer
    least = merged_config(config).get("image", {}).get("decode_min_side")
    min_side = None if least is None else int(least)
    if is_heif(data[:64]):
        heif = decode_heif(data)
        factor = decode_reduction((heif.shape[1], heif.shape[0]), min_side)
        if factor > 1:
            size = (heif.shape[1] // factor, heif.shape[0] // factor)
            heif = cv2.resize(heif, size, interpolation=cv2.INTER_AREA)
        return heif
    flag = cv2.IMREAD_COLOR
    if data[:3] == b"\xff\xd8\xff":
        factor = decode_reduction(jpeg_size(data), min_side)
        flag = _REDUCED.get(factor, flag)
    # a file OpenCV cannot decode is ours to name
    caught: AbstractContextManager[list[str]] = (
        decoder_messages() if damage is not None else nullcontext([]))
    with opencv_silent(), caught as said:
        img: np.ndarray | None = cv2.imdecode(np.frombuffer(data, np.uint8), flag)
    words, rest = damage_of(said)
    if rest:  # not ours to judge: said as the decoder said it
        print("\n".join(rest), file=sys.stderr)
    if damage is not None and img is not None and words is None and data[:3] == b"\xff\xd8\xff":
        words = _grey_end(img)
    if words and damage is not None and img is not None:
        damage.append(words)
    return img


#: full lines of the decoder's grey at a JPEG's edge that say its data stopped early
GREY_END_LINES = 8


def _grey_end(img: np.ndarray) -> str | None:
    """The damage a JPEG shows when its data stops early: libjpeg fills the blocks it
    has no data for with mid grey, exactly (128, 128, 128), to the picture's end
    (its bottom, or another edge once the file's orientation is applied). Where
    libjpeg's own words cannot be caught (a process with threads: the page's
    upload), this is how the damage is still said. A photo from a camera never
    has whole lines of one exact value."""
    longest = 0
    # each edge seen as rows from that edge inward: bottom, top, right, left
    for edge in (img[::-1], img, img.transpose(1, 0, 2)[::-1], img.transpose(1, 0, 2)):
        if len(edge) < GREY_END_LINES or not np.all(edge[:GREY_END_LINES] == 128):
            continue
        full = np.all(edge == 128, axis=(1, 2))
        longest = max(longest, int(np.argmin(full)) if not full.all() else len(full))
    if longest < GREY_END_LINES:
        return None
    return f"its last {longest} lines decoded grey: the data stops early"


def read_paths(paths: Sequence[str | Path], camera_path: str | Path | None = None,
               colors: Sequence[str] | None = None,
               config: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """The ``companion read`` objects of several photos, in order (raises on the first bad one).

    Each has ``warnings``: ``{"reason": "colours", "message": ...}`` when the
    photo's tops show another colour set than the colours named; ``{"reason":
    "damaged", ...}`` when its JPEG data is damaged (decoded anyway: the part
    after the damage grey or shifted); ``{"reason": "small", ...}`` when its board
    is shown small, ``{"reason": "mirrored", ...}`` when it was read flipped back,
    ``{"reason": "steep", ...}`` when it was taken from too steep a view
    (:func:`photo_warnings`)."""
    camera = load_camera(camera_path)
    out = []
    for path in paths:
        damage: list[str] = []
        reading = read_image(load_image(path, config, damage), camera, colors, config,
                             source=str(path), check_colours=True)
        warnings = [{"reason": "damaged", "message": damage_warning(words)} for words in damage]
        warnings.extend(photo_warnings(reading, config))
        message = colour_set_warning([reading.colours_shown], colors)
        if message is not None:
            warnings.append({"reason": "colours", "message": message})
        out.append({**reading.to_json(), "warnings": warnings})
    return out


def load_camera(camera_path: str | Path | None) -> Intrinsics | None:
    """A camera file's intrinsics (None without a file), with one-line errors."""
    if camera_path is None:
        return None
    cp = Path(camera_path)
    if not cp.exists():
        raise CameraFileError(f"{camera_path}: no such camera file")
    if not cp.is_file():
        raise CameraFileError(f"{camera_path}: not a camera file (not a regular file)")
    try:
        return Intrinsics.from_json(jsonkeys.loads(cp.read_text(encoding="utf-8")))
    except RecursionError:
        raise CameraFileError(f"{camera_path}: not a camera file (nested too deeply)") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, ValueError) as exc:
        msg = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
        raise CameraFileError(f"{camera_path}: not a camera file ({msg})") from None
