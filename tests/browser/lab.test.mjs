// JupyterLab in headless Chromium: open a workshop notebook, Run > Run All Cells,
// wait for the kernel to finish, and check that every ECharts chart drew (a canvas
// or svg inside each chart element) with no request leaving localhost. A screenshot
// goes to tests/artifacts/.
//
//   cd tests/browser && npm ci && node --test lab.test.mjs
//
// Environment:
//   NOTEBOOK        notebook path under the server root (default 04-simulation.ipynb)
//   LAB_URL         a running JupyterLab, with its token (http://127.0.0.1:8888/lab?token=...);
//                   unset: the test starts one from .venv on a free port and stops it
//   NOTEBOOK_ROOT   server root when the test starts JupyterLab (default <repo>/notebooks)
//   MIN_CHARTS      fail if fewer chart elements are found (default 1)
//   MIN_TABLES      fail if fewer rendered tables are found (default 1); every table must
//                   have its header and cells, and no Markdown may be typeset as math
//   CHROMIUM        browser executable (default /usr/bin/chromium, Debian's chromium)
//   ARTIFACTS       screenshot folder (default <repo>/tests/artifacts)
//   RUN_TIMEOUT_MS  time allowed for Run All (default 600000)
// The kernel needs DynamoDB: run it through `make test`/`make browser`, or export
// AWS_ENDPOINT_URL_DYNAMODB yourself.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync, rmSync, createWriteStream, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname, resolve, basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import net from 'node:net';
import { chromium } from 'playwright-core';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const NOTEBOOK = process.env.NOTEBOOK || '04-simulation.ipynb';
const NOTEBOOK_ROOT = resolve(process.env.NOTEBOOK_ROOT || join(ROOT, 'notebooks'));
const MIN_CHARTS = Number(process.env.MIN_CHARTS || 1);
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const ARTIFACTS = resolve(process.env.ARTIFACTS || join(ROOT, 'tests', 'artifacts'));
const RUN_TIMEOUT_MS = Number(process.env.RUN_TIMEOUT_MS || 600000);
const LOCAL_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

let lab; // { base: URL, token, proc?, tmp? }
let context;
let userDataDir; // a fresh Chromium profile, removed at the end
const external = []; // requests the browser tried to send off this machine

function freePort() {
  return new Promise((res, rej) => {
    const srv = net.createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => res(port));
    });
    srv.on('error', rej);
  });
}

async function waitHTTP(url, ms, proc) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (proc && proc.exitCode !== null) throw new Error(`JupyterLab exited with ${proc.exitCode}`);
    try {
      const r = await fetch(url);
      if (r.ok) return;
    } catch { /* not up yet */ }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${url} did not answer within ${ms} ms`);
}

async function startLab() {
  const venv = join(ROOT, '.venv');
  const jupyter = join(venv, 'bin', 'jupyter');
  if (!existsSync(jupyter)) throw new Error(`${jupyter} is missing: run scripts/setup.sh first`);
  const tmp = mkdtempSync(join(tmpdir(), 'workshop-lab-'));
  // A fresh workspace, no autosave, and every cell kept in the DOM (no windowing) so the test
  // sees every chart, not only those scrolled into view.
  const settings = join(tmp, 'settings', '@jupyterlab', 'notebook-extension');
  mkdirSync(settings, { recursive: true });
  writeFileSync(join(settings, 'tracker.jupyterlab-settings'), JSON.stringify({ windowingMode: 'none' }));
  // Never save the executed notebook: notebooks are committed without outputs.
  const docmanager = join(tmp, 'settings', '@jupyterlab', 'docmanager-extension');
  mkdirSync(docmanager, { recursive: true });
  writeFileSync(join(docmanager, 'plugin.jupyterlab-settings'), JSON.stringify({ autosave: false }));
  const port = await freePort();
  const token = [...crypto.getRandomValues(new Uint8Array(24))].map((b) => b.toString(16).padStart(2, '0')).join('');
  const share = join(venv, 'share', 'jupyter');
  const env = {
    ...process.env,
    PATH: `${join(venv, 'bin')}:${process.env.PATH}`,
    JUPYTER_TOKEN: token,
    JUPYTER_DATA_DIR: share,
    JUPYTER_CONFIG_DIR: join(venv, 'etc', 'jupyter'),
    JUPYTER_RUNTIME_DIR: join(tmp, 'runtime'),
    JUPYTERLAB_SETTINGS_DIR: join(tmp, 'settings'),
    JUPYTERLAB_WORKSPACES_DIR: join(tmp, 'workspaces'),
    AWS_ACCESS_KEY_ID: process.env.AWS_ACCESS_KEY_ID || 'local',
    AWS_SECRET_ACCESS_KEY: process.env.AWS_SECRET_ACCESS_KEY || 'local',
    AWS_REGION: process.env.AWS_REGION || 'us-east-1',
  };
  mkdirSync(ARTIFACTS, { recursive: true });
  const log = createWriteStream(join(ARTIFACTS, `jupyterlab-${basename(NOTEBOOK, '.ipynb')}.log`));
  const proc = spawn(jupyter, [
    'lab', '--no-browser',
    '--ServerApp.ip=127.0.0.1', `--ServerApp.port=${port}`, '--ServerApp.port_retries=0',
    `--ServerApp.root_dir=${NOTEBOOK_ROOT}`,
    '--LabApp.news_url=None',
    '--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate',
    '--LabApp.extension_manager=readonly',
    ...(process.getuid?.() === 0 ? ['--allow-root'] : []), // CI runs as root
  ], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  proc.stdout.pipe(log);
  proc.stderr.pipe(log);
  const base = new URL(`http://127.0.0.1:${port}/`);
  await waitHTTP(new URL(`api/status?token=${token}`, base), 60000, proc);
  return { base, token, proc, tmp };
}

async function stopLab() {
  if (!lab?.proc) return;
  const { proc } = lab;
  if (proc.exitCode === null) {
    const exited = new Promise((r) => proc.once('exit', r));
    process.kill(-proc.pid, 'SIGTERM'); // its process group: jupyter and its kernels
    await Promise.race([exited, new Promise((r) => setTimeout(r, 10000))]);
    if (proc.exitCode === null) process.kill(-proc.pid, 'SIGKILL');
  }
  rmSync(lab.tmp, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
}

function isLocal(url) {
  try {
    const u = new URL(url);
    if (u.protocol === 'data:' || u.protocol === 'blob:' || u.protocol === 'about:') return true;
    return LOCAL_HOSTS.has(u.hostname);
  } catch {
    return false;
  }
}

before(async () => {
  if (process.env.LAB_URL) {
    const u = new URL(process.env.LAB_URL);
    lab = { base: new URL('/', u), token: u.searchParams.get('token') || '' };
  } else {
    lab = await startLab();
  }
  userDataDir = mkdtempSync(join(tmpdir(), 'workshop-chromium-'));
  context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1400, height: 1000 },
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
    ],
  });
  // Everything the page asks for must come from this machine: abort and record the rest.
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (isLocal(url)) return route.continue();
    external.push(url);
    return route.abort('blockedbyclient');
  });
  context.on('request', (req) => { if (!isLocal(req.url())) external.push(req.url()); });
});

after(async () => {
  await context?.close();
  if (userDataDir) rmSync(userDataDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
  await stopLab();
});

test(`JupyterLab runs ${NOTEBOOK} and every ECharts chart draws, offline`, { timeout: RUN_TIMEOUT_MS + 180000 }, async () => {
  const page = await context.newPage();
  page.on('websocket', (ws) => { if (!isLocal(ws.url())) external.push(ws.url()); });
  const consoleErrors = [];
  page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
  const assetResponses = [];
  page.on('response', (r) => { if (r.url().includes('echarts')) assetResponses.push(`${r.status()} ${r.url()}`); });

  // On any failure keep a screenshot of what the browser showed.
  const failShot = join(ARTIFACTS, `browser-${basename(NOTEBOOK, '.ipynb')}-failure.png`);
  try {
    await runAndCheck(page, { assetResponses, consoleErrors });
  } catch (e) {
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: failShot }).catch(() => {});
    if (consoleErrors.length) console.log(`browser console errors:\n  ${consoleErrors.slice(0, 10).join('\n  ')}`);
    throw new Error(`${e.message}\n(screenshot: ${failShot})`, { cause: e });
  }
  await page.close();
});

async function runAndCheck(page, { assetResponses, consoleErrors }) {
  const url = new URL(`lab/tree/${NOTEBOOK.split('/').map(encodeURIComponent).join('/')}`, lab.base);
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

  // Dismiss the "Jupyter news?" toast so it does not cover the screenshot.
  await page.locator('.jp-toast-button', { hasText: /^No$/ }).click({ timeout: 2000 }).catch(() => {});

  // Run > Run All Cells, as a person would.
  await page.locator('.lm-MenuBar-item', { hasText: /^Run$/ }).click();
  await page.locator('.lm-Menu-item:visible', { hasText: 'Run All Cells' }).first().click();

  // Wait until the run starts (some prompt is [*] or numbered), then until the kernel is
  // idle with no cell pending.
  const promptsJS = () => [...document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-CodeCell .jp-InputArea-prompt')]
    .map((p) => p.textContent.trim());
  await page.waitForFunction(`(${promptsJS})().some((p) => p === '[*]:' || /^\\[\\d+\\]:$/.test(p))`, null, { timeout: 60000 });
  const started = Date.now();
  await page.waitForFunction(`${kernelIdle} && !(${promptsJS})().includes('[*]:')`,
    null, { timeout: RUN_TIMEOUT_MS, polling: 500 });
  const runSeconds = (Date.now() - started) / 1000;
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
  console.log(`run all: ${runSeconds.toFixed(1)} s, ${prompts.length} code cells, ${found.charts.length} charts; screenshot ${shot}`);
  console.log(`echarts responses: ${assetResponses.join(', ') || 'none'}`);
  if (consoleErrors.length) console.log(`browser console errors:\n  ${consoleErrors.slice(0, 10).join('\n  ')}`);

  assert.deepEqual([...new Set(external)], [], 'requests left localhost');
  assert.deepEqual(found.missing, [], 'echarts.init targets an element that is not in the page');
  assert.ok(found.charts.length >= MIN_CHARTS, `found ${found.charts.length} chart elements, want at least ${MIN_CHARTS}`);
  const blank = found.charts.filter((c) => !c.drawn).map((c) => c.id);
  assert.deepEqual(blank, [], `charts with no canvas or svg (ECharts did not draw): ${blank.join(', ')}`);
  await checkTablesAndMath(page);
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
}
