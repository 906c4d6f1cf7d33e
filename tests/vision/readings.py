"""Helpers for tests that read a labelled photo with and without one step of the
reader and compare the two site by site."""

from __future__ import annotations

from typing import Any

import numpy as np

from companion.rules import Site
from companion.vision.evaluate import site_verdicts
from companion.vision.reader import read_image


def read_rendered(rendered: Any, config: dict[str, Any] | None = None) -> Any:
    """``rendered`` (a labelled render) read with its colours named, without a camera file."""
    return read_image(rendered.image, None, list(rendered.truth["expected"]["colors"]), config)


def detail(reading: Any, site: Site) -> Any:
    """The reader's detail (score, margin, reason, ...) for ``site``."""
    return next(d for d in reading.details if d.site == site)


def verdict_changes(now: Any, before: Any, truth: Any) -> dict[Site, tuple[Any, Any]]:
    """The sites whose (reading, verdict) ``now`` differs from ``before``'s: site ->
    (before, now)."""
    v_now = site_verdicts(now.to_json(), truth)
    v_before = site_verdicts(before.to_json(), truth)
    return {s: (v_before[s], v_now[s]) for s in v_now if v_now[s] != v_before[s]}


def recolour_all_by_nearness(results: Any, model: Any, fitted: Any) -> None:
    """``sites.recolour_tops`` as it was until the eighty-sixth session: every top its
    nearest colour under the re-centred colours, whatever decided its colour (a washed
    top's side face included). Monkeypatched in for tests of what that rule read."""
    for r in results:
        if r.height and r.top_feature is not None:
            r.color = fitted.names[int(np.argmin(fitted.distance2(r.top_feature[None])))]
