/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xprofs page, the runs page (#/): every run of the mount with a search
 * box, its host and device counts, profile span, device type and what it
 * offers (the page's views, XProf's tools). Reads /runs, then per run, four
 * at a time: /run_files, /run_tools, report.json and summary.json.
 */
'use strict';

(function () {
  var XP = window.XP;

  /* Devices: the /device: planes of summary.json, else report.json's GPUs. */
  function deviceCount(summary, report) {
    var n = 0;
    if (summary && Array.isArray(summary.hosts)) {
      summary.hosts.forEach(function (h) {
        (h.planes || []).forEach(function (p) { if (/^\/device:/.test(p.name)) n++; });
      });
    }
    if (!n && report && Array.isArray(report.gpus)) return { n: report.gpus.length, merged: true };
    return { n: n, merged: false };
  }

  async function fillRow(it) {
    var files = await XP.cachedJSON(XP.api('run_files', { run: it.run }));
    var tools = await XP.getJSON(XP.api('run_tools', { run: it.run }));
    it.tools.textContent = !tools.ok || !Array.isArray(tools.data) ? 'tools not available' :
      tools.data.length ? tools.data.join(' · ') : 'no XProf tools';
    if (!files.ok) {
      it.offers.textContent = 'files not available';
      return;
    }
    var set = new Set(files.data);
    it.offers.textContent = '';
    XP.tabsOf(set, it.nruns).forEach(function (tab) {
      it.offers.appendChild(XP.el('a', { cls: 'chip', href: XP.makeHash(it.run, tab.id), text: tab.title }));
    });
    var report = set.has('report.json') ? await XP.cachedJSON(XP.fileUrl(it.run, 'report.json')) : null;
    var summary = set.has('summary.json') ? await XP.cachedJSON(XP.fileUrl(it.run, 'summary.json')) : null;
    var rep = report && report.ok ? report.data : null;
    var sum = summary && summary.ok ? summary.data : null;
    var hosts = sum && Array.isArray(sum.hosts) ? sum.hosts.length : rep && Array.isArray(rep.hosts) ? rep.hosts.length : null;
    it.hosts.appendChild(hosts === null ? document.createTextNode('–') : XP.num(hosts, 'hosts'));
    var dev = deviceCount(sum, rep);
    it.devices.appendChild(XP.num(dev.n, 'devices', dev.merged ? dev.n + ' (merged)' : String(dev.n)));
    if (rep && rep.device_type) it.devices.appendChild(XP.el('span', { cls: 'muted', text: ' ' + rep.device_type }));
    if (sum && typeof sum.duration_ps === 'number') it.span.appendChild(XP.num(sum.duration_ps, 'duration_ps', XP.fmtUs(sum.duration_ps / 1e6)));
    else it.span.textContent = '–';
    var src = rep && rep.source ? rep.source : '';
    it.li.dataset.source = src;
    it.li.dataset.searchText = (it.run + ' ' + src + ' ' + (rep && rep.device_type || '') + ' ' + it.tools.textContent).toLowerCase();
  }

  XP.showRuns = async function (params) {
    var main = document.getElementById('main');
    XP.setCrumb(null, null);
    main.textContent = '';
    var body = XP.section(main, 'runs-section', 'Runs', [XP.el('a', { cls: 'raw', href: '/runs', target: '_blank', text: '/runs' })]);
    var r = await XP.loadInto(body, XP.api('runs'), 'loading runs');
    if (!r.ok) return XP.unavailable(body, r.error);
    if (!Array.isArray(r.data) || !r.data.length) {
      body.appendChild(XP.el('p', { cls: 'muted', id: 'no-runs', text: 'No runs in the mount yet.' }));
      return;
    }
    var search = XP.el('input', { type: 'search', id: 'run-search', cls: 'filter', placeholder: 'search runs (name, device, tools)' });
    var count = XP.el('span', { cls: 'muted', id: 'run-count' });
    var tbody = XP.el('tbody');
    var table = XP.el('table', { cls: 'data runs', id: 'runs' }, [
      XP.el('thead', {}, [XP.el('tr', {}, ['Run', 'Hosts', 'Devices', 'Span', 'Views', 'XProf tools'].map(function (h) {
        return XP.el('th', { text: h });
      }))]), tbody]);
    var items = r.data.map(function (run) {
      var it = {
        run: run,
        nruns: r.data.length,
        hosts: XP.el('td', { cls: 'num hosts' }),
        devices: XP.el('td', { cls: 'devices' }),
        span: XP.el('td', { cls: 'num span' }),
        offers: XP.el('td', { cls: 'offers' }),
        tools: XP.el('span', { cls: 'tools muted' })
      };
      it.li = XP.el('tr', { cls: 'run', 'data-run': run }, [
        XP.el('td', {}, [XP.el('a', { cls: 'run-link', href: XP.makeHash(run), text: String(run) })]),
        it.hosts, it.devices, it.span, it.offers, XP.el('td', {}, [it.tools])
      ]);
      it.li.dataset.searchText = String(run).toLowerCase();
      tbody.appendChild(it.li);
      return it;
    });
    function applySearch() {
      var words = search.value.toLowerCase().split(/\s+/).filter(Boolean);
      var shown = 0;
      items.forEach(function (it) {
        var ok = words.every(function (w) { return it.li.dataset.searchText.indexOf(w) >= 0; });
        it.li.hidden = !ok;
        if (ok) shown++;
      });
      count.textContent = shown + ' of ' + items.length + ' runs';
    }
    search.value = params.get('q') || '';
    search.addEventListener('input', function () { applySearch(); XP.setHashParams({ q: search.value }); });
    body.appendChild(XP.el('div', { cls: 'toolbar' }, [search, count]));
    body.appendChild(XP.el('div', { cls: 'table-wrap tall' }, [table]));
    applySearch();
    await XP.pool(items.slice(0, 200), 4, async function (it) {
      try { await fillRow(it); } catch (e) { it.offers.textContent = 'error: ' + e.message; }
    });
    applySearch();
  };
})();
