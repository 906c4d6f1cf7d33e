"""Write a labelled set of simulated photos: ``python -m companion.sim OUTDIR [options]``.

Each photo gets NAME.jpg (phone) or NAME.png (mounted) and NAME.json (its truth).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from companion.sim.scenes import labelled_set, parse_block_jitter


def _jitter(text: str) -> tuple[float, float]:
    try:
        return parse_block_jitter(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m companion.sim",
                                 description="render a labelled set of simulated photos")
    ap.add_argument("outdir", type=Path)
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--kind", choices=["mounted", "phone"], default="mounted")
    ap.add_argument("--block-jitter", type=_jitter, default=(0.0, 0.0), metavar="MM,DEG",
                    help="each block at its own placement error (default: one pose per tower)")
    args = ap.parse_args(argv)
    try:
        args.outdir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        print(f"error: cannot create {args.outdir}: {exc.strerror}", file=sys.stderr)
        return 2
    for name, r in labelled_set(args.n, args.seed, args.kind, args.block_jitter):
        img, _ = r.save(str(args.outdir / name))
        print(img)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
