"""Cheap change detection for the live table, and what changed between two readings.

Every camera frame goes through :class:`MotionGate` (a few hundred microseconds
on a 160-pixel-wide copy); the full read only runs once the scene has been
still for a while (:class:`StillnessDetector`). :func:`changed_sites` compares
two readings; :func:`rank_builds` ranks the rules engine's legal builds by
how well each explains a new reading.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np

from companion.rules.board import Site, SiteView

DEFAULTS: dict[str, Any] = {
    "width": 160,
    "diff_threshold": 18,
    "moving_fraction": 0.002,
    "background_rate": 0.05,
    "skin_fraction": 0.004,
    "still_seconds": 0.4,
}


@dataclass
class GateResult:
    moving: bool
    moving_fraction: float
    hand: bool


@dataclass
class MotionGate:
    """Frame differencing against a running background on a tiny copy of the frame.

    ``board_mask`` (optional, full-resolution uint8) restricts the skin test
    to the board area, where a hand means a move is being made.
    """

    config: Mapping[str, Any] = field(default_factory=dict)
    board_mask: np.ndarray | None = None
    _bg: np.ndarray | None = field(default=None, repr=False)
    _mask_small: np.ndarray | None = field(default=None, repr=False)
    last: GateResult | None = None

    def _cfg(self, key: str) -> Any:
        return self.config.get(key, DEFAULTS[key])

    def check(self, image: np.ndarray) -> GateResult:
        """Update with one BGR frame; return whether it moves and whether a hand shows."""
        h, w = image.shape[:2]
        tw = int(self._cfg("width"))
        th = max(1, int(round(h * tw / w)))
        small = cv2.resize(image, (tw, th), interpolation=cv2.INTER_AREA)
        grey = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY).astype(np.float32)
        if self._bg is None or self._bg.shape != grey.shape:
            self._bg = grey.copy()
            self.last = GateResult(False, 0.0, False)
            return self.last
        diff = cv2.absdiff(grey, self._bg)
        moving_px = diff > float(self._cfg("diff_threshold"))
        frac = float(moving_px.mean())
        cv2.accumulateWeighted(grey, self._bg, float(self._cfg("background_rate")))
        hand = False
        if moving_px.any():
            ycc = cv2.cvtColor(small, cv2.COLOR_BGR2YCrCb)
            skin = cv2.inRange(ycc, (40, 135, 85), (255, 180, 135)) > 0
            skin &= moving_px
            if self.board_mask is not None:
                if self._mask_small is None or self._mask_small.shape != grey.shape:
                    self._mask_small = cv2.resize(self.board_mask, (tw, th),
                                                  interpolation=cv2.INTER_NEAREST) > 0
                skin &= self._mask_small
            hand = float(skin.mean()) > float(self._cfg("skin_fraction"))
        self.last = GateResult(frac > float(self._cfg("moving_fraction")) or hand, frac, hand)
        return self.last

    def update(self, image: np.ndarray, timestamp: float = 0.0) -> bool:
        """The controller's protocol: True while something moves."""
        return self.check(image).moving


@dataclass
class StillnessDetector:
    """Says when the scene has settled: still for ``still_seconds`` after some motion."""

    still_seconds: float = 0.4
    _since: float | None = None
    _armed: bool = True

    def update(self, moving: bool, timestamp: float) -> bool:
        """Feed one frame's motion flag; True exactly once per settle."""
        if moving:
            self._since = None
            self._armed = True
            return False
        if self._since is None:
            self._since = timestamp
        if self._armed and timestamp - self._since >= self.still_seconds:
            self._armed = False
            return True
        return False

    @property
    def still(self) -> bool:
        return self._since is not None and not self._armed


def changed_sites(before: Any, after: Any) -> list[Site]:
    """Sites whose height or top colour differ between two readings (both seen)."""
    unseen = set(getattr(before, "unseen", ())) | set(getattr(after, "unseen", ()))
    b: Mapping[Site, SiteView] = before.sites
    a: Mapping[Site, SiteView] = after.sites
    out = []
    for site in sorted(set(b) | set(a)):
        if site in unseen:
            continue
        if b.get(site) != a.get(site):
            out.append(site)
    return out


def rank_builds(candidates: Iterable[Any], before: Mapping[Site, SiteView], after: Any,
                card_reads: Mapping[Any, tuple[int, int]] | None = None
                ) -> list[tuple[Any, float]]:
    """Rank candidate builds by how well they explain the new reading ``after``.

    A candidate is a rules-engine ``Build`` (``.seat .card .site .block``) or a
    ``(site, colour, storeys)`` triple. Each is scored on the site it changes
    (the new reading should show the old height plus the block's storeys,
    topped by its colour), on every other site staying as it was, and on the
    card read for its seat. Highest score first.
    """
    after_sites: Mapping[Site, SiteView] = after.sites
    unseen = set(getattr(after, "unseen", ()))
    cards = dict(card_reads if card_reads is not None else getattr(after, "cards", {}) or {})
    changed = {s for s in set(before) | set(after_sites)
               if s not in unseen and before.get(s) != after_sites.get(s)}
    out: list[tuple[Any, float]] = []
    for cand in candidates:
        if isinstance(cand, tuple):
            site, colour, storeys = cand
            seat = card = None
        else:
            site, colour, storeys = cand.site, cand.block.color, cand.block.storeys
            seat, card = cand.seat, cand.card
        old = before.get(site)
        want = SiteView((old.height if old else 0) + int(storeys), str(colour))
        score = 0.0
        if site in unseen:
            score += 0.5  # cannot be checked: neither for nor against
        else:
            got = after_sites.get(site)
            if got == want:
                score += 3.0
            elif got is not None and got.owner == want.owner:
                score += 1.0 - 0.5 * min(abs(got.height - want.height), 2)
            else:
                score -= 2.0
        score -= 1.0 * len(changed - {site})  # other sites should not have changed
        if seat is not None and card is not None and seat in cards:
            score += 1.5 if tuple(cards[seat]) == (card.row, card.col) else -1.5
        out.append((cand, score))
    out.sort(key=lambda t: -t[1])
    return out


def rank_legal_builds(state: Any, after: Any) -> list[tuple[Any, float]]:
    """The rules engine's legal builds for the player to move, ranked against ``after``."""
    from companion.rules import Build, legal_moves

    builds: Sequence[Any] = [m for m in legal_moves(state) if isinstance(m, Build)]
    return rank_builds(builds, state.board.views(), after)
