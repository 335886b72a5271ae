/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xprofs page, plots on a canvas: a line chart over time with a marked
 * point (memory timelines) and a log-log scatter with roof lines (the
 * roofline). Hovering shows the nearest point.
 */
'use strict';

(function () {
  var XP = window.XP;

  function canvasFor(box, w, h, label) {
    var canvas = XP.el('canvas', { cls: 'chart', role: 'img', 'aria-label': label || 'chart' });
    var dpr = window.devicePixelRatio || 1;
    canvas.width = Math.round(w * dpr);
    canvas.height = Math.round(h * dpr);
    canvas.style.width = w + 'px';
    canvas.style.height = h + 'px';
    box.appendChild(canvas);
    var g = canvas.getContext('2d');
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.font = '11px sans-serif';
    return { canvas: canvas, g: g };
  }

  function legendOf(items) {
    return XP.el('div', { cls: 'legend' }, items.map(function (it) {
      var sw = XP.el('span', { cls: 'swatch' });
      sw.style.background = it.color;
      return XP.el('span', { cls: 'legend-item' }, [sw, it.name]);
    }));
  }

  /*
   * Lines over x: data {x: [..], series: [{name, values, color}], xLabel,
   * yFormat(v), xFormat(v), mark: {x, label}}. Returns the canvas.
   */
  XP.lineChart = function (box, data, opts) {
    opts = opts || {};
    var w = Math.max(320, Math.min(box.clientWidth || 900, 1400));
    var h = opts.height || 240;
    var padL = 70, padR = 12, padT = 10, padB = 26;
    var c = canvasFor(box, w, h, opts.title);
    var g = c.g;
    var xs = data.x;
    var x0 = Math.min.apply(null, xs), x1 = Math.max.apply(null, xs);
    if (!(x1 > x0)) x1 = x0 + 1;
    var ymax = 0;
    data.series.forEach(function (s) { s.values.forEach(function (v) { if (v > ymax) ymax = v; }); });
    if (opts.ymax > ymax) ymax = opts.ymax;
    if (!(ymax > 0)) ymax = 1;
    /*
     * Round ticks on both axes: y from 0 to the first multiple of a 1-2-5
     * step (in yScale's unit, e.g. MiB) above the top; x at the multiples
     * of a step inside [x0, x1] (whole numbers when xInt), each label kept
     * inside the canvas.
     */
    var ys = data.yScale || { div: 1, unit: data.yUnit || '' };
    var ystep = XP.niceStep(ymax / ys.div, 4);
    if (opts.ymax === undefined || ymax > opts.ymax) ymax = Math.ceil(ymax / ys.div / ystep - 1e-9) * ystep * ys.div;
    var xstep = XP.niceStep(x1 - x0, 5);
    if (data.xInt) xstep = Math.max(1, Math.round(xstep));
    var px = function (x) { return padL + (x - x0) / (x1 - x0) * (w - padL - padR); };
    var py = function (y) { return padT + (1 - y / ymax) * (h - padT - padB); };
    var yf = data.yFormat || XP.fmtNum;
    var xf = data.xFormat || XP.fmtNum;
    g.strokeStyle = '#e3e6ea';
    g.fillStyle = '#555';
    var ylabels = [], xlabels = [], xboxes = [];
    XP.niceTicks(0, ymax / ys.div, ystep).forEach(function (t) {
      var yv = t * ys.div;
      var label = data.yTick ? data.yTick(t, ystep) : XP.fmtTick(t, ystep) + (ys.unit ? ' ' + ys.unit : '');
      g.beginPath(); g.moveTo(padL, py(yv)); g.lineTo(w - padR, py(yv)); g.stroke();
      g.fillText(label, 4, py(yv) + 4);
      ylabels.push(label);
    });
    XP.niceTicks(x0, x1, xstep).forEach(function (xv) {
      var label = (data.xName ? data.xName + ' ' : '') + XP.fmtTick(xv, xstep) + (data.xUnit ? ' ' + data.xUnit : '');
      var lw = g.measureText(label).width;
      var left = Math.max(0, Math.min(px(xv) - lw / 2, w - lw - 1));
      g.fillText(label, left, h - 8);
      xlabels.push(label);
      xboxes.push([Math.round(left), Math.round(left + lw)]);
    });
    c.canvas.dataset.yticks = JSON.stringify(ylabels);
    c.canvas.dataset.ystep = String(ystep);
    c.canvas.dataset.xticks = JSON.stringify(xlabels);
    c.canvas.dataset.xstep = String(xstep);
    c.canvas.dataset.xboxes = JSON.stringify(xboxes);
    data.series.forEach(function (s) {
      g.strokeStyle = s.color;
      g.lineWidth = 1.5;
      g.beginPath();
      s.values.forEach(function (v, i) {
        if (i === 0) g.moveTo(px(xs[i]), py(v)); else g.lineTo(px(xs[i]), py(v));
      });
      g.stroke();
    });
    g.lineWidth = 1;
    if (data.mark && isFinite(data.mark.x)) {
      var mx = px(data.mark.x);
      g.strokeStyle = '#c0392b';
      g.setLineDash([4, 3]);
      g.beginPath(); g.moveTo(mx, padT); g.lineTo(mx, h - padB); g.stroke();
      g.setLineDash([]);
      g.fillStyle = '#c0392b';
      g.fillText(data.mark.label || 'peak', Math.min(mx + 4, w - 120), padT + 10);
    }
    var tip = XP.el('div', { cls: 'chart-tip' });
    c.canvas.addEventListener('mousemove', function (ev) {
      var r = c.canvas.getBoundingClientRect();
      var x = x0 + (ev.clientX - r.left - padL) / (w - padL - padR) * (x1 - x0);
      var best = 0;
      xs.forEach(function (v, i) { if (Math.abs(v - x) < Math.abs(xs[best] - x)) best = i; });
      tip.textContent = xf(xs[best]) + ': ' + data.series.map(function (s) { return s.name + ' ' + yf(s.values[best]); }).join(' · ');
    });
    box.appendChild(legendOf(data.series));
    box.appendChild(tip);
    return c.canvas;
  };

  function decades(lo, hi) {
    var out = [];
    for (var e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) out.push(Math.pow(10, e));
    return out;
  }

  /*
   * The roofline: points [{x, y, name, color}] on log axes (x: FLOP/byte,
   * y: GFLOP/s), roofs [{name, bw (GB/s), peak (GFLOP/s)}]. Returns the canvas.
   */
  XP.rooflineChart = function (box, points, roofs, opts) {
    opts = opts || {};
    var w = Math.max(320, Math.min(box.clientWidth || 900, 1000));
    var h = 340;
    var padL = 80, padR = 14, padT = 12, padB = 34;
    var c = canvasFor(box, w, h, 'roofline');
    var g = c.g;
    var peak = Math.max.apply(null, roofs.map(function (r) { return r.peak; }).concat([1]));
    var xlo = Math.min.apply(null, points.map(function (p) { return p.x; }).concat([0.1]));
    var xhi = Math.max.apply(null, points.map(function (p) { return p.x; }).concat(roofs.map(function (r) { return 4 * r.peak / r.bw; })));
    var ylo = Math.min.apply(null, points.map(function (p) { return p.y; }).concat([peak / 1e4]));
    xlo = Math.pow(10, Math.floor(Math.log10(xlo)));
    xhi = Math.pow(10, Math.ceil(Math.log10(xhi)));
    ylo = Math.pow(10, Math.floor(Math.log10(ylo)));
    var yhi = Math.pow(10, Math.ceil(Math.log10(peak * 1.5)));
    var px = function (x) { return padL + (Math.log10(x) - Math.log10(xlo)) / (Math.log10(xhi) - Math.log10(xlo)) * (w - padL - padR); };
    var py = function (y) { return padT + (1 - (Math.log10(y) - Math.log10(ylo)) / (Math.log10(yhi) - Math.log10(ylo))) * (h - padT - padB); };
    g.strokeStyle = '#eceef1';
    g.fillStyle = '#555';
    var xboxes = [];
    decades(xlo, xhi).forEach(function (x) {
      g.beginPath(); g.moveTo(px(x), padT); g.lineTo(px(x), h - padB); g.stroke();
      var label = XP.fmtNum(x);
      var lw = g.measureText(label).width;
      var left = Math.max(0, Math.min(px(x) - lw / 2, w - lw - 1));
      g.fillText(label, left, h - padB + 14);
      xboxes.push([Math.round(left), Math.round(left + lw)]);
    });
    decades(ylo, yhi).forEach(function (y) {
      g.beginPath(); g.moveTo(padL, py(y)); g.lineTo(w - padR, py(y)); g.stroke();
      g.fillText(y >= 1e6 ? y.toExponential(0) : XP.fmtNum(y), 18, py(y) + 4);
    });
    var xTitle = 'operational intensity (FLOP/byte)';
    g.fillText(xTitle, (w - g.measureText(xTitle).width) / 2, h - 4);
    var yTitle = 'FLOP rate (GFLOP/s)';
    g.save();
    g.translate(11, padT + (h - padT - padB) / 2 + g.measureText(yTitle).width / 2);
    g.rotate(-Math.PI / 2);
    g.fillText(yTitle, 0, 0);
    g.restore();
    c.canvas.dataset.ytitle = yTitle;
    c.canvas.dataset.xboxes = JSON.stringify(xboxes);
    var colors = ['#222', '#8a5a00', '#5a3d8a'];
    roofs.forEach(function (r, i) {
      var ridge = r.peak / r.bw;
      g.strokeStyle = colors[i % colors.length];
      g.lineWidth = 2;
      g.beginPath();
      g.moveTo(px(xlo), py(Math.max(ylo, r.bw * xlo)));
      g.lineTo(px(ridge), py(r.peak));
      g.lineTo(px(xhi), py(r.peak));
      g.stroke();
      g.lineWidth = 1;
      g.fillStyle = colors[i % colors.length];
      g.fillText(r.name + ' (ridge ' + XP.fmtNum(ridge) + ')', Math.max(padL + 4, px(ridge) - 60), py(r.peak) - 5 - 12 * i);
    });
    points.forEach(function (p) {
      g.fillStyle = p.color || '#4e79a7';
      g.beginPath(); g.arc(px(p.x), py(p.y), 4, 0, 2 * Math.PI); g.fill();
    });
    var tip = XP.el('div', { cls: 'chart-tip' });
    c.canvas.addEventListener('mousemove', function (ev) {
      var r = c.canvas.getBoundingClientRect();
      var mx = ev.clientX - r.left, my = ev.clientY - r.top;
      var best = null, bestD = 100;
      points.forEach(function (p) {
        var d = Math.pow(px(p.x) - mx, 2) + Math.pow(py(p.y) - my, 2);
        if (d < bestD) { bestD = d; best = p; }
      });
      tip.textContent = best ? best.name + ' · ' + XP.fmtNum(best.x) + ' FLOP/byte · ' + XP.fmtNum(best.y) + ' GFLOP/s' + (best.note ? ' · ' + best.note : '') : '';
    });
    c.canvas.dataset.points = String(points.length);
    if (opts.legend) box.appendChild(legendOf(opts.legend));
    box.appendChild(tip);
    return c.canvas;
  };
})();
