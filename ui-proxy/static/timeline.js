/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xprofs page, the timeline: trace viewer JSON (traceEvents of "X"
 * complete events plus "M" process/thread names) drawn on a canvas, one
 * row per thread, nested events stacked. Wheel zooms, drag pans, keys
 * W/S/A/D; after each change the visible window is asked for again as
 * trace_viewer.json?start_time_ms=&end_time_ms=&resolution=, so zooming
 * in shows the events that the coarse first answer left out. A click
 * selects an event (onSelect), shift+drag measures a span (onMeasure),
 * and every view change is reported (onView) so the URL can keep it.
 * Flows (XProf's bind_id with flow_out / flow_in on the linked events)
 * are drawn as arrows from each flow_out event to the next flow_in event
 * of the same id, in time order, among the events loaded.
 */
'use strict';

var XP = window.XP = window.XP || {};

var LABEL_W = 220;    /* px of the name column */
var ROW_H = 16;       /* px per nesting level */
var PROC_H = 18;      /* px of a process header */
var MAX_DEPTH = 24;   /* deeper events share the last row */
var MAX_HEIGHT = 30000;
var WINDOW_DELAY = 250; /* ms of quiet before a window is asked for */
var FLOW_CELL = 4;    /* px: arrows whose two ends share cells this wide look like one */
var FLOW_COLUMN = 8;  /* arrows drawn at most from one such cell (the rest would be a smear) */

/* Reads a trace viewer document into events, names and the time span (µs). */
XP.parseTrace = function (doc) {
  var out = { events: [], procNames: {}, threadNames: {}, procSort: {}, threadSort: {}, start: Infinity, end: -Infinity };
  var list = doc && Array.isArray(doc.traceEvents) ? doc.traceEvents : [];
  for (var i = 0; i < list.length; i++) {
    var e = list[i];
    if (!e || typeof e !== 'object') continue;
    var key = e.pid + ':' + e.tid;
    if (e.ph === 'M') {
      var v = e.args || {};
      if (e.name === 'process_name') out.procNames[e.pid] = String(v.name);
      else if (e.name === 'thread_name') out.threadNames[key] = String(v.name);
      else if (e.name === 'process_sort_index') out.procSort[e.pid] = +v.sort_index;
      else if (e.name === 'thread_sort_index') out.threadSort[key] = +v.sort_index;
      continue;
    }
    if (e.ph !== 'X' && e.ph !== 'i' && e.ph !== 'I') continue;
    var ts = +e.ts;
    var dur = +(e.dur || 0);
    if (!isFinite(ts) || !isFinite(dur)) continue;
    var ev = { pid: e.pid, tid: e.tid, ts: ts, dur: dur, name: String(e.name || ''),
      uid: e.args && e.args.uid !== undefined ? e.args.uid : null, cat: e.cat || '', raw: e };
    if (e.bind_id !== undefined && (e.flow_in || e.flow_out)) {
      ev.flow = { id: String(e.bind_id), in: !!e.flow_in, out: !!e.flow_out, cat: e.cat || '' };
    }
    out.events.push(ev);
    if (ts < out.start) out.start = ts;
    if (ts + dur > out.end) out.end = ts + dur;
  }
  if (doc && Array.isArray(doc.fullTimespan) && doc.fullTimespan.length === 2 &&
      isFinite(+doc.fullTimespan[0]) && isFinite(+doc.fullTimespan[1]) && +doc.fullTimespan[1] > +doc.fullTimespan[0]) {
    out.start = +doc.fullTimespan[0] * 1000;
    out.end = +doc.fullTimespan[1] * 1000;
  }
  return out;
};

/*
 * A timeline in box for run. url(params) gives the URL of a trace window
 * (params: start_time_ms, end_time_ms, resolution, or only resolution for
 * the first, whole-range load).
 */
XP.Timeline = function (box, url) {
  this.box = box;
  this.url = url;
  this.base = null;       /* the first, whole-range answer */
  this.detail = null;     /* the latest window: {start, end, trace} */
  this.full = { start: 0, end: 1 };
  this.view = { start: 0, end: 1 };
  this.tracks = [];
  this.seq = 0;           /* window requests sent */
  this.applied = 0;       /* window answers shown */
  this.timer = null;
  this.drag = null;
  this.selected = null;   /* the clicked event */
  this.measure = null;    /* {start, end} µs of a shift+drag */
  this.onSelect = null;   /* function (event, track) */
  this.onMeasure = null;  /* function (span) */
  this.onView = null;     /* function (view) */
  this.flows = [];        /* arrows {id, from, to, cat} among the loaded events */
  this.showFlows = true;
  this.build();
};

XP.Timeline.prototype.build = function () {
  var self = this;
  var btn = function (text, title, fn) {
    return XP.el('button', { text: text, title: title, onclick: function () { fn(); } });
  };
  this.status = XP.el('span', { cls: 'tl-status muted' });
  this.tools = XP.el('div', { cls: 'tl-tools' }, [
    btn('−', 'zoom out (S)', function () { self.zoom(2, 0.5); }),
    btn('+', 'zoom in (W)', function () { self.zoom(0.5, 0.5); }),
    btn('←', 'pan left (A)', function () { self.pan(-0.25); }),
    btn('→', 'pan right (D)', function () { self.pan(0.25); }),
    btn('reset', 'whole trace (0)', function () { self.setView(self.full.start, self.full.end); }),
    XP.el('label', { cls: 'small', title: 'arrows of the flows (launch to kernel, send to receive)' }, [
      XP.el('input', { type: 'checkbox', id: 'tl-flows', checked: 'checked', onchange: function (ev) { self.showFlows = ev.target.checked; self.draw(); } }), ' flows']),
    this.flowNote = XP.el('span', { cls: 'small muted tl-flow-note' }),
    this.status
  ]);
  this.axis = XP.el('canvas', { cls: 'tl-axis' });
  this.canvas = XP.el('canvas', { cls: 'tl-canvas', tabindex: '0', role: 'img', 'aria-label': 'timeline' });
  this.scroller = XP.el('div', { cls: 'tl-scroll' }, [this.canvas]);
  this.tip = XP.el('div', { cls: 'tl-tip' });
  this.progressBox = XP.el('div', { cls: 'tl-progress' });
  this.box.appendChild(this.tools);
  this.box.appendChild(this.progressBox);
  this.box.appendChild(this.axis);
  this.box.appendChild(this.scroller);
  this.box.appendChild(this.tip);
  this.box.xpTimeline = this; /* for tests and the console */
  this.box.dataset.state = 'loading';
  this.box.dataset.windows = '0';
  this.box.dataset.requests = '0';

  this.canvas.addEventListener('wheel', function (ev) { self.onWheel(ev); }, { passive: false });
  this.canvas.addEventListener('mousedown', function (ev) { self.onDown(ev); });
  window.addEventListener('mousemove', function (ev) { self.onMove(ev); });
  window.addEventListener('mouseup', function (ev) { self.onUp(ev); });
  this.canvas.addEventListener('mousemove', function (ev) { self.onHover(ev); });
  this.canvas.addEventListener('mouseleave', function () { self.tip.textContent = ''; });
  this.canvas.addEventListener('dblclick', function () { self.setView(self.full.start, self.full.end); });
  this.canvas.addEventListener('keydown', function (ev) { self.onKey(ev); });
  window.addEventListener('resize', function () { self.draw(); });
  /* the box also changes width without a resize of the window (the page's
   * scrollbar comes or goes as the details panel grows): draw again, or the
   * canvas and the hit tests would use two widths */
  if (window.ResizeObserver) {
    var lastWidth = -1;
    new ResizeObserver(function () {
      if (self.box.clientWidth !== lastWidth) { lastWidth = self.box.clientWidth; self.draw(); }
    }).observe(this.box);
  }
};

/* Pixels available for time. */
XP.Timeline.prototype.plotWidth = function () {
  return Math.max(100, (this.box.clientWidth || 900) - LABEL_W - 4);
};

/* The first load: the whole trace, down-sampled as XProf's UI asks. */
XP.Timeline.prototype.load = async function (initial) {
  var p = new XP.Progress(this.progressBox, 'loading trace');
  var r = await XP.getJSON(this.url({ resolution: 8000 }), function (n) { p.update(n); });
  p.remove();
  if (!r.ok) {
    this.box.dataset.state = 'unavailable';
    this.box.textContent = '';
    XP.unavailable(this.box, r.status ? r.status + ': ' + r.error : r.error);
    return;
  }
  this.base = XP.parseTrace(r.data);
  if (!this.base.events.length && this.base.start === Infinity) {
    this.box.dataset.state = 'empty';
    this.status.textContent = 'no events';
    return;
  }
  if (!(this.base.end > this.base.start)) this.base.end = this.base.start + 1;
  this.full = { start: this.base.start, end: this.base.end };
  this.view = { start: this.full.start, end: this.full.end };
  this.rebuild();
  this.box.dataset.state = 'ready';
  if (initial && initial.end > initial.start) this.setView(initial.start, initial.end);
  else this.draw();
  this.status.textContent = this.base.events.length + ' events, ' + (this.flows.length ? this.flows.length + ' flows, ' : '') + XP.fmtBytes(r.bytes) + ' · wheel to zoom, drag to pan';
};

/* Groups the events shown (base outside the window, the window inside) into tracks. */
XP.Timeline.prototype.rebuild = function () {
  var d = this.detail;
  var byKey = {};
  var tracks = [];
  var names = { procNames: {}, threadNames: {}, procSort: {}, threadSort: {} };
  var add = function (src) {
    Object.keys(names).forEach(function (k) { Object.assign(names[k], src[k]); });
  };
  var push = function (e) {
    var key = e.pid + ':' + e.tid;
    var t = byKey[key];
    if (!t) {
      t = byKey[key] = { pid: e.pid, tid: e.tid, key: key, events: [] };
      tracks.push(t);
    }
    t.events.push(e);
  };
  var seen = new Set();
  var id = function (e) { return e.pid + ':' + e.tid + ':' + e.ts + ':' + e.dur + ':' + e.name; };
  if (d) {
    d.trace.events.forEach(function (e) { seen.add(id(e)); });
  }
  add(this.base);
  this.base.events.forEach(function (e) {
    if (d && e.ts >= d.start && e.ts + e.dur <= d.end) return; /* the window has it */
    if (!seen.has(id(e))) push(e);
  });
  if (d) {
    add(d.trace);
    d.trace.events.forEach(push);
  }
  tracks.forEach(function (t) {
    t.events.sort(function (a, b) { return a.ts - b.ts || b.dur - a.dur; });
    var stack = [];
    var depth = 0;
    t.events.forEach(function (e) {
      while (stack.length && stack[stack.length - 1] <= e.ts) stack.pop();
      e.depth = Math.min(stack.length, MAX_DEPTH);
      if (e.depth > depth) depth = e.depth;
      stack.push(e.ts + e.dur);
    });
    t.rows = depth + 1;
    t.name = names.threadNames[t.key] || ('thread ' + t.tid);
    t.proc = names.procNames[t.pid] || ('process ' + t.pid);
    t.psort = t.pid in names.procSort ? names.procSort[t.pid] : t.pid;
    t.tsort = t.key in names.threadSort ? names.threadSort[t.key] : t.tid;
  });
  tracks.sort(function (a, b) { return a.psort - b.psort || a.pid - b.pid || a.tsort - b.tsort || a.tid - b.tid; });
  var y = 0;
  var lastPid = null;
  tracks.forEach(function (t) {
    if (t.pid !== lastPid) { t.header = y; y += PROC_H; lastPid = t.pid; } else { t.header = -1; }
    t.y = y;
    y += t.rows * ROW_H + 4;
  });
  this.tracks = tracks;
  this.linkFlows();
  this.height = Math.min(MAX_HEIGHT, Math.max(40, y));
  this.box.dataset.events = String(tracks.reduce(function (s, t) { return s + t.events.length; }, 0));
  this.box.dataset.tracks = String(tracks.length);
};

/*
 * The arrows of the flows among the events of the tracks: per flow id, in
 * time order, one from each event with flow_out to the next with flow_in.
 */
XP.Timeline.prototype.linkFlows = function () {
  var byId = new Map();
  this.tracks.forEach(function (t) {
    t.events.forEach(function (e) {
      if (!e.flow) return;
      e.track = t;
      var list = byId.get(e.flow.id);
      if (!list) byId.set(e.flow.id, list = []);
      list.push(e);
    });
  });
  var arrows = [];
  byId.forEach(function (list, id) {
    list.sort(function (a, b) { return a.ts - b.ts; });
    for (var i = 0; i + 1 < list.length; i++) {
      if (list[i].flow.out && list[i + 1].flow.in) arrows.push({ id: id, from: list[i], to: list[i + 1], cat: list[i].flow.cat || list[i + 1].flow.cat });
    }
  });
  this.flows = arrows;
  this.box.dataset.flows = String(arrows.length);
};

/* The arrows that start or end at event e. */
XP.Timeline.prototype.flowsOf = function (e) {
  if (!e || !this.flows) return [];
  var same = function (x) { return x.pid === e.pid && x.tid === e.tid && x.ts === e.ts && x.dur === e.dur && x.name === e.name; };
  return this.flows.filter(function (a) { return same(a.from) || same(a.to); });
};

/*
 * The arrows to paint among those in the view: zoomed out, many start and
 * end within a few pixels of each other on the same rows and would pile up
 * as one dark smear, so one arrow stands for each cell of FLOW_CELL px at
 * both ends, at most FLOW_COLUMN start in one cell, and cells double until
 * at most one arrow per 4 px of width is left. The selection's arrows are
 * always painted.
 */
XP.Timeline.prototype.thinFlows = function (list, sel, w, scale) {
  var v = this.view;
  var cap = Math.max(60, Math.round(w / 4));
  var cell = FLOW_CELL;
  var kept = list;
  while (cell <= w) {
    var seen = new Set();
    var perColumn = new Map();
    kept = list.filter(function (a) {
      if (sel.has(a)) return true;
      var c0 = Math.floor((a.from.ts - v.start) * scale / cell);
      var k = c0 + ':' + Math.floor((a.to.ts - v.start) * scale / cell) + ':' +
        a.from.track.key + ':' + a.from.depth + ':' + a.to.track.key + ':' + a.to.depth;
      var n = perColumn.get(c0) || 0;
      if (seen.has(k) || n >= FLOW_COLUMN) return false;
      seen.add(k);
      perColumn.set(c0, n + 1);
      return true;
    });
    if (kept.length <= cap) break;
    cell *= 2;
  }
  return kept;
};

/* Draws the arrows with an end or their line in the view (thinned when dense); those of the selection darker. */
XP.Timeline.prototype.drawFlows = function (g, w, scale) {
  var v = this.view;
  var sel = new Set(this.flowsOf(this.selected));
  if (!this.showFlows) {
    this.box.dataset.flowsDrawn = '0';
    this.box.dataset.flowsPainted = '0';
    this.flowNote.textContent = '';
    return;
  }
  var inView = this.flows.filter(function (a) {
    return !(Math.max(a.from.ts, a.to.ts) < v.start || Math.min(a.from.ts, a.to.ts) > v.end);
  });
  var paint = this.thinFlows(inView, sel, w, scale);
  this.box.dataset.flowsDrawn = String(inView.length);
  this.box.dataset.flowsPainted = String(paint.length);
  this.flowNote.textContent = paint.length < inView.length ? paint.length + ' of ' + inView.length + ' arrows drawn: zoom in for all' : '';
  g.save();
  g.beginPath();
  g.rect(LABEL_W, 0, w, this.height);
  g.clip();
  for (var i = 0; i < paint.length; i++) {
    var a = paint[i];
    var x0 = LABEL_W + (a.from.ts - v.start) * scale;
    var x1 = LABEL_W + (a.to.ts - v.start) * scale;
    var y0 = a.from.track.y + a.from.depth * ROW_H + ROW_H / 2;
    var y1 = a.to.track.y + a.to.depth * ROW_H + ROW_H / 2;
    var hot = sel.has(a);
    g.strokeStyle = g.fillStyle = hot ? '#c2185b' : 'rgba(40, 40, 40, 0.55)';
    g.lineWidth = hot ? 2 : 1;
    g.beginPath();
    g.moveTo(x0, y0);
    g.bezierCurveTo(x0 + (x1 - x0) / 2, y0, x0 + (x1 - x0) / 2, y1, x1, y1);
    g.stroke();
    var dir = x1 >= x0 ? 1 : -1;
    g.beginPath();
    g.moveTo(x1, y1);
    g.lineTo(x1 - 6 * dir, y1 - 3);
    g.lineTo(x1 - 6 * dir, y1 + 3);
    g.closePath();
    g.fill();
  }
  g.restore();
};

function niceStep(span, n) {
  var raw = span / Math.max(1, n);
  var p = Math.pow(10, Math.floor(Math.log10(raw)));
  var m = raw / p;
  return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
}

function setupCanvas(canvas, w, h) {
  var dpr = window.devicePixelRatio || 1;
  if (canvas.width !== Math.round(w * dpr) || canvas.height !== Math.round(h * dpr)) {
    canvas.width = Math.round(w * dpr);
    canvas.height = Math.round(h * dpr);
    canvas.style.width = w + 'px';
    canvas.style.height = h + 'px';
  }
  var g = canvas.getContext('2d');
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  g.clearRect(0, 0, w, h);
  return g;
}

/*
 * The ticks of the time axis over [a, b] µs from the trace's start: round
 * multiples of a 1-2-5 step, each label in the unit of the step with as
 * many decimals as the step needs ("1,646.2 ms", never "999.977 ms").
 */
XP.axisTicks = function (a, b, n) {
  var step = niceStep(b - a, n);
  var top = Math.max(Math.abs(a), Math.abs(b));
  var decimals = function (u) { return Math.max(0, Math.ceil(-Math.log10(step / u) - 1e-9)); };
  /* the largest unit the labels reach that needs at most 3 decimals */
  var unit = [[1e6, 's'], [1e3, 'ms'], [1, 'µs'], [1e-3, 'ns']].find(function (u) {
    return (top >= u[0] || u[0] === 1e-3) && decimals(u[0]) <= 3;
  }) || [1e-3, 'ns'];
  var digits = decimals(unit[0]);
  var out = [];
  for (var k = Math.ceil(a / step - 1e-9); k * step <= b + 1e-9 * step; k++) {
    var t = k * step || 0; /* never -0 */
    out.push({ t: t, label: (t / unit[0]).toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }) + ' ' + unit[1] });
  }
  return { step: step, ticks: out };
};

XP.Timeline.prototype.drawAxis = function (w) {
  var g = setupCanvas(this.axis, w + LABEL_W, 22);
  var v = this.view;
  var scale = w / (v.end - v.start);
  var axis = XP.axisTicks(v.start - this.full.start, v.end - this.full.start, w / 110);
  g.font = '11px sans-serif';
  g.fillStyle = '#333';
  g.fillText(XP.fmtUs(v.end - v.start) + ' shown', 4, 14);
  g.strokeStyle = '#bbb';
  axis.ticks.forEach(function (tk) {
    var x = LABEL_W + tk.t * scale - (v.start - this.full.start) * scale;
    g.beginPath(); g.moveTo(x, 14); g.lineTo(x, 22); g.stroke();
    if (x + 2 + g.measureText(tk.label).width <= LABEL_W + w) g.fillText(tk.label, x + 2, 11); /* no cut label at the end */
  }, this);
  this.axis.dataset.step = String(axis.step);
  this.axis.dataset.ticks = JSON.stringify(axis.ticks.map(function (tk) { return tk.label; }));
};

/* Draws the visible window. */
XP.Timeline.prototype.draw = function () {
  if (!this.base || !this.tracks) return;
  var w = this.plotWidth();
  var v = this.view;
  var scale = w / (v.end - v.start);
  var g = setupCanvas(this.canvas, w + LABEL_W, this.height);
  var drawn = 0;
  this.drawAxis(w);
  g.font = '11px sans-serif';
  g.textBaseline = 'middle';
  for (var i = 0; i < this.tracks.length; i++) {
    var t = this.tracks[i];
    if (t.y > this.height) break;
    if (t.header >= 0) {
      g.fillStyle = '#e8ecf2';
      g.fillRect(0, t.header, w + LABEL_W, PROC_H);
      g.fillStyle = '#123';
      g.fillText(t.proc.slice(0, 120), 4, t.header + PROC_H / 2);
    }
    g.fillStyle = '#444';
    g.fillText(t.name.slice(0, 32), 12, t.y + ROW_H / 2);
    g.save();
    g.beginPath();
    g.rect(LABEL_W, t.y, w, t.rows * ROW_H);
    g.clip();
    for (var k = 0; k < t.events.length; k++) {
      var e = t.events[k];
      if (e.ts > v.end) break;
      if (e.ts + e.dur < v.start) continue;
      var x0 = LABEL_W + (e.ts - v.start) * scale;
      var x1 = LABEL_W + (e.ts + e.dur - v.start) * scale;
      var bw = Math.max(1, x1 - x0);
      var y = t.y + e.depth * ROW_H;
      g.fillStyle = e.color || (e.color = XP.color(e.name));
      g.fillRect(x0, y, bw, ROW_H - 1);
      drawn++;
      if (bw > 36) {
        g.fillStyle = '#111';
        var chars = Math.floor((bw - 6) / 6.2);
        var left = Math.max(x0, LABEL_W) + 3;
        g.fillText(e.name.length > chars ? e.name.slice(0, Math.max(1, chars - 1)) + '…' : e.name, left, y + ROW_H / 2);
      }
    }
    g.restore();
  }
  this.drawFlows(g, w, scale);
  this.drawMarks(g, w, scale);
  g.strokeStyle = '#ccc';
  g.beginPath(); g.moveTo(LABEL_W - 0.5, 0); g.lineTo(LABEL_W - 0.5, this.height); g.stroke();
  this.box.dataset.drawn = String(drawn);
};

/* Moves the view to [start, end] µs (kept inside the trace), redraws, asks for the window. */
XP.Timeline.prototype.setView = function (start, end) {
  var f = this.full;
  var span = Math.min(Math.max(end - start, 0.001), f.end - f.start);
  start = Math.max(f.start, Math.min(start, f.end - span));
  this.view = { start: start, end: start + span };
  this.draw();
  this.schedule();
  if (this.onView) this.onView(this.view);
};

XP.Timeline.prototype.zoom = function (factor, at) {
  var v = this.view;
  var span = v.end - v.start;
  var pivot = v.start + span * at;
  this.setView(pivot - (pivot - v.start) * factor, pivot + (v.end - pivot) * factor);
};

XP.Timeline.prototype.pan = function (fraction) {
  var span = this.view.end - this.view.start;
  this.setView(this.view.start + span * fraction, this.view.end + span * fraction);
};

XP.Timeline.prototype.onWheel = function (ev) {
  var rect = this.canvas.getBoundingClientRect();
  var x = ev.clientX - rect.left - LABEL_W;
  if (x < 0 || !this.base) return; /* over the names: let the page scroll */
  ev.preventDefault();
  if (ev.shiftKey) {
    this.pan((ev.deltaY || ev.deltaX) > 0 ? 0.1 : -0.1);
    return;
  }
  this.zoom(ev.deltaY > 0 ? 1.25 : 0.8, Math.min(1, x / this.plotWidth()));
};

XP.Timeline.prototype.onDown = function (ev) {
  if (!this.base || ev.button !== 0) return;
  this.drag = { x: ev.clientX, y: ev.clientY, start: this.view.start, end: this.view.end,
    measure: ev.shiftKey, moved: false };
  this.canvas.focus({ preventScroll: true });
  ev.preventDefault();
};

/* The time (µs) at a client x. */
XP.Timeline.prototype.timeAt = function (clientX) {
  var rect = this.canvas.getBoundingClientRect();
  var v = this.view;
  return v.start + (clientX - rect.left - LABEL_W) / this.plotWidth() * (v.end - v.start);
};

XP.Timeline.prototype.onMove = function (ev) {
  if (!this.drag) return;
  if (Math.abs(ev.clientX - this.drag.x) + Math.abs(ev.clientY - this.drag.y) > 3) this.drag.moved = true;
  if (!this.drag.moved) return;
  if (this.drag.measure) {
    var a = this.timeAt(this.drag.x);
    var b = this.timeAt(ev.clientX);
    this.setMeasure(Math.min(a, b), Math.max(a, b));
    return;
  }
  var dt = (ev.clientX - this.drag.x) / this.plotWidth() * (this.drag.end - this.drag.start);
  this.setView(this.drag.start - dt, this.drag.end - dt);
};

/* A press without a move is a click: it selects the event under the mouse. */
XP.Timeline.prototype.onUp = function (ev) {
  var d = this.drag;
  this.drag = null;
  if (!d || d.moved || ev.target !== this.canvas) return;
  var hit = this.hitAt(ev.clientX, ev.clientY);
  this.select(hit ? hit.event : null, hit ? hit.track : null);
};

/* Marks e as selected (null: none) and tells onSelect. */
XP.Timeline.prototype.select = function (e, track) {
  this.selected = e;
  this.box.dataset.selected = e ? e.name : '';
  this.draw();
  if (this.onSelect) this.onSelect(e, track);
};

/* A measured span [start, end] µs (null: none). */
XP.Timeline.prototype.setMeasure = function (start, end) {
  this.measure = start === null ? null : { start: start, end: end };
  this.box.dataset.measure = this.measure ? String(end - start) : '';
  this.draw();
  if (this.onMeasure) this.onMeasure(this.measure);
};

/* The selection's outline and the measured span's shade. */
XP.Timeline.prototype.drawMarks = function (g, w, scale) {
  var v = this.view;
  if (this.measure) {
    var x0 = LABEL_W + Math.max(0, (this.measure.start - v.start) * scale);
    var x1 = LABEL_W + Math.min(w, (this.measure.end - v.start) * scale);
    if (x1 > x0) {
      g.fillStyle = 'rgba(255, 170, 0, 0.18)';
      g.fillRect(x0, 0, x1 - x0, this.height);
      g.strokeStyle = '#c77800';
      g.beginPath(); g.moveTo(x0, 0); g.lineTo(x0, this.height); g.moveTo(x1, 0); g.lineTo(x1, this.height); g.stroke();
    }
  }
  var e = this.selected;
  if (!e) return;
  var key = e.pid + ':' + e.tid;
  var t = this.tracks.find(function (tr) { return tr.key === key; });
  if (!t) return;
  var found = t.events.find(function (x) { return x.ts === e.ts && x.dur === e.dur && x.name === e.name; });
  var depth = found ? found.depth : 0;
  var sx = LABEL_W + (e.ts - v.start) * scale;
  var sw = Math.max(2, e.dur * scale);
  g.save();
  g.beginPath();
  g.rect(LABEL_W, 0, w, this.height);
  g.clip();
  g.strokeStyle = '#000';
  g.lineWidth = 2;
  g.strokeRect(sx - 1, t.y + depth * ROW_H - 1, sw + 2, ROW_H + 1);
  g.restore();
};

/* Centres the view on event e (keeping the zoom unless e is wider) and selects it. */
XP.Timeline.prototype.jumpTo = function (e) {
  var span = this.view.end - this.view.start;
  if (e.dur * 1.5 > span || span > Math.max(e.dur * 200, 50)) span = Math.max(e.dur * 8, 10);
  var mid = e.ts + e.dur / 2;
  this.setView(mid - span / 2, mid + span / 2);
  this.select(e, null);
};

XP.Timeline.prototype.onKey = function (ev) {
  var k = ev.key.toLowerCase();
  if (k === 'w') this.zoom(0.7, 0.5);
  else if (k === 's') this.zoom(1 / 0.7, 0.5);
  else if (k === 'a') this.pan(-0.2);
  else if (k === 'd') this.pan(0.2);
  else if (k === '0') this.setView(this.full.start, this.full.end);
  else if (k === 'escape') { this.setMeasure(null); this.select(null, null); }
  else if (k === 'm' && this.selected) this.setMeasure(this.selected.ts, this.selected.ts + this.selected.dur);
  else return;
  ev.preventDefault();
};

/* The event under a client point: {event, track}, or null. */
XP.Timeline.prototype.hitAt = function (clientX, clientY) {
  if (!this.base) return null;
  var rect = this.canvas.getBoundingClientRect();
  var x = clientX - rect.left - LABEL_W;
  var y = clientY - rect.top;
  var v = this.view;
  var time = v.start + x / this.plotWidth() * (v.end - v.start);
  var slack = 2 / this.plotWidth() * (v.end - v.start);
  var t = this.tracks.find(function (tr) { return y >= tr.y && y < tr.y + tr.rows * ROW_H; });
  if (!t || x < 0) return null;
  var depth = Math.floor((y - t.y) / ROW_H);
  var hit = t.events.find(function (e) {
    return e.depth === depth && e.ts - slack <= time && e.ts + e.dur + slack >= time;
  });
  return hit ? { event: hit, track: t } : null;
};

/* The screen point (client x, y) of the middle of event e, or null when not drawn. */
XP.Timeline.prototype.pointOf = function (e) {
  var key = e.pid + ':' + e.tid;
  var t = this.tracks.find(function (tr) { return tr.key === key; });
  if (!t) return null;
  var v = this.view;
  var rect = this.canvas.getBoundingClientRect();
  var mid = Math.max(v.start, Math.min(v.end, e.ts + e.dur / 2));
  return { x: rect.left + LABEL_W + (mid - v.start) / (v.end - v.start) * this.plotWidth(),
    y: rect.top + t.y + (e.depth || 0) * ROW_H + ROW_H / 2 };
};

/* Shows the event under the mouse. */
XP.Timeline.prototype.onHover = function (ev) {
  if (!this.base || this.drag) return;
  var rect = this.canvas.getBoundingClientRect();
  var x = ev.clientX - rect.left - LABEL_W;
  var y = ev.clientY - rect.top;
  var v = this.view;
  var time = v.start + x / this.plotWidth() * (v.end - v.start);
  var slack = 2 / this.plotWidth() * (v.end - v.start);
  var t = this.tracks.find(function (tr) { return y >= tr.y && y < tr.y + tr.rows * ROW_H; });
  var hit = null;
  if (t && x >= 0) {
    var depth = Math.floor((y - t.y) / ROW_H);
    hit = t.events.find(function (e) {
      return e.depth === depth && e.ts - slack <= time && e.ts + e.dur + slack >= time;
    });
  }
  this.tip.textContent = hit ? hit.name + ' · start ' + XP.fmtUs(hit.ts - this.full.start) +
    ' · duration ' + XP.fmtUs(hit.dur) + ' · ' + t.proc + ' / ' + t.name : '';
};

/* Asks for the visible window once the view has been still for a moment. */
XP.Timeline.prototype.schedule = function () {
  var self = this;
  clearTimeout(this.timer);
  this.timer = setTimeout(function () { self.fetchWindow(); }, WINDOW_DELAY);
};

XP.Timeline.prototype.fetchWindow = async function () {
  var v = this.view;
  var f = this.full;
  if (v.start <= f.start && v.end >= f.end) {
    if (this.detail) { this.detail = null; this.rebuild(); this.draw(); }
    return;
  }
  var id = ++this.seq;
  this.box.dataset.requests = String(this.seq);
  var params = {
    start_time_ms: (v.start / 1000).toFixed(6),
    end_time_ms: (v.end / 1000).toFixed(6),
    resolution: Math.max(1, Math.round(this.plotWidth() / 2)) * 8
  };
  var p = new XP.Progress(this.progressBox, 'loading window');
  var r = await XP.getJSON(this.url(params), function (n) { p.update(n); });
  p.remove();
  if (id !== this.seq) return; /* a newer window was asked for */
  if (!r.ok) {
    this.status.textContent = 'window not available (' + (r.status || '') + ' ' + r.error + ')';
    return;
  }
  this.detail = { start: v.start, end: v.end, trace: XP.parseTrace(r.data) };
  this.applied++;
  this.box.dataset.windows = String(this.applied);
  this.rebuild();
  this.draw();
  this.status.textContent = 'window ' + XP.fmtUs(v.start - f.start) + ' – ' + XP.fmtUs(v.end - f.start) +
    ': ' + this.detail.trace.events.length + ' events, ' + XP.fmtBytes(r.bytes);
};
