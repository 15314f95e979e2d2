// The plan page (issue 26) in Debian's Chromium: `askpane claude --ui web` hosting the fake Claude
// Code (tests/fake-claude), whose session asks ExitPlanMode as 2.1.332 does (the `can_use_tool` of
// tests/fixtures/claude-code/2.1.332/plan-host-*), with the page answering:
//   1. at 960×680, by keyboard only: the plan is drawn (the page changes as the block cursor moves),
//      `j` then `c` comments on the paragraph, `n` writes a note, the tab is reloaded (the review
//      is kept), Ctrl+Enter keeps planning → the fake Claude Code gets the deny whose message is
//      the review, quote, comment and note, word for word;
//   2. at 390×844 (a phone: touch, `isMobile`): the page does not scroll sideways, Approve and Keep
//      planning are tap targets inside the screen, and a tap on Approve sends the plan's bare allow;
//   3. `askpane inbox --ui web` with a hook's question and a hook's plan (the captured
//      `plan-hook-allow` PermissionRequest) waiting, at 960×680: both are entries of the list on
//      the left, the question (the oldest) shown; a click on the plan's entry shows the plan with
//      the list still beside it, `j` `c` comments, Ctrl+PgDn shows the question and Ctrl+PgUp the
//      plan again, and Ctrl+Enter sends the comment, kept through the switching, to the hook;
//   4. the same at 390×844 (touch): "All waiting" (the bar's second button) lists both, a tap on
//      the plan's entry shows it in the one column without sideways scrolling, and its Approve (the
//      bottom row's first button) sends the hook's allow.
//   Widgets are found from `window.askpaneWidgets` by where they sit relative to each other (the
//   list's entries at the left edge, the bar's buttons at the top, the plan's ends at the bottom),
//   never at fixed coordinates.
// Claude Code is started with `--permission-mode plan` after `--`, which askpane passes on.
// Runs the native binary (target/debug/askpane, or ASKPANE_BIN; it must embed dist/web) with no
// display. Every wait is bounded; every askpane started here is killed by its PID at the end.
// Screenshots: target/test-artifacts/web-plan*.png. Run with `scripts/web-test`, or
// `node tests/web/plan.mjs` once askpane is built with the web app. Exits non-zero on failure.

import { spawn } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
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

/** Reloads the tab and waits until the plan is shown again and keys are taken. */
async function reloadTab(tab, name) {
  tab.received.length = 0;
  await tab.page.reload({ timeout: READY_TIMEOUT });
  await tab.page.waitForFunction(() => window.askpaneReady === true, null, { timeout: READY_TIMEOUT });
  await until(FRAME_TIMEOUT, () => tab.received.some((m) => m.type === "permission_request"), `${name}: the plan did not come back after a reload`);
  await settle(tab.page);
  await tab.page.waitForTimeout(KEY_GRACE_MS);
  await settle(tab.page);
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
    // A reload (a pull-to-refresh on a phone) keeps the review: the tab's sessionStorage holds
    // it for this very plan, and the page shows the plan again with it.
    await reloadTab(tab, name);
    await tab.page.screenshot({ path: join(artifacts, "web-plan-review-reloaded.png") });
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

// ---------------------------------------------------------------------------------------------
// 3 and 4: the plan as an entry of the list, beside a question, in `askpane inbox --ui web`.

const captures = join(root, "tests/fixtures/claude-code/2.1.332");
const HOOK_PLAN = readFileSync(join(captures, "plan-hook-allow/hooks/PermissionRequest.1.stdin.json"), "utf8");
const HOOK_QUESTION = JSON.stringify({
  session_id: "5e55-10n", cwd: "/home/dev/project", permission_mode: "default",
  hook_event_name: "PreToolUse", tool_name: "AskUserQuestion", tool_use_id: "toolu_beside_plan",
  tool_input: { questions: [{ question: "Which colour?", header: "Colour", multiSelect: false,
    options: [{ label: "Red", description: "warm" }, { label: "Blue", description: "cool" }] }] },
});

/** `askpane <args>` with `env`, its output collected; `stdin` written and closed when given. */
function startProcess(args, env, stdin = null) {
  const child = spawn(askpaneBin, args, { env, stdio: [stdin === null ? "ignore" : "pipe", "pipe", "pipe"] });
  const run = { child, pid: child.pid, label: `askpane ${args.join(" ")}`, stdout: "", stderr: "", exit: null };
  children.add(run);
  child.stdout.setEncoding("utf8").on("data", (text) => (run.stdout += text));
  child.stderr.setEncoding("utf8").on("data", (text) => (run.stderr += text));
  run.exited = new Promise((done) => child.on("exit", (code, signal) => done((run.exit = { code, signal }))));
  if (stdin !== null) child.stdin.end(stdin);
  return run;
}

/** An inbox for the browser with a question then a plan waiting in it, each asked by a hook. */
async function inboxWithQuestionAndPlan(scratch, name) {
  const dir = join(scratch, name);
  const run = join(dir, "run");
  mkdirSync(run, { recursive: true });
  chmodSync(run, 0o700);
  const env = { PATH: process.env.PATH, HOME: dir, XDG_RUNTIME_DIR: run, ASKPANE_STATE_DIR: join(dir, "state") };
  const inbox = startProcess(["inbox", "--ui", "web"], env);
  const link = /answer in your browser: (http\S+)/;
  await until(URL_TIMEOUT, () => link.test(inbox.stderr) || inbox.exit !== null, `${name}: no link: ${inbox.stderr}`);
  check(inbox.exit === null, `${name}: the inbox ended: ${inbox.stderr}`);
  const question = startProcess(["hook"], env, HOOK_QUESTION);
  // The question first: it is the oldest, shown until another entry is picked.
  await sleep(300);
  const plan = startProcess(["hook"], env, HOOK_PLAN);
  return { inbox, question, plan, url: link.exec(inbox.stderr)[1] };
}

/** The widgets of the last frame that take a click (not a drag). */
async function taps(page) {
  await settle(page);
  const all = await page.evaluate(() => window.askpaneWidgets ?? []);
  return all.filter((w) => !w.drag && w.w > 0 && w.h > 0);
}

/** The request list's entries on a wide page: the two-line rows against the left edge. */
async function listEntries(page, viewport) {
  return (await taps(page)).filter((w) => w.x < 40 && w.w < viewport.width / 2 && w.h >= 36).sort((a, b) => a.y - b.y);
}

/** The hook's reply once it has ended. */
async function hookReply(hook, what) {
  await until(FRAME_TIMEOUT, () => hook.exit !== null, `${what}: the hook did not end: ${hook.stderr}`);
  check(hook.exit.code === 0, `${what}: the hook exited ${JSON.stringify(hook.exit)}: ${hook.stderr}`);
  return JSON.parse(hook.stdout);
}

async function click(page, w) {
  await page.mouse.click(w.x + w.w / 2, w.y + w.h / 2);
  await settle(page);
  // The input guard after a new item is shown.
  await page.waitForTimeout(KEY_GRACE_MS);
}

/** 3. Beside a question, at 960×680: listed, switched to, away and back, the comment kept. */
async function besideAQuestion(scratch) {
  const name = "3 beside a question";
  const viewport = { width: 960, height: 680 };
  const { question, plan, url } = await inboxWithQuestionAndPlan(scratch, "beside");
  const context = await browser(scratch, "beside-browser", viewport);
  try {
    const page = await context.newPage();
    const problems = [];
    page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
    await page.addInitScript(() => (window.askpaneWantWidgets = true));
    await page.goto(url, { timeout: READY_TIMEOUT });
    await page.waitForFunction(() => window.askpaneReady === true, null, { timeout: READY_TIMEOUT });
    let entries = [];
    const deadline = Date.now() + READY_TIMEOUT;
    while ((entries = await listEntries(page, viewport)).length < 2 && Date.now() < deadline) await sleep(100);
    check(entries.length === 2, `${name}: the list does not hold the question and the plan: ${JSON.stringify(await taps(page))}`);
    await page.waitForTimeout(KEY_GRACE_MS);
    const onQuestion = await page.screenshot({ path: join(artifacts, "web-plan-beside-question.png") });
    await click(page, entries[1]);
    const onPlan = await page.screenshot({ path: join(artifacts, "web-plan-beside.png") });
    check((await difference(page, onQuestion, onPlan)) > 0.02, `${name}: the plan's entry showed nothing new (web-plan-beside*.png)`);
    const beside = await listEntries(page, viewport);
    check(
      JSON.stringify(beside) === JSON.stringify(entries),
      `${name}: the list did not stay beside the plan: ${JSON.stringify(entries)} then ${JSON.stringify(beside)}`,
    );
    await press(page, "j");
    await press(page, "c");
    await typeText(page, "Only this step.");
    await press(page, "Escape");
    await press(page, "Control+PageDown");
    await page.waitForTimeout(KEY_GRACE_MS);
    const away = await page.screenshot({ path: join(artifacts, "web-plan-beside-away.png") });
    check((await difference(page, onQuestion, away)) < (await difference(page, onPlan, away)), `${name}: Ctrl+PgDn did not go back to the question (web-plan-beside-away.png)`);
    await press(page, "Control+PageUp");
    await page.waitForTimeout(KEY_GRACE_MS);
    await page.screenshot({ path: join(artifacts, "web-plan-beside-back.png") });
    check(question.exit === null && plan.exit === null, `${name}: something was decided by switching: ${question.stdout} ${plan.stdout}`);
    await press(page, "Control+Enter");
    const reply = await hookReply(plan, name);
    const decision = reply?.hookSpecificOutput?.decision;
    const review = "The user did not approve this plan and wants you to keep planning. Their review:\n\n" +
      "> 1. Change greeting.txt to say hello world.\n\nOnly this step.";
    check(decision?.behavior === "deny" && decision?.message === review, `${name}: the hook printed ${JSON.stringify(reply)}, expected the deny with ${JSON.stringify(review)}`);
    check(question.exit === null, `${name}: the question was decided too: ${question.stdout}`);
    check(problems.length === 0, `${name}: ${problems.join("; ")}`);
    console.log(`ok   ${name}: the plan listed beside the question, switched to and back, its comment sent (target/test-artifacts/web-plan-beside*.png)`);
  } finally {
    await context.close();
  }
}

/** 4. The same on a phone: All waiting lists the plan; tapped, it fills the one column. */
async function besideAQuestionOnAPhone(scratch) {
  const name = "4 beside a question, phone";
  const viewport = { width: 390, height: 844 };
  const { plan, url } = await inboxWithQuestionAndPlan(scratch, "beside-phone");
  const context = await browser(scratch, "beside-phone-browser", viewport, { hasTouch: true, isMobile: true });
  try {
    const page = await context.newPage();
    await page.addInitScript(() => (window.askpaneWantWidgets = true));
    await page.goto(url, { timeout: READY_TIMEOUT });
    await page.waitForFunction(() => window.askpaneReady === true, null, { timeout: READY_TIMEOUT });
    // The bar over the one column: "Questions (2)" and "All waiting", side by side near the top
    // (under History, alone on its row).
    const bar = async () => {
      const top = (await taps(page)).filter((w) => w.y < 160 && w.h < 80);
      const row = top.find((w) => top.filter((o) => Math.abs(o.y - w.y) < 4).length >= 2);
      return row ? top.filter((w) => Math.abs(w.y - row.y) < 4).sort((a, b) => a.x - b.x) : [];
    };
    const deadline = Date.now() + READY_TIMEOUT;
    while ((await bar()).length < 2 && Date.now() < deadline) await sleep(100);
    await page.waitForTimeout(KEY_GRACE_MS);
    const buttons = await bar();
    check(buttons.length >= 2, `${name}: no bar with All waiting: ${JSON.stringify(await taps(page))}`);
    await page.touchscreen.tap(buttons[1].x + buttons[1].w / 2, buttons[1].y + buttons[1].h / 2);
    await settle(page);
    const rows = (await taps(page)).filter((w) => w.w > viewport.width * 0.7 && w.h >= 36 && w.y > buttons[1].y + buttons[1].h).sort((a, b) => a.y - b.y);
    await page.screenshot({ path: join(artifacts, "web-plan-phone-list.png") });
    check(rows.length === 2, `${name}: All waiting does not list the question and the plan: ${JSON.stringify(rows)}`);
    await page.touchscreen.tap(rows[1].x + rows[1].w / 2, rows[1].y + rows[1].h / 2);
    await settle(page);
    await page.waitForTimeout(1200);
    await page.screenshot({ path: join(artifacts, "web-plan-phone-beside.png") });
    const [scrollWidth, innerWidth] = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
    check(scrollWidth <= innerWidth, `${name}: the page scrolls sideways (${scrollWidth} > ${innerWidth} px)`);
    // The plan's two ends: the lowest row of two buttons, Approve first (under it is only the
    // line saying what an empty Keep planning sends).
    const all = await taps(page);
    const rowOf = (w) => all.filter((o) => Math.abs(o.y - w.y) < 4);
    const lowest = all.filter((w) => rowOf(w).length === 2).sort((a, b) => b.y - a.y)[0];
    const ends = lowest ? rowOf(lowest).sort((a, b) => a.x - b.x) : [];
    check(ends.length === 2, `${name}: the plan's Approve and Keep planning are not the bottom row: ${JSON.stringify(all)}`);
    for (const w of ends) {
      check(w.x >= 0 && w.x + w.w <= viewport.width + 1 && w.y + w.h <= viewport.height + 1, `${name}: a button off the screen: ${JSON.stringify(w)}`);
    }
    await page.touchscreen.tap(ends[0].x + ends[0].w / 2, ends[0].y + ends[0].h / 2);
    const reply = await hookReply(plan, name);
    check(reply?.hookSpecificOutput?.decision?.behavior === "allow", `${name}: the hook printed ${JSON.stringify(reply)}`);
    console.log(`ok   ${name}: All waiting lists the plan; tapped, it shows in the one column and Approve allows (target/test-artifacts/web-plan-phone-*.png)`);
  } finally {
    await context.close();
  }
}

async function main() {
  mkdirSync(artifacts, { recursive: true });
  const scratch = mkdtempSync(join(tmpdir(), "askpane-web-plan-"));
  try {
    await keepPlanning(scratch);
    await phone(scratch);
    await besideAQuestion(scratch);
    await besideAQuestionOnAPhone(scratch);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

await runTest("tests/web/plan.mjs", main, () => killEvery(children), WHOLE_RUN_TIMEOUT);
