"""`companion run` options of the live loop: stillness and the resting-arm timeout."""

from __future__ import annotations

import pytest

from companion.cli import _load_extra_commands, build_parser, main
from companion.controller import Controller
from companion.rules import make_config
from companion.session import GameSession


def _parser():
    _load_extra_commands()
    return build_parser()


def test_the_arm_timeout_reaches_the_controllers_arm_watch() -> None:
    args = _parser().parse_args(["run", "--still", "0.4", "--arm-timeout", "2.5"])
    assert (args.still, args.arm_timeout) == (0.4, 2.5)
    ctl = Controller(GameSession(make_config(2)), lambda image, pose=None: None,
                     change_config={"arm_timeout_seconds": args.arm_timeout})
    assert ctl.arm_watch.timeout_seconds == 2.5
    # without the option the vision config's value holds
    assert _parser().parse_args(["run"]).arm_timeout is None
    assert Controller(GameSession(make_config(2)),
                      lambda image, pose=None: None).arm_watch.timeout_seconds == 5.0


@pytest.mark.parametrize(("option", "value", "message"), [
    ("--arm-timeout", "soon", "argument --arm-timeout: not a number of seconds: 'soon'"),
    ("--arm-timeout", "-1", "argument --arm-timeout: seconds must be from 0 to 3600, not -1"),
    ("--still", "nan", "argument --still: seconds must be from 0 to 3600, not nan"),
])
def test_bad_seconds_are_a_usage_error(capsys: pytest.CaptureFixture[str], option: str,
                                       value: str, message: str) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["run", option, value])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines()[-1] == f"companion run: error: {message}"


def test_a_malformed_calibrated_camera_stops_run_before_it_starts(
        tmp_path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Checked at start: read per frame, it would fail every frame instead."""
    from calibration import file as calfile

    monkeypatch.setenv("COMPANION_BACKEND", "fake")
    cal = tmp_path / "calibration.json"
    calfile.update(cal, "camera", {"dist_coeffs": [0, 0, 0, 0, 0]})
    code = main(["run", "--data-dir", str(tmp_path / "data"), "--calibration", str(cal),
                 "--camera", "fake", "--leds", "fake", "--buttons", "fake"])
    err = capsys.readouterr().err.strip()
    assert code != 0 and len(err.splitlines()) == 1
    assert not (tmp_path / "data").exists()  # nothing started
    assert err == (f"companion run: {cal}: camera: malformed camera JSON: "
                   "'camera_matrix'")


def test_a_port_out_of_range_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["run", "--port", "99999"])
    assert exc.value.code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        "companion run: error: argument --port: a port is 0-65535 (0: any free one), got 99999")


@pytest.mark.parametrize(("content", "message"), [
    (None, "{game}: no such file"),
    ("{", "{game}: malformed JSON at line 1"),
    ("[]", "{game}: the set-up must be an object, not list"),
    ('{"format": "manhattan-game/1"}', "{game}: the set-up needs a list of players"),
])
def test_a_bad_game_file_stops_run_before_it_starts(
        tmp_path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        content: str | None, message: str) -> None:
    monkeypatch.setenv("COMPANION_BACKEND", "fake")
    game = tmp_path / "game.json"
    if content is not None:
        game.write_text(content, encoding="utf-8")
    code = main(["run", "--data-dir", str(tmp_path / "data"), "--game", str(game),
                 "--camera", "fake", "--leds", "fake", "--buttons", "fake"])
    assert code == 1
    assert capsys.readouterr().err.strip() == f"companion run: {message.format(game=game)}"
    assert not (tmp_path / "data").exists()  # nothing started
