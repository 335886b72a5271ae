/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xprofs page, the Steps tab: where step time goes. steps.json (every
 * step and the regions in it) as a chart of the steps split into named
 * regions and unattributed time, and a table of the steps; regions.json
 * (per region name) as a table, largest self time first.
 */
'use strict';

(function () {
  var XP = window.XP;

  function hostLines(box, data) {
    (data.hosts || []).forEach(function (h) {
      var text = h.host + ': ' + (h.steps || 0) + ' steps' + (h.source && h.source !== 'none' ? ' (' + h.source + (h.step_names && h.step_names.length ? ': ' + h.step_names.join(', ') : '') + ')' : '');
      box.appendChild(XP.el('p', { cls: h.reason ? 'muted why' : 'small', text: text + (h.reason ? ' · ' + h.reason : '') }));
    });
  }

  async function steps(ctx, box) {
    var body = XP.section(box, 'steps', 'Steps', [XP.fileLink(ctx.run, 'steps.json'), XP.fileLink(ctx.run, 'steps.csv')]);
    var r = await XP.loadCached(body, XP.fileUrl(ctx.run, 'steps.json'), 'loading steps');
    if (!r.ok) return XP.unavailable(body, r.error);
    hostLines(body, r.data);
    var t = XP.toTable(r.data.rows || []);
    if (!t || !t.rows.length) return;
    var depth = XP.colIndex(t, 'depth');
    var top = { cols: t.cols, rows: t.rows.filter(function (row) { return row[depth] === 0; }), p: {} };
    body.dataset.steps = String(top.rows.length);
    var chart = XP.stepsChart(r.data.rows);
    if (chart) XP.barChart(body, chart, { title: 'Step time' + (chart.what ? ': ' + chart.what : '') + ' (' + (chart.unit || 'µs') + ')' });
    var want = ['host', 'thread', 'step_name', 'step_num', 'start_us', 'incl_us', 'self_us', 'children_union_us', 'unattributed_us'];
    body.appendChild(XP.el('h3', { text: 'Steps (depth 0)' }));
    XP.renderTable(body, top, { limit: 100, columns: want.map(function (id) { return XP.colIndex(t, id); }).filter(function (i) { return i >= 0; }) });
  }

  async function regions(ctx, box) {
    var body = XP.section(box, 'regions', 'Regions', [XP.fileLink(ctx.run, 'regions.json'), XP.fileLink(ctx.run, 'regions.csv')]);
    var r = await XP.loadCached(body, XP.fileUrl(ctx.run, 'regions.json'), 'loading regions');
    if (!r.ok) return XP.unavailable(body, r.error);
    var t = XP.toTable(r.data.rows || []);
    if (!t || !t.rows.length) return XP.note(body, 'no regions: ' + ((r.data.hosts || []).map(function (h) { return h.reason; }).filter(Boolean).join('; ') || 'no steps found'));
    var self = XP.colIndex(t, 'self_total_us');
    var share = XP.colIndex(t, 'share_of_step_time');
    var name = XP.colIndex(t, 'region');
    var best = t.rows.slice().sort(function (a, b) { return b[self] - a[self]; })[0];
    if (best && share >= 0) {
      body.appendChild(XP.el('p', { cls: 'statement answer' }, ['Most self time: ', XP.el('b', { text: String(best[name]) }), ' (',
        XP.num(best[self], 'regions.top.self_total_us', XP.fmtUs(best[self])), ', ', XP.fmtPct(100 * best[share]), ' of step time)']));
    }
    XP.renderTable(body, t, { limit: 100, sort: self >= 0 ? { col: self, desc: true } : null });
  }

  XP.views.steps = {
    render: async function (ctx, box) {
      var jobs = [];
      if (ctx.files.has('steps.json')) { var a = XP.el('div'); box.appendChild(a); jobs.push(XP.guarded(a, function () { return steps(ctx, a); })); }
      if (ctx.files.has('regions.json')) { var b = XP.el('div'); box.appendChild(b); jobs.push(XP.guarded(b, function () { return regions(ctx, b); })); }
      await Promise.all(jobs);
    }
  };
})();
