"""``companion read``: the vision sub-command of the CLI."""

from __future__ import annotations

import json
import sys
from typing import Any

from companion.cli import colour_list


def cmd_read(args: Any) -> int:
    from companion.vision.errors import VisionError
    from companion.vision.reader import read_paths

    colors = args.colors  # parsed by colour_list: named once each
    status = 0
    for path in args.photos:
        try:
            [out] = read_paths([path], camera_path=args.camera, colors=colors)
        except (VisionError, ValueError) as exc:
            msg = str(exc)
            # the photo named once: first, unless the message names it already
            # ("...: not an image", "no board markers found in PHOTO")
            named = msg.startswith(str(path)) or msg.endswith(f" in {path}")
            print(f"companion read: {msg if named else f'{path}: {msg}'}", file=sys.stderr)
            status = 1
            if args.camera and "camera" in msg:
                return status  # the same bad camera file would fail every photo
            continue
        if args.json:
            print(json.dumps(out), flush=True)
        else:
            sites = ", ".join(f"{s['city']}/{s['row']}{s['col']}:{s['height']}{s['owner'][0]}"
                              for s in out["sites"])
            print(f"{path}: {len(out['sites'])} towers [{sites}]; unseen {len(out['unseen'])};"
                  f" cards {out['cards']}")
            for w in out["warnings"]:
                print(f"{path}: warning: {w['message']}")
    return status


def register_read(sub: Any) -> None:
    p = sub.add_parser("read", help="read photos of the board: towers, unseen sites, cards")
    p.add_argument("photos", nargs="+", metavar="PHOTO")
    p.add_argument("--camera", metavar="CAMERA.json", help="camera intrinsics (formats.md)")
    p.add_argument("--colors", type=colour_list,
                   help="colours in play, e.g. red,blue,green,black")
    p.add_argument("--json", action="store_true", help="one JSON object per photo and line")
    p.set_defaults(func=cmd_read)


#: ``companion evaluate`` lives in companion.commands (it calls companion.vision.evaluation).
REGISTER = [register_read]
