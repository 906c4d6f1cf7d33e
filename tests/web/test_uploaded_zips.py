"""Damaged and hostile zips sent to the page's upload: each refused in one line (a 400,
never the companion's 500), and none able to take the Pi's memory."""

from __future__ import annotations

import io
import random
import struct
import tracemalloc
import zipfile
from typing import Any


def _zip(members: dict[str, bytes], method: int = zipfile.ZIP_DEFLATED) -> bytearray:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", method) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return bytearray(buf.getvalue())


def _declare_size(data: bytearray, size: int) -> bytearray:
    """The first member's uncompressed size set to ``size`` in both its headers."""
    struct.pack_into("<I", data, 22, size)
    central = data.find(b"PK\x01\x02")
    struct.pack_into("<I", data, central + 24, size)
    return data


def _post(upload: tuple[Any, list[list[str]]], pin: str, data: bytes) -> Any:
    """The zip posted as the page does; ``resp.seen``: the uploads the replay got."""
    client, seen = upload
    resp = client.post("/api/upload", headers={"X-Table-PIN": pin},
                       content_type="multipart/form-data",
                       data={"photos": (io.BytesIO(bytes(data)), "game.zip")})
    resp.seen = seen
    return resp


def test_a_member_that_lies_about_its_size_is_refused_without_inflating_it(
        upload_client: Any, pin: str) -> None:
    """ZipFile.read inflates a member in one call: this 50 KB zip, whose member claims
    100 bytes, made 50 MB before its CRC failed (300 KB made 300 MB). Read a chunk at a
    time, zipfile stops at the declared size."""
    bomb = _declare_size(_zip({"IMG_1.jpg": bytes(50 * 1024 * 1024)}), 100)
    assert len(bomb) < 100_000
    tracemalloc.start()
    try:
        resp = _post(upload_client, pin, bomb)
        _now, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert resp.status_code == 400
    assert resp.get_json() == {"error": "game.zip: cannot read IMG_1.jpg "
                                        "(Bad CRC-32 for file 'IMG_1.jpg')"}
    assert peak < 8 * 1024 * 1024  # 50 MB with ZipFile.read
    assert resp.seen == []


def test_an_encrypted_member_is_named(upload_client: Any, pin: str) -> None:
    data = _zip({"IMG_1.jpg": b"\xff\xd8\xff" + bytes(300)})
    data[6] |= 1  # the general purpose flag's "encrypted" bit, local and central
    data[data.find(b"PK\x01\x02") + 8] |= 1
    resp = _post(upload_client, pin, data)
    assert resp.status_code == 400
    assert resp.get_json() == {"error": "game.zip: IMG_1.jpg is encrypted "
                                        "(send a zip without a password)"}


def test_inflating_damage_is_a_one_line_refusal(upload_client: Any,
                                                pin: str) -> None:
    """zlib's own error escaped zipfile's, and became the page's 500."""
    data = _zip({"IMG_1.jpg": bytes(range(256)) * 200})
    start = 30 + len("IMG_1.jpg")  # the member's compressed bytes
    data[start:start + 8] = b"\xff" * 8
    resp = _post(upload_client, pin, data)
    assert resp.status_code == 400
    error = resp.get_json()["error"]
    assert error.startswith("game.zip: cannot read IMG_1.jpg (") and "\n" not in error


def test_no_damaged_zip_is_the_companions_fault(upload_client: Any,
                                                pin: str) -> None:
    """Seeded damage to a good zip (one to four bytes): a 200 or a 4xx with a one-line
    message, never a 500. Before, about a quarter of these (a bad offset's negative
    seek, EOFError, zlib's error, an unknown version) were 500s."""
    good = _zip({"IMG_1.jpg": bytes(range(256)) * 200, "game.json": b'{"x": 1}' * 50})
    rng = random.Random(52)
    statuses: dict[int, int] = {}
    for _ in range(400):
        data = bytearray(good)
        for _k in range(rng.randint(1, 4)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        resp = _post(upload_client, pin, data)
        statuses[resp.status_code] = statuses.get(resp.status_code, 0) + 1
        if resp.status_code != 200:
            error = resp.get_json()["error"]
            assert "\n" not in error and (error.startswith("game.zip: ") or error.startswith(
                "no photos in the upload")), error  # a damaged name is no photo
    assert set(statuses) <= {200, 400, 413}
    assert statuses.get(400, 0) > 200  # the damage mostly shows


def test_an_upload_is_spooled_to_disk_not_held_in_memory(upload_client: Any, pin: str,
                                                         tmp_path: Any,
                                                         monkeypatch: Any) -> None:
    """The photos were read whole into memory, and a zip's members beside them (400 MB
    of a 200 MB upload at once on a Pi): each is now copied to a spool folder a chunk
    at a time, and the folder goes when the replay is done."""
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    client, seen = upload_client
    photo = b"\xff\xd8\xff" + bytes(30 * 1024 * 1024)
    archive = bytes(_zip({"IMG_2.jpg": photo}, zipfile.ZIP_STORED))
    tracemalloc.start()
    try:
        resp = client.post("/api/upload", headers={"X-Table-PIN": pin},
                           content_type="multipart/form-data",
                           data={"photos": [(io.BytesIO(photo), "IMG_1.jpg"),
                                            (io.BytesIO(archive), "more.zip")]})
        _now, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert resp.status_code == 200, resp.get_json()
    assert seen == [["IMG_1.jpg", "IMG_2.jpg"]]
    assert peak < 8 * 1024 * 1024  # two 30 MB photos: 60 MB and more when read whole
    assert not list(tmp_path.glob("companion-spool-*"))
