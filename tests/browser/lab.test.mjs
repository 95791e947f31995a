// JupyterLab in headless Chromium: open a workshop notebook, Run > Run All Cells,
// wait for the kernel to finish, and check that every ECharts chart drew (a canvas
// or svg inside each chart element) with no request leaving localhost. A screenshot
// goes to tests/artifacts/.
//
//   cd tests/browser && npm ci && node --test lab.test.mjs
//
// Environment:
//   NOTEBOOK        notebook path under the server root (default 04-simulation.ipynb), or
//                   several separated by spaces: one test each, in one JupyterLab and
//                   browser, each notebook in a workspace of its own (no tab of an
//                   earlier one restored) and its kernel shut down after its test
//   NOTEBOOK_ROOT   server root when the test starts JupyterLab (default <repo>/notebooks)
//   MIN_CHARTS      fail if fewer chart elements are found (default: 1 for a notebook
//                   with a cell tagged chart, else 0)
//   MIN_TABLES      fail if fewer rendered tables are found (default 1); every table must
//                   have its header and cells, and no Markdown may be typeset as math
//   RUN_TIMEOUT_MS  time allowed for Run All (default 600000)
//   RENDERED        set to 1 to open a notebook the headless run already executed
//                   (NOTEBOOK_ROOT holds it, signed with `jupyter trust`) instead of
//                   Run All: the same checks of what JupyterLab draws from its outputs,
//                   without executing the notebook a second time (make test does this
//                   for all but $(BROWSER_LIVE); the checks still fail on a cell that
//                   has no execution count, a chart that does not draw, a broken table)
//   TABLE_SHOTS     set to 1 to save a screenshot of every output table in ARTIFACTS
//   README_SHOT     a path: save there a picture of the first cell whose output has both a
//                   chart and a table (the README's screenshot, `make readme-shot`), and
//                   beside it <path>.sha256, the SHA-256 of the notebook it shows, which
//                   queuekit's TestReadmeScreenshotShowsTheCurrentNotebook compares
//   LAB_URL, CHROMIUM, ARTIFACTS: see harness.mjs
// The kernel needs DynamoDB: run it through `make test`/`make browser`, or export
// AWS_ENDPOINT_URL_DYNAMODB yourself.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join, resolve, basename } from 'node:path';
import { ROOT, ARTIFACTS, isLocal, openLab } from './harness.mjs';

const NOTEBOOKS = (process.env.NOTEBOOK || '04-simulation.ipynb').split(/\s+/).filter(Boolean);
const NOTEBOOK_ROOT = resolve(process.env.NOTEBOOK_ROOT || join(ROOT, 'notebooks'));
// The charts a notebook must draw: MIN_CHARTS, or 1 where a cell is tagged chart.
const minCharts = (nb) => (process.env.MIN_CHARTS !== undefined && process.env.MIN_CHARTS !== ''
  ? Number(process.env.MIN_CHARTS)
  : Number(readFileSync(join(ROOT, 'notebooks', nb), 'utf8').includes('"chart"')));
const RUN_TIMEOUT_MS = Number(process.env.RUN_TIMEOUT_MS || 600000);
const RENDERED = process.env.RENDERED === '1';

let h; // the harness: h.lab, h.context, h.external
let lab;
let context;
let external;

before(async () => {
  h = await openLab({
    root: NOTEBOOK_ROOT,
    name: NOTEBOOKS.length === 1 ? basename(NOTEBOOKS[0], '.ipynb') : 'notebooks',
    exposeApp: true,
    settings: {
      // Every cell kept in the DOM (no windowing), so the test sees every chart,
      // not only those scrolled into view.
      '@jupyterlab/notebook-extension/tracker': { windowingMode: 'none' },
      // Never save the executed notebook: notebooks are committed without outputs.
      '@jupyterlab/docmanager-extension/plugin': { autosave: false },
    },
  });
  ({ lab, context, external } = h);
});

after(async () => {
  await h?.close();
});

for (const NOTEBOOK of NOTEBOOKS) test(`JupyterLab ${RENDERED ? 'shows the executed' : 'runs'} ${NOTEBOOK} and every ECharts chart draws, offline`, { timeout: RUN_TIMEOUT_MS + 180000 }, async () => {
  const page = await context.newPage();
  page.on('websocket', (ws) => { if (!isLocal(ws.url())) external.push(ws.url()); });
  const consoleErrors = [];
  page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
  const assetResponses = [];
  page.on('response', (r) => { if (r.url().includes('echarts')) assetResponses.push(`${r.status()} ${r.url()}`); });

  // On any failure keep a screenshot of what the browser showed.
  const failShot = join(ARTIFACTS, `browser-${basename(NOTEBOOK, '.ipynb')}-failure.png`);
  try {
    await runAndCheck(page, NOTEBOOK, { assetResponses, consoleErrors });
  } catch (e) {
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: failShot }).catch(() => {});
    if (consoleErrors.length) console.log(`browser console errors:\n  ${consoleErrors.slice(0, 10).join('\n  ')}`);
    throw new Error(`${e.message}\n(screenshot: ${failShot})`, { cause: e });
  } finally {
    await page.close();
    await shutDownKernels();
  }
});

// The kernels the notebook's page started, shut down through the REST API (a
// closed page leaves them running), so the next notebook's test has the
// machine to itself.
async function shutDownKernels() {
  const api = (path) => {
    const u = new URL(path, lab.base);
    if (lab.token) u.searchParams.set('token', lab.token);
    return u;
  };
  const sessions = await (await fetch(api('api/sessions'))).json().catch(() => []);
  for (const s of Array.isArray(sessions) ? sessions : []) {
    await fetch(api(`api/sessions/${encodeURIComponent(s.id)}`), { method: 'DELETE' }).catch(() => {});
  }
}

async function runAndCheck(page, NOTEBOOK, { assetResponses, consoleErrors }) {
  const MIN_CHARTS = minCharts(NOTEBOOK);
  // A workspace of the notebook's own: an earlier notebook's tab is not restored.
  const workspace = basename(NOTEBOOK, '.ipynb').replace(/[^A-Za-z0-9-]/g, '-');
  const url = new URL(`lab/workspaces/${workspace}/tree/${NOTEBOOK.split('/').map(encodeURIComponent).join('/')}`, lab.base);
  if (lab.token) url.searchParams.set('token', lab.token);
  await page.goto(url.href);
  const notebook = page.locator('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook');
  await notebook.first().waitFor({ timeout: 120000 });
  // Run All only once every cell is rendered and the kernel has started and is idle;
  // the notebook's own execution indicator says idle even before a kernel exists.
  const contents = new URL(`api/contents/${NOTEBOOK.split('/').map(encodeURIComponent).join('/')}`, lab.base);
  if (lab.token) contents.searchParams.set('token', lab.token);
  const model = await (await fetch(contents)).json();
  const codeCells = (model.content?.cells || []).filter((c) => c.cell_type === 'code').length;
  assert.ok(codeCells > 0, `${NOTEBOOK} has no code cells (or the server cannot read it: ${model.message || ''})`);
  // GoNB answers the first kernel_info before JupyterLab listens for its status, so
  // the status bar says "Unknown" until the first cell runs: accept that as started.
  const kernelStatus = (re) => `(() => {
    const bar = document.querySelector('#jp-main-statusbar');
    const t = bar ? bar.textContent : '';
    return !t.includes('No Kernel') && /\\|\\s*(${re})/.test(t);
  })()`;
  const kernelIdle = kernelStatus('Idle');
  await page.waitForFunction(`document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-CodeCell').length >= ${codeCells} && ${kernelStatus('Idle|Unknown')}`,
    null, { timeout: 120000 });

  const promptsJS = () => [...document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-CodeCell .jp-InputArea-prompt')]
    .map((p) => p.textContent.trim());
  let runSeconds = 0;
  if (!RENDERED) {
    // Run > Run All Cells, as a person would.
    await page.locator('.lm-MenuBar-item', { hasText: /^Run$/ }).click();
    await page.locator('.lm-Menu-item:visible', { hasText: 'Run All Cells' }).first().click();

    // Wait until the run starts (some prompt is [*] or numbered), then until the kernel is
    // idle with no cell pending.
    await page.waitForFunction(`(${promptsJS})().some((p) => p === '[*]:' || /^\\[\\d+\\]:$/.test(p))`, null, { timeout: 60000 });
    const started = Date.now();
    await page.waitForFunction(`${kernelIdle} && !(${promptsJS})().includes('[*]:')`,
      null, { timeout: RUN_TIMEOUT_MS, polling: 500 });
    runSeconds = (Date.now() - started) / 1000;
  }
  const prompts = await page.evaluate(`(${promptsJS})()`);
  const notRun = prompts.map((p, i) => [i, p]).filter(([, p]) => !/^\[\d+\]:$/.test(p));
  const errors = await page.locator('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]').allTextContents();
  assert.deepEqual(notRun, [], `cells not executed (an earlier cell failed?): ${JSON.stringify(notRun)}\nstderr outputs:\n${errors.join('\n').slice(0, 3000)}`);

  // Chart elements: the element each echarts.init(...) targets, the go-echarts
  // container items, and anything ECharts has claimed.
  const findCharts = `(() => {
    const root = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook');
    const ids = new Set();
    for (const s of root.querySelectorAll('.jp-OutputArea-output script')) {
      for (const m of s.textContent.matchAll(/echarts\\.init\\(\\s*document\\.getElementById\\(\\s*['"]([^'"]+)['"]/g)) ids.add(m[1]);
    }
    const els = new Set([...ids].map((id) => document.getElementById(id)).filter(Boolean));
    for (const el of root.querySelectorAll('.jp-OutputArea-output .container > .item[id], .jp-OutputArea-output [_echarts_instance_]')) els.add(el);
    const missing = [...ids].filter((id) => !document.getElementById(id));
    return { missing, charts: [...els].map((el) => ({ id: el.id, drawn: !!el.querySelector('canvas, svg') })) };
  })()`;
  let found;
  const deadline = Date.now() + 30000;
  do {
    found = await page.evaluate(findCharts);
    if (found.charts.length >= MIN_CHARTS && found.charts.every((c) => c.drawn)) break;
    await page.waitForTimeout(500);
  } while (Date.now() < deadline);

  mkdirSync(ARTIFACTS, { recursive: true });
  const shot = join(ARTIFACTS, `browser-${basename(NOTEBOOK, '.ipynb')}.png`);
  const first = found.charts[0] && page.locator(`[id="${found.charts[0].id}"]`);
  if (first) await first.scrollIntoViewIfNeeded().catch(() => {});
  await page.screenshot({ path: shot });
  console.log(`${RENDERED ? 'rendered from the headless run' : `run all: ${runSeconds.toFixed(1)} s`}, ${prompts.length} code cells, ${found.charts.length} charts; screenshot ${shot}`);
  console.log(`echarts responses: ${assetResponses.join(', ') || 'none'}`);
  if (consoleErrors.length) console.log(`browser console errors:\n  ${consoleErrors.slice(0, 10).join('\n  ')}`);

  assert.deepEqual([...new Set(external)], [], 'requests left localhost');
  assert.deepEqual(found.missing, [], 'echarts.init targets an element that is not in the page');
  assert.ok(found.charts.length >= MIN_CHARTS, `found ${found.charts.length} chart elements, want at least ${MIN_CHARTS}`);
  const blank = found.charts.filter((c) => !c.drawn).map((c) => c.id);
  assert.deepEqual(blank, [], `charts with no canvas or svg (ECharts did not draw): ${blank.join(', ')}` +
    (RENDERED ? ' (an executed notebook draws its charts only when signed: jupyter trust)' : ''));
  await checkTablesAndMath(page);
  if (process.env.TABLE_SHOTS) await shootTables(page, NOTEBOOK);
  if (process.env.README_SHOT) await shootReadme(page, process.env.README_SHOT, NOTEBOOK);
}

// README_SHOT: the output of the first code cell that shows a chart and a table
// together, as a reader sees it, and the hash of the notebook it came from.
async function shootReadme(page, path, NOTEBOOK) {
  const cell = page.locator('.jp-CodeCell').filter({ has: page.locator('.jp-OutputArea-output [_echarts_instance_]') })
    .filter({ has: page.locator('.jp-OutputArea-output table') }).first();
  assert.ok(await cell.count() > 0, 'README_SHOT: no code cell shows both a chart and a table');
  await cell.scrollIntoViewIfNeeded();
  await page.waitForTimeout(1000); // let ECharts finish its entry animation
  const target = resolve(ROOT, path);
  await cell.screenshot({ path: target, animations: 'disabled' });
  const hash = createHash('sha256').update(readFileSync(join(NOTEBOOK_ROOT, NOTEBOOK))).digest('hex');
  writeFileSync(`${target}.sha256`, `${hash}  notebooks/${NOTEBOOK}\n`);
  console.log(`README screenshot: ${target} (notebook sha256 ${hash.slice(0, 12)})`);
}

// TABLE_SHOTS=1: a screenshot of every rendered output table, for reading
// them by eye (tests/artifacts/tables-<notebook>-<n>.png).
async function shootTables(page, NOTEBOOK) {
  const tables = page.locator('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea-output table');
  const n = await tables.count();
  for (let i = 0; i < n; i++) {
    const t = tables.nth(i);
    await t.scrollIntoViewIfNeeded().catch(() => {});
    await t.screenshot({ path: join(ARTIFACTS, `tables-${basename(NOTEBOOK, '.ipynb')}-${i + 1}.png`) }).catch(() => {});
  }
  console.log(`table screenshots: ${n} in ${ARTIFACTS}`);
}

// Every table the notebook renders (Markdown cells and outputs) must be a
// table with its cells, and nothing may be typeset as math: JupyterLab turns
// text between two "$" into LaTeX, which garbles a table of dollar figures.
// MIN_TABLES (default 1) guards against a page where nothing rendered.
async function checkTablesAndMath(page) {
  const MIN_TABLES = Number(process.env.MIN_TABLES || 1);
  // MathJax typesets after the Markdown renders: give it a moment.
  await page.waitForTimeout(1500);
  const report = await page.evaluate(() => {
    const root = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook');
    const MATH = 'mjx-container, .MathJax, .MathJax_Display, .katex, .jp-RenderedLatex';
    const tables = [...root.querySelectorAll('.jp-RenderedMarkdown table, .jp-RenderedHTMLCommon table')];
    const problems = [];
    tables.forEach((t, i) => {
      const head = t.querySelectorAll('thead th, thead td').length || (t.rows[0] ? t.rows[0].cells.length : 0);
      const body = [...t.querySelectorAll('tbody tr')];
      const label = `table ${i + 1} ("${(t.rows[0]?.textContent || '').trim().slice(0, 60)}")`;
      if (head === 0) problems.push(`${label}: no header cells`);
      if (body.length === 0) problems.push(`${label}: no body rows`);
      body.forEach((r, j) => {
        if (r.cells.length !== head) problems.push(`${label} row ${j + 1}: ${r.cells.length} cells, header has ${head}`);
      });
      if (t.querySelector(MATH)) problems.push(`${label}: holds typeset math (an unescaped $ pair): "${t.textContent.trim().slice(0, 120)}"`);
    });
    // Each typeset formula with the start of the paragraph it sits in.
    const math = [...root.querySelectorAll(`.jp-RenderedMarkdown ${MATH.split(', ').join(', .jp-RenderedMarkdown ')}`)]
      .filter((m) => !m.parentElement.closest(MATH))
      .map((m) => `${(m.getAttribute('aria-label') || m.textContent || '').trim().slice(0, 60)} in "${(m.closest('p, li, td, th, .jp-RenderedMarkdown')?.textContent || '').trim().slice(0, 100)}"`);
    return { tables: tables.length, problems, math: [...new Set(math)] };
  });
  console.log(`tables: ${report.tables} rendered; math typeset in Markdown: ${report.math.length}`);
  if (report.math.length) console.log(`typeset math:\n  ${report.math.join('\n  ')}`);
  assert.ok(report.tables >= MIN_TABLES, `found ${report.tables} rendered tables, want at least ${MIN_TABLES}`);
  assert.deepEqual(report.problems, [], 'tables that do not render as tables');
  assert.deepEqual(report.math, [], 'Markdown typeset as math (write a dollar as two backslashes and $ in Markdown, as queuekit/format does)');
  await checkCellTexts(page);
}

// Every table cell of every Markdown output must show exactly the text its
// source holds: the test reads each output's Markdown from the notebook's
// model (window.jupyterapp), splits its tables into cells, undoes the escapes
// queuekit/format writes (a backslash before ASCII punctuation; a dollar as
// two backslashes, which MathJax shows as "$"), and compares each with the
// rendered cell's text. A character the renderer eats (an unescaped "*"
// turning "24*60*60" into an italic 60, a "<b>" swallowed as HTML) fails it.
async function checkCellTexts(page) {
  const report = await page.evaluate(() => {
    const app = window.jupyterapp;
    const panel = app && app.shell && app.shell.currentWidget;
    if (!panel || !panel.content || !panel.content.widgets) return { error: 'window.jupyterapp or its notebook panel is missing (is expose_app_in_browser set?)' };
    const norm = (t) => t.replace(/\s+/g, ' ').trim();
    // Split one table row into raw cells: "|" ends a cell unless escaped.
    const splitRow = (line) => {
      const cells = [];
      let cur = '';
      let s = line.trim();
      if (s.startsWith('|')) s = s.slice(1);
      for (let i = 0; i < s.length; i++) {
        const ch = s[i];
        if (ch === '\\' && i + 1 < s.length) { cur += ch + s[i + 1]; i++; continue; }
        if (ch === '|') { cells.push(cur); cur = ''; continue; }
        cur += ch;
      }
      if (cur.trim() !== '') cells.push(cur);
      return cells;
    };
    const unescape = (raw) => norm(raw.replace(/\\([!-\/:-@\[-`{-~])/g, '$1').replace(/\\\$/g, '$'));
    const tablesOf = (md) => {
      const out = [];
      let block = [];
      for (const line of (md + '\n').split('\n')) {
        if (line.trim().startsWith('|')) { block.push(line); continue; }
        if (block.length >= 2) out.push(block);
        block = [];
      }
      return out.map((b) => [b[0], ...b.slice(2)].map((l) => splitRow(l).map(unescape)));
    };
    const problems = [];
    let compared = 0;
    panel.content.widgets.forEach((cell, ci) => {
      if (cell.model.type !== 'code' || !cell.outputArea) return;
      const area = cell.outputArea;
      for (let oi = 0; oi < area.model.length; oi++) {
        const data = area.model.get(oi).data || {};
        let md = data['text/markdown'];
        if (md === undefined) continue;
        if (Array.isArray(md)) md = md.join('');
        const want = tablesOf(String(md));
        const child = area.widgets[oi];
        const got = child ? [...child.node.querySelectorAll('table')] : [];
        if (want.length !== got.length) {
          problems.push(`cell ${ci + 1} output ${oi + 1}: ${want.length} tables in the Markdown, ${got.length} rendered`);
          continue;
        }
        want.forEach((rows, ti) => {
          const shown = [...got[ti].rows].map((r) => [...r.cells].map((c) => norm(c.textContent)));
          rows.forEach((cells, ri) => {
            cells.forEach((text, k) => {
              compared++;
              const seen = shown[ri] ? shown[ri][k] : undefined;
              if (seen !== text) problems.push(`cell ${ci + 1} table ${ti + 1} row ${ri + 1} column ${k + 1}: source "${text}", rendered "${seen}"`);
            });
          });
        });
      }
    });
    return { compared, problems };
  });
  assert.equal(report.error, undefined, report.error);
  console.log(`table cells compared with their source: ${report.compared}`);
  assert.deepEqual(report.problems.slice(0, 20), [], `rendered table cells that differ from their source (${report.problems.length})`);
}
