"""Sub-commands that wire packages together: calibrate, replay, run, bench, doctor.

Heavy imports (OpenCV, numpy, the web app) happen inside the handlers so that
``companion score`` starts fast.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from companion.cli import (
    CommandError,
    colour_list,
    distinct_files,
    port_number,
    seed_number,
    whole_number,
    writable_file,
)

if TYPE_CHECKING:
    from companion.replay import Observation

log = logging.getLogger(__name__)

def _image_paths(folder: Path) -> list[Path]:
    if not folder.exists():
        raise CommandError(f"{folder}: no such folder")
    if not folder.is_dir():
        raise CommandError(f"{folder}: not a folder")
    from companion.photos import IMAGE_SUFFIXES

    return sorted(p for p in folder.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)


def _read_whole(path: Path) -> tuple[Any, str]:
    """A photo decoded at its full size (a HEIC one too), or None with the reason:
    the reader's decoding without its shrinking (calibration wants every pixel)."""
    from companion.heif import HeifError
    from companion.vision.errors import ImageReadError
    from companion.vision.reader import decode_photo, refuse_huge

    whole = {"image": {"decode_min_side": None}}
    if not path.is_file():
        return None, "not a regular file"
    try:
        data = path.read_bytes()
    except OSError as exc:
        return None, exc.strerror or "cannot read"
    if not data:
        return None, "empty file"
    try:
        # the reader's limit at full size: 1 MB of PNG can declare 20000 x 20000
        refuse_huge(path.name, data, whole)
        img = decode_photo(data, whole)
    except ImageReadError as exc:
        return None, str(exc).removeprefix(f"{path.name}: ")
    except HeifError as exc:
        return None, str(exc)
    return img, "" if img is not None else "not a readable image"


# -- calibrate ---------------------------------------------------------------

def cmd_calibrate(args: argparse.Namespace) -> int:
    if args.what == "sheets":
        return _calibrate_sheets(args)
    if args.what == "camera":
        return _calibrate_camera(args)
    if args.what == "leds":
        return _calibrate_leds(args)
    raise CommandError(f"unknown calibration {args.what!r}")


def _calibrate_sheets(args: argparse.Namespace) -> int:
    from calibration.charuco import sheet_image
    from calibration.printing import marker_sheet, write_pdf, write_png
    from companion.profiles import load_profile

    out = Path(args.out or ".")
    out.mkdir(parents=True, exist_ok=True)
    page = (297.0, 210.0)
    profile = load_profile(args.profile)  # its own one-line errors
    try:
        markers = marker_sheet(profile, dpi=args.dpi, page_mm=page)
    except (KeyError, TypeError, IndexError) as exc:  # a profile without the markers' layout
        raise CommandError(f"board profile {args.profile}: no markers' layout ({type(exc).__name__}"
                           f": {exc})") from None
    except ValueError as exc:  # a layout that cannot be drawn (the profile's numbers)
        raise CommandError(f"board profile {args.profile}: {exc}") from None
    charuco = sheet_image(dpi=args.dpi, page_mm=page)
    for name, img in (("board-markers", markers), ("charuco-sheet", charuco)):
        write_png(img, out / f"{name}.png", args.dpi)
        write_pdf(img, out / f"{name}.pdf", page)
        print(f"wrote {out / name}.png and .pdf (A4 landscape, print at 100%)")
    return 0


def _calibrate_camera(args: argparse.Namespace) -> int:
    from calibration import file as calfile
    from calibration.charuco import calibrate

    if not args.photos:
        raise CommandError("give a folder of ChArUco photos: companion calibrate camera DIR")
    if args.out is not None:  # refused before the photos are read and fitted, not after
        writable_file("--out", args.out, inputs=[args.photos])
    paths = _image_paths(Path(args.photos))
    images = []
    for p in paths:
        img, why = _read_whole(p)
        if img is None:
            print(f"companion calibrate: {p.name}: {why}, skipped", file=sys.stderr)
            continue
        images.append(img)
    cal = calibrate(images, free_k3=args.free_k3)
    data = cal.to_json()
    if args.out:
        Path(args.out).write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    if args.calibration:
        calfile.update(args.calibration, "camera", data)
    print(json.dumps(data) if args.json else
          f"camera calibrated from {cal.views} views: fx={cal.camera_matrix[0, 0]:.1f} "
          f"fy={cal.camera_matrix[1, 1]:.1f} rms={cal.rms:.3f} px, the sheet reached "
          f"{cal.coverage:.0%} of the picture")
    return 0


def _calibrate_leds(args: argparse.Namespace) -> int:
    """Light the strip's LEDs one at a time with the camera watching the board, and
    write the LED map `companion run --ledmap` and `doctor --ledmap` take."""
    from contextlib import ExitStack

    from calibration import file as calfile
    from calibration.leds import LedCalibrationError, assign, locate_leds
    from companion.profiles import load_profile
    from hardware.leds.ledmap import serpentine
    from hardware.leds.strip import LedStrip

    if args.photos:
        raise CommandError("calibrate leds takes no folder: it watches the strip with --camera")
    count = args.count if args.count is not None else serpentine().count
    out = Path(args.out) if args.out is not None else Path(args.data_dir) / LEDMAP_FILE
    cal_path = Path(args.calibration or Path(args.data_dir) / "calibration.json")
    # before the strip is lit, not after; never over the calibration file
    writable_file("--out", str(out) if args.out is None else args.out, inputs=[cal_path])
    profile = load_profile(args.profile)  # its own one-line errors
    if args.calibration and not cal_path.exists():  # named, it is wanted (as run's)
        raise CommandError(f"{args.calibration}: no such calibration file")
    intrinsics = calfile.camera_intrinsics(calfile.load(cal_path), cal_path)
    with ExitStack() as opened:
        strip = LedStrip(count, backend=args.leds, brightness=args.brightness)
        opened.callback(strip.close)  # dark again, whatever happens
        camera = opened.enter_context(_led_camera(args.camera, strip))

        def grab() -> Any:
            from hardware.errors import EndOfStream

            try:
                return camera.read().image
            except EndOfStream:
                raise CommandError("the camera's recording ended before the strip was "
                                   "mapped: map it with a live camera") from None

        strip.show([(0, 0, 0)] * count)
        dark = grab()
        for _ in range(args.wait_frames - 1):  # the strip dark in the picture, not a late one
            dark = grab()
        pose, board = _board_pose(dark, intrinsics, profile)
        found = locate_leds(strip.show, grab, count, (pose.intrinsics.K, pose.rvec, pose.tvec),
                            max_frames=args.wait_frames, dist=pose.intrinsics.dist, dark=dark)
        frames = camera.frames_served
    unseen = [led for led, p in found.items() if p is None]
    if unseen:
        shown = ", ".join(map(str, unseen[:8])) + (", ..." if len(unseen) > 8 else "")
        raise LedCalibrationError(
            f"{len(unseen)} of the {count} LEDs never lit up in the camera's picture "
            f"(LED {shown}): check the strip's wiring and power, --count, and that the "
            "camera sees where they shine")
    ledmap = assign(found, profile, count)
    ledmap.save(out)
    shared = sum(1 for led in range(count)
                 if sum(led in leds for leds in ledmap.sites) > 1)
    summary = {"ledmap": str(out), "count": ledmap.count, "shared_leds": shared,
               "seats": {seat: list(leds) for seat, leds in ledmap.seats.items()},
               **board, "frames": frames}
    if args.json:
        print(json.dumps(summary))
    else:
        seats = ", ".join(f"{seat} {list(leds)}" for seat, leds in ledmap.seats.items())
        use = (f"companion run and doctor with --data-dir {args.data_dir} use it"
               if args.out is None else f"use it with companion run --ledmap {out}")
        print(f"mapped {ledmap.count} LEDs to the 54 sites ({shared} lighting a row or column)"
              f"{' and seats ' + seats if seats else ''}; wrote {out}: {use}")
    return 0


def _led_camera(spec: str | None, strip: Any) -> Any:
    """The camera for ``calibrate leds``: ``sim[:LAYOUT]`` is the simulated board that
    shows the strip's lit LEDs where a table wired as LAYOUT (serpentine by default)
    has them; anything else opens as `companion run` opens it."""
    kind, _, layout = (spec or "").partition(":")
    if kind.strip().lower() != "sim":
        return _open_camera(spec)
    from companion.sim.ledtable import led_table_camera
    from hardware.leds.ledmap import builtin

    return led_table_camera(lambda: strip.last_output, builtin(layout or "serpentine"))


def _board_pose(frame: Any, intrinsics: Any, profile: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """The board's pose in a frame from its markers (with the calibrated intrinsics, or
    intrinsics estimated from the markers, as `doctor` measures the view)."""
    from companion.vision.errors import BoardNotFoundError
    from companion.vision.geometry import BoardGeometry
    from companion.vision.pose import detect_markers

    g = BoardGeometry.from_profile(profile)
    markers = detect_markers(frame, g)
    if len(markers) < 2:
        raise CommandError(
            f"no board found: the camera sees {len(markers)} of the 4 board markers, and at "
            "least two are needed; aim the camera at the whole board and light it")
    try:
        pose = pose_from_markers(markers, frame.shape, intrinsics, g)
    except BoardNotFoundError as exc:
        raise CommandError(f"no board found: {exc}") from None
    return pose, {"markers": sorted(markers), "intrinsics": "estimated" if intrinsics is None
                  else "calibrated", "elevation_deg": round(pose.elevation_deg, 1),
                  "pose_error_px": round(float(pose.error_px), 2)}


def register_calibrate(sub: Any) -> None:
    p = sub.add_parser("calibrate", help="camera intrinsics, printable sheets, LED map")
    p.add_argument("what", choices=("camera", "sheets", "leds"),
                   help="camera: intrinsics from ChArUco photos; sheets: printable markers; "
                        "leds: which LED lights which site, lit one at a time for the camera")
    p.add_argument("photos", nargs="?", help="folder of ChArUco photos (camera)")
    p.add_argument("--out", help="output file (camera JSON; leds: the LED map, default "
                                 "DATA_DIR/ledmap.json) or folder (sheets)")
    p.add_argument("--calibration",
                   help="camera: update this calibration file; leds: its camera intrinsics "
                        "(default DATA_DIR/calibration.json; without one they are estimated)")
    p.add_argument("--data-dir", default="/var/lib/companion", metavar="DIR",
                   help="leds: where `companion run` keeps its calibration file; the LED "
                        "map is written there")
    p.add_argument("--camera", help="leds: picamera2, opencv:0, fake, or sim[:LAYOUT] (the "
                                    "simulated board showing the strip's LEDs wired as LAYOUT)")
    p.add_argument("--leds", help="leds: spi, ws281x or fake (default: spi on a Pi)")
    p.add_argument("--count", type=_led_count, default=None,
                   help="leds: LEDs on the strip (default 58: the serpentine layout's, one "
                        "per site and seat; at most 10000)")
    p.add_argument("--brightness", type=_brightness, default=0.5,
                   help="leds: the lit LED's brightness, 0-1 (default 0.5, as run's)")
    p.add_argument("--wait-frames", type=_frames, default=15,
                   help="leds: frames a change on the strip may take to reach the camera "
                        "(1-300, default 15)")
    p.add_argument("--profile", default="reference-board")
    p.add_argument("--dpi", type=_dpi, default=300,
                   help="the printer's resolution (72-1200; default 300)")
    p.add_argument("--free-k3", action="store_true",
                   help="camera: fit the outer radial distortion term k3 too (a wide-angle "
                        "lens; default: held at 0, as it runs away on ordinary lenses)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_calibrate)


# -- replay --------------------------------------------------------------------

def _read_one(job: tuple[str, str | None, tuple[str, ...] | None, bool]) -> dict[str, Any]:
    """Read one photo (in a worker process): plain values, so they pickle."""
    path, camera, colors, check = job
    from companion.vision.reader import load_camera, load_image, photo_warnings, read_image

    damage: list[str] = []
    try:
        reading = read_image(load_image(path, damage=damage), load_camera(camera),
                             list(colors) if colors else None, source=path,
                             check_colours=check)
    except ValueError as exc:
        return {"path": path, "error": str(exc)}
    except Exception as exc:  # one corrupt photo must not stop a whole replay
        return {"path": path, "error": f"unreadable ({type(exc).__name__}: {exc})"}
    # a mirrored photo's pose is the flipped picture's: the fixed camera's comparison of
    # the photos as filed leaves it out
    return {"path": path, "reading": reading.to_json(),
            "pose": None if reading.mirrored else reading.pose,
            "wb": reading.wb, "hypotheses": reading.hypotheses(),
            "tops": reading.covered_tops(), "guesses": reading.covered_guesses,
            "shown": reading.colours_shown, "damage": damage[0] if damage else None,
            "notes": [(w["reason"], w["message"]) for w in photo_warnings(reading)]}


def _one_colour_set(results: list[dict[str, Any]],
                    jobs: list[tuple[str, str | None, tuple[str, ...] | None, bool]],
                    ) -> list[dict[str, Any]]:
    """A game is played with one colour set: photos read alone (no colours named) as
    another set than the game's (the set of most of the towers read) are read again
    with the game's colours. A photo or two of washed-out tops read as the other
    set made the replay fail with "'orange' is not a colour of" the game's edition.
    """
    from collections import Counter

    towers: Counter[tuple[str, ...]] = Counter()
    for res in results:
        if "reading" in res:
            cols = tuple(res["reading"].get("colors") or ())
            towers[cols] += sum(1 for s in res["reading"]["sites"] if s.get("height"))
    if len(towers) < 2:
        return results
    game = max(towers, key=towers.__getitem__)  # (on a tie, the set read first)
    out = []
    for res, job in zip(results, jobs, strict=True):
        cols = tuple(res["reading"].get("colors") or ()) if "reading" in res else game
        if cols != game:
            again = _read_one((job[0], job[1], game, False))
            if "reading" in again:
                again["notes"] = [*again.get("notes", []), (
                    "colour-set", f"read with the game's colours ({', '.join(game)}); "
                    f"alone it looked like {', '.join(cols)}")]
                res = again
        out.append(res)
    return out


def _progress(done: int, total: int, name: str) -> None:
    if not sys.stderr.isatty():
        return
    width = 30
    filled = width * done // max(total, 1)
    sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} {name[:30]:<30}")
    if done == total:
        sys.stderr.write("\n")
    sys.stderr.flush()


#: how many of a game's last photos that tell are checked against the colours named
#: (twice as many are asked: a game's first photos show few towers)
COLOUR_CHECK_PHOTOS = 3


def colour_mismatch(observations: Sequence[Observation], colors: Sequence[str] | None,
                    photos: int = COLOUR_CHECK_PHOTOS) -> str | None:
    """A one-line warning when the photos show another colour set than the one named.

    The reader reads each top as the nearest of the colours it is told: the 2017
    colours named for a photographed 1994 game read its towers as short blue and
    purple ones, and the replay explains them as moves without a word.
    :func:`read_folder` has the last photos' tops read with every colour as well
    (``Observation.colours_shown``); when the last ``photos`` of them that tell
    all show the same set, and it does not hold the colours named, that is said.
    Colours from no one set (a table's own) are not judged.
    """
    from companion.vision.reader import colour_set_warning

    told = [o.colours_shown for o in reversed(observations) if o.colours_shown is not None]
    return colour_set_warning(told[:photos], colors, photos=True)


def read_folder(folder: Path, camera: str | None, colors: list[str] | None,
                workers: int = 2, fixed_camera: bool = True,
                stills_config: Mapping[str, Any] | None = None,
                progress: Callable[[int, int, str], None] | None = None,
                several_cameras: bool = False,
                ) -> tuple[list[Any], list[tuple[str, str]], str]:
    """Read every photo of a folder in game order (in parallel); bad ones are listed.

    Consecutive photos taken from one camera position (a phone on a stand) have
    the block built between them fitted to what changed (``companion.stills``,
    with ``stills_config``'s overrides of the shipped config). ``progress(done,
    total, name)`` hears of each photo read (default: a bar on a terminal).
    ``several_cameras``: the photos are known to come from more than one camera
    (:func:`companion.photos.ordered_photos`)."""
    from companion.photos import ordered_photos
    from companion.replay import Observation
    from companion.rules import Card, Seat, Site, parse_board_json
    from companion.stills import PhotoPose, fit_fixed_camera
    from companion.vision.reader import json_with_guesses, load_camera

    progress = progress or _progress
    load_camera(camera)  # a bad camera file is said once, not as every photo's fault
    photos, how = ordered_photos(folder, several_cameras)
    if not photos:
        raise CommandError(f"{folder}: no photos (jpg, png, heic, ...) in this folder")
    # the last photos (the most towers) are checked against the colours named
    check = len(photos) - 2 * COLOUR_CHECK_PHOTOS
    jobs = [(str(p), camera, tuple(colors) if colors else None, bool(colors) and n >= check)
            for n, p in enumerate(photos)]
    results: list[dict[str, Any]] = []
    if workers > 1 and len(jobs) > 2:
        import multiprocessing as mp

        from companion.workers import quiet_worker

        with mp.get_context("spawn").Pool(workers, initializer=quiet_worker) as pool:
            for n, res in enumerate(pool.imap(_read_one, jobs), 1):
                results.append(res)
                progress(n, len(jobs), Path(res["path"]).name)
    else:
        for n, job in enumerate(jobs, 1):
            results.append(_read_one(job))
            progress(n, len(jobs), Path(job[0]).name)
    if not colors:
        results = _one_colour_set(results, jobs)
    observations, skipped, poses = [], [], []
    for res in results:
        name = Path(res["path"]).name
        if "error" in res:
            msg = res["error"]
            prefix = f"{res['path']}: "
            msg = msg[len(prefix):] if msg.startswith(prefix) else msg
            skipped.append((name, msg.replace(res["path"], name)))
            continue
        # a height the photo cannot tell for sure is still the replay's best evidence of
        # the storeys of a build there (the rules and the next photos weigh it), read
        # as it was before the reader told it apart
        reading = json_with_guesses(res["reading"])
        views, _towers, _colors, unseen = parse_board_json(reading)
        doubtful = frozenset(Site.from_json(d) for d in reading.get("doubtful", []))
        cards = {Seat(seat): Card(*v["cell"]) for seat, v in reading.get("cards", {}).items()}
        # a covered site's far best tower: a doubtful reading (the rescue's arm rule
        # is for a single photo; the replay has the next photos to outvote it)
        guesses = {s: v for s, v in res.get("guesses", {}).items() if s in unseen}
        views = {**views, **guesses}
        unseen = [s for s in unseen if s not in guesses]
        doubtful = doubtful | frozenset(guesses)
        tops = {site: colour for site, colour in res.get("tops", {}).items() if site in unseen}
        observations.append(Observation(name, views, frozenset(unseen), cards, doubtful,
                                        tops=tops, colours_shown=res.get("shown"),
                                        damage=res.get("damage"),
                                        notes=tuple(res.get("notes", ()))))
        poses.append(PhotoPose(res["path"], res.get("pose"), res.get("wb"),
                               res.get("hypotheses")))
    in_play = colors or next((r["reading"].get("colors") for r in results if "reading" in r),
                             None)
    if fixed_camera and in_play:
        observations, report = fit_fixed_camera(observations, poses, list(in_play),
                                                config=stills_config)
        if report.pairs:
            log.info("%d photos in a row from one camera position: %d builds fitted to "
                     "what changed, %d confirmed", report.pairs, report.fitted, report.kept)
    return observations, skipped, how


def cmd_replay(args: argparse.Namespace) -> int:
    import zipfile  # here, not at start-up: every other command would pay for it

    if not args.folder:  # Path("") is the current folder: not what an empty name meant
        raise CommandError("give a folder of photos: companion replay DIR")
    if args.html is not None:  # refused before a single photo is read, not after
        writable_file("--html", args.html, inputs=[args.folder])
    source = Path(args.folder)
    if source.is_file() and zipfile.is_zipfile(source):
        return _replay_zip(source, args)
    if not source.is_dir():
        raise CommandError(f"{source}: " + ("not a folder or a zip of photos" if source.exists()
                                             else "no such folder"))
    if not _has_photos(source):
        albums = _album_photos(source)
        if albums:
            return _replay_albums(source, albums, args)
        return _replay_folder(source, source, args)
    return _replay_folder(source, source, args, left_out=_photos_below(source))


def _has_photos(folder: Path) -> bool:
    from companion.photos import is_photo_file

    return any(is_photo_file(p) for p in folder.iterdir())


#: how many photos the folders of a folder may hold for a replay (a folder of a whole
#: photo library is not a game), and how far they are counted when left out
MOST_FOLDER_PHOTOS = 1000


def _photos_in_folders(folder: Path, most: int) -> list[Path]:
    """The photos in the folders of a folder, in name order, as a zip of it is read
    (hidden files and folders, ``__MACOSX``, left out): no more than ``most + 1`` of
    them, so a photo library below is not walked to its end."""
    from companion.store.safety import is_image_name

    found: list[Path] = []
    for p in folder.rglob("*"):
        parts = p.relative_to(folder).parts
        if len(parts) > 1 and p.is_file() and is_image_name(parts):
            found.append(p)
            if len(found) > most:
                break
    return sorted(found)


def _photos_below(folder: Path, most: int = MOST_FOLDER_PHOTOS) -> int:
    """How many photos lie in the folders of a folder that has photos of its own (up
    to ``most``). Only the folder's own photos are replayed; the players are told of
    the others."""
    return min(len(_photos_in_folders(folder, most)), most)


def _album_photos(folder: Path, most: int = MOST_FOLDER_PHOTOS) -> list[Path]:
    """The photos in the folders of a folder that has none of its own (two phones'
    albums copied side by side), and no more than ``most`` (a folder of a whole
    photo library is not a game)."""
    found = _photos_in_folders(folder, most)
    if len(found) > most:
        raise CommandError(f"{folder}: more than {most} photos in its folders: "
                           "give the folder of one game")
    return found


def _replay_albums(source: Path, photos: list[Path], args: argparse.Namespace) -> int:
    """A folder whose photos lie in its folders: replayed as a zip of it is (each photo
    by its own name, those of one name in several folders named with their folders,
    and then ordered by the times they were taken); a game.json beside the folders
    names the players."""
    import os
    import shutil
    import tempfile

    from companion.store.safety import clashing_names, flat_name

    clash = clashing_names(p.relative_to(source).parts for p in photos)
    with tempfile.TemporaryDirectory(prefix="companion-replay-") as tmp:
        for p in photos:
            name = flat_name(p.relative_to(source).parts, clash)
            target = Path(tmp) / name
            if target.exists():
                raise CommandError(f"{source}: two photos would be named {name!r}")
            try:
                os.symlink(p.resolve(), target)
            except OSError:  # no symbolic links here: a copy
                shutil.copyfile(p, target)
        if (source / "game.json").is_file():
            shutil.copyfile(source / "game.json", Path(tmp) / "game.json")
        return _replay_folder(Path(tmp), source, args, several_cameras=bool(clash))


def _replay_zip(source: Path, args: argparse.Namespace) -> int:
    """A zip of a game's photos (as a phone shares an album), replayed as its folder
    would be: unpacked into a temporary folder, by base name, through
    :func:`companion.store.safety.safe_extract_zip` (names that climb out,
    links, encryption, more than it may unpack: refused whole, in one line).
    Photos of one name in several of its folders (two phones' albums, each with
    its IMG_0001.jpg) are named with their folders and ordered by the times
    they were taken: the names of two cameras do not interleave."""
    import tempfile

    from companion.store.safety import safe_extract_zip

    with tempfile.TemporaryDirectory(prefix="companion-replay-") as tmp:
        try:
            photos = safe_extract_zip(source, tmp, flatten=True)
        except ValueError as exc:
            raise CommandError(f"{source}: {exc}") from None
        if not photos:
            raise CommandError(f"{source}: no photos (jpg, png, heic, ...) in this zip")
        return _replay_folder(Path(tmp), source, args, several_cameras=photos.renamed)


def _replay_folder(folder: Path, source: Path, args: argparse.Namespace,
                   several_cameras: bool = False, left_out: int = 0) -> int:
    """``companion replay`` of the photos in ``folder`` (``source``: the folder or zip
    named on the command line, for messages and the report's title;
    ``several_cameras``: see :func:`companion.photos.ordered_photos`; ``left_out``:
    photos in its folders, not read, which a warning counts)."""
    from companion.replay import replay
    from companion.rules import check_new_game
    from companion.rules.record import config_from_file

    config = None
    game_file = folder / "game.json"
    if game_file.exists():
        config = check_new_game(config_from_file(game_file))
    colors = list(config.colors) if config else args.colors
    observations, skipped, how = read_folder(folder, args.camera, colors, args.workers,
                                             several_cameras=several_cameras)
    if not observations:
        raise CommandError(f"{source}: no photo could be read "
                           f"({'; '.join(f'{n}: {w}' for n, w in skipped[:3])})")
    result = replay(observations, config, skipped=[
        (name, f"{why}; the builds it would show are recovered from the next photo")
        for name, why in skipped], colors=colors)
    mismatch = colour_mismatch(observations, colors)
    if mismatch:
        result.warnings.insert(0, {"photo": None, "reason": "colours", "message": mismatch})
    if left_out:
        many = f"{left_out} or more photos" if left_out >= MOST_FOLDER_PHOTOS else (
            "1 photo" if left_out == 1 else f"{left_out} photos")
        result.warnings.insert(0, {
            "photo": None, "reason": "left-out",
            "message": f"{source}: {many} in its folders not read (only the folder's "
                       "own photos are replayed): give the folder that holds the game's "
                       "photos, or put them all in one folder"})
    out = result.to_json()
    out["order"] = how
    unwritten = _write_report(args.html, out, source) if args.html else None
    if args.json:
        print(json.dumps(out))
    else:
        from companion.replay import grouped_warnings
        from companion.report import check_reason

        for m in out["moves"]:
            text = m.get("notation") or f"{m['seat']} {m['color']}{m['storeys']}@{m['site']}"
            why = check_reason(m, "read by a narrow margin")
            print(f"{text}  ? check {m['site']}: {why}" if m.get("doubtful") else text)
        for w in grouped_warnings(out["warnings"]):
            print(f"warning: {w['message']}")
        for r in out["rounds"]:
            totals = ", ".join(f"{c} {v['total']}" for c, v in r["colors"].items())
            print(f"round {r['round']}: {totals}")
    if unwritten:
        # the replay itself is printed above: only the report is lost
        raise CommandError(unwritten)
    return 0


def _write_report(html: str, out: dict[str, Any], source: Path) -> str | None:
    """Write the replay's HTML report; why it could not be written (None: written).
    The folder was checked before the photos were read, but a disk can fill or a
    folder go in the minutes a replay takes: the moves are printed all the same."""
    from companion.report import replay_html

    boards = [r.get("board", {}) for r in out["rounds"]]
    try:
        Path(html).write_text(replay_html(out, boards, title=f"Replay of {source.name}"),
                              encoding="utf-8")
    except OSError as exc:
        return f"--html {html}: not written ({exc.strerror or exc})"
    return None


def register_replay(sub: Any) -> None:
    p = sub.add_parser("replay", help="replay a game from a folder (or a zip) of photos")
    p.add_argument("folder", metavar="DIR", help="a folder of photos, or a zip of them")
    p.add_argument("--json", action="store_true")
    p.add_argument("--html", metavar="OUT", help="write a self-contained HTML report")
    p.add_argument("--camera", metavar="CAMERA.json", help="intrinsics (default: estimated)")
    p.add_argument("--colors", type=colour_list,
                   help="colours in play, e.g. red,blue,green,black")
    p.add_argument("--workers", type=_workers, default=2,
                   help="photos read in parallel (1-64)")
    p.set_defaults(func=cmd_replay)


# -- evaluate ------------------------------------------------------------------

def cmd_evaluate(args: argparse.Namespace) -> int:
    from companion.vision.evaluation import (
        Totals,
        evaluate,
        folder_set,
        reading_pool,
        rendered_set,
    )
    from companion.vision.settings import load_overrides

    try:
        config = load_overrides(args.config) if args.config else None
        against = load_overrides(args.against) if args.against else None
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    if args.diff and against is None:
        raise CommandError("--diff needs --against (the second config to compare with)")
    for option, given in (("--csv", args.csv), ("--diff", args.diff), ("--sites", args.sites)):
        if given is not None:
            writable_file(option, given, inputs=list(args.folder or ()))
    distinct_files(("--csv", args.csv), ("--diff", args.diff), ("--sites", args.sites))
    # a folder is one set whatever its photos' kinds (each CSV row names its own);
    # several folders are several sets, each under its own name, and "all" adds them up
    folders = [Path(f) for f in args.folder or ()]
    for given in folders:
        if not any(p.with_suffix(".json").exists() for p in _image_paths(given)):
            raise CommandError(f"{given}: no photos with a NAME.json truth beside them")
    sets: dict[str, Path | None]
    if len(folders) == 1:
        sets = {"folder": folders[0]}
    elif folders:
        sets = {str(f): f for f in folders}
        if len(sets) < len(folders):
            raise CommandError("a folder is named twice")
    else:
        sets = {k: None for k in (["mounted", "phone"] if args.kind == "both"
                                  else [args.kind])}
    suffixes = _file_suffixes(sets)

    def own(given: str | None, name: str) -> Path | None:
        """A set's own output file: with several sets, each under its suffix."""
        if not given:
            return None
        path = Path(given)
        return path if len(sets) == 1 else path.with_name(
            f"{path.stem}-{suffixes[name]}{path.suffix}")

    out: dict[str, Any] = {}
    parts = []
    with reading_pool(args.workers) as pool:  # one pool of workers for every set
        for name, folder in sets.items():
            if folder is not None:
                items = folder_set(folder)
            else:
                items = rendered_set(args.n, args.seed, name, args.block_jitter)
            totals = evaluate(items, own(args.csv, name), name, use_camera=args.with_camera,
                              config=config, against=against, diff_path=own(args.diff, name),
                              workers=args.workers, pool=pool,
                              sites_path=own(args.sites, name))
            parts.append(totals)
            out[name] = totals.to_json()
    if len(folders) > 1:
        out["all"] = Totals.merged(parts).to_json()
    print(json.dumps(out, indent=None if args.json else 1))
    return 0


def _file_suffixes(sets: dict[str, Path | None]) -> dict[str, str]:
    """Each set's suffix for its CSV and diff files: the kind, or the folder's own name
    (numbered where two folders share one)."""
    out: dict[str, str] = {}
    for name, folder in sets.items():
        base = folder.name if folder is not None else name
        label, n = base, 1
        while label in out.values():
            n += 1
            label = f"{base}-{n}"
        out[name] = label
    return out


def register_evaluate(sub: Any) -> None:
    p = sub.add_parser("evaluate", help="reading accuracy on a rendered (or given) labelled set")
    p.add_argument("--kind", choices=("mounted", "phone", "both"), default="both")
    p.add_argument("--n", type=_images, default=20, help="images per kind (at most 10000)")
    p.add_argument("--seed", type=seed_number, default=100)
    p.add_argument("--folder", action="append", metavar="DIR",
                   help="photos with <name>.json truth files instead of rendering (the "
                        "simulator's, or manhattan-board/1 files: the board as built, its "
                        "unseen the sites the camera cannot see); again for more sets, each "
                        "reported on its own and all together (\"all\")")
    p.add_argument("--csv", help="write one row per image here")
    p.add_argument("--sites", metavar="F",
                   help="write one row per site of every photo here: its truth, reading, "
                        "verdict, why it was left unseen, the guess kept for it, whether "
                        "it was read narrowly, the camera's elevation")
    p.add_argument("--with-camera", action="store_true",
                   help="give the reader the true intrinsics (default: estimate them)")
    p.add_argument("--block-jitter", type=_jitter, default=(0.0, 0.0), metavar="MM,DEG",
                   help="render each block at its own placement error (e.g. 2.5,4; "
                        "default: one pose per tower)")
    p.add_argument("--config", metavar="JSON",
                   help="reader config overrides: a file or inline JSON, "
                        "e.g. '{\"sites\": {\"glare_log\": 0.3}}'")
    p.add_argument("--against", metavar="JSON",
                   help="read every photo again under these overrides and compare site by site")
    p.add_argument("--diff", metavar="F",
                   help="with --against: write one row per site the two configs read "
                        "differently")
    p.add_argument("--workers", type=_positive, default=1,
                   help="photos read at once in worker processes (stage timings then "
                        "include the others' load)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_evaluate)


def _dpi(text: str) -> int:
    """A printer's resolution: a sheet at 2400 dpi would take gigabytes, at 10 its
    markers' cells would be a pixel wide."""
    value = _positive(text)
    if not 72 <= value <= 1200:
        raise argparse.ArgumentTypeError(f"a printer's resolution, 72-1200, got {value}")
    return value


def _led_count(text: str) -> int:
    from hardware.leds.ledmap import MAX_LEDS

    return whole_number(text, 1, MAX_LEDS)


def _frames(text: str) -> int:
    """Frames a change may take to show: 300 is ten seconds of a 30 fps camera."""
    return whole_number(text, 1, 300)


def _brightness(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 < value <= 1.0:  # (nan fails too) dark LEDs would never be seen
        raise argparse.ArgumentTypeError(f"from above 0 to 1, got {text}")
    return value


def table_pin(text: str) -> str:
    """The PIN the players type on their phones' number pads: 4 to 12 digits (a PIN of
    one character, or of letters no number pad types, was taken)."""
    if not (text.isascii() and text.isdigit() and 4 <= len(text) <= 12):
        raise argparse.ArgumentTypeError(f"4 to 12 digits, got {text!r}")
    return text


def _budget(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0 <= value <= 20000:  # 20 A: more than any 5 V supply a Pi's strip runs on
        raise argparse.ArgumentTypeError(f"from 0 to 20000 mA, got {text}")
    return value


def server_threads(text: str) -> int:
    """The web server's threads: 16 at least (each open page holds one), 256 at most
    (more could not start: "can't start new thread")."""
    return whole_number(text, 16, 256)


def _workers(text: str) -> int:
    """1-64 processes: 0 read nothing in silence, a huge number forked until the Pi
    stalled."""
    return whole_number(text, 1, MAX_WORKERS)


MAX_WORKERS = 64


def _positive(text: str) -> int:
    return whole_number(text, 1)


def _images(text: str) -> int:
    """``evaluate --n``: 1 to 10000 photos a kind (a seed-like number ran for ever)."""
    return whole_number(text, 1, 10000)


def _jitter(text: str) -> tuple[float, float]:
    from companion.sim.scenes import parse_block_jitter

    try:
        return parse_block_jitter(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


# -- doctor --------------------------------------------------------------------

def cmd_doctor(args: argparse.Namespace) -> int:
    from hardware.doctor import System, probe

    # a folder of photos is read as `companion run` reads it (each file checked first)
    report = probe(args.camera, args.leds, args.buttons, sample_frames=args.frames,
                   system=System(open_camera=_open_camera))
    intrinsics, report["calibration"] = _doctor_intrinsics(args)
    report["markers"] = _doctor_markers(args.camera, intrinsics)
    report["ledmap"] = _doctor_ledmap(ledmap_spec(args.ledmap, args.data_dir))
    report["photos"] = _doctor_photos()
    for part in ("calibration", "markers", "ledmap"):
        if report[part].get("advice"):
            report.setdefault("advice", []).append(report[part]["advice"])
            report["ok"] = False
    if report["markers"].get("view_advice"):  # a poor view still works: advice only
        report.setdefault("advice", []).append(report["markers"]["view_advice"])
    if args.json:
        print(json.dumps(report))
    else:
        print(f"platform: {report.get('platform', {}).get('model') or 'not a Raspberry Pi'}")
        for part in ("camera", "leds", "buttons", "calibration", "markers", "ledmap", "photos"):
            item = report.get(part, {})
            print(f"{part}: {'ok' if item.get('ok') else 'PROBLEM'}  "
                  f"{json.dumps({k: v for k, v in item.items() if 'advice' not in k})}")
        for line in report.get("advice", []):
            print(f"advice: {line}")
    return 0 if report.get("ok") else 1


def _doctor_photos() -> dict[str, Any]:
    """Which photo files a replay can read here: a missing HEIC decoder is no fault of
    the live table (``ok`` stays true), only a note for whoever replays iPhone photos."""
    from companion.heif import INSTALL_HINT, decoder_version
    from companion.photos import IMAGE_SUFFIXES

    heic = decoder_version()
    out: dict[str, Any] = {"ok": True, "suffixes": sorted(IMAGE_SUFFIXES), "heic": heic}
    if heic is None:
        out["suffixes"] = [s for s in out["suffixes"] if s not in (".heic", ".heif", ".hif")]
        out["note"] = f"HEIC photos (an iPhone's) cannot be read here: {INSTALL_HINT}"
    return out


def _open_camera(spec: str | None, **kw: Any) -> Any:
    """hardware's open_camera, a folder of photos read with the application's decoder."""
    from companion.live import folder_camera_options
    from hardware.camera import open_camera

    return open_camera(spec, **folder_camera_options(spec), **kw)


def _doctor_markers(camera_spec: str | None, intrinsics: Any = None) -> dict[str, Any]:
    """Grab one frame and count the board markers the camera sees."""
    try:
        from companion.vision.geometry import board_geometry
        from companion.vision.pose import detect_markers

        with _open_camera(camera_spec) as cam:
            frame = cam.read()
        markers = detect_markers(frame.image, board_geometry())
        found = sorted(markers)
    except Exception as exc:  # doctor reports, never crashes
        return {"ok": False, "error": str(exc),
                "advice": "the camera gave no frame to look for board markers in"}
    out: dict[str, Any] = {"ok": len(found) >= 2, "visible": found}
    if len(found) < 2:
        out["advice"] = (f"the camera sees {len(found)} of the 4 board markers: at least two "
                         "are needed; aim the camera at the whole board and light it")
        return out
    try:
        out.update(view_of_board(markers, frame.image.shape, intrinsics))
    except Exception as exc:  # doctor reports, never crashes
        out["view_error"] = str(exc)
    return out


def pose_from_markers(markers: Any, shape: tuple[int, ...], intrinsics: Any = None,
                      geometry: Any = None) -> Any:
    """The board's pose in a frame of ``shape`` from its markers, with the calibrated
    ``intrinsics`` or, without them, intrinsics estimated from the markers."""
    from companion.vision.geometry import board_geometry
    from companion.vision.pose import estimate_intrinsics, solve_pose

    g = geometry if geometry is not None else board_geometry()
    size = (int(shape[1]), int(shape[0]))
    intr = (estimate_intrinsics(markers, g, size) if intrinsics is None
            else intrinsics.scaled_to(size))
    return solve_pose(markers, intr, g).pose


def view_of_board(markers: Any, shape: tuple[int, ...], intrinsics: Any = None
                  ) -> dict[str, Any]:
    """How steeply the camera looks at the board (from its markers, with the
    calibrated ``intrinsics`` or, without them, intrinsics estimated from the
    markers), with advice when heights will be hard to read from there."""
    from companion.vision.geometry import view_advice

    elevation = pose_from_markers(markers, shape, intrinsics).elevation_deg
    out: dict[str, Any] = {"elevation_deg": round(elevation, 1),
                           "intrinsics": "estimated" if intrinsics is None else "calibrated"}
    advice = view_advice(elevation)
    if advice is not None:
        out["view_advice"] = advice
    return out


def _doctor_intrinsics(args: argparse.Namespace) -> tuple[Any, dict[str, Any]]:
    """The calibrated intrinsics ``companion run`` would use (its calibration file),
    or None to estimate them; and what the report says about that file."""
    from pathlib import Path

    from calibration import file as calfile

    path = Path(args.calibration or Path(args.data_dir) / "calibration.json")
    try:
        intrinsics = calfile.camera_intrinsics(calfile.load(path), path)
        if intrinsics is None:
            return None, {"ok": True, "file": str(path),
                          "camera": "not calibrated: intrinsics estimated"}
        return intrinsics, {"ok": True, "file": str(path), "camera": "calibrated"}
    except (ValueError, OSError) as exc:
        return None, {"ok": False, "file": str(path), "error": str(exc).splitlines()[0],
                      "advice": f"the calibration file cannot be used: {exc}"}


#: where `calibrate leds` writes the strip's map in the data folder, and where `run`
#: and `doctor` find it without --ledmap (as they find calibration.json there)
LEDMAP_FILE = "ledmap.json"


def ledmap_spec(ledmap: str | None, data_dir: str) -> str:
    """The LED map asked for: ``--ledmap``, else the data folder's mapped strip, else
    the built-in serpentine layout. A strip mapped in place must not need a systemd
    drop-in before the table uses it."""
    if ledmap is not None:
        return ledmap
    mapped = Path(data_dir) / LEDMAP_FILE
    return str(mapped) if mapped.is_file() else "serpentine"


def _doctor_ledmap(spec: str) -> dict[str, Any]:
    from hardware.leds.ledmap import LedMap, builtin

    try:
        ledmap = LedMap.load(spec) if spec.endswith(".json") else builtin(spec)
    except (ValueError, OSError) as exc:
        return {"ok": False, "error": str(exc),
                "advice": f"the LED map {spec!r} cannot be used: {exc}"}
    return {"ok": True, "name": spec, "count": ledmap.count}


def register_doctor(sub: Any) -> None:
    p = sub.add_parser("doctor", help="check camera, LEDs, buttons and markers; advice")
    p.add_argument("--camera", help="camera spec (picamera2, opencv:0, folder:DIR, fake)")
    p.add_argument("--leds", help="LED backend (spi, ws281x, fake)")
    p.add_argument("--buttons", help="button backend (pi, fake, none)")
    p.add_argument("--ledmap", help="built-in layout or a JSON file (default: "
                   "DATA_DIR/ledmap.json as `calibrate leds` writes it, else serpentine)")
    p.add_argument("--frames", type=_positive, default=15,
                   help="frames sampled for the frame rate")
    p.add_argument("--data-dir", default="/var/lib/companion", metavar="DIR",
                   help="where `companion run` keeps its calibration file")
    p.add_argument("--calibration", metavar="FILE",
                   help="calibration file (default DATA_DIR/calibration.json): its camera "
                        "intrinsics measure the view; without them they are estimated")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_doctor)


# -- bench ---------------------------------------------------------------------

def cmd_bench(args: argparse.Namespace) -> int:
    from companion import bench

    parts = args.only.split(",") if args.only else bench.PARTS
    unknown = [p for p in parts if p not in bench.PARTS]
    if unknown:
        raise CommandError(f"unknown benchmark {unknown[0]!r} (known: {', '.join(bench.PARTS)})")
    result = bench.run(parts)
    print(json.dumps(result, indent=None if args.json else 1))
    return 0


def register_bench(sub: Any) -> None:
    p = sub.add_parser("bench", help="speed and memory benchmarks, printed as JSON")
    # (the parts spelt out: importing companion.bench for its list loads NumPy, and the
    # CLI's start stays light)
    p.add_argument("--only", help="comma-separated: " + ",".join(
        ["rules", "replay", "motion_gate", "vision", "controller", "page"]))
    p.add_argument("--json", action="store_true", help="one line of JSON")
    p.set_defaults(func=cmd_bench)


# -- run -----------------------------------------------------------------------

def cmd_run(args: argparse.Namespace) -> int:
    from companion.live import run_live

    return run_live(args)


def register_run(sub: Any) -> None:
    p = sub.add_parser("run", help="the live table: camera, LEDs, buttons and the page")
    p.add_argument("--data-dir", default="/var/lib/companion", metavar="DIR")
    p.add_argument("--camera", help="picamera2, opencv:0, folder:DIR, video:FILE, fake")
    p.add_argument("--leds", help="spi, ws281x or fake (default: spi on a Pi)")
    p.add_argument("--ledmap", help="built-in layout or a JSON file (default: "
                   "DATA_DIR/ledmap.json as `calibrate leds` writes it, else serpentine)")
    p.add_argument("--brightness", type=float, default=0.5)
    p.add_argument("--budget-ma", type=_budget, default=2000.0,
                   help="current budget of the 5 V supply for the strip, 0-20000 mA")
    p.add_argument("--buttons", default=None, choices=("pi", "fake", "none"),
                   help="button backend (default: COMPANION_BACKEND's, as the camera's and "
                        "the LEDs')")
    p.add_argument("--calibration", help="calibration file (default DATA_DIR/calibration.json)")
    p.add_argument("--game", help="game.json for a new game (players, seats, colours)")
    p.add_argument("--still", type=_seconds, default=0.2,
                   help="seconds of stillness before a read")
    p.add_argument("--arm-timeout", type=_seconds, default=None, metavar="SECONDS",
                   help="longest wait for an arm resting over the board to leave before "
                        "the scene is read anyway (default: the vision config's, 5)")
    p.add_argument("--host", default="0.0.0.0")
    p.add_argument("--port", type=port_number, default=8000)
    p.add_argument("--pin", type=table_pin,
                   help="the table PIN, 4-12 digits (default: six random digits, printed)")
    p.add_argument("--threads", type=server_threads, default=32,
                   help="web server threads, 16-256 (each open page holds one)")
    p.set_defaults(func=cmd_run)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0.0 <= value < 3600.0:
        raise argparse.ArgumentTypeError(f"seconds must be from 0 to 3600, not {text}")
    return value


REGISTER = [register_calibrate, register_replay, register_doctor, register_bench, register_run,
            register_evaluate]
