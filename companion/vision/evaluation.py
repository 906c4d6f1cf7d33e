"""Reading accuracy over a labelled set: one CSV row per image, and totals.

The set is rendered by the simulated table (seeded, labelled with ground
truth) or read from a folder of photos with ``<name>.json`` truth files as
written by ``Rendered.save`` / ``python -m companion.sim``.
"""

from __future__ import annotations

import csv
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

FIELDS = ["image", "kind", "visible", "wrong", "unseen_visible", "cards", "card_errors",
          "error", "t_read_s", "wrong_sites"]


@dataclass
class Totals:
    images: int = 0
    failed: int = 0
    visible: int = 0
    wrong: int = 0
    unseen_visible: int = 0
    cards: int = 0
    card_errors: int = 0
    read_s: float = 0.0

    def to_json(self) -> dict[str, Any]:
        read = max(1, self.images - self.failed)
        return {
            "images": self.images, "failed": self.failed, "visible_sites": self.visible,
            "wrong": self.wrong, "wrong_rate": round(self.wrong / max(1, self.visible), 5),
            "unseen_visible": self.unseen_visible,
            "unseen_visible_rate": round(self.unseen_visible / max(1, self.visible), 5),
            "cards": self.cards, "card_errors": self.card_errors,
            "card_accuracy": round(1 - self.card_errors / max(1, self.cards), 5),
            "mean_read_s": round(self.read_s / read, 3),
            "goals": {"wrong_rate": 1 / 200, "unseen_visible_rate": 1 / 50,
                      "card_accuracy": 0.99},
        }


def score_reading(truth: dict[str, Any], reading: dict[str, Any]) -> dict[str, Any]:
    """Compare a ``companion read`` object with a renderer truth dict."""
    board = truth["board"]
    expected = truth.get("expected", {})
    true_sites = {(s["city"], s["row"], s["col"]): (s["height"], s["owner"])
                  for s in board["sites"]}
    hidden = {(u["city"], u["row"], u["col"]) for u in expected.get("unseen", [])}
    got = {(s["city"], s["row"], s["col"]): (s["height"], s["owner"])
           for s in reading.get("sites", [])}
    unseen = {(u["city"], u["row"], u["col"]) for u in reading.get("unseen", [])}
    visible = wrong = unseen_visible = 0
    wrong_sites = []
    for i in range(54):
        key = (i // 9, (i % 9) // 3, i % 3)
        if key in hidden:
            continue
        visible += 1
        if key in unseen:
            unseen_visible += 1
        elif true_sites.get(key) != got.get(key):
            wrong += 1
            wrong_sites.append(f"{key[0]}:{key[1]}{key[2]}={got.get(key)}/{true_sites.get(key)}")
    cards = expected.get("cards", {})
    card_errors = sum(1 for seat, c in cards.items()
                      if reading.get("cards", {}).get(seat, {}).get("cell") != c["cell"])
    return {"visible": visible, "wrong": wrong, "unseen_visible": unseen_visible,
            "cards": len(cards), "card_errors": card_errors, "wrong_sites": wrong_sites}


def rendered_set(n: int, seed: int, kind: str) -> Iterator[tuple[str, np.ndarray, dict[str, Any]]]:
    from companion.sim import sample_photo

    for k in range(n):
        s = seed + k
        r = sample_photo(s, kind, tall=(s % 3 == 0), hands=(1 if s % 5 == 0 else 0),
                         colors=("2017" if s % 2 else "classic"))
        yield f"{kind}-{s}", r.image, r.truth


def folder_set(folder: Path) -> Iterator[tuple[str, np.ndarray, dict[str, Any]]]:
    from companion.vision.reader import load_image

    for truth_path in sorted(folder.glob("*.json")):
        for ext in (".jpg", ".png"):
            img_path = truth_path.with_suffix(ext)
            if img_path.exists():
                yield (img_path.name, load_image(img_path),
                       json.loads(truth_path.read_text(encoding="utf-8")))
                break


def evaluate(items: Iterator[tuple[str, np.ndarray, dict[str, Any]]], csv_path: Path | None,
             kind: str = "", use_camera: bool = False) -> Totals:
    from companion.vision.reader import read_image

    totals = Totals()
    out = open(csv_path, "w", newline="", encoding="utf-8") if csv_path else None
    writer = csv.DictWriter(out, FIELDS) if out else None
    if writer:
        writer.writeheader()
    try:
        for name, image, truth in items:
            totals.images += 1
            row: dict[str, Any] = {"image": name, "kind": kind}
            colors = truth["board"].get("colors")
            t0 = time.perf_counter()
            try:
                reading = read_image(image, camera=truth.get("camera") if use_camera else None,
                                     colors=colors).to_json()
            except ValueError as exc:
                totals.failed += 1
                row["error"] = str(exc)
                if writer:
                    writer.writerow(row)
                continue
            dt = time.perf_counter() - t0
            totals.read_s += dt
            res = score_reading(truth, reading)
            totals.visible += res["visible"]
            totals.wrong += res["wrong"]
            totals.unseen_visible += res["unseen_visible"]
            totals.cards += res["cards"]
            totals.card_errors += res["card_errors"]
            row.update({k: res[k] for k in ("visible", "wrong", "unseen_visible", "cards",
                                            "card_errors")},
                       t_read_s=round(dt, 4), wrong_sites=" ".join(res["wrong_sites"]))
            if writer:
                writer.writerow(row)
    finally:
        if out:
            out.close()
    return totals
