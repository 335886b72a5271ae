/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xprofs page, the Memory tab: memory_profile.json (per allocator, the
 * heap, stack and fragmentation over time with the peak marked, and the
 * allocations live at the peak; ?host= in a run of several hosts) and
 * memory_viewer.json of a module of module_list.json (heap size over
 * program order with its peak, and the buffers live at the peak).
 */
'use strict';

(function () {
  var XP = window.XP;

  function kv(label, value) {
    return XP.el('div', { cls: 'kv' }, [XP.el('span', { cls: 'k', text: label }), XP.el('span', { cls: 'val' }, [value])]);
  }
  function bytesNum(v, key) { return XP.num(+v, key, XP.fmtBytes(+v)); }
  function mib(v) { return XP.fmtCell(+v || 0) + ' MiB'; }

  async function hostOf(ctx, body, name) {
    if (ctx.files.has(name)) return { host: null };
    var r = await XP.cachedJSON(XP.api('hosts', { run: ctx.run, tag: 'memory_profile' }));
    var hosts = r.ok ? r.data.map(function (h) { return h.hostname; }).filter(function (h) { return h !== 'ALL_HOSTS'; }) : [];
    if (!hosts.length) return { host: null, none: true };
    var host = hosts.indexOf(ctx.params.get('host')) >= 0 ? ctx.params.get('host') : hosts[0];
    return { host: host, hosts: hosts };
  }

  function snapshotsChart(box, prof, summary) {
    var snaps = (prof.memoryProfileSnapshots || []).slice().sort(function (a, b) { return +a.timeOffsetPs - +b.timeOffsetPs; });
    if (!snaps.length) return XP.note(box, 'no memory activity recorded for this allocator');
    var x = snaps.map(function (s) { return +s.timeOffsetPs / 1e9; }); /* ms */
    var stat = function (k) { return snaps.map(function (s) { return +(s.aggregationStats || {})[k] || 0; }); };
    var top = Math.max.apply(null, [0].concat(stat('heapAllocatedBytes'), stat('stackReservedBytes'), stat('peakBytesInUse')));
    XP.lineChart(box, {
      x: x,
      xUnit: 'ms',
      yScale: XP.byteScale(top),
      xFormat: function (v) { return XP.fmtNum(v) + ' ms'; },
      yFormat: function (v) { return XP.fmtBytes(v); },
      series: [
        { name: 'heap allocated', values: stat('heapAllocatedBytes'), color: '#4e79a7' },
        { name: 'stack reserved', values: stat('stackReservedBytes'), color: '#f28e2b' },
        { name: 'peak in use', values: stat('peakBytesInUse'), color: '#bab0ac' }
      ],
      mark: { x: +summary.peakStatsTimePs / 1e9, label: 'peak ' + XP.fmtBytes(+(summary.peakStats || {}).peakBytesInUse || 0) }
    }, { title: 'memory over time' });
    var frag = stat('fragmentation');
    if (frag.some(function (v) { return v > 0; })) {
      XP.lineChart(box, { x: x, xUnit: 'ms', xFormat: function (v) { return XP.fmtNum(v) + ' ms'; }, yFormat: function (v) { return XP.fmtPct(100 * v); },
        yTick: function (t, step) { return XP.fmtTick(100 * t, 100 * step) + '%'; },
        series: [{ name: 'fragmentation', values: frag, color: '#e15759' }] }, { height: 120, ymax: 1 });
    }
  }

  function allocationsAtPeak(box, prof) {
    var snaps = prof.memoryProfileSnapshots || [];
    var special = prof.specialAllocations || [];
    var rows = (prof.activeAllocations || []).map(function (a) {
      var s = +a.specialIndex >= 0 ? special[+a.specialIndex] : snaps[+a.snapshotIndex];
      var m = s && s.activityMetadata || {};
      return [m.tfOpName, +m.allocationBytes || 0, +m.requestedBytes || 0, +a.numOccurrences || 0, m.regionType, m.dataType, m.tensorShape, m.memoryActivity];
    });
    if (!rows.length) return;
    box.appendChild(XP.el('h3', { text: 'Allocations live at the peak (' + rows.length + ')' }));
    var cols = [['op', 'string'], ['allocation_bytes', 'number'], ['requested_bytes', 'number'], ['occurrences', 'number'], ['region', 'string'], ['data_type', 'string'], ['shape', 'string'], ['activity', 'string']]
      .map(function (c) { return { id: c[0], label: c[0].replace(/_/g, ' '), type: c[1] }; });
    var wrap = XP.el('div', { id: 'peak-allocations' });
    box.appendChild(wrap);
    XP.renderTable(wrap, { cols: cols, rows: rows, p: {} }, { limit: 50, sort: { col: 1, desc: true } });
  }

  async function memoryProfile(ctx, holder) {
    holder.textContent = '';
    var where = await hostOf(ctx, holder, 'memory_profile.json');
    var links = where.none ? [] : [XP.fileLink(ctx.run, 'memory_profile.json', null, where.host), XP.fileLink(ctx.run, 'memory_profile.csv', null, where.host)];
    var body = XP.section(holder, 'memory-profile', 'Memory profile', links);
    if (where.none) return XP.explain(ctx, body, 'memory_profile.json', 'no memory profile in this run');
    var tools = XP.el('div', { cls: 'toolbar' });
    body.appendChild(tools);
    if (where.hosts && where.hosts.length > 1) {
      var hs = XP.el('select', { id: 'memory-host' }, where.hosts.map(function (h) { return XP.el('option', { value: h, text: h }); }));
      hs.value = where.host;
      hs.addEventListener('change', function () {
        XP.setHashParams({ host: hs.value, allocator: null });
        ctx.params = XP.readHash().params;
        XP.guarded(holder, function () { return memoryProfile(ctx, holder); });
      });
      tools.appendChild(XP.el('label', {}, ['Host ', hs]));
    }
    var r = await XP.loadCached(body, XP.fileUrl(ctx.run, 'memory_profile.json', null, where.host), 'loading memory profile');
    if (!r.ok) return XP.unavailable(body, r.error);
    var ids = r.data.memoryIds || Object.keys(r.data.memoryProfilePerAllocator || {});
    if (!ids.length) return XP.note(body, 'no allocator in memory_profile.json (the profile recorded no memory activity)');
    var id = ids.indexOf(ctx.params.get('allocator')) >= 0 ? ctx.params.get('allocator') : ids[0];
    var sel = XP.el('select', { id: 'memory-allocator' }, ids.map(function (m) { return XP.el('option', { value: m, text: m }); }));
    sel.value = id;
    tools.appendChild(XP.el('label', {}, ['Allocator ', sel]));
    var view = XP.el('div');
    body.appendChild(view);
    var draw = function () {
      view.textContent = '';
      XP.setHashParams({ allocator: sel.value === ids[0] ? null : sel.value });
      var prof = r.data.memoryProfilePerAllocator[sel.value] || {};
      var s = prof.profileSummary || {};
      var peak = s.peakStats || {};
      var grid = XP.el('div', { cls: 'grid2' });
      var left = XP.el('div'), right = XP.el('div');
      grid.appendChild(left); grid.appendChild(right);
      left.appendChild(kv('Peak memory in use', bytesNum(peak.peakBytesInUse, 'peakBytesInUse')));
      left.appendChild(kv('Peak over the lifetime', bytesNum(s.peakBytesUsageLifetime, 'peakBytesUsageLifetime')));
      left.appendChild(kv('Peak at', XP.el('span', { text: XP.fmtUs(+s.peakStatsTimePs / 1e6) })));
      right.appendChild(kv('Capacity', bytesNum(s.memoryCapacity, 'memoryCapacity')));
      right.appendChild(kv('Heap at the peak', bytesNum(peak.heapAllocatedBytes, 'heapAllocatedBytes')));
      right.appendChild(kv('Fragmentation at the peak', XP.el('span', { text: XP.fmtPct(100 * (+peak.fragmentation || 0)) })));
      view.appendChild(grid);
      snapshotsChart(view, prof, s);
      allocationsAtPeak(view, prof);
    };
    sel.addEventListener('change', draw);
    draw();
  }

  async function memoryViewer(ctx, holder) {
    var body = XP.section(holder, 'memory-viewer', 'Memory viewer (per HLO module)', [XP.fileLink(ctx.run, 'module_list.json')]);
    if (!ctx.files.has('module_list.json')) return XP.explain(ctx, body, 'memory_viewer.json', 'no HLO module list in this run');
    var m = await XP.loadCached(body, XP.fileUrl(ctx.run, 'module_list.json'), 'loading modules');
    if (!m.ok) return XP.unavailable(body, m.error);
    var mods = Array.isArray(m.data) ? m.data : [];
    if (!mods.length) return XP.explain(ctx, body, 'module_list.json', 'no HLO modules in this run');
    var sel = XP.el('select', { id: 'memory-module' }, mods.map(function (x) { return XP.el('option', { value: x, text: x }); }));
    var wanted = ctx.params.get('module');
    sel.value = mods.indexOf(wanted) >= 0 ? wanted : mods[mods.length - 1];
    var linkBox = XP.el('span');
    body.appendChild(XP.el('div', { cls: 'toolbar' }, [XP.el('label', {}, ['Module ', sel]), linkBox]));
    var view = XP.el('div');
    body.appendChild(view);
    var draw = async function () {
      XP.setHashParams({ module: sel.value });
      view.textContent = '';
      linkBox.textContent = '';
      linkBox.appendChild(XP.fileLink(ctx.run, 'memory_viewer.json', { module_name: sel.value }));
      var r = await XP.loadCached(view, XP.fileUrl(ctx.run, 'memory_viewer.json', { module_name: sel.value }), 'loading ' + sel.value);
      if (!r.ok) return XP.unavailable(view, r.error);
      var d = r.data;
      view.dataset.module = sel.value;
      var grid = XP.el('div', { cls: 'grid2' });
      var left = XP.el('div'), right = XP.el('div');
      grid.appendChild(left); grid.appendChild(right);
      left.appendChild(kv('Peak heap', XP.num(d.peakHeapMib, 'peakHeapMib', mib(d.peakHeapMib))));
      left.appendChild(kv('Peak heap, unpadded', XP.num(d.peakUnpaddedHeapMib, 'peakUnpaddedHeapMib', mib(d.peakUnpaddedHeapMib))));
      left.appendChild(kv('Entry parameters', XP.el('span', { text: mib(d.entryComputationParametersMib) })));
      right.appendChild(kv('Total buffer allocation', XP.el('span', { text: mib(d.totalBufferAllocationMib) })));
      right.appendChild(kv('Indefinite lifetime', XP.el('span', { text: mib(d.indefiniteBufferAllocationMib) })));
      right.appendChild(kv('Live out (maybe)', XP.el('span', { text: mib(d.maybeLiveOutMib) })));
      view.appendChild(grid);
      var sizes = d.heapSizes || [];
      if (sizes.length) {
        /*
         * peakHeapSizePosition is the heap simulator event that made the
         * peak, and heapSizes[i] the heap before event i: the peak shows at
         * the next position, where XProf's program order chart marks it
         * (memory_viewer_main.ts: alloc = peakHeapSizePosition + 1).
         */
        var peakAt = Math.min((+d.peakHeapSizePosition || 0) + 1, sizes.length - 1);
        view.appendChild(XP.el('h3', { text: 'Heap over program order (MiB)' }));
        var chart = XP.lineChart(view, {
          x: sizes.map(function (v, i) { return i; }),
          xInt: true,
          yUnit: 'MiB',
          xFormat: function (v) { return 'program order ' + Math.round(v); },
          yFormat: function (v) { return XP.fmtCell(v) + ' MiB'; },
          series: [{ name: 'heap', values: sizes, color: '#4e79a7' }, { name: 'unpadded heap', values: d.unpaddedHeapSizes || [], color: '#59a14f' }],
          mark: { x: peakAt, label: 'peak ' + mib(d.peakHeapMib) }
        }, { title: 'heap over program order', height: 200 });
        chart.id = 'heap-chart';
        chart.dataset.peakAt = String(peakAt);
      }
      var bufs = (d.maxHeap || []).map(function (b) { return [b.instructionName, b.logicalBufferSizeMib, b.unpaddedShapeMib, b.shapeString, b.opCode, b.groupName, b.tfOpName]; });
      if (bufs.length) {
        view.appendChild(XP.el('h3', { text: 'Buffers live at the peak (' + bufs.length + ')' }));
        var cols = [['instruction', 'string'], ['size_mib', 'number'], ['unpadded_mib', 'number'], ['shape', 'string'], ['op_code', 'string'], ['group', 'string'], ['framework_op', 'string']]
          .map(function (c) { return { id: c[0], label: c[0].replace(/_/g, ' '), type: c[1] }; });
        var wrap = XP.el('div', { id: 'max-heap' });
        view.appendChild(wrap);
        XP.renderTable(wrap, { cols: cols, rows: bufs, p: {} }, { limit: 50, sort: { col: 1, desc: true } });
      }
    };
    sel.addEventListener('change', function () { XP.guarded(view, draw); });
    await draw();
  }

  XP.views.memory = {
    render: async function (ctx, box) {
      var a = XP.el('div'), b = XP.el('div');
      box.appendChild(a);
      box.appendChild(b);
      await Promise.all([XP.guarded(a, function () { return memoryProfile(ctx, a); }),
        ctx.files.has('memory_viewer.json') ? XP.guarded(b, function () { return memoryViewer(ctx, b); }) : null]);
    }
  };
})();
