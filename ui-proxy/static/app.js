/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xprofs page, the application: #/ lists the runs of the mount, #/run/<name>
 * shows one run (overview numbers, step times, GPU timeline, trace
 * timeline, HLO op and kernel tables). A file the run does not have is
 * shown as "not available" and never requested.
 */
'use strict';

var XP = window.XP = window.XP || {};

var main = function () { return document.getElementById('main'); };

function section(id, title, dataUrl) {
  var head = XP.el('h2', { text: title });
  if (dataUrl) head.appendChild(XP.el('a', { href: dataUrl, cls: 'raw', target: '_blank', text: 'JSON' }));
  var body = XP.el('div', { cls: 'section-body' });
  var box = XP.el('section', { id: id, cls: 'panel' }, [head, body]);
  main().appendChild(box);
  return body;
}

function setCrumb(run) {
  var c = document.getElementById('crumb');
  c.textContent = run ? ' / ' + run : '';
  document.title = run ? run + ' · xprofs' : 'xprofs';
}

/* The runs list. */
async function showRuns() {
  setCrumb(null);
  main().textContent = '';
  var body = section('runs-section', 'Runs');
  var r = await XP.loadInto(body, XP.api('runs'), 'loading runs');
  if (!r.ok) {
    XP.unavailable(body, r.error);
    return;
  }
  if (!Array.isArray(r.data) || !r.data.length) {
    body.appendChild(XP.el('p', { cls: 'muted', id: 'no-runs', text: 'No runs in the mount yet.' }));
    return;
  }
  var list = XP.el('ul', { id: 'runs' });
  var items = r.data.map(function (run) {
    var tools = XP.el('span', { cls: 'tools muted' });
    var li = XP.el('li', { cls: 'run' }, [
      XP.el('a', { cls: 'run-link', href: '#/run/' + encodeURIComponent(run), text: String(run) }), tools
    ]);
    list.appendChild(li);
    return { run: run, tools: tools };
  });
  body.appendChild(XP.el('p', { cls: 'muted', text: r.data.length + ' runs' }));
  body.appendChild(list);
  /* The tools of the first runs, four at a time. */
  var queue = items.slice(0, 100);
  var worker = async function () {
    while (queue.length) {
      var it = queue.shift();
      var t = await XP.getJSON(XP.api('run_tools', { run: it.run }));
      if (!t.ok || !Array.isArray(t.data)) it.tools.textContent = 'tools not available';
      else it.tools.textContent = t.data.length ? t.data.join(' · ') : 'no tools';
    }
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
}

function dataUrl(run, tag, extra) {
  return XP.api('data', Object.assign({ run: run, tag: tag }, extra || {}));
}

/* Overview: the custom properties of overview_page.json's tables. */
async function overview(run, body, files) {
  if (!files.has('overview_page.json')) return XP.unavailable(body);
  var r = await XP.loadInto(body, dataUrl(run, 'overview_page'), 'loading overview');
  if (!r.ok) return XP.unavailable(body, r.error);
  var tables = Array.isArray(r.data) ? r.data : [r.data];
  var titles = ['Analysis', 'Step time', 'Run environment', 'Recommendation'];
  var any = false;
  tables.slice(0, 4).forEach(function (t, i) {
    if (XP.isDataTable(t)) any = XP.renderProps(body, t.p, titles[i]) || any;
  });
  var diag = tables[6];
  if (XP.isDataTable(diag) && diag.rows.length) {
    body.appendChild(XP.el('h3', { text: 'Diagnostics' }));
    XP.renderTable(body, XP.toTable(diag), { limit: 20 });
    any = true;
  }
  if (!any) body.appendChild(XP.el('p', { cls: 'muted', text: 'no numbers in overview_page.json' }));
  return r.data;
}

/* Step times: steps.json, else the step table of the overview. */
async function steps(run, body, files, overviewData) {
  var chart = null;
  var table = null;
  var r = null;
  if (files.has('steps.json')) {
    r = await XP.loadInto(body, dataUrl(run, 'steps'), 'loading steps');
    if (r.ok) {
      chart = XP.stepsChart(r.data);
      table = XP.toTable(r.data);
    } else {
      XP.unavailable(body, r.error);
    }
  }
  if (!chart && overviewData) chart = XP.overviewStepsChart(await overviewData);
  if (r && r.ok && r.data && Array.isArray(r.data.hosts)) {
    r.data.hosts.forEach(function (h) {
      if (h && h.reason) body.appendChild(XP.el('p', { cls: 'muted', text: (h.host || '') + ': ' + h.reason }));
    });
  }
  if (chart) {
    XP.barChart(body, chart, {
      title: 'Step time' + (chart.what ? ': ' + chart.what : '') + (chart.unit ? ' (' + chart.unit + ')' : '')
    });
  }
  if (table && table.rows.length) XP.renderTable(body, table, { limit: 50 });
  if (!chart && !table) {
    if (files.has('steps.json')) body.appendChild(XP.el('p', { cls: 'muted', text: 'no steps found' }));
    else XP.unavailable(body);
  }
}

async function gpuTimeline(run, body, files) {
  if (!files.has('gpu_timeline.json')) return XP.unavailable(body);
  var r = await XP.loadInto(body, dataUrl(run, 'gpu_timeline'), 'loading GPU timeline');
  if (!r.ok) return XP.unavailable(body, r.error);
  var chart = XP.gpuChart(r.data);
  if (chart) XP.barChart(body, chart, { horizontal: true, title: 'Time per device (ms)' });
  var t = XP.toTable(r.data);
  if (t) XP.renderTable(body, t, { limit: 100 });
  else body.appendChild(XP.el('pre', { text: JSON.stringify(r.data, null, 1).slice(0, 4000) }));
}

async function opTable(run, body, files, tag, label) {
  if (!files.has(tag + '.json')) return XP.unavailable(body);
  var r = await XP.loadInto(body, dataUrl(run, tag), 'loading ' + label);
  if (!r.ok) return XP.unavailable(body, r.error);
  var data = Array.isArray(r.data) && XP.isDataTable(r.data[0]) ? r.data[0] : r.data;
  var t = XP.toTable(data);
  if (!t) return XP.unavailable(body, 'not a table');
  if (!t.rows.length) return body.appendChild(XP.el('p', { cls: 'muted', text: 'no rows' }));
  XP.renderTable(body, t, { limit: 100 });
}

function timeline(run, body, files) {
  if (!files.has('trace_viewer.json')) return XP.unavailable(body);
  var tl = new XP.Timeline(body, function (params) {
    return dataUrl(run, 'trace_viewer@', params);
  });
  return tl.load();
}

/* Runs f, showing a failure inside body instead of throwing. */
async function guarded(body, f) {
  try {
    return await f();
  } catch (e) {
    XP.unavailable(body, 'error: ' + (e && e.message || e));
    return null;
  }
}

async function showRun(run) {
  setCrumb(run);
  main().textContent = '';
  var filesBox = section('files-section', 'Files');
  var r = await XP.loadInto(filesBox, XP.api('run_files', { run: run }), 'loading run');
  if (!r.ok) {
    XP.unavailable(filesBox, r.error);
    return;
  }
  var files = new Set(r.data);
  filesBox.appendChild(XP.el('p', { cls: 'files muted', text: r.data.join('  ') }));
  var ov = section('overview', 'Overview', files.has('overview_page.json') ? dataUrl(run, 'overview_page') : null);
  var st = section('steps', 'Step time', files.has('steps.json') ? dataUrl(run, 'steps') : null);
  var gt = section('gpu-timeline', 'GPU timeline', files.has('gpu_timeline.json') ? dataUrl(run, 'gpu_timeline') : null);
  var tl = section('timeline', 'Timeline');
  var hl = section('hlo-stats', 'HLO ops', files.has('hlo_stats.json') ? dataUrl(run, 'hlo_stats') : null);
  var ks = section('kernel-stats', 'Kernels', files.has('kernel_stats.json') ? dataUrl(run, 'kernel_stats') : null);
  var ovData = guarded(ov, function () { return overview(run, ov, files); });
  await Promise.all([
    ovData,
    guarded(st, function () { return steps(run, st, files, ovData); }),
    guarded(gt, function () { return gpuTimeline(run, gt, files); }),
    guarded(tl, function () { return timeline(run, tl, files); }),
    guarded(hl, function () { return opTable(run, hl, files, 'hlo_stats', 'HLO ops'); }),
    guarded(ks, function () { return opTable(run, ks, files, 'kernel_stats', 'kernels'); })
  ]);
  document.body.dataset.loaded = run;
}

function route() {
  var h = location.hash || '#/';
  var m = /^#\/run\/(.+)$/.exec(h);
  document.body.dataset.loaded = '';
  var done = m ? showRun(decodeURIComponent(m[1])) : showRuns();
  done.then(function () {
    if (!m) document.body.dataset.loaded = 'runs';
  }, function (e) {
    main().appendChild(XP.el('p', { cls: 'muted na', text: 'error: ' + (e && e.message || e) }));
  });
}

window.addEventListener('hashchange', route);
route();
