/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xprofs page, the Overview tab, laid out as XProf's overview page: the
 * performance summary (step time, its breakdown, GPU busy and idle), the
 * step-time graph, the top ops and kernels, the recommendation and the run
 * environment. Reads report.json (ours: the run on one page), and
 * overview_page.json for XProf's per-step graph, utilization and tips.
 */
'use strict';

(function () {
  var XP = window.XP;

  var BREAKDOWN = [['compute', 'Compute'], ['input', 'Input'], ['communication', 'Communication'], ['host', 'Host'], ['idle', 'Idle']];
  var STEP_STATS = [['mean', 'mean'], ['median', 'median'], ['p90', 'p90'], ['min', 'min'], ['max', 'max']];

  function kv(label, value) {
    return XP.el('div', { cls: 'kv' }, [XP.el('span', { cls: 'k', text: label }), XP.el('span', { cls: 'val' }, [value])]);
  }

  /* Text of XProf's HTML snippets (tips hold <a> tags): tags dropped. */
  function plain(html) {
    return String(html || '').replace(/<[^>]*>/g, '').replace(/&amp;/g, '&').replace(/&lt;/g, '<').replace(/&gt;/g, '>');
  }

  function stepTime(box, rep) {
    var st = rep.step_time_ms;
    var who = 'step_time_ms';
    if ((!st || !st.count) && Array.isArray(rep.annotations)) {
      /* PyTorch and Chrome traces: the steps found by annotation (µs). */
      var a = rep.annotations.find(function (x) { return x.incl_us && x.incl_us.count; });
      if (a) {
        st = {};
        Object.keys(a.incl_us).forEach(function (k) { st[k] = k === 'count' ? a.incl_us[k] : a.incl_us[k] / 1000; });
        who = 'annotations.' + rep.annotations.indexOf(a) + '.incl_us';
      }
    }
    var big = XP.el('div', { cls: 'big' });
    if (!st || !st.count) {
      big.appendChild(XP.el('span', { cls: 'muted', text: 'no steps measured' }));
      box.appendChild(kv('Average step time', big));
      return;
    }
    var scale = who === 'step_time_ms' ? 1 : 1000;
    big.appendChild(XP.num(st.mean * scale, who + '.mean', XP.fmtMs(st.mean)));
    box.appendChild(kv('Average step time', big));
    var stats = XP.el('div', { cls: 'stats' }, [XP.num(st.count, who + '.count', st.count + ' steps')]);
    STEP_STATS.slice(1).forEach(function (s) {
      if (typeof st[s[0]] === 'number') {
        stats.appendChild(document.createTextNode(' · ' + s[1] + ' '));
        stats.appendChild(XP.num(st[s[0]] * scale, who + '.' + s[0], XP.fmtMs(st[s[0]])));
      }
    });
    box.appendChild(stats);
    /* Two step counts can differ: XProf's step database (what XProf's
     * overview counts) and the steps the Steps tab finds by annotation. */
    box.appendChild(XP.el('div', { cls: 'muted small step-source', text: who === 'step_time_ms'
      ? 'steps as XProf counts them (its step database); the Steps tab counts the step annotations'
      : 'steps found by their annotations (steps.json), as the Steps tab shows them' }));
  }

  function breakdown(box, rep) {
    var b = rep.breakdown_ms;
    if (!b) return;
    var total = BREAKDOWN.reduce(function (s, k) { return s + (+b[k[0]] || 0); }, 0);
    if (!(total > 0)) return;
    var bar = XP.el('div', { cls: 'stackbar', role: 'img', 'aria-label': 'step time breakdown' });
    var list = XP.el('div', { cls: 'breakdown' });
    BREAKDOWN.forEach(function (k, i) {
      var v = +b[k[0]] || 0;
      var seg = XP.el('span', { cls: 'seg', title: k[1] + ': ' + XP.fmtMs(v) });
      seg.style.width = (100 * v / total) + '%';
      seg.style.background = XP.PALETTE[i];
      bar.appendChild(seg);
      var sw = XP.el('span', { cls: 'swatch' });
      sw.style.background = XP.PALETTE[i];
      list.appendChild(XP.el('div', { cls: 'kv' }, [
        XP.el('span', { cls: 'k' }, [sw, k[1]]),
        XP.el('span', { cls: 'val' }, [XP.num(v, 'breakdown_ms.' + k[0], XP.fmtMs(v)), XP.el('span', { cls: 'muted', text: ' ' + XP.fmtPct(100 * v / total) })])
      ]));
    });
    box.appendChild(XP.el('h3', { text: 'Step time breakdown' }));
    box.appendChild(bar);
    box.appendChild(list);
  }

  /* XProf's utilization numbers: the custom properties of the analysis table. */
  function utilization(box, ov) {
    var p = ov && ov[0] && ov[0].p;
    if (!p) return;
    var rows = [
      ['device_compute_16bit_percent', '16-bit device compute'], ['device_compute_32bit_percent', '32-bit device compute'],
      ['host_tf_op_percent', 'Op time on host'], ['device_tf_op_percent', 'Op time on device'],
      ['host_op_time_eager_percent', 'Host op time eager'], ['device_op_time_eager_percent', 'Device op time eager'],
      ['mxu_utilization_percent', 'MXU utilization'], ['hbm_utilization_percent', 'HBM utilization']
    ].filter(function (r) { return p[r[0]] !== undefined && p[r[0]] !== ''; });
    if (!rows.length) return;
    box.appendChild(XP.el('h3', { text: 'Utilization (XProf)' }));
    rows.forEach(function (r) { box.appendChild(kv(r[1], XP.el('span', { 'data-key': 'overview.' + r[0], text: String(p[r[0]]) }))); });
  }

  function gpus(box, rep) {
    if (!Array.isArray(rep.gpus) || !rep.gpus.length) return;
    box.appendChild(XP.el('h3', { text: 'GPUs: busy and idle' }));
    var list = XP.el('div', { cls: 'gpu-bars' });
    rep.gpus.forEach(function (g, i) {
      var total = (+g.busy_us || 0) + (+g.idle_us || 0);
      var bar = XP.el('div', { cls: 'stackbar small' });
      var busy = XP.el('span', { cls: 'seg', title: 'busy ' + XP.fmtUs(g.busy_us) });
      busy.style.width = (total > 0 ? 100 * g.busy_us / total : 0) + '%';
      busy.style.background = XP.PALETTE[0];
      var idle = XP.el('span', { cls: 'seg', title: 'idle ' + XP.fmtUs(g.idle_us) });
      idle.style.width = (total > 0 ? 100 * g.idle_us / total : 0) + '%';
      idle.style.background = '#d9dde3';
      bar.appendChild(busy);
      bar.appendChild(idle);
      list.appendChild(XP.el('div', { cls: 'gpu-row' }, [
        XP.el('span', { cls: 'k', text: (rep.hosts && rep.hosts.length > 1 ? g.host + ' ' : '') + g.device }),
        bar,
        XP.el('span', { cls: 'val' }, ['idle ', XP.num(g.idle_pct, 'gpus.' + i + '.idle_pct', XP.fmtPct(g.idle_pct)),
          ' · busy ', XP.num(g.busy_us, 'gpus.' + i + '.busy_us', XP.fmtUs(g.busy_us))])
      ]));
    });
    box.appendChild(list);
  }

  function topTable(box, list, title, id, definition) {
    if (!Array.isArray(list) || !list.length) return;
    var t = XP.toTable(list.slice(0, 10));
    if (!t) return;
    var wrap = XP.el('div', { id: id });
    wrap.appendChild(XP.el('h3', { text: title }));
    if (definition) wrap.appendChild(XP.el('p', { cls: 'muted small', text: definition }));
    XP.renderTable(wrap, t, { limit: 10 });
    box.appendChild(wrap);
  }

  function recommendation(box, rep, ov) {
    var b = rep.bottleneck || {};
    var lines = ['input_statement', 'kernel_launch_statement', 'all_other_statement', 'device_collectives_statement', 'recommendation']
      .map(function (k) { return [k, b[k]]; }).filter(function (x) { return x[1]; });
    if (b.input) box.appendChild(kv('Bottleneck', XP.el('b', { 'data-key': 'bottleneck.input', text: b.input })));
    lines.forEach(function (x) { box.appendChild(XP.el('p', { cls: 'statement', 'data-key': 'bottleneck.' + x[0], text: x[1] })); });
    var tips = ov && ov[3] && XP.toTable(ov[3]);
    if (tips && tips.rows.length) {
      var groups = {};
      tips.rows.forEach(function (r) { (groups[r[2] || r[0]] = groups[r[2] || r[0]] || []).push(plain(r[1])); });
      Object.keys(groups).forEach(function (g) {
        box.appendChild(XP.el('h3', { text: g }));
        box.appendChild(XP.el('ul', { cls: 'tips' }, groups[g].map(function (t) { return XP.el('li', { text: t }); })));
      });
    }
    if (!lines.length && !(tips && tips.rows.length)) XP.note(box, 'no recommendation in report.json');
  }

  function environment(box, rep, ov) {
    var p = ov && ov[2] && ov[2].p || {};
    var hosts = rep.hosts || [];
    box.appendChild(kv('Source', XP.el('span', { 'data-key': 'source', text: rep.source || '–' })));
    box.appendChild(kv('Hosts', XP.num(hosts.length, 'hosts.length', String(hosts.length))));
    if (hosts.length) box.appendChild(XP.el('div', { cls: 'hosts muted', text: hosts.join(', ') }));
    if (rep.device_type) box.appendChild(kv('Device type', XP.el('span', { 'data-key': 'device_type', text: rep.device_type })));
    if (typeof rep.device_cores === 'number') box.appendChild(kv('Device cores', XP.num(rep.device_cores, 'device_cores')));
    if (p.task_count) box.appendChild(kv('Tasks', XP.el('span', { text: String(p.task_count) })));
    if (p.is_training) box.appendChild(kv('Training', XP.el('span', { text: String(p.is_training) })));
  }

  async function stepGraph(ctx, box, ov) {
    var chart = ov ? XP.overviewStepsChart(ov) : null;
    var from = 'overview_page.json';
    if (!chart && ctx.files.has('steps.json')) {
      var s = await XP.loadCached(box, XP.fileUrl(ctx.run, 'steps.json'), 'loading steps');
      if (s.ok) { chart = XP.stepsChart(s.data); from = 'steps.json'; }
    }
    if (!chart) return XP.explain(ctx, box, 'steps.json', 'no steps in this run');
    box.dataset.from = from;
    if (chart.unit === 'µs') {
      /* one unit with the summary beside it: ms */
      chart.series.forEach(function (ser) { ser.values = ser.values.map(function (v) { return v / 1000; }); });
      chart.unit = 'ms';
    }
    box.dataset.unit = chart.unit || 'ms';
    XP.barChart(box, chart, { title: 'Per step' + (chart.what ? ', ' + chart.what : '') + ' (' + (chart.unit || 'ms') + ')' });
  }

  XP.views.overview = {
    render: async function (ctx, box) {
      var hasReport = ctx.files.has('report.json');
      var hasOv = ctx.files.has('overview_page.json');
      var repR = hasReport ? await XP.loadCached(box, XP.fileUrl(ctx.run, 'report.json'), 'loading report') : null;
      var ovR = hasOv ? await XP.loadCached(box, XP.fileUrl(ctx.run, 'overview_page.json'), 'loading overview') : null;
      var rep = repR && repR.ok ? repR.data : {};
      var ov = ovR && ovR.ok && Array.isArray(ovR.data) ? ovR.data : null;
      /* A fresh link for each header (a node has one place). */
      var repLink = function () { return hasReport ? XP.fileLink(ctx.run, 'report.json') : null; };
      var ovLink = function () { return hasOv ? XP.fileLink(ctx.run, 'overview_page.json') : null; };
      if (repR && !repR.ok) XP.unavailable(box, 'report.json: ' + repR.error);

      var grid = XP.el('div', { cls: 'grid2' });
      box.appendChild(grid);
      var sum = XP.section(grid, 'perf-summary', 'Performance summary', [repLink()]);
      stepTime(sum, rep);
      breakdown(sum, rep);
      gpus(sum, rep);
      utilization(sum, ov);
      var graph = XP.section(grid, 'step-graph', 'Step-time graph', [ovLink(), ctx.files.has('steps.json') ? XP.fileLink(ctx.run, 'steps.json') : null]);
      await stepGraph(ctx, graph, ov);

      var grid2 = XP.el('div', { cls: 'grid2' });
      box.appendChild(grid2);
      var top = XP.section(grid2, 'top-ops', 'Top 10 operations', [repLink()]);
      topTable(top, rep.top_ops, 'Ops', 'top-ops-table', rep.top_ops_definition);
      topTable(top, rep.top_kernels, 'Kernels', 'top-kernels-table', rep.top_kernels_definition);
      if (!(rep.top_ops || []).length && !(rep.top_kernels || []).length) XP.note(top, 'no ops in report.json');
      var env = XP.section(grid2, 'run-env', 'Run environment', [repLink(), ovLink()]);
      environment(env, rep, ov);

      var reco = XP.section(box, 'recommendation', 'Recommendation for next step', [repLink(), ovLink()]);
      recommendation(reco, rep, ov);
      if (Array.isArray(rep.warnings) && rep.warnings.length) {
        var w = XP.section(box, 'warnings', 'Warnings', [repLink()]);
        w.appendChild(XP.el('ul', { cls: 'warnings' }, rep.warnings.map(function (t) { return XP.el('li', { text: t }); })));
      }
    }
  };
})();
