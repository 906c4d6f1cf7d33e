"""The `companion score` and `companion play` commands, run as a user would."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from rules_helpers import EXAMPLES

from companion.rules import GameRecord, Phase


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "companion", *args], capture_output=True,
                          text=True, timeout=120, cwd=cwd)


def one_line_error(proc: subprocess.CompletedProcess[str], prefix: str) -> str:
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(prefix), lines[0]
    return lines[0]


# -- score -----------------------------------------------------------------------

def test_score_the_rulebook_examples_as_json_lines() -> None:
    names = ["rulebook-1994", "rulebook-2017", "ties-and-majorities"]
    proc = run("score", *(str(EXAMPLES / f"{n}.board.json") for n in names), "--json")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 3
    for name, line in zip(names, lines, strict=True):
        want = json.loads((EXAMPLES / f"{name}.score.json").read_text())
        assert json.loads(line)["colors"] == want["colors"]


def test_score_prints_player_totals_for_two_colour_players(tmp_path: Path) -> None:
    board = json.loads((EXAMPLES / "rulebook-1994.board.json").read_text())
    board["players"] = [{"name": "Ann", "seat": "S", "colors": ["black", "green"]},
                        {"name": "Bob", "seat": "N", "colors": ["blue", "red"]}]
    path = tmp_path / "two.json"
    path.write_text(json.dumps(board))
    proc = run("score", str(path), "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["players"] == {"Ann": 9 + 4, "Bob": 8 + 6}
    table = run("score", str(path))
    assert table.returncode == 0
    assert "player Ann: 13" in table.stdout and "black" in table.stdout


# the command modules every run loads name their heavy imports inside the commands;
# the vision package's names once made `companion score` import the reader
_LOADED = """
import json, sys
from companion.cli import main
code = main(sys.argv[1:])
print(json.dumps([code, sorted(m for m in ("numpy", "cv2", "flask", "waitress")
                                if m in sys.modules)]))
"""


@pytest.mark.parametrize("args", [["score", "rulebook-1994.board.json", "--json"],
                                  ["play", "--seed", "3"], ["games", "--data-dir", "{tmp}"],
                                  []])
def test_the_rules_commands_load_no_numpy_opencv_or_flask(args: list[str], tmp_path: Path
                                                          ) -> None:
    args = [str(EXAMPLES / a) if a.endswith(".json") else a.format(tmp=tmp_path)
            for a in args]
    proc = subprocess.run([sys.executable, "-c", _LOADED, *args], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    code, loaded = json.loads(proc.stdout.strip().splitlines()[-1])
    assert (code, loaded) == (0 if args else 2, [])  # no command: the help, status 2


def test_the_vision_packages_names_still_import() -> None:
    import companion.vision as vision
    from companion.vision import BoardNotFoundError, read_image
    from companion.vision.errors import VisionError
    from companion.vision.reader import read_image as direct

    assert read_image is direct and issubclass(BoardNotFoundError, VisionError)
    assert sorted(vision.__all__) == sorted(vision._HOMES)
    with pytest.raises(AttributeError, match="has no attribute 'nothing'"):
        vision.nothing  # noqa: B018


BAD_FILES = {
    "not-json.json": ("text", "this is not JSON\n", "malformed JSON: Expecting value"),
    "binary.json": ("bytes", b"\x89PNG\r\n\x1a\n\x00\xff\xfe", "not a text file"),
    "malformed.json": ("text", '{"sites": [}', "malformed JSON"),
    "colour.json": ("json", {"sites": [{"city": 0, "row": 0, "col": 0, "height": 1,
                                        "owner": "pink"}]}, "unknown colour 'pink'"),
    "range.json": ("json", {"sites": [{"city": 0, "row": 3, "col": 0, "height": 1,
                                       "owner": "red"}]}, "site out of range"),
    "negative.json": ("json", {"sites": [{"city": 0, "row": 0, "col": 0, "height": -3,
                                          "owner": "red"}]},
                      "height must be a positive whole number, not -3"),
    "disagree.json": ("json", {"sites": [{"city": 0, "row": 0, "col": 0, "height": 2,
                                          "owner": "red",
                                          "blocks": [{"color": "red", "storeys": 3}]}]},
                      "height 2 disagrees with its blocks (3 storeys)"),
    "owner.json": ("json", {"sites": [{"city": 0, "row": 0, "col": 0, "height": 3,
                                       "owner": "blue",
                                       "blocks": [{"color": "red", "storeys": 3}]}]},
                   "owner 'blue' is not the top block's colour 'red'"),
    "duplicate.json": ("json", {"sites": [
        {"city": 1, "row": 1, "col": 1, "height": 1, "owner": "red"},
        {"city": 1, "row": 1, "col": 1, "height": 2, "owner": "blue"}]},
        "site Sydney C is listed twice"),
    "array.json": ("json", [1, 2], "board JSON must be an object"),
    "unseen.json": ("json", {"sites": [], "unseen": 3}, "'unseen' must be a list"),
}


def _write(tmp_path: Path, name: str) -> Path:
    kind, content, _ = BAD_FILES[name]
    path = tmp_path / name
    if kind == "bytes":
        path.write_bytes(content)  # type: ignore[arg-type]
    elif kind == "text":
        path.write_text(content)  # type: ignore[arg-type]
    else:
        path.write_text(json.dumps(content))
    return path


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_score_bad_input_is_one_line_on_stderr(tmp_path: Path, name: str) -> None:
    path = _write(tmp_path, name)
    proc = run("score", str(path), "--json")
    line = one_line_error(proc, f"companion score: {path}: ")
    assert BAD_FILES[name][2] in line
    assert proc.returncode == 1
    assert proc.stdout == ""


def test_score_missing_file_and_folder(tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    line = one_line_error(run("score", str(missing)), "companion score: ")
    assert line == f"companion score: {missing}: no such file"
    line = one_line_error(run("score", str(tmp_path)), "companion score: ")
    assert line == f"companion score: {tmp_path}: is a folder, not a file"


def test_score_goes_on_after_a_bad_file_and_still_fails(tmp_path: Path) -> None:
    bad = _write(tmp_path, "negative.json")
    good = EXAMPLES / "rulebook-1994.board.json"
    proc = run("score", str(good), str(bad), str(good), "--json")
    assert proc.returncode == 1
    assert len(proc.stdout.strip().splitlines()) == 2
    assert len(proc.stderr.strip().splitlines()) == 1
    assert "Traceback" not in proc.stderr


# -- play ----------------------------------------------------------------------------

@pytest.mark.parametrize(("args", "rounds", "players"), [
    (["--bots", "4", "--seed", "3", "--bot-kind", "random"], 4, 4),
    (["--bots", "3", "--seed", "4", "--bot-kind", "random", "--variant", "monster",
      "--no-build", "forfeit"], 6, 3),
    (["--bots", "2", "--seed", "5", "--bot-kind", "random", "--edition", "2017",
      "--variant", "slow-growth", "--variant", "anti-trust"], 6, 2),
])
def test_play_json_is_a_valid_record(tmp_path: Path, args: list[str], rounds: int,
                                     players: int) -> None:
    out = tmp_path / "game.json"
    proc = run("play", *args, "--json", "--record", str(out))
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data == json.loads(out.read_text())
    rec = GameRecord.from_json(data)  # checks every move and every round score
    final = rec.replay()
    assert final.phase is Phase.OVER
    assert len(data["rounds"]) == rounds
    assert len(data["header"]["players"]) == players
    assert data["header"]["track_cards"] is True
    assert len(data["result"]["standings"]) == players


def test_play_is_reproducible_from_the_seed() -> None:
    a = run("play", "--seed", "7", "--bot-kind", "random", "--json")
    b = run("play", "--seed", "7", "--bot-kind", "random", "--json")
    assert a.returncode == 0 and a.stdout == b.stdout


def test_play_text_output() -> None:
    proc = run("play", "--bots", "4", "--seed", "1", "--bot-kind", "random")
    assert proc.returncode == 0, proc.stderr
    assert "== Round 1 (start: Player 1 (random)) ==" in proc.stdout
    assert "== Round 4 (start: Player 4 (random)) ==" in proc.stdout
    assert "-- Scores after round 4 --" in proc.stdout
    assert "Final standings:" in proc.stdout


@pytest.mark.parametrize(("args", "message"), [
    (["--bot-kind", "smart"], "companion play: unknown bot 'smart' (known: random, greedy)"),
    (["--bot-kind", "random,greedy"], "companion play: --bot-kind names 2 bots for 4 players"),
    (["--variant", "kaiju"], "companion play: unknown variant 'kaiju'"),
    (["--variant", "monster", "--variant", "godzilla"],
     "companion play: only one monster at a time: godzilla, monster"),
    (["--edition", "chess"], "companion play: unknown edition 'chess'"),
])
def test_play_bad_options_are_one_line(args: list[str], message: str) -> None:
    line = one_line_error(run("play", *args), "companion play: ")
    assert line.startswith(message)
