/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xprofs page, a collapsible tree with bar columns (the op profile, the
 * PyTorch module tree). Children are drawn when a node is first opened,
 * so a big tree costs only what is shown.
 */
'use strict';

(function () {
  var XP = window.XP;

  function bar(fraction, cls, title) {
    var f = Math.max(0, Math.min(1, +fraction || 0));
    var inner = XP.el('span');
    inner.style.width = (100 * f) + '%';
    return XP.el('div', { cls: 'bar ' + (cls || ''), title: title || '' }, [inner]);
  }
  XP.bar = bar;

  /*
   * Draws the tree of root into box. spec: children(node) -> list,
   * name(node), columns: [{title, cell(node) -> Node}], open (levels open
   * at first, default 1), showRoot (default true). Returns the tree element.
   */
  XP.renderTree = function (box, root, spec) {
    var tree = XP.el('div', { cls: 'tree', role: 'tree' });
    var head = XP.el('div', { cls: 'node-row tree-head' }, [XP.el('span', { text: spec.nameTitle || 'Name' })]
      .concat(spec.columns.map(function (c) { return XP.el('span', { text: c.title }); })));
    tree.appendChild(head);

    function nodeEl(node, depth) {
      var kids = spec.children(node) || [];
      var wrap = XP.el('div', { cls: 'node', role: 'treeitem' });
      var toggle = XP.el('button', { cls: 'toggle', text: kids.length ? '▸' : '', 'aria-label': 'expand' });
      var name = XP.el('span', { cls: 'node-name', title: spec.name(node) }, [toggle, XP.el('span', { cls: 'label', text: spec.name(node) })]);
      name.style.paddingLeft = (depth * 14) + 'px';
      var row = XP.el('div', { cls: 'node-row' }, [name].concat(spec.columns.map(function (c) { return c.cell(node); })));
      var kidsBox = XP.el('div', { cls: 'kids' });
      kidsBox.hidden = true;
      var drawn = false;
      function setOpen(open) {
        if (!kids.length) return;
        if (open && !drawn) {
          kids.forEach(function (k) { kidsBox.appendChild(nodeEl(k, depth + 1)); });
          drawn = true;
        }
        kidsBox.hidden = !open;
        toggle.textContent = open ? '▾' : '▸';
        wrap.setAttribute('aria-expanded', open ? 'true' : 'false');
      }
      toggle.addEventListener('click', function () { setOpen(kidsBox.hidden); });
      row.addEventListener('dblclick', function () { setOpen(kidsBox.hidden); });
      if (spec.onPick) row.addEventListener('click', function (ev) { if (ev.target !== toggle) spec.onPick(node, row); });
      wrap.appendChild(row);
      wrap.appendChild(kidsBox);
      if (depth < (spec.open === undefined ? 1 : spec.open)) setOpen(true);
      return wrap;
    }

    if (spec.showRoot === false) {
      (spec.children(root) || []).forEach(function (k) { tree.appendChild(nodeEl(k, 0)); });
    } else {
      tree.appendChild(nodeEl(root, 0));
    }
    box.appendChild(tree);
    return tree;
  };
})();
