"""Reductions over a short last axis (three colour channels, a few colour classes).

NumPy reduces ``x.sum(axis=-1)`` or ``x.max(axis=1)`` of an (N, 3) array by
calling its inner loop once per row: on the reader's tens of thousands of
hypotheses that costs ten times the elementwise operations that give the
same numbers. These helpers are those elementwise operations, and give
exactly what the NumPy reductions give (the reader's results must not move).
"""

from __future__ import annotations

import numpy as np

from companion.vision.geometry import FloatArray


def sum_axis(x: FloatArray, axis: int) -> FloatArray:
    """``np.sum(x, axis=axis)`` for a short axis, added left to right as NumPy adds
    fewer than eight terms. (NumPy starts from +0.0: it differs only in the sign of
    a sum of negative zeros, which the squares and counts summed here never are.)
    Floats only: booleans would be or-ed, not counted."""
    parts = np.moveaxis(x, axis, 0)
    out: FloatArray = parts[0].copy()
    for k in range(1, parts.shape[0]):
        out += parts[k]
    return out


def sum_last(x: FloatArray) -> FloatArray:
    """``np.sum(x, axis=-1)`` for a short last axis (:func:`sum_axis`)."""
    return sum_axis(x, -1)


def min_last(x: FloatArray) -> FloatArray:
    """``np.min(x, axis=-1)`` (NaN wins, as there)."""
    out: FloatArray = x[..., 0].copy()
    for k in range(1, x.shape[-1]):
        np.minimum(out, x[..., k], out=out)
    return out


def max_last(x: FloatArray) -> FloatArray:
    """``np.max(x, axis=-1)`` (NaN wins, as there)."""
    out: FloatArray = x[..., 0].copy()
    for k in range(1, x.shape[-1]):
        np.maximum(out, x[..., k], out=out)
    return out
