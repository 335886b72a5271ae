/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xprofs page, the router: #/ is the runs page (runs.js), #/run/<run>/<tab>
 * one run's tab (run.js and the view_*.js files). Parameters after '?' in
 * the fragment keep a view's state (trace window, selection, choices) so a
 * URL can be shared. body's data-loaded names what finished loading.
 */
'use strict';

(function () {
  var XP = window.XP;

  function route() {
    var where = XP.readHash();
    document.body.dataset.loaded = '';
    document.body.dataset.tab = '';
    var done = where.run ? XP.showRun(where.run, where.tab, where.params) : XP.showRuns(where.params);
    done.then(function () {
      if (!where.run) document.body.dataset.loaded = 'runs';
    }, function (e) {
      document.getElementById('main').appendChild(
        XP.el('p', { cls: 'muted na', text: 'error: ' + (e && e.message || e) }));
    });
  }

  window.addEventListener('hashchange', route);
  route();
})();
