"""The names ``companion evaluate`` (companion.commands) imports; see :mod:`.evaluate`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from concurrent.futures import Executor
from pathlib import Path
from typing import Any

import numpy as np

from companion.vision.evaluate import Totals, folder_samples, reading_pool, sim_samples
from companion.vision.evaluate import evaluate as _evaluate

Item = tuple[str, np.ndarray, Mapping[str, Any]]


def rendered_set(n: int, seed: int, kind: str = "mounted",
                 block_jitter: tuple[float, float] = (0.0, 0.0)) -> Iterable[Item]:
    """``n`` photos rendered by companion.sim with their truth."""
    return sim_samples(n, seed, kind, block_jitter)


def folder_set(folder: Path) -> Iterable[Item]:
    """Photos with a NAME.json truth beside each."""
    return folder_samples(folder)


def evaluate(items: Iterable[Item], csv_path: Path | str | None = None, kind: str = "",
             use_camera: bool = False, config: Mapping[str, Any] | None = None,
             against: Mapping[str, Any] | None = None,
             diff_path: Path | str | None = None, workers: int = 1,
             pool: Executor | None = None, sites_path: Path | str | None = None) -> Totals:
    """Tally reading errors and stage times over ``items`` (see :func:`.evaluate.evaluate`)."""
    return _evaluate(items, csv_path, use_camera=use_camera, config=config, against=against,
                     diff_path=diff_path, workers=workers, pool=pool, sites_path=sites_path)


__all__ = ["Totals", "evaluate", "folder_set", "reading_pool", "rendered_set"]
