"""A self-contained HTML report of a replayed game: one file, no network needed."""

from __future__ import annotations

import base64
import html
from collections.abc import Mapping, Sequence
from typing import Any

from companion.replay import grouped_warnings
from companion.rules import Site
from companion.rules.topology import default_topology

#: Display colours of the pieces (CSS); unknown colour names fall back to grey.
CSS_COLORS = {"red": "#be2328", "blue": "#234baa", "green": "#288c46", "black": "#232326",
              "orange": "#eb781e", "yellow": "#f0c828", "purple": "#783c96"}


def board_svg(sites: Sequence[Mapping[str, Any]], highlight: set[int] | None = None,
              unseen: Sequence[Mapping[str, int]] = ()) -> str:
    """Six cities of 3 x 3 sites; each tower as a bar of its height in its colour."""
    topo = default_topology()
    cell, gap = 34, 18
    cw = topo.cols * cell
    w = topo.city_grid[1] * cw + (topo.city_grid[1] + 1) * gap
    h = topo.city_grid[0] * (cw + 16) + (topo.city_grid[0] + 1) * gap
    by_index = {Site.from_json(s).index: s for s in sites}
    hidden = {Site.from_json(u).index for u in unseen}
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" '
             f'class="board" role="img" aria-label="board">']
    for city in range(topo.cities):
        crow, ccol = topo.city_cell(city)
        x0 = gap + ccol * (cw + gap)
        y0 = gap + crow * (cw + 16 + gap)
        parts.append(f'<text x="{x0}" y="{y0 + 11}" class="city">'
                     f'{html.escape(topo.city_names[city])}</text>')
        for r in range(topo.rows):
            for c in range(topo.cols):
                idx = Site(city, r, c).index
                x, y = x0 + c * cell, y0 + 16 + r * cell
                stroke = "#e8a400" if highlight and idx in highlight else "#999"
                width = 3 if highlight and idx in highlight else 1
                parts.append(f'<rect x="{x + 1}" y="{y + 1}" width="{cell - 2}" '
                             f'height="{cell - 2}" fill="#f4f1ea" stroke="{stroke}" '
                             f'stroke-width="{width}"/>')
                if idx in hidden:
                    parts.append(f'<text x="{x + cell / 2}" y="{y + cell / 2 + 4}" '
                                 'class="unseen">?</text>')
                s = by_index.get(idx)
                if s is None:
                    continue
                fill = CSS_COLORS.get(s["owner"], "#888")
                parts.append(f'<rect x="{x + 5}" y="{y + 5}" width="{cell - 10}" '
                             f'height="{cell - 10}" fill="{fill}" rx="3"/>')
                parts.append(f'<text x="{x + cell / 2}" y="{y + cell / 2 + 4}" '
                             f'class="h">{int(s["height"])}</text>')
    parts.append("</svg>")
    return "".join(parts)


def check_reason(move: Mapping[str, Any],
                 narrow: str = "the photo read it by a narrow margin") -> str:
    """Why a replayed move (as ``companion replay --json`` gives it) is marked to be
    checked: no photo showed it as built, or its site was read by a narrow margin
    (``narrow``: the words for that here), or another move fits the photos as well, or it
    builds on a move marked to check and the photos show the two only together."""
    if move.get("never_shown"):
        return "no photo shows it as built"
    return {"ambiguous": "the photos fit another move as well",
            "built-on-doubtful": "built on a move to check"}.get(str(move.get("doubt")), narrow)


def replay_html(result: Mapping[str, Any], boards: Sequence[Mapping[str, Any]],
                crops: Mapping[int, bytes] | None = None, title: str = "Replayed game") -> str:
    """``result`` is ``companion replay --json`` output; ``boards`` the board JSON
    after each round; ``crops`` JPEG bytes of each move's site by move number."""
    crops = crops or {}
    out = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
    ]
    players = result.get("players", [])
    if players:
        out.append("<p class='players'>" + ", ".join(
            f"<b>{html.escape(p['name'])}</b> ({html.escape(p['seat'])}: "
            f"{html.escape('+'.join(p['colors']))})" for p in players) + "</p>")
    res = result.get("result")
    if res:
        out.append("<h2>Result</h2><ul class='standings'>" + "".join(
            f"<li>{s['rank']}. {html.escape(s['name'])}: {s['points']} points</li>"
            for s in res["standings"]) + "</ul>")
    for k, rnd in enumerate(result.get("rounds", [])):
        out.append(f"<section><h2>Round {rnd['round']}</h2>")
        if k < len(boards):
            b = boards[k]
            out.append(board_svg(b.get("sites", []), unseen=b.get("unseen", [])))
        tall = rnd.get("breakdown", {}).get("tallest", {})
        if tall.get("owner"):
            out.append(f"<p>Tallest: {html.escape(tall['sites'][0])} ({tall['height']} "
                       f"storeys), {html.escape(tall['owner'])} scores 3.</p>")
        elif tall.get("sites"):
            out.append(f"<p>Tallest: a tie at {tall['height']} storeys; nobody scores.</p>")
        maj = rnd.get("breakdown", {}).get("majorities", {})
        won = [f"{html.escape(city)}: {html.escape(v['owner'])}"
               for city, v in maj.items() if v.get("owner")]
        out.append(f"<p>Majorities: {', '.join(won) or 'none'}.</p>")
        out.append("<table><tr><th>colour</th><th>tallest</th><th>majorities</th>"
                   "<th>buildings</th><th>round</th></tr>")
        for color, s in rnd["colors"].items():
            out.append(f"<tr><td><span class='dot' style='background:"
                       f"{CSS_COLORS.get(color, '#888')}'></span>{html.escape(color)}</td>"
                       f"<td>{s['tallest']}</td><td>{s['majorities']}</td>"
                       f"<td>{s['buildings']}</td><td><b>{s['total']}</b></td></tr>")
        out.append("</table></section>")
    out.append("<h2>Moves</h2><ol class='moves'>")
    for n, m in enumerate(result.get("moves", [])):
        crop = crops.get(n)
        img = (f"<img alt='' src='data:image/jpeg;base64,{base64.b64encode(crop).decode()}'>"
               if crop else "")
        text = (f"{m.get('seat')}: {m.get('color')} {m.get('storeys')} on {m.get('site')}"
                if m.get("color") else f"{m.get('seat')}: pass")
        order = "" if m.get("order_known", True) else " <i>(order unknown)</i>"
        legal = "" if m.get("legal", True) else " <b class='warn'>illegal</b>"
        doubt = (f" <b class='doubt'>? check this site: {check_reason(m)}</b>"
                 if m.get("doubtful") else "")
        out.append(f"<li>{img}<code>{html.escape(m.get('notation', ''))}</code> "
                   f"{html.escape(text)}{order}{legal}{doubt}</li>")
    out.append("</ol>")
    warnings = grouped_warnings(result.get("warnings", []))
    if warnings:
        out.append("<h2>Warnings</h2><ul>" + "".join(
            f"<li>{html.escape(w['message'])}</li>" for w in warnings) + "</ul>")
    out.append("</body></html>")
    return "\n".join(out)


_CSS = """
body{font-family:system-ui,sans-serif;max-width:980px;margin:1em auto;padding:0 1em;color:#222}
svg.board{width:100%;max-width:640px;display:block}
svg .city{font-size:10px;fill:#555}
svg .h{font-size:12px;fill:#fff;text-anchor:middle;font-weight:bold}
svg .unseen{font-size:14px;fill:#c00;text-anchor:middle}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.2em .6em}
.dot{display:inline-block;width:.8em;height:.8em;border-radius:50%;margin-right:.4em}
.moves img{height:48px;vertical-align:middle;margin-right:.5em}.warn{color:#b00}
.doubt{color:#8a4b00}
"""
