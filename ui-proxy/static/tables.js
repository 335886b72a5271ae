/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xprofs page, tables: XProf's DataTables ({"cols":[{id,label,type}],
 * "rows":[{"c":[{"v":..}]}]}) and lists of objects become one shape,
 * drawn as a sortable, filterable HTML table.
 */
'use strict';

var XP = window.XP = window.XP || {};

XP.isDataTable = function (x) {
  return !!x && typeof x === 'object' && Array.isArray(x.cols) && Array.isArray(x.rows);
};

/*
 * Normalises x into {cols: [{id, label, type}], rows: [[value...]], p}, or
 * null when x is not tabular. Accepts a DataTable, a list of objects, or an
 * object with one such list.
 */
XP.toTable = function (x) {
  if (XP.isDataTable(x)) {
    return {
      cols: x.cols.map(function (c, i) {
        c = c || {};
        return { id: String(c.id || 'col' + i), label: String(c.label || c.id || 'col' + i), type: c.type || 'string' };
      }),
      rows: x.rows.map(function (r) {
        var cells = (r && Array.isArray(r.c)) ? r.c : [];
        return x.cols.map(function (c, i) {
          var cell = cells[i];
          return cell && typeof cell === 'object' ? (cell.v === undefined ? null : cell.v) : null;
        });
      }),
      p: x.p || {}
    };
  }
  if (Array.isArray(x) && x.length && x.every(function (o) { return o && typeof o === 'object' && !Array.isArray(o); })) {
    x = x.map(function (o) { return flatten(o, '', {}, 0); });
    var ids = [];
    x.slice(0, 200).forEach(function (o) {
      Object.keys(o).forEach(function (k) { if (ids.indexOf(k) < 0) ids.push(k); });
    });
    var cols = ids.map(function (k) {
      var num = x.slice(0, 200).every(function (o) { return o[k] === undefined || o[k] === null || typeof o[k] === 'number'; });
      var info = XP.colInfo(k);
      return { id: k, label: info.label, unit: info.unit, scale: info.scale, type: num ? 'number' : 'string' };
    });
    return {
      cols: cols,
      rows: x.map(function (o) { return ids.map(function (k) { return o[k] === undefined ? null : o[k]; }); }),
      p: {}
    };
  }
  if (x && typeof x === 'object' && !Array.isArray(x)) {
    var keys = Object.keys(x).sort(function (a, b) { return (b === 'rows') - (a === 'rows'); });
    for (var i = 0; i < keys.length; i++) {
      var t = Array.isArray(x[keys[i]]) ? XP.toTable(x[keys[i]]) : null;
      if (t) return t;
    }
  }
  return null;
};

/* Nested objects of a row become dotted columns: metrics.idle_time.time_ms. */
function flatten(o, prefix, out, depth) {
  Object.keys(o).forEach(function (k) {
    var v = o[k];
    if (v && typeof v === 'object' && !Array.isArray(v) && depth < 3) flatten(v, prefix + k + '.', out, depth + 1);
    else out[prefix + k] = v;
  });
  return out;
}

/* Index of the first column whose id matches one of the patterns, or -1. */
XP.findCol = function (table, patterns, type) {
  for (var p = 0; p < patterns.length; p++) {
    for (var i = 0; i < table.cols.length; i++) {
      var c = table.cols[i];
      if (type && c.type !== type) continue;
      if (patterns[p].test(c.id) || patterns[p].test(c.label)) return i;
    }
  }
  return -1;
};

/*
 * Human headers for the columns of our own files (report.json, steps,
 * regions, compare, TraceLens CSVs), whose ids are snake_case: a unit
 * suffix becomes "(µs)", a share (0..1) is shown as a percent. XProf's
 * DataTables keep their own labels. Returns {label, unit, scale}.
 */
var LABELS = {
  gflops_per_s: ['FLOP rate', 'GFLOP/s'], tflops_per_s: ['FLOP rate', 'TFLOP/s'],
  total_direct_kernel_time: ['Direct kernel time', 'µs'], total_subtree_kernel_time: ['Subtree kernel time', 'µs'],
  total_direct_kernel_time_sum: ['Direct kernel time, sum', 'µs'], total_subtree_kernel_time_sum: ['Subtree kernel time, sum', 'µs'],
  total_direct_kernel_time_mean: ['Direct kernel time, mean', 'µs'], total_subtree_kernel_time_mean: ['Subtree kernel time, mean', 'µs'],
  total_direct_kernel_time_ms: ['Direct kernel time', 'ms'], total_subtree_kernel_time_ms: ['Subtree kernel time', 'ms'],
  'time ms': ['Time', 'ms'], 'time ms per gpu': ['Time per GPU', 'ms'], percent: ['Share', '%'],
  GPU_kernel_launch_latency: ['Kernel launch latency', 'µs'], comm_latency: ['Communication latency', 'µs'],
  avg_wait_time: ['Mean wait time', 'µs'], ex_UID: ['Example UID', ''], operation_count: ['Operations', ''],
  self_us: ['Self time', 'µs'], self_pct: ['Self time', '%'], kernel_total_us: ['Kernel time, total', 'µs'],
  kernel_mean_us: ['Kernel time, mean', 'µs'], kernel_pct: ['Kernel time', '%'], total_us: ['Total time', 'µs'],
  total_pct: ['Share of total', '%'], mean_us: ['Mean time', 'µs'], max_us: ['Max time', 'µs'], incl_us: ['Inclusive time', 'µs'],
  start_us: ['Start', 'µs'], base_us_per_step: ['A (base) time per step', 'µs'], us_per_step: ['B time per step', 'µs'],
  delta_us_per_step: ['Change per step, B − A', 'µs'], base_count_per_step: ['A (base) count per step', ''],
  count_per_step: ['B count per step', ''], base_self_per_step_us: ['A (base) self time per step', 'µs'],
  self_per_step_us: ['B self time per step', 'µs'], busy_ms: ['Busy', 'ms'], idle_ms: ['Idle', 'ms'], total_ms: ['Total', 'ms'],
  tensor_core: ['Tensor Core', ''], fits: ['Fits in parent', ''], ratio: ['Ratio B/A', '×']
};
var UNITS = { us: 'µs', ms: 'ms', ns: 'ns', ps: 'ps', pct: '%', percent: '%', bytes: 'bytes', mib: 'MiB', mb: 'MB', gib: 'GiB' };
var WORDS = {
  gpu: 'GPU', cpu: 'CPU', id: 'ID', uid: 'UID', pid: 'PID', tid: 'TID', hlo: 'HLO', tf: 'TF', comm: 'communication',
  incl: 'inclusive', avg: 'mean', num: 'number', memcpy: 'memcpy', p90: 'p90', op: 'op', ops: 'ops', xla: 'XLA', api: 'API'
};
XP.colInfo = function (id) {
  id = String(id);
  if (LABELS[id]) return { label: LABELS[id][0] + (LABELS[id][1] ? ' (' + LABELS[id][1] + ')' : ''), unit: LABELS[id][1], scale: 1 };
  /* Only snake_case (or dotted) ids; headers like "Percentage (%)" stay. */
  if (!/^[a-z0-9_.]+$/.test(id) && !/^[a-z0-9 ]+$/.test(id)) return { label: id, unit: '', scale: 1 };
  var parts = id.split('.');
  var last = parts.pop().split(/[_ ]/);
  var unit = '', scale = 1;
  for (var i = last.length - 1; i >= 0; i--) {
    if (UNITS[last[i]]) {
      unit = UNITS[last[i]];
      var per = last[i + 1] === 'per' && last[i + 2] ? '/' + last[i + 2] : '';
      last.splice(i, per ? 3 : 1);
      if (per) last.push('per', per.slice(1));
      break;
    }
  }
  if (!unit && /(^|_)(share|fraction)(_|$)/.test(id.split('.').pop())) { unit = '%'; scale = 100; }
  var words = parts.concat(last.length ? [last.join(' ')] : []).join(': ').split(' ').map(function (w) { return WORDS[w] || w; }).join(' ');
  if (!words) words = 'value';
  words = words.charAt(0).toUpperCase() + words.slice(1);
  return { label: words + (unit ? ' (' + unit + ')' : ''), unit: unit, scale: scale };
};

/* A number for a table cell: grouped thousands, fewer decimals as it grows. */
XP.fmtCell = function (v, col) {
  if (typeof v !== 'number' || !isFinite(v)) return String(v);
  if (col && col.scale && col.scale !== 1) v = v * col.scale;
  if (col && col.unit === '%') return v.toLocaleString('en-US', { minimumFractionDigits: 1, maximumFractionDigits: 1 });
  if (Number.isInteger(v)) return v.toLocaleString('en-US');
  var a = Math.abs(v);
  if (a < 0.01) return String(Number(v.toPrecision(2)));
  var digits = a >= 10000 ? 0 : a >= 100 ? 1 : a >= 1 ? 2 : 3;
  return v.toLocaleString('en-US', { minimumFractionDigits: 0, maximumFractionDigits: digits });
};

function cellText(v, col) {
  if (v === null || v === undefined) return '';
  if (typeof v === 'number') return XP.fmtCell(v, col);
  if (Array.isArray(v)) return v.map(function (x) { return typeof x === 'object' && x !== null ? JSON.stringify(x) : String(x); }).join(', ');
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

function compare(a, b) {
  if (a === b) return 0;
  if (a === null || a === undefined) return 1;
  if (b === null || b === undefined) return -1;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return String(a).localeCompare(String(b));
}

/*
 * Draws table t into box: a filter box, headers that sort on click
 * (again to reverse), and the first `limit` rows with a button for all.
 * opts: limit, columns (indices shown), sort {col, desc}, filter (text),
 * onRow(row, tr), onState({col, desc, filter}) after a sort or a filter.
 */
XP.renderTable = function (box, t, opts) {
  opts = opts || {};
  var limit = opts.limit || 200;
  var state = { col: -1, desc: false, filter: '', all: false };
  var table = XP.el('table', { cls: 'data' });
  var thead = XP.el('thead');
  var tbody = XP.el('tbody');
  var foot = XP.el('div', { cls: 'table-foot' });
  var filter = XP.el('input', { type: 'search', placeholder: 'filter rows', cls: 'filter' });
  var headRow = XP.el('tr');

  var shownCols = opts.columns || t.cols.map(function (c, i) { return i; });
  if (opts.sort) { state.col = opts.sort.col; state.desc = !!opts.sort.desc; }
  if (opts.filter) { state.filter = String(opts.filter); filter.value = state.filter; }
  function told() { if (opts.onState) opts.onState({ col: state.col, desc: state.desc, filter: state.filter }); }
  shownCols.forEach(function (i) {
    var c = t.cols[i];
    var th = XP.el('th', { text: c.label, title: c.id, cls: c.type === 'number' ? 'num' : '' });
    th.addEventListener('click', function () {
      state.desc = state.col === i ? !state.desc : c.type === 'number';
      state.col = i;
      draw();
      told();
    });
    headRow.appendChild(th);
  });
  thead.appendChild(headRow);
  table.appendChild(thead);
  table.appendChild(tbody);

  function rowsShown() {
    var rows = t.rows;
    if (state.filter) {
      var f = state.filter.toLowerCase();
      rows = rows.filter(function (r) {
        return r.some(function (v) { return v !== null && String(v).toLowerCase().indexOf(f) >= 0; });
      });
    }
    if (state.col >= 0) {
      var i = state.col;
      var sign = state.desc ? -1 : 1;
      rows = rows.slice().sort(function (a, b) { return sign * compare(a[i], b[i]); });
    }
    return rows;
  }

  function draw() {
    var rows = rowsShown();
    var shown = state.all ? rows : rows.slice(0, limit);
    Array.prototype.forEach.call(headRow.children, function (th, k) {
      var i = shownCols[k];
      th.setAttribute('aria-sort', i !== state.col ? 'none' : state.desc ? 'descending' : 'ascending');
    });
    var frag = document.createDocumentFragment();
    shown.forEach(function (r) {
      var tr = XP.el('tr');
      shownCols.forEach(function (i) {
        var v = r[i];
        var text = cellText(v, t.cols[i]);
        var td = XP.el('td', { text: text, cls: t.cols[i].type === 'number' ? 'num' : '' });
        if (typeof v === 'number') {
          td.dataset.v = String(v);
          if (text !== String(v)) td.title = String(v);
        } else if (text.length > 40) td.title = text.slice(0, 2000);
        tr.appendChild(td);
      });
      if (opts.onRow) {
        tr.className = 'clickable';
        tr.addEventListener('click', function () {
          Array.prototype.forEach.call(tbody.querySelectorAll('tr.picked'), function (x) { x.classList.remove('picked'); });
          tr.classList.add('picked');
          opts.onRow(r, tr);
        });
      }
      frag.appendChild(tr);
    });
    tbody.textContent = '';
    tbody.appendChild(frag);
    foot.textContent = '';
    foot.appendChild(document.createTextNode(shown.length + ' of ' + rows.length + ' rows'));
    if (shown.length < rows.length) {
      foot.appendChild(XP.el('button', { text: 'show all', onclick: function () { state.all = true; draw(); } }));
    }
  }

  filter.addEventListener('input', function () { state.filter = filter.value; draw(); told(); });
  box.appendChild(filter);
  box.appendChild(XP.el('div', { cls: 'table-wrap' }, [table]));
  box.appendChild(foot);
  draw();
  return table;
};

/* Draws a table's custom properties (DataTable "p") as name/value cards. */
XP.renderProps = function (box, p, title) {
  var keys = Object.keys(p || {}).filter(function (k) { return p[k] !== '' && p[k] !== null; });
  if (!keys.length) return false;
  var grid = XP.el('dl', { cls: 'cards' });
  keys.forEach(function (k) {
    grid.appendChild(XP.el('div', { cls: 'card' }, [
      XP.el('dt', { text: k.replace(/_/g, ' ') }),
      XP.el('dd', { text: typeof p[k] === 'number' ? XP.fmtNum(p[k]) : String(p[k]) })
    ]));
  });
  if (title) box.appendChild(XP.el('h3', { text: title }));
  box.appendChild(grid);
  return true;
};

/*
 * Parses CSV text (RFC 4180: quoted fields, "" inside quotes) into a
 * table; a column is a number column when every non-empty value parses.
 */
XP.parseCSV = function (text) {
  var records = [];
  var field = '';
  var rec = [];
  var quoted = false;
  for (var i = 0; i < text.length; i++) {
    var ch = text[i];
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') { field += '"'; i++; }
      else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') {
      quoted = true;
    } else if (ch === ',') {
      rec.push(field); field = '';
    } else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && text[i + 1] === '\n') i++;
      rec.push(field); field = '';
      records.push(rec); rec = [];
    } else {
      field += ch;
    }
  }
  if (field !== '' || rec.length) { rec.push(field); records.push(rec); }
  if (!records.length) return null;
  var head = records[0];
  var body = records.slice(1).filter(function (r) { return r.length > 1 || r[0] !== ''; });
  var numeric = head.map(function (h, c) {
    return body.every(function (r) { return r[c] === undefined || r[c] === '' || isFinite(+r[c]); }) &&
      body.some(function (r) { return r[c] !== undefined && r[c] !== ''; });
  });
  return {
    cols: head.map(function (h, c) {
      var info = XP.colInfo(h);
      return { id: h, label: info.label, unit: info.unit, scale: info.scale, type: numeric[c] ? 'number' : 'string' };
    }),
    rows: body.map(function (r) {
      return head.map(function (h, c) {
        var v = r[c];
        if (v === undefined || v === '') return null;
        return numeric[c] ? +v : v;
      });
    }),
    p: {}
  };
};

/* Index of the column named exactly id, or -1. */
XP.colIndex = function (t, id) {
  for (var i = 0; i < t.cols.length; i++) if (t.cols[i].id === id) return i;
  return -1;
};
