// The plan page (issue 26) in Debian's Chromium: `askpane claude --ui web` hosting the fake Claude
// Code (tests/fake-claude), whose session asks ExitPlanMode as 2.1.332 does (the `can_use_tool` of
// tests/fixtures/claude-code/2.1.332/plan-host-*), with the page answering:
//   1. at 960×680, by keyboard only: the plan is drawn (the page changes as the block cursor moves),
//      `j` then `c` comments on the paragraph, `n` writes a note, Ctrl+Enter keeps planning → the
//      fake Claude Code gets the deny whose message is the review, quote, comment and note, word
//      for word;
//   2. at 390×844 (a phone: touch, `isMobile`): the page does not scroll sideways, Approve and Keep
//      planning are tap targets inside the screen, and a tap on Approve sends the plan's bare allow.
// Claude Code is started with `--permission-mode plan` after `--`, which askpane passes on.
// Runs the native binary (target/debug/askpane, or ASKPANE_BIN; it must embed dist/web) with no
// display. Every wait is bounded; every askpane started here is killed by its PID at the end.
// Screenshots: target/test-artifacts/web-plan*.png. Run with `scripts/web-test`, or
// `node tests/web/plan.mjs` once askpane is built with the web app. Exits non-zero on failure.

import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import { Failure, check, difference, killEvery, launch, runTest, settle, sleep, until } from "./common.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const artifacts = join(root, "target/test-artifacts");
const askpaneBin = resolve(root, process.env.ASKPANE_BIN ?? "target/debug/askpane");
const fake = join(root, "tests/fake-claude/fake_claude.py");

const URL_TIMEOUT = 15_000;
const READY_TIMEOUT = 30_000;
const FRAME_TIMEOUT = 10_000;
const WHOLE_RUN_TIMEOUT = 4 * 60_000;
// The app's input guard drops keys and taps in the first moments after a page appears.
const KEY_GRACE_MS = 600;
const TAP_TARGET = 44;

const PLAN =
  "# Greeting\n\nChange the greeting, then test.\n\n## Steps\n\n1. Change greeting.txt to say hello world.\n2. Run the tests.\n";
const PLAN_FILE = "/home/dev/.claude/plans/please-do-the-task-snug-duckling.md";
const REVIEW =
  "The user did not approve this plan and wants you to keep planning. Their review:\n\n" +
  "> Change the greeting, then test.\n\nSay why.\n\nAlso update the README.";

// Where the phone layout draws the two ends (CSS px, read off target/test-artifacts/web-plan-phone.png).
const PHONE_APPROVE = { x: 57, y: 746 };
const PHONE_KEEP_PLANNING = { x: 169, y: 746 };

const children = new Set();

function askpaneEnv(extra) {
  const env = { ...process.env };
  delete env.DISPLAY;
  delete env.WAYLAND_DISPLAY;
  for (const name of Object.keys(env)) if (name.startsWith("ASKPANE_")) delete env[name];
  env.ASKPANE_NO_INBOX = "1";
  return { ...env, ...extra };
}

/** The fake's transcript: the captured start, ExitPlanMode asked, the host's `reply`, the end. */
function transcript(reply) {
  const fixture = join(root, "tests/fixtures/session.answer-with-notes.2.1.330.replay.jsonl");
  const records = readFileSync(fixture, "utf8").split("\n").filter(Boolean).map((line) => JSON.parse(line));
  const init = records.findIndex((record) => record.line?.subtype === "init");
  const input = { plan: PLAN, planFilePath: PLAN_FILE };
  const cli = (line) => ({ dir: "<<", line });
  return [
    ...records.slice(0, init + 1),
    cli({ type: "assistant", message: { role: "assistant", content: [{ type: "tool_use", id: "toolu_plan_1", name: "ExitPlanMode", input }] } }),
    cli({ type: "control_request", request_id: "plan-1", request: { subtype: "can_use_tool", tool_name: "ExitPlanMode", display_name: "ExitPlanMode", input, tool_use_id: "toolu_plan_1", requires_user_interaction: true } }),
    { dir: ">>", line: { type: "control_response", response: { subtype: "success", request_id: "plan-1", response: reply } } },
    cli({ type: "user", message: { role: "user", content: [{ type: "tool_result", content: "(read)", is_error: reply.behavior === "deny", tool_use_id: "toolu_plan_1" }] } }),
    cli({ type: "result", subtype: "success", is_error: false, num_turns: 2, duration_ms: 1200, result: "Done." }),
    { dir: "exit", line: 0 },
  ];
}

/** `askpane claude --ui web` on the fake, replaying `records`; resolves to the run once its URL is out. */
async function startClaude(scratch, name, records) {
  const transcriptPath = join(scratch, `${name}-transcript.jsonl`);
  const reportPath = join(scratch, `${name}-report.json`);
  writeFileSync(transcriptPath, records.map((record) => JSON.stringify(record)).join("\n") + "\n");
  // After `--`: Claude Code's own arguments, passed on as they are.
  const args = ["claude", "--claude-bin", fake, "-p", "Please do the task.", "--ui", "web", "--", "--permission-mode", "plan"];
  const child = spawn(askpaneBin, args, {
    cwd: scratch,
    env: askpaneEnv({ FAKE_CLAUDE_TRANSCRIPT: transcriptPath, FAKE_CLAUDE_REPORT: reportPath }),
    stdio: ["ignore", "pipe", "pipe"],
  });
  const run = { child, pid: child.pid, label: `askpane ${args.join(" ")}`, stderr: "", exit: null, reportPath };
  children.add(run);
  child.stdout.resume();
  child.stderr.setEncoding("utf8").on("data", (text) => (run.stderr += text));
  run.exited = new Promise((done) => {
    child.on("exit", (code, signal) => done((run.exit = { code, signal })));
    child.on("error", (error) => done((run.exit = { code: null, signal: null, error })));
  });
  const pattern = /askpane: answer in your browser: (http:\/\/127\.0\.0\.1:\d+\/#token=[0-9a-f]{64})\s/;
  await until(URL_TIMEOUT, () => pattern.test(run.stderr) || run.exit !== null, `${run.label}: no URL on stderr: ${run.stderr}`);
  const found = pattern.exec(run.stderr);
  if (!found) throw new Failure(`${run.label} exited before printing its URL: ${run.stderr}`);
  run.url = found[1];
  return run;
}

/** The reply the fake Claude Code got to the plan (its report's control_response comparison). */
async function replyTo(run, name) {
  let comparison = null;
  await until(
    FRAME_TIMEOUT,
    () => {
      try {
        const report = JSON.parse(readFileSync(run.reportPath, "utf8"));
        comparison = report.comparisons.find((c) => c.expected?.type === "control_response") ?? null;
      } catch {}
      return comparison !== null;
    },
    `${name}: the fake Claude Code got no reply to the plan`,
  );
  check(comparison.ok === true, `${name}: the reply is not of the shape 2.1.332 took: ${JSON.stringify(comparison)}`);
  const argv = JSON.parse(readFileSync(run.reportPath, "utf8")).argv ?? [];
  check(
    JSON.stringify(argv.slice(-2)) === JSON.stringify(["--permission-mode", "plan"]),
    `${name}: Claude Code was not started in plan mode: ${JSON.stringify(argv)}`,
  );
  return JSON.parse(comparison.got_text).response.response;
}

async function stop(run) {
  if (run.exit !== null) return;
  try {
    process.kill(run.pid, "SIGTERM");
  } catch {
    return;
  }
  if (!(await Promise.race([run.exited.then(() => true), sleep(3000).then(() => false)]))) {
    try {
      process.kill(run.pid, "SIGKILL");
    } catch {}
    await Promise.race([run.exited, sleep(2000)]);
  }
}

/** A fresh Chromium on a profile of its own under `scratch`. */
function browser(scratch, name, viewport, options = {}) {
  const dir = join(scratch, name);
  mkdirSync(dir, { recursive: true });
  return launch(dir, viewport, options);
}

/** Opens the run's page; records the types of the WebSocket messages it receives and sends. */
async function openTab(context, run, name) {
  const page = await context.newPage();
  const tab = { page, name, received: [], sent: [], problems: [] };
  page.on("pageerror", (error) => tab.problems.push(`page error: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error") tab.problems.push(`console error: ${message.text()}`);
  });
  page.on("websocket", (socket) => {
    const parse = (payload) => {
      try {
        return JSON.parse(typeof payload === "string" ? payload : payload.toString("utf8"));
      } catch {
        return {};
      }
    };
    socket.on("framereceived", ({ payload }) => tab.received.push(parse(payload)));
    socket.on("framesent", ({ payload }) => tab.sent.push(parse(payload)));
  });
  await page.addInitScript(() => {
    window.askpaneWantWidgets = true;
  });
  await page.goto(run.url, { timeout: READY_TIMEOUT });
  await page.waitForFunction(() => window.askpaneReady === true, null, { timeout: READY_TIMEOUT });
  await until(FRAME_TIMEOUT, () => tab.received.some((m) => m.type === "permission_request"), `${name}: the plan never reached the page`);
  const asked = tab.received.find((m) => m.type === "permission_request");
  check(asked.request?.tool_name === "ExitPlanMode", `${name}: the page got ${JSON.stringify(asked)}`);
  await settle(page);
  await page.waitForTimeout(KEY_GRACE_MS);
  await settle(page);
  return tab;
}

async function press(page, key) {
  await page.keyboard.press(key);
  await settle(page);
}

async function typeText(page, text) {
  await page.keyboard.type(text);
  await settle(page);
}

/** 1. The review by keyboard, sent with Ctrl+Enter. */
async function keepPlanning(scratch) {
  const name = "1 keep planning";
  const run = await startClaude(scratch, "keep", transcript({ behavior: "deny", message: "(the review)" }));
  const context = await browser(scratch, "desktop", { width: 960, height: 680 });
  try {
    const tab = await openTab(context, run, name);
    const before = await tab.page.screenshot({ path: join(artifacts, "web-plan.png") });
    await press(tab.page, "j");
    const moved = await tab.page.screenshot({ path: join(artifacts, "web-plan-cursor.png") });
    check(
      (await difference(tab.page, before, moved)) > 0,
      `${name}: the page did not change when the block cursor moved (target/test-artifacts/web-plan.png, web-plan-cursor.png)`,
    );
    await press(tab.page, "c");
    await typeText(tab.page, "Say why.");
    await press(tab.page, "Escape");
    await press(tab.page, "n");
    await typeText(tab.page, "Also update the README.");
    await tab.page.screenshot({ path: join(artifacts, "web-plan-review.png") });
    await press(tab.page, "Control+Enter");
    const reply = await replyTo(run, name);
    check(
      JSON.stringify(reply) === JSON.stringify({ behavior: "deny", message: REVIEW }),
      `${name}: Claude Code got ${JSON.stringify(reply)}, expected the deny with ${JSON.stringify(REVIEW)}`,
    );
    check(tab.problems.length === 0, `${name}: ${tab.problems.join("; ")}`);
    console.log(`ok   ${name}: the review reached Claude Code word for word (target/test-artifacts/web-plan*.png)`);
  } finally {
    await context.close();
    await stop(run);
  }
}

/** The control drawn at `at` in the last frame, if any. */
function controlAt(widgets, at) {
  return widgets.find((w) => !w.drag && at.x >= w.x && at.x <= w.x + w.w && at.y >= w.y && at.y <= w.y + w.h);
}

/** 2. On a phone: both ends on screen, tap-sized; a tap on Approve approves. */
async function phone(scratch) {
  const name = "2 phone";
  const viewport = { width: 390, height: 844 };
  const run = await startClaude(scratch, "phone", transcript({ behavior: "allow" }));
  const context = await browser(scratch, "phone", viewport, { hasTouch: true, isMobile: true });
  try {
    const tab = await openTab(context, run, name);
    await tab.page.screenshot({ path: join(artifacts, "web-plan-phone.png") });
    const [scrollWidth, innerWidth] = await tab.page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
    check(scrollWidth <= innerWidth, `${name}: the page scrolls sideways (${scrollWidth} > ${innerWidth} px)`);
    const widgets = await tab.page.evaluate(() => window.askpaneWidgets ?? []);
    for (const [what, at] of [["Approve", PHONE_APPROVE], ["Keep planning", PHONE_KEEP_PLANNING]]) {
      const control = controlAt(widgets, at);
      check(control, `${name}: no control at ${JSON.stringify(at)} for ${what}: ${JSON.stringify(widgets)}`);
      check(control.x >= 0 && control.y >= 0 && control.x + control.w <= viewport.width + 1 && control.y + control.h <= viewport.height + 1, `${name}: ${what} is off the screen: ${JSON.stringify(control)}`);
      check(control.w >= TAP_TARGET - 0.5 && control.h >= TAP_TARGET - 0.5, `${name}: ${what} is under ${TAP_TARGET} px: ${JSON.stringify(control)}`);
    }
    await tab.page.touchscreen.tap(PHONE_APPROVE.x, PHONE_APPROVE.y);
    const reply = await replyTo(run, name);
    check(JSON.stringify(reply) === JSON.stringify({ behavior: "allow" }), `${name}: Claude Code got ${JSON.stringify(reply)}, expected the plan's bare allow`);
    // Playwright reports the page's frames on its own schedule: the fake may have the reply first.
    const decided = () => tab.sent.find((m) => m.type === "permission_decision");
    await until(FRAME_TIMEOUT, () => decided() !== undefined, `${name}: the page sent no decision: ${JSON.stringify(tab.sent)}`);
    const decision = decided();
    check(decision?.decision === "allow", `${name}: the page sent ${JSON.stringify(decision)} among ${JSON.stringify(tab.sent)}`);
    check(tab.problems.length === 0, `${name}: ${tab.problems.join("; ")}`);
    console.log(`ok   ${name}: Approve and Keep planning on screen and tap-sized; a tap approved (target/test-artifacts/web-plan-phone.png)`);
  } finally {
    await context.close();
    await stop(run);
  }
}

async function main() {
  mkdirSync(artifacts, { recursive: true });
  const scratch = mkdtempSync(join(tmpdir(), "askpane-web-plan-"));
  try {
    await keepPlanning(scratch);
    await phone(scratch);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

await runTest("tests/web/plan.mjs", main, () => killEvery(children), WHOLE_RUN_TIMEOUT);
