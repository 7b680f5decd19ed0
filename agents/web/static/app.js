// All Fives in the browser: play, watch, replay. Plain JavaScript, no dependencies; the
// drawing is in draw.js. The server keeps every game: this page sends only the chosen
// action id (or "step") and draws the view it gets back. A game belongs to the tab that
// started it: the server's token for it is kept in sessionStorage with the game id and sent
// as the X-Game-Token header. The opponents are chosen by level (beginner ... strongest, the
// strongest by default) or, as "custom", by an agent id per seat.
"use strict";

const S = { meta: null, mode: "play", view: null, timer: null, paused: false, selected: null,
            delay: 700, replay: null, frame: 0, busy: false, token: null, level: null };

// ------------------------------------------------------------------ server calls
async function api(method, path, body, raw) {
  const opts = { method, headers: {} };
  if (S.token && path.startsWith("/api/games/")) opts.headers["X-Game-Token"] = S.token;
  if (raw !== undefined) { opts.body = raw; opts.headers["Content-Type"] = "text/plain"; }
  else if (body !== undefined) {
    opts.body = JSON.stringify(body); opts.headers["Content-Type"] = "application/json";
  }
  const res = await fetch(path, opts);
  const data = await res.json().catch(() => ({ error: `HTTP ${res.status}` }));
  if (!res.ok) throw Object.assign(new Error(data.error || `HTTP ${res.status}`), { status: res.status });
  return data;
}
function showError(msg) { $("error").textContent = msg || ""; }

// ------------------------------------------------------------------ live games
const key = () => `allfives-game-${S.mode}`;
function render() {
  const view = S.view;
  if (!view) return;
  $("table").hidden = false;
  const targets = S.selected === null ? null : view.legal.filter((m) => m.tile_id === S.selected);
  drawScoreboard(view);
  drawBoard(view, targets);
  drawStatus(view);
  drawSeats(view);
  drawHand(view);
  drawLog(view);
  drawBanner(view);
  $("table").dataset.waiting = view.waiting || "";
}
function setView(view) {
  S.view = view;
  S.version = (S.version || 0) + 1;
  $("table").dataset.version = S.version;
  S.selected = null;
  showError("");
  render();
  schedule();
}
function schedule() {
  clearTimeout(S.timer);
  const v = S.view;
  if (!v || S.mode === "replay" || S.paused) return;
  if (v.waiting === "bot") S.timer = setTimeout(step, S.delay);
  else if (v.waiting === "next_hand" && S.mode === "watch") S.timer = setTimeout(step, S.delay * 3);
}
async function guarded(fn) {
  if (S.busy) return;
  S.busy = true;
  try { await fn(); } catch (e) { showError(e.message); } finally { S.busy = false; }
}
function step() {
  return guarded(async () => {
    try { setView(await api("POST", `/api/games/${S.view.id}/step`)); }
    catch (e) {
      if (e.status !== 503) throw e;
      showError(e.message);  // the bot is still thinking: ask again shortly
      clearTimeout(S.timer);
      S.timer = setTimeout(() => { if (!S.paused && S.view) step(); }, 1000);
    }
  });
}
function sendAction(action) {
  return guarded(async () => setView(await api("POST", `/api/games/${S.view.id}/act`, { action })));
}
async function startGame(ev) {
  ev.preventDefault();
  const n = Number($("players").value);
  const agents = [];
  for (let s = 0; s < n; s++) agents.push($(`seat-${s}`).value.trim());
  const body = { agents, preset: $("preset").value, players: n,
                 overrides: $("overrides").value.split(/[\s,]+/).filter(Boolean) };
  if (n === 4) body.teams = $("teams").checked;
  if ($("seed").value !== "") body.seed = Number($("seed").value);
  await guarded(async () => {
    const view = await api("POST", "/api/games", body);
    S.token = view.token;
    delete view.token;
    sessionStorage.setItem(key(), JSON.stringify({ id: view.id, token: S.token }));
    S.paused = false;
    $("setup").hidden = true;
    drawControls();
    setView(view);
  });
}
function drawControls() {
  const box = $("controls");
  box.replaceChildren();
  const add = (tag, props) => { const e = Object.assign(document.createElement(tag), props); box.appendChild(e); return e; };
  if (S.mode === "replay") return drawReplayControls(add);
  if (S.mode === "watch") {
    add("button", { id: "pause", textContent: S.paused ? "Resume" : "Pause",
                    onclick: () => { S.paused = !S.paused; drawControls(); schedule(); } });
    add("button", { id: "step", textContent: "Step",
                    onclick: () => { if (S.view && S.view.waiting !== "over") step(); } });
  }
  add("label", { textContent: "bot speed " });
  const sp = add("input", { id: "speed", type: "range", min: 0, max: 2000, step: 50,
                            value: 2000 - S.delay, title: "faster to the right" });
  sp.addEventListener("input", () => { S.delay = 2000 - Number(sp.value); schedule(); });
  add("button", { id: "new-game", textContent: "New game",
                  onclick: () => { sessionStorage.removeItem(key()); showSetup(); } });
}
function showSetup() {
  clearTimeout(S.timer);
  S.view = null;
  $("table").hidden = true;
  $("setup").hidden = false;
  $("setup-title").textContent = S.mode === "play" ? "Play against bots" : "Watch bots play";
  buildSeats();
}
function buildSeats() {
  const n = Number($("players").value);
  $("teams").disabled = n !== 4;
  $("level-title").textContent = S.mode === "play" ? "Opponents" : "Bots";
  buildLevels();
  const box = $("seats");
  const old = [...box.querySelectorAll("input")].map((i) => i.value);
  box.replaceChildren();
  for (let s = 0; s < n; s++) {
    const label = document.createElement("label");
    label.textContent = `seat ${s} `;
    const inp = document.createElement("input");
    inp.id = `seat-${s}`;
    inp.setAttribute("list", "agent-ids");
    inp.size = 22;
    const dflt = S.mode === "play" && s === 0 ? S.meta.human : strongestLevel().id;
    inp.value = old[s] && !(S.mode === "watch" && old[s] === S.meta.human) ? old[s] : dflt;
    inp.addEventListener("input", () => {  // an id typed by hand: each seat its own agent
      if ($("level").value !== CUSTOM) { $("level").value = S.level = CUSTOM; applyLevel(); }
    });
    label.appendChild(inp);
    box.appendChild(label);
  }
  applyLevel();
}

// ------------------------------------------------------------------ levels
// The levels (beginner ... strongest) at the form's table, from /api/meta: each a bot or the
// shipped model with its measured strength. A level fills every seat but yours with its id
// (level:<name>, resolved by the server for the game's rules); "custom" keeps the ids typed.
const CUSTOM = "custom";
function levelTable() {
  const n = Number($("players").value);
  const teams = n === 4 && $("teams").checked;
  const t = S.meta.levels.tables.find((x) => x.preset === $("preset").value && x.players === n
                                             && x.teams === teams);
  return t ? t.levels : [];
}
function strongestLevel() {  // the strongest level that can play the form's table
  const ok = levelTable().filter((l) => l.available);
  return ok.length ? ok[ok.length - 1] : { id: "greedy", name: CUSTOM };
}
function buildLevels() {
  const pick = $("level");
  pick.replaceChildren();
  const top = strongestLevel().name;
  for (const l of levelTable()) {
    const tag = l.name === top && top !== S.meta.levels.strongest ? " (the strongest here)" : "";
    const elo = l.strength ? l.strength.elo_over_heuristic : null;
    const text = `${l.name}${tag}: ${l.agent}${l.model ? ` = ${l.model}` : ""}` +
                 (elo === null ? "" : `, ${elo >= 0 ? "+" : ""}${elo} Elo over heuristic`) +
                 (l.available ? "" : " (not at this table)");
    pick.appendChild(Object.assign(document.createElement("option"),
                                   { value: l.name, textContent: text, disabled: !l.available }));
  }
  pick.appendChild(Object.assign(document.createElement("option"),
                                 { value: CUSTOM, textContent: "custom: an agent id per seat" }));
  // the level the user picked while it can play here, else the strongest that can
  const want = S.level;
  const keep = want === CUSTOM || levelTable().some((l) => l.name === want && l.available);
  pick.value = keep ? want : strongestLevel().name;
}
function applyLevel() {
  const level = levelTable().find((l) => l.name === $("level").value);
  const note = $("level-note");
  note.replaceChildren();
  if (!level) {
    const missing = levelTable().filter((l) => !l.available).map((l) => `${l.name}: ${l.unavailable}`);
    note.textContent = "Each seat plays the agent id in its field (human for you). " + missing.join(" ");
    return;
  }
  for (const inp of $("seats").querySelectorAll("input"))
    if (inp.value.trim() !== S.meta.human) inp.value = level.id;
  if (level.name === S.meta.levels.strongest)
    note.appendChild(Object.assign(document.createElement("span"),
                                   { className: "strongest", textContent: "The strongest level. " }));
  const unavailable = levelTable().filter((l) => !l.available)
    .map((l) => ` No ${l.name} level at this table: ${l.unavailable}.`).join("");
  note.appendChild(document.createTextNode(
    `${level.name}: ${level.agent}${level.model ? ` (${level.model})` : ""}, ${level.description}. ` +
    (level.strength ? `Measured: ${level.strength_text}.` : "Not measured at this table.") +
    unavailable));
}

// ------------------------------------------------------------------ replay
async function loadReplay(fetcher) {
  await guarded(async () => {
    S.replay = await fetcher();
    S.frame = 0;
    const pick = $("game-pick");
    pick.replaceChildren();
    S.replay.games.forEach((g, i) => pick.appendChild(Object.assign(document.createElement("option"),
      { value: i, textContent: `game ${i}: ${(g.agents || []).join(" vs ")} ${JSON.stringify(g.final_scores)}` })));
    pick.value = S.replay.game;
    $("game-pick-label").hidden = S.replay.count < 2;
    drawControls();
    showFrame();
  });
}
function replayFetcher(game) {
  const name = $("file-pick").value;
  if (S.uploadText !== null && S.uploadText !== undefined && !name)
    return () => api("POST", `/api/replay?game=${game}`, undefined, S.uploadText);
  return () => api("GET", `/api/replays/file?name=${encodeURIComponent(name)}&game=${game}`);
}
function showFrame() {
  const r = S.replay;
  const f = Object.assign({}, r.frames[S.frame], { agents: r.agents, rules: r.rules, seat: null,
                                                   waiting: null });
  f.events = [];  // the hand so far, as the log shows it
  r.frames.slice(0, S.frame + 1).forEach((x) => {
    if (x.hand_index === f.hand_index && x.move) f.events.push(x.move, ...x.then);
  });
  S.view = f;
  $("table").hidden = false;
  drawScoreboard(f);
  drawBoard(f, null);
  drawStatus(f);
  drawSeats(f);
  drawHand(f);
  drawLog(f);
  drawBanner(f);
  const sl = $("frame-slider");
  if (sl) sl.value = S.frame;
  const n = r.frames.filter((x) => x.hand_index === f.hand_index).length - 1;
  const k = r.frames.slice(0, S.frame + 1).filter((x) => x.hand_index === f.hand_index).length - 1;
  $("move-text").textContent = `hand ${f.hand_index + 1}, move ${k} of ${n}: ` +
    (f.move ? eventText(f, f.move) + f.then.map((e) => "; " + eventText(f, e)).join("")
            : "the deal");
}
function gotoFrame(i) {
  S.frame = Math.max(0, Math.min(S.replay.frames.length - 1, i));
  showFrame();
}
function handStart(dir) {
  const fr = S.replay.frames;
  let i = S.frame + dir;
  while (i > 0 && i < fr.length - 1 && fr[i].move !== null) i += dir;
  gotoFrame(i);
}
function drawReplayControls(add) {
  const n = S.replay.frames.length;
  add("button", { id: "hand-prev", textContent: "« hand", onclick: () => handStart(-1) });
  add("button", { id: "prev", textContent: "‹ move", onclick: () => gotoFrame(S.frame - 1) });
  add("button", { id: "play-pause", textContent: S.paused ? "play" : "pause",
                  onclick: () => { S.paused = !S.paused; drawControls(); autoplay(); } });
  add("button", { id: "next", textContent: "move ›", onclick: () => gotoFrame(S.frame + 1) });
  add("button", { id: "hand-next", textContent: "hand »", onclick: () => handStart(1) });
  add("button", { id: "last", textContent: "end", onclick: () => gotoFrame(n - 1) });
  const sl = add("input", { id: "frame-slider", type: "range", min: 0, max: n - 1, value: S.frame });
  sl.addEventListener("input", () => gotoFrame(Number(sl.value)));
  add("span", { id: "move-text" });
}
function autoplay() {
  clearTimeout(S.timer);
  if (S.mode !== "replay" || S.paused || !S.replay) return;
  if (S.frame < S.replay.frames.length - 1) {
    S.timer = setTimeout(() => { gotoFrame(S.frame + 1); autoplay(); }, S.delay);
  } else { S.paused = true; drawControls(); showFrame(); }
}

// ------------------------------------------------------------------ start-up and routing
async function route() {
  clearTimeout(S.timer);
  const mode = (location.hash || "#play").slice(1);
  S.mode = ["play", "watch", "replay"].includes(mode) ? mode : "play";
  for (const m of ["play", "watch", "replay"]) $(`tab-${m}`).classList.toggle("on", m === S.mode);
  S.view = null; S.selected = null; showError("");
  $("table").hidden = true;
  $("setup").hidden = true;
  $("replay-pick").hidden = S.mode !== "replay";
  if (S.mode === "replay") {
    S.paused = true;
    if (S.replay) { drawControls(); showFrame(); }
    return;
  }
  S.paused = false;
  let saved = null;
  try { saved = JSON.parse(sessionStorage.getItem(key()) || "null"); } catch (e) { saved = null; }
  if (saved && saved.id && saved.token) {
    S.token = saved.token;
    try { drawControls(); setView(await api("GET", `/api/games/${saved.id}`)); return; }
    catch (e) { sessionStorage.removeItem(key()); S.token = null; }
  }
  showSetup();
}
async function init() {
  // every listener first, so nothing the user (or a test) does while /api/meta loads is lost
  $("players").addEventListener("change", () => { if (S.meta) buildSeats(); });
  for (const id of ["preset", "teams"])
    $(id).addEventListener("change", () => { if (S.meta) { buildLevels(); applyLevel(); } });
  $("level").addEventListener("change", () => {
    S.level = $("level").value;  // picked by the user: kept across tables where it can play
    if (S.meta) applyLevel();
  });
  $("setup-form").addEventListener("submit", startGame);
  $("upload").addEventListener("change", async () => {
    const file = $("upload").files[0];
    if (!file) return;
    S.uploadText = await file.text();
    $("file-pick").value = "";
    loadReplay(replayFetcher(0));
  });
  $("file-pick").addEventListener("change", () => {
    if ($("file-pick").value) { S.uploadText = null; loadReplay(replayFetcher(0)); }
  });
  $("game-pick").addEventListener("change", () => loadReplay(replayFetcher(Number($("game-pick").value))));
  document.addEventListener("keydown", (e) => {
    if (S.mode !== "replay" || !S.replay || e.target.tagName === "INPUT") return;
    if (e.key === "ArrowRight") gotoFrame(S.frame + 1);
    if (e.key === "ArrowLeft") gotoFrame(S.frame - 1);
  });
  S.meta = await api("GET", "/api/meta");
  for (const p of Object.keys(S.meta.presets))
    $("preset").appendChild(Object.assign(document.createElement("option"), { value: p, textContent: p }));
  for (const a of [S.meta.human, ...S.meta.agents])
    $("agent-ids").appendChild(Object.assign(document.createElement("option"), { value: a }));
  for (const f of S.meta.replay_files)
    $("file-pick").appendChild(Object.assign(document.createElement("option"), { value: f, textContent: f }));
  $("file-pick-label").hidden = !S.meta.replay_files.length;
  window.addEventListener("hashchange", route);
  await route();
  document.body.dataset.ready = "yes";  // set up: the tests wait for this
}
init().catch((e) => showError(e.message));
