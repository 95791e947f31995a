// JupyterLab as a participant first sees it, in headless Chromium, with the
// workshop's Jupyter configuration (jupyter/):
//
//   - no distractions: the Launcher offers the Go kernel and no Python one, the
//     file browser does not show assets/ (while /files/assets/echarts.min.js,
//     which the charts load, is still served), and the "Jupyter news?" prompt
//     cannot appear (fetchNews is "false", not "none" = ask);
//   - opening a notebook changes nothing in git: JupyterLab serves the
//     participants' copies that queuekit workspace prepare makes in workspace/; each
//     one, opened, left until its kernel runs, saved and closed, is never
//     marked changed, closing it asks nothing ("Save changes?" would mean the
//     kernel rewrote its metadata), and git status stays clean.
//
// The repository here is a scratch git repository with the committed
// notebooks and .gitignore; queuekit workspace prepare prepares its workspace/
// (WORKSHOP_WORKSPACE), so the test never writes into the real checkout.
//
//   cd tests/browser && node --test ui.test.mjs
// Environment: LAB_URL is not used here (the test needs its scratch root);
// CHROMIUM, ARTIFACTS: see harness.mjs.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, copyFileSync, readdirSync, existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, ARTIFACTS, openLab } from './harness.mjs';

const NOTEBOOKS = readdirSync(join(ROOT, 'notebooks')).filter((f) => /^\d\d-.*\.ipynb$/.test(f)).sort();
const ASSET = join(ROOT, 'notebooks', 'assets', 'echarts.min.js');

let h;
let scratch; // the scratch repository
let workspace; // its workspace/, the server root

function git(...args) {
  return execFileSync('git', ['-C', scratch, ...args], { encoding: 'utf8' });
}

before(async () => {
  assert.ok(NOTEBOOKS.length > 0, 'no notebooks/NN-*.ipynb to open');
  assert.ok(existsSync(ASSET), `${ASSET} is missing: run make setup first`);
  scratch = mkdtempSync(join(tmpdir(), 'workshop-nb-'));
  mkdirSync(join(scratch, 'notebooks'));
  for (const nb of NOTEBOOKS) copyFileSync(join(ROOT, 'notebooks', nb), join(scratch, 'notebooks', nb));
  copyFileSync(join(ROOT, '.gitignore'), join(scratch, '.gitignore'));
  git('init', '-q');
  git('-c', 'user.name=test', '-c', 'user.email=test@localhost', 'add', '.');
  git('-c', 'user.name=test', '-c', 'user.email=test@localhost', 'commit', '-q', '-m', 'the committed notebooks');
  workspace = join(scratch, 'workspace');
  execFileSync('go', ['run', './queuekit/cmd/queuekit', 'workspace', 'prepare'], {
    cwd: ROOT, env: { ...process.env, WORKSHOP_WORKSPACE: workspace }, stdio: ['ignore', 'inherit', 'inherit'],
  });
  const saved = { ...process.env };
  delete process.env.LAB_URL; // this test needs its own server on the scratch workspace
  try {
    h = await openLab({ root: workspace, name: 'ui' });
  } finally {
    process.env = saved;
  }
});

after(async () => {
  await h?.close();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

// shot saves a screenshot of page into tests/artifacts and returns its path.
async function shot(page, name) {
  mkdirSync(ARTIFACTS, { recursive: true });
  const path = join(ARTIFACTS, `browser-ui-${name}.png`);
  await page.screenshot({ path }).catch(() => {});
  return path;
}

test('JupyterLab offers only the Go kernel, hides assets/, and never asks about news', { timeout: 180000 }, async () => {
  const page = await h.context.newPage();
  try {
    await page.goto(h.url('lab').href);
    await page.locator('.jp-LauncherCard').first().waitFor({ timeout: 120000 });
    const cards = await page.locator('.jp-LauncherCard').evaluateAll((els) => els.map((e) => ({
      label: (e.querySelector('.jp-LauncherCard-label')?.textContent || e.title || '').trim(),
      category: e.getAttribute('data-category') || '',
    })));
    const kernels = cards.filter((c) => c.category === 'Notebook' || c.category === 'Console').map((c) => c.label);
    assert.ok(kernels.some((l) => /gonb|Go/.test(l)), `the Launcher offers no Go kernel: ${JSON.stringify(cards)}`);
    assert.deepEqual(kernels.filter((l) => /python/i.test(l)), [], 'the Launcher offers a Python kernel');

    await page.locator('.jp-DirListing-item').first().waitFor({ timeout: 60000 });
    const names = await page.locator('.jp-DirListing-item .jp-DirListing-itemText').allTextContents();
    assert.ok(names.includes(NOTEBOOKS[0]), `the file browser does not list ${NOTEBOOKS[0]}: ${names}`);
    assert.ok(!names.includes('assets'), `the file browser shows assets/: ${names}`);
    const asset = await fetch(h.url('files/assets/echarts.min.js'));
    assert.equal(asset.status, 200, '/files/assets/echarts.min.js, which every chart loads, is not served');

    // The news prompt appears only while fetchNews is "none" (ask). The server
    // sends the plugin's schema with the workshop's overrides as its defaults.
    const settings = await (await fetch(h.url('lab/api/settings/@jupyterlab/apputils-extension:notification'))).json();
    const prop = (k) => (k in (settings.settings || {}) ? settings.settings[k] : settings.schema?.properties?.[k]?.default);
    assert.equal(prop('fetchNews'), 'false', 'fetchNews is not "false" (Never); the news prompt can appear');
    assert.equal(prop('checkForUpdates'), false, 'JupyterLab checks for updates');
    const toasts = await page.locator('.Toastify__toast, .jp-Notification-Toast').allTextContents();
    assert.deepEqual(toasts.filter((t) => /news/i.test(t)), [], 'a news notification is shown');
  } catch (e) {
    throw new Error(`${e.message}\n(screenshot: ${await shot(page, 'launcher')})`, { cause: e });
  } finally {
    await page.close();
  }
});

test('opening, saving and closing an untouched notebook changes nothing and leaves git status clean', { timeout: 600000 }, async () => {
  const panel = '.jp-NotebookPanel:not(.lm-mod-hidden)';
  try {
    for (const nb of NOTEBOOKS) {
      // A page of its own per notebook, as a person opening it from a fresh tab.
      const page = await h.context.newPage();
      try {
        const contents = h.url(`api/contents/${encodeURIComponent(nb)}`);
        contents.searchParams.set('content', '0');
        const before = (await (await fetch(contents)).json()).last_modified;
        // ?reset: no layout restored from an earlier page, only this notebook.
        const open = h.url(`lab/tree/${encodeURIComponent(nb)}`);
        open.searchParams.set('reset', '');
        await page.goto(open.href);
        await page.locator(`${panel} .jp-Notebook .jp-Cell`).first().waitFor({ timeout: 120000 });
        // The kernel has started once the status bar names its state (see lab.test.mjs
        // for why "Unknown" counts).
        await page.waitForFunction(`(() => {
          const t = document.querySelector('#jp-main-statusbar')?.textContent || '';
          return !t.includes('No Kernel') && /\\|\\s*(Idle|Unknown)/.test(t);
        })()`, null, { timeout: 180000 });
        const dirty = () => page.locator('.lm-DockPanel-tabBar .lm-TabBar-tab.jp-mod-current.jp-mod-dirty').count();
        assert.equal(await dirty(), 0, `untouched ${nb} was marked changed once opened (its kernel rewrote its metadata)`);
        // File > Save Notebook (a click into the notebook could change it: a
        // collapser hides a cell, which is saved in its metadata).
        await page.locator('.lm-MenuBar-item', { hasText: /^File$/ }).click();
        await page.locator('.lm-Menu-item:visible', { hasText: /^Save Notebook/ }).first().click();
        await page.waitForFunction(async ([url, t0]) => {
          const r = await fetch(url);
          return (await r.json()).last_modified !== t0;
        }, [contents.href, before], { timeout: 60000, polling: 250 });
        // Close the tab as a person would: it must close without asking to save.
        await page.locator('.lm-DockPanel-tabBar .lm-TabBar-tab', { hasText: nb }).locator('.lm-TabBar-tabCloseIcon').click();
        await page.waitForFunction((name) => !!document.querySelector('.jp-Dialog')
          || ![...document.querySelectorAll('.lm-DockPanel-tabBar .lm-TabBar-tabLabel')].some((e) => e.textContent.trim() === name),
        nb, { timeout: 30000 });
        const dialog = await page.locator('.jp-Dialog').allTextContents();
        assert.deepEqual(dialog, [], `closing untouched ${nb} shows a dialog`);
      } catch (e) {
        throw new Error(`${e.message}\n(screenshot: ${await shot(page, 'save')})`, { cause: e });
      } finally {
        await page.close();
      }
    }
    const status = git('status', '--porcelain', '--untracked-files=all');
    assert.equal(status, '', `git status is not clean after opening and saving the notebooks:\n${status}`);
  } finally {
    // Shut the kernels down before the server goes.
    const sessions = await (await fetch(h.url('api/sessions'))).json().catch(() => []);
    for (const s of Array.isArray(sessions) ? sessions : []) {
      await fetch(h.url(`api/sessions/${s.id}`), { method: 'DELETE' }).catch(() => {});
    }
  }
});
