// harness.mjs: what the browser tests share. A JupyterLab started from .venv
// with the workshop's own Jupyter configuration (jupyter/, through
// JUPYTER_CONFIG_PATH, as scripts/env.sh sets it) on a free 127.0.0.1 port,
// and headless Chromium with a fresh profile that may not reach anything off
// this machine.
//
//   const h = await openLab({ root, name, settings });  // h.lab, h.context, h.external
//   ...
//   await h.close();
//
// Environment:
//   LAB_URL     a running JupyterLab, with its token (http://127.0.0.1:8888/lab?token=...);
//               unset: openLab starts one and close stops it
//   CHROMIUM    browser executable (default /usr/bin/chromium, Debian's chromium)
//   ARTIFACTS   logs and screenshots (default <repo>/tests/artifacts)

import { spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync, rmSync, createWriteStream, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import net from 'node:net';
import { chromium } from 'playwright-core';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
export const ARTIFACTS = resolve(process.env.ARTIFACTS || join(ROOT, 'tests', 'artifacts'));
const LOCAL_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

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

// startLab starts JupyterLab on root. settings: { 'plugin-dir/plugin-file': {...} }
// user settings (e.g. '@jupyterlab/docmanager-extension/plugin': { autosave: false }).
async function startLab(root, name, settings, exposeApp) {
  const venv = join(ROOT, '.venv');
  const jupyter = join(venv, 'bin', 'jupyter');
  if (!existsSync(jupyter)) throw new Error(`${jupyter} is missing: run make setup first`);
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: install Chromium (Debian/Ubuntu: sudo apt-get install chromium), or set CHROMIUM=/path/to/chromium`);
  }
  const tmp = mkdtempSync(join(tmpdir(), 'workshop-lab-'));
  for (const [file, value] of Object.entries(settings)) {
    const path = join(tmp, 'settings', `${file}.jupyterlab-settings`);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, JSON.stringify(value));
  }
  const port = await freePort();
  const token = [...crypto.getRandomValues(new Uint8Array(24))].map((b) => b.toString(16).padStart(2, '0')).join('');
  const share = join(venv, 'share', 'jupyter');
  // What scripts/env.sh gives JupyterLab, with runtime files, settings and
  // workspaces of this run's own.
  const env = {
    ...process.env,
    PATH: `${join(venv, 'bin')}:${process.env.PATH}`,
    JUPYTER_TOKEN: token,
    JUPYTER_DATA_DIR: share,
    JUPYTER_CONFIG_DIR: join(venv, 'etc', 'jupyter'),
    JUPYTER_CONFIG_PATH: join(ROOT, 'jupyter'),
    JUPYTER_RUNTIME_DIR: join(tmp, 'runtime'),
    JUPYTERLAB_SETTINGS_DIR: join(tmp, 'settings'),
    JUPYTERLAB_WORKSPACES_DIR: join(tmp, 'workspaces'),
    IPYTHONDIR: join(venv, 'share', 'ipython'),
    AWS_ACCESS_KEY_ID: process.env.AWS_ACCESS_KEY_ID || 'local',
    AWS_SECRET_ACCESS_KEY: process.env.AWS_SECRET_ACCESS_KEY || 'local',
    AWS_REGION: process.env.AWS_REGION || 'us-east-1',
  };
  mkdirSync(ARTIFACTS, { recursive: true });
  const log = createWriteStream(join(ARTIFACTS, `jupyterlab-${name}.log`));
  const proc = spawn(jupyter, [
    'lab', '--no-browser',
    '--ServerApp.ip=127.0.0.1', `--ServerApp.port=${port}`, '--ServerApp.port_retries=0',
    `--ServerApp.root_dir=${root}`,
    // window.jupyterapp, for a test that reads the notebook's model (the
    // Markdown source of each output) beside what the page shows.
    ...(exposeApp ? ['--LabApp.expose_app_in_browser=True'] : []),
    ...(process.getuid?.() === 0 ? ['--allow-root'] : []), // CI runs as root
  ], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  proc.stdout.pipe(log);
  proc.stderr.pipe(log);
  const base = new URL(`http://127.0.0.1:${port}/`);
  await waitHTTP(new URL(`api/status?token=${token}`, base), 60000, proc);
  return { base, token, proc, tmp };
}

async function stopLab(lab) {
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

export function isLocal(url) {
  try {
    const u = new URL(url);
    if (u.protocol === 'data:' || u.protocol === 'blob:' || u.protocol === 'about:') return true;
    return LOCAL_HOSTS.has(u.hostname);
  } catch {
    return false;
  }
}

// openLab starts (or joins, with LAB_URL) JupyterLab on root and opens Chromium.
export async function openLab({ root, name, settings = {}, exposeApp = false }) {
  let lab;
  if (process.env.LAB_URL) {
    const u = new URL(process.env.LAB_URL);
    lab = { base: new URL('/', u), token: u.searchParams.get('token') || '' };
  } else {
    lab = await startLab(root, name, settings, exposeApp);
  }
  const external = []; // requests the browser tried to send off this machine
  const userDataDir = mkdtempSync(join(tmpdir(), 'workshop-chromium-'));
  let context;
  try {
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      viewport: { width: 1400, height: 1000 },
      args: [
        '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync',
      ],
    });
  } catch (e) {
    await stopLab(lab);
    throw e;
  }
  // Everything the page asks for must come from this machine: abort and record the rest.
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (isLocal(url)) return route.continue();
    external.push(url);
    return route.abort('blockedbyclient');
  });
  context.on('request', (req) => { if (!isLocal(req.url())) external.push(req.url()); });
  return {
    lab,
    context,
    external,
    // url builds a URL on the server with the token, e.g. url('lab/tree/x.ipynb').
    url(path) {
      const u = new URL(path, lab.base);
      if (lab.token) u.searchParams.set('token', lab.token);
      return u;
    },
    async close() {
      await context?.close();
      rmSync(userDataDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
      await stopLab(lab);
    },
  };
}
