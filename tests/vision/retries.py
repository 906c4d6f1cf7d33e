"""The marker detector's looks as some vision tests were written with."""

from __future__ import annotations

from typing import Any

from companion.vision.settings import section


def _middle_look(entry: dict[str, Any]) -> bool:
    """The look that reads each cell from its middle (pose.retry's last entry, since
    the eighty-fifth session)."""
    return "perspectiveRemoveIgnoredMarginPerCell" in entry


def looks_before_the_middle() -> list[dict[str, Any]]:
    """``pose.retry`` without the look at the cells' middles."""
    return [e for e in section("pose")["retry"] if not _middle_look(e)]


def without_middle_look() -> dict[str, Any]:
    """``pose`` overrides: the detector as shipped, less the look at the cells'
    middles (a small blurred marker's bits read away from the border's bleed). For
    tests whose subject is not the markers but a reading made from the ones found
    when they were written."""
    return {"retry": looks_before_the_middle()}


def finer_look_under_two() -> dict[str, Any]:
    """``pose`` overrides: the detector as it was before its looks changed. The first
    look sampled each cell at 4 pixels (now 8: ``pose.first``), and the finer look at 8
    ran only when it found under two markers (now a look at 4 whenever a marker is
    missing: pose.retry's first entry; and a look at the cells' middles, the last).

    For tests whose subject is not the markers but a reading made from the pose
    they were written for."""
    retry = looks_before_the_middle()
    return {"first": {}, "retry": [{"below": 2, "perspectiveRemovePixelPerCell": 8},
                                   *retry[1:]]}
