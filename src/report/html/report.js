/* triage HTML report: sorts, filters and expands tables the renderer wrote complete.
   Plain DOM, no framework, nothing fetched. Trace text is only ever read from and
   written to the page as text (textContent, attribute values), never parsed as HTML.
   The markup it relies on is listed in docs/html.md. */
(function () {
  'use strict';
  var doc = document;
  var collator = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });
  var FACET_LABELS = { cat: 'categories', status: 'statuses', kind: 'kinds' };
  /* Rows laid out at once, per table. Layout and moving rows, not comparing keys, are
     what cost on a big table: a 5,000-row table sorts all its rows, then shows (lays
     out and moves) only the first ROW_CAP that match until asked to show all. */
  var ROW_CAP = 100;
  var BIG_TABLE = 100; /* rows; see freezeColumns */
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

  /* Text keys become ranks once per column, so every sort compares numbers. Numbers
     inside the text compare by value ("P2" before "P10"): each digit run is written
     as its length, then its digits. */
  function textRanks(texts) {
    var norm = texts.map(function (t) {
      return t.toLowerCase().replace(/\d+/g, function (d) {
        d = d.replace(/^0+(?=\d)/, '');
        return String.fromCharCode(0x30 + Math.min(d.length, 60)) + d;
      });
    });
    var idx = norm.map(function (x, i) { return i; });
    idx.sort(function (a, b) { return norm[a] < norm[b] ? -1 : norm[a] > norm[b] ? 1 : 0; });
    var ranks = new Array(norm.length);
    for (var i = 0, r = 0; i < idx.length; i++) {
      if (i && norm[idx[i]] !== norm[idx[i - 1]]) r = i;
      ranks[idx[i]] = r;
    }
    return ranks;
  }

  /* A column sorts as numbers when the header says so (data-sort="num") or when every
     non-empty cell carries a numeric data-value; otherwise as text (data-value, if
     present, replaces the cell's text as its key). Empty number cells sort last. */
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
    var keys = numeric ? raw.map(function (x) { return x.v === null || x.v === '' ? NaN : +x.v; })
      : textRanks(raw.map(function (x) { return x.v !== null ? x.v : x.t; }));
    keys.numeric = numeric;
    st.keys[col] = keys;
    return keys;
  }

  function sortTable(st, col, dir) {
    var keys = columnKeys(st, col);
    var order = st.order.slice();
    order.sort(function (a, b) {
      var x = keys[a], y = keys[b];
      if (x !== x || y !== y) return (x !== x) - (y !== y) || a - b; /* NaN: empty, last */
      return (x - y) * dir || a - b;
    });
    st.order = order;
    applyFilter(st);
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

  function rowMatches(st, ri, terms, facets, showMinor) {
    if (!showMinor && st.minor[ri]) return false;
    for (var j = 0; j < facets.length; j++)
      if (facets[j].values[ri] !== facets[j].select.value) return false;
    if (!terms.length) return true;
    var text = rowText(st, st.rows[ri]);
    for (var k = 0; k < terms.length; k++) if (text.indexOf(terms[k]) < 0) return false;
    return true;
  }

  /* Shows the rows that match the text and facet filters, in the current order, at most
     ROW_CAP of them unless "show all" was asked for. */
  function applyFilter(st) {
    var terms = st.input.value.toLowerCase().split(/\s+/).filter(Boolean);
    var facets = st.facets.filter(function (f) { return f.select.value !== ''; });
    /* Minor rows are left out of the unfiltered view only: a filter searches them all. */
    var showMinor = terms.length > 0 || facets.length > 0 || (st.minorBox && st.minorBox.checked);
    var matched = 0, shown = 0, ref = st.body.firstElementChild;
    for (var i = 0; i < st.order.length; i++) {
      var ri = st.order[i], r = st.rows[ri];
      var ok = rowMatches(st, ri, terms, facets, showMinor);
      if (ok) matched++;
      ok = ok && (st.showAll || matched <= ROW_CAP);
      if (st.shown[ri] !== ok) {
        st.shown[ri] = ok;
        r.hidden = !ok;
        if (ok) addCopyButtons(r);
      }
      if (!ok) continue;
      /* Shown rows go to the top in order; hidden rows stay below in any order, so a
         sort moves at most ROW_CAP rows. */
      shown++;
      if (r === ref) ref = r.nextElementSibling;
      else st.body.insertBefore(r, ref);
    }
    var n = st.rows.length;
    st.count.textContent = (shown < matched ? 'first ' + shown + ' of ' + matched + ' matching rows'
      : matched === n ? n + ' rows' : matched + ' of ' + n + ' rows');
    st.more.hidden = shown === matched;
    st.more.textContent = 'Show all ' + matched;
  }

  /* Clears what hides row r: the filters, the minor-row switch if r is minor, and the
     cap if r is still past it. */
  function unhideRow(st, r) {
    st.input.value = '';
    st.facets.forEach(function (f) { f.select.value = ''; });
    if (st.minorBox && r.classList.contains('minor')) st.minorBox.checked = true;
    applyFilter(st);
    if (r.hidden) {
      st.showAll = true;
      applyFilter(st);
    }
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
    st.facets.push({ name: name, attr: attr, select: sel,
                     values: st.rows.map(function (r) { return r.getAttribute(attr); }) });
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
    st.more = el('button', 'more');
    st.more.type = 'button';
    st.more.addEventListener('click', function () { st.showAll = true; applyFilter(st); });
    bar.appendChild(st.more);
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

  /* A big table keeps the column widths of its first layout: with table-layout: fixed,
     a sort or a filter lays out rows without measuring every cell again, and the
     columns do not jump. Reads first, then writes, so the page lays out once. */
  function freezeColumns(list) {
    var widths = list.map(function (st) {
      var total = st.table.getBoundingClientRect().width || 1;
      return st.heads.map(function (th) { return th.getBoundingClientRect().width / total; });
    });
    list.forEach(function (st, k) {
      st.heads.forEach(function (th, j) { th.style.width = (100 * widths[k][j]).toFixed(2) + '%'; });
      st.table.style.tableLayout = 'fixed';
    });
  }

  function initTable(table) {
    var head = table.tHead && table.tHead.rows[table.tHead.rows.length - 1];
    if (!head || !table.tBodies[0]) return;
    var st = { table: table, body: table.tBodies[0], heads: Array.prototype.slice.call(head.cells),
               rows: bodyRows(table), keys: [], text: new Map(), facets: [], minorBox: null,
               showAll: false };
    st.order = st.rows.map(function (r, i) { return i; });
    st.minor = st.rows.map(function (r) { return r.classList.contains('minor'); });
    st.shown = new Array(st.rows.length); /* unknown: the first filter sets every row */
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

  /* A copy button after each short name (whose title holds the full name). Added to a
     table row when it is first shown, so hidden rows cost no layout. */
  /* The label is drawn by CSS (.copy::after), so the button adds no text to its row:
     sorting and filtering read textContent. */
  var copyProto = el('button', 'copy');
  copyProto.type = 'button';
  copyProto.title = 'Copy the full name';
  copyProto.setAttribute('aria-label', 'Copy the full name');

  function addCopyButtons(root) {
    if (root.triageCopy) return;
    root.triageCopy = true;
    var names = root.querySelectorAll('.name[title]');
    for (var i = 0; i < names.length; i++) {
      var n = names[i], next = n.nextElementSibling;
      if (!next || !next.classList.contains('copy'))
        n.parentNode.insertBefore(copyProto.cloneNode(true), n.nextSibling);
    }
  }

  function addCopyButtonsOutsideTables() {
    var names = doc.querySelectorAll('.name[title]');
    for (var i = 0; i < names.length; i++) {
      var n = names[i];
      if (!n.closest('table.sortable')) addCopyButtons(n.parentNode);
    }
  }

  function flashCopy(btn, ok) {
    btn.classList.add(ok ? 'done' : 'failed');
    setTimeout(function () { btn.classList.remove('done', 'failed'); }, 1200);
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
      if (r.hidden && owner) unhideRow(owner, r);
    }
    for (var d = target.parentElement; d; d = d.parentElement)
      if (d.tagName === 'DETAILS') d.open = true;
    target.scrollIntoView({ block: target.tagName === 'TR' ? 'center' : 'start' });
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
  freezeColumns(tables.filter(function (st) { return st.rows.length > BIG_TABLE; }));
  addCopyButtonsOutsideTables();
  doc.addEventListener('click', onClick);
  window.addEventListener('hashchange', function () { reveal(hashId()); });
  if (location.hash) reveal(hashId());
})();
