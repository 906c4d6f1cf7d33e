"""Photo ordering: natural file names, EXIF time when names carry no order."""

from __future__ import annotations

import struct

import cv2
import numpy as np

from companion.photos import exif_datetime, natural_key, ordered_photos


def _jpeg_with_exif(when: str | None) -> bytes:
    ok, buf = cv2.imencode(".jpg", np.full((8, 8, 3), 128, np.uint8))
    body = buf.tobytes()[2:]  # drop SOI
    if when is None:
        return b"\xff\xd8" + body
    text = when.encode() + b"\x00"  # 20 bytes
    # TIFF little endian: IFD0 at 8 with one entry (ExifIFD pointer) -> sub IFD at 26
    ifd0 = struct.pack("<H", 1) + struct.pack("<HHII", 0x8769, 4, 1, 26) + struct.pack("<I", 0)
    sub = struct.pack("<H", 1) + struct.pack("<HHII", 0x9003, 2, len(text), 44) + \
        struct.pack("<I", 0)
    tiff = b"II*\x00" + struct.pack("<I", 8) + ifd0 + sub + text
    app1 = b"Exif\x00\x00" + tiff
    return b"\xff\xd8\xff\xe1" + struct.pack(">H", len(app1) + 2) + app1 + body


def test_exif_time_is_read(tmp_path):
    p = tmp_path / "a.jpg"
    p.write_bytes(_jpeg_with_exif("2026:11:21 19:20:05"))
    assert exif_datetime(p) == "2026:11:21 19:20:05"
    q = tmp_path / "b.jpg"
    q.write_bytes(_jpeg_with_exif(None))
    assert exif_datetime(q) is None
    r = tmp_path / "c.jpg"
    r.write_bytes(b"not a jpeg")
    assert exif_datetime(r) is None


def test_natural_name_order(tmp_path):
    for name in ("IMG_10.jpg", "IMG_2.jpg", "IMG_1.jpg", "notes.txt"):
        (tmp_path / name).write_bytes(_jpeg_with_exif(None))
    photos, how = ordered_photos(tmp_path)
    assert [p.name for p in photos] == ["IMG_1.jpg", "IMG_2.jpg", "IMG_10.jpg"]
    assert how == "file names"
    assert natural_key("a9") < natural_key("a10")


def test_exif_orders_names_without_order(tmp_path):
    times = {"kiwi.jpg": "2026:11:21 20:00:00", "apple.jpg": "2026:11:21 20:05:00",
             "mango.jpg": "2026:11:21 19:55:00"}
    for name, when in times.items():
        (tmp_path / name).write_bytes(_jpeg_with_exif(when))
    (tmp_path / "zzz.jpg").write_bytes(_jpeg_with_exif(None))
    photos, how = ordered_photos(tmp_path)
    assert how == "EXIF time"
    assert [p.name for p in photos] == ["mango.jpg", "kiwi.jpg", "apple.jpg", "zzz.jpg"]


def test_two_phones_photos_interleave_by_time(tmp_path):
    # an iPhone's and a Pixel's photos of one game: by name every IMG_ would come first
    times = {"IMG_0007.jpg": "2026:11:28 20:00:00", "PXL_20261128_200230.jpg":
             "2026:11:28 20:02:30", "IMG_0008.jpg": "2026:11:28 20:04:00",
             "IMG_E0009.jpg": "2026:11:28 20:06:00",  # an edited photo keeps its time
             "PXL_20261128_200815.jpg": "2026:11:28 20:08:15"}
    for name, when in times.items():
        (tmp_path / name).write_bytes(_jpeg_with_exif(when))
    photos, how = ordered_photos(tmp_path)
    assert how == "EXIF time"
    assert [p.name for p in photos] == sorted(times, key=times.__getitem__)
    # one photo without its time: the names' order stands (no guess where it goes)
    (tmp_path / "IMG_0010.jpg").write_bytes(_jpeg_with_exif(None))
    photos, how = ordered_photos(tmp_path)
    assert how == "file names"
    assert [p.name for p in photos] == ["IMG_0007.jpg", "IMG_0008.jpg", "IMG_0010.jpg",
                                        "IMG_E0009.jpg", "PXL_20261128_200230.jpg",
                                        "PXL_20261128_200815.jpg"]


def test_one_cameras_names_win_over_its_clock(tmp_path):
    # renamed to put them in order (turn03 taken first: the clock says otherwise)
    times = {"turn01.jpg": "2026:11:28 20:05:00", "turn02.jpg": "2026:11:28 20:06:00",
             "turn03.jpg": "2026:11:28 19:00:00"}
    for name, when in times.items():
        (tmp_path / name).write_bytes(_jpeg_with_exif(when))
    photos, how = ordered_photos(tmp_path)
    assert how == "file names"
    assert [p.name for p in photos] == ["turn01.jpg", "turn02.jpg", "turn03.jpg"]


def test_a_counter_that_wrapped_during_the_game(tmp_path):
    """An iPhone numbers its photos IMG_0001 to IMG_9999 and starts again: by name the
    game's last photos would be replayed first."""
    names = ["IMG_9997.jpg", "IMG_9998.jpg", "IMG_9999.jpg", "IMG_0001.jpg", "IMG_0002.jpg"]
    for name in names:
        (tmp_path / name).write_bytes(_jpeg_with_exif(None))
    photos, how = ordered_photos(tmp_path)
    assert [p.name for p in photos] == names
    assert how == "file names (the camera's counter went past 9999)"
    # its clock, when it says the names run straight on, wins over the guess
    for n, name in enumerate(sorted(names)):
        (tmp_path / name).write_bytes(_jpeg_with_exif(f"2026:11:28 20:0{n}:00"))
    photos, how = ordered_photos(tmp_path)
    assert [p.name for p in photos] == sorted(names) and how == "file names"
    # and agrees with the wrap when it saw it
    for n, name in enumerate(names):
        (tmp_path / name).write_bytes(_jpeg_with_exif(f"2026:11:28 20:0{n}:00"))
    photos, how = ordered_photos(tmp_path)
    assert [p.name for p in photos] == names
    assert how == "file names (the camera's counter went past 9999)"


def test_a_stray_photo_is_no_wrap(tmp_path):
    """Numbers far apart at both ends (a photo from long before) are no counter's wrap;
    neither are unpadded numbers (turn9, turn10) or a run wider than half the counter."""
    for names in (["IMG_0001.jpg", "IMG_0002.jpg", "IMG_9000.jpg"],
                  ["turn1.jpg", "turn2.jpg", "turn9.jpg"],
                  ["DSC_0010.jpg", "DSC_3000.jpg", "DSC_6000.jpg", "DSC_9990.jpg"]):
        for p in tmp_path.iterdir():
            p.unlink()
        for name in names:
            (tmp_path / name).write_bytes(_jpeg_with_exif(None))
        photos, how = ordered_photos(tmp_path)
        assert [p.name for p in photos] == names and how == "file names"


def test_an_upload_is_ordered_as_a_folder_is():
    """The page's upload keeps the photos' names in the folder it reads, so a wrapped
    counter (and two cameras' clocks) order it as `companion replay FOLDER` would."""
    import queue

    import pytest

    from companion.replay_service import ReplayUploadError, make_replay_service
    from companion.session import GameSession
    from companion.web.app import UploadedFile

    session = GameSession()
    events = session.subscribe()
    upload = make_replay_service(session, workers=1)
    names = ["IMG_0002.jpg", "IMG_9998.jpg", "IMG_0001.jpg", "IMG_9999.jpg"]
    with pytest.raises(ReplayUploadError):  # stubs: no board shows
        upload([UploadedFile(name, b"\xff\xd8\xff\xd9") for name in names])
    read = []
    while True:
        try:
            event = events.get_nowait()
        except queue.Empty:
            break
        if event["type"] == "replay-progress":
            read.append(event["photo"])
    assert read == ["IMG_9998.jpg", "IMG_9999.jpg", "IMG_0001.jpg", "IMG_0002.jpg"]


def test_a_copy_numbered_in_brackets_comes_after_its_original(tmp_path):
    """WhatsApp desktop saves a batch received in one second as "X.jpeg", "X (1).jpeg",
    "X (2).jpeg", ...: by the whole name " (" sorts before ".", which put the game's
    first photo last."""
    base = "WhatsApp Image 2026-11-28 at 20.02.30"
    names = [f"{base}.jpeg"] + [f"{base} ({k}).jpeg" for k in (1, 2, 10)]
    for name in names:
        (tmp_path / name).write_bytes(_jpeg_with_exif(None))
    photos, how = ordered_photos(tmp_path)
    assert [p.name for p in photos] == names and how == "file names"


def test_macos_appledouble_files_are_no_photos(tmp_path, capsys):
    """A folder copied from a Mac to a foreign disk has a "._NAME" beside each photo
    (its metadata, named like the photo): it is no photo, as it is none in a zip."""
    from companion.cli import main

    for name in ("IMG_001.jpg", "IMG_002.jpg"):
        (tmp_path / name).write_bytes(_jpeg_with_exif(None))
        (tmp_path / f"._{name}").write_bytes(b"\x00\x05\x16\x07\x00\x02\x00\x00Mac OS X")
    photos, _how = ordered_photos(tmp_path)
    assert [p.name for p in photos] == ["IMG_001.jpg", "IMG_002.jpg"]
    only = tmp_path / "only"
    only.mkdir()
    (only / "._IMG_001.jpg").write_bytes(b"\x00\x05\x16\x07")
    assert main(["replay", str(only)]) == 1
    assert capsys.readouterr().err == (
        f"companion replay: {only}: no photos (jpg, png, heic, ...) in this folder\n")
