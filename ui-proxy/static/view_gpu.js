/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xprofs page, the GPU tab: gpu_devices.csv (one row per GPU: computation,
 * exposed communication and memcpy, idle) as stacked bars and a table;
 * TraceLens's kernel launcher tables (kernel_launchers_summary.csv, by
 * category, kernel_launchers.csv), gpu_events_averages.csv, xla_summary.csv.
 */
'use strict';

(function () {
  var XP = window.XP;
  var PARTS = [['computation_ms', 'computation'], ['exposed_comm_ms', 'exposed communication'], ['exposed_memcpy_ms', 'exposed memcpy'], ['idle_ms', 'idle']];

  async function csvTable(ctx, box, id, name, title, opts) {
    var body = XP.section(box, id, title, [XP.fileLink(ctx.run, name)]);
    var r = await XP.loadText(body, XP.fileUrl(ctx.run, name), 'loading ' + name);
    if (!r.ok) return XP.unavailable(body, r.error);
    var t = XP.parseCSV(r.text);
    if (!t || !t.rows.length) return XP.explain(ctx, body, name, name + ' has only its header');
    body.dataset.rows = String(t.rows.length);
    if (opts && opts.before) opts.before(body, t);
    XP.renderTable(body, t, { limit: (opts && opts.limit) || 50 });
  }

  function deviceBars(body, t) {
    var host = XP.colIndex(t, 'host'), dev = XP.colIndex(t, 'device');
    var hosts = new Set(t.rows.map(function (r) { return r[host]; }));
    XP.barChart(body, {
      labels: t.rows.map(function (r) { return (hosts.size > 1 ? r[host] + ' ' : '') + r[dev]; }),
      unit: 'ms',
      series: PARTS.map(function (p) {
        var i = XP.colIndex(t, p[0]);
        return { name: p[1], values: t.rows.map(function (r) { return i >= 0 ? +r[i] || 0 : 0; }) };
      })
    }, { horizontal: true, title: 'Time per GPU (ms)' });
  }

  XP.views.gpu = {
    render: async function (ctx, box) {
      var list = [
        ['gpu-devices', 'gpu_devices.csv', 'GPUs', { before: deviceBars, limit: 200 }],
        ['gpu-averages', 'gpu_events_averages.csv', 'Mean over GPUs'],
        ['launchers-summary', 'kernel_launchers_summary.csv', 'Kernel launchers: GPU time per host op'],
        ['launchers-category', 'kernel_launchers_summary_by_category.csv', 'Kernel launchers by category'],
        ['launchers', 'kernel_launchers.csv', 'Kernel launchers'],
        ['xla-summary', 'xla_summary.csv', 'XLA kernels (TraceLens)']
      ].filter(function (x) { return ctx.files.has(x[1]); });
      await Promise.all(list.map(function (x) {
        var slot = XP.el('div');
        box.appendChild(slot);
        return XP.guarded(slot, function () { return csvTable(ctx, slot, x[0], x[1], x[2], x[3]); });
      }));
    }
  };
})();
