/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xprofs page, the Op profile tab: op_profile.json as a collapsible tree
 * (group by program, category or provenance; idle time in or out) with
 * time and FLOP-rate bars; hlo_stats.json as a sortable, filterable table
 * whose rows show their HLO text when clicked; the roofline of
 * roofline_model.json (log axes, the device's roofs); the framework op and
 * kernel tables.
 */
'use strict';

(function () {
  var XP = window.XP;
  var GROUPS = ['program', 'category', 'provenance'];
  var GIB_PER_GB = 1.073741824; /* roofline_model's bandwidths are GiB/s, its ridge points use GB/s */

  function cap(s) { return s.charAt(0).toUpperCase() + s.slice(1); }

  async function opProfile(ctx, box) {
    var p = ctx.params;
    var group = GROUPS.indexOf(p.get('group')) >= 0 ? p.get('group') : 'program';
    var withIdle = p.get('idle') === '1';
    var params = group === 'program' ? null : { group_by: group };
    var links = [XP.fileLink(ctx.run, 'op_profile.json', params)];
    box.textContent = '';
    var body = XP.section(box, 'op-profile', 'Op profile', links);
    var groupSel = XP.el('select', { id: 'op-group' }, GROUPS.map(function (g) { return XP.el('option', { value: g, text: g }); }));
    groupSel.value = group;
    var idleBox = XP.el('input', { type: 'checkbox', id: 'op-idle' });
    idleBox.checked = withIdle;
    var redraw = function () {
      XP.setHashParams({ group: groupSel.value === 'program' ? null : groupSel.value, idle: idleBox.checked ? '1' : null });
      ctx.params = XP.readHash().params;
      XP.guarded(box, function () { return opProfile(ctx, box); });
    };
    groupSel.addEventListener('change', redraw);
    idleBox.addEventListener('change', redraw);
    body.appendChild(XP.el('div', { cls: 'toolbar' }, [XP.el('label', {}, ['Group by ', groupSel]), XP.el('label', {}, [idleBox, 'include idle time'])]));
    var r = await XP.loadCached(body, XP.fileUrl(ctx.run, 'op_profile.json', params), 'loading op profile');
    if (!r.ok) return XP.unavailable(body, r.error);
    var key = 'by' + cap(group) + (withIdle ? '' : 'ExcludeIdle');
    var root = r.data[key];
    if (!root) return XP.note(body, 'op_profile.json has no ' + key);
    var total = root.metrics && +root.metrics.rawTime || 0;
    body.dataset.key = key;
    body.appendChild(XP.el('p', { cls: 'muted small', text: (r.data.deviceType || '') + ' · ' + XP.fmtUs(total / 1e6) + ' in ' + (root.children || []).length + ' groups; bars: share of the time, FLOP rate as a share of the peak; click a row for its HLO' }));
    var detail = XP.el('pre', { cls: 'code', id: 'op-detail', hidden: 'hidden' });
    XP.renderTree(body, root, {
      children: function (n) { return n.children || []; },
      name: function (n) { return n.name || '(unnamed)'; },
      open: 2,
      columns: [
        { title: 'Time', cell: function (n) { var t = n.metrics ? +n.metrics.rawTime || 0 : 0; return XP.el('span', { cls: 'num', 'data-v': String(t), text: XP.fmtUs(t / 1e6) }); } },
        { title: 'Share of time', cell: function (n) { var t = n.metrics ? +n.metrics.rawTime || 0 : 0; var f = total ? t / total : 0; return XP.el('div', { cls: 'barcell' }, [XP.bar(f, '', XP.fmtPct(100 * f)), XP.el('span', { cls: 'small', text: XP.fmtPct(100 * f) })]); } },
        { title: 'FLOP rate', cell: function (n) { var f = n.metrics ? +n.metrics.flops || 0 : 0; return XP.el('div', { cls: 'barcell' }, [XP.bar(f, 'flops', XP.fmtPct(100 * f) + ' of peak'), XP.el('span', { cls: 'small', text: XP.fmtPct(100 * f) })]); } }
      ],
      onPick: function (n) {
        var x = n.xla;
        detail.hidden = !x;
        if (x) detail.textContent = [x.expression, x.category && 'category: ' + x.category, x.provenance && 'provenance: ' + x.provenance,
          x.sourceInfo && x.sourceInfo.fileName ? 'source: ' + x.sourceInfo.fileName + ':' + x.sourceInfo.lineNumber : ''].filter(Boolean).join('\n');
      }
    });
    body.appendChild(detail);
  }

  /* The source line of hlo_stats' source_info cell (an HTML snippet). */
  function sourceText(html) {
    var m = /title='([^']*)'/.exec(String(html || ''));
    return m ? m[1] : String(html || '').replace(/<[^>]*>/g, '');
  }

  async function hloStats(ctx, box) {
    var body = XP.section(box, 'hlo-stats', 'HLO op stats', [XP.fileLink(ctx.run, 'hlo_stats.json'), XP.fileLink(ctx.run, 'hlo_stats.csv')]);
    var r = await XP.loadCached(body, XP.fileUrl(ctx.run, 'hlo_stats.json'), 'loading HLO stats');
    if (!r.ok) return XP.unavailable(body, r.error);
    var t = XP.toTable(r.data);
    if (!t || !t.rows.length) return XP.explain(ctx, body, 'hlo_stats.json', 'no HLO ops in this run');
    var want = ['rank', 'program_id', 'category', 'hlo_op_name', 'tf_op_name', 'occurrences', 'total_time', 'avg_time', 'total_self_time',
      'total_self_time_percent', 'model_flop_rate', 'measured_memory_bw', 'operational_intensity', 'bound_by'];
    var cols = want.map(function (id) { return XP.colIndex(t, id); }).filter(function (i) { return i >= 0; });
    var text = XP.colIndex(t, 'hlo_op_expression');
    var src = XP.colIndex(t, 'source_info');
    var self = XP.colIndex(t, 'total_self_time');
    var detail = XP.el('pre', { cls: 'code', id: 'hlo-text' });
    detail.textContent = 'Click a row for its HLO text.';
    /* sort and filter in the fragment: hsort=<column id>, hdesc=0|1, hfilter= */
    var hp = ctx.params || XP.readHash().params;
    var sortCol = hp.get('hsort') ? XP.colIndex(t, hp.get('hsort')) : -1;
    var sort = sortCol >= 0 ? { col: sortCol, desc: hp.get('hdesc') !== '0' } : self >= 0 ? { col: self, desc: true } : null;
    body.dataset.sort = sort ? t.cols[sort.col].id : '';
    XP.renderTable(body, t, {
      limit: 100, columns: cols.length ? cols : null, sort: sort, filter: hp.get('hfilter') || '',
      onState: function (st) {
        body.dataset.sort = st.col >= 0 ? t.cols[st.col].id : '';
        XP.setHashParams({ hsort: st.col >= 0 ? t.cols[st.col].id : null, hdesc: st.col >= 0 ? (st.desc ? '1' : '0') : null,
          hfilter: st.filter || null });
      },
      onRow: function (row) {
        detail.textContent = (text >= 0 ? row[text] : '') + (src >= 0 && row[src] ? '\n\nsource: ' + sourceText(row[src]) : '');
      }
    });
    body.appendChild(detail);
  }

  async function roofline(ctx, box) {
    var body = XP.section(box, 'roofline', 'Roofline', [XP.fileLink(ctx.run, 'roofline_model.json'), XP.fileLink(ctx.run, 'roofline_model.csv')]);
    var r = await XP.loadCached(body, XP.fileUrl(ctx.run, 'roofline_model.json'), 'loading roofline');
    if (!r.ok) return XP.unavailable(body, r.error);
    var tables = Array.isArray(r.data) ? r.data : [r.data];
    var t = XP.toTable(tables[0]);
    if (!t || !t.rows.length) return XP.explain(ctx, body, 'roofline_model.json', 'no ops in the roofline');
    var p = t.p || {};
    var c = function (id) { return XP.colIndex(t, id); };
    var rows = t.rows.filter(function (row) {
      return row[c('step')] === 'Total' && row[c('include_infeed_outfeed')] !== false && row[c('category')] !== 'Program';
    });
    var points = [];
    var left = 0;
    rows.forEach(function (row) {
      var x = +row[c('operational_intensity')], y = +row[c('measured_flop_rate')];
      if (x > 0 && y > 0) {
        points.push({ x: x, y: y, name: row[c('operation')], note: row[c('bound_by')] + '-bound', color: row[c('bound_by')] === 'Compute' ? '#e15759' : '#4e79a7' });
      } else {
        left++;
      }
    });
    var roofs = [];
    var peak = +p.peak_flop_rate;
    if (peak > 0 && +p.peak_hbm_bw > 0) roofs.push({ name: 'HBM', bw: +p.peak_hbm_bw * GIB_PER_GB, peak: peak });
    if (peak > 0 && +p.peak_vmem_write_bw > 0) roofs.push({ name: 'VMEM write', bw: +p.peak_vmem_write_bw * GIB_PER_GB, peak: peak });
    body.appendChild(XP.el('p', { cls: 'muted small', text: (p.device_type || '') + ' · peak ' + XP.fmtNum(peak) + ' GFLOP/s, HBM ' + XP.fmtNum(+p.peak_hbm_bw) + ' GiB/s · ' +
      points.length + ' ops drawn' + (left ? ', ' + left + ' without FLOPs or bytes left out (log axes)' : '') }));
    if (points.length && roofs.length) {
      XP.rooflineChart(body, points, roofs, { legend: [{ name: 'memory-bound', color: '#4e79a7' }, { name: 'compute-bound', color: '#e15759' }] });
    }
    var shown = ['rank', 'category', 'operation', 'occurrences', 'total_self_time', 'measured_flop_rate', 'measured_memory_bw', 'operational_intensity', 'bound_by', 'roofline_efficiency']
      .map(c).filter(function (i) { return i >= 0; });
    XP.renderTable(body, { cols: t.cols, rows: rows, p: p }, { limit: 50, columns: shown });
    var diag = tables[1] && XP.toTable(tables[1]);
    if (diag && diag.rows.length) body.appendChild(XP.el('ul', { cls: 'warnings' }, diag.rows.map(function (d) { return XP.el('li', { text: d.join(': ') }); })));
  }

  async function plainTable(ctx, box, id, name, title) {
    var body = XP.section(box, id, title, [XP.fileLink(ctx.run, name)]);
    var r = await XP.loadCached(body, XP.fileUrl(ctx.run, name), 'loading ' + name);
    if (!r.ok) return XP.unavailable(body, r.error);
    var data = Array.isArray(r.data) && XP.isDataTable(r.data[0]) ? r.data[0] : r.data;
    var t = XP.toTable(data);
    if (!t || !t.rows.length) return XP.explain(ctx, body, name, 'no rows');
    XP.renderTable(body, t, { limit: 50 });
  }

  XP.views.ops = {
    render: async function (ctx, box) {
      var f = ctx.files;
      var jobs = [];
      var slot = function () { var d = XP.el('div'); box.appendChild(d); return d; };
      if (f.has('op_profile.json')) { var a = slot(); jobs.push(XP.guarded(a, function () { return opProfile(ctx, a); })); }
      if (f.has('hlo_stats.json')) { var b = slot(); jobs.push(XP.guarded(b, function () { return hloStats(ctx, b); })); }
      if (f.has('roofline_model.json')) { var c = slot(); jobs.push(XP.guarded(c, function () { return roofline(ctx, c); })); }
      if (f.has('framework_op_stats.json')) { var d = slot(); jobs.push(XP.guarded(d, function () { return plainTable(ctx, d, 'framework-op-stats', 'framework_op_stats.json', 'Framework op stats'); })); }
      if (f.has('kernel_stats.json')) { var e = slot(); jobs.push(XP.guarded(e, function () { return plainTable(ctx, e, 'kernel-stats', 'kernel_stats.json', 'Kernel stats'); })); }
      await Promise.all(jobs);
    }
  };
})();
