"""Measure the reader on labelled photos (renders with ground truth): ``companion evaluate``.

Per photo: visible sites read wrong, sites reported unseen while visible,
sites guessed while hidden, card errors and the time of each stage (and of the
visible sites in ``unseen`` because the view cannot tell their height, how many
the reader's guess had right: ``unresolved``, ``unresolved_right``); one CSV
row per photo and totals over the set. A site counts as visible when the
truth's ``expected`` board lists it (or lists it empty) rather than as unseen.
"""

from __future__ import annotations

import csv
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from companion.rules.board import Site
from companion.vision.errors import VisionError
from companion.vision.reader import read_image

COLUMNS = ("name", "kind", "visible_sites", "wrong", "unseen_visible", "hidden", "hidden_read",
           "cards_expected", "cards_wrong", "cards_missed", "cards_extra", "error", "t_markers",
           "t_pose", "t_sites", "t_cards", "t_total", "t_decode_detect", "tone",
           "lift", "blur", "unresolved", "unresolved_right")


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
    times: dict[str, list[float]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        med = {k: round(float(np.median(v)) * 1000, 1) for k, v in self.times.items() if v}
        return {
            "photos": self.photos, "failed": self.failed, "visible_sites": self.visible,
            "wrong": self.wrong, "unseen_visible": self.unseen_visible,
            "wrong_rate": self.wrong / max(1, self.visible),
            "unseen_rate": self.unseen_visible / max(1, self.visible),
            "hidden": self.hidden, "hidden_read": self.hidden_read,
            "unresolved": self.unresolved, "unresolved_right": self.unresolved_right,
            "cards": self.cards, "cards_wrong": self.cards_wrong,
            "cards_missed": self.cards_missed, "cards_extra": self.cards_extra,
            "card_accuracy": (self.cards - self.cards_wrong - self.cards_missed)
            / max(1, self.cards),
            "median_ms": med,
        }


def compare(reading_json: Mapping[str, Any], truth: Mapping[str, Any]) -> dict[str, int]:
    """Count errors of one ``companion read`` object against a sim truth."""
    expected = truth["expected"]
    exp_sites = {Site.from_json(e): (e["height"], e["owner"]) for e in expected["sites"]}
    hidden = {Site.from_json(e) for e in expected.get("unseen", [])}
    got = {Site.from_json(e): (e["height"], e["owner"]) for e in reading_json.get("sites", [])}
    unseen = {Site.from_json(e) for e in reading_json.get("unseen", [])}
    guessed = {Site.from_json(e): (e["height"], e["owner"])
               for e in reading_json.get("unresolved", [])}
    out = dict(visible_sites=0, wrong=0, unseen_visible=0, hidden=0, hidden_read=0,
               unresolved=0, unresolved_right=0)
    full = {Site.from_json(e): (e["height"], e["owner"]) for e in truth["board"]["sites"]}
    for i in range(54):
        site = Site.from_index(i)
        if site in hidden:
            out["hidden"] += 1
            if site not in unseen and got.get(site) != full.get(site):
                out["hidden_read"] += 1
            continue
        out["visible_sites"] += 1
        if site in unseen:
            out["unseen_visible"] += 1
            if site in guessed:
                out["unresolved"] += 1
                out["unresolved_right"] += int(guessed[site] == exp_sites.get(site))
        elif got.get(site) != exp_sites.get(site):
            out["wrong"] += 1
    exp_cards = {k: tuple(v["cell"]) for k, v in expected.get("cards", {}).items()}
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


def evaluate(samples: Iterable[tuple[str, np.ndarray, Mapping[str, Any]]],
             csv_path: str | Path | None = None, use_camera: bool = True,
             config: Mapping[str, Any] | None = None) -> Totals:
    """Read every (name, image, truth) and tally errors; optionally write a CSV row each."""
    from companion.vision.geometry import board_geometry
    from companion.vision.pose import detect_markers

    tot = Totals()
    rows = []
    g = board_geometry()
    for name, image, truth in samples:
        tot.photos += 1
        row: dict[str, Any] = {"name": name, "kind": truth.get("kind", "")}
        # the reference cost: decoding the frame (JPEG) and finding its markers
        ok, buf = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 90])
        t = time.perf_counter()
        img2 = cv2.imdecode(buf, cv2.IMREAD_COLOR)
        detect_markers(img2, g)
        row["t_decode_detect"] = time.perf_counter() - t
        camera = truth.get("camera") if use_camera else None
        try:
            reading = read_image(image, camera, truth.get("expected", {}).get("colors"),
                                 config, source=name)
        except VisionError as exc:
            tot.failed += 1
            row["error"] = str(exc)
            rows.append(row)
            continue
        res = compare(reading.to_json(), truth)
        row.update(res)
        row["tone"] = reading.tone  # the tone exponent its colours were read under
        row["lift"] = reading.lift  # the raised black taken off the photo
        row["blur"] = "" if reading.blur is None else reading.blur  # across the markers
        for k, v in reading.timings.items():
            row[f"t_{k}"] = v
            tot.times.setdefault(k, []).append(v)
        tot.times.setdefault("decode_detect", []).append(row["t_decode_detect"])
        tot.visible += res["visible_sites"]
        tot.wrong += res["wrong"]
        tot.unseen_visible += res["unseen_visible"]
        tot.hidden += res["hidden"]
        tot.hidden_read += res["hidden_read"]
        tot.unresolved += res["unresolved"]
        tot.unresolved_right += res["unresolved_right"]
        tot.cards += res["cards_expected"]
        tot.cards_wrong += res["cards_wrong"]
        tot.cards_missed += res["cards_missed"]
        tot.cards_extra += res["cards_extra"]
        rows.append(row)
    if csv_path is not None:
        with open(csv_path, "w", newline="", encoding="utf-8") as fh:
            wr = csv.DictWriter(fh, fieldnames=COLUMNS, extrasaction="ignore")
            wr.writeheader()
            for r in rows:
                wr.writerow({k: (round(v, 5) if isinstance(v, float) else v)
                             for k, v in r.items()})
    return tot


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

    from companion.vision.reader import load_image

    for p in sorted(Path(folder).iterdir()):
        if p.suffix.lower() not in (".jpg", ".jpeg", ".png"):
            continue
        tj = p.with_suffix(".json")
        if not tj.exists():
            continue
        yield p.name, load_image(p), json.loads(tj.read_text(encoding="utf-8"))
