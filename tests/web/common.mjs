// Shared by the browser tests (demo.mjs, bridge.mjs, phone.mjs, codex.mjs): Debian's Chromium through playwright-core,
// with fonts restricted so that CJK and Thai can only come from askpane, and small checks.
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { extname, join, normalize, sep } from "node:path";

import { chromium } from "playwright-core";

/** Debian's Chromium (or ASKPANE_CHROMIUM): playwright-core drives it; nothing is downloaded. */
export const chromiumPath = process.env.ASKPANE_CHROMIUM ?? "/usr/bin/chromium";

/** A failed check: the scripts report its message and exit non-zero. */
export class Failure extends Error {}

/** Starts headless Chromium on a fresh profile under `scratch` (flags from shared/toolchain.md). */
export function launch(scratch, viewport, options = {}) {
  return chromium.launchPersistentContext(join(scratch, "profile"), {
    executablePath: chromiumPath,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
    env: { ...process.env, FONTCONFIG_FILE: latinOnlyFonts(scratch) },
    viewport,
    colorScheme: "light",
    ...options,
  });
}

export function sleep(ms) {
  return new Promise((done) => setTimeout(done, ms));
}

/** Polls `condition` every 25 ms until it is true; fails with `message` after `ms`. */
export async function until(ms, condition, message) {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Failure(`${message} (waited ${ms / 1000} s)`);
    await sleep(25);
  }
}

/** Throws a [`Failure`] with `message` unless `condition` holds. */
export function check(condition, message) {
  if (!condition) throw new Failure(message);
}

/** Waits until two more frames have been presented (after a font arrived, say). */
export async function settle(page) {
  await page.evaluate(
    () => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() => done()))),
  );
  await page.waitForTimeout(200);
}

/** Share of pixels that differ between two PNG screenshots, decoded by the browser itself. */
export async function difference(page, a, b) {
  return page.evaluate(
    async ([a, b]) => {
      const decode = async (base64) => {
        const bitmap = await createImageBitmap(
          new Blob([Uint8Array.from(atob(base64), (c) => c.charCodeAt(0))], { type: "image/png" }),
        );
        const canvas = new OffscreenCanvas(bitmap.width, bitmap.height);
        const context = canvas.getContext("2d");
        context.drawImage(bitmap, 0, 0);
        return context.getImageData(0, 0, bitmap.width, bitmap.height);
      };
      const [x, y] = [await decode(a), await decode(b)];
      if (x.width !== y.width || x.height !== y.height) return 1;
      let differing = 0;
      for (let i = 0; i < x.data.length; i += 4) {
        if (x.data[i] !== y.data[i] || x.data[i + 1] !== y.data[i + 1] || x.data[i + 2] !== y.data[i + 2]) {
          differing += 1;
        }
      }
      return differing / (x.width * x.height);
    },
    [a.toString("base64"), b.toString("base64")],
  );
}

/** A fontconfig setup with one Latin font at most, so Chromium cannot draw CJK or Thai itself. */
export function latinOnlyFonts(dir) {
  const fonts = join(dir, "fonts");
  mkdirSync(fonts);
  const latin = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";
  if (existsSync(latin)) writeFileSync(join(fonts, "DejaVuSans.ttf"), readFileSync(latin));
  const config = join(dir, "fonts.conf");
  writeFileSync(
    config,
    `<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">\n` +
      `<fontconfig><dir>${fonts}</dir><cachedir>${join(dir, "fontcache")}</cachedir></fontconfig>\n`,
  );
  return config;
}

const MIME = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".wasm": "application/wasm",
  ".ttf": "font/ttf",
  ".txt": "text/plain; charset=utf-8",
};

/**
 * Serves `dist` (GET and HEAD only, nothing outside it; every load cold; `X.gz` for `X` to a
 * client taking gzip, as askpane does); records every path asked for. `extra` maps a path to
 * a body of its own (a benchmark's baseline page).
 */
export function serveDirectory(dist, extra = {}) {
  const requested = [];
  const server = createServer((request, response) => {
    const path = decodeURIComponent(new URL(request.url, "http://localhost").pathname);
    requested.push(path);
    if (Object.hasOwn(extra, path)) {
      const body = Buffer.from(extra[path]);
      response.writeHead(200, {
        "content-type": MIME[extname(path)] ?? "application/octet-stream",
        "content-length": body.length,
        "cache-control": "no-store",
      });
      response.end(request.method === "HEAD" ? undefined : body);
      return;
    }
    const file = normalize(join(dist, path === "/" ? "index.html" : path));
    let ok = (request.method === "GET" || request.method === "HEAD") && file.startsWith(dist + sep);
    ok &&= existsSync(file) && statSync(file).isFile();
    if (!ok) {
      response.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
      return;
    }
    // As askpane serves the bundle: a file scripts/build-web gzipped goes gzipped to a browser.
    const gzipped = `${file}.gz`;
    const gzip = /\bgzip\b/.test(request.headers["accept-encoding"] ?? "") && existsSync(gzipped);
    const body = readFileSync(gzip ? gzipped : file);
    response.writeHead(200, {
      "content-type": MIME[extname(file)] ?? "application/octet-stream",
      "content-length": body.length,
      // Every load is a cold load: nothing (not even compiled wasm) comes from the cache.
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
      ...(existsSync(gzipped) ? { vary: "Accept-Encoding" } : {}),
      ...(gzip ? { "content-encoding": "gzip" } : {}),
    });
    response.end(request.method === "HEAD" ? undefined : body);
  });
  return new Promise((done, fail) => {
    server.once("error", fail);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      done({ server, requested, base: `http://127.0.0.1:${port}` });
    });
  });
}

/**
 * The last resort (an exit path that cannot wait): SIGKILL every run in `children` (objects with
 * `pid` and `exit`, null while it runs) still running.
 */
export function killEvery(children) {
  for (const run of children) {
    if (run.exit === null) {
      try {
        process.kill(run.pid, "SIGKILL");
      } catch {}
    }
  }
}

/**
 * Runs a browser test's `main` under a watchdog of `wholeRunMs`, ending every askpane it started
 * (`killAll`) whatever happens: a signal, the watchdog, a failure or success. Prints
 * "`name` passed" or "`name` FAILED: why", and exits 0 or 1.
 */
export async function runTest(name, main, killAll, wholeRunMs) {
  process.on("exit", killAll);
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
    process.on(signal, () => {
      killAll();
      console.error(`${name} FAILED: interrupted by ${signal}`);
      process.exit(1);
    });
  }
  const watchdog = setTimeout(() => {
    killAll();
    console.error(`${name} FAILED: the whole run took more than ${wholeRunMs / 60_000} minutes`);
    process.exit(1);
  }, wholeRunMs);
  watchdog.unref();
  try {
    await main();
    console.log(`${name} passed`);
  } catch (error) {
    console.error(`${name} FAILED: ${error instanceof Failure ? error.message : (error.stack ?? error)}`);
    process.exitCode = 1;
  }
  killAll();
  process.exit(process.exitCode ?? 0);
}

// --- widgets by label ----------------------------------------------------------------------------

/** Makes `page` publish its widgets from its first frame on (set before the page's scripts run). */
export async function wantWidgets(page) {
  await page.addInitScript(() => {
    window.askpaneWantWidgets = true;
  });
}

/**
 * The widgets of the page's last frame that take a click or a tap, as the page publishes them on
 * `window.askpaneWidgets` (`{x, y, w, h, drag, label}` in CSS pixels; `label` is what a screen
 * reader hears, a button's words). Asks for them first when [`wantWidgets`] was not called.
 */
export async function widgets(page) {
  await page.evaluate(() => {
    window.askpaneWantWidgets = true;
  });
  await settle(page);
  return page.evaluate(() => window.askpaneWidgets ?? []);
}

const readingOrder = (a, b) => (Math.abs(a.y - b.y) < 4 ? a.x - b.x : a.y - b.y);

/**
 * The widget labelled `label` (a string: the whole label; a RegExp: a match), the `nth` of those
 * in reading order, once the page shows it (within `ms`). While it is not there the pointer is
 * moved to the page's bottom-right corner, so the page draws (and publishes) again.
 */
export async function labelled(page, label, { nth = 0, ms = 10_000 } = {}) {
  const matches = (w) => (typeof label === "string" ? w.label === label : label.test(w.label ?? ""));
  const deadline = Date.now() + ms;
  for (let nudge = 0; ; nudge += 1) {
    const all = await widgets(page);
    const found = all.filter(matches).sort(readingOrder);
    if (found.length > nth) return found[nth];
    if (Date.now() > deadline) {
      const labels = all.map((w) => w.label).filter((text) => text !== null);
      throw new Failure(`no widget labelled ${label} (#${nth}) within ${ms / 1000} s; the page has ${JSON.stringify(labels)}`);
    }
    const size = page.viewportSize() ?? { width: 2, height: 2 };
    await page.mouse.move(size.width - 1 - (nudge % 2), size.height - 1);
  }
}

/** Clicks the middle of the widget [`labelled`] `label`. */
export async function clickLabelled(page, label, options = {}) {
  const w = await labelled(page, label, options);
  await page.mouse.click(w.x + w.w / 2, w.y + w.h / 2);
}

/**
 * Clicks an empty spot `below` px under the widget labelled `label`, checked to be on no widget:
 * a click there gives the page the keyboard without focusing a field or pressing a button.
 */
export async function clickEmptyUnder(page, label, below = 40) {
  const anchor = await labelled(page, label);
  const at = { x: anchor.x + anchor.w / 2, y: anchor.y + anchor.h + below };
  const all = await widgets(page);
  const hit = all.find((w) => at.x >= w.x && at.x <= w.x + w.w && at.y >= w.y && at.y <= w.y + w.h);
  check(!hit, `the spot ${JSON.stringify(at)} under ${label} is on a widget: ${JSON.stringify(hit)}`);
  await page.mouse.click(at.x, at.y);
}
