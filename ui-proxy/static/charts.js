/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xprofs page, charts: a stacked bar chart on a canvas (vertical for step
 * times, horizontal for per-GPU time), and the readers that find the
 * series in steps.json, overview_page.json and gpu_timeline.json.
 */
'use strict';

var XP = window.XP = window.XP || {};

var PALETTE = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948',
  '#b07aa1', '#ff9da7', '#9c755f', '#bab0ac'];
XP.PALETTE = PALETTE;

/* A canvas sized for the screen's pixel ratio; returns its 2-D context. */
function sizedCanvas(canvas, w, h) {
  var dpr = window.devicePixelRatio || 1;
  canvas.width = Math.max(1, Math.round(w * dpr));
  canvas.height = Math.max(1, Math.round(h * dpr));
  canvas.style.width = w + 'px';
  canvas.style.height = h + 'px';
  var g = canvas.getContext('2d');
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  return g;
}

function legend(series) {
  return XP.el('div', { cls: 'legend' }, series.map(function (s, i) {
    var sw = XP.el('span', { cls: 'swatch' });
    sw.style.background = PALETTE[i % PALETTE.length];
    return XP.el('span', { cls: 'legend-item' }, [sw, s.name]);
  }));
}

/*
 * Draws {labels, series: [{name, values}], unit} as stacked bars into box.
 * opts.horizontal puts one bar per row (for devices).
 */
XP.barChart = function (box, data, opts) {
  opts = opts || {};
  var n = data.labels.length;
  if (!n || !data.series.length) return null;
  var horizontal = !!opts.horizontal;
  var width = Math.max(320, Math.min(box.clientWidth || 900, 1400));
  var height = horizontal ? 30 + n * 22 : 240;
  var canvas = XP.el('canvas', { cls: 'chart', role: 'img', 'aria-label': opts.title || 'chart' });
  canvas.dataset.bars = String(n); /* what is drawn, for tests */
  canvas.dataset.series = JSON.stringify(data.series.map(function (s) { return s.name; }));
  var tip = XP.el('div', { cls: 'chart-tip' });
  var totals = [];
  for (var i = 0; i < n; i++) {
    totals.push(data.series.reduce(function (s, ser) { return s + (+ser.values[i] || 0); }, 0));
  }
  var max = Math.max.apply(null, totals.concat([0])) || 1;
  /* round ticks: the axis ends at the first multiple of a 1-2-5 step above the tallest bar */
  var step = XP.niceStep(max, 4);
  max = Math.ceil(max / step - 1e-9) * step;
  var ticks = XP.niceTicks(0, max, step);
  canvas.dataset.step = String(step);
  canvas.dataset.ticks = JSON.stringify(ticks.map(function (v) { return XP.fmtTick(v, step) + (data.unit ? ' ' + data.unit : ''); }));
  var g = sizedCanvas(canvas, width, height);
  var padL = horizontal ? 230 : 56;
  var padB = horizontal ? 20 : 28;
  var plotW = width - padL - 10;
  var plotH = height - padB - 8;
  var bars = [];

  g.font = '11px sans-serif';
  g.fillStyle = '#555';
  g.strokeStyle = '#ddd';
  ticks.forEach(function (val) {
    var label = XP.fmtTick(val, step) + (data.unit ? ' ' + data.unit : '');
    g.beginPath();
    if (horizontal) {
      var x = padL + plotW * val / max;
      g.moveTo(x, 4); g.lineTo(x, height - padB);
      g.stroke();
      var lw = g.measureText(label).width;
      g.fillText(label, Math.max(0, Math.min(x - lw / 2, width - lw - 2)), height - 6);
    } else {
      var y = 8 + plotH - plotH * val / max;
      g.moveTo(padL, y); g.lineTo(width - 10, y);
      g.stroke();
      g.fillText(XP.fmtTick(val, step), 4, y + 4);
    }
  });
  var slot = (horizontal ? plotH : plotW) / n;
  for (i = 0; i < n; i++) {
    var acc = 0;
    data.series.forEach(function (ser, s) {
      var v = +ser.values[i] || 0;
      if (v <= 0) return;
      var r;
      if (horizontal) {
        r = { x: padL + plotW * acc / max, y: 4 + i * slot + 2, w: plotW * v / max, h: slot - 4 };
      } else {
        var h = plotH * v / max;
        r = { x: padL + i * slot + slot * 0.1, y: 8 + plotH - plotH * acc / max - h, w: Math.max(1, slot * 0.8), h: h };
      }
      g.fillStyle = PALETTE[s % PALETTE.length];
      g.fillRect(r.x, r.y, r.w, r.h);
      r.text = data.labels[i] + ' · ' + ser.name + ': ' + XP.fmtCell(v) + (data.unit ? ' ' + data.unit : '');
      bars.push(r);
      acc += v;
    });
    if (horizontal) {
      g.fillStyle = '#333';
      g.fillText(String(data.labels[i]).slice(0, 36), 4, 4 + i * slot + slot / 2 + 4);
    } else if (n <= 40 || i % Math.ceil(n / 40) === 0) {
      g.fillStyle = '#555';
      g.fillText(String(data.labels[i]).slice(0, 8), padL + i * slot + 1, height - 10);
    }
  }
  canvas.addEventListener('mousemove', function (ev) {
    var rect = canvas.getBoundingClientRect();
    var mx = ev.clientX - rect.left;
    var my = ev.clientY - rect.top;
    var hit = bars.find(function (b) { return mx >= b.x && mx <= b.x + b.w && my >= b.y && my <= b.y + b.h; });
    tip.textContent = hit ? hit.text : '';
  });
  if (opts.title) box.appendChild(XP.el('h3', { text: opts.title }));
  box.appendChild(canvas);
  if (data.series.length > 1) box.appendChild(legend(data.series));
  box.appendChild(tip);
  return canvas;
};

/* Unit of a column from its name: "ms", "us" or "". */
function unitOf(name) {
  if (/(^|_|\()ms\b|_ms$|\(ms\)/i.test(name)) return 'ms';
  if (/(^|_|\()(us|µs)\b|_us$|\((us|µs)\)/i.test(name)) return 'µs';
  return '';
}

/*
 * Step times from steps.json: one bar per step row (the rows without a
 * region, or at depth 0), split into its children's union and the
 * unattributed rest when those columns exist. Returns chart data or null.
 */
XP.stepsChart = function (json) {
  var t = XP.toTable(json);
  if (!t || !t.rows.length) return null;
  var region = XP.findCol(t, [/^region/i, /region_name/i]);
  var depth = XP.findCol(t, [/^depth$/i]);
  var num = XP.findCol(t, [/step_?num/i, /step_number/i]);
  var name = XP.findCol(t, [/^step(_name)?$/i, /step_name/i]);
  var incl = XP.findCol(t, [/incl/i, /dur/i, /time/i], 'number');
  if (incl < 0) incl = XP.findCol(t, [/incl/i, /dur/i, /time/i]);
  var union = XP.findCol(t, [/union/i]);
  var rest = XP.findCol(t, [/unattrib/i]);
  if (incl < 0) return null;
  var host = XP.findCol(t, [/^host$/i]);
  var rows = t.rows.filter(function (r) {
    if (depth >= 0 && r[depth] !== null && r[depth] !== '') return +r[depth] === 0;
    if (region >= 0) return r[region] === null || r[region] === '';
    return true;
  });
  /* One series of steps: the (host, step name) with the most steps. */
  var groups = {};
  var best = null;
  rows.forEach(function (r) {
    var key = (host >= 0 ? r[host] : '') + '\u0000' + (name >= 0 ? r[name] : '');
    (groups[key] = groups[key] || []).push(r);
    if (!best || groups[key].length > groups[best].length) best = key;
  });
  if (!best) return null;
  rows = groups[best];
  var what = best.split('\u0000').filter(Boolean).join(' · ');
  var names = name >= 0 ? rows.map(function (r) { return r[name]; }) : [];
  var oneName = names.every(function (x) { return x === names[0]; });
  var nums = num >= 0 ? rows.map(function (r) { return r[num]; }) : [];
  var unique = num >= 0 && new Set(nums).size === rows.length;
  var labels = rows.map(function (r, i) {
    var label = unique && r[num] !== null ? r[num] : i;
    return name >= 0 && r[name] && !oneName ? r[name] + ' ' + label : String(label);
  });
  var unit = unitOf(t.cols[incl].id) || unitOf(t.cols[incl].label);
  if (union >= 0 && rest >= 0) {
    return {
      labels: labels, unit: unit, what: what, series: [
        { name: 'in named regions', values: rows.map(function (r) { return +r[union] || 0; }) },
        { name: 'unattributed', values: rows.map(function (r) { return +r[rest] || 0; }) }
      ]
    };
  }
  return { labels: labels, unit: unit, what: what, series: [{ name: t.cols[incl].label, values: rows.map(function (r) { return +r[incl] || 0; }) }] };
};

/* Step times from overview_page.json's step table (XProf's stacked bars). */
XP.overviewStepsChart = function (overview) {
  if (!Array.isArray(overview) || !XP.isDataTable(overview[1])) return null;
  var t = XP.toTable(overview[1]);
  if (!t.rows.length) return null;
  var step = XP.findCol(t, [/^stepnum$/]);
  var series = [];
  t.cols.forEach(function (c, i) {
    if (c.type === 'number' && /TimeMs$/.test(c.id) && c.id !== 'stepTimeMs') {
      var values = t.rows.map(function (r) { return +r[i] || 0; });
      if (values.some(function (v) { return v > 0; })) series.push({ name: c.label, values: values });
    }
  });
  if (!series.length) return null;
  return { labels: t.rows.map(function (r, i) { return step >= 0 ? r[step] : i; }), unit: 'ms', series: series };
};

var GPU_PARTS = [
  ['computation', /computation/i],
  ['exposed communication', /exposed_?comm/i],
  ['exposed memcpy', /exposed_?memcpy/i],
  ['idle', /^idle|idle_time/i]
];

/*
 * Per-device time from gpu_timeline.json, wide (a row per device, a column
 * per metric) or long (a row per device and metric, as TraceLens prints
 * it). Returns chart data or null.
 */
XP.gpuChart = function (json) {
  var t = XP.toTable(json);
  if (!t || !t.rows.length) return null;
  var dev = XP.findCol(t, [/device/i, /gpu_pid/i, /^pid$/i, /gpu/i]);
  var type = XP.findCol(t, [/^type$/i, /metric/i], 'string');
  var ms = XP.findCol(t, [/time.*ms|ms$/i, /time/i, /value/i], 'number');
  var host = XP.findCol(t, [/^host$/i]);
  var hosts = new Set(host >= 0 ? t.rows.map(function (r) { return r[host]; }) : []);
  var labels = [];
  var byDev = {};
  function slotOf(r) {
    var key = dev >= 0 ? String(r[dev]) : 'all';
    if (hosts.size > 1) key = key + ' @ ' + r[host];
    if (!(key in byDev)) { byDev[key] = GPU_PARTS.map(function () { return 0; }); labels.push(key); }
    return byDev[key];
  }
  if (type >= 0 && ms >= 0) {
    t.rows.forEach(function (r) {
      GPU_PARTS.forEach(function (part, k) {
        if (part[1].test(String(r[type]))) slotOf(r)[k] = +r[ms] || 0;
      });
    });
  } else {
    var cols = GPU_PARTS.map(function (part) {
      return XP.findCol(t, [new RegExp(part[1].source + '.*ms', 'i'), part[1]], 'number');
    });
    if (cols.every(function (c) { return c < 0; })) return null;
    t.rows.forEach(function (r) {
      var s = slotOf(r);
      cols.forEach(function (c, k) { if (c >= 0) s[k] = +r[c] || 0; });
    });
  }
  if (!labels.length) return null;
  return {
    labels: labels, unit: 'ms', series: GPU_PARTS.map(function (part, k) {
      return { name: part[0], values: labels.map(function (l) { return byDev[l][k]; }) };
    })
  };
};
