"""A build no photo shows is marked and said, not recorded as sure.

A ray-traced game (tests/replay/raygame.py, seed 56, four players, phone
photos) built a red 3 on Sydney SW in front of a red 8 on Sydney S. No photo
after showed it: the low tower's top lay in the tall one's shadow, so the
reader left the site unseen or took the two towers for one of 11 or 12
storeys. A reading more than two storeys off costs every storey count alike,
so the replay chose among equals (a red 1) and said nothing. Such a build is
now marked doubtful, and a warning names it.
"""

from __future__ import annotations

from dataclasses import replace

from test_infer import _bot_game, _up_to

from companion.replay import Observation, replay
from companion.report import replay_html
from companion.rules import Build, SiteView, make_config
from companion.rules.record import GameRecord


def _hide(photos: list[Observation], site, start: int, view: SiteView | None = None
          ) -> list[Observation]:
    """The photos from ``start`` on with ``site`` unseen (or read as ``view``)."""
    out = list(photos[:start])
    for p in photos[start:]:
        sites = {s: v for s, v in p.sites.items() if s != site}
        if view is None:
            out.append(replace(p, sites=sites, unseen=p.unseen | {site}))
        else:
            out.append(replace(p, sites={**sites, site: view}))
    return out


def _game_to(k: int):
    """The four-player bot game's config, and its moves and photos to a few photos past
    the one taken after move ``k``."""
    cfg, moves, photos, _ = _bot_game(4, 5)
    return (cfg, *_up_to(moves, photos, k + 1))


def test_a_build_no_photo_shows_is_marked_and_said():
    k = 52  # North's green 1 on Sao Paulo E: the only build there
    cfg, moves, photos = _game_to(k)
    build = moves[k]
    assert isinstance(build, Build) and str(build) == "N c10 green1@4E"
    assert [m.site for m in moves if isinstance(m, Build)].count(build.site) == 1
    config = make_config(list(cfg.players), edition=cfg.edition)
    # photo k + 1 is the one taken after the move
    result = replay(_hide(photos, build.site, k + 1), config)
    [shown] = [m for m in result.moves if m.get("never_shown")]
    assert shown["site"] == build.site.name and shown["doubtful"] is True
    assert [w for w in result.warnings if w["reason"] == "never-shown"] == [
        {"photo": "p053", "turn": shown["turn"], "reason": "never-shown",
         "message": f"p053: {shown['notation']}: no photo shows {build.site.name} near as "
                    f"built (green {shown['storeys']}): unseen there, read far otherwise, "
                    "or only narrowly; its storeys are a guess: check it"}]
    # the game record keeps the mark (the page lists the move among those to check)
    marked = [str(e.move) for e in result.record.effective() if e.doubtful]
    assert marked == [shown["notation"]]
    # with its reason, which the record's JSON keeps (the page's hint says it)
    assert [str(e.move) for e in result.record.effective() if e.never_shown] == marked
    again = GameRecord.from_json(result.record.to_json())
    assert [str(e.move) for e in again.effective() if e.never_shown] == marked
    # every other move is as played and unmarked
    assert [m["notation"] for m in result.moves if not m.get("never_shown")] == [
        str(m) for n, m in enumerate(moves) if n != k]
    # the --html report says why it is to be checked
    page = replay_html(result.to_json(), [])
    items = page.split("<ol class='moves'>")[1].split("</ol>")[0].split("<li>")[1:]
    assert [li.split("? check this site: ")[1].split("<")[0] for li in items
            if "check this site" in li] == ["no photo shows it as built"]
    # read far otherwise (a taller tower behind taken for its top): the same
    far = replay(_hide(photos, build.site, k + 1, SiteView(9, "green")), config)
    assert [m["notation"] for m in far.moves if m.get("never_shown")] == [shown["notation"]]
    # read far in its own photo (so not marked for it), then near as built but only
    # by a narrow margin (the reader's doubtful sites: its guesses at sites it left
    # unseen among them) in every photo after: the same (the replay QA's tiny photo)
    narrow = [replace(p, doubtful=p.doubtful | {build.site}) if n > k + 1 else p
              for n, p in enumerate(photos)]
    narrow[k + 1] = _hide(photos, build.site, k + 1, SiteView(9, "green"))[k + 1]
    near = replay(narrow, config)
    assert [m["notation"] for m in near.moves if m.get("never_shown")] == [str(build)]
    # one photo after it that reads it surely shows it
    narrow[k + 3] = photos[k + 3]
    assert not [m for m in replay(narrow, config).moves if m.get("never_shown")]
    # as does a narrow one where its own photo marked it already
    narrow = [replace(p, doubtful=p.doubtful | {build.site}) if n > k else p
              for n, p in enumerate(photos)]
    [marked] = [m for m in replay(narrow, config).moves if m.get("doubtful")]
    assert marked["notation"] == str(build) and not marked.get("never_shown")


def test_a_build_read_a_storey_off_is_not_said():
    k = 52
    cfg, moves, photos = _game_to(k)
    build = moves[k]
    config = make_config(list(cfg.players), edition=cfg.edition)
    # a storey too tall in every photo after: evidence for the build all the same
    result = replay(_hide(photos, build.site, k + 1, SiteView(2, "green")), config)
    assert not [w for w in result.warnings if w["reason"] == "never-shown"]
    assert not any(m.get("never_shown") for m in result.moves)
    # and the exact photos say nothing either
    assert replay(photos, config).warnings == []
