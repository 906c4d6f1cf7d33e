"""Printable sheets at true size: the four board markers and the ChArUco sheet.

PNG for any printer (its pHYs chunk says the resolution, so a print at 100%
is true size), and a one-page PDF whose page size fixes the scale (a PDF viewer
printing "actual size" keeps millimetres exact).
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path
from typing import Any

import numpy as np


def marker_sheet(profile: dict[str, Any], dpi: int = 300,
                 page_mm: tuple[float, float] = (297.0, 210.0)) -> np.ndarray:
    """The board's four ArUco markers at their printed size, with quiet zones,
    ids, and a 100 mm scale bar to check the print."""
    import cv2

    m = profile["markers"]
    size_mm, quiet_mm = float(m["size_mm"]), float(m["quiet_zone_mm"])
    cell_mm = size_mm + 2 * quiet_mm + 12
    # four markers side by side on the page (a typo of 100000 mm asked OpenCV for 1.4 TB)
    if not (5 <= size_mm and 0 <= quiet_mm and 15 + 4 * cell_mm <= page_mm[0]):
        raise ValueError(f"markers of {m['size_mm']} mm with {m['quiet_zone_mm']} mm quiet "
                         f"zones do not fit four to a {page_mm[0]:g} mm page")
    name = str(m["dictionary"])
    if not name.startswith("DICT_") or not hasattr(cv2.aruco, name):
        raise ValueError(f"unknown ArUco dictionary {name!r} (e.g. DICT_4X4_50)")
    d = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, name))
    ids = sorted(int(k) for k in m["centres_mm"])
    known = len(d.bytesList)
    bad = [i for i in ids if not 0 <= i < known]
    if bad:
        raise ValueError(f"marker id {bad[0]} is not in {name} (ids 0 to {known - 1})")
    px = dpi / 25.4
    page = np.full((round(page_mm[1] * px), round(page_mm[0] * px)), 255, np.uint8)
    side = round(size_mm * px)
    for n, marker_id in enumerate(ids):
        x0 = round((15 + (n % 4) * cell_mm + quiet_mm) * px)
        y0 = round((20 + quiet_mm) * px)
        img = cv2.aruco.generateImageMarker(d, marker_id, side)
        page[y0:y0 + side, x0:x0 + side] = img
        # cutting guide around the quiet zone
        q = round(quiet_mm * px)
        cv2.rectangle(page, (x0 - q, y0 - q), (x0 + side + q, y0 + side + q), 180, 1)
        cx, cy = m["centres_mm"][str(marker_id)]
        cv2.putText(page, f"id {marker_id} at ({cx:g}, {cy:g}) mm, top edge north",
                    (x0 - q, y0 + side + q + round(6 * px)), cv2.FONT_HERSHEY_SIMPLEX,
                    dpi / 300 * 0.7, 0, max(1, dpi // 200), cv2.LINE_AA)
    y = round(120 * px)
    x0, x1 = round(15 * px), round(115 * px)
    cv2.line(page, (x0, y), (x1, y), 0, max(2, dpi // 100))
    for x in (x0, x1):
        cv2.line(page, (x, y - round(3 * px)), (x, y + round(3 * px)), 0, max(2, dpi // 100))
    cv2.putText(page, "100 mm: measure this after printing", (x0, y + round(10 * px)),
                cv2.FONT_HERSHEY_SIMPLEX, dpi / 300 * 0.8, 0, max(1, dpi // 200), cv2.LINE_AA)
    return page


PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png_chunk(kind: bytes, data: bytes) -> bytes:
    """One PNG chunk: length, type, data and the CRC of type and data."""
    return (struct.pack(">I", len(data)) + kind + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))


def png_with_dpi(image: np.ndarray, dpi: int) -> bytes:
    """The image as PNG bytes carrying its resolution (a pHYs chunk in pixels per
    metre): without it a viewer or printer takes 72 or 96 dpi, and a sheet drawn at
    300 dpi printed "at 100%" came out four times too large."""
    import cv2

    ok, buf = cv2.imencode(".png", image)
    if not ok:
        raise ValueError("the sheet could not be encoded as PNG")
    data = buf.tobytes()
    if not data.startswith(PNG_SIGNATURE):
        raise ValueError("the PNG encoder wrote no PNG signature")
    chunks: list[tuple[bytes, bytes]] = []
    pos = len(PNG_SIGNATURE)
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind = data[pos + 4:pos + 8]
        chunks.append((kind, data[pos:pos + 12 + length]))
        pos += 12 + length
    ppm = round(dpi / 0.0254)
    phys = png_chunk(b"pHYs", struct.pack(">IIB", ppm, ppm, 1))  # unit 1: the metre
    out = bytearray(PNG_SIGNATURE)
    for kind, raw in chunks:
        if kind == b"pHYs":
            continue  # ours replaces any the encoder wrote
        out += raw
        if kind == b"IHDR":  # pHYs must come before the image data
            out += phys
    return bytes(out)


def write_png(image: np.ndarray, path: str | Path, dpi: int) -> None:
    """The sheet as a PNG that prints at true size at 100% (see :func:`png_with_dpi`)."""
    Path(path).write_bytes(png_with_dpi(image, dpi))


def write_pdf(image: np.ndarray, path: str | Path, page_mm: tuple[float, float]) -> None:
    """A one-page PDF showing a greyscale image over the whole page."""
    if image.ndim != 2:
        raise ValueError("write_pdf takes a greyscale image")
    h, w = image.shape
    pts = (page_mm[0] / 25.4 * 72, page_mm[1] / 25.4 * 72)
    data = zlib.compress(np.ascontiguousarray(image, np.uint8).tobytes(), 9)
    content = f"q {pts[0]:.3f} 0 0 {pts[1]:.3f} 0 0 cm /Im0 Do Q".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        (f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {pts[0]:.3f} {pts[1]:.3f}] "
         "/Resources << /XObject << /Im0 4 0 R >> >> /Contents 5 0 R >>").encode(),
        (f"<< /Type /XObject /Subtype /Image /Width {w} /Height {h} /ColorSpace /DeviceGray "
         f"/BitsPerComponent 8 /Filter /FlateDecode /Length {len(data)} >>\nstream\n").encode()
        + data + b"\nendstream",
        f"<< /Length {len(content)} >>\nstream\n".encode() + content + b"\nendstream",
    ]
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for i, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{i} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    for off in offsets:
        out += f"{off:010d} 00000 n \n".encode()
    out += (f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n"
            ).encode()
    Path(path).write_bytes(bytes(out))
