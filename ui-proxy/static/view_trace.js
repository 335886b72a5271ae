/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xprofs page, the Trace tab: the canvas timeline (timeline.js) of
 * trace_viewer.json, a host selector (hosts=), a search by name prefix
 * (search_prefix=, results listed and jumpable), the details of a clicked
 * event (XProf's event-details request: event_name, start_time_ms,
 * duration_ms, unique_id) with its HLO op and the op's source line
 * (hlo_stats.json), the event's flows (arrows on the
 * timeline, each listed and jumpable) and a measured span. The fragment keeps the
 * window (start, end in ms), host, search, selection and span.
 */
'use strict';

(function () {
  var XP = window.XP;
  var MAX_RESULTS = 500;

  function dl(pairs) {
    var d = XP.el('dl');
    pairs.forEach(function (p) {
      d.appendChild(XP.el('dt', { text: p[0] }));
      d.appendChild(XP.el('dd', { text: typeof p[1] === 'object' ? JSON.stringify(p[1]) : String(p[1]) }));
    });
    return d;
  }

  /* ms to the picosecond: a PyTorch trace's times have sub-ns digits, and the
   * details request must name the event's start exactly */
  function ms(us) { return (us / 1000).toFixed(9).replace(/\.?0+$/, ''); }

  /* Process and thread names of a trace answer. */
  function namesOf(doc) {
    var t = XP.parseTrace(doc);
    return function (e) {
      return (t.procNames[e.pid] || 'process ' + e.pid) + ' / ' + (t.threadNames[e.pid + ':' + e.tid] || 'thread ' + e.tid);
    };
  }

  /* The flows of e (arrows to and from it), each jumping to its other end. */
  function flowList(panel, e, tl) {
    var arrows = tl.flowsOf(e);
    if (!arrows.length) return;
    panel.appendChild(XP.el('h3', { text: 'Flows (' + arrows.length + ')' }));
    var list = XP.el('ul', { cls: 'flows' });
    arrows.forEach(function (a) {
      var out = a.from.ts === e.ts && a.from.name === e.name && a.from.pid === e.pid && a.from.tid === e.tid;
      var other = out ? a.to : a.from;
      var item = XP.el('li', { cls: 'hit', 'data-name': other.name, 'data-flow': a.id,
        text: (out ? '→ to ' : '← from ') + other.name + ' · ' + tl.trackName(other) + ' · ' + XP.fmtUs(other.ts - e.ts) + (a.cat ? ' · ' + a.cat : '') });
      item.addEventListener('click', function () { tl.jumpTo(other); });
      list.appendChild(item);
    });
    panel.appendChild(list);
    panel.dataset.flows = String(arrows.length);
  }

  /* The details panel of event e: what the timeline knows, then XProf's details answer. */
  async function showDetails(ctx, panel, e, hostParams, tl) {
    panel.textContent = '';
    panel.dataset.state = '';
    if (!e) {
      panel.appendChild(XP.el('p', { cls: 'muted', text: 'Click an event to see its details.' }));
      return;
    }
    var rel = e.ts - tl.full.start;
    panel.appendChild(XP.el('h3', { cls: 'ev-name', text: e.name }));
    panel.appendChild(dl([['start', XP.fmtUs(rel)], ['duration', XP.fmtUs(e.dur)], ['ts (µs)', e.ts],
      ['where', tl.trackName ? tl.trackName(e) : e.pid + ' / ' + e.tid]].concat(e.cat ? [['category', e.cat]] : [])));
    flowList(panel, e, tl);
    if (e.uid === null || e.uid === undefined) {
      panel.appendChild(XP.el('p', { cls: 'muted', text: 'no uid: details not asked for' }));
      panel.dataset.state = 'no-uid';
      return;
    }
    /* The details request names the event in the mount's file name, which
     * holds 255 bytes; longer names (ROCm kernels) are found by a search
     * with full args (search_metadata=1) of their first 100 characters. */
    var params = Object.assign({ event_name: e.name, start_time_ms: ms(e.ts), duration_ms: ms(e.dur), unique_id: e.uid }, hostParams);
    if (encodeURIComponent(e.name).length > 150) params = Object.assign({ search_prefix: e.name.slice(0, 100), search_metadata: 1 }, hostParams);
    var url = XP.fileUrl(ctx.run, 'trace_viewer.json', params);
    panel.appendChild(XP.el('div', { cls: 'small' }, ['reads ', XP.fileLink(ctx.run, 'trace_viewer.json', params)]));
    var r = await XP.loadCached(panel, url, 'loading details');
    if (tl.selected !== e && tl.selected && tl.selected.ts !== e.ts) return; /* another click came first */
    if (!r.ok) {
      XP.unavailable(panel, r.error);
      panel.dataset.state = 'error';
      return;
    }
    var evs = (r.data.traceEvents || []).filter(function (x) {
      return x.ph !== 'M' && x.name === e.name && Math.abs(+x.ts - e.ts) < 0.001 && Math.abs(+(x.dur || 0) - e.dur) < 0.001;
    });
    var full = evs[0];
    if (!full) {
      XP.note(panel, 'the details answer holds no such event');
      panel.dataset.state = 'empty';
      return;
    }
    panel.dataset.url = url;
    var args = full.args || {};
    var keys = Object.keys(args);
    var hloSlot = XP.el('div', { cls: 'hlo-slot' });
    panel.appendChild(hloSlot);
    panel.appendChild(XP.el('h3', { text: 'Arguments (' + keys.length + ')' }));
    var argList = dl(keys.map(function (k) { return [k, args[k]]; }));
    argList.className = 'args';
    panel.appendChild(argList);
    var flow = [];
    ['bind_id', 'flow_in', 'flow_out', 'id2', 'cat'].forEach(function (k) { if (full[k] !== undefined) flow.push([k, full[k]]); });
    if (flow.length) {
      panel.appendChild(XP.el('h3', { text: 'Flow fields' }));
      panel.appendChild(dl(flow));
    }
    panel.dataset.state = 'ready';
    panel.dataset.args = String(keys.length);
    if (args.hlo_op !== undefined && args.hlo_op !== '') await hloOp(ctx, hloSlot, e, args, tl);
  }

  /* Text of an HTML-escaped snippet (entities only; tags are dropped). */
  function unescapeHtml(s) {
    return String(s).replace(/<[^>]*>/g, '').replace(/&(#x[0-9a-f]+|#\d+|amp|lt|gt|quot|apos);/gi, function (all, k) {
      var named = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
      if (named[k.toLowerCase()]) return named[k.toLowerCase()];
      var code = k[1] === 'x' || k[1] === 'X' ? parseInt(k.slice(2), 16) : parseInt(k.slice(1), 10);
      return isFinite(code) ? String.fromCodePoint(code) : all;
    });
  }

  /* hlo_stats' source_info cell, "<div class='source-info-cell' title='STACK'>FILE:LINE</div>":
   * {line: 'FILE:LINE', stack} or null. */
  XP.parseSourceCell = function (html) {
    if (!html) return null;
    var t = /title='([^']*)'/.exec(String(html));
    var line = unescapeHtml(html).trim();
    return line ? { line: line, stack: t ? unescapeHtml(t[1]).trim() : '' } : null;
  };

  /* The event of a derived line ("XLA Modules", "Source code": XProf's derived
   * timeline of a device) of e's device that spans e's middle. */
  function derivedAt(tl, e, prefix) {
    var mid = e.ts + e.dur / 2;
    var hit = null;
    tl.tracks.forEach(function (t) {
      if (hit || t.pid !== e.pid || t.name.indexOf(prefix) !== 0) return;
      hit = t.events.find(function (x) { return x.ts <= mid && x.ts + x.dur >= mid; }) || null;
    });
    return hit;
  }

  /*
   * The event's HLO op (args hlo_op, hlo_module), and its source line: the
   * event's own source / source_stack args when the profile has them, else
   * the op's row of hlo_stats.json (the HLO instruction's metadata
   * source_file:source_line and its stack, the module's program id from the
   * derived XLA Modules line or module_list.json), else the derived Source
   * code line (file name and line only).
   */
  async function hloOp(ctx, slot, e, args, tl) {
    var op = String(args.hlo_op);
    var module = args.hlo_module ? String(args.hlo_module) : '';
    var box = XP.el('div', { id: 'event-hlo', cls: 'hlo-op' });
    box.dataset.state = 'loading';
    box.dataset.op = op;
    slot.appendChild(XP.el('h3', { text: 'HLO op' }));
    slot.appendChild(box);
    var program = null;
    var mod = derivedAt(tl, e, 'XLA Modules');
    var m = mod && /^(.*)\((\d+)\)$/.exec(mod.name);
    if (m && (!module || m[1] === module)) program = m[2];
    var row = null;
    var link = null;
    if (args.source === undefined && ctx.files.has('hlo_stats.json')) {
      var r = await XP.cachedJSON(XP.fileUrl(ctx.run, 'hlo_stats.json'));
      var t = r.ok ? XP.toTable(r.data) : null;
      if (t) {
        var c = function (id) { return XP.colIndex(t, id); };
        var rows = t.rows.filter(function (x) { return x[c('hlo_op_name')] === op; });
        if (program === null && rows.length > 1 && module && ctx.files.has('module_list.json')) {
          var ml = await XP.cachedJSON(XP.fileUrl(ctx.run, 'module_list.json'));
          var ids = (ml.ok && Array.isArray(ml.data) ? ml.data : []).map(function (n) {
            var k = /^(.*)\((\d+)\)$/.exec(String(n));
            return k && k[1] === module ? k[2] : null;
          }).filter(function (x) { return x !== null; });
          rows = rows.filter(function (x) { return ids.indexOf(String(x[c('program_id')])) >= 0; }).concat(rows);
        }
        row = (program === null ? rows : rows.filter(function (x) { return String(x[c('program_id')]) === program; }))[0] || null;
        if (row) {
          if (program === null) program = String(row[c('program_id')]);
          row = { category: row[c('category')], expression: row[c('hlo_op_expression')], source: XP.parseSourceCell(row[c('source_info')]) };
          link = XP.fileLink(ctx.run, 'hlo_stats.json');
        }
      }
    }
    if (tl.selected !== e && tl.selected && tl.selected.ts !== e.ts) return; /* another click came first */
    var source = null;
    if (args.source !== undefined) source = { line: String(args.source), stack: args.source_stack ? String(args.source_stack) : '', from: 'args' };
    else if (row && row.source) source = { line: row.source.line, stack: row.source.stack, from: 'hlo_stats.json' };
    else {
      var d = derivedAt(tl, e, 'Source code');
      if (d) source = { line: d.name, stack: '', from: 'the Source code line' };
    }
    var d2 = XP.el('dl');
    var pair = function (k, key, v) {
      d2.appendChild(XP.el('dt', { text: k }));
      d2.appendChild(XP.el('dd', { 'data-key': key, text: v }));
    };
    pair('op', 'hlo_op', op);
    if (module) pair('module', 'hlo_module', module + (program !== null ? '(' + program + ')' : ''));
    if (row && row.category) pair('category', 'category', row.category);
    pair('source', 'source', source ? source.line : 'not in the HLO metadata');
    box.appendChild(d2);
    if (source && source.stack) box.appendChild(XP.el('pre', { cls: 'code stack', title: 'source stack', text: source.stack }));
    if (row && row.expression) box.appendChild(XP.el('pre', { cls: 'code hlo-expr', text: row.expression }));
    if (link) box.appendChild(XP.el('div', { cls: 'small' }, ['from ', link]));
    if (program !== null) box.dataset.program = program;
    box.dataset.source = source ? source.line : '';
    box.dataset.sourceFrom = source ? source.from : '';
    box.dataset.state = 'ready';
  }

  async function runSearch(ctx, box, prefix, hostParams, tl) {
    box.textContent = '';
    box.dataset.state = 'loading';
    if (!prefix) { box.dataset.state = ''; return; }
    var params = Object.assign({ search_prefix: prefix }, hostParams);
    var r = await XP.loadCached(box, XP.fileUrl(ctx.run, 'trace_viewer.json', params), 'searching');
    if (!r.ok) {
      XP.unavailable(box, r.error);
      box.dataset.state = 'error';
      return;
    }
    var where = namesOf(r.data);
    var found = XP.parseTrace(r.data).events;
    found.sort(function (a, b) { return b.dur - a.dur; });
    box.appendChild(XP.el('div', { cls: 'small muted' }, [found.length + ' events start with "' + prefix + '"' +
      (found.length > MAX_RESULTS ? ', the ' + MAX_RESULTS + ' longest listed' : ', longest first') + ' · ',
      XP.fileLink(ctx.run, 'trace_viewer.json', params)]));
    var list = XP.el('div', { cls: 'search-results' });
    found.slice(0, MAX_RESULTS).forEach(function (e) {
      var row = XP.el('div', { cls: 'hit', title: e.name, 'data-name': e.name, text: XP.fmtUs(e.dur) + ' · ' + e.name + ' · ' + where(e) });
      row.addEventListener('click', function () { tl.jumpTo(e); });
      list.appendChild(row);
    });
    box.appendChild(list);
    box.dataset.state = 'ready';
    box.dataset.count = String(found.length);
  }

  XP.views.trace = {
    render: async function (ctx, box) {
      var p = ctx.params;
      var hostsR = await XP.cachedJSON(XP.api('hosts', { run: ctx.run, tag: 'trace_viewer@' }));
      var hosts = hostsR.ok && Array.isArray(hostsR.data) ? hostsR.data.map(function (h) { return h.hostname; }) : [];
      var host = hosts.indexOf(p.get('host')) >= 0 ? p.get('host') : '';
      var hostParams = host ? { hosts: host } : {};

      var tools = XP.el('div', { cls: 'toolbar' });
      if (hosts.length > 1) {
        var sel = XP.el('select', { id: 'trace-host' }, [XP.el('option', { value: '', text: 'all ' + hosts.length + ' hosts' })]
          .concat(hosts.map(function (h) { return XP.el('option', { value: h, text: h }); })));
        sel.value = host;
        sel.addEventListener('change', function () {
          XP.setHashParams({ host: sel.value, start: null, end: null, sel: null, name: null, span: null });
          XP.showRun(ctx.run, 'trace', XP.readHash().params);
        });
        tools.appendChild(XP.el('label', {}, ['Host ', sel]));
      } else if (hosts.length === 1) {
        tools.appendChild(XP.el('span', { cls: 'muted small', text: 'host ' + hosts[0] }));
      }
      var search = XP.el('input', { type: 'search', id: 'trace-search', cls: 'filter', placeholder: 'search events by name prefix (Enter)' });
      search.value = p.get('q') || '';
      tools.appendChild(search);
      tools.appendChild(XP.el('span', { cls: 'keys', text: 'W/S zoom · A/D pan · 0 all · drag pan · shift+drag measure · click details · M measure the selected · Esc clear' }));

      var grid = XP.el('div', { cls: 'trace-grid' });
      var tlBody = XP.section(grid, 'timeline', 'Timeline', [XP.fileLink(ctx.run, 'trace_viewer.json', Object.assign({ resolution: 8000 }, hostParams))]);
      var side = XP.el('div', { cls: 'trace-side' });
      grid.appendChild(side);
      var details = XP.section(side, 'event-details', 'Event details', []);
      details.classList.add('details');
      var results = XP.section(side, 'search-results', 'Search', []);
      box.appendChild(tools);
      box.appendChild(grid);
      var measureLine = XP.el('div', { cls: 'tl-measure', id: 'measure' });
      tlBody.before(measureLine);

      var tl = new XP.Timeline(tlBody, function (params) {
        return XP.fileUrl(ctx.run, 'trace_viewer.json', Object.assign({}, params, hostParams));
      });
      tl.trackName = function (e) {
        var t = tl.tracks.find(function (x) { return x.pid === e.pid && x.tid === e.tid; });
        return t ? t.proc + ' / ' + t.name : e.pid + ' / ' + e.tid;
      };
      var viewTimer = null;
      tl.onView = function (v) {
        clearTimeout(viewTimer);
        viewTimer = setTimeout(function () {
          var whole = v.start <= tl.full.start && v.end >= tl.full.end;
          XP.setHashParams({ start: whole ? null : ms(v.start), end: whole ? null : ms(v.end) });
        }, 300);
      };
      tl.onSelect = function (e) {
        XP.setHashParams(e ? { sel: [e.pid, e.tid, e.ts, e.dur, e.uid === null ? '' : e.uid].join(','), name: e.name } : { sel: null, name: null });
        showDetails(ctx, details, e, hostParams, tl);
      };
      tl.onMeasure = function (m) {
        measureLine.textContent = m ? 'measured: ' + XP.fmtUs(m.end - m.start) + ' from ' + XP.fmtUs(m.start - tl.full.start) + ' to ' + XP.fmtUs(m.end - tl.full.start) + ' (Esc clears)' : '';
        XP.setHashParams({ span: m ? ms(m.start) + ',' + ms(m.end) : null });
      };
      showDetails(ctx, details, null, hostParams, tl);
      search.addEventListener('keydown', function (ev) {
        if (ev.key !== 'Enter') return;
        XP.setHashParams({ q: search.value });
        runSearch(ctx, results, search.value, hostParams, tl);
      });

      var initial = null;
      if (p.get('start') && p.get('end')) initial = { start: +p.get('start') * 1000, end: +p.get('end') * 1000 };
      await tl.load(initial);
      if (p.get('span')) {
        var span = p.get('span').split(',').map(Number);
        if (span.length === 2 && span[1] > span[0]) tl.setMeasure(span[0] * 1000, span[1] * 1000);
      }
      if (p.get('sel')) {
        var f = p.get('sel').split(',');
        var e = { pid: +f[0], tid: +f[1], ts: +f[2], dur: +f[3], uid: f[4] === '' || f[4] === undefined ? null : +f[4], name: p.get('name') || '', cat: '' };
        tl.select(e, null);
      }
      if (search.value) await runSearch(ctx, results, search.value, hostParams, tl);
      else results.appendChild(XP.el('p', { cls: 'muted', text: 'Type the start of an event name (a kernel, an op) and press Enter.' }));
    }
  };
})();
