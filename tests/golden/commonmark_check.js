// Renders a default-layout report with markdown-it (CommonMark + GFM tables) and checks
// the structure a viewer shows: the headings (h1 report, h2 summary / stages / legend,
// h3 tables) and that every pipe table of the Markdown became an HTML table with the
// same number of columns in its head and body rows.
// usage: node commonmark_check.js REPORT.md   (markdown-it from tools/node_modules)
'use strict';
const fs = require('fs');
const path = require('path');
const MarkdownIt = require(path.join(__dirname, '../../tools/node_modules/markdown-it'));

const src = fs.readFileSync(process.argv[2], 'utf8');
const md = new MarkdownIt();
const tokens = md.parse(src, {});
const errs = [];
const headings = [];
let tables = 0;
for (let i = 0; i < tokens.length; i++) {
  const t = tokens[i];
  if (t.type === 'heading_open') headings.push(t.tag + ' ' + tokens[i + 1].content);
  if (t.type === 'table_open') {
    tables++;
    let cols = -1;
    for (let j = i + 1; tokens[j].type !== 'table_close'; j++) {
      if (tokens[j].type !== 'tr_open') continue;
      let n = 0;
      for (let k = j + 1; tokens[k].type !== 'tr_close'; k++)
        if (tokens[k].type === 'th_open' || tokens[k].type === 'td_open') n++;
      if (cols < 0) cols = n;
      else if (n !== cols) errs.push(`table ${tables}: a row of ${n} cells under ${cols} heads`);
    }
  }
}
const want = ['h1 Triage report', 'h2 What to try first', 'h2 Legend'];
for (const w of want) if (!headings.includes(w)) errs.push(`no heading "${w}"`);
if (!headings.some((h) => h.startsWith('h2 Stage: '))) errs.push('no "## Stage:" heading');
if (!headings.some((h) => h.startsWith('h3 Kernels: '))) errs.push('no "### Kernels:" heading');
const pipeTables = src.split('\n').filter((l) => /^\| (---|---:) \|/.test(l)).length;
if (pipeTables !== tables) errs.push(`${pipeTables} pipe tables in the text, ${tables} rendered`);
const html = md.render(src);
if (/<p>[^<]*\| --- \|/.test(html)) errs.push('a table delimiter row rendered as a paragraph');
for (const e of errs) console.log(e);
console.log(`${headings.length} headings, ${tables} tables, ${errs.length} problems`);
process.exit(errs.length ? 1 : 0);
