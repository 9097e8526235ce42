// Drives the HTML report in headless Debian Chromium (playwright-core, pinned in
// tools/package.json, pointed at the system browser; it downloads none).
//
// usage: node browser_check.mjs MANIFEST.json
// The manifest is a list of pages: {"page", "screenshot", "expect_fail": [...],
// "require": [...], "checks": [...], "xss_text": "...", "min_rows": N, "perf": true};
// "checks" limits the interactive checks run (network and console are always judged). A check that finds
// nothing to act on (a one-row table cannot show sorting) is n/a, which fails only on a
// page that lists it in "require". Per page it checks:
//   rows     every sortable table has rows; the kernel table at least min_rows
//   sort     clicking a header reorders rows by that column, a second click reverses
//   filter   the text filter and the category filter hide non-matching rows
//   summary  a "What to try first" link brings its row on screen, even when filtered out
//   evidence every "What to try first" evidence link (a.ev) names an element on the page;
//            the page's "evidence_kinds" (e.g. ["idle", "wait"]) must each have a link
//   copy     a copy button puts the full name on the clipboard
//   details  "Expand all" opens every evidence <details>
//   xss      no script from page text ran: the flag the payloads set stays unset, no
//            dialog, one <script> element, no on* attribute, no javascript: link; the
//            payload text (xss_text) is on the page as text
//   network  no request other than the page itself
//   console  no console error, no uncaught exception
//   perf     sorting the 5,000-row kernel table takes < 200 ms (sort + layout)
// A page may list checks it must FAIL (expect_fail): the self-check page is broken on
// purpose, so the harness proves it can see each failure.
// Exit 0 all as expected, 1 otherwise, 77 when no Chromium or playwright-core is found.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL, fileURLToPath } from 'node:url';

const SKIP = 77;
const SORT_BUDGET_MS = 200;
const here = path.dirname(fileURLToPath(import.meta.url));
const chromiumPath = process.env.TRIAGE_CHROMIUM || '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];

async function loadPlaywright() {
  const mod = path.join(here, '..', '..', 'tools', 'node_modules', 'playwright-core', 'index.mjs');
  if (!fs.existsSync(mod)) return null;
  return (await import(pathToFileURL(mod).href)).chromium;
}

// ---- in-page helpers (run inside the browser) ------------------------------------------

function visibleRowIds(tableId) {
  const t = document.getElementById(tableId);
  return Array.from(t.tBodies[0].rows).filter((r) => !r.hidden).map((r) => r.id || r.rowIndex);
}

// The sort key of column col of every shown row, top to bottom (with all=true: of every
// row, hidden ones too, in no particular order).
function columnValues({ id, col, all }) {
  const t = document.getElementById(id);
  return Array.from(t.tBodies[0].rows).filter((r) => !r.classList.contains('empty') && (all || !r.hidden)).map((r) => {
    const c = r.cells[col];
    const v = c && c.getAttribute('data-value');
    return v === null ? (c ? c.textContent.trim() : '') : Number(v);
  });
}

function allRowIds(tableId) {
  return Array.from(document.getElementById(tableId).tBodies[0].rows).filter((r) => !r.hidden)
    .map((r) => r.id || r.rowIndex);
}

// ---- checks ----------------------------------------------------------------------------

async function pickKernelTable(page) {
  return page.evaluate(() => {
    const tables = Array.from(document.querySelectorAll('table.sortable'));
    const k = tables.find((t) => t.classList.contains('kernels') && t.tBodies[0].rows.length > 2)
      || tables.find((t) => t.tBodies[0].rows.length > 2);
    return k ? k.id : null;
  });
}

// Ticks "show N more rows", so the checks see the minor rows too (up to the row cap).
async function showMinorRows(page, tid) {
  await page.evaluate((id) => {
    const box = document.getElementById(id).closest('.table-wrap').previousElementSibling
      .querySelector('input[type="checkbox"]');
    if (box && !box.checked) box.click();
  }, tid);
}

async function checkRows(page, spec) {
  const r = await page.evaluate(() => Array.from(document.querySelectorAll('table.sortable')).map((t) => ({
    id: t.id, rows: Array.from(t.tBodies[0].rows).filter((x) => !x.classList.contains('empty')).length,
    kernels: t.classList.contains('kernels'),
  })));
  if (!r.length) return 'no sortable table on the page';
  const kt = r.filter((t) => t.kernels);
  if (!kt.length || kt.every((t) => t.rows === 0)) return 'no kernel rows';
  const most = Math.max(...kt.map((t) => t.rows));
  if (spec.min_rows && most < spec.min_rows) return `kernel table has ${most} rows, want >= ${spec.min_rows}`;
  return null;
}

async function clickHeader(page, tableId, col) {
  await page.locator(`#${tableId} thead th:nth-child(${col + 1}) button.sort`).click();
}

// The page's text order, written independently: case-insensitive, and where both strings
// have digits at the same place, the digit runs compare by value ("P2" before "P10").
function textCompare(a, b) {
  a = a.toLowerCase(); b = b.toLowerCase();
  let i = 0, j = 0;
  const digit = (c) => c >= '0' && c <= '9';
  while (i < a.length && j < b.length) {
    if (digit(a[i]) && digit(b[j])) {
      let ie = i, je = j;
      while (ie < a.length && digit(a[ie])) ie++;
      while (je < b.length && digit(b[je])) je++;
      const x = BigInt(a.slice(i, ie)), y = BigInt(b.slice(j, je));
      if (x !== y) return x < y ? -1 : 1;
      i = ie; j = je;
    } else {
      if (a[i] !== b[j]) return a[i] < b[j] ? -1 : 1;
      i++; j++;
    }
  }
  return (a.length - i) - (b.length - j);
}

function monotonic(vals, dir) {
  for (let i = 1; i < vals.length; i++) {
    const a = vals[i - 1], b = vals[i];
    if (typeof a === 'number' && typeof b === 'number') {
      if (Number.isNaN(a) || Number.isNaN(b)) {
        if (Number.isNaN(a) && !Number.isNaN(b)) return `row ${i - 1} empty before row ${i} (${b})`;
        continue;
      }
      if ((a - b) * dir > 0) return `rows ${i - 1} and ${i} out of order (${a} / ${b})`;
    } else if (textCompare(String(a), String(b)) * dir > 0) {
      return `rows ${i - 1} and ${i} out of order (${a} / ${b})`;
    }
  }
  return null;
}

// Clicks every sortable header of the kernel table: after each click the shown rows must
// be in order of that column, and at least one number column and one text column must
// change the order. Then, on each of those two, a second click must reverse the order.
async function checkSort(page) {
  const tid = await pickKernelTable(page);
  if (!tid) return 'n/a';
  await showMinorRows(page, tid);
  const heads = await page.evaluate((id) => Array.from(document.getElementById(id).tHead.rows[0].cells)
    .map((th) => ({ text: th.textContent.trim(), sortable: !!th.querySelector('button.sort') })), tid);
  const aria = (col) => page.getAttribute(`#${tid} thead th:nth-child(${col + 1})`, 'aria-sort');
  const changed = { num: null, text: null };
  for (let col = 0; col < heads.length; col++) {
    if (!heads[col].sortable) continue;
    const before = await page.evaluate(allRowIds, tid);
    await clickHeader(page, tid, col);
    const vals = await page.evaluate(columnValues, { id: tid, col });
    const bad = monotonic(vals, (await aria(col)) === 'ascending' ? 1 : -1);
    if (bad) return `"${heads[col].text}" ${await aria(col)}: ${bad}`;
    const kind = vals.every((v) => typeof v === 'number') ? 'num' : 'text';
    const distinct = new Set(vals.map(String)).size > 1;
    const after = await page.evaluate(allRowIds, tid);
    if (distinct && JSON.stringify(after) !== JSON.stringify(before) && changed[kind] === null) changed[kind] = col;
  }
  for (const kind of ['num', 'text']) {
    const col = changed[kind];
    if (col === null) return `no ${kind === 'num' ? 'number' : 'text'} column changed the row order`;
    await clickHeader(page, tid, col);
    const [first, aria1] = [await page.evaluate(allRowIds, tid), await aria(col)];
    await clickHeader(page, tid, col);
    const [second, aria2] = [await page.evaluate(allRowIds, tid), await aria(col)];
    if (aria1 === aria2) return `clicking "${heads[col].text}" again did not reverse it (${aria2})`;
    const bad = monotonic(await page.evaluate(columnValues, { id: tid, col }), aria2 === 'ascending' ? 1 : -1);
    if (bad) return `"${heads[col].text}" ${aria2}: ${bad}`;
    if (JSON.stringify(second) === JSON.stringify(first)) return `reversing "${heads[col].text}" left the order unchanged`;
  }
  return null;
}

async function visibleCount(page, tid) {
  return (await page.evaluate(visibleRowIds, tid)).length;
}

// For every row (hidden ones too): is it shown, does it hold every word of term in its
// text or a title, and its category.
function rowFacts({ id, term }) {
  const words = term.toLowerCase().split(/\s+/).filter(Boolean);
  return Array.from(document.getElementById(id).tBodies[0].rows).map((r) => {
    let s = r.textContent;
    r.querySelectorAll('[title]').forEach((e) => { s += ' ' + e.getAttribute('title'); });
    s = s.toLowerCase();
    return { shown: !r.hidden, has: words.every((w) => s.includes(w)), cat: r.getAttribute('data-cat') };
  });
}

async function settle(page) {
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => r())));
}

// The text filter shows only rows holding every word typed (some rows of the table do
// not, and they must all be hidden); the category filter shows only that category.
async function checkFilter(page) {
  const tid = await pickKernelTable(page);
  if (!tid) return 'n/a';
  await showMinorRows(page, tid);
  const toolbar = `.toolbar:has(+ .table-wrap #${tid})`;
  const box = page.locator(`${toolbar} input[type="search"]`);
  const sel = page.locator(`${toolbar} select`).first();
  const all = await visibleCount(page, tid);
  const term = await page.evaluate((id) => {
    const rows = Array.from(document.getElementById(id).tBodies[0].rows).filter((r) => !r.hidden);
    const name = rows[rows.length - 1].querySelector('.name');
    return (name ? name.textContent : rows[rows.length - 1].cells[0].textContent).trim().slice(0, 14);
  }, tid);
  try {
    await box.fill(term);
    await settle(page);
    let facts = await page.evaluate(rowFacts, { id: tid, term });
    if (!facts.some((f) => f.shown)) return `filter "${term}" hid every row, including the one it came from`;
    if (facts.some((f) => f.shown && !f.has)) return `filter "${term}" left a row that does not contain it`;
    if (!facts.some((f) => !f.has)) return `every row contains "${term}": no row for the filter to hide`;
    await box.fill('');
    await settle(page);
    if (await visibleCount(page, tid) !== all) return 'clearing the filter did not bring the rows back';
    if (!(await sel.count())) return null;
    const value = await sel.evaluate((s) => s.options[1].value);
    await sel.selectOption(value);
    facts = await page.evaluate(rowFacts, { id: tid, term: '' });
    if (!facts.some((f) => f.shown)) return `category "${value}" shows no row`;
    if (facts.some((f) => f.shown && f.cat !== value)) return `category "${value}" shows rows of another category`;
    if (!facts.some((f) => f.cat !== value)) return `every row is "${value}": no row for the filter to hide`;
    return null;
  } finally {
    await box.fill('');
    if (await sel.count()) await sel.selectOption('');
    await settle(page);
  }
}

async function checkSummary(page) {
  const link = page.locator('.summary a[href^="#"]').first();
  // A flat trace where nothing clears the summary's bars has no link: not applicable
  // there, and a failure on every page that lists "summary" in its "require".
  if (!(await link.count())) return 'n/a';
  const href = await link.getAttribute('href');
  const id = decodeURIComponent(href.slice(1));
  // Hide the target first with a filter that matches nothing: the link must bring it back.
  const tid = await page.evaluate((i) => {
    const t = document.getElementById(i);
    const table = t && t.closest('table.sortable');
    return table ? table.id : null;
  }, id);
  if (tid) {
    await page.locator(`.toolbar:has(+ .table-wrap #${tid}) input[type="search"]`).fill('zzzz-no-such-row');
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => r())));
  }
  await page.evaluate(() => window.scrollTo(0, 0));
  await link.click();
  await page.waitForTimeout(150);
  const st = await page.evaluate((i) => {
    const t = document.getElementById(i);
    if (!t) return { missing: true };
    const r = t.getBoundingClientRect();
    const wrap = t.closest('.table-wrap');
    const w = wrap ? wrap.getBoundingClientRect() : { top: 0, bottom: innerHeight };
    return { hash: location.hash, hidden: t.hidden || t.offsetParent === null, top: r.top, bottom: r.bottom,
      vh: innerHeight, wtop: w.top, wbottom: w.bottom, target: t.matches(':target'), row: t.tagName === 'TR' };
  }, id);
  if (st.missing) return `summary link ${href} names no element`;
  if (st.hash !== href) return `location.hash is ${st.hash}, want ${href}`;
  if (st.hidden) return `row ${href} is still hidden after following its link`;
  // A row must be wholly on screen; a taller target (a section) must start on screen.
  const bottom = st.row ? st.bottom : st.top;
  if (st.top < 0 || bottom > st.vh || st.top < st.wtop - 1 || bottom > st.wbottom + 1)
    return `${href} is not on screen (top ${st.top}, bottom ${st.bottom}, viewport ${st.vh})`;
  if (!st.target) return `row ${href} is not the :target`;
  return null;
}

async function checkEvidence(page, spec) {
  const links = await page.evaluate(() => Array.from(document.querySelectorAll('.summary a.ev')).map((a) => {
    const href = a.getAttribute('href') || '';
    let id = '';
    try { id = decodeURIComponent(href.slice(1)); } catch (e) { id = ''; }
    return { href, found: href.startsWith('#') && document.getElementById(id) !== null };
  }));
  if (!links.length) return 'n/a';
  const bad = links.filter((l) => !l.found).map((l) => l.href);
  if (bad.length) return `${bad.length} of ${links.length} evidence links name no element: ${bad.slice(0, 5).join(', ')}`;
  const hrefs = links.map((l) => l.href);
  const missing = (spec.evidence_kinds || []).filter((k) => !hrefs.some((h) => h.includes(`#${k}-`) || h.match(new RegExp(`^#r\\d+-${k}-`))));
  if (missing.length) return `no evidence link of kind ${missing.join(', ')} (links: ${hrefs.join(', ')})`;
  return null;
}

async function checkCopy(page) {
  const btn = page.locator('button.copy').first();
  if (!(await btn.count())) return 'no copy button';
  const full = await btn.evaluate((b) => b.previousElementSibling.getAttribute('title'));
  await btn.scrollIntoViewIfNeeded();
  await btn.click();
  await page.waitForTimeout(100);
  const got = await page.evaluate(() => navigator.clipboard.readText().catch((e) => 'ERR ' + e));
  if (got !== full) return `clipboard holds ${JSON.stringify(got.slice(0, 80))}, want the full name`;
  return null;
}

async function checkDetails(page) {
  const btn = page.locator('.toolbar button.expand').first();
  if (!(await btn.count())) return 'n/a';
  await btn.click();
  const closed = await page.evaluate(() => {
    const b = document.querySelector('.toolbar button.expand');
    const table = b.parentNode.nextElementSibling.querySelector('table');
    return Array.from(table.querySelectorAll('details')).filter((d) => !d.open).length;
  });
  if (closed) return `${closed} <details> still closed after "Expand all"`;
  await btn.click();
  return null;
}

async function checkXss(page, spec, log) {
  const r = await page.evaluate((text) => {
    const out = { flag: window.__triage_xss, scripts: document.scripts.length, onattr: [], links: [] };
    for (const e of document.querySelectorAll('*')) {
      for (const a of e.attributes) {
        if (/^on/i.test(a.name)) out.onattr.push(`${e.tagName.toLowerCase()} ${a.name}`);
        if (/^(href|src|action|formaction|xlink:href)$/i.test(a.name) && !/^(#|data:)/.test(a.value.trim()))
          out.links.push(`${e.tagName.toLowerCase()} ${a.name}=${a.value.slice(0, 40)}`);
      }
    }
    if (text) {
      let all = document.documentElement.textContent;
      document.querySelectorAll('[title]').forEach((e) => { all += e.getAttribute('title'); });
      out.textFound = all.includes(text);
    }
    return out;
  }, spec.xss_text || null);
  const bad = [];
  if (r.flag !== undefined) bad.push(`payload ran (window.__triage_xss = ${r.flag})`);
  if (log.dialogs.length) bad.push(`dialog opened: ${log.dialogs[0]}`);
  if (r.scripts !== 1) bad.push(`${r.scripts} <script> elements, want 1`);
  if (r.onattr.length) bad.push(`event-handler attributes: ${r.onattr.slice(0, 3).join(', ')}`);
  if (r.links.length) bad.push(`links that leave the page: ${r.links.slice(0, 3).join(', ')}`);
  if (spec.xss_text && !r.textFound) bad.push(`payload text ${JSON.stringify(spec.xss_text)} is not on the page as text`);
  return bad.length ? bad.join('; ') : null;
}

// The shown values must be the first ones of all values in that order: proof that the
// sort ordered every row, not only the shown ones.
function topOf(every, shown, dir) {
  const cmp = (a, b) => {
    if (typeof a === 'number' && typeof b === 'number') {
      if (Number.isNaN(a) || Number.isNaN(b)) return Number.isNaN(a) - Number.isNaN(b);
      return (a - b) * dir;
    }
    return textCompare(String(a), String(b)) * dir;
  };
  const want = every.slice().sort(cmp).slice(0, shown.length);
  for (let i = 0; i < want.length; i++) {
    if (cmp(want[i], shown[i]) !== 0) return `shown row ${i} is ${shown[i]}, but ${want[i]} sorts there among all rows`;
  }
  return null;
}

// Sorting cost on the 5,000-row kernel table, per header click: main-thread CPU time
// (Chrome's ThreadTime over the click, the forced layout and the next frame's paint) is
// the budget, because this machine is shared: wall time is logged too but other
// processes inflate it. Every row must be in order after the click (the sort orders all
// rows; the page lays out at most its row cap of them).
async function checkPerf(page, log) {
  // A fresh page: the checks before may have asked for every row (a summary link to a
  // row past the cap shows all), and the budget is the capped view's.
  await page.reload({ waitUntil: 'load' });
  const tid = await page.evaluate(() => {
    const t = Array.from(document.querySelectorAll('table.sortable.kernels'))
      .sort((a, b) => b.tBodies[0].rows.length - a.tBodies[0].rows.length)[0];
    return t ? t.id : null;
  });
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Performance.enable', { timeDomain: 'threadTicks' });
  const cpu = async () => (await cdp.send('Performance.getMetrics')).metrics
    .find((m) => m.name === 'ThreadTime').value * 1000;
  const heads = await page.evaluate((id) => Array.from(document.getElementById(id).tHead.rows[0].cells)
    .map((th) => (th.querySelector('button.sort') ? th.textContent.trim() : null)), tid);
  const times = [];
  const sortOnce = async (col) => {
    const c0 = await cpu();
    const wall = await page.evaluate(async ({ id, c }) => {
      const b = document.getElementById(id).tHead.rows[0].cells[c].querySelector('button.sort');
      const t0 = performance.now();
      b.click();
      void document.body.offsetHeight; // sort + style + layout
      await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0))); // + paint
      return performance.now() - t0;
    }, { id: tid, c: col });
    const ms = (await cpu()) - c0;
    if (process.env.TRIAGE_HTML_PERF_DEBUG) console.log(`  debug ${heads[col]} ${ms.toFixed(1)} ms CPU, ${wall.toFixed(1)} ms wall`);
    const vals = await page.evaluate(columnValues, { id: tid, col });
    const every = await page.evaluate(columnValues, { id: tid, col, all: true });
    const aria = await page.getAttribute(`#${tid} thead th:nth-child(${col + 1})`, 'aria-sort');
    const dir = aria === 'ascending' ? 1 : -1;
    return { col: heads[col], cpu: ms, wall, rows: every.length, bad: monotonic(vals, dir) || topOf(every, vals, dir) };
  };
  // Every row must match, so the sort has all 5,000 to order: no filter, minor rows on.
  await page.evaluate((id) => {
    const bar = document.getElementById(id).closest('.table-wrap').previousElementSibling;
    const input = bar.querySelector('input[type="search"]');
    input.value = '';
    input.dispatchEvent(new Event('input'));
    bar.querySelectorAll('select').forEach((s) => { s.value = ''; s.dispatchEvent(new Event('change')); });
    const box = bar.querySelector('input[type="checkbox"]');
    if (box && !box.checked) box.click();
  }, tid);
  await settle(page);
  // Per column three clicks (descending, ascending, descending); its cost is the median.
  const median = (xs) => xs.slice().sort((a, b) => a - b)[xs.length >> 1];
  for (let col = 0; col < heads.length; col++) {
    if (heads[col] === null) continue;
    const runs = [];
    for (let k = 0; k < 3; k++) runs.push(await sortOnce(col));
    times.push({ ...runs[0], bad: runs.map((r) => r.bad).find((b) => b) || null,
      cpu: median(runs.map((r) => r.cpu)), wall: median(runs.map((r) => r.wall)),
      cpuMax: Math.max(...runs.map((r) => r.cpu)) });
  }
  const shown = (await page.evaluate(visibleRowIds, tid)).length;
  const worst = times.reduce((a, b) => (b.cpu > a.cpu ? b : a));
  log.info.push(`perf: ${times[0].rows} rows sorted, ${shown} laid out; ${times.length} columns x 3 clicks; ` +
    `median main-thread CPU per click (sort + layout + paint): ` +
    times.map((t) => `${t.col} ${t.cpu.toFixed(0)}`).join(', ') + ` ms; slowest single click ` +
    `${Math.max(...times.map((t) => t.cpuMax)).toFixed(0)} ms CPU, ${Math.max(...times.map((t) => t.wall)).toFixed(0)} ms median wall`);
  // For the record: the same with every row laid out ("Show all").
  await page.evaluate((id) => {
    const bar = document.getElementById(id).closest('.table-wrap').previousElementSibling;
    const box = bar.querySelector('input[type="checkbox"]');
    if (box && !box.checked) box.click();
    const more = bar.querySelector('button.more');
    if (more && !more.hidden) more.click();
  }, tid);
  const all = await sortOnce(heads.findIndex((h) => h !== null));
  log.info.push(`perf: after "Show all", ${(await page.evaluate(visibleRowIds, tid)).length} rows laid out: ` +
    `one sort ${all.cpu.toFixed(0)} ms CPU, ${all.wall.toFixed(0)} ms wall (not budgeted)`);
  await cdp.detach();
  if (times[0].rows < 5000) return `the table has ${times[0].rows} rows, want 5000`;
  const unordered = times.find((x) => x.bad);
  if (unordered) return `after sorting by "${unordered.col}": ${unordered.bad}`;
  if (worst.cpu >= SORT_BUDGET_MS) return `sorting by "${worst.col}" took ${worst.cpu.toFixed(1)} ms CPU (median; budget ${SORT_BUDGET_MS})`;
  return null;
}

// ---- per page --------------------------------------------------------------------------

async function runPage(browser, spec) {
  const context = await browser.newContext({ viewport: { width: 1400, height: 1000 }, offline: true });
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  const pageUrl = pathToFileURL(path.resolve(spec.page)).href;
  const log = { requests: [], console: [], dialogs: [], info: [] };
  await context.route(/^(https?|wss?|ftp):/, (route) => route.abort());
  const page = await context.newPage();
  // A loaded machine (CI on 2 shared cores) can take longer than Playwright's 30 s
  // default to load a 2 MB page; the budgets below are CPU time, not these limits.
  page.setDefaultNavigationTimeout(180000);
  page.setDefaultTimeout(180000);
  page.on('request', (req) => {
    const u = req.url();
    if (u !== pageUrl && !u.startsWith('data:')) log.requests.push(u);
  });
  page.on('console', (m) => { if (m.type() === 'error') log.console.push(m.text()); });
  page.on('pageerror', (e) => log.console.push(`uncaught: ${e.message}`));
  page.on('dialog', (d) => { log.dialogs.push(`${d.type()}: ${d.message()}`); d.dismiss().catch(() => {}); });

  const t0 = Date.now();
  await page.goto(pageUrl, { waitUntil: 'load' });
  log.info.push(`loaded in ${Date.now() - t0} ms`);
  const results = {};
  const run = async (name, fn) => {
    if (spec.checks && !spec.checks.includes(name)) return;
    const t = Date.now();
    try { results[name] = await fn(); } catch (e) { results[name] = `threw: ${e.message.split('\n')[0]}`; }
    if (Date.now() - t > 2000) log.info.push(`${name} took ${Date.now() - t} ms`);
  };
  await run('rows', () => checkRows(page, spec));
  await run('sort', () => checkSort(page));
  await run('filter', () => checkFilter(page));
  await run('details', () => checkDetails(page));
  await run('copy', () => checkCopy(page));
  await run('evidence', () => checkEvidence(page, spec));
  await run('summary', () => checkSummary(page));
  await run('xss', () => checkXss(page, spec, log));
  if (spec.perf) await run('perf', () => checkPerf(page, log)); /* last: it shows all rows */
  await page.evaluate(() => window.scrollTo(0, 0));
  if (spec.screenshot) {
    const tall = await page.evaluate(() => document.documentElement.scrollHeight);
    await page.screenshot({ path: spec.screenshot, fullPage: tall <= 8000 });
  }
  await page.waitForTimeout(50);
  results.network = log.requests.length ? `requests: ${log.requests.slice(0, 3).join(', ')}` : null;
  results.console = log.console.length ? `errors: ${log.console.slice(0, 3).join(' | ')}` : null;
  await context.close();
  return { results, log };
}

function judge(spec, results) {
  const expectFail = new Set(spec.expect_fail || []);
  const required = new Set(spec.require || []);
  const lines = [];
  let ok = true;
  for (const [name, res] of Object.entries(results)) {
    const failed = res !== null && res !== 'n/a';
    if (res === 'n/a' && required.has(name)) { ok = false; lines.push(`  FAIL  ${name}: not applicable on a page that must cover it`); }
    else if (res === 'n/a') lines.push(`  n/a   ${name}`);
    else if (failed && expectFail.has(name)) lines.push(`  ok    ${name} (fails as it must: ${res})`);
    else if (failed) { ok = false; lines.push(`  FAIL  ${name}: ${res}`); }
    else if (expectFail.has(name)) { ok = false; lines.push(`  FAIL  ${name}: passed on a page where it must fail`); }
    else lines.push(`  ok    ${name}`);
  }
  return { ok, lines };
}

async function main() {
  const manifest = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  const chromium = await loadPlaywright();
  if (!chromium) {
    console.log('SKIPPED: playwright-core is not installed in tools/node_modules (npm ci in tools/)');
    process.exit(SKIP);
  }
  if (!fs.existsSync(chromiumPath)) {
    console.log(`SKIPPED: no Chromium at ${chromiumPath} (tools/install-deps.sh --with-tests installs it)`);
    process.exit(SKIP);
  }
  const browser = await chromium.launch({ executablePath: chromiumPath, args: CHROMIUM_ARGS });
  console.log(`browser: Chromium ${browser.version()} (${chromiumPath})`);
  let ok = true;
  for (const spec of manifest) {
    const started = Date.now();
    const { results, log } = await runPage(browser, spec);
    log.info.push(`checked in ${Date.now() - started} ms`);
    const j = judge(spec, results);
    console.log(`${j.ok ? 'PASS' : 'FAIL'} ${spec.page}`);
    for (const l of [...j.lines, ...log.info.map((x) => `  info  ${x}`)]) console.log(l);
    if (spec.screenshot) console.log(`  info  screenshot ${spec.screenshot}`);
    ok = ok && j.ok;
  }
  await browser.close();
  process.exit(ok ? 0 : 1);
}

main().catch((e) => { console.error(e); process.exit(1); });
