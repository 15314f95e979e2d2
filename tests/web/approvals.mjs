// Issue 26: a Claude Code PermissionRequest hook's approval on `askpane inbox --ui web`'s page,
// at phone size (390×844, touch): `askpane hook` is fed the captured hook inputs of Claude Code
// 2.1.332 (tests/fixtures/claude-code/2.1.332/pr-*/hooks/…stdin.json) and hands each to the
// running inbox; the page shows the card and a tap decides it. Checks:
//   1. Enter pressed five times as the card appears decides nothing (the hook still waits, the
//      page sent no decision);
//   2. the card's buttons are on the screen (wrapped, none past the right or bottom edge);
//   3. Allow once → the hook prints exactly what Claude Code was given in the capture;
//   4. Always (the card's second button, the suggestion's rule) → allow + updatedPermissions with
//      the suggestion as given; the page sent the suggestion as the agent gave it;
//   5. Deny with a typed message → deny with the page's words.
// Buttons are found from the widgets the page publishes (window.askpaneWidgets): the card's row
// under its message box, in reading order. Screenshots: target/test-artifacts/web-approvals*.png.
// Every askpane started here is killed by its PID at the end. Exits non-zero on failure.

import { spawn } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import { Failure, check, killEvery, launch, runTest, settle, sleep, until } from "./common.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const artifacts = join(root, "target/test-artifacts");
const askpaneBin = resolve(root, process.env.ASKPANE_BIN ?? "target/debug/askpane");
const captures = join(root, "tests/fixtures/claude-code/2.1.332");
const viewport = { width: 390, height: 844 };
const children = new Set();

function capture(scenario, file) {
  return readFileSync(join(captures, scenario, `hooks/PermissionRequest.1.${file}.json`), "utf8");
}

function start(args, env, stdin = null) {
  const child = spawn(askpaneBin, args, { env, stdio: [stdin === null ? "ignore" : "pipe", "pipe", "pipe"] });
  const run = { child, pid: child.pid, stdout: "", stderr: "", exit: null };
  children.add(run);
  child.stdout.setEncoding("utf8").on("data", (text) => (run.stdout += text));
  child.stderr.setEncoding("utf8").on("data", (text) => (run.stderr += text));
  run.exited = new Promise((done) => child.on("exit", (code) => done((run.exit = { code }))));
  if (stdin !== null) child.stdin.end(stdin);
  return run;
}

/** The card's buttons, in reading order: the taps under its message box. */
async function buttons(page) {
  await settle(page);
  const all = await page.evaluate(() => window.askpaneWidgets ?? []);
  const taps = all.filter((w) => !w.drag && w.w > 0 && w.h > 0);
  // The message box: a focused text box senses drags too (to select), so it is looked for among
  // every widget.
  const box = all.filter((w) => w.w > viewport.width * 0.8 && w.h >= 30).sort((a, b) => a.y - b.y).pop();
  check(box, `no message box on the card: ${JSON.stringify(all)}`);
  return taps
    .filter((w) => w.y > box.y + box.h - 1 && w !== box)
    .sort((a, b) => (Math.abs(a.y - b.y) < 4 ? a.x - b.x : a.y - b.y));
}

async function tap(page, w) {
  await page.touchscreen.tap(w.x + w.w / 2, w.y + w.h / 2);
}

async function decided(hook, what) {
  await until(10_000, () => hook.exit !== null, `${what}: the hook did not end: ${hook.stderr}`);
  check(hook.exit.code === 0, `${what}: the hook exited ${hook.exit.code}: ${hook.stderr}`);
  return hook.stdout.trim() === "" ? null : JSON.parse(hook.stdout);
}

async function main() {
  mkdirSync(artifacts, { recursive: true });
  const scratch = mkdtempSync(join(tmpdir(), "askpane-web-approvals-"));
  const run = join(scratch, "run");
  mkdirSync(run);
  chmodSync(run, 0o700);
  const env = { PATH: process.env.PATH, HOME: scratch, XDG_RUNTIME_DIR: run, ASKPANE_STATE_DIR: join(scratch, "state") };
  const inbox = start(["inbox", "--ui", "web"], env);
  await until(15_000, () => /answer in your browser: (http\S+)/.test(inbox.stderr), `no link: ${inbox.stderr}`);
  const url = /answer in your browser: (http\S+)/.exec(inbox.stderr)[1];
  const context = await launch(scratch, viewport, { hasTouch: true, isMobile: true, deviceScaleFactor: 1 });
  try {
    const page = await context.newPage();
    const sent = [];
    page.on("websocket", (socket) =>
      socket.on("framesent", ({ payload }) => {
        try {
          sent.push(JSON.parse(String(payload)));
        } catch {}
      }),
    );
    await page.addInitScript(() => (window.askpaneWantWidgets = true));
    await page.goto(url);
    await page.waitForFunction(() => window.askpaneReady === true, null, { timeout: 30_000 });
    await settle(page);
    await page.touchscreen.tap(viewport.width / 2, viewport.height - 40);
    const decisions = () => sent.filter((m) => m.type === "permission_decision");

    // 1 and 3: Enter five times as the card comes decides nothing; then Allow once.
    let hook = start(["hook"], env, capture("pr-bash-allow", "stdin"));
    for (let i = 0; i < 40 && (await buttons(page).catch(() => [])).length < 3; i++) {
      await page.keyboard.press("Enter");
    }
    for (let i = 0; i < 5; i++) await page.keyboard.press("Enter");
    await sleep(800);
    check(hook.exit === null, `Enter decided the card: the hook printed ${hook.stdout}`);
    check(decisions().length === 0, `Enter sent a decision: ${JSON.stringify(decisions())}`);
    let row = await buttons(page);
    await page.screenshot({ path: join(artifacts, "web-approvals-allow.png") });
    const offered = (scenario) => JSON.parse(capture(scenario, "stdin")).permission_suggestions.length;
    check(row.length === 3 + offered("pr-bash-allow"), `Allow once, an Always per suggestion, Deny, Answer in the terminal: ${JSON.stringify(row)}`);
    for (const w of row) {
      check(w.x >= 0 && w.x + w.w <= viewport.width + 1 && w.y + w.h <= viewport.height, `a button off the screen: ${JSON.stringify(w)}`);
    }
    await tap(page, row[0]);
    let reply = await decided(hook, "Allow once");
    check(JSON.stringify(reply) === JSON.stringify(JSON.parse(capture("pr-bash-allow", "stdout"))), `Allow once printed ${JSON.stringify(reply)}`);

    // 4: Always, the suggestion as the agent gave it.
    hook = start(["hook"], env, capture("pr-bash-allow-rule", "stdin"));
    for (let i = 0; i < 100 && (await buttons(page).catch(() => [])).length < 3 + offered("pr-bash-allow-rule"); i++) await sleep(100);
    row = await buttons(page);
    await page.screenshot({ path: join(artifacts, "web-approvals-always.png") });
    check(row.length === 3 + offered("pr-bash-allow-rule"), `Allow once, the Always, Deny, Answer in the terminal: ${JSON.stringify(row)}`);
    await tap(page, row[1]);
    reply = await decided(hook, "Always");
    check(JSON.stringify(reply) === JSON.stringify(JSON.parse(capture("pr-bash-allow-rule", "stdout"))), `Always printed ${JSON.stringify(reply)}`);
    await until(5000, () => decisions().length >= 2, "the page's Always frame");
    const always = decisions()[1];
    const suggestion = JSON.parse(capture("pr-bash-allow-rule", "stdin")).permission_suggestions[0];
    check(JSON.stringify(always.suggestion) === JSON.stringify(suggestion), `the page sent ${JSON.stringify(always)}`);

    // 5: Deny with a typed message.
    hook = start(["hook"], env, capture("pr-bash-deny-message", "stdin"));
    for (let i = 0; i < 100 && (await buttons(page).catch(() => [])).length < 3; i++) await sleep(100);
    // A card that just appeared takes no tap for POINTER_GRACE (1 s, src/app/mod.rs): a tap in
    // that moment is dropped by design (issue 26: no click as a card appears can decide it), so
    // the person's tap into the message box comes after it.
    await sleep(1200);
    const all = await page.evaluate(() => window.askpaneWidgets ?? []);
    const box = all.filter((w) => !w.drag && w.w > viewport.width * 0.8 && w.h >= 30).sort((a, b) => a.y - b.y).pop();
    await tap(page, box);
    await settle(page);
    await page.keyboard.type("Not now: use the Makefile target instead.", { delay: 20 });
    await settle(page);
    await page.screenshot({ path: join(artifacts, "web-approvals-deny-typed.png") });
    row = await buttons(page);
    await tap(page, row[row.length - 2]);
    reply = await decided(hook, "Deny");
    check(reply?.hookSpecificOutput?.decision?.behavior === "deny", `Deny printed ${JSON.stringify(reply)}`);
    check(/Not now: use the Makefile target instead\./.test(reply.hookSpecificOutput.decision.message), `Deny's words: ${JSON.stringify(reply)}`);
  } finally {
    await context.close().catch(() => {});
    killEvery(children);
    rmSync(scratch, { recursive: true, force: true });
  }
}

await runTest("approvals on the page (phone)", main, () => killEvery(children), 3 * 60_000);
