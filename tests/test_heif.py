"""HEIC photos (an iPhone's default): read, ordered, uploaded and refused like any other."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import cv2
import numpy as np
import pillow_heif
import pytest
from PIL import Image

from companion.heif import HeifError, decode_heif, heif_exif, heif_size, is_heif
from companion.photos import exif_datetime, ordered_photos
from companion.sim import sample_photo
from companion.store.safety import BadImageError, decode_image_safely, image_kind, image_size
from companion.vision.errors import ImageReadError
from companion.vision.evaluate import site_verdicts
from companion.vision.reader import decode_photo, load_image, read_image

ROOT = Path(__file__).resolve().parents[1]


def heic_bytes(bgr: np.ndarray, quality: int = 90, taken: str | None = None,
               preset: str | None = None) -> bytes:
    """``bgr`` coded as an iPhone would store it (HEVC in a HEIF file), with an EXIF
    DateTimeOriginal when ``taken`` is given; ``preset``: x265's (its default when None;
    "ultrafast" codes a photo five times faster, for tests that code a whole game)."""
    rgb = cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)
    heif = pillow_heif.from_bytes(mode="RGB", size=(rgb.shape[1], rgb.shape[0]),
                                  data=rgb.tobytes())
    extra = {}
    if taken is not None:
        exif = Image.Exif()
        exif.get_ifd(0x8769)[0x9003] = taken  # DateTimeOriginal, in the Exif sub-IFD
        extra["exif"] = exif.tobytes()
    if preset is not None:
        extra["enc_params"] = {"preset": preset}
    out = io.BytesIO()
    heif.save(out, quality=quality, **extra)
    return out.getvalue()


@pytest.fixture(scope="module")
def phone():
    return sample_photo(12, "phone")


@pytest.fixture(scope="module")
def phone_heic(phone) -> bytes:
    return heic_bytes(phone.image)


def test_heif_files_are_told_from_their_first_bytes(phone_heic):
    assert is_heif(phone_heic[:64])
    assert image_kind(phone_heic[:16]) == "heic"
    avif = b"\x00\x00\x00\x1cftypavif\x00\x00\x00\x00avifmif1miaf"
    assert not is_heif(avif) and image_kind(avif[:16]) is None
    assert not is_heif(b"\xff\xd8\xff\xe0" + bytes(60))
    assert not is_heif(phone_heic[:10])


def test_a_heic_photo_decodes_to_the_photo(phone, phone_heic):
    img = decode_heif(phone_heic)
    assert img.shape == phone.image.shape and img.dtype == np.uint8
    # HEVC at quality 90: close to every pixel, in BGR order like cv2.imdecode's
    diff = np.abs(img.astype(np.int16) - phone.image.astype(np.int16))
    assert diff.mean() < 1.0 and np.percentile(diff, 99) <= 8
    assert heif_size(phone_heic) == (1600, 1200) == image_size(phone_heic)


def test_companion_read_takes_a_heic_photo(tmp_path, phone, phone_heic):
    path = tmp_path / "IMG_0001.HEIC"
    path.write_bytes(phone_heic)
    proc = subprocess.run([sys.executable, "-m", "companion", "read", str(path), "--json"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    verdicts = Counter(v for _, v in site_verdicts(data, phone.truth).values())
    assert verdicts["wrong"] == 0 and verdicts["right"] >= 46, verdicts
    assert data["cards"] == phone.truth["expected"]["cards"]
    # the command read the decoded pixels, nothing else
    again = read_image(load_image(path), source=str(path)).to_json()
    assert data == {**json.loads(json.dumps(again)), "warnings": []}


def test_a_large_heic_photo_is_shrunk_as_a_jpeg_would_be(phone_heic):
    # decode_min_side 500: a 1600 x 1200 photo at a half (800 x 600), the largest of
    # 2, 4 and 8 that keeps its longest side at 500 or more
    img = decode_photo(phone_heic, {"image": {"decode_min_side": 500}})
    assert img is not None and img.shape == (600, 800, 3)
    whole = decode_photo(phone_heic, {"image": {"decode_min_side": None}})
    assert whole is not None and whole.shape == (1200, 1600, 3)


def test_a_broken_heic_photo_is_a_one_line_error(tmp_path, phone_heic):
    path = tmp_path / "cut.heic"
    path.write_bytes(phone_heic[: len(phone_heic) // 2])
    with pytest.raises(ImageReadError) as err:
        load_image(path)
    # the boxes are whole, the coded image is cut: libheif's own words in brackets
    message = str(err.value)
    assert message.startswith(f"{path}: damaged HEIC file (") and message.endswith(")")
    assert "end of file" in message.lower() and "\n" not in message
    proc = subprocess.run([sys.executable, "-m", "companion", "read", str(path), "--json"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.strip() == f"companion read: {err.value}"
    with pytest.raises(BadImageError, match=r"^damaged HEIC file \("):
        decode_image_safely(phone_heic[: len(phone_heic) // 2])
    with pytest.raises(BadImageError, match=r"^damaged or unsupported HEIC file \("):
        decode_image_safely(phone_heic[:300])  # the boxes themselves cut


def test_uploaded_heic_bytes_pass_the_safety_checks(phone, phone_heic):
    img = decode_image_safely(phone_heic)
    assert img.shape == phone.image.shape
    with pytest.raises(BadImageError, match=r"^image too large: 1600 x 1200 pixels \(at most "
                                            r"1000000\)$"):
        decode_image_safely(phone_heic, max_pixels=1_000_000)


def test_without_the_decoder_a_heic_photo_names_the_package(tmp_path, phone_heic,
                                                            monkeypatch):
    monkeypatch.setitem(sys.modules, "pillow_heif", None)  # as on a machine without it
    path = tmp_path / "IMG_0002.heic"
    path.write_bytes(phone_heic)
    with pytest.raises(ImageReadError) as err:
        load_image(path)
    assert str(err.value) == (f"{path}: a HEIC photo, and the HEIC decoder is not installed "
                              "(pip install pillow-heif)")
    with pytest.raises(HeifError):
        heif_size(phone_heic)


def test_heic_photos_are_ordered_by_the_time_they_were_taken(tmp_path):
    rng = np.random.default_rng(5)
    small = (rng.random((48, 64, 3)) * 255).astype(np.uint8)
    taken = {"lunch": "2026:11:28 12:30:00", "breakfast": "2026:11:28 08:15:00",
             "dinner": "2026:11:28 19:45:10"}
    for name, when in taken.items():
        (tmp_path / f"{name}.HEIC").write_bytes(heic_bytes(small, 80, when))
    (tmp_path / "notes.txt").write_text("not a photo")
    assert exif_datetime(tmp_path / "dinner.HEIC") == "2026:11:28 19:45:10"
    assert heif_exif((tmp_path / "lunch.HEIC").read_bytes())[:4] in (b"II*\x00", b"MM\x00*")
    photos, how = ordered_photos(tmp_path)
    assert [p.stem for p in photos] == ["breakfast", "lunch", "dinner"]
    assert how == "EXIF time"


def test_the_replay_service_reads_uploaded_heic_photos(phone_heic):
    from companion.replay_service import ReplayUploadError, make_replay_service
    from companion.session import GameSession
    from companion.web.app import UploadedFile

    upload = make_replay_service(GameSession(), workers=1)
    files = [UploadedFile("IMG_0007.HEIC", phone_heic[:300]),
             UploadedFile("notes.txt", b"not a photo")]
    with pytest.raises(ReplayUploadError) as err:
        upload(files)
    # taken as a photo, decoded as a HEIC file, and its damage named
    assert str(err.value).startswith("no photo showed the board: IMG_0007.HEIC: damaged or "
                                     "unsupported HEIC file (")


def test_calibration_photos_may_be_heic_and_are_read_whole(tmp_path, phone, phone_heic):
    from companion.commands import _image_paths, _read_whole

    (tmp_path / "a.heic").write_bytes(phone_heic)
    (tmp_path / "b.HEIF").write_bytes(phone_heic[:300])
    cv2.imwrite(str(tmp_path / "c.png"), phone.image)
    (tmp_path / "d.txt").write_text("not a photo")
    paths = _image_paths(tmp_path)
    assert [p.name for p in paths] == ["a.heic", "b.HEIF", "c.png"]
    whole, why = _read_whole(paths[0])
    assert whole.shape == (1200, 1600, 3) and why == ""  # no shrinking for calibration
    broken, why = _read_whole(paths[1])
    assert broken is None and why.startswith("damaged or unsupported HEIC file (")
    png, why = _read_whole(paths[2])
    assert np.array_equal(png, phone.image) and why == ""


def test_the_doctor_says_whether_heic_photos_can_be_read(monkeypatch):
    from companion.commands import _doctor_photos

    here = _doctor_photos()
    assert here["ok"] and here["heic"] == (f"pillow-heif {pillow_heif.__version__}, "
                                           f"libheif {pillow_heif.libheif_version()}")
    assert {".heic", ".heif", ".jpg", ".png"} <= set(here["suffixes"]) and "note" not in here
    monkeypatch.setitem(sys.modules, "pillow_heif", None)
    without = _doctor_photos()
    assert without["ok"] and without["heic"] is None  # the live table needs no HEIC
    assert ".heic" not in without["suffixes"] and ".jpg" in without["suffixes"]
    assert without["note"] == ("HEIC photos (an iPhone's) cannot be read here: "
                               "pip install pillow-heif")


def test_the_replay_service_announces_each_photo_read(phone_heic):
    import queue

    from companion.replay_service import ReplayUploadError, make_replay_service
    from companion.session import GameSession
    from companion.web.app import UploadedFile

    session = GameSession()
    events = session.subscribe()
    upload = make_replay_service(session, workers=1)
    with pytest.raises(ReplayUploadError):
        upload([UploadedFile("IMG_0007.HEIC", phone_heic[:300]),
                UploadedFile("IMG_0008.jpg", b"\xff\xd8\xff\xd9")])
    seen = []
    while True:
        try:
            seen.append(events.get_nowait())
        except queue.Empty:
            break
    progress = [(e["done"], e["total"], e["photo"]) for e in seen
                if e["type"] == "replay-progress"]
    assert progress == [(1, 2, "IMG_0007.HEIC"), (2, 2, "IMG_0008.jpg")]
    # refused or not, the end is announced: the pages that showed the progress refresh
    assert seen[-1]["type"] == "replay-finished"


def test_a_labelled_set_may_hold_heic_photos(tmp_path, phone, phone_heic):
    from companion.vision.evaluate import folder_samples

    (tmp_path / "phone_12.heic").write_bytes(phone_heic)
    (tmp_path / "phone_12.json").write_text(json.dumps(phone.truth))
    (tmp_path / "notes.txt").write_text("no truth, no photo")
    [(name, image, truth)] = list(folder_samples(tmp_path))
    assert name == "phone_12.heic" and image.shape == phone.image.shape
    assert truth == json.loads(json.dumps(phone.truth))


def test_a_game_photographed_as_heic_replays_move_for_move(tmp_path):
    # SimTable seed 2's stand camera, a still after each of its first four moves,
    # stored as an iPhone would store them
    from companion.commands import read_folder
    from companion.replay import replay
    from companion.rules.record import config_from_json
    from tests.replay.test_fixed_camera import _stills

    moves = _stills(tmp_path, 2, 4)
    for png in sorted(tmp_path.glob("*.png")):
        png.with_suffix(".HEIC").write_bytes(heic_bytes(cv2.imread(str(png)), preset="ultrafast"))
        png.unlink()
    assert sorted(p.suffix for p in tmp_path.iterdir()) == [".HEIC"] * 5 + [".json"]
    config = config_from_json(json.loads((tmp_path / "game.json").read_text()))
    observations, skipped, how = read_folder(tmp_path, None, list(config.colors), workers=1)
    assert skipped == [] and how == "file names"
    assert [m["notation"] for m in replay(observations, config).moves] == moves


def test_a_folder_camera_serves_heic_photos_in_game_order(tmp_path, phone, phone_heic):
    """`companion run --camera folder:DIR` served OpenCV's formats only, in name order:
    an iPhone's HEIC photos were skipped as unreadable, and a wrapped counter's last
    photos came first. The application hands its decoder and order to the source."""
    from companion.live import folder_camera_options
    from hardware.camera import open_camera
    from hardware.errors import EndOfStream

    (tmp_path / "IMG_9999.HEIC").write_bytes(phone_heic)
    cv2.imwrite(str(tmp_path / "IMG_0001.png"), phone.image)
    (tmp_path / "IMG_0002.jpg").write_bytes(b"\xff\xd8\xff\xe0 cut short")
    spec = f"folder:{tmp_path}"
    with open_camera(spec, **folder_camera_options(spec)) as camera:
        first, second = camera.read(), camera.read()
        with pytest.raises(EndOfStream):
            camera.read()
        assert camera.skipped == ["IMG_0002.jpg"]
    assert first.image.shape == (1200, 1600, 3) and second.image.shape == (1200, 1600, 3)
    # the HEIC photo first (taken before the counter wrapped), decoded by libheif
    assert np.abs(first.image.astype(int) - phone.image).mean() < 4.0
    assert np.array_equal(second.image, phone.image)
    assert folder_camera_options("fake") == {} and folder_camera_options("opencv:0") == {}
