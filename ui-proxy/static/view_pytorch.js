/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xprofs page, the PyTorch tab (TraceLens's files): modules.txt as a
 * collapsible nn.Module tree with CPU and GPU time, call_tree.txt around
 * a chosen kernel (call_tree.txt?parents_of=UID: the ops above it), a
 * chosen kernel launcher of kernel_launchers.csv (its subtree and the ops
 * above it), and roofline.csv (GEMM, conv and SDPA FLOPs, bytes, rates) as
 * a table. The fragment keeps the kernel (kernel=UID) and the launcher
 * (launcher=UID).
 */
'use strict';

(function () {
  var XP = window.XP;

  /* Parses TraceLens's tree text (├── └── │ indents of 4) into nodes. */
  XP.parseTreeText = function (text) {
    var root = { name: '(root)', children: [], fields: {} };
    var stack = [{ depth: -1, node: root }];
    text.split('\n').forEach(function (line) {
      var m = /^([\s│├└─]*?)(?:├── |└── )(.*)$/.exec(line);
      if (!m) return;
      var depth = Math.round(m[1].length / 4);
      var fields = {};
      m[2].split(/, (?=[A-Za-z][A-Za-z ]*: )/).forEach(function (kv) {
        var at = kv.indexOf(': ');
        if (at > 0) fields[kv.slice(0, at)] = kv.slice(at + 2);
      });
      var node = { name: fields.Name || m[2], fields: fields, children: [] };
      while (stack.length > 1 && stack[stack.length - 1].depth >= depth) stack.pop();
      stack[stack.length - 1].node.children.push(node);
      stack.push({ depth: depth, node: node });
    });
    return root;
  };

  function count(n) { return n.children.reduce(function (s, k) { return s + 1 + count(k); }, 0); }

  async function modules(ctx, box) {
    var body = XP.section(box, 'modules', 'Module tree', [XP.fileLink(ctx.run, 'modules.txt')]);
    var r = await XP.loadText(body, XP.fileUrl(ctx.run, 'modules.txt'), 'loading modules');
    if (!r.ok) return XP.unavailable(body, r.error);
    var root = XP.parseTreeText(r.text);
    var n = count(root);
    body.dataset.nodes = String(n);
    if (!n) return XP.explain(ctx, body, 'modules.txt', 'no nn.Module in the trace');
    var maxGpu = Math.max.apply(null, root.children.map(function (k) { return +k.fields['GPU time'] || 0; }).concat([1e-9]));
    var maxCpu = Math.max.apply(null, root.children.map(function (k) { return +k.fields['CPU time'] || 0; }).concat([1e-9]));
    /* Open the top levels only: as deep as keeps the first view short. */
    var visible = function (node, d, L) { return d > L ? 0 : node.children.reduce(function (s, k) { return s + 1 + visible(k, d + 1, L); }, 0); };
    var levels = 0;
    while (levels < 3 && visible(root, 0, levels + 1) <= 60) levels++;
    if (!levels && visible(root, 0, 0) < 5) levels = 1;
    body.dataset.open = String(levels);
    body.appendChild(XP.el('p', { cls: 'muted small', text: n + ' modules; times in µs; bars: share of the top module; ▸ opens a module' }));
    XP.renderTree(body, root, {
      showRoot: false, open: levels, nameTitle: 'nn.Module',
      children: function (x) { return x.children; },
      name: function (x) { return x.name.replace(/^nn\.Module: /, '') + (x.fields.UID ? '  #' + x.fields.UID : ''); },
      columns: [
        { title: 'GPU time', cell: function (x) { var v = +x.fields['GPU time'] || 0; return XP.el('span', { cls: 'num', 'data-v': String(v), text: XP.fmtUs(v) }); } },
        { title: 'GPU share', cell: function (x) { var v = +x.fields['GPU time'] || 0; return XP.bar(v / maxGpu, '', XP.fmtPct(100 * v / maxGpu)); } },
        { title: 'CPU time', cell: function (x) { var v = +x.fields['CPU time'] || 0; return XP.el('div', { cls: 'barcell' }, [XP.bar(v / maxCpu, 'flops'), XP.el('span', { cls: 'small', text: XP.fmtUs(v) })]); } }
      ]
    });
  }

  async function callTree(ctx, box) {
    var body = XP.section(box, 'call-tree', 'Call tree around a kernel', [XP.fileLink(ctx.run, 'call_tree.txt')]);
    var r = await XP.loadText(body, XP.fileUrl(ctx.run, 'call_tree.txt'), 'loading call tree');
    if (!r.ok) return XP.unavailable(body, r.error);
    var kernels = [];
    r.text.split('\n').forEach(function (line) {
      var m = /UID: (\d+), Category: kernel, Name: (.*), Duration: ([0-9.e+-]+)\s*$/.exec(line);
      if (m) kernels.push({ uid: m[1], name: m[2], dur: +m[3] });
    });
    kernels.sort(function (a, b) { return b.dur - a.dur; });
    body.dataset.kernels = String(kernels.length);
    if (!kernels.length) return XP.note(body, 'no kernels in call_tree.txt');
    var out = XP.el('pre', { cls: 'code', id: 'call-path', text: 'Pick a kernel: its launch and the CPU ops above it are shown here.' });
    var linkBox = XP.el('div', { cls: 'small' });
    var pick = XP.el('select', { id: 'call-kernel' }, kernels.slice(0, 500).map(function (k) {
      return XP.el('option', { value: k.uid, text: XP.fmtUs(k.dur) + ' · #' + k.uid + ' · ' + k.name });
    }));
    var show = async function () {
      var params = { parents_of: pick.value };
      XP.setHashParams({ kernel: pick.value });
      linkBox.textContent = '';
      linkBox.appendChild(XP.fileLink(ctx.run, 'call_tree.txt', params));
      var a = await XP.loadText(body, XP.fileUrl(ctx.run, 'call_tree.txt', params), 'loading the ops above #' + pick.value);
      out.textContent = a.ok ? a.text : 'not available: ' + a.error;
      out.dataset.uid = pick.value;
    };
    pick.addEventListener('change', show);
    body.appendChild(XP.el('div', { cls: 'toolbar' }, [XP.el('label', {}, [kernels.length + ' kernels, longest first: ', pick])]));
    body.appendChild(linkBox);
    body.appendChild(XP.el('p', { cls: 'muted small', id: 'call-path-units', text: 'Durations in µs (TraceLens\u2019s call_tree.txt as written)' }));
    body.appendChild(out);
    if (ctx.params.get('kernel') && kernels.some(function (k) { return k.uid === ctx.params.get('kernel'); })) pick.value = ctx.params.get('kernel');
    await show();
  }

  /*
   * The kernel launchers (kernel_launchers.csv: CPU ops that launch kernels,
   * their GPU time and inputs): one chosen (launcher=UID in the fragment)
   * shows its subtree (call_tree.txt?uid=UID: the launch and its kernels)
   * and the ops above it (call_tree.txt?parents_of=UID).
   */
  async function launchers(ctx, box) {
    var body = XP.section(box, 'pt-launchers', 'Kernel launchers', [XP.fileLink(ctx.run, 'kernel_launchers.csv')]);
    var r = await XP.loadText(body, XP.fileUrl(ctx.run, 'kernel_launchers.csv'), 'loading kernel_launchers.csv');
    if (!r.ok) return XP.unavailable(body, r.error);
    var t = XP.parseCSV(r.text);
    if (!t || !t.rows.length) return XP.explain(ctx, body, 'kernel_launchers.csv', 'no CPU op launched a kernel');
    var c = function (id) { return XP.colIndex(t, id); };
    var uidAt = c('UID'), nameAt = c('name'), timeAt = c('total_direct_kernel_time');
    if (uidAt < 0) return XP.note(body, 'kernel_launchers.csv has no UID column');
    var rows = t.rows.slice().sort(function (a, b) { return (+b[timeAt] || 0) - (+a[timeAt] || 0); });
    body.dataset.rows = String(rows.length);
    var pick = XP.el('select', { id: 'launcher-op' }, rows.slice(0, 1000).map(function (x) {
      return XP.el('option', { value: String(x[uidAt]), text: XP.fmtUs(+x[timeAt] || 0) + ' · #' + x[uidAt] + ' · ' + x[nameAt] });
    }));
    var fields = XP.el('div', { cls: 'launcher-fields' });
    var linkBox = XP.el('div', { cls: 'small' });
    var sub = XP.el('pre', { cls: 'code', id: 'launcher-subtree' });
    var up = XP.el('pre', { cls: 'code', id: 'launcher-parents' });
    var show = async function () {
      var uid = pick.value;
      XP.setHashParams({ launcher: uid });
      var row = rows.find(function (x) { return String(x[uidAt]) === uid; });
      fields.textContent = '';
      var d = XP.el('dl', { cls: 'kvlist' });
      ['name', 'op category', 'total_direct_kernel_time', 'direct_kernel_count', 'Input Dims', 'Input type', 'Concrete Inputs', 'thread_name'].forEach(function (k) {
        var i = c(k);
        if (i < 0 || row[i] === null || row[i] === '') return;
        var v = row[i];
        var info = XP.colInfo(k);
        d.appendChild(XP.el('dt', { text: info.label }));
        var dd = XP.el('dd', { 'data-key': k, text: typeof v === 'number' ? XP.fmtCell(v, info) : String(v) });
        if (typeof v === 'number') { dd.dataset.v = String(v); dd.title = String(v); }
        d.appendChild(dd);
      });
      fields.appendChild(d);
      linkBox.textContent = '';
      linkBox.appendChild(XP.fileLink(ctx.run, 'call_tree.txt', { uid: uid }));
      linkBox.appendChild(document.createTextNode(' '));
      linkBox.appendChild(XP.fileLink(ctx.run, 'call_tree.txt', { parents_of: uid }));
      var a = await XP.loadText(body, XP.fileUrl(ctx.run, 'call_tree.txt', { uid: uid }), 'loading the subtree of #' + uid);
      var b = await XP.loadText(body, XP.fileUrl(ctx.run, 'call_tree.txt', { parents_of: uid }), 'loading the ops above #' + uid);
      if (pick.value !== uid) return; /* another choice came first */
      sub.textContent = a.ok ? a.text : 'not available: ' + a.error;
      up.textContent = b.ok ? b.text : 'not available: ' + b.error;
      sub.dataset.uid = up.dataset.uid = uid;
    };
    pick.addEventListener('change', show);
    body.appendChild(XP.el('div', { cls: 'toolbar' }, [XP.el('label', {}, [rows.length + ' launchers, most GPU time first: ', pick])]));
    body.appendChild(fields);
    body.appendChild(linkBox);
    body.appendChild(XP.el('h3', { text: 'Its launches and kernels' }));
    body.appendChild(sub);
    body.appendChild(XP.el('h3', { text: 'The ops above it' }));
    body.appendChild(up);
    var wanted = ctx.params.get('launcher');
    if (wanted && rows.some(function (x) { return String(x[uidAt]) === wanted; })) pick.value = wanted;
    await show();
  }

  async function rooflineCsv(ctx, box) {
    var body = XP.section(box, 'pt-roofline', 'Roofline of GEMM, conv and attention ops', [XP.fileLink(ctx.run, 'roofline.csv')]);
    var r = await XP.loadText(body, XP.fileUrl(ctx.run, 'roofline.csv'), 'loading roofline.csv');
    if (!r.ok) return XP.unavailable(body, r.error);
    var t = XP.parseCSV(r.text);
    if (!t || !t.rows.length) return XP.explain(ctx, body, 'roofline.csv', 'no GEMM, conv or attention op with known FLOPs');
    body.dataset.rows = String(t.rows.length);
    /* The rate and time columns first, the inputs and where after. */
    var first = ['name', 'category', 'Kernel Time (µs)', 'TFLOPS/s', 'TB/s', 'FLOPS/Byte', 'GFLOPS', 'Data Moved (MB)'];
    var order = first.map(function (id) { return XP.colIndex(t, id); }).filter(function (i) { return i >= 0; });
    t.cols.forEach(function (c, i) { if (order.indexOf(i) < 0) order.push(i); });
    XP.renderTable(body, t, { limit: 50, columns: order, sort: XP.colIndex(t, 'Kernel Time (µs)') >= 0 ? { col: XP.colIndex(t, 'Kernel Time (µs)'), desc: true } : null });
  }

  XP.views.pytorch = {
    render: async function (ctx, box) {
      var parts = [['modules.txt', modules], ['call_tree.txt', callTree], ['kernel_launchers.csv', launchers], ['roofline.csv', rooflineCsv]].filter(function (p) {
        return ctx.files.has(p[0]) && (p[1] !== launchers || ctx.files.has('call_tree.txt'));
      });
      await Promise.all(parts.map(function (p) {
        var slot = XP.el('div');
        box.appendChild(slot);
        return XP.guarded(slot, function () { return p[1](ctx, slot); });
      }));
    }
  };
})();
