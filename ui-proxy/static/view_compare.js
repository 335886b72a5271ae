/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xprofs page, the Compare tab: this run (B) against another run of the
 * mount (the base, A) from compare.json?base=A (docs/compare.md): the
 * verdict, step time of A and B side by side with the delta, the region
 * that changed most, then regions, ops, kernels and GPUs as tables, and
 * the warnings. The base is chosen in a list of the mount's runs (by
 * default the one whose name shares the longest prefix with this run's)
 * and kept in the fragment (?base=A), so the comparison can be shared.
 */
'use strict';

(function () {
  var XP = window.XP;
  var STATS = ['count', 'median', 'p90', 'mean', 'min', 'max'];

  /* The run of others whose name shares the longest prefix with run's (the first on ties). */
  XP.nearestRun = function (run, others) {
    var best = null;
    var bestLen = -1;
    others.forEach(function (o) {
      var n = 0;
      while (n < o.length && n < run.length && o[n] === run[n]) n++;
      if (n > bestLen) { best = o; bestLen = n; }
    });
    return best;
  };

  function usCell(v, key) {
    var td = XP.el('td', { cls: 'num' });
    if (typeof v === 'number') td.appendChild(XP.num(v, key, key.slice(-6) === '.count' ? String(v) : XP.fmtUs(v)));
    else td.textContent = '–';
    return td;
  }

  /* Step time of A and B side by side, one row per statistic. */
  function stepTable(st) {
    var rows = STATS.map(function (s) {
      var a = st.base ? st.base[s] : null;
      var b = st.run ? st.run[s] : null;
      var delta = typeof a === 'number' && typeof b === 'number' && s !== 'count' ? b - a : null;
      return XP.el('tr', {}, [XP.el('th', { text: s }), usCell(a, 'step_time_us.base.' + s), usCell(b, 'step_time_us.run.' + s),
        delta === null ? XP.el('td', { cls: 'num', text: '' }) : XP.el('td', { cls: 'num', text: (delta > 0 ? '+' : '') + XP.fmtUs(delta) })]);
    });
    return XP.el('table', { cls: 'data side-by-side', id: 'compare-steps' }, [
      XP.el('thead', {}, [XP.el('tr', {}, ['step time', 'A (base)', 'B (this run)', 'B − A'].map(function (h) { return XP.el('th', { text: h }); }))]),
      XP.el('tbody', {}, rows)]);
  }

  /* A table of one list of compare.json (regions, ops, kernels, gpus). */
  function listSection(box, id, title, list, csv, ctx, base) {
    var body = XP.section(box, id, title + ' (' + list.length + ')', [XP.fileLink(ctx.run, csv, { base: base })]);
    body.dataset.rows = String(list.length);
    if (!list.length) return XP.note(body, 'none in either run');
    XP.renderTable(body, XP.toTable(list), { limit: 50 });
    return body;
  }

  async function render(ctx, box) {
    var runsR = await XP.cachedJSON(XP.api('runs'));
    var others = runsR.ok && Array.isArray(runsR.data) ? runsR.data.filter(function (r) { return r !== ctx.run; }) : [];
    if (!others.length) return XP.note(box, 'compare: the mount holds no other run to compare with');
    var asked = ctx.params.get('base');
    var base = asked || XP.nearestRun(ctx.run, others);

    var pick = XP.el('select', { id: 'compare-base' }, others.map(function (o) { return XP.el('option', { value: o, text: o }); }));
    if (others.indexOf(base) >= 0) pick.value = base;
    pick.addEventListener('change', function () {
      XP.setHashParams({ base: pick.value });
      XP.showRun(ctx.run, 'compare', XP.readHash().params);
    });
    var swap = XP.el('a', { id: 'compare-swap', href: XP.makeHash(base, 'compare', { base: ctx.run }), text: 'swap A and B' });
    box.appendChild(XP.el('div', { cls: 'toolbar' }, [XP.el('label', {}, ['A (base) ', pick]),
      XP.el('span', {}, ['B (this run) ', XP.el('b', { text: ctx.run })]), swap]));
    if (!asked) XP.setHashParams({ base: base });

    var top = XP.section(box, 'compare', 'B against A', [XP.fileLink(ctx.run, 'compare.json', { base: base }), XP.fileLink(ctx.run, 'compare.md', { base: base })]);
    top.dataset.base = base;
    var r = await XP.loadCached(top, XP.fileUrl(ctx.run, 'compare.json', { base: base }), 'comparing with ' + base);
    if (!r.ok) {
      var reason = await XP.reasonFor(ctx.run, 'compare.json?base=' + base);
      top.dataset.state = 'error';
      return XP.note(top, reason || r.error, 'why');
    }
    var c = r.data;
    top.appendChild(XP.el('p', { cls: 'statement answer', id: 'compare-verdict', text: c.verdict || '' }));
    var heads = XP.el('div', { cls: 'compare-heads' }, [
      XP.el('div', { cls: 'card' }, [XP.el('dt', { text: 'A (base)' }), XP.el('dd', {}, [XP.el('a', { href: XP.makeHash(c.base), text: c.base })]),
        XP.el('dd', { cls: 'muted small', text: (c.base_source || '') + (c.base_step_name ? ' · steps: ' + c.base_step_name : '') })]),
      XP.el('div', { cls: 'card' }, [XP.el('dt', { text: 'B (this run)' }), XP.el('dd', { text: c.run }),
        XP.el('dd', { cls: 'muted small', text: (c.source || '') + (c.step_name ? ' · steps: ' + c.step_name : '') })])]);
    top.appendChild(heads);
    var st = c.step_time_us || {};
    top.appendChild(stepTable(st));
    if (c.test && c.test.tested) {
      top.appendChild(XP.el('p', { cls: 'small' }, [c.test.name + ': p = ', XP.num(c.test.p_value, 'test.p_value'),
        c.test.significant ? ' (significant)' : ' (not significant)']));
    }
    var m = c.region_changed_most;
    if (m) {
      top.appendChild(XP.el('p', { cls: 'statement' }, ['Region that changed most: ', XP.el('b', { text: m.region }), ', self time per step ',
        XP.num(m.base_self_per_step_us, 'region_changed_most.base_self_per_step_us', XP.fmtUs(m.base_self_per_step_us)), ' → ',
        XP.num(m.self_per_step_us, 'region_changed_most.self_per_step_us', XP.fmtUs(m.self_per_step_us)),
        typeof m.share_of_step_change === 'number' ? ' (' + XP.fmtPct(100 * m.share_of_step_change) + ' of the step-time change)' : '']));
    }
    if ((c.warnings || []).length) {
      top.appendChild(XP.el('h3', { text: 'Warnings' }));
      top.appendChild(XP.el('ul', { id: 'compare-warnings' }, c.warnings.map(function (w) { return XP.el('li', { text: w }); })));
    }
    top.dataset.state = 'ready';
    listSection(box, 'compare-regions', 'Regions', c.regions || [], 'compare_steps.csv', ctx, base);
    listSection(box, 'compare-ops', 'Ops', c.ops || [], 'compare_ops.csv', ctx, base);
    listSection(box, 'compare-kernels', 'Kernels', c.kernels || [], 'compare_kernels.csv', ctx, base);
    listSection(box, 'compare-gpus', 'GPUs', c.gpus || [], 'compare_gpu_timeline.csv', ctx, base);
  }

  XP.views.compare = { render: render };
})();
