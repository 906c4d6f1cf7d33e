"""Evidence crops stay within their byte budget: finished games' oldest go first."""

from __future__ import annotations

from pathlib import Path

import pytest

from companion.rules import make_config
from companion.session import GameSession
from companion.store import JournalError


def _files(root: Path) -> set[str]:
    return {p.name for p in root.rglob("*") if p.is_file()}


def test_budget_pruning_is_exact(make_journal) -> None:
    journal = make_journal(evidence_budget=1000)
    cfg = make_config(2, seed=1)
    GameSession(cfg, journal=journal)  # g1
    GameSession(cfg, journal=journal)  # g2
    journal.finish("g1")
    blob = {k: bytes([k]) * 300 for k in range(10)}
    a1 = journal.add_evidence("g1", 0, "crop", blob[1])
    b1 = journal.add_evidence("g2", 0, "crop", blob[2])
    a2 = journal.add_evidence("g1", 1, "crop", blob[3])
    assert journal.evidence_bytes() == 900
    b2 = journal.add_evidence("g2", 1, "crop", blob[4])  # 1200 > 1000: the finished game's
    assert journal.evidence(a1) is None                  # oldest goes
    assert journal.evidence_bytes() == 900
    b3 = journal.add_evidence("g2", 2, "photo", blob[5])
    assert journal.evidence(a2) is None  # then its next oldest
    b4 = journal.add_evidence("g2", 3, "crop", blob[6])
    assert journal.evidence(b1) is None  # no finished game left: the oldest overall
    assert [journal.evidence(e) for e in (b2, b3, b4)] == [blob[4], blob[5], blob[6]]
    assert journal.evidence_bytes() == 900
    files = list(journal.evidence_dir.rglob("*.jpg"))
    assert len(files) == 3 and sum(f.stat().st_size for f in files) == 900
    # an exact fit is kept: 900 + 100 == 1000
    b5 = journal.add_evidence("g2", 4, "crop", b"z" * 100)
    assert journal.evidence_bytes() == 1000 and journal.evidence(b2) == blob[4]
    assert journal.evidence(b5) == b"z" * 100


def test_evidence_limits_and_lookups(make_journal) -> None:
    journal = make_journal(evidence_budget=100)
    GameSession(make_config(2, seed=1), journal=journal)
    with pytest.raises(JournalError, match="exceeds the whole budget"):
        journal.add_evidence("g1", 0, "crop", b"x" * 101)
    assert journal.evidence("nope") is None
    assert journal.evidence(12345) is None
    eid = journal.add_evidence("g1", None, "../../etc/passwd", b"ok")
    assert journal.evidence(eid) == b"ok"
    [f] = journal.evidence_dir.rglob("*.jpg")
    assert f.parent == journal.evidence_dir / "g1"  # the kind never becomes a path
    assert ".." not in f.name and "/" not in f.name


def test_half_written_and_orphan_files_swept(make_journal, tmp_path) -> None:
    journal = make_journal()
    GameSession(make_config(2, seed=1), journal=journal)
    kept = journal.add_evidence("g1", 0, "crop", b"keep")
    folder = journal.evidence_dir / "g1"
    (folder / "0001-crop-dead.jpg.tmp").write_bytes(b"half")
    (folder / "0002-crop-orphan.jpg").write_bytes(b"no row")
    other = journal.evidence_dir / "20200101-000000-abcd"  # a moved-aside journal's game
    other.mkdir()
    (other / "0000-crop-x.jpg").write_bytes(b"not ours")
    journal.close()
    again = make_journal()
    assert again.evidence(kept) == b"keep"
    assert _files(journal.evidence_dir) == {f.name for f in folder.iterdir()} | {
        "0000-crop-x.jpg"}
    assert len(list(folder.iterdir())) == 1


def test_budget_survives_missing_files(make_journal) -> None:
    """A crash can leave a row without its file: reading gives None, pruning copes."""
    journal = make_journal(evidence_budget=10)
    GameSession(make_config(2, seed=1), journal=journal)
    e1 = journal.add_evidence("g1", 0, "crop", b"12345")
    for f in journal.evidence_dir.rglob("*.jpg"):
        f.unlink()
    assert journal.evidence(e1) is None
    e2 = journal.add_evidence("g1", 1, "crop", b"1234567")
    assert journal.evidence(e2) == b"1234567" and journal.evidence_bytes() == 7


def test_a_crop_is_on_disk_before_its_row_is_committed(make_journal, monkeypatch) -> None:
    """A power cut must not leave a row naming an empty file: the bytes and the
    rename are synced before the row is written."""
    import os

    journal = make_journal()
    GameSession(make_config(2, seed=1), journal=journal)
    synced: list[str] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    eid = journal.add_evidence("g1", 3, "crop", b"\xff\xd8" + b"j" * 40)
    folder = journal.evidence_dir / "g1"
    (crop,) = folder.iterdir()
    # the temporary file (renamed into place afterwards), then the folder holding it
    assert synced[:2] == [str(folder / (crop.name + ".tmp")), str(folder)]
    assert journal.evidence(eid) == b"\xff\xd8" + b"j" * 40
