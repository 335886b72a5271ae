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
      return { id: k, label: k, type: num ? 'number' : 'string' };
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

function cellText(v) {
  if (v === null || v === undefined) return '';
  if (typeof v === 'number') return XP.fmtNum(v);
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
 * opts: limit, columns (indices shown), sort {col, desc}, onRow(row, tr).
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
  shownCols.forEach(function (i) {
    var c = t.cols[i];
    var th = XP.el('th', { text: c.label, title: c.id, cls: c.type === 'number' ? 'num' : '' });
    th.addEventListener('click', function () {
      state.desc = state.col === i ? !state.desc : c.type === 'number';
      state.col = i;
      draw();
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
        var td = XP.el('td', { text: cellText(v), cls: t.cols[i].type === 'number' ? 'num' : '' });
        if (typeof v === 'number') td.dataset.v = String(v);
        else if (typeof v === 'string' && v.length > 40) td.title = v.slice(0, 2000);
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

  filter.addEventListener('input', function () { state.filter = filter.value; draw(); });
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
    cols: head.map(function (h, c) { return { id: h, label: h, type: numeric[c] ? 'number' : 'string' }; }),
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
