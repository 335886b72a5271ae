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
  try {
    r.data = JSON.parse(r.text);
  } catch (e) {
    return { ok: false, status: r.status, error: 'not JSON: ' + e.message };
  }
  r.bytes = r.text.length;
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
