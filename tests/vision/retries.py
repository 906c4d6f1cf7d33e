"""The marker detector's retries as some vision tests were written with."""

from __future__ import annotations

from typing import Any

from companion.vision.settings import section


def finer_look_under_two() -> dict[str, Any]:
    """``pose`` overrides: the finer look (pose.retry's first entry) only when the first
    look finds under two markers, as before it ran whenever a marker is missing.

    For tests whose subject is not the markers but a reading made from the pose
    they were written for."""
    retry = section("pose")["retry"]
    return {"retry": [{**retry[0], "below": 2}, *retry[1:]]}
