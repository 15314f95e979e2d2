// Benchmark of the web app's first frame in Debian's Chromium (issue 14), run by scripts/bench-web.
//
// Serves dist/web and a baseline page from the same server, then loads each cold (no cache),
// alternately, LOADS times: askpane's time from navigation start to its first painted frame
// (`window.askpaneFirstFrameMs`; eframe's WebGL draws it), and the baseline's — a page that
// fetches a small script and paints one frame on a canvas — measured the same way in the same
// run, so a busy machine slows both.
// Prints the medians and the ratios. Not a test: it fails only if a page fails.

import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import { Failure, check, chromiumPath, launch, serveDirectory } from "./common.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const dist = join(root, "dist/web");
const loads = Number(process.env.LOADS ?? 15);
const viewport = { width: 960, height: 680 };

const BASELINE = {
  "/__baseline.html":
    '<!doctype html><meta charset="utf-8"><title>baseline</title>' +
    '<canvas id="c" width="960" height="680"></canvas><script src="/__baseline.js"></script>',
  "/__baseline.js":
    "requestAnimationFrame(() => { const c = document.getElementById('c').getContext('2d');" +
    " c.fillStyle = '#224'; c.fillRect(0, 0, 960, 680); c.fillStyle = '#fff';" +
    " c.fillText('Which database?', 20, 40);" +
    " requestAnimationFrame(() => { window.askpaneFirstFrameMs = performance.now();" +
    " window.askpaneReady = true; }); });",
};

async function firstFrame(context, url) {
  const page = await context.newPage();
  const problems = [];
  page.on("pageerror", (error) => problems.push(error.message));
  await page.goto(url);
  await page.waitForFunction(() => window.askpaneReady === true, null, { timeout: 30_000 });
  const ms = await page.evaluate(() => window.askpaneFirstFrameMs);
  await page.close();
  check(problems.length === 0, `${url}: ${problems.join("; ")}`);
  return ms;
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function main() {
  check(existsSync(join(dist, "app_bg.wasm")), "dist/web is missing: run scripts/build-web first");
  check(existsSync(chromiumPath), `${chromiumPath} is missing: apt-get install chromium`);
  const scratch = mkdtempSync(join(tmpdir(), "askpane-bench-web-"));
  const { server, base } = await serveDirectory(dist, BASELINE);
  const context = await launch(scratch, viewport);
  try {
    // One warm-up of each (Chromium's own start), not counted.
    const urls = {
      app: `${base}/#fixture=database`,
      baseline: `${base}/__baseline.html`,
    };
    for (const url of Object.values(urls)) await firstFrame(context, url);
    const times = { app: [], baseline: [] };
    for (let i = 0; i < loads; i += 1) {
      for (const [name, url] of Object.entries(urls)) times[name].push(await firstFrame(context, url));
    }
    const [a, b] = [median(times.app), median(times.baseline)];
    const row = (label, m, all) =>
      console.log(`  ${label.padEnd(30)} ${m.toFixed(0).padStart(5)} ms   (${all.map((t) => t.toFixed(0)).join(" ")})`);
    console.log(`first frame, median of ${loads} cold loads (navigation start → frame painted):`);
    row("askpane web app (WebGL)", a, times.app);
    row("baseline page", b, times.baseline);
    console.log(`  ratio: app ${(a / b).toFixed(2)}× the baseline`);
    console.log(`  target: askpane ≤ 300 ms`);
  } finally {
    await context.close();
    server.close();
    rmSync(scratch, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error instanceof Failure ? `FAIL ${error.message}` : error);
  process.exit(1);
});
