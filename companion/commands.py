"""Sub-commands that wire packages together: calibrate, replay, run, bench, doctor.

Heavy imports (OpenCV, numpy, the web app) happen inside the handlers so that
``companion score`` starts fast.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from companion.cli import CommandError

IMAGE_SUFFIXES = {".jpg", ".jpeg", ".png", ".bmp", ".tif", ".tiff", ".webp"}


def _image_paths(folder: Path) -> list[Path]:
    if not folder.exists():
        raise CommandError(f"{folder}: no such folder")
    if not folder.is_dir():
        raise CommandError(f"{folder}: not a folder")
    return sorted(p for p in folder.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)


# -- calibrate ---------------------------------------------------------------

def cmd_calibrate(args: argparse.Namespace) -> int:
    if args.what == "sheets":
        return _calibrate_sheets(args)
    if args.what == "camera":
        return _calibrate_camera(args)
    raise CommandError(f"unknown calibration {args.what!r}")


def _calibrate_sheets(args: argparse.Namespace) -> int:
    import cv2

    from calibration.charuco import sheet_image
    from calibration.printing import marker_sheet, write_pdf
    from companion.profiles import load_profile

    out = Path(args.out or ".")
    out.mkdir(parents=True, exist_ok=True)
    page = (297.0, 210.0)
    markers = marker_sheet(load_profile(args.profile), dpi=args.dpi, page_mm=page)
    charuco = sheet_image(dpi=args.dpi, page_mm=page)
    for name, img in (("board-markers", markers), ("charuco-sheet", charuco)):
        cv2.imwrite(str(out / f"{name}.png"), img)
        write_pdf(img, out / f"{name}.pdf", page)
        print(f"wrote {out / name}.png and .pdf (A4 landscape, print at 100%)")
    return 0


def _calibrate_camera(args: argparse.Namespace) -> int:
    import cv2

    from calibration import file as calfile
    from calibration.charuco import calibrate

    if not args.photos:
        raise CommandError("give a folder of ChArUco photos: companion calibrate camera DIR")
    paths = _image_paths(Path(args.photos))
    images = []
    for p in paths:
        img = cv2.imread(str(p))
        if img is None:
            print(f"companion calibrate: {p.name}: not a readable image, skipped",
                  file=sys.stderr)
            continue
        images.append(img)
    cal = calibrate(images)
    data = cal.to_json()
    if args.out:
        Path(args.out).write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    if args.calibration:
        calfile.update(args.calibration, "camera", data)
    print(json.dumps(data) if args.json else
          f"camera calibrated from {cal.views} views: fx={cal.camera_matrix[0, 0]:.1f} "
          f"fy={cal.camera_matrix[1, 1]:.1f} rms={cal.rms:.3f} px")
    return 0


def register_calibrate(sub: Any) -> None:
    p = sub.add_parser("calibrate", help="camera intrinsics, printable sheets, LED map")
    p.add_argument("what", choices=("camera", "sheets"),
                   help="camera: intrinsics from ChArUco photos; sheets: printable markers")
    p.add_argument("photos", nargs="?", help="folder of ChArUco photos (camera)")
    p.add_argument("--out", help="output file (camera JSON) or folder (sheets)")
    p.add_argument("--calibration", help="update this calibration file")
    p.add_argument("--profile", default="reference-board")
    p.add_argument("--dpi", type=int, default=300)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_calibrate)


REGISTER = [register_calibrate]
