/* Drawing for the companion page: the board (six cities of 3 x 3 sites with
 * isometric towers), a building card, the totals chart and the LED strip.
 * Pure functions from data to SVG elements; no network, no page state. */
"use strict";

const Draw = (() => {
  const NS = "http://www.w3.org/2000/svg";

  /* Piece colours (the plastic under daylight, as in the reference board). */
  const PIECES = {
    red: "#be2328", blue: "#2a5cc4", green: "#288c46", black: "#2b2b30",
    orange: "#eb781e", yellow: "#f0c828", purple: "#7a3c98",
  };
  const UNKNOWN = "#9c968a";

  function pieceColor(name) {
    return PIECES[name] || UNKNOWN;
  }

  function hexToRgb(hex) {
    const v = parseInt(hex.slice(1), 16);
    return [(v >> 16) & 255, (v >> 8) & 255, v & 255];
  }

  function rgbToHex(rgb) {
    return "#" + rgb.map((x) => Math.max(0, Math.min(255, Math.round(x)))
      .toString(16).padStart(2, "0")).join("");
  }

  /* Mix a colour toward white (f > 0) or black (f < 0). */
  function shade(hex, f) {
    const rgb = hexToRgb(hex);
    const target = f > 0 ? 255 : 0;
    const k = Math.abs(f);
    return rgbToHex(rgb.map((c) => c + (target - c) * k));
  }

  /* Faces of a block: top lit, left in light, right in shadow. Black needs lifting. */
  function faces(name) {
    const base = name ? pieceColor(name) : UNKNOWN;
    if (name === "black") {
      return { top: "#55555e", left: "#3a3a41", right: "#222226", edge: "rgba(255,255,255,.28)" };
    }
    return { top: shade(base, 0.12), left: base, right: shade(base, -0.28),
      edge: "rgba(0,0,0,.28)" };
  }

  function el(tag, attrs, children) {
    const node = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v !== null && v !== undefined) node.setAttribute(k, String(v));
    }
    for (const child of children || []) {
      if (child === null || child === undefined) continue;
      node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
    }
    return node;
  }

  function pts(list) {
    return list.map(([x, y]) => `${x.toFixed(1)},${y.toFixed(1)}`).join(" ");
  }

  /* ---------------------------------------------------------------- board */
  const CELL = 56;       // site pitch
  const PAD = 8;         // city padding around its 9 sites
  const GAP = 18;        // between cities
  const HEAD = 46;       // room above a city for the back row's towers
  const LABEL = 24;      // city name below its sites
  const MX = 24, MY = 24; // margins (seat labels live here)
  const CW = 3 * CELL + 2 * PAD;
  const ROWH = HEAD + CW + LABEL;
  const A = CELL * 0.33; // iso footprint half-width
  const B = A * 0.55;    // iso footprint half-depth
  const WIDTH = 2 * MX + 3 * CW + 2 * GAP;
  const HEIGHT = 2 * MY + 2 * ROWH + GAP;

  function siteBox(city, row, col) {
    const crow = Math.floor(city / 3), ccol = city % 3;
    const x = MX + ccol * (CW + GAP) + PAD + col * CELL;
    const y = MY + crow * (ROWH + GAP) + HEAD + PAD + row * CELL;
    return { x, y, cx: x + CELL / 2, cy: y + CELL * 0.64 };
  }

  /* Majority owner of each city now (strict majority of buildings; ties: none). */
  function cityOwners(sites) {
    const counts = Array.from({ length: 6 }, () => ({}));
    for (const s of sites) counts[s.city][s.owner] = (counts[s.city][s.owner] || 0) + 1;
    return counts.map((c) => {
      const entries = Object.entries(c).sort((a, b) => b[1] - a[1]);
      if (!entries.length || (entries[1] && entries[1][1] === entries[0][1])) return null;
      return entries[0][0];
    });
  }

  function tower(g, site, box, storeyPx, opts) {
    const blocks = (site.blocks && site.blocks.length)
      ? site.blocks : [{ color: null, storeys: site.height }];
    const { cx, cy } = box;
    let z = 0;
    const parts = [];
    blocks.forEach((blk, i) => {
      const z0 = z, z1 = z + blk.storeys * storeyPx;
      const f = faces(blk.color);
      parts.push(el("polygon", { points: pts([[cx - A, cy - z0], [cx, cy + B - z0],
        [cx, cy + B - z1], [cx - A, cy - z1]]), fill: f.left, stroke: f.edge, "stroke-width": 0.6 }));
      parts.push(el("polygon", { points: pts([[cx, cy + B - z0], [cx + A, cy - z0],
        [cx + A, cy - z1], [cx, cy + B - z1]]), fill: f.right, stroke: f.edge, "stroke-width": 0.6 }));
      for (let k = 1; k < blk.storeys; k++) { // the grooves that mark storeys
        const zk = z0 + k * storeyPx;
        parts.push(el("polyline", { points: pts([[cx - A, cy - zk], [cx, cy + B - zk],
          [cx + A, cy - zk]]), fill: "none", stroke: f.edge, "stroke-width": 0.5,
          "stroke-dasharray": blocks.length === 1 && !blk.color ? "2 2" : null }));
      }
      if (i === blocks.length - 1) {
        const top = faces(site.owner).top;
        parts.push(el("polygon", { points: pts([[cx, cy - B - z1], [cx + A, cy - z1],
          [cx, cy + B - z1], [cx - A, cy - z1]]), fill: top, stroke: f.edge,
          "stroke-width": 0.6, class: opts.last ? "top-last" : null }));
      }
      z = z1;
    });
    const t = el("g", { class: "tower" + (opts.last ? " last" : "") }, parts);
    g.appendChild(t);
    return z;
  }

  /* The whole board as an SVG element.
   * data: {sites, unseen, lit, dim, warn, last, monster, selected, litColor, seats, cities} */
  function board(data) {
    const k = data.compact ? 1.55 : 1; // labels grow on small screens
    const svg = el("svg", { viewBox: `0 0 ${WIDTH} ${HEIGHT}`,
      class: "board-svg" + (data.compact ? " compact" : ""),
      xmlns: NS, "aria-hidden": "true" });
    const defs = el("defs", {}, [
      el("pattern", { id: "hatch", width: 6, height: 6, patternUnits: "userSpaceOnUse",
        patternTransform: "rotate(45)" }, [el("rect", { width: 6, height: 6, fill: "#e9e4da" }),
        el("line", { x1: 0, y1: 0, x2: 0, y2: 6, stroke: "#b5ab98", "stroke-width": 2.4 })]),
      el("filter", { id: "glow", x: "-50%", y: "-50%", width: "200%", height: "200%" }, [
        el("feGaussianBlur", { stdDeviation: 2.2 })]),
    ]);
    svg.appendChild(defs);
    const bySite = new Map(data.sites.map((s) => [s.city * 9 + s.row * 3 + s.col, s]));
    const unseen = new Set((data.unseen || []).map((u) => u.city * 9 + u.row * 3 + u.col));
    const lit = new Set(data.lit || []), dim = new Set(data.dim || []);
    const warn = new Set(data.warn || []);
    const owners = cityOwners(data.sites);
    const maxH = Math.max(8, ...data.sites.map((s) => s.height));
    const storeyPx = Math.min(6.5, (HEAD + CELL * 0.64 + PAD - B - 16) / maxH);

    // seat labels around the board
    const seatLabels = el("g", { class: "seats" });
    const seatText = (seat) => {
      const p = (data.seats || {})[seat];
      return p ? `${seat} \u00b7 ${p}` : seat;
    };
    seatLabels.appendChild(el("text", { x: WIDTH / 2, y: data.compact ? 18 : 15,
      "text-anchor": "middle" },
      [seatText("N")]));
    seatLabels.appendChild(el("text", { x: WIDTH / 2, y: HEIGHT - 5, "text-anchor": "middle" },
      [seatText("S")]));
    const side = data.compact ? 16 : 14;
    seatLabels.appendChild(el("text", { x: side, y: HEIGHT / 2, "text-anchor": "middle",
      transform: `rotate(-90 ${side} ${HEIGHT / 2})` }, [seatText("W")]));
    seatLabels.appendChild(el("text", { x: WIDTH - side + 4, y: HEIGHT / 2, "text-anchor": "middle",
      transform: `rotate(90 ${WIDTH - side + 4} ${HEIGHT / 2})` }, [seatText("E")]));
    svg.appendChild(seatLabels);

    // city panels and site tiles
    const tiles = el("g", { class: "tiles" });
    for (let city = 0; city < 6; city++) {
      const crow = Math.floor(city / 3), ccol = city % 3;
      const x0 = MX + ccol * (CW + GAP), y0 = MY + crow * (ROWH + GAP) + HEAD;
      tiles.appendChild(el("rect", { x: x0, y: y0, width: CW, height: CW + LABEL, rx: 10,
        class: "city" }));
      const name = (data.cities || [])[city] || `City ${city}`;
      const owner = owners[city];
      const label = el("g", { class: "city-label" });
      label.appendChild(el("text", { x: x0 + PAD + 2, y: y0 + CW + LABEL - (data.compact ? 5 : 8) },
        [name]));
      if (owner) {
        label.appendChild(el("rect", { x: x0 + CW - PAD - 30, y: y0 + CW + LABEL - 19, width: 28,
          height: 12, rx: 6, fill: pieceColor(owner), class: "majority-chip" },
        [el("title", {}, [`majority: ${owner}`])]));
      }
      tiles.appendChild(label);
      for (let r = 0; r < 3; r++) {
        for (let c = 0; c < 3; c++) {
          const idx = city * 9 + r * 3 + c;
          const box = siteBox(city, r, c);
          let cls = "tile";
          if (unseen.has(idx)) cls += " unseen";
          if (lit.has(idx)) cls += " lit";
          if (dim.has(idx)) cls += " dim";
          if (warn.has(idx)) cls += " warn";
          if (data.last === idx) cls += " last";
          if (data.selected === idx) cls += " selected";
          const attrs = { x: box.x + 3, y: box.y + 3, width: CELL - 6, height: CELL - 6, rx: 7,
            class: cls };
          if (lit.has(idx) && data.litColor) {
            attrs.style = `fill:${shade(pieceColor(data.litColor), 0.72)};` +
              `stroke:${pieceColor(data.litColor)}`;
          }
          tiles.appendChild(el("rect", attrs));
          if (lit.has(idx)) {
            tiles.appendChild(el("circle", { cx: box.x + 11, cy: box.y + 11, r: 4.5,
              class: "led-dot", style: `fill:${pieceColor(data.litColor)}` }));
          }
        }
      }
    }
    svg.appendChild(tiles);

    // towers, back to front, so nearer towers hide farther ones
    const towers = el("g", { class: "towers" });
    const tops = [];
    const order = [...bySite.keys()].sort((a, b) => {
      const ka = [Math.floor(Math.floor(a / 9) / 3), Math.floor((a % 9) / 3), a];
      const kb = [Math.floor(Math.floor(b / 9) / 3), Math.floor((b % 9) / 3), b];
      return ka[0] - kb[0] || ka[1] - kb[1] || ka[2] - kb[2];
    });
    for (const idx of order) {
      const s = bySite.get(idx);
      const box = siteBox(s.city, s.row, s.col);
      const z = tower(towers, s, box, storeyPx, { last: data.last === idx });
      tops.push({ s, box, z, idx });
    }
    svg.appendChild(towers);

    // labels on top of everything: heights, unseen marks, warnings, the monster
    const labels = el("g", { class: "labels" });
    // a tall tower in front can lift its number onto the one behind: nudge sideways
    const placed = [];
    const overlaps = (r) => placed.some((p) => r.x < p.x + p.w && p.x < r.x + r.w &&
      r.y < p.y + p.h && p.y < r.y + r.h);
    for (const { s, box, z, idx } of tops) {
      const y = box.cy - z - B - 9 * k;
      const text = String(s.height);
      const w = (8 + 7 * text.length) * k, hgt = 15 * k;
      let cx = box.cx;
      for (const dx of [0, w * 0.85, -w * 0.85, w * 1.7, -w * 1.7]) {
        if (!overlaps({ x: box.cx + dx - w / 2, y: y - 8 * k, w, h: hgt })) { cx = box.cx + dx; break; }
      }
      placed.push({ x: cx - w / 2, y: y - 8 * k, w, h: hgt });
      labels.appendChild(el("g", { class: "height" + (data.last === idx ? " last" : "") }, [
        cx !== box.cx ? el("line", { x1: box.cx, y1: y + 6 * k, x2: cx, y2: y, class: "leader",
          style: `stroke:${pieceColor(s.owner)}` }) : null,
        el("rect", { x: cx - w / 2, y: y - 8 * k, width: w, height: hgt, rx: 7.5 * k,
          style: `stroke:${pieceColor(s.owner)}` }),
        el("text", { x: cx, y: y + 3.6 * k, "text-anchor": "middle",
          style: `font-size:${11 * k}px` }, [text]),
      ]));
    }
    for (const idx of unseen) {
      const box = siteBox(Math.floor(idx / 9), Math.floor((idx % 9) / 3), idx % 3);
      labels.appendChild(el("text", { x: box.cx, y: box.y + CELL / 2 + 7, class: "unseen-mark",
        "text-anchor": "middle" }, ["?"]));
    }
    for (const idx of warn) {
      const box = siteBox(Math.floor(idx / 9), Math.floor((idx % 9) / 3), idx % 3);
      labels.appendChild(el("g", { class: "warn-badge" }, [
        el("circle", { cx: box.x + CELL - 10, cy: box.y + 10, r: 7 }),
        el("text", { x: box.x + CELL - 10, y: box.y + 14, "text-anchor": "middle" }, ["!"]),
      ]));
    }
    if (data.monster !== null && data.monster !== undefined) {
      const m = data.monster;
      const box = siteBox(Math.floor(m / 9), Math.floor((m % 9) / 3), m % 3);
      labels.appendChild(el("g", { class: "monster" }, [
        el("title", {}, ["the monster"]),
        el("ellipse", { cx: box.x + 14, cy: box.y + CELL - 14, rx: 10, ry: 9 }),
        el("circle", { cx: box.x + 10, cy: box.y + CELL - 16, r: 2.4, class: "eye" }),
        el("circle", { cx: box.x + 18, cy: box.y + CELL - 16, r: 2.4, class: "eye" }),
      ]));
    }
    svg.appendChild(labels);

    // hit areas: one per site, on top, for taps
    const hits = el("g", { class: "hits" });
    for (let idx = 0; idx < 54; idx++) {
      const box = siteBox(Math.floor(idx / 9), Math.floor((idx % 9) / 3), idx % 3);
      hits.appendChild(el("rect", { x: box.x, y: box.y, width: CELL, height: CELL,
        "data-site": idx, fill: "transparent" }));
    }
    svg.appendChild(hits);
    return svg;
  }

  /* ----------------------------------------------------------------- card */
  /* A building card as printed: two identical 3 x 3 grids with the red cell. */
  function card(code, opts) {
    const m = /^c([0-2])([0-2])$/.exec(code || "");
    const svg = el("svg", { viewBox: "0 0 63 88", class: "card-svg" + (m ? "" : " empty"),
      role: "img", "aria-label": m ? `card ${code}` : "no card" });
    svg.appendChild(el("rect", { x: 0.8, y: 0.8, width: 61.4, height: 86.4, rx: 4.5,
      class: "card-face" }));
    svg.appendChild(el("rect", { x: 3.5, y: 3.5, width: 56, height: 81, rx: 2.5,
      class: "card-frame" }));
    if (!m) return svg;
    const [row, col] = [Number(m[1]), Number(m[2])];
    for (const centre of [31.5 - 15, 31.5 + 15]) {
      const x0 = centre - 13.5 * 0.92, size = 9 * 0.92;
      for (let r = 0; r < 3; r++) {
        for (let c = 0; c < 3; c++) {
          svg.appendChild(el("rect", { x: x0 + c * size, y: 7 + r * size, width: size,
            height: size, class: r === row && c === col ? "cell red" : "cell" }));
        }
      }
    }
    // a little skyline where the artwork is
    const sky = [[9, 62, 7, 14], [17, 54, 6, 22], [24, 58, 8, 18], [33, 48, 7, 28],
      [41, 57, 6, 19], [48, 52, 7, 24]];
    for (const [x, y, w, h] of sky) {
      svg.appendChild(el("rect", { x, y, width: w, height: h, class: "sky",
        style: opts && opts.color ? `fill:${shade(pieceColor(opts.color), 0.45)}` : null }));
    }
    svg.appendChild(el("text", { x: 31.5, y: 46, "text-anchor": "middle", class: "card-code" },
      [code]));
    return svg;
  }

  /* ---------------------------------------------------------------- chart */
  /* Running totals per player over the rounds; series: [{name, color, values}]. */
  function chart(series, rounds) {
    const W = 360, H = 190, L = 34, R = 64, T = 12, Bm = 26;
    const svg = el("svg", { viewBox: `0 0 ${W} ${H}`, class: "chart-svg", role: "img",
      "aria-label": "running totals per player" });
    const maxV = Math.max(10, ...series.flatMap((s) => s.values));
    const step = maxV > 60 ? 20 : maxV > 30 ? 10 : 5;
    const top = Math.ceil(maxV / step) * step;
    const x = (i) => L + (i * (W - L - R)) / Math.max(1, rounds);
    const y = (v) => T + (H - T - Bm) * (1 - v / top);
    for (let v = 0; v <= top; v += step) {
      svg.appendChild(el("line", { x1: L, x2: W - R, y1: y(v), y2: y(v), class: "grid" }));
      svg.appendChild(el("text", { x: L - 6, y: y(v) + 4, "text-anchor": "end", class: "axis" },
        [String(v)]));
    }
    for (let i = 0; i <= rounds; i++) {
      svg.appendChild(el("text", { x: x(i), y: H - 8, "text-anchor": "middle", class: "axis" },
        [i === 0 ? "start" : `R${i}`]));
    }
    const ends = [];
    for (const s of series) {
      const color = pieceColor(s.color);
      const points = s.values.map((v, i) => [x(i), y(v)]);
      svg.appendChild(el("polyline", { points: pts(points), class: "line",
        style: `stroke:${color}` }));
      points.forEach(([px, py], i) => svg.appendChild(el("circle", { cx: px, cy: py, r: 3.4,
        class: "pt", style: `fill:${color}` }, [el("title", {}, [`${s.name}: ${s.values[i]}`])])));
      const last = points[points.length - 1];
      ends.push({ y: last[1], x: last[0], text: `${s.values[s.values.length - 1]} ${s.name}`,
        color });
    }
    ends.sort((a, b) => a.y - b.y); // spread end labels so they do not overlap
    for (let i = 1; i < ends.length; i++) ends[i].y = Math.max(ends[i].y, ends[i - 1].y + 12);
    for (const e of ends) {
      svg.appendChild(el("text", { x: e.x + 6, y: e.y + 4, class: "end-label",
        style: `fill:${e.color === pieceColor("yellow") ? "#8a6d00" : e.color}` },
      [e.text.length > 12 ? e.text.slice(0, 11) + "\u2026" : e.text]));
    }
    return svg;
  }

  return { board, card, chart, pieceColor, shade, el, WIDTH, HEIGHT };
})();
