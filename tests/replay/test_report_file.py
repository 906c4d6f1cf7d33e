"""`companion replay --html OUT`: a report that cannot be written is refused before a
photo is read, and one lost at the end costs the report alone, not the replay."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import companion.commands as commands
from companion.cli import main
from tests.replay.photogame import copy_photos

COLORS = ["--colors", "red,blue,green,black"]
MOVES = ["S c12 red1@0E", "N c10 green1@0E", "S c12 red1@0E", "N c01 black3@1S",
         "S c21 red3@1S", "N c11 green1@3C"]


def test_a_report_with_no_folder_is_refused_before_reading(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(commands, "read_folder", lambda *a, **k: pytest.fail("read"))
    missing = tmp_path / "no" / "game.html"
    assert main(["replay", str(tmp_path), "--html", str(missing)]) == 1
    assert capsys.readouterr().err == (
        f"companion replay: --html {missing}: no folder {missing.parent} to write it in\n")
    assert main(["replay", str(tmp_path), "--html", str(tmp_path)]) == 1
    assert capsys.readouterr().err == (
        f"companion replay: --html {tmp_path}: a folder, not a file\n")


def test_a_report_lost_at_the_end_leaves_the_replay_printed(
        classic_game: tuple[Path, list[str]], tmp_path: Path,
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    folder, names = classic_game
    copy = copy_photos(folder, names, tmp_path / "game")
    out_dir = tmp_path / "reports"
    out_dir.mkdir()
    report = out_dir / "game.html"
    read = commands.read_folder

    def read_then_lose_the_folder(*args: object, **kwargs: object) -> object:
        # the folder goes while the photos are read (a card pulled, a share unmounted)
        got = read(*args, **kwargs)  # type: ignore[arg-type]
        out_dir.rmdir()
        return got

    monkeypatch.setattr(commands, "read_folder", read_then_lose_the_folder)
    assert main(["replay", str(copy), "--json", "--html", str(report), *COLORS]) == 1
    captured = capsys.readouterr()
    assert [m["notation"] for m in json.loads(captured.out)["moves"]] == MOVES
    assert captured.err == (f"companion replay: --html {report}: not written "
                            "(No such file or directory)\n")
    # written when it can be: the same moves in the page
    monkeypatch.setattr(commands, "read_folder", read)
    out_dir.mkdir()
    assert main(["replay", str(copy), "--html", str(report), *COLORS]) == 0
    assert capsys.readouterr().out.splitlines()[:len(MOVES)] == MOVES
    page = report.read_text(encoding="utf-8")
    assert page.startswith("<!doctype html>") and all(m in page for m in MOVES)
