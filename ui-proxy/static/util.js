/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xprofs page, helpers shared by the other scripts: building DOM nodes
 * (text only, never HTML from data), fetching with a progress display that
 * never throws, and number formats.
 */
'use strict';

var XP = window.XP = window.XP || {};

/* Makes an element: props may hold text, cls, on<event> and attributes. */
XP.el = function (tag, props, children) {
  var e = document.createElement(tag);
  Object.keys(props || {}).forEach(function (k) {
    var v = props[k];
    if (k === 'text') e.textContent = v;
    else if (k === 'cls') e.className = v;
    else if (k.slice(0, 2) === 'on') e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  });
  (children || []).forEach(function (c) {
    if (c === null || c === undefined) return;
    e.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
  });
  return e;
};

/* URL of an XProf route with its query parameters. */
XP.api = function (route, params) {
  var q = new URLSearchParams();
  Object.keys(params || {}).forEach(function (k) {
    if (params[k] !== undefined && params[k] !== null) q.append(k, String(params[k]));
  });
  var s = q.toString();
  return '/' + route + (s ? '?' + s : '');
};

XP.fmtBytes = function (n) {
  if (n < 1024) return n + ' B';
  if (n < 1048576) return (n / 1024).toFixed(1) + ' KiB';
  return (n / 1048576).toFixed(1) + ' MiB';
};

/* A number for a table cell or a card: integers grouped, others rounded. */
XP.fmtNum = function (v) {
  if (typeof v !== 'number' || !isFinite(v)) return String(v);
  if (Number.isInteger(v)) return v.toLocaleString('en-US');
  var a = Math.abs(v);
  var digits = a >= 1000 ? 1 : a >= 1 ? 3 : 4;
  return Number(v.toFixed(digits)).toLocaleString('en-US', { maximumFractionDigits: digits });
};

/* A duration given in microseconds. */
XP.fmtUs = function (us) {
  var a = Math.abs(us);
  if (a >= 1e6) return (us / 1e6).toFixed(3) + ' s';
  if (a >= 1e3) return (us / 1e3).toFixed(3) + ' ms';
  if (a >= 1) return us.toFixed(3) + ' µs';
  return (us * 1e3).toFixed(1) + ' ns';
};

/* Loads in flight, shown in the header. */
XP.activity = { n: 0 };
XP.activity.change = function (d) {
  this.n += d;
  var a = document.getElementById('activity');
  if (a) a.textContent = this.n > 0 ? 'loading ' + this.n + '…' : '';
};

/* A progress line in parent: label, bytes so far, seconds; remove() when done. */
XP.Progress = function (parent, label) {
  this.t0 = performance.now();
  this.label = label;
  this.text = XP.el('span', { text: label + '…' });
  this.box = XP.el('div', { cls: 'progress' }, [XP.el('span', { cls: 'spinner' }), this.text]);
  if (parent) parent.appendChild(this.box);
};
XP.Progress.prototype.update = function (bytes) {
  var secs = (performance.now() - this.t0) / 1000;
  this.text.textContent = this.label + ': ' + XP.fmtBytes(bytes) + ' in ' + secs.toFixed(1) + ' s…';
};
XP.Progress.prototype.remove = function () {
  if (this.box.parentNode) this.box.parentNode.removeChild(this.box);
};

/*
 * Fetches url; resolves to {ok, status, text} or {ok: false, status, error}.
 * Never rejects. progress(bytes) is called as the body arrives.
 */
XP.get = async function (url, progress) {
  XP.activity.change(1);
  try {
    var resp = await fetch(url);
    if (!resp.ok) {
      var msg = '';
      try { msg = (await resp.text()).trim(); } catch (e) { msg = ''; }
      return { ok: false, status: resp.status, error: msg || ('HTTP ' + resp.status) };
    }
    if (!resp.body || !resp.body.getReader) {
      return { ok: true, status: resp.status, text: await resp.text() };
    }
    var reader = resp.body.getReader();
    var chunks = [];
    var got = 0;
    for (;;) {
      var step = await reader.read();
      if (step.done) break;
      chunks.push(step.value);
      got += step.value.length;
      if (progress) progress(got);
    }
    var all = new Uint8Array(got);
    var off = 0;
    chunks.forEach(function (c) { all.set(c, off); off += c.length; });
    return { ok: true, status: resp.status, text: new TextDecoder().decode(all) };
  } catch (e) {
    return { ok: false, status: 0, error: String(e && e.message || e) };
  } finally {
    XP.activity.change(-1);
  }
};

/* As XP.get, and parses JSON into .data. */
XP.getJSON = async function (url, progress) {
  var r = await XP.get(url, progress);
  if (!r.ok) return r;
  var bytes = r.text.length;
  try {
    /* flow ids pass 2^53: keep them exact, as strings */
    if (r.text.indexOf('"bind_id":') >= 0) r.text = r.text.replace(/"bind_id":(\d+)/g, '"bind_id":"$1"');
    r.data = JSON.parse(r.text);
  } catch (e) {
    return { ok: false, status: r.status, error: 'not JSON: ' + e.message };
  }
  r.bytes = bytes;
  r.text = null;
  return r;
};

/* Loads url as JSON into section element box, with a progress line. */
XP.loadInto = async function (box, url, label) {
  var p = new XP.Progress(box, label);
  var r = await XP.getJSON(url, function (n) { p.update(n); });
  p.remove();
  return r;
};

/* A "not available" note. */
XP.unavailable = function (box, why) {
  box.appendChild(XP.el('p', { cls: 'muted na', text: 'not available' + (why ? ' (' + why + ')' : '') }));
};

/* A stable color for a name. */
XP.color = function (name) {
  var h = 2166136261;
  for (var i = 0; i < name.length; i++) {
    h ^= name.charCodeAt(i);
    h = Math.imul(h, 16777619);
  }
  var hue = (h >>> 0) % 360;
  return 'hsl(' + hue + ', 55%, ' + (62 + ((h >>> 9) % 12)) + '%)';
};

/*
 * URL of a file of a run through the XProf routes: "x.json" through
 * /data (tag x; trace_viewer.json is trace_viewer@), "x.csv" through
 * /data_csv, "x.txt" through /data_txt. params become the file's query
 * string; host (optional) picks hosts/<host>/.
 */
XP.fileUrl = function (run, name, params, host) {
  var m = /^(.*)\.(json|csv|txt)$/.exec(name);
  if (!m) return null;
  var tag = m[1];
  if (m[2] === 'json' && tag === 'trace_viewer') tag = 'trace_viewer@';
  else if (m[2] === 'json' && tag === 'trace_viewer_legacy') tag = 'trace_viewer';
  var route = m[2] === 'json' ? 'data' : 'data_' + m[2];
  var all = { run: run, tag: tag };
  if (host) all.host = host;
  return XP.api(route, Object.assign(all, params || {}));
};

/* A link to a file a view reads, for the section's header. */
XP.fileLink = function (run, name, params, host) {
  var url = XP.fileUrl(run, name, params, host);
  var q = params ? new URLSearchParams(params).toString() : '';
  return XP.el('a', { href: url, cls: 'raw', target: '_blank', rel: 'noopener', 'data-file': (host ? 'hosts/' + host + '/' : '') + name,
    text: (host ? 'hosts/' + host + '/' : '') + name + (q ? '?' + decodeURIComponent(q) : '') });
};

/* A number shown in text, holding its raw value for tests and tooltips. */
XP.num = function (v, key, text) {
  var e = XP.el('span', { cls: 'v', text: text !== undefined ? text : XP.fmtNum(v) });
  if (typeof v === 'number') e.dataset.v = String(v);
  if (key) e.dataset.key = key;
  return e;
};

XP.fmtPct = function (v) {
  return typeof v === 'number' && isFinite(v) ? v.toFixed(1) + '%' : '–';
};

/* Milliseconds, as XProf's overview shows them. */
XP.fmtMs = function (v) {
  return typeof v === 'number' && isFinite(v) ? XP.fmtNum(v) + ' ms' : '–';
};

/*
 * The fragment: #/ (runs, ?q= the search) or #/run/<run>/<tab>?k=v...
 * Returns {run, tab, params (URLSearchParams)}.
 */
XP.readHash = function () {
  var h = location.hash || '#/';
  var qAt = h.indexOf('?');
  var path = qAt >= 0 ? h.slice(1, qAt) : h.slice(1);
  var params = new URLSearchParams(qAt >= 0 ? h.slice(qAt + 1) : '');
  var m = /^\/run\/([^/]+)(?:\/([a-z]+))?\/?$/.exec(path);
  if (!m) return { run: null, tab: null, params: params };
  return { run: decodeURIComponent(m[1]), tab: m[2] || null, params: params };
};

XP.makeHash = function (run, tab, params) {
  var q = params ? new URLSearchParams(params).toString() : '';
  if (!run) return '#/' + (q ? '?' + q : '');
  return '#/run/' + encodeURIComponent(run) + (tab ? '/' + tab : '') + (q ? '?' + q : '');
};

/* Changes the fragment's parameters without re-rendering (shareable URL). */
XP.setHashParams = function (changes) {
  var cur = XP.readHash();
  Object.keys(changes).forEach(function (k) {
    if (changes[k] === null || changes[k] === undefined || changes[k] === '') cur.params.delete(k);
    else cur.params.set(k, String(changes[k]));
  });
  history.replaceState(null, '', XP.makeHash(cur.run, cur.tab, cur.params));
};

/*
 * The last line of the run's errors.txt about file name (the mount writes
 * "<time> <file?query>: <reason>"), without its time; '' when none.
 */
XP.reasonFor = async function (run, name) {
  var r = await XP.get(XP.fileUrl(run, 'errors.txt'));
  if (!r.ok) return '';
  var found = '';
  r.text.split('\n').forEach(function (line) {
    var text = line.replace(/^\d{4}-\d\d-\d\dT[0-9:.]+Z /, '');
    if (text.indexOf(name + ': ') === 0 || text.indexOf(name + '?') === 0) found = text;
  });
  return found;
};

/* A one-line note of why a section has nothing to show. */
XP.note = function (box, text, cls) {
  var p = XP.el('p', { cls: 'muted na ' + (cls || ''), text: text });
  box.appendChild(p);
  return p;
};

/* Runs f(item) over items, n at a time. */
XP.pool = async function (items, n, f) {
  var queue = items.slice();
  var worker = async function () {
    while (queue.length) await f(queue.shift());
  };
  var workers = [];
  for (var i = 0; i < n; i++) workers.push(worker());
  await Promise.all(workers);
};

/* A 1-2-5 step that cuts span into about n parts. */
XP.niceStep = function (span, n) {
  if (!(span > 0)) return 1;
  var raw = span / (n || 4);
  var mag = Math.pow(10, Math.floor(Math.log10(raw)));
  var f = raw / mag;
  return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
};

/* The multiples of step from lo to hi (both inclusive, up to rounding). */
XP.niceTicks = function (lo, hi, step) {
  var out = [];
  var k0 = Math.ceil(lo / step - 1e-9), k1 = Math.floor(hi / step + 1e-9);
  for (var k = k0; k <= k1 && out.length < 50; k++) out.push(k * step);
  return out;
};

/* A tick value with as many decimals as its step needs, thousands grouped. */
XP.fmtTick = function (v, step) {
  var d = Math.max(0, Math.min(12, -Math.floor(Math.log10(step) + 1e-9)));
  var s = v.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });
  return s === '-0' ? '0' : s;
};

/* The binary unit that suits byte counts up to max: {div, unit}. */
XP.byteScale = function (max) {
  if (max >= 1073741824) return { div: 1073741824, unit: 'GiB' };
  if (max >= 1048576) return { div: 1048576, unit: 'MiB' };
  if (max >= 1024) return { div: 1024, unit: 'KiB' };
  return { div: 1, unit: 'B' };
};
