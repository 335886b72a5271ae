/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xprofs page, one run (#/run/<run>/<tab>): the header with the run's
 * tabs, shown only when the run has a file the tab reads, and the tab's
 * view (XP.views[tab], one view_*.js file each). Answers are cached per
 * URL so moving between tabs asks the server again only for new files.
 */
'use strict';

(function () {
  var XP = window.XP;

  /* The tabs, in order, and the files that make each worth showing. */
  XP.TABS = [
    { id: 'overview', title: 'Overview', files: ['report.json', 'overview_page.json'] },
    { id: 'ops', title: 'Op profile', files: ['op_profile.json', 'hlo_stats.json', 'roofline_model.json', 'framework_op_stats.json', 'kernel_stats.json'] },
    { id: 'trace', title: 'Trace', files: ['trace_viewer.json'] },
    { id: 'steps', title: 'Steps', files: ['steps.json', 'regions.json'] },
    { id: 'gpu', title: 'GPU', files: ['gpu_devices.csv', 'kernel_launchers_summary.csv'] },
    { id: 'pytorch', title: 'PyTorch', files: ['modules.txt', 'call_tree.txt', 'roofline.csv'] },
    { id: 'memory', title: 'Memory', files: ['memory_profile.json', 'memory_viewer.json'] },
    { id: 'compare', title: 'Compare', files: ['steps.json', 'regions.json'], otherRun: true },
    { id: 'files', title: 'Files', files: [] }
  ];
  XP.views = XP.views || {};

  /* The tabs a run with these files has, in a mount of nruns runs (Compare needs two). */
  XP.tabsOf = function (files, nruns) {
    return XP.TABS.filter(function (t) {
      if (t.otherRun && !(nruns > 1)) return false;
      return !t.files.length || t.files.some(function (f) { return files.has(f); });
    });
  };

  var cache = new Map();

  /* XP.getJSON, remembered per URL (failures are not remembered). */
  XP.cachedJSON = async function (url, progress) {
    if (cache.has(url)) return cache.get(url);
    var r = await XP.getJSON(url, progress);
    if (r.ok) cache.set(url, r);
    return r;
  };

  /* Loads url as JSON into box with a progress line, through the cache. */
  XP.loadCached = async function (box, url, label) {
    if (cache.has(url)) return cache.get(url);
    var p = new XP.Progress(box, label);
    var r = await XP.cachedJSON(url, function (n) { p.update(n); });
    p.remove();
    return r;
  };

  /* Loads url as text (CSV, .txt) into box with a progress line, through the cache. */
  XP.loadText = async function (box, url, label) {
    if (cache.has(url)) return cache.get(url);
    var p = new XP.Progress(box, label);
    var r = await XP.get(url, function (n) { p.update(n); });
    p.remove();
    if (r.ok) cache.set(url, r);
    return r;
  };

  XP.setCrumb = function (run, tab) {
    var c = document.getElementById('crumb');
    c.textContent = '';
    if (run) c.appendChild(XP.el('a', { href: XP.makeHash(run), text: ' / ' + run }));
    document.title = run ? run + (tab ? ' · ' + tab : '') + ' · xprofs' : 'xprofs';
  };

  /* A panel in parent: a title, links to the files it reads, a body (returned). */
  XP.section = function (parent, id, title, links) {
    var head = XP.el('h2', {}, [XP.el('span', { text: title })]);
    (links || []).forEach(function (a) { if (a) head.appendChild(a); });
    var body = XP.el('div', { cls: 'section-body' });
    var box = XP.el('section', { id: id, cls: 'panel' }, [head, body]);
    parent.appendChild(box);
    return body;
  };

  /*
   * Says in one line why file has nothing to show: the reason from
   * errors.txt when the mount wrote one, else fallback.
   */
  XP.explain = async function (ctx, box, name, fallback) {
    var reason = await XP.reasonFor(ctx.run, name);
    return XP.note(box, reason || fallback || (name + ': not in this run'), 'why');
  };

  /* Runs f, showing a failure inside box instead of throwing. */
  XP.guarded = async function (box, f) {
    try {
      return await f();
    } catch (e) {
      XP.unavailable(box, 'error: ' + (e && e.message || e));
      if (window.console) console.info('xprofs view error', e);
      return null;
    }
  };

  function tabBar(run, tabs, current) {
    return XP.el('nav', { cls: 'tabs', id: 'tabs' }, tabs.map(function (t) {
      var a = XP.el('a', { href: XP.makeHash(run, t.id), text: t.title, 'data-tab': t.id, cls: 'tab' });
      if (t.id === current) { a.classList.add('active'); a.setAttribute('aria-current', 'page'); }
      return a;
    }));
  }

  /* The Files tab: every file of the run, each a link. */
  XP.views.files = {
    render: async function (ctx, box) {
      var body = XP.section(box, 'files-section', 'Files of the run', [XP.el('a', { cls: 'raw', href: XP.api('run_files', { run: ctx.run }), target: '_blank', text: '/run_files' })]);
      var list = XP.el('ul', { cls: 'file-list' });
      ctx.fileList.forEach(function (name) {
        var url = XP.fileUrl(ctx.run, name);
        list.appendChild(XP.el('li', {}, [url ? XP.el('a', { href: url, target: '_blank', text: name }) : XP.el('span', { cls: 'muted', text: name })]));
      });
      body.appendChild(list);
      body.appendChild(XP.el('p', { cls: 'muted', text: 'Options go after ? as in the mount (README): e.g. trace_viewer.json?start_time_ms=1&end_time_ms=2.' }));
    }
  };

  XP.showRun = async function (run, tab, params) {
    var main = document.getElementById('main');
    main.textContent = '';
    var r = await XP.loadCached(main, XP.api('run_files', { run: run }), 'loading run');
    if (!r.ok) {
      XP.setCrumb(run, null);
      XP.unavailable(main, r.error);
      return;
    }
    var files = new Set(r.data);
    var runsR = await XP.cachedJSON(XP.api('runs'));
    var tabs = XP.tabsOf(files, runsR.ok && Array.isArray(runsR.data) ? runsR.data.length : 0);
    var cur = tabs.find(function (t) { return t.id === tab; }) || tabs[0];
    XP.setCrumb(run, cur.title);
    main.appendChild(tabBar(run, tabs, cur.id));
    var box = XP.el('div', { cls: 'view', id: 'view-' + cur.id });
    main.appendChild(box);
    var ctx = { run: run, tab: cur.id, files: files, fileList: r.data, params: params, tabs: tabs };
    var view = XP.views[cur.id];
    if (!view) XP.note(box, 'this view is not in this build');
    else await XP.guarded(box, function () { return view.render(ctx, box); });
    if (XP.readHash().run === run) {
      document.body.dataset.tab = cur.id;
      document.body.dataset.loaded = run;
      /* when the view became usable, for contrib/bench/page_paint.py */
      if (window.performance && performance.mark) performance.mark('xprofs-loaded:' + cur.id);
    }
  };
})();
