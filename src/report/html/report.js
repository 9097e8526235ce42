/* triage HTML report: sorts, filters and expands tables the renderer wrote complete.
   Plain DOM, no framework, nothing fetched. Trace text is only ever read from and
   written to the page as text (textContent, attribute values), never parsed as HTML.
   The markup it relies on is listed in docs/html.md. */
(function () {
  'use strict';
  var doc = document;
  var collator = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });
  var FACET_LABELS = { cat: 'categories', status: 'statuses', kind: 'kinds' };
  var tables = [];

  doc.documentElement.classList.add('js');

  function bodyRows(table) {
    var body = table.tBodies[0];
    if (!body) return [];
    return Array.prototype.filter.call(body.rows, function (r) {
      return !r.classList.contains('empty');
    });
  }

  function el(tag, cls, text) {
    var e = doc.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  /* A column sorts as numbers when the header says so (data-sort="num") or when every
     non-empty cell carries a numeric data-value; otherwise as text, numbers inside the
     text compared by value ("P2" before "P10"). */
  function columnKeys(st, col) {
    if (st.keys[col]) return st.keys[col];
    var mode = st.heads[col].getAttribute('data-sort');
    var raw = st.rows.map(function (r) {
      var c = r.cells[col];
      if (!c) return { v: null, t: '' };
      return { v: c.getAttribute('data-value'), t: c.textContent.trim() };
    });
    var numeric = mode === 'num' || (mode !== 'text' && raw.every(function (x) {
      return x.v === null ? x.t === '' : x.v !== '' && !isNaN(+x.v);
    }) && raw.some(function (x) { return x.v !== null; }));
    var keys = raw.map(function (x) {
      if (numeric) return x.v === null || x.v === '' ? NaN : +x.v;
      return x.v !== null ? x.v : x.t;
    });
    keys.numeric = numeric;
    st.keys[col] = keys;
    return keys;
  }

  function sortTable(st, col, dir) {
    var keys = columnKeys(st, col), numeric = keys.numeric;
    var order = st.rows.map(function (r, i) { return i; });
    order.sort(function (a, b) {
      var x = keys[a], y = keys[b], c;
      if (numeric) {
        var xn = isNaN(x), yn = isNaN(y);
        c = xn || yn ? (xn === yn ? 0 : xn ? 1 : -1) : (x - y) * dir; /* empty cells last */
      } else {
        c = collator.compare(x, y) * dir;
      }
      return c || a - b;
    });
    var frag = doc.createDocumentFragment();
    for (var i = 0; i < order.length; i++) frag.appendChild(st.rows[order[i]]);
    st.body.appendChild(frag);
    st.heads.forEach(function (th, j) {
      if (j === col) th.setAttribute('aria-sort', dir > 0 ? 'ascending' : 'descending');
      else if (th.hasAttribute('aria-sort')) th.removeAttribute('aria-sort');
    });
  }

  function onSortClick(st, col) {
    var cur = st.heads[col].getAttribute('aria-sort');
    var dir;
    if (cur === 'ascending') dir = -1;
    else if (cur === 'descending') dir = 1;
    else dir = columnKeys(st, col).numeric ? -1 : 1; /* numbers: largest first */
    sortTable(st, col, dir);
  }

  function rowText(st, row) {
    var t = st.text.get(row);
    if (t === undefined) {
      t = row.textContent;
      var titled = row.querySelectorAll('[title]');
      for (var i = 0; i < titled.length; i++) t += ' ' + titled[i].getAttribute('title');
      t = t.toLowerCase();
      st.text.set(row, t);
    }
    return t;
  }

  function applyFilter(st) {
    var terms = st.input.value.toLowerCase().split(/\s+/).filter(Boolean);
    var showMinor = terms.length > 0 || (st.minorBox && st.minorBox.checked);
    var facets = st.facets.filter(function (f) { return f.select.value !== ''; });
    var shown = 0;
    for (var i = 0; i < st.rows.length; i++) {
      var r = st.rows[i];
      var ok = showMinor || !r.classList.contains('minor');
      for (var j = 0; ok && j < facets.length; j++)
        ok = r.getAttribute(facets[j].attr) === facets[j].select.value;
      if (ok && terms.length) {
        var text = rowText(st, r);
        for (var k = 0; ok && k < terms.length; k++) ok = text.indexOf(terms[k]) >= 0;
      }
      if (r.hidden === ok) r.hidden = !ok;
      if (ok) shown++;
    }
    st.count.textContent = shown === st.rows.length ? st.rows.length + ' rows'
      : shown + ' of ' + st.rows.length + ' rows';
  }

  function resetFilter(st) {
    st.input.value = '';
    st.facets.forEach(function (f) { f.select.value = ''; });
    if (st.minorBox) st.minorBox.checked = true;
    applyFilter(st);
  }

  function facetNames(table, rows) {
    var listed = table.getAttribute('data-facets');
    if (listed !== null) return listed.split(/\s+/).filter(Boolean);
    return rows.some(function (r) { return r.hasAttribute('data-cat'); }) ? ['cat'] : [];
  }

  function buildFacet(st, name, bar) {
    var attr = 'data-' + name, seen = {};
    st.rows.forEach(function (r) {
      var v = r.getAttribute(attr);
      if (v !== null && v !== '') seen[v] = (seen[v] || 0) + 1;
    });
    var values = Object.keys(seen).sort(collator.compare);
    if (values.length < 2) return;
    var sel = el('select');
    sel.setAttribute('aria-label', 'Show only rows of one of the ' + (FACET_LABELS[name] || name));
    sel.appendChild(new Option('all ' + (FACET_LABELS[name] || name), ''));
    values.forEach(function (v) { sel.appendChild(new Option(v + ' (' + seen[v] + ')', v)); });
    sel.addEventListener('change', function () { applyFilter(st); });
    bar.appendChild(sel);
    st.facets.push({ name: name, attr: attr, select: sel });
  }

  function buildToolbar(st) {
    var bar = el('div', 'toolbar');
    bar.setAttribute('role', 'search');
    st.input = el('input');
    st.input.type = 'search';
    st.input.placeholder = 'Filter rows (words, any column)';
    st.input.setAttribute('aria-label', 'Filter rows of this table');
    var pending = 0;
    st.input.addEventListener('input', function () {
      if (!pending) pending = requestAnimationFrame(function () { pending = 0; applyFilter(st); });
    });
    bar.appendChild(st.input);
    facetNames(st.table, st.rows).forEach(function (n) { buildFacet(st, n, bar); });
    var minor = st.rows.filter(function (r) { return r.classList.contains('minor'); }).length;
    if (minor) {
      var lab = el('label');
      st.minorBox = el('input');
      st.minorBox.type = 'checkbox';
      st.minorBox.addEventListener('change', function () { applyFilter(st); });
      lab.appendChild(st.minorBox);
      var note = st.table.getAttribute('data-minor-note');
      lab.appendChild(doc.createTextNode(' show ' + minor + ' more rows' + (note ? ' (' + note + ')' : '')));
      bar.appendChild(lab);
    }
    if (st.table.querySelector('details')) bar.appendChild(expandButton(st.table));
    st.count = el('span', 'count');
    st.count.setAttribute('aria-live', 'polite');
    bar.appendChild(st.count);
    var anchor = st.table.closest('.table-wrap') || st.table;
    anchor.parentNode.insertBefore(bar, anchor);
  }

  function expandButton(table) {
    var b = el('button', 'expand', 'Expand all');
    b.type = 'button';
    b.addEventListener('click', function () {
      var all = table.querySelectorAll('details'), open = b.textContent === 'Expand all';
      for (var i = 0; i < all.length; i++) all[i].open = open;
      b.textContent = open ? 'Collapse all' : 'Expand all';
    });
    return b;
  }

  function initTable(table) {
    var head = table.tHead && table.tHead.rows[table.tHead.rows.length - 1];
    if (!head || !table.tBodies[0]) return;
    var st = { table: table, body: table.tBodies[0], heads: Array.prototype.slice.call(head.cells),
               rows: bodyRows(table), keys: [], text: new Map(), facets: [], minorBox: null };
    st.heads.forEach(function (th, col) {
      if (th.getAttribute('data-sort') === 'none' || th.colSpan > 1) return;
      var b = el('button', 'sort');
      b.type = 'button';
      while (th.firstChild) b.appendChild(th.firstChild);
      th.appendChild(b);
      b.addEventListener('click', function () { onSortClick(st, col); });
    });
    buildToolbar(st);
    applyFilter(st);
    table.triageState = st;
    tables.push(st);
  }

  function addCopyButtons() {
    var proto = el('button', 'copy', 'copy');
    proto.type = 'button';
    proto.title = 'Copy the full name';
    var names = doc.querySelectorAll('.name[title]');
    for (var i = 0; i < names.length; i++) {
      var n = names[i];
      n.parentNode.insertBefore(proto.cloneNode(true), n.nextSibling);
    }
  }

  function flashCopy(btn, ok) {
    btn.textContent = ok ? 'copied' : 'copy failed';
    btn.classList.toggle('done', ok);
    setTimeout(function () { btn.textContent = 'copy'; btn.classList.remove('done'); }, 1200);
  }

  function copyText(text, btn) {
    function fallback() {
      var ta = el('textarea', 'offscreen');
      ta.value = text;
      ta.setAttribute('readonly', '');
      doc.body.appendChild(ta);
      ta.select();
      var ok = false;
      try { ok = doc.execCommand('copy'); } catch (e) { ok = false; }
      doc.body.removeChild(ta);
      flashCopy(btn, ok);
    }
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(function () { flashCopy(btn, true); }, fallback);
    } else {
      fallback();
    }
  }

  /* Make an element reachable: clear the filters hiding its row, open the <details>
     around it, and bring it to the middle of the screen. */
  function reveal(id) {
    var target = id ? doc.getElementById(id) : null;
    if (!target) return;
    for (var r = target.closest('tr'); r; r = r.parentElement && r.parentElement.closest('tr')) {
      var owner = (r.closest('table.sortable') || {}).triageState;
      if (r.hidden && owner) resetFilter(owner);
    }
    for (var d = target.parentElement; d; d = d.parentElement)
      if (d.tagName === 'DETAILS') d.open = true;
    target.scrollIntoView({ block: 'center' });
    target.classList.remove('flash');
    void target.offsetWidth; /* restart the animation */
    target.classList.add('flash');
  }

  function hashId() {
    try { return decodeURIComponent(location.hash.slice(1)); } catch (e) { return ''; }
  }

  function legendFilter(li) {
    var fig = li.closest('[data-table]');
    var table = fig && doc.getElementById(fig.getAttribute('data-table'));
    var st = table && table.triageState;
    if (!st) return;
    var f = st.facets.filter(function (x) { return x.name === 'cat'; })[0];
    if (!f) return;
    var v = li.getAttribute('data-cat');
    f.select.value = f.select.value === v ? '' : v; /* a second click shows all again */
    applyFilter(st);
    (table.closest('.table-wrap') || table).scrollIntoView({ block: 'nearest' });
  }

  function onClick(e) {
    var t = e.target;
    if (!(t instanceof Element)) return;
    if (t.classList.contains('copy')) {
      e.preventDefault();
      var name = t.previousElementSibling;
      if (name) copyText(name.getAttribute('title'), t);
      return;
    }
    var li = t.closest('.legend li[data-cat]');
    if (li) { legendFilter(li); return; }
    var a = t.closest('a[href^="#"]');
    if (a && a.getAttribute('href') === location.hash) { e.preventDefault(); reveal(hashId()); }
  }

  var sortable = doc.querySelectorAll('table.sortable');
  for (var i = 0; i < sortable.length; i++) initTable(sortable[i]);
  addCopyButtons();
  doc.addEventListener('click', onClick);
  window.addEventListener('hashchange', function () { reveal(hashId()); });
  if (location.hash) reveal(hashId());
})();
