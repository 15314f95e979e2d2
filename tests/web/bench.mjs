// Benchmark of the web app's first frame in Debian's Chromium (issue 14), run by scripts/bench-web.
//
// Serves dist/web and a baseline page from one server and the floor (tools/web-floor, built by
// `scripts/build-web --floor` into the directory ASKPANE_WEB_FLOOR names) from another, then loads
// each page cold (no cache), one after the other, LOADS times: askpane's time from navigation
// start to its first painted frame (`window.askpaneFirstFrameMs`; eframe's WebGL draws it); the
// floor's, eframe's WebGL page on askpane's page and build profile drawing nothing (`#empty`) and
// one question in plain egui widgets (`#question`); and the baseline's, a page that fetches a small
// script and paints one frame on a canvas. All are measured the same way in the same run, so a busy
// machine slows them all. Prints the medians and the ratios: the web app against the blank page
// (issue 30's target) and against eframe's empty page (what askpane adds to the floor).
// Not a test: it fails only if a page fails.

import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import { Failure, check, chromiumPath, launch, serveDirectory } from "./common.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const dist = join(root, "dist/web");
const floor = process.env.ASKPANE_WEB_FLOOR ?? join(root, "target/web-floor");
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
  check(existsSync(join(floor, "app_bg.wasm")), `${floor} is missing: run scripts/build-web --floor`);
  check(existsSync(chromiumPath), `${chromiumPath} is missing: apt-get install chromium`);
  const scratch = mkdtempSync(join(tmpdir(), "askpane-bench-web-"));
  const { server, base } = await serveDirectory(dist, BASELINE);
  const floorServer = await serveDirectory(floor);
  const context = await launch(scratch, viewport);
  try {
    // One warm-up of each (Chromium's own start), not counted.
    const pages = [
      { name: "askpane web app (WebGL)", url: `${base}/#fixture=database` },
      { name: "eframe page drawing nothing", url: `${floorServer.base}/#empty` },
      { name: "eframe page, a plain question", url: `${floorServer.base}/#question` },
      { name: "blank baseline page", url: `${base}/__baseline.html` },
    ];
    for (const page of pages) await firstFrame(context, page.url);
    const times = pages.map(() => []);
    for (let i = 0; i < loads; i += 1) {
      for (const [index, page] of pages.entries()) times[index].push(await firstFrame(context, page.url));
    }
    const [app, empty, question, blank] = times.map(median);
    console.log(`first frame, median of ${loads} cold loads (navigation start → frame painted):`);
    for (const [index, page] of pages.entries()) {
      const all = times[index].map((t) => t.toFixed(0)).join(" ");
      console.log(`  ${page.name.padEnd(30)} ${median(times[index]).toFixed(0).padStart(5)} ms   (${all})`);
    }
    console.log(`  askpane: ${(app / blank).toFixed(2)}× the blank page (target ≤ 3×, and ≤ 300 ms)`);
    console.log(`  askpane: ${(app / empty).toFixed(2)}× eframe's empty page (${(app - empty).toFixed(0)} ms of its own)`);
    console.log(
      `  the floor: eframe's empty page ${(empty / blank).toFixed(2)}×, a plain question ` +
        `${(question / blank).toFixed(2)}× the blank page`,
    );
  } finally {
    await context.close();
    server.close();
    floorServer.server.close();
    rmSync(scratch, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error instanceof Failure ? `FAIL ${error.message}` : error);
  process.exit(1);
});
