// All Fives in the browser: drawing the table (SVG) and the panels around it.
// Tile placements are in tile units (a tile is 2 x 1), computed by the server with the same
// Python function as the rgb_array picture (allfives_env.render_image.layout_geometry).
"use strict";

const NS = "http://www.w3.org/2000/svg";
const SIDE_COLORS = ["#569ceb", "#eb6e5a", "#aa78e6", "#f0b43c"];
const $ = (id) => document.getElementById(id);

// ------------------------------------------------------------------ SVG drawing
function el(tag, attrs, parent) {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (parent) parent.appendChild(e);
  return e;
}
function text(parent, x, y, s, attrs) {
  const t = el("text", Object.assign({ x, y }, attrs || {}), parent);
  t.textContent = s;
  return t;
}
// A domino centred on (cx, cy), short side 1: a on top (or left), b below; as draw_tile().
function drawTile(parent, cx, cy, a, b, vertical, opts) {
  opts = opts || {};
  const w = vertical ? 1 : 2, h = vertical ? 2 : 1;
  const g = el("g", { class: "tile" + (opts.cls ? " " + opts.cls : "") }, parent);
  el("rect", { x: cx - w / 2 + 0.07, y: cy - h / 2 + 0.07, width: w, height: h, rx: 0.16,
               class: "shadow" }, g);
  el("rect", { x: cx - w / 2, y: cy - h / 2, width: w, height: h, rx: 0.16, class: "face",
               "stroke-width": opts.outline ? 0.1 : 0.04,
               stroke: opts.outline || "#787062" }, g);
  const m = 0.14;
  if (vertical) el("line", { x1: cx - 0.5 + m, y1: cy, x2: cx + 0.5 - m, y2: cy, class: "bar" }, g);
  else el("line", { x1: cx, y1: cy - 0.5 + m, x2: cx, y2: cy + 0.5 - m, class: "bar" }, g);
  const halves = vertical ? [[cx, cy - 0.5, a], [cx, cy + 0.5, b]]
                          : [[cx - 0.5, cy, a], [cx + 0.5, cy, b]];
  for (const [hx, hy, v] of halves) {
    for (let [px, py] of S.meta.pips[String(v)]) {
      if (!vertical) [px, py] = [py, px];
      el("circle", { cx: hx + px * 0.26, cy: hy + py * 0.26, r: 0.085, class: "pip" }, g);
    }
  }
  return g;
}
function fitBox(svg, x0, y0, x1, y1, minW, minH) {
  const w = Math.max(x1 - x0, minW), h = Math.max(y1 - y0, minH);
  const cx = (x0 + x1) / 2, cy = (y0 + y1) / 2;
  svg.setAttribute("viewBox", `${cx - w / 2} ${cy - h / 2} ${w} ${h}`);
}
function lastPlay(view) {
  if (view.move !== undefined) return view.move && view.move.type === "play" ? view.move : null;
  const plays = (view.events || []).filter((e) => e.type === "play");
  return plays.length ? plays[plays.length - 1] : null;
}

// The layout: tiles, spinner, last move (gold, with its points), open ends, move targets.
function drawBoard(view, targets) {
  const svg = $("board");
  svg.replaceChildren();
  const geo = view.layout;
  const last = lastPlay(view);
  let [x0, y0, x1, y1] = geo.bounds || [-1, -0.5, 1, 0.5];
  for (const p of geo.tiles) {
    const outline = p.tile === geo.last ? "#ffce4a" : (p.tile === geo.spinner ? "#5ac8ff" : null);
    drawTile(svg, p.cx, p.cy, p.a, p.b, p.vertical,
             { outline, cls: p.tile === geo.last ? "last" : "" });
  }
  const spots = view.spots || {};
  for (const e of view.open_ends) {
    const at = spots[e.end];
    if (!at || targets) continue;
    const g = el("g", { class: "end-label" }, svg);
    el("circle", { cx: at[0], cy: at[1], r: 0.42 }, g);
    text(g, at[0], at[1] + 0.16, String(e.value), { "font-size": 0.46 });
    [x0, y0, x1, y1] = [Math.min(x0, at[0] - 1), Math.min(y0, at[1] - 1),
                        Math.max(x1, at[0] + 1), Math.max(y1, at[1] + 1)];
  }
  for (const t of targets || []) {
    const at = spots[t.end];
    if (!at) continue;
    const vertical = t.end === "up" || t.end === "down";
    const w = vertical ? 1 : 2, h = vertical ? 2 : 1;
    const g = el("g", { class: "target", "data-end": t.end, "data-action": t.action }, svg);
    el("rect", { x: at[0] - w / 2, y: at[1] - h / 2, width: w, height: h, rx: 0.16 }, g);
    text(g, at[0], at[1] + 0.13, t.end + (t.points ? ` +${t.points}` : ""),
         { "font-size": 0.34 });
    g.addEventListener("click", () => sendAction(t.action));
    [x0, y0, x1, y1] = [Math.min(x0, at[0] - w / 2), Math.min(y0, at[1] - h / 2),
                        Math.max(x1, at[0] + w / 2), Math.max(y1, at[1] + h / 2)];
  }
  if (last && last.points) {
    const p = geo.tiles.find((q) => q.tile === last.tile_id);
    if (p) {  // above a tile of the line, beside a tile of the up or down arm
      const inLine = Math.abs(p.cy) < 1e-9;
      const bx = inLine ? p.cx : p.cx + (p.vertical ? 0.5 : 1) + 0.65;
      const by = inLine ? p.cy - (p.vertical ? 1 : 0.5) - 0.37 : p.cy;
      const g = el("g", { class: "points-badge" }, svg);
      el("rect", { x: bx - 0.55, y: by - 0.25, width: 1.1, height: 0.5, rx: 0.2 }, g);
      text(g, bx, by + 0.13, `+${last.points}`, { "font-size": 0.38 });
    }
  }
  if (!geo.tiles.length && !(targets || []).length) {
    text(svg, 0, 0.1, "the table is empty: the leader plays any tile",
         { "font-size": 0.5, class: "muted" });
  }
  fitBox(svg, x0 - 0.4, y0 - 0.8, x1 + 0.4, y1 + 0.4, 20, 9);
}

// ------------------------------------------------------------------ panels
const tileText = (t) => `[${t[0]}|${t[1]}]`;
function seatName(view, s) {
  const who = view.agents ? view.agents[s] : "";
  if (view.seat === s) return `seat ${s} (you)`;
  return who ? `seat ${s} (${who})` : `seat ${s}`;
}
function eventText(view, e) {
  const who = seatName(view, e.seat);
  if (e.type === "pass") return `${who} cannot play and passes`;
  if (e.type === "draw") return `${who} draws ${e.tile ? tileText(e.tile) : "a tile"}`;
  const where = e.end === "lead" ? "leads" : `plays on the ${e.end}`;
  return `${who} ${where} ${tileText(e.tile)}` + (e.points ? `: scores ${e.points}` : "");
}
function drawScoreboard(view) {
  const box = $("scoreboard");
  box.replaceChildren();
  const r = view.rules || (S.replay && S.replay.rules);
  const title = document.createElement("div");
  title.className = "title";
  title.textContent = `${view.preset || "recorded game"} · ${r.players} players${r.teams ? " in teams" : ""} · ` +
    `to ${view.target} · hand ${view.hand_index + 1}`;
  box.appendChild(title);
  view.scores.forEach((score, side) => {
    const card = document.createElement("div");
    const active = view.current !== null && view.side_of[view.current] === side;
    card.className = "side" + (active ? " active" : "");
    card.style.borderColor = active ? "#fff" : SIDE_COLORS[side % 4];
    const frac = Math.max(0, Math.min(1, score / view.target));
    card.innerHTML = `<span class="name" style="color:${SIDE_COLORS[side % 4]}"></span>` +
      `<span class="score">${score}</span><span class="of">/ ${view.target}</span>` +
      `<div class="bar"><div style="width:${100 * frac}%;background:${SIDE_COLORS[side % 4]}">` +
      `</div></div>`;
    card.querySelector(".name").textContent = sideName(view, side);
    card.dataset.side = side;
    box.appendChild(card);
  });
}
function drawStatus(view) {
  const ends = view.open_ends;
  let s = "open ends: none yet";
  if (ends.length === 1 && ends[0].end === "lead") s = `the lead alone counts ${view.open_total}`;
  else if (ends.length) s = `open ends ${ends.map((e) => e.value).join(" + ")} = ${view.open_total}`;
  if (view.open_total && view.open_total % 5 === 0) s += " (a multiple of 5: it scored)";
  $("status").innerHTML = "";
  const a = document.createElement("span");
  a.id = "ends";
  a.textContent = s;
  const b = document.createElement("span");
  b.id = "boneyard";
  b.textContent = `boneyard ${view.boneyard}` +
    (view.drawable !== view.boneyard ? ` (${view.drawable} drawable)` : "");
  $("status").append(a, b);
}
function drawSeats(view) {
  const box = $("seat-list");
  box.replaceChildren();
  view.hand_sizes.forEach((n, s) => {
    if (s === view.seat && !view.hand_over) return;
    const row = document.createElement("div");
    row.className = "seat" + (view.current === s ? " to-act" : "");
    row.dataset.seat = s;
    const label = document.createElement("div");
    label.textContent = `${seatName(view, s)}: ${n} tile${n === 1 ? "" : "s"}` +
      (view.current === s ? " · to play" : "");
    row.appendChild(label);
    const tiles = view.hands[String(s)];
    const svg = el("svg", { class: "mini", preserveAspectRatio: "xMinYMid meet" }, row);
    const k = tiles ? tiles.length : n;
    for (let i = 0; i < k; i++) {
      if (tiles) drawTile(svg, 0.5 + i * 1.2, 1, tiles[i][0], tiles[i][1], true);
      else el("rect", { x: i * 0.7, y: 0.2, width: 0.55, height: 1.1, rx: 0.12, class: "back" }, svg);
    }
    svg.setAttribute("viewBox", `-0.1 -0.1 ${Math.max(k * 1.2, 10)} 2.3`);
    box.appendChild(row);
  });
}
function drawLog(view) {
  const box = $("log");
  box.replaceChildren();
  const events = view.events || [];
  events.forEach((e, i, arr) => {
    const li = document.createElement("li");
    li.textContent = eventText(view, e);
    if (i === arr.length - 1) li.className = "newest";
    box.appendChild(li);
  });
  box.scrollTop = box.scrollHeight;
}
function sideName(view, side) {
  const seats = view.side_of.map((sd, s) => (sd === side ? s : -1)).filter((s) => s >= 0);
  return seats.map((s) => seatName(view, s)).join(" + ");
}
const sideScores = (view, values) => values.map((v, i) => `${sideName(view, i)} ${v}`).join(", ");

// The person's hand: legal tiles raised with a gold edge; a click chooses the tile, and the
// ends it fits appear on the board as targets.
function drawHand(view) {
  const svg = $("hand");
  svg.replaceChildren();
  $("legal").replaceChildren();
  const mine = view.seat !== null && view.seat !== undefined && !view.hand_over;
  $("mine").hidden = !mine;
  if (!mine) return;
  const tiles = view.hands[String(view.seat)] || [];
  const legalBy = {};
  for (const m of view.legal) (legalBy[m.tile_id] = legalBy[m.tile_id] || []).push(m);
  tiles.forEach((t, i) => {
    const id = tileId(t);
    const moves = legalBy[id];
    const cls = moves ? (S.selected === id ? "legal selected" : "legal") : "dim";
    const g = drawTile(svg, 0.6 + i * 1.3, moves ? 1.05 : 1.35, t[0], t[1], true,
                       { outline: moves ? "#ffce4a" : null, cls });
    g.dataset.tile = `${t[0]}-${t[1]}`;
    if (moves) g.addEventListener("click", () => chooseTile(id));
  });
  svg.setAttribute("viewBox", `0 -0.1 ${Math.max(tiles.length * 1.3, 12)} 2.6`);
  $("prompt").textContent = view.waiting === "you"
    ? (S.selected === null ? "Your turn: click a raised tile, then an end on the table"
                           : "Now click an end on the table (or another tile)")
    : "Your hand";
  for (const m of view.legal) {
    const b = document.createElement("button");
    b.className = "move";
    b.textContent = `${tileText(m.tile)} ${m.end}` + (m.points ? ` +${m.points}` : "");
    b.dataset.action = m.action;
    b.addEventListener("click", () => sendAction(m.action));
    $("legal").appendChild(b);
  }
}
function tileId(t) { // index of [a, b] (a <= b) in the order [0,0], [0,1], ..., [6,6]
  const [a, b] = t[0] <= t[1] ? t : [t[1], t[0]];
  return a * 7 - (a * (a - 1)) / 2 + (b - a);
}
function chooseTile(id) {
  S.selected = id;
  render();
}
function drawBanner(view) {
  const ban = $("banner");
  ban.hidden = !(view.hand_over || view.game_over);
  if (ban.hidden) return;
  ban.replaceChildren();
  const h = document.createElement("h2");
  const p = document.createElement("p");
  const res = view.hand_result || {};
  if (view.game_over) {
    const you = view.seat !== null && view.seat !== undefined;
    h.textContent = view.winner === null ? "Game over: no winner (truncated)"
      : `Game over: ${sideName(view, view.winner)} won` +
        (you ? (view.side_of[view.seat] === view.winner ? ": you win!" : ": you lose") : "");
    p.textContent = "Final score: " + sideScores(view, view.scores);
  } else {
    const reason = { domino: "dominoed", blocked: "blocked", target: "target reached" };
    const who = res.winner === null || res.winner === undefined ? "nobody"
      : sideName(view, res.winner);
    h.textContent = `Hand ${view.hand_index + 1} over (${reason[res.reason] || res.reason}): ` +
      `${who} takes it`;
    p.textContent = `End-of-hand points: ${sideScores(view, res.hand_points)}. ` +
      `Scores: ${sideScores(view, view.scores)}`;
  }
  ban.append(h, p);
  if (view.saved || view.save_error) {
    const s = document.createElement("p");
    s.className = "saved";
    s.textContent = view.saved ? `Record saved to ${view.saved}` : view.save_error;
    ban.appendChild(s);
  }
  if (view.waiting === "next_hand" && S.mode === "play") {
    const b = document.createElement("button");
    b.id = "next-hand";
    b.textContent = "Next hand";
    b.addEventListener("click", () => step());
    ban.appendChild(b);
  }
  if (view.game_over && S.mode !== "replay") {
    const b = document.createElement("button");
    b.id = "again";
    b.textContent = "New game";
    b.addEventListener("click", () => { sessionStorage.removeItem(key()); showSetup(); });
    ban.appendChild(b);
  }
}
