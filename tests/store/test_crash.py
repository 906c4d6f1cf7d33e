"""Crash test: SIGKILL a journaling game at seeded random moments, restart, finish.

Every move the child reported (printed after ``session.play`` returned) must
be in the resumed record; the journal must open without a damage notice, the
record must replay, and the game must reach its end across the restarts.
"""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from companion.store.journal import DATA_FILE, Journal

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs SIGKILL")


class Child:
    """``python -m companion.store.soak`` with its reported lines."""

    def __init__(self, data_dir: Path, seed: int, moves: int | None = None) -> None:
        limit = [] if moves is None else ["--moves", str(moves)]
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "companion.store.soak", "--data-dir", str(data_dir),
             "--seed", str(seed), "--delay", "0", *limit],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1)
        self.lines: list[str] = []

    def read_line(self) -> str:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if line.endswith("\n"):
            self.lines.append(line[:-1])
        return line

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.finish(timeout=30)

    def finish(self, timeout: float) -> None:
        out, err = self.proc.communicate(timeout=timeout)
        # only whole lines count as reported: a half-printed line was not acknowledged
        self.lines.extend(out.split("\n")[:-1])
        if self.proc.returncode not in (0, -signal.SIGKILL):
            pytest.fail(f"soak child failed ({self.proc.returncode}): {err[-2000:]}")

    def moves(self) -> dict[int, str]:
        out = {}
        for line in self.lines:
            head, _, rest = line.partition(" ")
            if head.isdigit():
                out[int(head)] = rest
        return out


def _check_journal(data_dir: Path, reported: dict[int, str]) -> int:
    """Every reported move is in the journal's game; returns the number of moves."""
    with Journal(data_dir / DATA_FILE) as journal:
        assert journal.notices == [], journal.notices  # no damage after a SIGKILL
        games = journal.list_games()
        assert len(games) <= 1, "a restart must resume, not start a second game"
        if not games:
            assert reported == {}
            return 0
        record = journal.load(games[0].id)  # replays every move: raises if inconsistent
        moves = [str(m) for m in record.moves]
    for ply, move in reported.items():
        assert ply < len(moves), f"reported move {ply} ({move}) was lost"
        assert moves[ply] == move, f"move {ply}: reported {move}, journal has {moves[ply]}"
    return len(moves)


@pytest.mark.parametrize("seed", [20240501, 7])
def test_sigkill_anywhere_loses_nothing(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    data_dir = tmp_path / "data"
    reported: dict[int, str] = {}
    kills = 0
    for attempt in range(8):
        # at most 13 moves a run: 8 runs cannot finish the 112-move game before the last
        child = Child(data_dir, seed, moves=13)
        if attempt == 0 or rng.random() < 0.2:
            time.sleep(rng.uniform(0.0, 0.4))  # somewhere in start-up or the first moves
        else:
            for _ in range(rng.randint(1, 10)):
                if not child.read_line():
                    break
            time.sleep(rng.uniform(0.0, 0.01))  # often in the middle of the next append
        if child.proc.poll() is None:
            child.kill()
            kills += 1
        else:
            child.finish(timeout=30)
        new = child.moves()
        for ply, move in new.items():
            assert reported.get(ply, move) == move, f"move {ply} changed across a restart"
        reported.update(new)
        resumed = [line for line in child.lines if line.startswith(("resumed", "started"))]
        if resumed and reported:
            at = int(resumed[0].rsplit(" ", 1)[1])
            earlier = [p for p in reported if p < at]
            assert len(earlier) == len([p for p in reported if p not in new])
        count = _check_journal(data_dir, reported)
        assert count >= len(reported)
    assert kills >= 5
    # the last run plays to the end
    child = Child(data_dir, seed)
    child.finish(timeout=120)
    reported.update(child.moves())
    assert child.lines[-1].startswith("over ")
    count = _check_journal(data_dir, reported)
    assert max(reported) == count - 1
    # a move can be journaled and the child killed before it printed: at most one per kill
    assert len(set(range(count)) - set(reported)) <= kills
    with Journal(data_dir / DATA_FILE) as journal:
        [info] = journal.list_games()
        assert info.status == "finished" and info.over and info.winners
        assert journal.load(info.id).replay().is_over
