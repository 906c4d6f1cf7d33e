"""Measure the reader on labelled photos (renders with ground truth): ``companion evaluate``.

Per photo: visible sites read wrong, sites reported unseen while visible,
sites guessed while hidden, card errors and the time of each stage (and of the
visible sites in ``unseen`` because the view cannot tell their height, how many
the reader's guess had right: ``unresolved``, ``unresolved_right``); one CSV
row per photo and totals over the set. A site counts as visible when the
truth's ``expected`` board lists it (or lists it empty) rather than as unseen.
Given a second config (``against``), every photo is read under both and the
sites they read differently are listed, each judged better or worse.
"""

from __future__ import annotations

import csv
import time
from collections.abc import Iterable, Iterator, Mapping
from concurrent.futures import Executor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import cv2
import numpy as np

from companion.rules.board import BOARD_FORMAT, Site
from companion.vision.errors import VisionError
from companion.vision.reader import read_image

COLUMNS = ("name", "kind", "visible_sites", "wrong", "unseen_visible", "hidden", "hidden_read",
           "cards_expected", "cards_wrong", "cards_missed", "cards_extra", "error", "t_markers",
           "t_pose", "t_sites", "t_cards", "t_total", "t_decode_detect", "tone",
           "lift", "blur", "unresolved", "unresolved_right", "gain_red", "gain_blue",
           "unseen_reasons", "wrong_kinds", "elevation")

#: How wide an elevation band of :attr:`Totals.by_elevation` is (degrees).
ELEVATION_BAND_DEG = 10


@dataclass
class Totals:
    photos: int = 0
    failed: int = 0
    visible: int = 0
    wrong: int = 0
    unseen_visible: int = 0
    hidden: int = 0
    hidden_read: int = 0
    cards: int = 0
    cards_wrong: int = 0
    cards_missed: int = 0
    cards_extra: int = 0
    unresolved: int = 0
    unresolved_right: int = 0
    #: visible sites reported unseen, by why the reader left them so ("close",
    #: "covered", ...; "other" for none said): where the unseen rate goes
    unseen_reasons: dict[str, int] = field(default_factory=dict)
    #: visible sites read wrong, by how (:func:`wrong_kind`)
    wrong_kinds: dict[str, int] = field(default_factory=dict)
    #: the sites' counts by the camera's elevation (band "50-60" -> "visible",
    #: "wrong", "unseen_visible", "hidden_read", "photos"): a steep view loses the
    #: storeys, a low one hides sites, and one rate over all views says neither
    by_elevation: dict[str, dict[str, int]] = field(default_factory=dict)
    times: dict[str, list[float]] = field(default_factory=dict)
    against: Totals | None = None  # the second config's totals, in an A/B comparison
    differences: Differences | None = None

    @property
    def cost(self) -> int:
        """The sites' verdicts weighed as :data:`_COST` weighs them (a wrong site four
        unseen ones): one number to say whether a change helped over several sets."""
        return _weighed(self.wrong, self.unseen_visible, self.hidden_read)

    @classmethod
    def merged(cls, parts: Iterable[Totals]) -> Totals:
        """Several sets' totals as one: counts added, stage times pooled, and an A/B
        comparison's second totals and differences merged alike."""
        parts = list(parts)
        out = cls()
        for t in parts:
            for f in ("photos", "failed", *(name for name, _ in _SUMMED)):
                setattr(out, f, getattr(out, f) + getattr(t, f))
            for k, v in t.times.items():
                out.times.setdefault(k, []).extend(v)
            _add_counts(out.unseen_reasons, t.unseen_reasons)
            _add_counts(out.wrong_kinds, t.wrong_kinds)
            for band, counts in t.by_elevation.items():
                _add_counts(out.by_elevation.setdefault(band, {}), counts)
        seconds = [t.against for t in parts if t.against is not None]
        if seconds and len(seconds) == len(parts):
            out.against = cls.merged(seconds)
            out.differences = Differences.merged(t.differences or Differences() for t in parts)
        return out

    def to_json(self) -> dict[str, Any]:
        med = {k: round(float(np.median(v)) * 1000, 1) for k, v in self.times.items() if v}
        return {
            "photos": self.photos, "failed": self.failed, "visible_sites": self.visible,
            "wrong": self.wrong, "unseen_visible": self.unseen_visible,
            "wrong_rate": self.wrong / max(1, self.visible),
            "unseen_rate": self.unseen_visible / max(1, self.visible),
            "cost": self.cost,
            "hidden": self.hidden, "hidden_read": self.hidden_read,
            "unresolved": self.unresolved, "unresolved_right": self.unresolved_right,
            "unseen_by_reason": dict(sorted(self.unseen_reasons.items(),
                                            key=lambda kv: (-kv[1], kv[0]))),
            "wrong_by_kind": dict(sorted(self.wrong_kinds.items(),
                                         key=lambda kv: (-kv[1], kv[0]))),
            "by_elevation": {band: _band_json(c) for band, c in sorted(
                self.by_elevation.items(), key=lambda kv: int(kv[0].split("-")[0]))},
            "cards": self.cards, "cards_wrong": self.cards_wrong,
            "cards_missed": self.cards_missed, "cards_extra": self.cards_extra,
            "card_accuracy": (self.cards - self.cards_wrong - self.cards_missed)
            / max(1, self.cards),
            "median_ms": med,
            **({"against": self.against.to_json()} if self.against is not None else {}),
            **({"differences": self.differences.to_json()}
               if self.differences is not None else {}),
        }


#: A site's verdict: a visible site read ``right``, ``wrong`` or ``unseen``; a hidden
#: site left ``hidden`` (unseen, or guessed right) or ``hidden_read`` (guessed wrong).
VERDICTS = ("right", "wrong", "unseen", "hidden", "hidden_read")
#: How much worse each verdict is, to say whether a change helped: a wrong site costs
#: four unseen ones (the goals allow 0.5% wrong against 2% unseen).
_COST = {"right": 0, "hidden": 0, "unseen": 1, "wrong": 4, "hidden_read": 4}


def _weighed(wrong: int, unseen: int, hidden_read: int) -> int:
    """Sites' verdicts weighed as :data:`_COST` weighs them."""
    return (_COST["wrong"] * wrong + _COST["unseen"] * unseen
            + _COST["hidden_read"] * hidden_read)


def _add_counts(into: dict[str, int], counts: Mapping[str, int]) -> None:
    for key, n in counts.items():
        into[key] = into.get(key, 0) + n


def elevation_band(elevation_deg: float) -> str:
    """The band of :data:`ELEVATION_BAND_DEG` degrees an elevation falls in ("70-80")."""
    low = int(elevation_deg // ELEVATION_BAND_DEG) * ELEVATION_BAND_DEG
    return f"{low}-{low + ELEVATION_BAND_DEG}"


def _band_json(counts: Mapping[str, int]) -> dict[str, Any]:
    visible = counts.get("visible", 0)
    out: dict[str, Any] = {"photos": counts.get("photos", 0), "visible_sites": visible}
    for key in ("wrong", "unseen_visible", "hidden_read"):
        out[key] = counts.get(key, 0)
    out["wrong_rate"] = out["wrong"] / max(1, visible)
    out["unseen_rate"] = out["unseen_visible"] / max(1, visible)
    out["cost"] = _weighed(out["wrong"], out["unseen_visible"], out["hidden_read"])
    return out


def wrong_kind(truth: str, read: str) -> str:
    """How a site was read wrong, from its truth and reading texts (``3 red``,
    ``empty``): "phantom" (an empty site read as a tower), "missed" (a tower read
    empty), "height" (its colour right, a storey or more off), "colour" (its height
    right) or "both"."""
    if truth == "empty":
        return "phantom"
    if read == "empty":
        return "missed"
    (th, tc), (rh, rc) = truth.split(" ", 1), read.split(" ", 1)
    if tc == rc:
        return "height"
    return "colour" if th == rh else "both"


def _site_text(entry: tuple[int, str | None] | None) -> str:
    if entry is None or entry[0] == 0:
        return "empty"
    return f"{entry[0]} {entry[1]}"


def _towers(entries: Iterable[Mapping[str, Any]]) -> dict[Site, tuple[int, str | None]]:
    """Sites with a tower; an empty site may be listed (height 0) or left out alike."""
    return {Site.from_json(e): (e["height"], e["owner"]) for e in entries if e["height"]}


def site_verdicts(reading_json: Mapping[str, Any], truth: Mapping[str, Any]
                  ) -> dict[Site, tuple[str, str]]:
    """Each site's reading (``3 red``, ``empty``, ``unseen``) and its verdict (:data:`VERDICTS`).

    The one place a reading is judged, so the totals and the per-site
    comparison of two configs cannot disagree.
    """
    expected = truth["expected"]
    exp_sites = _towers(expected["sites"])
    hidden = {Site.from_json(e) for e in expected.get("unseen", [])}
    got = _towers(reading_json.get("sites", []))
    unseen = {Site.from_json(e) for e in reading_json.get("unseen", [])}
    full = _towers(truth["board"]["sites"])
    out: dict[Site, tuple[str, str]] = {}
    for i in range(54):
        site = Site.from_index(i)
        text = "unseen" if site in unseen else _site_text(got.get(site))
        if site in hidden:
            read_wrong = site not in unseen and got.get(site) != full.get(site)
            out[site] = (text, "hidden_read" if read_wrong else "hidden")
        elif site in unseen:
            out[site] = (text, "unseen")
        else:
            out[site] = (text, "right" if got.get(site) == exp_sites.get(site) else "wrong")
    return out


def compare(reading_json: Mapping[str, Any], truth: Mapping[str, Any],
            verdicts: Mapping[Site, tuple[str, str]] | None = None) -> dict[str, int]:
    """Count errors of one ``companion read`` object against a sim truth
    (``verdicts``: its :func:`site_verdicts`, when the caller has them)."""
    exp_sites = _towers(truth["expected"]["sites"])
    guessed = {Site.from_json(e): (e["height"], e["owner"])
               for e in reading_json.get("unresolved", [])}
    if verdicts is None:
        verdicts = site_verdicts(reading_json, truth)
    counts = {v: 0 for v in VERDICTS}
    for _, verdict in verdicts.values():
        counts[verdict] += 1
    out = dict(visible_sites=counts["right"] + counts["wrong"] + counts["unseen"],
               wrong=counts["wrong"], unseen_visible=counts["unseen"],
               hidden=counts["hidden"] + counts["hidden_read"],
               hidden_read=counts["hidden_read"], unresolved=0, unresolved_right=0)
    for site, (_, verdict) in verdicts.items():
        if verdict == "unseen" and site in guessed:
            out["unresolved"] += 1
            right = _site_text(guessed[site]) == _site_text(exp_sites.get(site))
            out["unresolved_right"] += int(right)
    exp_cards = {k: tuple(v["cell"]) for k, v in truth["expected"].get("cards", {}).items()}
    got_cards = {k: tuple(v["cell"]) for k, v in reading_json.get("cards", {}).items()}
    out["cards_expected"] = len(exp_cards)
    out["cards_wrong"] = sum(1 for k, v in exp_cards.items() if k in got_cards
                             and got_cards[k] != v)
    out["cards_missed"] = sum(1 for k in exp_cards if k not in got_cards)
    # a stack too hidden to be expected, read right anyway, is no error (as a hidden
    # site read right is none); read wrong, or read where there is no stack, it is
    stacks = {k: tuple(v["cell"]) for k, v in truth.get("card_stacks", {}).items()}
    out["cards_extra"] = sum(1 for k, v in got_cards.items()
                             if k not in exp_cards and stacks.get(k) != v)
    return out


DIFF_COLUMNS = ("name", "site", "truth", "a", "b", "a_verdict", "b_verdict", "change",
                "a_reason", "b_reason")


@dataclass
class Differences:
    """How the sites two configs read differently changed, from the first to the second."""

    photos: int = 0  # photos with at least one site read differently
    sites: int = 0
    better: int = 0
    worse: int = 0
    same: int = 0  # read differently but judged alike (another wrong reading, say)
    moves: dict[str, int] = field(default_factory=dict)  # "wrong->unseen": count

    @classmethod
    def merged(cls, parts: Iterable[Differences]) -> Differences:
        """Several sets' differences as one: counts and moves added."""
        out = cls()
        for d in parts:
            for f in ("photos", "sites", "better", "worse", "same"):
                setattr(out, f, getattr(out, f) + getattr(d, f))
            for move, n in d.moves.items():
                out.moves[move] = out.moves.get(move, 0) + n
        return out

    def to_json(self) -> dict[str, Any]:
        return {"photos": self.photos, "sites": self.sites, "better": self.better,
                "worse": self.worse, "same": self.same,
                "moves": dict(sorted(self.moves.items(), key=lambda kv: (-kv[1], kv[0])))}


def _read_row(name: str, image: np.ndarray, truth: Mapping[str, Any], camera: Any,
              config: Mapping[str, Any] | None, t_decode_detect: float
              ) -> tuple[dict[str, Any], dict[str, Any] | None, dict[str, str]]:
    """One photo read under one config: its CSV row, its reading's JSON (None: failed)
    and why the reader left each unseen site unseen (site code -> "covered", ...)."""
    row: dict[str, Any] = {"name": name, "kind": truth.get("kind", ""),
                           "t_decode_detect": t_decode_detect}
    try:
        reading = read_image(image, camera, truth.get("expected", {}).get("colors"),
                             config, source=name)
    except VisionError as exc:
        row["error"] = str(exc)
        return row, None, {}
    rj = reading.to_json()
    # beside the reading, not in it: the reading's JSON is the public format
    reasons = {d.site.code: d.reason for d in reading.details if d.reason}
    verdicts = site_verdicts(rj, truth)
    row.update(compare(rj, truth, verdicts))
    why: dict[str, int] = {}
    how: dict[str, int] = {}
    expected = _towers(truth["expected"]["sites"])
    for site, (text, verdict) in verdicts.items():
        if verdict == "unseen":
            key = reasons.get(site.code) or "other"
            why[key] = why.get(key, 0) + 1
        elif verdict == "wrong":
            key = wrong_kind(_site_text(expected.get(site)), text)
            how[key] = how.get(key, 0) + 1
    row["unseen_by_reason"], row["wrong_by_kind"] = why, how
    row["unseen_reasons"] = " ".join(f"{k}={n}" for k, n in sorted(why.items()))
    row["wrong_kinds"] = " ".join(f"{k}={n}" for k, n in sorted(how.items()))
    row["tone"] = reading.tone  # the tone exponent its colours were read under
    row["lift"] = reading.lift  # the raised black taken off the photo
    # the cast the colours were read under (red and blue gains; 1, 1: none)
    row["gain_red"], row["gain_blue"] = reading.gains
    row["blur"] = "" if reading.blur is None else reading.blur  # across the markers
    # the camera's elevation as the reader estimated it (the truth need not say)
    row["elevation"] = round(float(reading.pose.elevation_deg), 1)
    for k, v in reading.timings.items():
        row[f"t_{k}"] = v
    return row, rj, reasons


#: The totals (Totals fields) that add up a column of :func:`compare`'s counts.
_SUMMED = (("visible", "visible_sites"), ("wrong", "wrong"),
           ("unseen_visible", "unseen_visible"), ("hidden", "hidden"),
           ("hidden_read", "hidden_read"), ("unresolved", "unresolved"),
           ("unresolved_right", "unresolved_right"), ("cards", "cards_expected"),
           ("cards_wrong", "cards_wrong"), ("cards_missed", "cards_missed"),
           ("cards_extra", "cards_extra"))


class _Tally:
    """One config's totals and CSV rows, filled one photo at a time."""

    def __init__(self) -> None:
        self.tot = Totals()
        self.rows: list[dict[str, Any]] = []

    def add(self, row: dict[str, Any], ok: bool) -> None:
        tot = self.tot
        tot.photos += 1
        self.rows.append(row)
        if not ok:
            tot.failed += 1
            return
        for k, v in row.items():
            if k.startswith("t_") and k != "t_decode_detect":
                tot.times.setdefault(k[2:], []).append(v)
        tot.times.setdefault("decode_detect", []).append(row["t_decode_detect"])
        for name, column in _SUMMED:
            setattr(tot, name, getattr(tot, name) + row[column])
        _add_counts(tot.unseen_reasons, row["unseen_by_reason"])
        _add_counts(tot.wrong_kinds, row["wrong_by_kind"])
        _add_counts(tot.by_elevation.setdefault(elevation_band(row["elevation"]), {}), {
            "photos": 1, "visible": row["visible_sites"], "wrong": row["wrong"],
            "unseen_visible": row["unseen_visible"], "hidden_read": row["hidden_read"]})

    def write(self, csv_path: str | Path) -> None:
        with open(csv_path, "w", newline="", encoding="utf-8") as fh:
            wr = csv.DictWriter(fh, fieldnames=COLUMNS, extrasaction="ignore")
            wr.writeheader()
            for r in self.rows:
                wr.writerow({k: (round(v, 5) if isinstance(v, float) else v)
                             for k, v in r.items()})


class _Job(NamedTuple):
    """One photo read: its row under each config, the sites they read differently,
    and every site as the first read it (when asked)."""

    row_a: dict[str, Any]
    ok_a: bool
    row_b: dict[str, Any] | None
    ok_b: bool
    differences: list[dict[str, str]]
    sites: list[dict[str, Any]]

SITE_COLUMNS = ("name", "site", "truth", "read", "verdict", "reason", "guess", "doubtful",
                "elevation")


def site_rows(name: str, truth: Mapping[str, Any], reading_json: Mapping[str, Any] | None,
              reasons: Mapping[str, str] | None, elevation: Any = "") -> list[dict[str, Any]]:
    """Every site of one photo as read (:data:`SITE_COLUMNS`): what a change to the
    reader is measured on, site by site, without reading the set again. A failed
    read is every site unseen (reason ``failed``)."""
    board = _towers(truth["board"]["sites"])
    if reading_json is None:
        hidden = {Site.from_json(e) for e in truth["expected"].get("unseen", [])}
        every = [Site.from_index(i) for i in range(54)]
        verdicts = {s: ("unseen", "hidden" if s in hidden else "unseen") for s in every}
        reasons, guesses, doubtful = {s.code: "failed" for s in every}, {}, set()
    else:
        verdicts = site_verdicts(reading_json, truth)
        guesses = {Site.from_json(e): _site_text((e["height"], e["owner"]))
                   for e in reading_json.get("unresolved", [])}
        doubtful = {Site.from_json(e) for e in reading_json.get("doubtful", [])}
    return [{"name": name, "site": site.code, "truth": _site_text(board.get(site)),
             "read": text, "verdict": verdict, "reason": _reason(reasons, site, text),
             "guess": guesses.get(site, ""), "doubtful": int(site in doubtful),
             "elevation": elevation}
            for site, (text, verdict) in sorted(verdicts.items(), key=lambda kv: kv[0].index)]


def _photo_job(name: str, image: np.ndarray, truth: Mapping[str, Any], use_camera: bool,
               config: Mapping[str, Any] | None, against: Mapping[str, Any] | None,
               sites: bool = False) -> _Job:
    """Everything about one photo: its row under each config, the sites they differ on,
    and (``sites``) every site as the first config read it.

    A plain function of picklable values, so worker processes can run it.
    """
    from companion.vision.geometry import board_geometry
    from companion.vision.pose import detect_markers

    # the reference cost: decoding the frame (JPEG) and finding its markers
    ok, buf = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 90])
    t = time.perf_counter()
    img2 = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    if img2 is not None:  # (just encoded: always decodes)
        detect_markers(img2, board_geometry())
    t_ref = time.perf_counter() - t
    camera = truth.get("camera") if use_camera else None
    row_a, ra, why_a = _read_row(name, image, truth, camera, config, t_ref)
    each = site_rows(name, truth, ra, why_a, row_a.get("elevation", "")) if sites else []
    if against is None:
        return _Job(row_a, ra is not None, None, False, [], each)
    row_b, rb, why_b = _read_row(name, image, truth, camera, against, t_ref)
    return _Job(row_a, ra is not None, row_b, rb is not None,
                site_differences(name, truth, ra, rb, why_a, why_b), each)


def site_differences(name: str, truth: Mapping[str, Any], a: Mapping[str, Any] | None,
                     b: Mapping[str, Any] | None, reasons_a: Mapping[str, str] | None = None,
                     reasons_b: Mapping[str, str] | None = None) -> list[dict[str, str]]:
    """The sites read differently by two readings of one photo (``None``: the read failed).

    A failed read counts as every site unseen, so a config that loses the board
    shows as worse everywhere rather than vanishing from the comparison.
    ``reasons_a`` and ``reasons_b`` (site code -> why the reader left it
    unseen), when given, fill the ``a_reason`` and ``b_reason`` columns.
    """
    va = site_verdicts(a, truth) if a is not None else None
    vb = site_verdicts(b, truth) if b is not None else None
    hidden = {Site.from_json(e) for e in truth["expected"].get("unseen", [])}
    board = _towers(truth["board"]["sites"])
    out = []
    for i in range(54):
        site = Site.from_index(i)
        fail = ("failed", "hidden" if site in hidden else "unseen")
        ta, ja = va[site] if va is not None else fail
        tb, jb = vb[site] if vb is not None else fail
        if ta == tb:
            continue
        ca, cb = _COST[ja], _COST[jb]
        out.append({"name": name, "site": site.code, "truth": _site_text(board.get(site)),
                    "a": ta, "b": tb, "a_verdict": ja, "b_verdict": jb,
                    "change": "better" if cb < ca else "worse" if cb > ca else "same",
                    "a_reason": _reason(reasons_a, site, ta),
                    "b_reason": _reason(reasons_b, site, tb)})
    return out


def _reason(reasons: Mapping[str, str] | None, site: Site, text: str) -> str:
    if not reasons or text != "unseen":
        return ""
    return str(reasons.get(site.code, ""))


def evaluate(samples: Iterable[tuple[str, np.ndarray, Mapping[str, Any]]],
             csv_path: str | Path | None = None, use_camera: bool = True,
             config: Mapping[str, Any] | None = None,
             against: Mapping[str, Any] | None = None,
             diff_path: str | Path | None = None, workers: int = 1,
             pool: Executor | None = None, sites_path: str | Path | None = None) -> Totals:
    """Read every (name, image, truth) and tally errors; optionally write a CSV row each
    (and, to ``sites_path``, a row per site: :func:`site_rows`).

    With ``against`` (a second set of config overrides) each photo is read
    twice, once under each config; the returned totals carry the second
    config's totals (``against``) and the sites the two read differently
    (``differences``; one row each in ``diff_path``): the A/B comparison every
    change to a threshold needs, per site rather than per total. ``workers``
    photos are read at once in worker processes (the readings are the same;
    the stage timings are then taken with the other workers running), in
    ``pool`` when given (:func:`reading_pool`: one pool for several sets)
    rather than in a pool of their own.
    """
    first, second = _Tally(), (_Tally() if against is not None else None)
    diffs = Differences()
    diff_rows: list[dict[str, str]] = []
    each: list[dict[str, Any]] = []
    with ExitStack() as stack:
        if pool is None and workers > 1:
            pool = stack.enter_context(reading_pool(workers))
        for job in _jobs(samples, use_camera, config, against, pool, workers,
                         sites_path is not None):
            _add_job(job, first, second, diffs, diff_rows)
            each.extend(job.sites)
    if sites_path is not None:
        with open(sites_path, "w", newline="", encoding="utf-8") as fh:
            wr = csv.DictWriter(fh, fieldnames=SITE_COLUMNS)
            wr.writeheader()
            wr.writerows(each)
    if csv_path is not None:
        first.write(csv_path)
        if second is not None:
            p = Path(csv_path)
            second.write(p.with_name(f"{p.stem}-against{p.suffix}"))
    if diff_path is not None:
        with open(diff_path, "w", newline="", encoding="utf-8") as fh:
            wr = csv.DictWriter(fh, fieldnames=DIFF_COLUMNS)
            wr.writeheader()
            wr.writerows(diff_rows)
    tot = first.tot
    if second is not None:
        tot.against = second.tot
        tot.differences = diffs
    return tot


def _add_job(job: _Job, first: _Tally, second: _Tally | None, diffs: Differences,
             diff_rows: list[dict[str, str]]) -> None:
    first.add(job.row_a, job.ok_a)
    if second is None or job.row_b is None:
        return
    second.add(job.row_b, job.ok_b)
    rows = job.differences
    diffs.photos += int(bool(rows))
    for r in rows:
        diffs.sites += 1
        setattr(diffs, r["change"], getattr(diffs, r["change"]) + 1)
        move = f"{r['a_verdict']}->{r['b_verdict']}"
        diffs.moves[move] = diffs.moves.get(move, 0) + 1
    diff_rows.extend(rows)


@contextmanager
def reading_pool(workers: int) -> Iterator[Executor | None]:
    """Worker processes for :func:`evaluate`, shared by several sets (None: read in this one).

    Spawning a worker costs it the imports and the reader's set-up (about a
    second each); ``companion evaluate --kind both`` reads two sets in one pool.
    """
    if workers <= 1:
        yield None
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    # spawned workers: a forked copy of a process with BLAS threads can hang
    from companion.workers import quiet_worker

    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"),
                             initializer=quiet_worker) as ex:
        yield ex


def _jobs(samples: Iterable[tuple[str, np.ndarray, Mapping[str, Any]]], use_camera: bool,
          config: Mapping[str, Any] | None, against: Mapping[str, Any] | None,
          pool: Executor | None, workers: int, sites: bool = False) -> Iterator[_Job]:
    """Each photo's job, in the samples' order; in ``pool``'s worker processes if any."""
    if pool is None:
        for name, image, truth in samples:
            yield _photo_job(name, image, truth, use_camera, config, against, sites)
        return
    from collections import deque

    pending: deque[Any] = deque()
    for name, image, truth in samples:
        pending.append(pool.submit(_photo_job, name, image, dict(truth), use_camera, config,
                                   against, sites))
        if len(pending) >= 2 * max(1, workers):  # a few photos in flight, not the whole set
            yield pending.popleft().result()
    while pending:
        yield pending.popleft().result()


def sim_samples(n: int, seed: int = 1, kind: str = "mounted",
                block_jitter: tuple[float, float] = (0.0, 0.0)
                ) -> Iterable[tuple[str, np.ndarray, Mapping[str, Any]]]:
    """Labelled photos from :mod:`companion.sim` (both colour sets, tall towers, hands)."""
    from companion.sim import labelled_set

    for name, r in labelled_set(n, seed, kind, block_jitter):
        yield name, r.image, r.truth


def folder_samples(folder: str | Path) -> Iterable[tuple[str, np.ndarray, Mapping[str, Any]]]:
    """Photos with a NAME.json truth beside them (as ``python -m companion.sim`` writes)."""
    import json

    from companion.photos import IMAGE_SUFFIXES
    from companion.vision.reader import load_image

    for p in sorted(Path(folder).iterdir()):
        if p.suffix.lower() not in IMAGE_SUFFIXES:
            continue
        tj = p.with_suffix(".json")
        if not tj.exists():
            continue
        try:
            if not tj.is_file():
                raise OSError("not a regular file")
            truth = json.loads(tj.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
            reason = (exc.msg if isinstance(exc, json.JSONDecodeError) else "nested too deeply"
                      if isinstance(exc, RecursionError) else str(exc))
            raise ValueError(f"{tj}: not a truth file ({reason})") from None
        if isinstance(truth, dict) and truth.get("format") == BOARD_FORMAT:
            truth = truth_from_board(truth)
        problem = truth_problem(truth)
        if problem:
            raise ValueError(f"{tj}: not a truth file ({problem})")
        yield p.name, load_image(p), truth


def truth_from_board(board: Mapping[str, Any]) -> dict[str, Any]:
    """A ``manhattan-board/1`` file (formats.md) as a photo's truth, so photos labelled
    by another tool can be judged: its ``sites`` the board as built, its ``unseen``
    the sites the camera cannot see (a reading there costs only when it is wrong:
    ``hidden_read``), its ``cards`` and ``colors`` those of the photo (the
    colours named to the reader; without them it recognises the set), ``camera``
    (formats.md intrinsics, optional) for ``--with-camera``."""
    sites, unseen = board.get("sites"), board.get("unseen", [])
    truth: dict[str, Any] = {"kind": board.get("kind", ""), "board": {"sites": sites},
                             "expected": {"sites": sites, "unseen": unseen,
                                          "cards": board.get("cards", {})}}
    if board.get("colors") is not None:
        truth["expected"]["colors"] = board["colors"]
    if board.get("camera") is not None:
        truth["camera"] = board["camera"]
    return truth


def truth_problem(truth: Any) -> str | None:
    """What keeps a truth file from being judged against (None: nothing), found
    before any photo is read, by the parsing the judging itself does."""
    if not isinstance(truth, dict):
        return "expected an object"
    try:
        expected, board = truth["expected"], truth["board"]
        if not isinstance(expected, dict) or not isinstance(board, dict):
            return "expected and board must be objects"
        for name, value, kind in (("expected.sites", expected["sites"], list),
                                  ("board.sites", board["sites"], list),
                                  ("expected.unseen", expected.get("unseen", []), list),
                                  ("expected.cards", expected.get("cards", {}), dict)):
            if not isinstance(value, kind):
                return f"{name} must be a{'n object' if kind is dict else ' list'}"
        for e in [*expected["sites"], *board["sites"]]:
            Site.from_json(e)
            h = e["height"]
            if isinstance(h, bool) or not isinstance(h, int) or h < 0:
                return f"height {h!r}: not a whole number of storeys"
            if h and not isinstance(e["owner"], str):
                return f"owner {e['owner']!r}: not a colour"
        for e in expected.get("unseen", []):
            Site.from_json(e)
        for v in expected.get("cards", {}).values():
            tuple(int(x) for x in v["cell"])
    except KeyError as exc:
        return f"no {exc.args[0]!r}"
    except (TypeError, ValueError, AttributeError) as exc:
        return str(exc) or type(exc).__name__
    return None
