/* The companion page: fetches /api/state, draws it, and redraws on every
 * server-sent event from /events. Changing actions go to the JSON API with the
 * session's CSRF token (after the table PIN unlocked this phone). */
"use strict";

(() => {
  const META = JSON.parse(document.getElementById("meta").textContent);
  const CSRF = document.querySelector('meta[name="csrf-token"]').content;
  const $ = (id) => document.getElementById(id);
  const SEAT_NAMES = { S: "South", W: "West", N: "North", E: "East" };
  const CLOCKWISE = ["S", "W", "N", "E"]; // the turn order round the table
  // what the camera reports besides broken rules (companion.tracking)
  const REPORTS = {
    several: "more than one move at once",
    unexplained: "a change on the board that no move explains",
    revised: "a move the camera revised",
    "not-saved": "the game is not being saved",
    damaged: "a damaged photo file",
    small: "a photo that shows the board small",
    mirrored: "a mirrored photo",
    cropped: "a photo that looks cropped",
    // the replay of uploaded photos
    "bad-photo": "a photo that could not be read",
    "inferred-players": "players worked out from the photos",
    colours: "colours the photos do not show",
    "build-not-shown": "a build no photo shows",
    "order-unknown": "builds whose order the photos do not tell",
    unseen: "sites a photo does not show",
    shrunk: "a tower that looked shorter in a later photo",
    "after-end": "a photo after the game's end",
    "photo-skipped-turn": "a photo that shows two moves",
    impossible: "a move the rules cannot record",
  };
  // what the replay of uploaded photos says of the photos, not of a move on the table:
  // there is nothing to keep or fix, only to take note of
  const NOTES = new Set(["damaged", "small", "mirrored", "cropped", "bad-photo",
    "inferred-players", "colours", "order-unknown", "unseen", "after-end"]);

  const ui = {
    snap: null,
    viewPly: null,       // null: live; a number: the position after that many moves
    unlocked: document.body.classList.contains("unlocked"),
    selectedSite: null,
    selectedRound: null,
    roundsSeen: null,
    editing: null,       // ply being edited in the log
    inserting: null,     // ply before which a missed move is being entered
    connected: false,
  };

  /* ------------------------------------------------------------ helpers */
  function h(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "class") node.className = v;
      else if (k === "text") node.textContent = v;
      else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
      else node.setAttribute(k, v === true ? "" : String(v));
    }
    for (const c of children.flat()) {
      if (c === null || c === undefined || c === false) continue;
      node.appendChild(typeof c === "string" || typeof c === "number"
        ? document.createTextNode(String(c)) : c);
    }
    return node;
  }

  function clear(node) {
    while (node.firstChild) node.removeChild(node.firstChild);
    return node;
  }

  function chip(color, label) {
    return h("span", { class: "chip", title: color },
      h("span", { class: "swatch", style: `background:${Draw.pieceColor(color)}` }),
      label === undefined ? color : label);
  }

  function siteName(idx) {
    const city = Math.floor(idx / 9), row = Math.floor((idx % 9) / 3), col = idx % 3;
    return `${META.cities[city]} ${META.site_names[row][col]}`;
  }

  function playerBySeat(seat) {
    const g = ui.snap && ui.snap.game;
    return g ? g.players.find((p) => p.seat === seat) : null;
  }

  function who(seat) {
    const p = playerBySeat(seat);
    return p ? `${p.name} (${seat})` : SEAT_NAMES[seat] || seat;
  }

  let toastTimer = null;
  function toast(message, kind) {
    const t = $("toast");
    t.textContent = message;
    t.className = "toast " + (kind || "info");
    t.hidden = false;
    clearTimeout(toastTimer);
    toastTimer = setTimeout(() => { t.hidden = true; }, kind === "error" ? 6000 : 3500);
  }

  async function api(path, body, opts) {
    const headers = { "X-CSRF-Token": CSRF };
    const init = { method: "POST", headers, credentials: "same-origin" };
    if (body instanceof FormData) {
      init.body = body;
    } else {
      headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body || {});
    }
    const resp = await fetch(path, init);
    let data = {};
    try { data = await resp.json(); } catch (e) { data = {}; }
    if (!resp.ok) {
      if (resp.status === 403 && /PIN|CSRF/.test(data.error || "")) setUnlocked(false, true);
      throw new Error(data.error || `${resp.status} ${resp.statusText}`);
    }
    if (!(opts && opts.quiet)) refresh();
    return data;
  }

  async function act(path, body, done) {
    try {
      const data = await api(path, body);
      if (done) toast(typeof done === "function" ? done(data) : done, "ok");
      return data;
    } catch (err) {
      toast(err.message, "error");
      return null;
    }
  }

  /* ---------------------------------------------------- state and events */
  let inflight = false, again = false;
  async function refresh() {
    if (inflight) { again = true; return; }
    inflight = true;
    try {
      do {
        again = false;
        const url = ui.viewPly === null ? "/api/state" : `/api/state?ply=${ui.viewPly}`;
        const resp = await fetch(url, { credentials: "same-origin", cache: "no-store" });
        if (!resp.ok) throw new Error(`state: ${resp.status}`);
        const snap = await resp.json();
        ui.snap = snap;
        if (snap.table && snap.table.unlocked !== ui.unlocked) setUnlocked(snap.table.unlocked);
        render();
      } while (again);
    } catch (err) {
      setConn(false);
    } finally {
      inflight = false;
    }
  }

  function setConn(ok) {
    ui.connected = ok;
    const c = $("conn");
    c.classList.toggle("ok", ok);
    c.querySelector(".conn-text").textContent = ok ? "live" : "offline";
  }

  let source = null;
  function connect() {
    if (!window.EventSource) { setInterval(refresh, 3000); return; }
    source = new EventSource("/events");
    source.onopen = () => { setConn(true); refresh(); };
    source.onmessage = (ev) => {
      let event = {};
      try { event = JSON.parse(ev.data); } catch (e) { event = {}; }
      // too many pages open: this one refreshes every 10 s until its stream is let in
      if (event.type === "busy") { setConn(false); return; }
      setConn(true);
      if (event.type === "replay-progress") { showReplayProgress(event); return; }
      refresh();
    };
    source.onerror = () => { setConn(false); };
  }
  // a slow safety net when the stream is down (EventSource retries by itself)
  setInterval(() => { if (!ui.connected) refresh(); }, 10000);

  /* --------------------------------------------------------------- render */
  function render() {
    const s = ui.snap;
    if (!s) return;
    renderStatus(s);
    renderTurn(s);
    renderBoard(s);
    renderLeds(s);
    renderCard(s);
    renderPlayers(s);
    renderScores(s);
    renderResult(s);
    renderWarnings(s);
    renderLog(s);
    renderStepper(s);
    renderCamera(s);
    renderControls(s);
  }

  function live(s) {
    return !s.game || s.game.ply >= s.game.plies;
  }

  function renderStatus(s) {
    const g = s.game;
    $("status-line").textContent = !g ? "No game yet"
      : g.over ? `${shortEdition(g)} \u00b7 game over`
        : `${shortEdition(g)} \u00b7 round ${g.round} of ${g.rounds}`;
  }

  function shortEdition(g) {
    return (g.edition_title || "").replace(/^Manhattan \(/, "").replace(/\)$/, "");
  }

  function renderTurn(s) {
    const t = clear($("turn"));
    const g = s.game;
    if (!g) {
      t.append(h("div", { class: "turn-main" }, "No game is set up."),
        h("div", { class: "turn-sub" }, ui.unlocked ? "Set one up under Table controls."
          : "Unlock the table controls with the PIN to set one up."));
      return;
    }
    if (g.over) {
      const winners = (g.result && g.result.winners) || [];
      t.append(h("div", { class: "turn-main" }, "Game over"),
        h("div", { class: "turn-sub" }, winners.length > 1 ? `Shared win: ${winners.join(", ")}`
          : winners.length ? `${winners[0]} wins` : ""));
      backToTable(t, s);
      return;
    }
    const p = playerBySeat(g.to_move_seat);
    const colors = p ? p.colors : [];
    const doing = g.phase === "commit" ? "chooses blocks" : "to build";
    t.append(h("div", { class: "turn-main" },
      colors.map((c) => h("span", { class: "turn-swatch", style:
        `background:${Draw.pieceColor(c)}` })),
      h("span", { class: "turn-name" }, g.to_move), h("span", { class: "turn-seat" },
        SEAT_NAMES[g.to_move_seat] || g.to_move_seat), h("span", { class: "turn-doing" }, doing)),
    h("div", { class: "turn-sub" }, `Round ${g.round} of ${g.rounds} \u00b7 start player ` +
      `${g.start_player}` + (p && g.phase === "build" ? ` \u00b7 ${p.blocks_left_count} ` +
      `block${p.blocks_left_count === 1 ? "" : "s"} left` : "") +
      // the camera watches the table, not a game replayed from photos
      (g.from_photos && s.table && s.table.services && s.table.services.camera
        ? " \u00b7 replayed from photos: the camera does not record it" : "")));
    backToTable(t, s);
  }

  function backToTable(t, s) {
    // a replay from photos took the place of the table's game: the way back to it
    const g = s.game;
    if (!g || !g.from_photos || !ui.unlocked || !(s.table && s.table.services &&
      s.table.services.table_game)) return;
    t.append(h("div", { class: "turn-sub" }, h("button", { type: "button",
      class: "btn btn-small", id: "table-game-btn",
      onclick: () => act("/api/table-game", {}, "Back to the table's game") },
    "Back to the table's game")));
  }

  function warnSites(s) {
    return s.warnings.filter((w) => !w.resolved && w.site).map((w) => siteIndex(w.site))
      .filter((x) => x !== null);
  }

  function siteIndex(name) {
    // "Sydney NE" -> index; the page knows the city and site names
    for (let c = 0; c < META.cities.length; c++) {
      const prefix = META.cities[c] + " ";
      if (name.startsWith(prefix)) {
        const local = name.slice(prefix.length);
        for (let r = 0; r < 3; r++) {
          const col = META.site_names[r].indexOf(local);
          if (col >= 0) return c * 9 + r * 3 + col;
        }
      }
    }
    return null;
  }

  function renderBoard(s) {
    const g = s.game;
    const guidance = s.guidance;
    const seats = {};
    for (const p of (s.board.players || [])) seats[p.seat] = p.name;
    const svg = Draw.board({
      sites: s.board.sites || [],
      unseen: s.board.unseen || [],
      lit: guidance ? guidance.lit : [],
      dim: guidance ? guidance.dim : [],
      litColor: guidance ? guidance.colors[0] : null,
      warn: live(s) ? warnSites(s) : [],
      last: g ? g.last_site : null,
      monster: g ? g.monster : null,
      selected: ui.selectedSite,
      seats,
      cities: META.cities,
      compact: $("board").clientWidth < 560,
    });
    const box = clear($("board"));
    box.appendChild(svg);
    renderSiteInfo(s);
  }

  function renderSiteInfo(s) {
    const info = $("site-info");
    if (ui.selectedSite === null) {
      info.textContent = "Tap a site for its tower.";
      return;
    }
    const idx = ui.selectedSite;
    const site = (s.board.sites || []).find((x) => x.city * 9 + x.row * 3 + x.col === idx);
    const unseen = (s.board.unseen || []).some((u) => u.city * 9 + u.row * 3 + u.col === idx);
    clear(info).append(h("strong", {}, siteName(idx)), ": ");
    if (unseen) info.append("the camera cannot see this site right now. ");
    if (!site) { info.append("empty."); return; }
    info.append(`${site.height} storey${site.height === 1 ? "" : "s"}, owned by `,
      chip(site.owner), site.blocks && site.blocks.length
        ? h("span", { class: "muted" }, " \u2014 bottom to top: " +
          site.blocks.map((b) => `${b.color} ${b.storeys}`).join(", ")) : "");
  }

  function renderLeds(s) {
    const box = clear($("leds"));
    let colors = s.leds;
    const real = Array.isArray(colors);
    $("leds-label").textContent = real ? "LED strip" : "LED strip (virtual)";
    if (!real) {
      const g = s.guidance;
      const warn = new Set(live(s) ? warnSites(s) : []);
      colors = [];
      for (let i = 0; i < 54; i++) {
        let c = "off";
        if (g && g.lit.includes(i)) c = Draw.pieceColor(g.colors[0]);
        else if (g && g.dim.includes(i)) c = "dim";
        if (warn.has(i)) c = "#e0263a";
        if (s.game && s.game.monster === i) c = "#8e24aa";
        colors.push(c);
      }
    }
    colors.forEach((c, i) => {
      if (!real && i % 9 === 0) box.appendChild(h("span", { class: "led-city",
        title: META.cities[i / 9] }));
      const on = c !== "off" && c !== "dim" && c !== "#000000";
      box.appendChild(h("span", {
        class: "led" + (on ? " on" : "") + (c === "dim" ? " dim" : ""),
        style: on ? `background:${c};color:${c}` : null,
        title: real ? `LED ${i}` : siteName(i),
      }));
    });
  }

  function lastCardMove(s) {
    const upto = s.game ? s.game.ply : 0;
    for (let i = Math.min(upto, s.moves.length) - 1; i >= 0; i--) {
      const m = s.moves[i];
      if (m.type === "build" || m.type === "pass") return m;
    }
    return null;
  }

  function renderCard(s) {
    const box = clear($("card"));
    const g = s.game;
    if (!g) { box.append(h("p", { class: "muted" }, "No game yet.")); return; }
    const seen = g.card_seen;
    const guide = s.guidance;
    if (seen) {
      const p = playerBySeat(seen.seat);
      const lit = guide ? guide.lit.map(siteName) : [];
      box.append(h("div", { class: "card-row" },
        Draw.card(seen.card, { color: p && p.colors[0] }),
        h("div", { class: "card-text" },
          h("div", { class: "card-title" }, `${who(seen.seat)} plays ${seen.card}`),
          guide ? h("p", {}, lit.length
            ? `May build on ${lit.length} site${lit.length === 1 ? "" : "s"}: ${lit.join(", ")}.`
            : "No site this card gives is open to them: the card is discarded.") : null,
          guide && guide.dim.length && lit.length
            ? h("p", { class: "muted" }, `Closed: ${guide.dim.map(siteName).join(", ")}.`)
            : null)));
      return;
    }
    const m = lastCardMove(s);
    if (!m) {
      box.append(h("div", { class: "card-row" }, Draw.card(null),
        h("div", { class: "card-text" }, h("p", { class: "muted" },
          "No card played yet this game."))));
      return;
    }
    const p = playerBySeat(m.seat);
    box.append(h("div", { class: "card-row" }, Draw.card(m.card, { color: p && p.colors[0] }),
      h("div", { class: "card-text" },
        h("div", { class: "card-title" }, `Card just played: ${m.card}`),
        h("p", {}, describe(m)))));
  }

  function describe(m) {
    const name = who(m.seat);
    if (m.type === "commit") {
      if (!m.blocks) return `${name} chose blocks (not seen by the camera)`;
      const by = {};
      for (const b of m.blocks) {
        const [, color, n] = /^(.*?)(\d)$/.exec(b);
        (by[color] = by[color] || []).push(n);
      }
      return `${name} chose blocks: ` + Object.entries(by)
        .map(([c, ns]) => `${c} ${ns.join(", ")}`).join("; ");
    }
    if (m.type === "build") {
      return `${name} played ${m.card} and built a ${m.storeys}-storey ${m.color} block ` +
        `on ${m.site}`;
    }
    if (m.type === "pass") {
      return `${name} played ${m.card}: no legal build, the card is discarded` +
        (m.forfeit ? ` and ${m.forfeit} given up` : "");
    }
    return m.notation;
  }

  function blockGlyph(text) {
    const [, color, n] = /^(.*?)(\d)$/.exec(text) || [null, "?", "1"];
    return h("span", { class: "blk", title: `${color} ${n}-storey`,
      style: `--h:${n};background:${Draw.pieceColor(color)}` }, n);
  }

  function renderPlayers(s) {
    const box = clear($("players"));
    const g = s.game;
    if (!g) return;
    for (const p of g.players) {
      const total = s.scores.players[p.name] || 0;
      const toMove = !g.over && p.seat === g.to_move_seat;
      box.appendChild(h("div", { class: "player" + (toMove ? " to-move" : "") },
        h("div", { class: "player-head" },
          h("span", { class: "seat" }, p.seat),
          p.colors.map((c) => h("span", { class: "swatch big",
            style: `background:${Draw.pieceColor(c)}`, title: c })),
          h("span", { class: "player-name" }, p.name),
          toMove ? h("span", { class: "badge" }, g.phase === "commit" ? "choosing" : "to build")
            : null,
          h("span", { class: "points", title: "points so far" }, String(total))),
        h("div", { class: "player-blocks" },
          p.declared ? (p.blocks_left.length ? p.blocks_left.map(blockGlyph)
            : h("span", { class: "muted" }, g.over ? ""
              : g.phase === "commit" ? (toMove ? "choosing blocks for this round\u2026"
                : "blocks not chosen yet") : "all blocks placed this round"))
            : h("span", { class: "muted" },
              `${p.blocks_left_count} block${p.blocks_left_count === 1 ? "" : "s"} to place ` +
              "(selection not seen)"))));
    }
  }

  function colorOwner(s, color) {
    const p = (s.game ? s.game.players : []).find((x) => x.colors.includes(color));
    return p ? p.name : color;
  }

  function renderScores(s) {
    const rounds = s.scores.rounds;
    const tabs = clear($("round-tabs"));
    const box = clear($("breakdown"));
    if (ui.roundsSeen !== null && live(s) && rounds.length > ui.roundsSeen) {
      ui.selectedRound = rounds.length - 1;
      const panel = $("scores");
      panel.classList.remove("flash");
      void panel.offsetWidth;
      panel.classList.add("flash");
      toast(`Round ${rounds.length} scored`, "ok");
    }
    if (live(s) || ui.roundsSeen === null) ui.roundsSeen = rounds.length;
    if (!rounds.length) {
      box.append(h("p", { class: "muted" }, s.game
        ? "Each round is scored here automatically when its last block is placed."
        : "No game yet."));
      clear($("chart"));
      return;
    }
    if (ui.selectedRound === null || ui.selectedRound >= rounds.length) {
      ui.selectedRound = rounds.length - 1;
    }
    rounds.forEach((r, i) => tabs.appendChild(h("button", {
      type: "button", role: "tab", class: "tab" + (i === ui.selectedRound ? " active" : ""),
      "aria-selected": i === ui.selectedRound ? "true" : "false",
      onclick: () => { ui.selectedRound = i; renderScores(ui.snap); },
    }, `Round ${r.round}`)));
    const k = ui.selectedRound;
    const r = rounds[k];
    const running = {};
    for (const c of Object.keys(r.colors)) {
      running[c] = rounds.slice(0, k + 1).reduce((a, x) => a + x.colors[c].total, 0);
    }
    const colors = Object.keys(r.colors);
    const multi = s.game && s.game.players.some((p) => p.colors.length > 1);
    const rows = colors.map((c) => {
      const sc = r.colors[c];
      return h("tr", {},
        h("th", { scope: "row", title: `${colorOwner(s, c)}: ${c}` },
          chip(c, multi ? c : colorOwner(s, c))),
        h("td", {}, String(sc.tallest)), h("td", {}, String(sc.majorities)),
        h("td", {}, String(sc.buildings)), h("td", { class: "strong" }, String(sc.total)),
        h("td", { class: "strong" }, String(running[c])));
    });
    if (multi) {
      for (const p of s.game.players) {
        const cum = rounds.slice(0, k + 1).reduce((a, x) => a + (x.players[p.name] || 0), 0);
        rows.push(h("tr", { class: "player-row" }, h("th", { scope: "row" }, p.name),
          h("td", { colspan: 3 }, p.colors.join(" + ")),
          h("td", { class: "strong" }, String(r.players[p.name] || 0)),
          h("td", { class: "strong" }, String(cum))));
      }
    }
    box.append(h("div", { class: "table-wrap" }, h("table", { class: "score-table" },
      h("thead", {}, h("tr", {}, h("th", {}, ""), h("th", { title: "tallest building" }, "Tallest"),
        h("th", { title: "city majorities" }, "Cities"), h("th", { title: "one point per building" },
          "Bldgs"), h("th", {}, "Round"), h("th", {}, "Total"))),
      h("tbody", {}, rows))));
    const tall = r.breakdown.tallest;
    const majorities = r.breakdown.majorities || {};
    box.append(h("p", { class: "tallest" }, h("strong", {}, "Tallest building: "),
      tall.owner ? [`${tall.sites[0]}, ${tall.height} storeys, `, chip(tall.owner,
        colorOwner(s, tall.owner))]
        : tall.sites && tall.sites.length
          ? `tie at ${tall.height} storeys (${tall.sites.join(", ")}): nobody scores`
          : "none"));
    box.append(h("div", { class: "majorities" }, h("strong", {}, "City majorities: "),
      Object.entries(majorities).map(([city, m]) => h("span", { class: "maj" },
        h("span", { class: "maj-city" }, city),
        m.owner ? chip(m.owner, colorOwner(s, m.owner))
          : h("span", { class: "muted" }, Object.keys(m.counts || {}).length ? "tie" : "empty")))));
    renderChart(s);
  }

  function renderChart(s) {
    const box = clear($("chart"));
    const g = s.game;
    if (!g) return;
    const rounds = s.scores.rounds;
    const series = g.players.map((p) => {
      const values = [0];
      for (const r of rounds) values.push(values[values.length - 1] + (r.players[p.name] || 0));
      return { name: p.name, color: p.colors[0], values };
    });
    box.appendChild(Draw.chart(series, g.rounds));
  }

  function renderResult(s) {
    const box = $("result");
    const g = s.game;
    if (!g || !g.over || !g.result) { box.hidden = true; return; }
    box.hidden = false;
    clear(box);
    const res = g.result;
    const tb = res.tie_break === "highest-then-most";
    box.append(h("h2", {}, "Final result"),
      h("div", { class: "winner" }, res.winners.length > 1
        ? `Shared first place: ${res.winners.join(" and ")}` : `${res.winners[0]} wins!`),
      h("ol", { class: "standings" }, res.standings.map((st) => h("li", {},
        h("span", { class: "rank" }, `${st.rank}.`),
        st.colors.map((c) => h("span", { class: "swatch", style:
          `background:${Draw.pieceColor(c)}` })),
        h("span", { class: "st-name" }, st.name),
        h("span", { class: "st-points" }, `${st.points} points`),
        tb ? h("span", { class: "muted" }, ` highest ${st.highest}, ${st.buildings} buildings`)
          : null))),
      h("p", { class: "muted" }, tb
        ? "Ties are broken by the highest building, then by the most buildings (2017 rules)."
        : "This edition names no tie-break: tied players share the place."));
  }

  function renderWarnings(s) {
    const box = $("warnings");
    const open = s.warnings.filter((w) => !w.resolved);
    if (!open.length || !live(s)) { box.hidden = true; return; }
    box.hidden = false;
    clear(box).append(h("h2", {}, open.length === 1 ? "Check the table" : `Check the table ` +
      `(${open.length})`));
    for (const w of open) {
      const move = w.about_move === false ? null : s.moves[w.ply];
      const plain = META.reasons[w.reason] || REPORTS[w.reason];
      const noted = NOTES.has(w.reason) && !move;  // of a photo: nothing to keep or fix
      box.append(h("div", { class: "warning" },
        w.crop && META.services.evidence ? h("img", { class: "crop", alt: "photo of the site",
          src: `/evidence/${encodeURIComponent(w.crop)}.jpg`, loading: "lazy" }) : null,
        h("div", { class: "warning-body" },
          h("div", { class: "warning-title" }, capital(plain || w.reason.replace(/-/g, " "))),
          h("p", {}, w.message),
          h("p", { class: "muted" }, move ? `Move ${w.ply + 1}: ${move.notation}` : "",
            w.site ? ` \u00b7 ${w.site}` : ""),
          ui.unlocked ? h("div", { class: "actions" },
            h("button", { type: "button", class: "btn btn-small", onclick: () =>
              act(`/api/warnings/${w.id}/resolve`, {}, noted ? "Noted" : "Kept as it is") },
            noted ? "Noted" : "It happened: keep it"),
            move ? h("button", { type: "button", class: "btn btn-small", onclick: () => {
              ui.editing = w.ply; ui.inserting = null; renderLog(ui.snap); scrollToPly(w.ply);
            } }, "Fix the move") : null,
            move && w.reason === "wrong-turn" ? h("button", { type: "button",
              class: "btn btn-small", onclick: () => {
                ui.inserting = w.ply; ui.editing = null; renderLog(ui.snap); scrollToPly(w.ply);
              } }, "A move before it is missing") : null) : null)));
    }
  }

  function capital(t) {
    return t ? t[0].toUpperCase() + t.slice(1) : t;
  }

  function renderLog(s) {
    const log = clear($("log"));
    if (!s.moves.length) {
      log.append(h("li", { class: "muted empty" }, s.game ? "No moves yet." : "No game yet."));
      return;
    }
    const shown = s.game ? s.game.ply : s.moves.length;
    let round = 0, prevCommit = false;
    s.moves.forEach((m, i) => {
      const isCommit = m.type === "commit";
      if (isCommit && !prevCommit) {
        round += 1;
        log.append(h("li", { class: "round-head" }, `Round ${round}`));
      }
      prevCommit = isCommit;
      const cls = ["move", m.type];
      if (i === shown - 1) cls.push("current");
      if (i >= shown) cls.push("future");
      if (m.warning || m.forced) cls.push("flagged");
      const p = playerBySeat(m.seat);
      const item = h("li", { class: cls.join(" "), "data-ply": i },
        h("span", { class: "ply" }, String(i + 1)),
        h("span", { class: "swatch", style: p ? `background:${Draw.pieceColor(
          m.color || p.colors[0])}` : null }),
        h("div", { class: "move-body" },
          h("code", { class: "notation" }, m.notation),
          h("span", { class: "human" }, describe(m)),
          m.warning ? h("span", { class: "flag" }, `\u26a0 ${m.warning}` +
            (m.agreed ? " (kept by the players)" : "")) : null,
          m.doubtful ? h("span", { class: "doubt", title: m.never_shown ? "the camera never " +
            "saw this build: its storeys are a guess" : "the camera read this site by a narrow " +
            "margin: it may be misread" + (m.second_look ? "; it looks again when the next " +
            "block is built there" : "") },
            `? check this site (${m.site})`,
            m.second_look ? h("span", { class: "second-look" },
              " \u2013 the camera looks again at the next block here") : null,
            ui.unlocked ? h("button", { type: "button", class: "btn btn-tiny", title:
              "the move is right as recorded", onclick: (ev) => {
                ev.stopPropagation();
                act(`/api/moves/${i}/keep`, { expect: m.notation }, "Kept as it is");
              } }, "Looks right") : null) : null),
        m.crop && META.services.evidence ? h("img", { class: "thumb", alt: "camera crop",
          loading: "lazy", src: `/evidence/${encodeURIComponent(m.crop)}.jpg` }) : null,
        ui.unlocked ? h("span", { class: "move-actions" },
          h("button", { type: "button", class: "btn btn-tiny", title: "edit this move",
            onclick: (ev) => {
              ev.stopPropagation(); ui.editing = i; ui.inserting = null; renderLog(ui.snap);
            } }, "Edit"),
          h("button", { type: "button", class: "btn btn-tiny", title: "a move before this " +
            "one was missed: enter it", onclick: (ev) => {
              ev.stopPropagation(); ui.inserting = i; ui.editing = null; renderLog(ui.snap);
            } }, "Insert before"),
          h("button", { type: "button", class: "btn btn-tiny danger", title: "delete this move",
            onclick: (ev) => {
              ev.stopPropagation();
              if (confirm(`Delete move ${i + 1} (${m.notation})?`)) {
                act(`/api/moves/${i}/correct`, { move: null, note: "deleted on the page",
                  expect: m.notation }, afterFix("Move deleted"));
              }
            } }, "Delete")) : null);
      item.addEventListener("click", () => stepTo(i + 1));
      if (ui.inserting === i && ui.unlocked) log.append(insertRow(s, i));
      log.append(item);
      if (ui.editing === i && ui.unlocked) log.append(editRow(m, i));
    });
    const cur = log.querySelector(".current");
    if (cur && ui.editing === null && ui.inserting === null &&
        !log.contains(document.activeElement)) {
      const parent = log;
      const top = cur.offsetTop - parent.offsetTop;
      if (top < parent.scrollTop || top > parent.scrollTop + parent.clientHeight - 40) {
        parent.scrollTop = top - parent.clientHeight / 2;
      }
    }
  }

  // A one-line move form in the log: the notation, a submit and a cancel button.
  function moveRow({ value, label, placeholder, prefix, cls, submit, path, note, toast, close,
    expect }) {
    const input = h("input", { value, "aria-label": label, placeholder, spellcheck: "false",
      autocomplete: "off" });
    const form = h("form", { class: cls }, prefix ? h("span", { class: "muted" }, prefix) : null,
      input,
      h("button", { class: "btn btn-small btn-primary", type: "submit" }, submit),
      h("button", { class: "btn btn-small", type: "button", onclick: () => {
        close(); renderLog(ui.snap);
      } }, "Cancel"));
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const body = { move: input.value.trim(), note };
      if (expect) body.expect = expect; // the move this phone showed there
      const done = await act(path, body, afterFix(toast));
      if (done) close();
    });
    setTimeout(() => input.focus(), 0);
    return h("li", { class: "edit" }, form);
  }

  function editRow(m, i) {
    return moveRow({ value: m.notation, label: "corrected move", cls: "edit-row",
      submit: "Save", path: `/api/moves/${i}/correct`, note: "corrected on the page",
      toast: "Move corrected", close: () => { ui.editing = null; }, expect: m.notation });
  }

  // The toast after a fix names the later moves the rules now refuse.
  function afterFix(text) {
    return (d) => text + (d.flagged && d.flagged.length ? `; now against the rules: move ` +
      d.flagged.map((n) => n + 1).join(", ") : "");
  }

  function insertRow(s, i) {
    // The seat after the move before it is the likeliest one to have been missed.
    const prev = i > 0 ? s.moves[i - 1] : null;
    const seats = (s.game ? s.game.players : []).map((p) => p.seat);
    const after = prev && seats.length ? seats[(seats.indexOf(prev.seat) + 1) % seats.length]
      : "";
    return moveRow({ value: after ? `${after} ` : "", label: "missed move",
      placeholder: "the missed move, e.g. E c02 black1@3NE",
      prefix: `Missed before move ${i + 1}:`, cls: "edit-row insert-row", submit: "Insert",
      path: `/api/moves/${i}/insert`, note: "missed move entered on the page",
      toast: "Move inserted", close: () => { ui.inserting = null; } });
  }

  function scrollToPly(ply) {
    const item = $("log").querySelector(`[data-ply="${ply}"]`);
    if (item) item.scrollIntoView({ block: "center", behavior: "smooth" });
  }

  function renderStepper(s) {
    const g = s.game;
    const pos = $("step-pos");
    const bar = $("history-bar");
    if (!g) { pos.textContent = "\u2013"; bar.hidden = true; return; }
    const isLive = g.ply >= g.plies;
    pos.textContent = g.plies === 0 ? "no moves yet"
      : `move ${g.ply} of ${g.plies}` + (isLive ? " \u00b7 live" : "");
    bar.hidden = isLive;
    $("history-text").textContent = g.ply === 0 ? "Showing the start of the game."
      : `Showing the board after move ${g.ply}: ${s.moves[g.ply - 1].notation}`;
    document.querySelectorAll(".stepper [data-step]").forEach((b) => {
      const step = b.dataset.step;
      b.disabled = (step === "first" || step === "prev") ? g.ply === 0 : isLive;
    });
    $("download").classList.toggle("disabled", false);
  }

  function stepTo(ply) {
    const g = ui.snap && ui.snap.game;
    if (!g) return;
    ui.viewPly = ply === null || ply >= g.plies ? null : Math.max(0, ply);
    refresh();
  }

  function step(kind) {
    const g = ui.snap && ui.snap.game;
    if (!g) return;
    const cur = g.ply;
    if (kind === "first") stepTo(0);
    else if (kind === "prev") stepTo(Math.max(0, cur - 1));
    else if (kind === "next") stepTo(cur + 1);
    else stepTo(null);
  }

  let cameraTimer = null;
  function renderCamera(s) {
    const panel = $("camera");
    const on = META.services.camera;
    panel.hidden = !on;
    if (!on || cameraTimer) return;
    const img = $("camera-img");
    const load = () => {
      if (document.hidden) return;
      const next = new Image();
      next.onload = () => { img.src = next.src; };
      next.src = `/camera.jpg?t=${Date.now()}`;
    };
    load();
    cameraTimer = setInterval(load, 1500);
  }

  /* ------------------------------------------------------------- controls */
  function setUnlocked(on, announce) {
    ui.unlocked = on;
    document.body.classList.toggle("unlocked", on);
    document.body.classList.toggle("locked", !on);
    $("lock-btn").textContent = on ? "Table controls" : "Unlock";
    if (announce && !on) toast("The table controls are locked: enter the PIN again.", "error");
    if (ui.snap) { renderWarnings(ui.snap); renderLog(ui.snap); renderTurn(ui.snap); }
  }

  function showReplayProgress(e) {
    // a photo read on the companion: the page that sent the photos keeps the line until
    // the outcome replaces it; any other page until its next refresh
    const text = e.done < e.total ? `Reading photo ${e.done} of ${e.total} (${e.photo})\u2026`
      : `Read ${e.total} photos; replaying the game\u2026`;
    if (ui.uploading) ui.uploadNote = text;
    $("upload-note").textContent = text;
  }

  function uploadOutcome(d) {
    const plural = (k, word) => `${k} ${word}${k === 1 ? "" : "s"}`;
    const parts = [`Read ${plural(d.files || 0, "file")}: ${plural(d.moves || 0, "move")} replayed`];
    if (d.rounds) parts.push(`${plural(d.rounds.length || 0, "round")} scored`);
    // the replay's warnings join the list when a game was opened (said once for all
    // the photos they are about); otherwise they are said here
    const listed = d.listed ?? (d.warnings || []).length;
    // (what several photos share said once, as the list would say it)
    const said = d.grouped ?? (d.warnings || []).map((w) => w.message);
    if (d.opened === false && said.length) {
      parts.push(`${plural(said.length, "warning")}: ` + said.join("; "));
    } else if (listed) {
      parts.push(`${plural(listed, "warning")} in the list`);
    }
    if ((d.doubtful || []).length) parts.push(`check ${d.doubtful.join(", ")}`);
    return parts.join("; ") + ".";
  }

  function renderControls(s) {
    const note = $("upload-note");
    const btn = $("upload-form").querySelector("button");
    btn.disabled = !META.services.replay;
    // the last upload's progress or outcome stays until the next upload (the state
    // refreshed after it would otherwise put the hint back at once)
    note.textContent = ui.uploadNote || (META.services.replay
      ? "Photos (JPEG, PNG or HEIC) are read in file-name order, or in the order they " +
        "were taken when they come from more than one phone; a game.json may name the players."
      : "Replaying photos is not available on this companion.");
    $("undo-btn").disabled = !s.moves.length;
  }

  function fillSelect(select, options, value) {
    clear(select);
    for (const [v, label] of options) {
      select.appendChild(h("option", { value: v, selected: v === value }, label));
    }
  }

  function setupRows() {
    const edition = META.editions.find((e) => e.name === $("setup-edition").value);
    const n = Number($("setup-count").value);
    const perPlayer = edition.players[String(n)].colors_per_player;
    const seats = { 2: ["S", "N"], 3: ["S", "W", "N"], 4: ["S", "W", "N", "E"] }[n];
    const box = clear($("setup-players"));
    for (let i = 0; i < n; i++) {
      const seat = h("select", { name: `seat${i}`, "aria-label": `seat of player ${i + 1}` });
      fillSelect(seat, META.seats.map((x) => [x, `${x} \u00b7 ${SEAT_NAMES[x]}`]), seats[i]);
      const colorSelects = [];
      for (let k = 0; k < perPlayer; k++) {
        const sel = h("select", { name: `color${i}_${k}`, "aria-label":
          `colour ${k + 1} of player ${i + 1}` });
        fillSelect(sel, edition.colors.map((c) => [c, c]), edition.colors[i * perPlayer + k]);
        colorSelects.push(sel);
      }
      box.appendChild(h("div", { class: "setup-row" },
        h("input", { name: `name${i}`, value: `Player ${i + 1}`, "aria-label":
          `name of player ${i + 1}`, maxlength: 24, required: true }), seat, colorSelects));
    }
  }

  function initControls() {
    fillSelect($("setup-edition"), META.editions.map((e) => [e.name, e.title]), "classic");
    $("setup-edition").addEventListener("change", setupRows);
    $("setup-count").addEventListener("change", setupRows);
    setupRows();
    const variants = clear($("setup-variants"));
    for (const v of META.variants) {
      variants.appendChild(h("label", { class: "check" },
        h("input", { type: "checkbox", name: "variant", value: v }), v.replace("-", " ")));
    }
    fillSelect($("card-seat"), META.seats.map((x) => [x, x]), "S");
    const cards = [];
    for (let r = 0; r < 3; r++) for (let c = 0; c < 3; c++) cards.push([`c${r}${c}`, `c${r}${c}`]);
    fillSelect($("card-card"), cards, "c11");

    $("setup-form").addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const form = ev.target;
      const n = Number($("setup-count").value);
      const players = [];
      for (let i = 0; i < n; i++) {
        const colors = [...form.querySelectorAll(`select[name^="color${i}_"]`)].map((x) => x.value);
        players.push({ name: form.elements[`name${i}`].value.trim(),
          seat: form.elements[`seat${i}`].value, colors });
      }
      // play goes clockwise (S, W, N, E) from player 1, whatever order the seats
      // were picked in: the list sent is the turn order (formats.md)
      const turn = (p) => (CLOCKWISE.indexOf(p.seat) - CLOCKWISE.indexOf(players[0].seat) + 4) % 4;
      players.sort((a, b) => turn(a) - turn(b));
      const g = ui.snap && ui.snap.game;
      if (g && !g.over && g.plies > 0 && !confirm("A game is in progress. Start a new one?")) {
        return;
      }
      const body = { edition: $("setup-edition").value, players,
        variants: [...form.querySelectorAll('input[name="variant"]:checked')].map((x) => x.value),
        no_build: form.elements.no_build.value };
      const done = await act("/api/setup", body, "New game set up");
      if (done) { ui.viewPly = null; ui.selectedRound = null; ui.roundsSeen = null;
        $("setup-ctl").open = false; }
    });
    $("move-form").addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const form = ev.target;
      const done = await act("/api/moves", { move: form.elements.move.value.trim(),
        allow_illegal: form.elements.allow_illegal.checked },
      (d) => d.legal ? `Played ${d.move}` : `Recorded ${d.move} with a warning`);
      if (done) { form.reset(); ui.viewPly = null; }
    });
    $("card-form").addEventListener("submit", (ev) => {
      ev.preventDefault();
      act("/api/cards", { seat: $("card-seat").value, card: $("card-card").value });
    });
    $("undo-btn").addEventListener("click", () => {
      const m = ui.snap && ui.snap.moves[ui.snap.moves.length - 1];
      if (m && confirm(`Take back move ${m.ply + 1} (${m.notation})?`)) {
        act("/api/undo", { expect: m.notation }, (d) => `Took back ${d.undone}`);
      }
    });
    $("upload-form").addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const data = new FormData(ev.target);
      const g = ui.snap && ui.snap.game;
      if (g && !g.over && g.plies > 0 && !g.from_photos) {
        if (!confirm("A game is in play at the table. Its replay from photos takes its " +
          "place on the page (the camera does not record into a replayed game; the " +
          "companion keeps the game in play). Go on?")) return;
        data.set("replace", "1");
      }
      const n = [...data.getAll("photos")].filter((f) => f && f.size).length;
      ui.uploadNote = `Uploading and reading ${n} file${n === 1 ? "" : "s"}\u2026 ` +
        "(each photo takes a second or two; a zip's photos are counted once unpacked)";
      $("upload-note").textContent = ui.uploadNote;
      ui.uploading = true;
      try {
        const d = await api("/api/upload", data);
        toast(`Uploaded ${d.files} files`, "ok");
        ui.uploadNote = uploadOutcome(d);
      } catch (err) {
        toast(err.message, "error");
        ui.uploadNote = `Not replayed: ${err.message}`;
      } finally {
        ui.uploading = false;
      }
      $("upload-note").textContent = ui.uploadNote;
    });
    $("login-form").addEventListener("submit", async (ev) => {
      ev.preventDefault();
      try {
        await api("/api/login", { pin: $("pin").value.trim() }, { quiet: true });
        $("pin").value = "";
        setUnlocked(true);
        toast("Table controls unlocked", "ok");
        refresh();
      } catch (err) {
        toast(err.message, "error");
      }
    });
    $("logout-btn").addEventListener("click", async () => {
      await act("/api/logout", {});
      setUnlocked(false);
    });
    $("lock-btn").addEventListener("click", () => {
      $("controls").scrollIntoView({ behavior: "smooth", block: "start" });
      if (!ui.unlocked) setTimeout(() => $("pin").focus(), 300);
    });
    document.querySelectorAll("[data-step]").forEach((b) =>
      b.addEventListener("click", () => step(b.dataset.step)));
    $("board").addEventListener("click", (ev) => {
      const t = ev.target.closest("[data-site]");
      if (!t) return;
      const idx = Number(t.getAttribute("data-site"));
      ui.selectedSite = ui.selectedSite === idx ? null : idx;
      renderBoard(ui.snap);
    });
    document.addEventListener("keydown", (ev) => {
      const tag = (ev.target && ev.target.tagName) || "";
      if (/INPUT|SELECT|TEXTAREA/.test(tag) || ev.altKey || ev.ctrlKey || ev.metaKey) return;
      const map = { ArrowLeft: "prev", ArrowRight: "next", Home: "first", End: "last" };
      if (map[ev.key]) { ev.preventDefault(); step(map[ev.key]); }
    });
    setUnlocked(ui.unlocked);
  }

  // a real strip changes with the controller, not only with game events: follow it
  if (META.services.leds) {
    setInterval(async () => {
      if (document.hidden || !ui.snap || ui.viewPly !== null) return;
      try {
        const resp = await fetch("/api/leds", { cache: "no-store" });
        if (!resp.ok) return;
        ui.snap.leds = (await resp.json()).leds;
        renderLeds(ui.snap);
      } catch (err) { /* the next state refresh redraws it */ }
    }, 1000);
  }

  initControls();
  refresh();
  connect();
})();
