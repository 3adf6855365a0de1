// SPDX-License-Identifier: MIT
// sonde report --html: the page's script.  Reads the data block that
// sonde wrote (src/output/report_html.c describes it), aggregates the
// binned samples of the selected time range into per-node and
// per-function counts, and draws five views from them.  No network, no
// libraries.  window.sonde exposes state and a few actions for the
// browser tests and bench/html-speed.
'use strict';
(function () {
  const D = JSON.parse(document.getElementById('sonde-data').textContent);
  const NE = D.events.length;
  const FN = D.funcs.name, FDSO = D.funcs.dso, FK = D.funcs.kernel;
  const NF = FN.length;
  const FI = D.funcs.inlined || new Array(NF).fill(0); // inlined bodies: in trees, never rows
  const PARENT = Int32Array.from(D.nodes.parent), NFUNC = Int32Array.from(D.nodes.func);
  const NN = PARENT.length;
  const TL = D.timeline;
  const CELLS = TL.cells, NCELL = CELLS.length / 7;
  const $ = (id) => document.getElementById(id);
  const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }[c]));
  const dsoName = (f) => (FDSO[f] >= 0 ? D.dsos[FDSO[f]] : '[unknown]');
  const pct = (x, t) => (t > 0 ? (100 * x) / t : 0);
  const fmtPct = (x) => x.toFixed(2) + '%';
  const fmtTime = (ns) => (ns >= 1e9 ? (ns / 1e9).toFixed(3) + ' s' : ns >= 1e6 ? (ns / 1e6).toFixed(2) + ' ms' : (ns / 1e3).toFixed(1) + ' µs');

  // ---- the trie's shape (fixed) ----
  const DEPTH = new Int32Array(NN);
  let maxDepth = 0;
  for (let i = 1; i < NN; i++) {
    DEPTH[i] = DEPTH[PARENT[i]] + 1;
    if (DEPTH[i] > maxDepth) maxDepth = DEPTH[i];
  }
  // Children lists (CSR), sorted by function name: a stable flame layout.
  const CH_START = new Int32Array(NN + 1), CH = new Int32Array(Math.max(NN - 1, 0));
  {
    const cnt = new Int32Array(NN);
    for (let i = 1; i < NN; i++) cnt[PARENT[i]]++;
    for (let i = 0; i < NN; i++) CH_START[i + 1] = CH_START[i] + cnt[i];
    const fill = CH_START.slice(0, NN);
    for (let i = 1; i < NN; i++) CH[fill[PARENT[i]]++] = i;
    for (let i = 0; i < NN; i++) {
      if (CH_START[i + 1] - CH_START[i] > 1) {
        const sub = Array.from(CH.subarray(CH_START[i], CH_START[i + 1]));
        sub.sort((a, b) => (FN[NFUNC[a]] < FN[NFUNC[b]] ? -1 : FN[NFUNC[a]] > FN[NFUNC[b]] ? 1 : a - b));
        CH.set(sub, CH_START[i]);
      }
    }
  }
  // A node counts toward its function's total unless an ancestor is the
  // same function (recursion counts once per sample, as in the profile).
  const FIRST = new Uint8Array(NN);
  for (let i = 1; i < NN; i++) {
    let p = PARENT[i];
    while (p > 0 && NFUNC[p] !== NFUNC[i]) p = PARENT[p];
    FIRST[i] = p > 0 ? 0 : 1;
  }
  // A sample's self time belongs to its first frame that is a function,
  // not an inlined body (as in the profile's rows).
  const SELF_FUNC = new Int32Array(NN);
  for (let i = 1; i < NN; i++) {
    let p = i;
    while (p > 0 && FI[NFUNC[p]]) p = PARENT[p];
    SELF_FUNC[i] = p > 0 ? NFUNC[p] : NFUNC[i];
  }
  const NODES_OF = new Map(); // func -> [nodes]
  for (let i = 1; i < NN; i++) {
    let a = NODES_OF.get(NFUNC[i]);
    if (!a) NODES_OF.set(NFUNC[i], (a = []));
    a.push(i);
  }

  // ---- state ----
  const S = {
    // The first event with samples unless one was asked for (perf skips empty ones).
    ev: D.events[Math.min(D.sort_event || 0, NE - 1)].samples || D.group ? Math.min(D.sort_event || 0, NE - 1) : Math.max(0, D.events.findIndex((e) => e.samples)),
    range: null, // [bin0, bin1) or null: whole capture
    view: 'functions',
    selFunc: -1,
    agg: null,
  };

  // Aggregates the cells of the range: per node and per function, per
  // event, samples and period (self and total).
  function aggregate(range) {
    const b0 = range ? range[0] : 0, b1 = range ? range[1] : TL.nbins;
    const selfS = new Float64Array(NN * NE), selfP = new Float64Array(NN * NE);
    for (let c = 0, o = 0; c < NCELL; c++, o += 7) {
      const bin = CELLS[o];
      if (bin < b0 || bin >= b1) continue;
      const k = CELLS[o + 1] * NE + CELLS[o + 4];
      selfS[k] += CELLS[o + 5];
      selfP[k] += CELLS[o + 6];
    }
    const totS = selfS.slice(), totP = selfP.slice();
    for (let i = NN - 1; i > 0; i--) {
      const p = PARENT[i] * NE, n = i * NE;
      for (let e = 0; e < NE; e++) {
        totS[p + e] += totS[n + e];
        totP[p + e] += totP[n + e];
      }
    }
    const fSelfS = new Float64Array(NF * NE), fSelfP = new Float64Array(NF * NE);
    const fTotS = new Float64Array(NF * NE), fTotP = new Float64Array(NF * NE);
    for (let i = 1; i < NN; i++) {
      const f = NFUNC[i] * NE, sf = SELF_FUNC[i] * NE, n = i * NE;
      for (let e = 0; e < NE; e++) {
        fSelfS[sf + e] += selfS[n + e];
        fSelfP[sf + e] += selfP[n + e];
        if (FIRST[i]) {
          fTotS[f + e] += totS[n + e];
          fTotP[f + e] += totP[n + e];
        }
      }
    }
    const allS = [], allP = [];
    for (let e = 0; e < NE; e++) {
      allS.push(totS[e]);
      allP.push(totP[e]);
    }
    return { selfS, selfP, totS, totP, fSelfS, fSelfP, fTotS, fTotP, allS, allP };
  }

  // ---- header ----
  function renderHeader() {
    const h = D.header;
    $('h-file').textContent = h.file;
    const dur = TL.span_ns > 1 ? fmtTime(TL.span_ns) : '?';
    const evs = D.events
      .map((e) => `${esc(e.name)} (${e.freq ? e.sample_freq + ' Hz' : 'every ' + e.sample_period}${e.tracepoint ? ', tracepoint' : ''}): ${e.samples} samples`)
      .join('; ');
    const items = [
      ['Command', esc(h.cmdline.join(' ') || '?'), 'wide'],
      ['Host', esc(h.hostname || '?')],
      ['Kernel', esc(h.osrelease || '?')],
      ['Arch', esc(h.arch || '?') + (h.nr_cpus ? `, ${h.nr_cpus} CPUs` : '')],
      ['Duration', dur],
      ['Samples', String(D.samples) + (D.filtered_out ? ` (${D.filtered_out} filtered out)` : '')],
      ['Lost', `${D.lost + D.lost_samples}` + (D.throttled ? `, throttled ${D.throttled}×` : '')],
      ['Events', evs, 'wide'],
    ];
    if (h.cpudesc) items.splice(4, 0, ['CPU', esc(h.cpudesc)]);
    $('h-info').innerHTML = items.map(([k, v, c]) => `<div class="${c || ''}"><dt>${k}</dt><dd>${v}</dd></div>`).join('');
    const sel = $('ev');
    // perf report's sections: events without samples are not offered (the
    // dummy event of system-wide captures), unless side by side (--group).
    sel.innerHTML = D.events.map((e, i) => (D.group || e.samples || i === S.ev ? `<option value="${i}">${esc(e.name)}</option>` : '')).join('');
    sel.value = String(S.ev);
  }

  // ---- functions table ----
  const FT = { sort: 'self', sortEv: S.ev, desc: true, query: '', limit: 1000 };
  function matcher(q) {
    if (!q) return null;
    const m = /^\/(.*)\/$/.exec(q);
    if (m) {
      try {
        const re = new RegExp(m[1], 'i');
        return (s) => re.test(s);
      } catch (e) {
        return () => false;
      }
    }
    const lq = q.toLowerCase();
    return (s) => s.toLowerCase().includes(lq);
  }
  // Rows: the profile's entries for the whole capture (the text report's
  // numbers); recomputed from the cells for a range.
  function functionRows() {
    const rows = [];
    if (!S.range) {
      for (const r of D.functions) {
        const selfS = [], selfP = [], totS = [], totP = [];
        for (let e = 0; e < NE; e++) {
          selfS.push(r.self[2 * e]); selfP.push(r.self[2 * e + 1]);
          totS.push(r.total[2 * e]); totP.push(r.total[2 * e + 1]);
        }
        rows.push({ f: r.func, selfS, selfP, totS, totP });
      }
      return { rows, allP: D.events.map((e) => e.period) };
    }
    const a = S.agg;
    for (let f = 0; f < NF; f++) {
      const selfS = [], selfP = [], totS = [], totP = [];
      let any = 0;
      for (let e = 0; e < NE; e++) {
        const k = f * NE + e;
        selfS.push(a.fSelfS[k]); selfP.push(a.fSelfP[k]);
        totS.push(a.fTotS[k]); totP.push(a.fTotP[k]);
        any += a.fTotS[k];
      }
      if (any && !FI[f]) rows.push({ f, selfS, selfP, totS, totP });
    }
    return { rows, allP: a.allP };
  }
  // The events of the table: the selected one (perf's section), or all
  // side by side with --group; a row is shown when one of them counted it.
  function tableEvents() {
    return D.group ? D.events.map((e, i) => i) : [S.ev];
  }
  function renderFunctions() {
    const { rows, allP } = functionRows();
    const m = matcher(FT.query);
    const evs = tableEvents();
    let shown = rows.filter((r) => evs.some((e) => r.totS[e] > 0));
    if (m) shown = shown.filter((r) => m(FN[r.f]) || m(dsoName(r.f)));
    const e = FT.sortEv, dir = FT.desc ? -1 : 1;
    const key = FT.sort === 'name' ? (r) => FN[r.f] : FT.sort === 'obj' ? (r) => dsoName(r.f) : FT.sort === 'self' ? (r) => r.selfP[e] : (r) => r.totP[e];
    shown.sort((x, y) => {
      const a = key(x), b = key(y);
      return a < b ? -dir : a > b ? dir : x.f - y.f;
    });
    const head = ['<tr><th class="name" data-k="name">Function</th><th class="obj" data-k="obj">Object</th>'];
    for (const ev of evs) {
      const n = evs.length > 1 ? ' ' + esc(D.events[ev].name) : '';
      const c = (k) => (FT.sort === k && FT.sortEv === ev ? ' sorted' : '');
      head.push(`<th class="ev0${c('self')}" data-k="self" data-e="${ev}">Self %${n}</th><th data-k="self" data-e="${ev}">Self samples</th>` +
        `<th class="${c('total')}" data-k="total" data-e="${ev}">Total %${n}</th><th data-k="total" data-e="${ev}">Total samples</th>`);
    }
    head.push('</tr>');
    $('fn-table').tHead.innerHTML = head.join('');
    const body = [];
    const lim = Math.min(shown.length, FT.limit);
    for (let i = 0; i < lim; i++) {
      const r = shown[i], f = r.f;
      const cells = [`<td class="name" title="${esc(FN[f])}"><span class="mk">[${FK[f] ? 'k' : '.'}]</span> ${esc(FN[f])}</td><td class="obj">${esc(dsoName(f))}</td>`];
      for (const ev of evs) {
        const sp = pct(r.selfP[ev], allP[ev]);
        cells.push(`<td class="ev0"><span class="bar${FK[f] ? ' k' : ''}" style="width:${Math.round(sp * 0.6)}px"></span>${fmtPct(sp)}</td><td>${r.selfS[ev]}</td>` +
          `<td>${fmtPct(pct(r.totP[ev], allP[ev]))}</td><td>${r.totS[ev]}</td>`);
      }
      body.push(`<tr data-f="${f}"${f === S.selFunc ? ' class="sel"' : ''}>${cells.join('')}</tr>`);
    }
    $('fn-table').tBodies[0].innerHTML = body.join('');
    $('fn-count').textContent = `${shown.length} functions` + (shown.length > lim ? ` (first ${lim} shown)` : '') + (S.range ? ' in the selected range' : '');
  }

  // ---- a function's callers, callees and hot line (sysprof's panes) ----
  function neighbours(f) {
    const a = S.agg, ev = S.ev, callers = new Map(), callees = new Map();
    for (const n of NODES_OF.get(f) || []) {
      if (!FIRST[n]) continue;
      const w = a.totP[n * NE + ev];
      if (!w) continue;
      const p = PARENT[n];
      const pf = p > 0 ? NFUNC[p] : -1;
      callers.set(pf, (callers.get(pf) || 0) + w);
    }
    for (const n of NODES_OF.get(f) || []) {
      for (let c = CH_START[n]; c < CH_START[n + 1]; c++) {
        const ch = CH[c], w = a.totP[ch * NE + ev];
        if (w && NFUNC[ch] !== f) callees.set(NFUNC[ch], (callees.get(NFUNC[ch]) || 0) + w);
      }
    }
    const sorted = (m) => Array.from(m.entries()).sort((x, y) => y[1] - x[1]);
    return { callers: sorted(callers), callees: sorted(callees) };
  }
  function codeOf(f) {
    return (D.code.functions || []).find((c) => c.func === f);
  }
  function hotLine(c, ev) {
    let best = null;
    for (const l of c.lines) if (!best || l[1][ev] > best[1][ev]) best = l;
    return best;
  }
  function renderDetail(el) {
    const f = S.selFunc;
    if (f < 0) {
      el.innerHTML = '<p class="muted">Click a function to see its callers, callees and hottest source line.</p>';
      return;
    }
    const a = S.agg, ev = S.ev, all = a.allP[ev];
    const { callers, callees } = neighbours(f);
    const list = (items, what) =>
      items.length
        ? `<table class="grid nb"><tbody>${items
            .slice(0, 50)
            .map(([g, w]) => `<tr data-f="${g}"><td>${fmtPct(pct(w, all))}</td><td class="name">${g < 0 ? '<span class="muted">(root: no caller)</span>' : `<span class="mk">[${FK[g] ? 'k' : '.'}]</span> ` + esc(FN[g])}</td></tr>`)
            .join('')}</tbody></table>`
        : `<p class="muted">no ${what}</p>`;
    const c = codeOf(f);
    let src = '<p class="muted">no source line data for this function</p>';
    if (c && c.lines.length) {
      const l = hotLine(c, ev);
      const text = c.text[l[0] - c.first_line];
      src = `<div class="hotline">${esc(c.file)}:${l[0]} <span class="muted">(${l[1][ev]} samples)</span></div>` +
        (text !== undefined ? `<div class="src">${esc(text.trim())}</div>` : '') + `<p><a href="#" data-code="${f}">Open in Code view</a></p>`;
    }
    el.innerHTML = `<h3>${esc(FN[f])} <span class="muted">${esc(dsoName(f))}</span></h3>` +
      `<div class="muted">self ${fmtPct(pct(a.fSelfP[f * NE + ev], all))}, total ${fmtPct(pct(a.fTotP[f * NE + ev], all))} of ${esc(D.events[ev].name)}${S.range ? ' in the range' : ''}</div>` +
      `<h3>Callers</h3><div class="callers">${list(callers, 'callers')}</div>` +
      `<h3>Callees</h3><div class="callees">${list(callees, 'callees')}</div>` +
      `<h3>Hottest source line</h3>${src}`;
  }
  function selectFunc(f) {
    S.selFunc = f;
    for (const tr of document.querySelectorAll('tr[data-f].sel, .trow.sel')) tr.classList.remove('sel');
    for (const tr of document.querySelectorAll(`#fn-table tr[data-f="${f}"]`)) tr.classList.add('sel');
    renderDetail($('fn-detail'));
    renderDetail($('tree-detail'));
  }

  // ---- call trees ----
  const TREE = { mode: 'down', open: new Set(), built: null };
  // A tree item: key (path), func, nodes with weights; children lazily.
  function treeRoots() {
    const a = S.agg, ev = S.ev;
    if (TREE.mode === 'down') {
      const out = [];
      for (let c = CH_START[0]; c < CH_START[1]; c++) {
        const n = CH[c];
        if (a.totS[n * NE + ev]) out.push({ key: 'd' + n, f: NFUNC[n], nodes: [n], w: [a.totP[n * NE + ev]] });
      }
      return out;
    }
    const by = new Map();
    for (let n = 1; n < NN; n++) {
      const w = a.selfP[n * NE + ev];
      if (!w) continue;
      let it = by.get(NFUNC[n]);
      if (!it) by.set(NFUNC[n], (it = { key: 'u' + NFUNC[n], f: NFUNC[n], nodes: [], w: [] }));
      it.nodes.push(n);
      it.w.push(w);
    }
    return Array.from(by.values());
  }
  function treeChildren(it) {
    const a = S.agg, ev = S.ev;
    if (TREE.mode === 'down') {
      const n = it.nodes[0], out = [];
      for (let c = CH_START[n]; c < CH_START[n + 1]; c++) {
        const ch = CH[c];
        if (a.totS[ch * NE + ev]) out.push({ key: it.key + '/' + ch, f: NFUNC[ch], nodes: [ch], w: [a.totP[ch * NE + ev]] });
      }
      return out;
    }
    const by = new Map();
    it.nodes.forEach((n, i) => {
      const p = PARENT[n];
      if (p <= 0) return;
      let c = by.get(NFUNC[p]);
      if (!c) by.set(NFUNC[p], (c = { key: it.key + '/' + NFUNC[p], f: NFUNC[p], nodes: [], w: [] }));
      c.nodes.push(p);
      c.w.push(it.w[i]);
    });
    return Array.from(by.values());
  }
  const weight = (it) => it.w.reduce((x, y) => x + y, 0);
  function selfOf(it) {
    if (TREE.mode !== 'down') return null;
    return S.agg.selfP[it.nodes[0] * NE + S.ev];
  }
  function renderTree() {
    const all = S.agg.allP[S.ev], out = [];
    const walk = (items, depth) => {
      items.sort((x, y) => weight(y) - weight(x));
      for (const it of items) {
        const kids = treeChildren(it);
        const open = TREE.open.has(it.key);
        const s = selfOf(it);
        out.push(`<div class="trow${it.f === S.selFunc ? ' sel' : ''}" data-key="${esc(it.key)}" data-f="${it.f}" style="padding-left:${8 + depth * 14}px">` +
          `<span class="tg">${kids.length ? (open ? '▾' : '▸') : ''}</span><span class="pc">${fmtPct(pct(weight(it), all))}</span>` +
          `<span class="sp">${s === null ? '' : fmtPct(pct(s, all))}</span><span class="mk">[${FK[it.f] ? 'k' : '.'}]</span>&nbsp;${esc(FN[it.f])}<span class="ob">${esc(dsoName(it.f))}</span></div>`);
        if (open && out.length < 20000) walk(kids, depth + 1);
      }
    };
    walk(treeRoots(), 0);
    const hdr = `<div class="trow muted" style="cursor:default"><span class="tg"></span><span class="pc">${TREE.mode === 'down' ? 'Total' : 'Self'}</span><span class="sp">${TREE.mode === 'down' ? 'Self' : ''}</span>Function</div>`;
    $('tree').innerHTML = hdr + out.join('');
  }
  function expandHotPath() {
    let items = treeRoots();
    for (let d = 0; d < 64 && items.length; d++) {
      items.sort((x, y) => weight(y) - weight(x));
      TREE.open.add(items[0].key);
      items = treeChildren(items[0]);
    }
    renderTree();
  }

  // ---- flame graph / icicle ----
  const FL = { zoom: 0, icicle: false, query: '', rects: null, hover: -1, lastMs: 0 };
  const ROW = 17;
  function hashHue(s, lo, span) {
    let h = 2166136261;
    for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
    return lo + ((h >>> 0) % span);
  }
  // Colours per function, computed once: user warm, kernel cool, unresolved grey.
  const COLORS = new Array(NF);
  for (let f = 0; f < NF; f++) {
    const name = FN[f];
    if (FDSO[f] < 0 && !FK[f]) COLORS[f] = '#bbb';
    else if (/^0x[0-9a-f]+$/.test(name)) COLORS[f] = FK[f] ? 'hsl(205,25%,72%)' : 'hsl(25,25%,72%)';
    else if (FK[f]) COLORS[f] = `hsl(${hashHue(name, 190, 30)},60%,${58 + hashHue(name, 0, 10)}%)`;
    else COLORS[f] = `hsl(${hashHue(name, 5, 45)},80%,${56 + hashHue(name, 0, 10)}%)`;
  }
  const HIT_COLOR = 'hsl(300,70%,60%)';
  // The canvas is only as tall as the visible area (sticky in its scroll
  // box, a spacer gives the full height): raster cost stays constant
  // however deep the stacks, and rows out of view are not drawn.
  function renderFlame() {
    const t0 = performance.now();
    const a = S.agg, ev = S.ev, wrap = $('flame-wrap'), cv = $('flame');
    const W = Math.max(wrap.clientWidth - 2, 200), dpr = window.devicePixelRatio || 1;
    const H = (maxDepth + 2) * ROW, VH = Math.max(Math.min(H, wrap.clientHeight), ROW);
    if (cv.width !== W * dpr || cv.height !== VH * dpr) {
      // Resizing reallocates the canvas: only when the size changes.
      cv.width = W * dpr;
      cv.height = VH * dpr;
      cv.style.width = W + 'px';
      cv.style.height = VH + 'px';
      $('flame-space').style.height = H - VH + 'px';
    }
    if (!FL.icicle && !FL.scrolled) {
      wrap.scrollTop = H - VH; // the root sits at the bottom
      FL.scrolled = true;
    }
    const top = wrap.scrollTop, bottom = top + VH;
    const g = cv.getContext('2d');
    g.setTransform(dpr, 0, 0, dpr, 0, -top * dpr);
    g.clearRect(0, top, W, VH);
    g.font = '11px ui-monospace, monospace';
    g.textBaseline = 'middle';
    const m = matcher(FL.query);
    const hits = m ? new Uint8Array(NF) : null;
    if (m) for (let f = 0; f < NF; f++) hits[f] = m(FN[f]) ? 1 : 0;
    const zoom = FL.zoom, ztot = a.totP[zoom * NE + ev];
    const rx = [], ry = [], rw = [], rn = [];
    const yOf = (d) => (FL.icicle ? d * ROW : H - (d + 1) * ROW);
    const draw = (n, x, w, d) => {
      const y = yOf(d);
      if (y + ROW < top || y > bottom) return;
      const f = n ? NFUNC[n] : -1;
      g.fillStyle = n ? (hits && hits[f] ? HIT_COLOR : COLORS[f]) : '#d9dde2';
      g.fillRect(x, y, Math.max(w - 0.5, 0.5), ROW - 1);
      if (n && f === S.selFunc) {
        g.strokeStyle = '#000';
        g.strokeRect(x + 0.5, y + 0.5, Math.max(w - 1.5, 0.5), ROW - 2);
      }
      if (w > 28) {
        g.fillStyle = '#111';
        const label = n ? FN[f] : 'all (' + D.events[ev].name + ')';
        const maxc = Math.floor((w - 6) / 6.6);
        g.fillText(label.length > maxc ? label.slice(0, Math.max(maxc - 1, 1)) + '…' : label, x + 3, y + ROW / 2);
      }
      rx.push(x); ry.push(y); rw.push(w); rn.push(n);
    };
    // Ancestors of the zoomed node span the whole width.
    const chain = [];
    for (let n = zoom; n >= 0; n = n ? PARENT[n] : -1) chain.push(n);
    chain.reverse();
    chain.forEach((n, i) => draw(n, 0, W, i));
    let matched = 0;
    if (ztot > 0) {
      const scale = W / ztot;
      const stack = [[zoom, 0, DEPTH[zoom], false]];
      while (stack.length) {
        const [n, x0, d, inHit] = stack.pop();
        let x = x0;
        for (let c = CH_START[n]; c < CH_START[n + 1]; c++) {
          const ch = CH[c], w = a.totP[ch * NE + ev] * scale;
          if (w >= 0.35) {
            draw(ch, x, w, d + 1);
            const hit = hits && hits[NFUNC[ch]];
            if (hit && !inHit) matched += a.totP[ch * NE + ev];
            stack.push([ch, x, d + 1, inHit || hit]);
          } else if (hits && hits[NFUNC[ch]] && !inHit) {
            matched += a.totP[ch * NE + ev];
          }
          x += w;
        }
      }
    }
    FL.rects = { rx, ry, rw, rn };
    $('flame-match').textContent = m ? `matched ${fmtPct(pct(matched, ztot))} of the view` : '';
    FL.lastMs = performance.now() - t0;
  }
  function flameHit(ev) {
    if (!FL.rects) return -1;
    const r = $('flame').getBoundingClientRect(), x = ev.clientX - r.left;
    const y = ev.clientY - r.top + $('flame-wrap').scrollTop; // rects are in content coordinates
    const { rx, ry, rw } = FL.rects;
    for (let i = rx.length - 1; i >= 0; i--) if (x >= rx[i] && x < rx[i] + rw[i] && y >= ry[i] && y < ry[i] + ROW) return i;
    return -1;
  }
  function flameZoom(n) {
    const t0 = performance.now();
    FL.zoom = n;
    renderFlame();
    FL.zoomMs = performance.now() - t0;
    return FL.zoomMs;
  }

  // ---- timeline ----
  const TV = { v0: 0, v1: TL.nbins, drag: null, rows: null, lastMs: 0 };
  const LABEL_W = 190, TROW = 26, AXIS = 22;
  function timelineRows() {
    // Per-CPU and per-thread densities of the selected event, per bin.
    const nb = TL.nbins, ev = S.ev, cpus = new Map(), threads = new Map();
    for (let c = 0, o = 0; c < NCELL; c++, o += 7) {
      if (CELLS[o + 4] !== ev) continue;
      const bin = CELLS[o], s = CELLS[o + 5];
      let a = cpus.get(CELLS[o + 3]);
      if (!a) cpus.set(CELLS[o + 3], (a = new Float64Array(nb)));
      a[bin] += s;
      let t = threads.get(CELLS[o + 2]);
      if (!t) threads.set(CELLS[o + 2], (t = new Float64Array(nb)));
      t[bin] += s;
    }
    const rows = [];
    for (const [cpu, a] of Array.from(cpus.entries()).sort((x, y) => x[0] - y[0])) rows.push({ label: cpu < 0 ? 'all CPUs' : 'CPU ' + cpu, kind: 'cpu', d: a });
    const sum = (a) => a.reduce((x, y) => x + y, 0);
    const th = Array.from(threads.entries()).map(([t, a]) => [t, a, sum(a)]).sort((x, y) => y[2] - x[2]);
    for (const [t, a] of th.slice(0, 40)) {
      const [pid, tid, comm] = TL.threads[t];
      rows.push({ label: `${comm} ${pid}/${tid}`, kind: 'thread', d: a });
    }
    const marks = new Map();
    for (let i = 0; i < TL.marks.length; i += 4) {
      const e = TL.marks[i + 3];
      if (!marks.has(e)) marks.set(e, []);
      marks.get(e).push(TL.marks[i]);
    }
    for (const [e, ts] of marks) rows.push({ label: '⚑ ' + D.events[e].name, kind: 'marks', t: ts });
    for (const r of rows) if (r.d) r.max = Math.max(1, ...r.d);
    return rows;
  }
  const binNs = () => TL.span_ns / TL.nbins;
  function renderTimeline() {
    const t0 = performance.now();
    if (!TV.rows || TV.rowsEv !== S.ev) {
      TV.rows = timelineRows();
      TV.rowsEv = S.ev;
    }
    const wrap = $('tl-wrap'), cv = $('timeline'), dpr = window.devicePixelRatio || 1;
    const W = Math.max(wrap.clientWidth - 2, 300), H = AXIS + TV.rows.length * TROW + 4;
    cv.width = W * dpr;
    cv.height = H * dpr;
    cv.style.width = W + 'px';
    cv.style.height = H + 'px';
    const g = cv.getContext('2d');
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, W, H);
    const PW = W - LABEL_W, v0 = TV.v0, v1 = TV.v1, bx = (b) => LABEL_W + ((b - v0) / (v1 - v0)) * PW;
    // Axis.
    g.font = '11px system-ui, sans-serif';
    g.fillStyle = '#6a737d';
    g.textBaseline = 'middle';
    const ns0 = v0 * binNs(), ns1 = v1 * binNs(), step = niceStep((ns1 - ns0) / 8);
    for (let t = Math.ceil(ns0 / step) * step; t <= ns1; t += step) {
      const x = LABEL_W + ((t - ns0) / (ns1 - ns0)) * PW;
      g.fillRect(x, AXIS - 5, 1, 5);
      g.fillText(fmtTime(t), x + 2, AXIS / 2 - 2);
    }
    g.save();
    g.beginPath();
    g.rect(LABEL_W, 0, PW, H);
    g.clip();
    TV.rows.forEach((r, i) => {
      const y = AXIS + i * TROW;
      g.fillStyle = i % 2 ? '#fafbfc' : '#f2f4f6';
      g.fillRect(LABEL_W, y, PW, TROW - 1);
      if (r.d) {
        const lo = Math.max(0, Math.floor(v0)), hi = Math.min(TL.nbins, Math.ceil(v1));
        for (let b = lo; b < hi; b++) {
          const v = r.d[b];
          if (!v) continue;
          const x = bx(b), w = Math.max(bx(b + 1) - x, 1), q = v / r.max;
          g.fillStyle = r.kind === 'cpu' ? `hsl(210,70%,${80 - 40 * q}%)` : `hsl(20,85%,${82 - 40 * q}%)`;
          const h = Math.max(2, (TROW - 3) * q);
          g.fillRect(x, y + TROW - 1 - h, w, h);
        }
      } else {
        g.fillStyle = '#8a2be2';
        for (const t of r.t) {
          const x = LABEL_W + ((t - ns0) / (ns1 - ns0)) * PW;
          if (x >= LABEL_W && x <= W) g.fillRect(x, y + 2, 1, TROW - 5);
        }
      }
    });
    // Selection.
    const sel = TV.drag && TV.drag.mode === 'select' ? [Math.min(TV.drag.b0, TV.drag.b1), Math.max(TV.drag.b0, TV.drag.b1)] : S.range;
    if (sel) {
      g.fillStyle = 'rgba(255, 200, 40, 0.28)';
      g.fillRect(bx(sel[0]), AXIS, bx(sel[1]) - bx(sel[0]), H - AXIS);
      g.fillStyle = '#c99400';
      g.fillRect(bx(sel[0]), AXIS, 1, H - AXIS);
      g.fillRect(bx(sel[1]), AXIS, 1, H - AXIS);
    }
    g.restore();
    g.fillStyle = '#1d232a';
    TV.rows.forEach((r, i) => {
      const y = AXIS + i * TROW + TROW / 2;
      let s = r.label;
      while (g.measureText(s).width > LABEL_W - 10 && s.length > 4) s = s.slice(0, -2);
      g.fillText(s === r.label ? s : s + '…', 6, y);
    });
    TV.lastMs = performance.now() - t0;
  }
  function niceStep(x) {
    const p = Math.pow(10, Math.floor(Math.log10(Math.max(x, 1))));
    for (const m of [1, 2, 5, 10]) if (m * p >= x) return m * p;
    return 10 * p;
  }
  function tlBin(ev) {
    const r = $('timeline').getBoundingClientRect(), PW = r.width - LABEL_W;
    const x = Math.min(Math.max(ev.clientX - r.left - LABEL_W, 0), PW);
    return TV.v0 + (x / PW) * (TV.v1 - TV.v0);
  }
  function tlZoom(factor, center) {
    const c = center === undefined ? (TV.v0 + TV.v1) / 2 : center;
    let w = (TV.v1 - TV.v0) * factor;
    w = Math.min(Math.max(w, 2), TL.nbins);
    let v0 = c - (c - TV.v0) * ((w) / (TV.v1 - TV.v0));
    v0 = Math.min(Math.max(v0, 0), TL.nbins - w);
    TV.v0 = v0;
    TV.v1 = v0 + w;
    renderTimeline();
  }
  function tlPan(db) {
    const w = TV.v1 - TV.v0;
    TV.v0 = Math.min(Math.max(TV.v0 + db, 0), TL.nbins - w);
    TV.v1 = TV.v0 + w;
    renderTimeline();
  }

  // ---- code ----
  const CODE = { f: -1 };
  function renderCode() {
    const fs = D.code.functions || [], ev = S.ev;
    const tot = D.events[ev].samples;
    $('code-funcs').tHead.innerHTML = '<tr><th class="name">Function</th><th>Leaf samples</th><th class="obj">File</th></tr>';
    $('code-funcs').tBodies[0].innerHTML = fs
      .map((c) => {
        const s = c.insns.reduce((x, i) => x + i[2][ev], 0);
        return `<tr data-cf="${c.func}"${c.func === CODE.f ? ' class="sel"' : ''}><td class="name">${esc(FN[c.func])}</td><td>${s} (${fmtPct(pct(s, tot))})</td><td class="obj">${esc((c.file || '').split('/').pop())}</td></tr>`;
      })
      .join('');
    if (CODE.f < 0 && fs.length) CODE.f = fs[0].func;
    const c = codeOf(CODE.f);
    const note = D.code.provider === 'annotate'
      ? `<p class="muted">Whole capture. Instructions and source lines from <code>sonde annotate</code>'s model (disassembly of the object's own code, DWARF lines); big functions show their sampled instructions with ${8} either side.</p>`
      : `<p class="muted">Whole capture. Per-line heat from the DWARF line table of each sampled address (provider: ${esc(D.code.provider)}); no disassembly.</p>`;
    if (!c) {
      $('code-body').innerHTML = note + '<p class="muted">No resolved functions with samples.</p>';
      return;
    }
    const lines = new Map(c.lines.map((l) => [l[0], l[1]]));
    const hot = hotLine(c, ev);
    const fsum = c.insns.reduce((x, i) => x + i[2][ev], 0) || 1;
    const evh = D.events.map((e) => `<td class="c">${esc(e.name)}</td>`).join('');
    let rows = '';
    if (c.text.length) {
      c.text.forEach((t, i) => {
        const no = c.first_line + i, h = lines.get(no);
        const cells = D.events.map((e, k) => `<td class="c">${h && h[k] ? h[k] : ''}</td>`).join('');
        const q = h ? h[ev] / fsum : 0;
        rows += `<tr class="${hot && hot[0] === no ? 'hot' : ''}" data-line="${no}" style="${q ? `background:hsla(10,90%,60%,${(0.12 + 0.6 * q).toFixed(2)})` : ''}">${cells}<td class="n">${no}</td><td class="t">${esc(t)}</td></tr>`;
      });
    } else {
      for (const [no, h] of Array.from(lines.entries()).sort((x, y) => x[0] - y[0]))
        rows += `<tr data-line="${no}" class="${hot && hot[0] === no ? 'hot' : ''}">${D.events.map((e, k) => `<td class="c">${h[k]}</td>`).join('')}<td class="n">${no}</td><td class="t muted">(source not found on this machine)</td></tr>`;
    }
    const insns = c.insns
      .slice()
      .sort((x, y) => (BigInt(x[0]) < BigInt(y[0]) ? -1 : 1))
      .map((i) => `<tr>${D.events.map((e, k) => `<td class="c">${i[2][k] || ''}</td>`).join('')}<td class="n">${i[0]}</td><td class="n">${i[1] || ''}</td><td class="t">${c.asm && c.asm[i[0]] ? esc(c.asm[i[0]]) : '<span class="muted">—</span>'}</td></tr>`)
      .join('');
    $('code-body').innerHTML = note +
      `<h3>${esc(FN[c.func])} <span class="muted">${esc(c.file)}</span></h3>` +
      `<table class="code-src"><thead><tr>${evh}<td class="n">line</td><td></td></tr></thead><tbody>${rows}</tbody></table>` +
      `<h3>Instructions</h3><table class="code-src"><thead><tr>${evh}<td class="n">address</td><td class="n">line</td><td>instruction</td></tr></thead><tbody>${insns}</tbody></table>`;
  }

  // ---- wiring ----
  const RENDER = { functions: renderFunctions, tree: renderTree, flame: renderFlame, timeline: renderTimeline, code: renderCode };
  const dirty = new Set();
  function showView(v) {
    S.view = v;
    for (const b of document.querySelectorAll('#tabs button')) b.classList.toggle('on', b.dataset.view === v);
    for (const s of document.querySelectorAll('.view')) s.classList.toggle('on', s.id === 'v-' + v);
    RENDER[v]();
    dirty.delete(v);
    if (v === 'functions' || v === 'tree') renderDetail($(v === 'tree' ? 'tree-detail' : 'fn-detail'));
  }
  function invalidate() {
    for (const v of Object.keys(RENDER)) dirty.add(v);
    showView(S.view);
  }
  function setRange(r) {
    if (r && (r[1] - r[0] < 1 || (r[0] <= 0 && r[1] >= TL.nbins))) r = null;
    S.range = r;
    S.agg = aggregate(r);
    if (r) {
      const n = S.agg.allS.reduce((x, y) => x + y, 0);
      $('range-text').textContent = `Range ${fmtTime(r[0] * binNs())} – ${fmtTime(r[1] * binNs())}: ${n} samples`;
    }
    $('range').hidden = !r;
    invalidate();
  }

  $('tabs').addEventListener('click', (e) => {
    if (e.target.dataset.view) showView(e.target.dataset.view);
  });
  $('ev').addEventListener('change', (e) => {
    S.ev = +e.target.value;
    FT.sortEv = S.ev;
    invalidate();
  });
  $('range-clear').addEventListener('click', () => setRange(null));
  $('fn-search').addEventListener('input', (e) => {
    FT.query = e.target.value;
    renderFunctions();
  });
  $('fn-table').tHead.addEventListener('click', (e) => {
    const th = e.target.closest('th');
    if (!th) return;
    const k = th.dataset.k, ev = th.dataset.e !== undefined ? +th.dataset.e : FT.sortEv;
    if (FT.sort === k && FT.sortEv === ev) FT.desc = !FT.desc;
    else {
      FT.sort = k;
      FT.sortEv = ev;
      FT.desc = k !== 'name' && k !== 'obj';
    }
    renderFunctions();
  });
  const pickFunc = (e) => {
    const a = e.target.closest('a[data-code]');
    if (a) {
      e.preventDefault();
      CODE.f = +a.dataset.code;
      showView('code');
      return;
    }
    const tr = e.target.closest('tr[data-f]');
    if (tr && +tr.dataset.f >= 0) selectFunc(+tr.dataset.f);
  };
  $('fn-table').addEventListener('click', pickFunc);
  $('fn-detail').addEventListener('click', pickFunc);
  $('tree-detail').addEventListener('click', pickFunc);
  $('tree').addEventListener('click', (e) => {
    const row = e.target.closest('.trow[data-key]');
    if (!row) return;
    const k = row.dataset.key;
    if (TREE.open.has(k)) TREE.open.delete(k);
    else TREE.open.add(k);
    S.selFunc = +row.dataset.f;
    renderTree();
    renderDetail($('tree-detail'));
  });
  for (const r of document.querySelectorAll('input[name=tree-mode]'))
    r.addEventListener('change', (e) => {
      TREE.mode = e.target.value;
      TREE.open.clear();
      expandHotPath();
    });
  $('tree-expand').addEventListener('click', expandHotPath);
  for (const r of document.querySelectorAll('input[name=flame-mode]'))
    r.addEventListener('change', (e) => {
      FL.icicle = e.target.value === 'icicle';
      FL.scrolled = false;
      $('flame-wrap').scrollTop = 0;
      renderFlame();
    });
  $('flame-search').addEventListener('input', (e) => {
    FL.query = e.target.value;
    renderFlame();
  });
  $('flame-reset').addEventListener('click', () => flameZoom(0));
  $('flame').addEventListener('click', (e) => {
    const i = flameHit(e);
    if (i < 0) return;
    const n = FL.rects.rn[i];
    if (n) S.selFunc = NFUNC[n];
    flameZoom(n);
  });
  $('flame').addEventListener('mousemove', (e) => {
    const i = flameHit(e), tip = $('flame-tip');
    if (i < 0) {
      tip.hidden = true;
      return;
    }
    const n = FL.rects.rn[i], a = S.agg, ev = S.ev;
    const w = a.totP[n * NE + ev], s = a.totS[n * NE + ev];
    tip.textContent = n
      ? `${FN[NFUNC[n]]}\n${dsoName(NFUNC[n])}${FK[NFUNC[n]] ? ' [kernel]' : ''}\n${s} samples, ${fmtPct(pct(w, a.allP[ev]))} (self ${fmtPct(pct(a.selfP[n * NE + ev], a.allP[ev]))})`
      : `all: ${s} samples`;
    const r = $('flame-wrap').getBoundingClientRect();
    tip.style.left = Math.min(e.clientX - r.left + 12, r.width - 260) + $('flame-wrap').scrollLeft + 'px';
    tip.style.top = e.clientY - r.top + 12 + $('flame-wrap').scrollTop + 'px';
    tip.hidden = false;
  });
  $('flame').addEventListener('mouseleave', () => ($('flame-tip').hidden = true));
  let flameScroll = 0;
  $('flame-wrap').addEventListener('scroll', () => {
    if (!flameScroll)
      flameScroll = requestAnimationFrame(() => {
        flameScroll = 0;
        renderFlame();
      });
  });
  const tl = $('timeline');
  tl.addEventListener('mousedown', (e) => {
    const b = tlBin(e);
    TV.drag = { mode: e.shiftKey || e.button === 1 ? 'pan' : 'select', b0: b, b1: b, x: e.clientX };
    e.preventDefault();
  });
  window.addEventListener('mousemove', (e) => {
    if (!TV.drag) return;
    if (TV.drag.mode === 'pan') {
      const r = tl.getBoundingClientRect(), PW = r.width - LABEL_W;
      tlPan(-((e.clientX - TV.drag.x) / PW) * (TV.v1 - TV.v0));
      TV.drag.x = e.clientX;
    } else {
      TV.drag.b1 = tlBin(e);
      renderTimeline();
    }
  });
  window.addEventListener('mouseup', () => {
    const d = TV.drag;
    TV.drag = null;
    if (!d || d.mode !== 'select') return;
    const lo = Math.floor(Math.min(d.b0, d.b1)), hi = Math.ceil(Math.max(d.b0, d.b1));
    if (hi - lo >= 1 && Math.abs(d.b1 - d.b0) > 0.2) setRange([lo, hi]);
    else renderTimeline();
  });
  tl.addEventListener('wheel', (e) => {
    e.preventDefault();
    if (e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY)) tlPan(((e.deltaX || e.deltaY) / 500) * (TV.v1 - TV.v0));
    else tlZoom(e.deltaY > 0 ? 1.25 : 0.8, tlBin(e));
  }, { passive: false });
  $('tl-in').addEventListener('click', () => tlZoom(0.5));
  $('tl-out').addEventListener('click', () => tlZoom(2));
  $('tl-reset').addEventListener('click', () => tlZoom(TL.nbins / (TV.v1 - TV.v0)));
  $('code-funcs').addEventListener('click', (e) => {
    const tr = e.target.closest('tr[data-cf]');
    if (tr) {
      CODE.f = +tr.dataset.cf;
      renderCode();
    }
  });
  window.addEventListener('resize', () => {
    if (S.view === 'flame' || S.view === 'timeline') RENDER[S.view]();
  });
  window.addEventListener('keydown', (e) => {
    if (e.key === 'Escape' && S.view === 'flame') flameZoom(0);
  });

  // ---- start ----
  S.agg = aggregate(null);
  renderHeader();
  showView('functions');
  TREE.open.clear();
  {
    // Open the tree along its hottest path, once.
    let items = treeRoots();
    for (let d = 0; d < 64 && items.length; d++) {
      items.sort((x, y) => weight(y) - weight(x));
      TREE.open.add(items[0].key);
      items = treeChildren(items[0]);
    }
  }

  // For tests and bench/html-speed.
  window.sonde = {
    data: D,
    state: S,
    ready: false,
    readyAt: 0,
    show: showView,
    setRange,
    setRangeNs: (a, b) => setRange([Math.floor(a / binNs()), Math.ceil(b / binNs())]),
    selectFunc,
    flameZoom,
    flameRects: () => {
      const r = FL.rects, out = [];
      const top = $('flame-wrap').scrollTop; // y relative to the canvas on screen
      for (let i = 0; i < r.rn.length; i++) if (r.rn[i]) out.push({ node: r.rn[i], name: FN[NFUNC[r.rn[i]]], x: r.rx[i], y: r.ry[i] - top, w: r.rw[i] });
      return out;
    },
    funcSelf: (f) => S.agg.fSelfS[f * NE + S.ev],
    funcByName: (name) => FN.indexOf(name),
    nodesOf: (f) => (NODES_OF.get(f) || []).slice(),
    timings: () => ({ flame: FL.lastMs, zoom: FL.zoomMs, timeline: TV.lastMs }),
    // The timeline's rows as drawn last (null before the first draw): label, kind, marks.
    timelineRows: () => TV.rows && TV.rows.map((r) => ({ label: r.label, kind: r.kind, marks: r.t ? r.t.length : 0 })),
  };
  requestAnimationFrame(() => {
    window.sonde.readyAt = performance.now();
    window.sonde.ready = true;
    // Once idle, draw the flame graph off screen a few times so the first
    // real zoom runs compiled code with the glyphs already cached.
    setTimeout(() => {
      if (S.view === 'flame') return;
      const z = FL.zoom;
      for (let i = 0; i < 3; i++) {
        FL.zoom = i === 1 && CH_START[1] > CH_START[0] ? CH[CH_START[0]] : 0;
        renderFlame();
      }
      FL.zoom = z;
      FL.scrolled = false;
    }, 50);
  });
})();
