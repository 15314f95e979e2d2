// An ACP agent's form (issue 28) on the page, in Debian's Chromium: `askpane acp --ui web` hosting
// the fake form agent (tests/fixtures/acp/form_agent.py, mode `notes`: a form "n1" with one text
// field, Notes), at 960×680. Checks:
//   1. the form is drawn on the page, its Notes box (the first text box has the keyboard) takes
//      what is typed once the short grace after an arrival is over;
//   2. a reload of the tab (a pull-to-refresh on a phone) shows the form again with what was typed,
//      and typing goes on at its end;
//   3. a click on Send form sends the agent `accept` with exactly the text typed, once.
// Widgets are found from `window.askpaneWidgets` by their screen-reader labels. Every askpane
// started here is killed by its PID at the end. Screenshots: target/test-artifacts/web-acp-form*.png.
// Runs the native binary (target/debug/askpane, or ASKPANE_BIN; it must embed dist/web) with no
// display. Exits non-zero on failure.

import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import { Failure, check, killEvery, launch, runTest, settle, sleep, until } from "./common.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const artifacts = join(root, "target/test-artifacts");
const askpaneBin = resolve(root, process.env.ASKPANE_BIN ?? "target/debug/askpane");
const agent = join(root, "tests/fixtures/acp/form_agent.py");
const viewport = { width: 960, height: 680 };
// The app's input guard drops keys and clicks in the first moments after a card appears.
const GRACE_MS = 1200;
const children = new Set();

/** Every line askpane wrote to the agent so far (the fake agent's log). */
function sentToAgent(log) {
  let text = "";
  try {
    text = readFileSync(log, "utf8");
  } catch {}
  return text.split("\n").flatMap((line) => {
    try {
      return [JSON.parse(line)];
    } catch {
      return [];
    }
  });
}

/** The widget whose screen-reader label is `label`, in the last frame. */
async function widget(page, label) {
  await settle(page);
  const all = await page.evaluate(() => window.askpaneWidgets ?? []);
  return all.find((w) => w.label === label && w.w > 0 && w.h > 0) ?? null;
}

/** Loads (or reloads) the page and waits until the form is drawn (its Send form button) and its
 * first text box, which has the keyboard, takes keys. */
async function formShown(page, load, what) {
  await load();
  await page.waitForFunction(() => window.askpaneReady === true, null, { timeout: 30_000 });
  const deadline = Date.now() + 15_000;
  while ((await widget(page, "Send form")) === null) {
    if (Date.now() > deadline) throw new Failure(`${what}: no form on the page: ${JSON.stringify(await page.evaluate(() => window.askpaneWidgets))}`);
    await sleep(50);
  }
  await sleep(GRACE_MS);
  await settle(page);
}

async function main() {
  mkdirSync(artifacts, { recursive: true });
  const scratch = mkdtempSync(join(tmpdir(), "askpane-web-acp-form-"));
  const work = join(scratch, "work");
  mkdirSync(work);
  const log = join(scratch, "agent.jsonl");
  const env = {
    PATH: process.env.PATH,
    HOME: scratch,
    LANG: "C.UTF-8",
    ASKPANE_STATE_DIR: join(scratch, "state"),
    FAKE_ACP_MODE: "notes",
    FAKE_ACP_LOG: log,
  };
  const args = ["acp", "--ui", "web", "-p", "Go.", "--", "python3", agent];
  const child = spawn(askpaneBin, args, { cwd: work, env, stdio: ["ignore", "ignore", "pipe"] });
  const run = { child, pid: child.pid, stderr: "", exit: null };
  children.add(run);
  child.stderr.setEncoding("utf8").on("data", (text) => (run.stderr += text));
  child.on("exit", (code, signal) => (run.exit = { code, signal }));
  const pattern = /answer in your browser: (http:\/\/127\.0\.0\.1:\d+\/#token=[0-9a-f]{64})\s/;
  await until(15_000, () => pattern.test(run.stderr) || run.exit !== null, `no link on stderr: ${run.stderr}`);
  const found = pattern.exec(run.stderr);
  if (!found) throw new Failure(`askpane acp exited before printing its link: ${run.stderr}`);
  const context = await launch(scratch, viewport);
  try {
    const page = await context.newPage();
    const problems = [];
    page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
    await page.addInitScript(() => (window.askpaneWantWidgets = true));

    // 1: the form, and what is typed into its first box.
    await formShown(page, () => page.goto(found[1], { timeout: 30_000 }), "1 the form");
    await page.keyboard.type("Ship it on", { delay: 10 });
    await settle(page);
    await page.screenshot({ path: join(artifacts, "web-acp-form.png") });

    // 2: a reload keeps it; typing goes on at its end.
    await formShown(page, () => page.reload({ timeout: 30_000 }), "2 after a reload");
    await page.keyboard.type(" Friday", { delay: 10 });
    await settle(page);
    await page.screenshot({ path: join(artifacts, "web-acp-form-reloaded.png") });
    check(sentToAgent(log).every((line) => line.id !== "n1"), "the form was sent by itself");

    // 3: Send form sends exactly what was typed, once.
    const send = await widget(page, "Send form");
    check(send, `no Send form button: ${JSON.stringify(await page.evaluate(() => window.askpaneWidgets))}`);
    await page.mouse.click(send.x + send.w / 2, send.y + send.h / 2);
    const answers = () => sentToAgent(log).filter((line) => line.id === "n1" && line.method === undefined);
    await until(10_000, () => answers().length > 0, `the agent got no answer to the form: ${JSON.stringify(sentToAgent(log))}`);
    await sleep(300);
    check(answers().length === 1, `the agent got ${answers().length} answers: ${JSON.stringify(answers())}`);
    const result = answers()[0].result;
    const expected = { action: "accept", content: { notes: "Ship it on Friday" } };
    check(JSON.stringify(result) === JSON.stringify(expected), `the agent got ${JSON.stringify(result)}, expected ${JSON.stringify(expected)}`);
    check(problems.length === 0, problems.join("; "));
    console.log("ok   an ACP form on the page: typed, kept across a reload, sent once word for word");
  } finally {
    await context.close().catch(() => {});
    killEvery(children);
    rmSync(scratch, { recursive: true, force: true });
  }
}

await runTest("ACP form on the page", main, () => killEvery(children), 2 * 60_000);
