"""The live controller over a game the independent ray tracer photographed from a stand.

``tests.replay.raygame`` shoots a seeded bot game with one mounted camera, a
still per move; here the controller (the live table: motion gate, stillness,
change localisation, new-block fit, the rules' ranking) watches those stills as
a camera would film them: the empty board first, then each still held for a
second at 15 fps, with an arm reaching in over the near edge between them (a
block appears only with a hand: a block that pops up between two frames is too
small a change for the motion gate, by design). The game's own camera file is
the live table's calibration.

    python -m tests.replay.raygame DIR --players 2 --turns 16 --seed 53 --kind mounted
    python -m tests.controller.raystand DIR...  # prints the moves against the truth

The empty board is shot into DIR (``EMPTY.png``) the first time, from the
game's seed: the folder's ``game.json`` and ``truth.json`` say which game.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import cv2
import numpy as np

FPS = 15.0
ARM_FRAMES = 5
STILL_FRAMES = 15


def empty_board(folder: Path) -> np.ndarray:
    """The game's table before its first move, from its stand (shot once, then kept)."""
    path = folder / "EMPTY.png"
    if not path.exists():
        from tests.replay.raygame import _table

        game = json.loads((folder / "game.json").read_text(encoding="utf-8"))
        truth = json.loads((folder / "truth.json").read_text(encoding="utf-8"))
        if truth.get("kind") != "mounted":
            raise ValueError(f"{folder}: not a game shot from a stand (kind {truth.get('kind')})")
        table = _table(len(game["players"]), len(truth["moves"]), int(truth["seed"]), "mounted",
                       game.get("edition", "classic"))
        shot, _ = table.shoot(0, 999)
        cv2.imwrite(str(path), shot)
    return _load(path)


def _load(path: Path) -> np.ndarray:
    image = cv2.imread(str(path), cv2.IMREAD_COLOR)
    if image is None:
        raise ValueError(f"{path}: unreadable")
    return np.asarray(image)


def _with_arm(image: np.ndarray, k: int) -> np.ndarray:
    """The frame with an arm (a broad skin-toned stroke) in from the near edge."""
    h, w = image.shape[:2]
    reach = min(k, ARM_FRAMES - 1 - k)
    out = image.copy()
    cv2.line(out, (int(w * (0.3 + 0.1 * k)), h + 20),
             (int(w * 0.5), int(h * (0.9 - 0.08 * reach))), (120, 150, 200), max(8, w // 21))
    return out


def frames(folder: Path) -> Iterator[tuple[np.ndarray, float]]:
    """(image, timestamp): the empty board, then each still after an arm's visit."""
    stills = [empty_board(folder)] + [_load(p) for p in sorted(folder.glob("IMG_*.png"))]
    t = 0.0
    for n, still in enumerate(stills):
        for k in range(ARM_FRAMES if n else 0):
            yield _with_arm(still, k), t
            t += 1 / FPS
        for _ in range(STILL_FRAMES):
            yield still, t
            t += 1 / FPS


def run(folder: Path, camera: bool = True) -> dict[str, Any]:
    """The moves the live table records, the truth's, and its warnings."""
    from companion.controller import Controller
    from companion.pipeline import VisionReader
    from companion.rules import Commit, Seat, make_config
    from companion.session import GameSession

    game = json.loads((folder / "game.json").read_text(encoding="utf-8"))
    truth = json.loads((folder / "truth.json").read_text(encoding="utf-8"))
    config = make_config([(p["name"], Seat(p["seat"]), p["colors"]) for p in game["players"]],
                         edition=game.get("edition", "classic"))
    first = json.loads((folder / "IMG_000.json").read_text(encoding="utf-8"))
    session = GameSession(config)
    ctl = Controller(session, VisionReader(camera=first["camera"] if camera else None,
                                           colors=list(config.colors)))
    for image, t in frames(folder):
        ctl.process(image, t)
    builds = [e for e in session.record.effective() if not isinstance(e.move, Commit)]
    return {"recorded": [str(e.move) for e in builds], "truth": list(truth["moves"]),
            "doubtful": [e.doubtful for e in builds],
            "warnings": [w["message"] for w in session.snapshot()["warnings"]]}


def _pairs(out: dict[str, Any]) -> list[tuple[str, str, bool]]:
    """Each true move with the move recorded in its place ("" for none) and its mark."""
    marks = out["doubtful"] + [False] * len(out["truth"])
    got = out["recorded"] + [""] * len(out["truth"])
    return list(zip(out["truth"], got, marks, strict=False))


def tally(out: dict[str, Any]) -> dict[str, int]:
    """Moves recorded right, wrong and marked for the players, wrong and not marked
    (a wrong score nobody is asked about), and marks on right moves."""
    pairs = _pairs(out)
    return {"moves": len(pairs),
            "right": sum(1 for x, y, _ in pairs if x == y),
            "wrong_marked": sum(1 for x, y, d in pairs if x != y and d),
            "wrong_unmarked": sum(1 for x, y, d in pairs if x != y and not d),
            "right_marked": sum(1 for x, y, d in pairs if x == y and d)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.controller.raystand",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path, nargs="+")
    ap.add_argument("--no-camera", action="store_true",
                    help="estimate the intrinsics instead of using the game's camera file")
    a = ap.parse_args(argv)
    total: dict[str, int] = {}
    for folder in a.folder:
        out = run(folder, camera=not a.no_camera)
        t = tally(out)
        for k, v in t.items():
            total[k] = total.get(k, 0) + v
        print(f"{folder.name}: {t['right']} of {len(out['truth'])} moves right "
              f"({len(out['recorded'])} recorded; wrong and not marked: {t['wrong_unmarked']})")
        for x, y, d in _pairs(out):
            print(f"  {'  ' if x == y else '!!'} {x:24s} {y}{'  (doubtful)' if d else ''}")
        for w in out["warnings"]:
            print(f"  warning: {w}", file=sys.stderr)
    if len(a.folder) > 1:
        print("all: " + ", ".join(f"{k} {v}" for k, v in total.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
