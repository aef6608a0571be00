/* odyssey view: the trajectory viewer. Plain DOM, no library, no network.
 *
 * Everything shown comes from the JSON block #odyssey-data (written by odyssey_eval.viewer). Text from
 * the run (actions, reasoning, observations, names) came from models and game files: it is only ever
 * put into the page as text (textContent, createTextNode, SVG text nodes), never parsed as HTML.
 * The page stays fast on long runs by doing per-step work only for the step shown: the step list is
 * virtual (only visible rows exist), the timeline is one canvas drawn once per agent or filter, and
 * the lower sections are built when first opened.
 */
(function () {
  "use strict";
  const t0 = performance.now();
  const D = JSON.parse(document.getElementById("odyssey-data").textContent);
  const S = D.strings, F = D.flags, MAP = D.map;
  const COMPONENTS = D.rewards.components, SUP = new Set(D.rewards.supplementary), MAIN = new Set(D.rewards.main);
  const AGENT_COLORS = ["#4f46e5", "#db2777", "#0d9488", "#d97706", "#2563eb", "#65a30d", "#9333ea", "#dc2626"];
  const PLACE_COLORS = ["#6366f1", "#0ea5e9", "#10b981", "#f59e0b", "#ec4899", "#8b5cf6", "#14b8a6", "#f97316", "#84cc16", "#64748b"];
  const FILTERS = [
    { key: "invalid", label: "Invalid", bit: F.invalid, color: "var(--warn)", always: true },
    { key: "failed", label: "Failed", bit: F.failed, color: "var(--warn)" },
    { key: "died", label: "Deaths", bit: F.died, color: "var(--bad)", always: true },
    { key: "quest", label: "Quest stages", bit: F.quest, color: "var(--quest)", always: true },
    { key: "reward", label: "Rewards", bit: F.reward, color: "var(--good)" },
    { key: "moved", label: "Moves", bit: F.moved, color: "var(--muted)" },
    { key: "level_up", label: "Level-ups", bit: F.level_up, color: "var(--info)" },
    { key: "malformed", label: "Malformed replies", bit: F.malformed, color: "var(--faint)" },
    { key: "qa", label: "QA rounds", bit: F.qa, color: "var(--info)" },
  ];
  const MARKS = [["died", F.died], ["quest", F.quest], ["reward", F.reward], ["invalid", F.invalid],
                 ["failed", F.failed], ["malformed", F.malformed], ["qa", F.qa]];
  const SVGNS = "http://www.w3.org/2000/svg";
  const $ = (id) => document.getElementById(id);

  /* ---------------------------------------------------------------- DOM helpers (text only) */
  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function add(parent, ...children) {
    for (const c of children) if (c !== null && c !== undefined && c !== false) parent.append(c);
    return parent;
  }
  function svg(tag, attrs) {
    const e = document.createElementNS(SVGNS, tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    return e;
  }
  function pill(text, kind) { return el("span", "pill" + (kind ? " " + kind : ""), text); }
  function block(title, ...children) { return add(el("div", "block"), el("h3", null, title), ...children); }
  function fmt(x, digits) {
    if (x === null || x === undefined || Number.isNaN(x)) return "–";
    if (typeof x !== "number") return String(x);
    if (digits === undefined) return Number.isInteger(x) ? x.toLocaleString("en-US") : x.toFixed(3);
    return x.toFixed(digits);
  }
  function str(i) { return i >= 0 ? S[i] : null; }
  function css(name) { return getComputedStyle(document.documentElement).getPropertyValue(name).trim(); }

  /* ---------------------------------------------------------------- per-agent derived data */
  const cache = new Map();
  function prep(a) {
    if (cache.has(a)) return cache.get(a);
    const st = D.agents[a].steps, n = st.a.length;
    const cum = {}; for (const c of COMPONENTS) cum[c] = new Float64Array(n);
    const main = new Float64Array(n), sup = new Float64Array(n), hpMax = new Float64Array(n);
    let m = 0, s = 0, hm = 0;
    const tot = {}; for (const c of COMPONENTS) tot[c] = 0;
    const questAt = [], playLine = [0];
    for (let i = 0; i < n; i++) {
      const r = st.rw[i];
      if (r) for (const k in r) { if (k in tot) tot[k] += r[k]; if (MAIN.has(k)) m += r[k]; if (SUP.has(k)) s += r[k]; }
      for (const c of COMPONENTS) cum[c][i] = tot[c];
      main[i] = m; sup[i] = s;
      const h = st.health[i]; if (typeof h === "number" && h > hm) hm = h; hpMax[i] = hm;
      if (st.qs[i]) questAt.push(i);
      if (i > 0 && !(st.fl[i] & F.tutorial)) playLine.push(i);
    }
    const moves = [];
    for (let i = 1; i < n; i++) if (st.ar[i] !== st.ar[i - 1]) moves.push(i);
    const p = { first: D.agents[a].first || 0, st, n, cum, main, sup, hpMax, questAt, playLine, moves, maxMain: m, maxSup: s, maxHp: hm };
    cache.set(a, p);
    return p;
  }
  function questAt(p, i) {  // the last quest record at or before line i
    let lo = 0, hi = p.questAt.length - 1, best = -1;
    while (lo <= hi) { const mid = (lo + hi) >> 1; if (p.questAt[mid] <= i) { best = p.questAt[mid]; lo = mid + 1; } else hi = mid - 1; }
    return best >= 0 ? p.st.qs[best] : null;
  }

  /* ---------------------------------------------------------------- state */
  const state = { ag: 0, i: 0, filters: new Set(), search: "", verb: -1, playing: null, speed: 5 };
  let P = null;          // prep(state.ag)
  let matches = null;    // Int32Array of matching line indices (null: every line)

  function readHash() {
    const h = new URLSearchParams(location.hash.slice(1));
    const ag = h.get("agent") ?? D.selected;
    const idx = D.agents.findIndex((x) => x.id === ag);
    if (idx >= 0) state.ag = idx;
    const s = parseInt(h.get("step") || "", 10);
    return Number.isFinite(s) ? s - (D.agents[state.ag].first || 0) : null;
  }
  let hashTimer = 0;
  function writeHash() {
    clearTimeout(hashTimer);
    hashTimer = setTimeout(() => {
      const parts = [];
      if (D.agents.length > 1) parts.push("agent=" + encodeURIComponent(D.agents[state.ag].id));
      parts.push("step=" + stepNo(state.i));
      try { history.replaceState(null, "", "#" + parts.join("&")); } catch (e) { /* a file: URL some browsers refuse */ }
    }, 150);
  }
  function stepNo(i) { return (P ? P.first : 0) + i; }  // line i of a trajectory: the reset's step + i

  /* ---------------------------------------------------------------- header */
  function renderHeader() {
    const R = D.run;
    $("title").textContent = R.title;
    const sub = $("subtitle");
    sub.textContent = "";
    const parts = [R.game_path ? "game folder " + R.game_path : "game " + R.game, "seed " + R.seed,
                   (R.tutorial ? "with" : "without") + " tutorial", "max_steps " + R.max_steps];
    if (R.llm && R.llm.name !== "none") parts.push("llm " + R.llm.name + (R.llm.model ? ":" + R.llm.model : ""));
    if (R.tag) parts.push("tag " + R.tag);
    if (R.origin) parts.splice(1, 0, R.origin);  // the paper's game, or odyssey's own: never to be mistaken
    sub.append(parts.join(" · "), " ");
    sub.append(R.finished ? pill("finished" + (R.end_reason ? ": " + R.end_reason.replace("_", " ") : ""), "good")
                          : pill("unfinished: the trajectory so far", "warn"));
    document.title = R.title + " · " + D.agents.map((x) => x.label).join(", ") + " · seed " + R.seed + " — odyssey view";
    const box = $("agents");
    box.textContent = "";
    if (D.agents.length > 1) {
      D.agents.forEach((ag, k) => {
        const b = el("button");
        b.type = "button";
        const dot = el("span", "dot"); dot.style.background = AGENT_COLORS[k % AGENT_COLORS.length];
        add(b, dot, ag.id + " · " + ag.label);
        b.setAttribute("aria-pressed", String(k === state.ag));
        b.dataset.agent = ag.id;
        b.addEventListener("click", () => selectAgent(k));
        box.append(b);
      });
    }
    renderHeadline();
  }
  function renderHeadline() {
    const ag = D.agents[state.ag], sm = ag.summary || {}, h = $("headline");
    h.textContent = "";
    const kv = (v, label) => add(el("div", "kv"), el("b", null, v), el("span", null, label));
    h.append(kv(ag.label, D.agents.length > 1 ? ag.id : "agent"));
    h.append(kv(fmt(P.n - 1), "steps"), kv(fmt(sm.main_reward ?? P.maxMain), "main"), kv(fmt(sm.supplementary_reward ?? P.maxSup), "supplementary"),
             kv(sm.invalid_action_rate == null ? "–" : (100 * sm.invalid_action_rate).toFixed(1) + "%", "invalid"),
             kv(sm.failed_action_rate == null ? "–" : (100 * sm.failed_action_rate).toFixed(1) + "%", "failed"));
    if (sm.total_tokens) h.append(kv(fmt(sm.total_tokens), "tokens"));
  }

  /* ---------------------------------------------------------------- filters */
  function renderFilters() {
    const box = $("filters");
    box.textContent = "";
    const counts = {};
    for (const f of FILTERS) counts[f.key] = 0;
    const fl = P.st.fl;
    for (let i = 1; i < P.n; i++) { const v = fl[i]; if (!v) continue; for (const f of FILTERS) if (v & f.bit) counts[f.key]++; }
    for (const f of FILTERS) {
      if (!f.always && !counts[f.key]) continue;
      const b = el("button", "chip");
      b.type = "button";
      b.dataset.filter = f.key;
      const sw = el("span", "sw"); sw.style.background = f.color;
      add(b, sw, f.label, el("span", "count", counts[f.key]));
      b.setAttribute("aria-pressed", String(state.filters.has(f.key)));
      b.disabled = !counts[f.key];
      b.addEventListener("click", () => {
        if (state.filters.has(f.key)) state.filters.delete(f.key); else state.filters.add(f.key);
        b.setAttribute("aria-pressed", String(state.filters.has(f.key)));
        applyFilters();
      });
      box.append(b);
    }
    const sel = $("verb");
    sel.textContent = "";
    add(sel, new Option("any verb", "-1"));
    P.st.verbs.forEach((v, k) => sel.append(new Option(v, String(k))));
    sel.append(new Option("(no verb: invalid)", "-2"));
    sel.value = String(state.verb);
  }
  function applyFilters() {
    const fl = P.st.fl, acts = P.st.a, vb = P.st.vb;
    let bits = 0;
    for (const f of FILTERS) if (state.filters.has(f.key)) bits |= f.bit;
    const q = state.search.trim().toLowerCase();
    if (!bits && !q && state.verb === -1) matches = null;
    else {
      const out = [];
      for (let i = 1; i < P.n; i++) {
        if (bits && !(fl[i] & bits)) continue;
        if (state.verb !== -1 && (state.verb === -2 ? vb[i] !== -1 : vb[i] !== state.verb)) continue;
        if (q && !acts[i].toLowerCase().includes(q)) continue;
        out.push(i);
      }
      matches = Int32Array.from(out);
    }
    $("list-count").textContent = matches ? matches.length + " of " + (P.n - 1) + " steps" : (P.n - 1) + " steps";
    drawTimeline();
    renderList(true);
  }
  function nextMatch(dir) {
    const i = state.i;
    if (!matches) return setStep(i + dir);
    if (!matches.length) return;
    let lo = 0, hi = matches.length - 1, pos = matches.length;
    while (lo <= hi) { const mid = (lo + hi) >> 1; if (matches[mid] >= i) { pos = mid; hi = mid - 1; } else lo = mid + 1; }
    if (dir > 0) { const k = matches[pos] === i ? pos + 1 : pos; if (k < matches.length) setStep(matches[k]); }
    else if (pos - 1 >= 0) setStep(matches[pos - 1]);
  }

  /* ---------------------------------------------------------------- timeline */
  const TL = { w: 0, h: 0 };
  function xOf(i) { return P.n > 1 ? 6 + (TL.w - 12) * i / (P.n - 1) : TL.w / 2; }
  function iOf(x) { return Math.max(0, Math.min(P.n - 1, Math.round((x - 6) / Math.max(1, TL.w - 12) * (P.n - 1)))); }
  function drawTimeline() {
    const wrap = $("tl-wrap"), c = $("tl");
    const dpr = window.devicePixelRatio || 1;
    TL.w = wrap.clientWidth; TL.h = wrap.clientHeight;
    c.width = Math.round(TL.w * dpr); c.height = Math.round(TL.h * dpr);
    const g = c.getContext("2d");
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, TL.w, TL.h);
    const st = P.st, n = P.n, top = 6, chartH = 34, lane0 = 47, laneH = 7;
    // tutorial spans
    g.fillStyle = css("--soft");
    let start = -1;
    for (let i = 1; i <= n; i++) {
      const tut = i < n && (st.fl[i] & F.tutorial);
      if (tut && start < 0) start = i;
      if (!tut && start >= 0) { g.fillRect(xOf(start - 0.5), 0, Math.max(1, xOf(i - 0.5) - xOf(start - 0.5)), TL.h); start = -1; }
    }
    // lines: health, cumulative main and supplementary reward (each scaled to its own maximum)
    const line = (arr, max, color, width) => {
      if (!max) return;
      g.strokeStyle = color; g.lineWidth = width; g.beginPath();
      let started = false, lastX = -1;
      for (let i = 0; i < n; i++) {
        const v = arr[i];
        if (typeof v !== "number") continue;
        const x = xOf(i);
        if (started && x - lastX < 0.5 && i < n - 1) continue;
        const y = top + chartH - chartH * v / max;
        if (!started) { g.moveTo(x, y); started = true; } else g.lineTo(x, y);
        lastX = x;
      }
      g.stroke();
    };
    line(st.health, P.maxHp, css("--hp"), 1.2);
    line(P.sup, P.maxSup, css("--good"), 1.6);
    line(P.main, P.maxMain, css("--quest"), 2);
    // mark lanes
    const lanes = [[F.quest, css("--quest"), 0, true], [F.reward & ~F.quest, css("--good"), 0, false],
                   [F.died, css("--bad"), 1, true], [F.invalid | F.failed, css("--warn"), 2, false], [F.qa, css("--info"), 1, true]];
    for (const [bit, color, lane, strong] of lanes) {
      g.fillStyle = color;
      for (let i = 1; i < n; i++) {
        const v = st.fl[i];
        if (!(v & bit)) continue;
        if (bit === (F.reward & ~F.quest) && (v & F.quest)) continue;
        const x = xOf(i);
        g.fillRect(x - (strong ? 1 : 0.5), lane0 + lane * (laneH + 2), strong ? 2 : 1, laneH);
      }
    }
    if (matches) {
      g.fillStyle = css("--accent");
      for (const i of matches) g.fillRect(xOf(i) - 0.5, TL.h - 3, 1.5, 3);
    }
    placeCursor();
  }
  function placeCursor() { $("tl-cursor").style.left = xOf(state.i) + "px"; }

  /* ---------------------------------------------------------------- virtual step list */
  const ROW = 26;
  function renderList(reset) {
    const box = $("list"), spacer = $("list-spacer");
    const count = matches ? matches.length : P.n;
    spacer.style.height = count * ROW + "px";
    if (reset) { box.scrollTop = 0; scrollListTo(state.i); }
    drawRows();
  }
  function drawRows() {
    const box = $("list"), rows = $("list-rows"), count = matches ? matches.length : P.n;
    const first = Math.max(0, Math.floor(box.scrollTop / ROW) - 5);
    const last = Math.min(count, Math.ceil((box.scrollTop + box.clientHeight) / ROW) + 5);
    rows.textContent = "";
    if (!count) { rows.append(el("div", "list-empty", "No step matches the filters.")); return; }
    const st = P.st;
    for (let k = first; k < last; k++) {
      const i = matches ? matches[k] : k, v = st.fl[i];
      const r = el("div", "vrow");
      if (i === state.i) r.classList.add("current");
      if (v & F.tutorial) r.classList.add("tut");
      if (v & F.invalid) r.classList.add("invalid");
      r.style.top = k * ROW + "px";
      r.dataset.i = i;
      const marks = el("span", "marks");
      for (const [name, bit] of MARKS) if (v & bit) marks.append(el("span", "mk " + name));
      add(r, el("span", "n", stepNo(i)), el("span", "act", i === 0 ? "(start)" : st.a[i]), marks);
      r.title = i === 0 ? "the first observation" : "step " + stepNo(i) + ": " + st.a[i];
      rows.append(r);
    }
  }
  function scrollListTo(i) {
    const box = $("list");
    let k = i;
    if (matches) {
      let lo = 0, hi = matches.length - 1; k = -1;
      while (lo <= hi) { const mid = (lo + hi) >> 1; if (matches[mid] === i) { k = mid; break; } if (matches[mid] < i) lo = mid + 1; else hi = mid - 1; }
      if (k < 0) return;
    }
    const y = k * ROW;
    if (y < box.scrollTop || y + ROW > box.scrollTop + box.clientHeight) box.scrollTop = Math.max(0, y - box.clientHeight / 2);
  }

  /* ---------------------------------------------------------------- map */
  const M = { nodes: [], edges: [], built: false, W: 480, H: 400 };
  function hull(points) {
    const pts = points.slice().sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    if (pts.length < 3) return pts;
    const cross = (o, a, b) => (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
    const lower = [], upper = [];
    for (const p of pts) { while (lower.length >= 2 && cross(lower[lower.length - 2], lower[lower.length - 1], p) <= 0) lower.pop(); lower.push(p); }
    for (let k = pts.length - 1; k >= 0; k--) { const p = pts[k]; while (upper.length >= 2 && cross(upper[upper.length - 2], upper[upper.length - 1], p) <= 0) upper.pop(); upper.push(p); }
    return lower.slice(0, -1).concat(upper.slice(0, -1));
  }
  function buildMap() {
    const m = $("map"), W = M.W, H = M.H;
    m.setAttribute("viewBox", "0 0 " + W + " " + H);
    m.textContent = "";
    const px = (a) => [30 + a.x * (W - 60), 22 + a.y * (H - 44)];
    const gPlaces = svg("g"), gEdges = svg("g"), gTrail = svg("g"), gNodes = svg("g"), gOthers = svg("g"), gLabels = svg("g");
    const placeLabels = [];
    MAP.places.forEach((name, k) => {
      if (!name) return;
      const members = MAP.areas.filter((a) => a.p === k).map(px);
      if (!members.length) return;
      const color = PLACE_COLORS[k % PLACE_COLORS.length];
      const g = svg("g", { opacity: "0.11" });
      const h = hull(members);
      const shape = h.length >= 3 ? svg("polygon", { points: h.map((p) => p.join(",")).join(" ") })
                                  : svg("polyline", { points: h.concat(h.length === 1 ? [h[0]] : []).map((p) => p.join(",")).join(" ") });
      shape.setAttribute("fill", color); shape.setAttribute("stroke", color);
      shape.setAttribute("stroke-width", "44"); shape.setAttribute("stroke-linejoin", "round"); shape.setAttribute("stroke-linecap", "round");
      g.append(shape);
      gPlaces.append(g);
      const minY = Math.min(...members.map((p) => p[1])), maxY = Math.max(...members.map((p) => p[1]));
      const cx = members.reduce((s, p) => s + p[0], 0) / members.length;
      const label = svg("text", { "text-anchor": "middle", class: "place-label" });
      label.textContent = name;
      gLabels.append(label);
      placeLabels.push({ t: label, cands: [[cx, minY - 17, "middle"], [cx, maxY + 31, "middle"], [cx, minY - 30, "middle"]] });
    });
    M.edges = MAP.edges.map(([a, b, opened, seen]) => {
      const [x1, y1] = px(MAP.areas[a]), [x2, y2] = px(MAP.areas[b]);
      const e = svg("line", { x1: x1.toFixed(1), y1: y1.toFixed(1), x2: x2.toFixed(1), y2: y2.toFixed(1), class: "edge" });
      gEdges.append(e);
      return { e, a, b, opened, seen };
    });
    M.nodes = MAP.areas.map((a, k) => {
      const [x, y] = px(a);
      const g = svg("g", { class: "node", transform: "translate(" + x.toFixed(1) + "," + y.toFixed(1) + ")" });
      const color = a.p >= 0 && MAP.places[a.p] ? PLACE_COLORS[a.p % PLACE_COLORS.length] : "#94a3b8";
      const c = svg("circle", { r: "7", stroke: color, fill: color });
      const t = svg("text");
      t.textContent = a.n;
      const title = svg("title");
      g.append(c, t, title);
      g.addEventListener("click", () => { const i = nextVisit(k); if (i >= 0) setStep(i); });
      g.style.cursor = "pointer";
      gNodes.append(g);
      return { g, c, t, title, x, y, color, area: a };
    });
    m.append(gPlaces, gEdges, gTrail, gNodes, gOthers, gLabels);
    M.trail = gTrail; M.others = gOthers; M.built = true;
    placeLabelsAvoidingOverlap(placeLabels);
  }
  /* Labels: each area's name goes below, above, right or left of its node, and each place's name above
     or below its areas, whichever overlaps least what is already placed (greedy, in map order). */
  function placeLabelsAvoidingOverlap(placeLabels) {
    const boxes = M.nodes.map((nd) => [nd.x - 9, nd.y - 9, nd.x + 9, nd.y + 9]);
    const overlap = (b) => {
      const out = Math.max(0, -b[0]) + Math.max(0, b[2] - M.W) + Math.max(0, -b[1]) + Math.max(0, b[3] - M.H);
      let sum = 1000 * out;  // outside the map: cut off, worse than any overlap
      for (const o of boxes) {
        const w = Math.min(b[2], o[2]) - Math.max(b[0], o[0]), h = Math.min(b[3], o[3]) - Math.max(b[1], o[1]);
        if (w > 0 && h > 0) sum += w * h;
      }
      return sum;
    };
    const place = (t, cands, height, ox, oy) => {
      const w = t.getComputedTextLength ? t.getComputedTextLength() : 60;
      let best = null;
      for (const [x, y, anchor] of cands) {
        const x0 = anchor === "middle" ? x - w / 2 : anchor === "end" ? x - w : x;
        const b = [x0 - 1, y - height + 2, x0 + w + 1, y + 3];
        const cost = overlap(b);
        if (!best || cost < best.cost - 0.5) best = { cost, x, y, anchor, b };
        if (cost === 0) break;
      }
      t.setAttribute("x", (best.x - ox).toFixed(1)); t.setAttribute("y", (best.y - oy).toFixed(1));
      t.setAttribute("text-anchor", best.anchor);
      boxes.push(best.b);
    };
    for (const nd of M.nodes) {
      place(nd.t, [[nd.x, nd.y + 20, "middle"], [nd.x, nd.y - 13, "middle"], [nd.x + 12, nd.y + 4, "start"],
                   [nd.x - 12, nd.y + 4, "end"], [nd.x + 9, nd.y + 18, "start"], [nd.x - 9, nd.y + 18, "end"],
                   [nd.x + 9, nd.y - 11, "start"], [nd.x - 9, nd.y - 11, "end"]], 11, nd.x, nd.y);
    }
    for (const pl of placeLabels) place(pl.t, pl.cands, 11, 0, 0);
  }
  function nextVisit(k) {  // the next line after the current one where the agent is in area k (wrapping)
    const ar = P.st.ar;
    for (let d = 1; d <= P.n; d++) { const i = (state.i + d) % P.n; if (ar[i] === k) return i; }
    return -1;
  }
  function updateMap() {
    if (!M.built) buildMap();
    const st = P.st, i = state.i, ar = st.ar;
    const visits = new Int32Array(MAP.areas.length), first = new Int32Array(MAP.areas.length).fill(-1);
    const used = new Map();
    for (let k = 0; k <= i; k++) {
      const a = ar[k];
      if (k === 0 || a !== ar[k - 1]) { visits[a]++; if (first[a] < 0) first[a] = k; }
      if (k > 0 && a !== ar[k - 1]) { const key = Math.min(a, ar[k - 1]) + ":" + Math.max(a, ar[k - 1]); used.set(key, (used.get(key) || 0) + 1); }
    }
    for (const ed of M.edges) {
      const n = used.get(Math.min(ed.a, ed.b) + ":" + Math.max(ed.a, ed.b)) || 0;
      const locked = ed.opened === null || ed.opened > i;
      ed.e.setAttribute("class", "edge" + (locked ? " locked" : "") + (!ed.seen ? " game" : "") + (n ? " used" : ""));
      ed.e.style.strokeWidth = n ? (1.4 + Math.min(4, Math.log2(1 + n))).toFixed(2) : "";
      ed.e.replaceChildren();
      const tt = svg("title"); tt.textContent = MAP.areas[ed.a].n + " – " + MAP.areas[ed.b].n + (locked ? " (locked)" : "") + (n ? ": crossed " + n + "×" : "");
      ed.e.append(tt);
    }
    M.nodes.forEach((nd, k) => {
      const cur = ar[i] === k, game = nd.area.s === "game";
      nd.g.setAttribute("class", "node" + (visits[k] ? " visited" : " unvisited") + (game && !visits[k] ? " game" : "") + (cur ? " current" : ""));
      nd.c.setAttribute("r", cur ? "9" : String(6 + Math.min(3, Math.log2(1 + visits[k]) * 0.8)));
      const place = MAP.places[nd.area.p] || "place unknown";
      nd.title.textContent = nd.area.n + " (" + place + ")" + (visits[k] ? " — entered " + visits[k] + "× so far, first at step " + first[k]
        : game ? " — never seen by the agent (from the game's world)" : " — seen as an exit, not entered yet") + ". Click: next visit.";
    });
    // trail: the last moves up to the current step
    M.trail.textContent = "";
    const pts = [];
    let k = i, moves = 0;
    while (k > 0 && moves < 8) { if (ar[k] !== ar[k - 1]) { moves++; } k--; }
    let prev = -1;
    for (let j = k; j <= i; j++) if (ar[j] !== prev) { pts.push(M.nodes[ar[j]]); prev = ar[j]; }
    for (let s = 1; s < pts.length; s++) {
      const a = pts[s - 1], b = pts[s];
      const seg = svg("line", { x1: a.x.toFixed(1), y1: a.y.toFixed(1), x2: b.x.toFixed(1), y2: b.y.toFixed(1), class: "trail" });
      seg.style.opacity = (0.15 + 0.75 * s / (pts.length - 1)).toFixed(2);
      M.trail.append(seg);
    }
    const cur = M.nodes[ar[i]];
    if (cur) M.trail.append(svg("circle", { cx: cur.x.toFixed(1), cy: cur.y.toFixed(1), r: "15", class: "halo" }));
    // the other agents of a multi-agent cell, where they are at this step
    M.others.textContent = "";
    if (D.agents.length > 1) {
      D.agents.forEach((ag, j) => {
        if (j === state.ag) return;
        const o = prep(j), line = Math.min(i, o.n - 1), nd = M.nodes[o.st.ar[line]];
        if (!nd) return;
        const angle = (j + 1) * 2.1;
        const dot = svg("circle", { cx: (nd.x + 11 * Math.cos(angle)).toFixed(1), cy: (nd.y + 11 * Math.sin(angle)).toFixed(1), r: "4.5",
                                     fill: AGENT_COLORS[j % AGENT_COLORS.length], class: "other" });
        if (i >= o.n) dot.setAttribute("opacity", "0.35");
        const tt = svg("title"); tt.textContent = ag.id + " (" + ag.label + ") is here" + (i >= o.n ? " (out of the episode)" : "");
        dot.append(tt);
        M.others.append(dot);
      });
    }
  }

  /* ---------------------------------------------------------------- the step shown */
  const folds = { before: false, after: false, raw: false };
  function fold(key, label, text) {
    const d = el("details", "fold");
    d.open = folds[key];
    d.addEventListener("toggle", () => { folds[key] = d.open; });
    return add(d, el("summary", null, label), el("pre", null, text));
  }
  function eventText(e) {
    if (!e || typeof e !== "object") return String(e);
    const parts = [];
    for (const k in e) if (k !== "kind") parts.push(k + "=" + (typeof e[k] === "object" ? JSON.stringify(e[k]) : e[k]));
    return parts.join(" ");
  }
  function renderDetail() {
    const st = P.st, i = state.i, v = st.fl[i], box = $("detail");
    box.textContent = "";
    const head = el("div", "d-head");
    head.append(el("h2", null, i === 0 ? "Start" : "Step " + stepNo(i)));
    head.append(el("span", "muted", st.tm[i]));
    const place = MAP.places[MAP.areas[st.ar[i]].p];
    head.append(el("span", "muted", "· " + MAP.areas[st.ar[i]].n + (place ? " (" + place + ")" : "")));
    if (v & F.tutorial) head.append(pill("tutorial"));
    if (v & F.invalid) head.append(pill("invalid command", "warn"));
    if (v & F.failed) head.append(pill("refused by the world", "warn"));
    if (v & F.malformed) head.append(pill("malformed reply → wait", "warn"));
    if (v & F.died) head.append(pill("died", "bad"));
    if (v & F.quest) head.append(pill("quest stage", "quest"));
    if (v & F.level_up) head.append(pill("level up", "info"));
    if (v & F.terminated) head.append(pill("episode ended", "accent"));
    box.append(head);
    const body = el("div", "d-body");
    box.append(body);
    if (i === 0) {
      body.append(block("Episode start", el("div", "muted", "The first observation, before any command.")));
      body.append(add(el("div", "feedback"), st.ob[0]));
      return;
    }
    if (i > 0) body.append(fold("before", "Observation the agent acted on (after step " + stepNo(i - 1) + ")", st.ob[i - 1]));
    if (st.rs[i]) body.append(block("Reasoning", el("div", "reasoning", st.rs[i])));
    const act = el("div", "action" + (v & F.invalid ? " invalid" : v & F.failed ? " failed" : ""), st.a[i]);
    body.append(block("Action", act));
    if (st.raw[i] !== undefined) body.append(fold("raw", "Model reply (raw)", st.raw[i]));
    const fb = str(st.fb[i]);
    body.append(block("Feedback", fb === null ? el("div", "feedback", st.ob[i]) : el("div", "feedback", fb || "(nothing was said)")));
    const r = st.rw[i];
    if (r) {
      const chips = el("div", "rewards");
      for (const k of COMPONENTS) if (r[k]) chips.append(pill((r[k] > 0 ? "+" : "") + r[k] + " " + k.replace("_", " "), k === "death" ? "bad" : MAIN.has(k) ? "quest" : SUP.has(k) ? "good" : "info"));
      for (const k in r) if (!COMPONENTS.includes(k)) chips.append(pill(k + " " + r[k]));
      body.append(block("Reward", chips));
    }
    const evs = st.ev[i];
    if (evs && evs.length) {
      const list = el("div", "events");
      for (const e of evs) { const x = el("span", "event"); add(x, el("b", null, e && e.kind ? e.kind : "event"), " " + eventText(e)); list.append(x); }
      body.append(block("Events", list));
    }
    const meta = el("div", "meta");
    if (st.tk[i]) meta.append(el("span", null, "tokens in " + fmt(st.tk[i][0]) + " · out " + fmt(st.tk[i][1])));
    const calls = st.calls[i];
    if (calls && typeof calls === "object") {
      const parts = [];
      for (const k in calls) {
        const c = calls[k] || {};
        parts.push(k + " ×" + (c.calls ?? "?") + " (" + fmt(c.input_tokens) + " in / " + fmt(c.output_tokens) + " out)");
      }
      meta.append(el("span", null, "model calls: " + parts.join(", ")));
    }
    if (typeof st.dt[i] === "number") meta.append(el("span", null, "decision " + (st.dt[i] < 1 ? (1000 * st.dt[i]).toFixed(1) + " ms" : st.dt[i].toFixed(2) + " s")));
    if (st.vb[i] >= 0) meta.append(el("span", null, "verb " + st.verbs[st.vb[i]]));
    body.append(meta);
    body.append(fold("after", "Observation after this step", st.ob[i]));
  }
  function items(text) {
    const box = el("div", "items");
    if (text === null) box.append(el("span", "item none", "unknown"));
    else if (!text) box.append(el("span", "item none", "nothing"));
    else for (const part of text.split(", ")) box.append(el("span", "item", part));
    return box;
  }
  function renderStatus() {
    const st = P.st, i = state.i, box = $("status");
    box.textContent = "";
    const hp = st.health[i];
    if (typeof hp === "number") {
      const bar = el("div", "hpbar"), fill = el("div");
      fill.style.width = (P.hpMax[i] ? Math.max(0, Math.min(100, 100 * hp / P.hpMax[i])) : 0).toFixed(1) + "%";
      bar.append(fill);
      box.append(block("Health " + fmt(hp) + " / " + fmt(P.hpMax[i]) + " (highest so far)", bar));
    }
    const stats = el("div", "stats");
    for (const [k, label] of [["level", "level"], ["attack", "attack"], ["defense", "defense"], ["health", "health"], ["xp", "xp"]])
      stats.append(add(el("div", "stat"), el("b", null, fmt(st[k][i])), el("span", null, label)));
    box.append(stats);
    box.append(block("Holding", items(str(st.hd[i]))));
    box.append(block("Equipped", items(str(st.eq[i]))));
    box.append(block("Here", items(str(st.gd[i])), el("div", "faint", "")));
    box.append(block("Nearby", items(str(st.nb[i]))));
    const q = questAt(P, i);
    if (q) {
      const b = el("div");
      add(b, el("div", null, q.title + (q.done ? " — completed" : "")));
      const bar = el("div", "progress"), fill = el("div");
      fill.style.width = (q.total ? 100 * q.completed / q.total : 0).toFixed(1) + "%";
      bar.append(fill);
      add(b, bar, el("div", "faint", q.completed + " of " + q.total + " stages"));
      for (const c of q.current || []) add(b, add(el("div", "objective"), "→ " + c.title + " ", el("small", null, c.chapter || "")));
      box.append(block("Main quest", b));
    }
    const tbl = el("table", "rtable");
    for (const c of COMPONENTS) {
      const tr = el("tr");
      add(tr, el("td", null, c.replace("_", " ")), el("td", null, fmt(P.cum[c][i])));
      tbl.append(tr);
    }
    box.append(block("Rewards so far · main " + fmt(P.main[i]) + " · supplementary " + fmt(P.sup[i]), tbl));
  }

  /* ---------------------------------------------------------------- lower sections */
  function renderQA() {
    const box = $("qa-body"), ag = D.agents[state.ag];
    box.textContent = "";
    if (!ag.qa.length) { box.append(el("div", "muted", "No QA rounds were recorded for this run.")); return; }
    const t = el("table", "t"), head = el("tr");
    for (const h of ["phase", "play step", "kind", "questions", "accuracy", "", "chance"]) head.append(el("th", null, h));
    t.append(add(el("thead"), head));
    const tb = el("tbody");
    ag.qa.forEach((r) => {
      const tr = el("tr", "clickable"), bar = el("div", "bar"), fill = el("div"), mark = el("i");
      fill.style.width = (100 * (r.accuracy || 0)).toFixed(1) + "%";
      mark.style.left = (100 * (r.chance || 0)).toFixed(1) + "%";
      mark.title = "chance";
      add(bar, fill, mark);
      add(tr, el("td", null, r.phase), el("td", null, r.step), el("td", null, String(r.kind).replace("_", " ")), el("td", null, r.questions),
          el("td", null, r.accuracy == null ? "–" : (100 * r.accuracy).toFixed(0) + "%"), add(el("td"), bar),
          el("td", null, r.chance == null ? "–" : (100 * r.chance).toFixed(0) + "%"));
      const detail = el("tr"), td = el("td");
      td.colSpan = 7; detail.append(td); detail.hidden = true;
      tr.addEventListener("click", () => {
        detail.hidden = !detail.hidden;
        if (!detail.hidden && !td.childNodes.length) td.append(answers(r));
        if (r.phase === "during" && P.playLine[r.step] !== undefined) setStep(P.playLine[r.step]);
      });
      tb.append(tr, detail);
    });
    t.append(tb);
    box.append(t, el("div", "faint", "Click a round for its questions and answers; a round during play also moves to its step."));
  }
  function answers(r) {
    const wrap = el("div");
    const bt = r.by_template || {};
    const tpl = el("div", "meta");
    for (const k in bt) tpl.append(el("span", null, k.replace(/_/g, " ") + " " + (100 * bt[k]).toFixed(0) + "%"));
    wrap.append(tpl);
    const ul = el("ul", "answers");
    for (const a of r.answers || []) {
      const q = D.questions[a.id], li = el("li");
      li.append(el("span", a.correct ? "ok" : "no", a.correct ? "✓" : "✗"));
      if (q) {
        li.append(q.text + " ");
        const chosen = a.chosen === null || a.chosen === undefined ? "no answer" : q.choices[a.chosen];
        add(li, el("span", "muted", "answered: "), el("code", null, chosen));
        if (!a.correct) add(li, el("span", "muted", " · right: "), el("code", null, q.choices[a.answer]));
      } else {
        li.append(String(a.template || a.id).replace(/_/g, " ") + " ");
        add(li, el("span", "muted", "chose " + (a.chosen ?? "nothing") + ", right " + a.answer + " (of " + a.n_choices + ")"));
      }
      ul.append(li);
    }
    wrap.append(ul);
    return wrap;
  }
  function renderVerbs() {
    const box = $("verbs-body"), st = P.st;
    box.textContent = "";
    const counts = new Int32Array(st.verbs.length);
    let invalid = 0, total = 0;
    for (let i = 1; i < P.n; i++) { if (st.fl[i] & F.tutorial) continue; total++; if (st.vb[i] >= 0) counts[st.vb[i]]++; else invalid++; }
    if (!st.verbs.length) { box.append(el("div", "muted", "The run recorded no verbs of its game.")); return; }
    if (!total) { box.append(el("div", "muted", "No play steps yet (every step so far was in the tutorial).")); return; }
    const rows = st.verbs.map((v, k) => [v, counts[k], k]).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
    rows.push(["(no verb)", invalid, -2]);
    const max = Math.max(1, ...rows.map((r) => r[1]));
    const g = el("div", "verbs");
    for (const [name, c, k] of rows) {
      const n = el("span", "name", name), bar = el("div", "bar"), fill = el("div");
      fill.style.width = (100 * c / max).toFixed(1) + "%";
      if (k === -2) fill.style.background = "var(--warn)";
      bar.append(fill);
      n.title = "show only these steps";
      n.addEventListener("click", () => { state.verb = k; $("verb").value = String(k); applyFilters(); $("list").scrollIntoView({ block: "nearest" }); });
      add(g, n, bar, el("span", "n", c));
    }
    box.append(el("div", "faint", total + " play steps (tutorial steps left out); click a verb to list its steps."), g);
  }
  function renderRunInfo() {
    const box = $("run-body"), R = D.run;
    box.textContent = "";
    const kv = el("div", "kvgrid");
    const row = (k, v) => add(kv, el("span", null, k), typeof v === "string" ? el("span", null, v) : v);
    row("run directory", el("code", null, R.path));
    row("game", R.title + " (" + (R.game_path ? "folder " + R.game_path : R.game) + ")");
    if (R.origin) row("game origin", R.origin);
    row("seed", String(R.seed));
    row("max_steps", String(R.max_steps));
    row("tutorial", R.tutorial ? "yes" : "no");
    if (R.tag) row("tag", R.tag);
    row("llm", el("code", null, JSON.stringify(R.llm)));
    if (R.multiagent) row("multiagent", el("code", null, JSON.stringify(R.multiagent)));
    row("QA", el("code", null, JSON.stringify(R.qa_settings)));
    row("status", R.finished ? "finished" + (R.end_reason ? " (" + R.end_reason + ")" : "") : "unfinished");
    row("map", R.map_source === "game" ? "areas the run saw, plus the unexplored ones of the shipped game's world for this seed"
                                       : "the areas the run saw (observations name each area's exits)");
    box.append(kv);
    const t = el("table", "t"), head = el("tr");
    const keys = [["play_steps", "play steps"], ["main_reward", "main"], ["supplementary_reward", "sup"], ["object_exploration", "OE"],
                  ["action_exploration", "AE"], ["action_diversity", "AD"], ["invalid_action_rate", "invalid"], ["failed_action_rate", "failed"], ["malformed_replies", "malformed"],
                  ["total_tokens", "tokens"], ["decision_time_mean", "s/decision"], ["end_reason", "end"]];
    head.append(el("th", null, "agent"));
    for (const [, h] of keys) head.append(el("th", null, h));
    t.append(add(el("thead"), head));
    for (const ag of D.agents) {
      const tr = el("tr");
      tr.append(el("td", null, (D.agents.length > 1 ? ag.id + " · " : "") + ag.label));
      for (const [k] of keys) tr.append(el("td", null, fmt(ag.summary[k], typeof ag.summary[k] === "number" && !Number.isInteger(ag.summary[k]) ? 3 : undefined)));
      t.append(tr);
    }
    box.append(el("h3", null, "Metrics (recomputed from the trajectories)"), t);
  }
  function setupDepgraph() {
    const d = $("deps"), tpl = $("depgraph-template");
    if (!tpl) { d.hidden = true; return; }
    d.addEventListener("toggle", () => {
      if (d.open && !d.dataset.built) { $("deps-body").append(tpl.content.cloneNode(true)); d.dataset.built = "1"; }
    });
    // an arc's tooltip reads "<command> @<step> -> <command> @<step> (<agent>): ..."; a click shows that step
    $("deps-body").addEventListener("click", (e) => {
      const arc = e.target.closest("path[data-pair]");
      const tip = arc && arc.querySelector("title");
      const m = tip && /@(\d+) -> .*? @(\d+)(?: \(([^)]*)\))?: /.exec(tip.textContent);
      if (!m) return;
      const k = m[3] ? D.agents.findIndex((x) => x.id === m[3]) : -1;
      if (k >= 0 && k !== state.ag) selectAgent(k);
      setStep(+m[2] - P.first);
      $("detail").scrollIntoView({ behavior: "smooth", block: "start" });
    });
  }

  /* ---------------------------------------------------------------- navigation */
  function setStep(i) {
    i = Math.max(0, Math.min(P.n - 1, i | 0));
    state.i = i;
    $("slider").value = String(i);
    $("step-input").value = String(stepNo(i));
    placeCursor();
    renderDetail();
    renderStatus();
    updateMap();
    scrollListTo(i);
    drawRows();
    writeHash();
  }
  function selectAgent(k) {
    state.ag = k;
    P = prep(k);
    for (const b of $("agents").querySelectorAll("button")) b.setAttribute("aria-pressed", String(b.dataset.agent === D.agents[k].id));
    $("slider").max = String(P.n - 1);
    $("step-total").textContent = "/ " + stepNo(P.n - 1);
    renderHeadline();
    renderFilters();
    applyFilters();
    renderQA();
    renderVerbs();
    setStep(Math.min(state.i, P.n - 1));
  }
  function play() {
    const btn = $("play");
    if (state.playing) { clearInterval(state.playing); state.playing = null; btn.classList.remove("primary", "playing"); return; }
    btn.classList.add("primary", "playing");
    state.playing = setInterval(() => {
      const before = state.i;
      nextMatch(1);
      if (state.i === before) play();
    }, 1000 / state.speed);
  }

  function wire() {
    $("slider").addEventListener("input", (e) => setStep(+e.target.value));
    $("step-input").addEventListener("change", (e) => setStep(+e.target.value - P.first));
    $("first").addEventListener("click", () => setStep(0));
    $("last").addEventListener("click", () => setStep(P.n - 1));
    $("prev").addEventListener("click", () => nextMatch(-1));
    $("next").addEventListener("click", () => nextMatch(1));
    $("play").addEventListener("click", play);
    $("speed").addEventListener("change", (e) => { state.speed = +e.target.value; if (state.playing) { play(); play(); } });
    let searchTimer = 0;
    $("search").addEventListener("input", (e) => { clearTimeout(searchTimer); searchTimer = setTimeout(() => { state.search = e.target.value; applyFilters(); }, 120); });
    $("verb").addEventListener("change", (e) => { state.verb = +e.target.value; applyFilters(); });
    $("clear").addEventListener("click", () => {
      state.filters.clear(); state.search = ""; state.verb = -1; $("search").value = "";
      renderFilters(); applyFilters();
    });
    $("map-size").addEventListener("click", () => $("map-card").classList.toggle("big"));
    $("list").addEventListener("scroll", () => requestAnimationFrame(drawRows));
    $("list").addEventListener("click", (e) => { const r = e.target.closest(".vrow"); if (r) setStep(+r.dataset.i); });
    const wrap = $("tl-wrap"), tip = $("tl-tip");
    let dragging = false;
    const at = (e) => iOf(e.clientX - wrap.getBoundingClientRect().left);
    wrap.addEventListener("pointerdown", (e) => { dragging = true; wrap.setPointerCapture(e.pointerId); setStep(at(e)); });
    wrap.addEventListener("pointerup", () => { dragging = false; });
    wrap.addEventListener("pointermove", (e) => {
      const i = at(e);
      if (dragging) setStep(i);
      tip.style.display = "block";
      tip.style.left = xOf(i) + "px";
      tip.textContent = i === 0 ? "start" : "step " + stepNo(i) + ": " + P.st.a[i];
    });
    wrap.addEventListener("pointerleave", () => { tip.style.display = "none"; });
    document.addEventListener("keydown", (e) => {
      if (e.target.closest && e.target.closest("input, select, textarea") && e.target.type !== "range") return;
      if (e.key === "ArrowRight") { e.preventDefault(); e.shiftKey ? nextMatch(1) : setStep(state.i + 1); }
      else if (e.key === "ArrowLeft") { e.preventDefault(); e.shiftKey ? nextMatch(-1) : setStep(state.i - 1); }
      else if (e.key === "Home") { e.preventDefault(); setStep(0); }
      else if (e.key === "End") { e.preventDefault(); setStep(P.n - 1); }
      else if (e.key === " " && e.target === document.body) { e.preventDefault(); play(); }
      else if (e.key === "Escape") $("map-card").classList.remove("big");
    });
    let resizeTimer = 0;
    window.addEventListener("resize", () => { clearTimeout(resizeTimer); resizeTimer = setTimeout(() => { drawTimeline(); drawRows(); }, 100); });
    window.addEventListener("hashchange", () => { const s = readHash(); selectAgentIfNeeded(); if (s !== null) setStep(s); });
  }
  let shownAgent = -1;
  function selectAgentIfNeeded() { if (shownAgent !== state.ag) { shownAgent = state.ag; selectAgent(state.ag); } }

  const start = readHash();
  P = prep(state.ag);
  renderHeader();
  renderRunInfo();
  setupDepgraph();
  wire();
  shownAgent = state.ag;
  selectAgent(state.ag);
  if (start !== null) setStep(start);
  window.odysseyView = { ready: performance.now() - t0, setStep, state: () => ({ agent: D.agents[state.ag].id, step: state.i, matches: matches ? matches.length : null }) };
  performance.mark("odyssey-ready");  // benchmarks/viewer_load.py reads it: navigation start -> usable page
  document.documentElement.dataset.ready = "1";
})();
