import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { check, launch, serveDirectory } from "./common.mjs";
const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const { server, base } = await serveDirectory(join(root, "dist/web"), {});
const defaults = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync"];
const flags = process.env.FLAGS;
const ctx = {};
for (const [name, extra] of [["default", []], ["flags", [flags]]]) {
  ctx[name] = await launch(mkdtempSync(join(tmpdir(), "fl-")), { width: 960, height: 680 }, { args: [...defaults, ...extra] });
}
async function first(context) {
  const page = await context.newPage();
  await page.goto(`${base}/#fixture=database`);
  await page.waitForFunction(() => window.askpaneReady === true, null, { timeout: 30000 });
  const ms = await page.evaluate(() => window.askpaneFirstFrameMs);
  await page.close();
  return ms;
}
for (const c of Object.values(ctx)) await first(c);
const t = { default: [], flags: [] }, diff = [];
const loads = Number(process.env.LOADS ?? 15);
for (let i = 0; i < loads; i++) {
  const order = i % 2 ? ["flags", "default"] : ["default", "flags"];
  for (const k of order) t[k].push(await first(ctx[k]));
  diff.push(t.flags[i] - t.default[i]);
}
const med = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
console.log(`${flags}: default ${med(t.default).toFixed(0)} ms, with flags ${med(t.flags).toFixed(0)} ms, median per-load difference ${med(diff).toFixed(0)} ms (${loads} loads each)`);
for (const c of Object.values(ctx)) await c.close();
server.close();
