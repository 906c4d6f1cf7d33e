"""The marker detector's looks as some vision tests were written with."""

from __future__ import annotations

from typing import Any

from companion.vision.settings import section


def finer_look_under_two() -> dict[str, Any]:
    """``pose`` overrides: the detector as it was before its looks changed. The first
    look sampled each cell at 4 pixels (now 8: ``pose.first``), and the finer look at 8
    ran only when it found under two markers (now a look at 4 whenever a marker is
    missing: pose.retry's first entry).

    For tests whose subject is not the markers but a reading made from the pose
    they were written for."""
    retry = section("pose")["retry"]
    return {"first": {}, "retry": [{"below": 2, "perspectiveRemovePixelPerCell": 8},
                                   *retry[1:]]}
