"""The suite's header: the pinned packages' versions in use (tests/conftest.py)."""

from __future__ import annotations

from importlib.metadata import version

from tests.conftest import CONSTRAINTS, pinned_versions, version_notes


def test_a_constraints_files_pins_are_read() -> None:
    text = ("# why\nnumpy==2.4.6\nflask>=3\n  opencv-python-headless == 5.0.0.93  # the reader\n"
            "pillow==11.0; platform_machine != 'armv7l'\n")
    assert pinned_versions(text) == {"numpy": "2.4.6", "opencv-python-headless": "5.0.0.93",
                                     "pillow": "11.0"}


def test_the_shipped_constraints_pin_numpy_and_opencv() -> None:
    assert set(pinned_versions(CONSTRAINTS.read_text(encoding="utf-8"))) == {
        "numpy", "opencv-python-headless"}


def test_a_version_other_than_the_pin_is_noted() -> None:
    numpy = version("numpy")
    assert version_notes({"numpy": numpy}) == [f"pinned packages: numpy {numpy}"]
    assert version_notes({"numpy": "0.1", "no-such-package-here": "1.0"}) == [
        f"pinned packages: no-such-package-here not installed, numpy {numpy}",
        f"note: numpy is {numpy}, not 0.1 as constraints.txt pins: exact readings may "
        "differ (make test installs the pinned versions)",
        "note: no-such-package-here is not installed, not 1.0 as constraints.txt pins: exact "
        "readings may differ (make test installs the pinned versions)"]
