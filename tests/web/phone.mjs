// The web app on a phone (issue 11): Debian's Chromium emulating a 390×844 touch screen
// (`hasTouch`, `isMobile`), serving dist/web on 127.0.0.1.
//
// Checks, on the database demo and on every demo set at once (several requests waiting):
//   1. no horizontal scrolling: the document is no wider than the screen, and no control egui
//      drew reaches past its right edge;
//   2. tap targets: every control that takes a tap (egui's widgets that sense a click and not a
//      drag: buttons, tabs, option rows, check boxes, fold-outs) is at least 44 CSS px tall and
//      wide. egui draws on one canvas, so the page publishes the last frame's widget rectangles
//      (`window.askpaneWidgets`, asked for with `window.askpaneWantWidgets`), in CSS pixels;
//   3. one column: the request list does not sit beside the form (a bar picks what is shown);
//   4. "Other" and the note are typeable with the on-screen keyboard: tapping their boxes focuses
//      egui's hidden text agent, the typed text is in the reply.
// Text size: egui's body text is 14.5 points, and a point is a CSS pixel here (zoom 1), which the
// widths above also prove.
//
// The device scale factor is 1: under emulation Chromium reports the canvas's device-pixel size
// in CSS pixels, so eframe would draw at 1 anyway and the screenshot would be the same picture
// upscaled; sizes in CSS pixels are what a phone shows whatever its density. Screenshots:
// target/test-artifacts/web-phone*.png. Run with `scripts/web-test`, or `node tests/web/phone.mjs`
// once dist/web is built. Exits non-zero on failure.

import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import { Failure, check, chromiumPath, launch, serveDirectory, settle } from "./common.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const dist = join(root, "dist/web");
const artifacts = join(root, "target/test-artifacts");
const viewport = { width: 390, height: 844 };
const TAP_TARGET = 44;
const DATABASE_QUESTION = "Which database should the new orders service use?";

/** Opens the demo at `fragment` as a phone would; waits for the first frame. */
async function open(context, base, fragment) {
  const page = await context.newPage();
  const problems = [];
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`console error: ${message.text()}`);
  });
  await page.addInitScript(() => {
    window.askpaneWantWidgets = true;
  });
  await page.goto(`${base}/${fragment}`);
  await page.waitForFunction(() => window.askpaneReady === true, null, { timeout: 30_000 });
  await settle(page);
  return { page, problems };
}

/** The last frame's controls, after the page has settled. */
async function widgets(page) {
  await settle(page);
  return page.evaluate(() => window.askpaneWidgets ?? []);
}

/**
 * Checks 1 and 2 on what the page shows now; returns the controls it measured. Call it before
 * the page is touched: until then egui's selectable labels (text, not controls) sense drags and
 * are left out; after a touch they sense taps only and would count as controls.
 */
async function checkLayout(page, name) {
  const [scrollWidth, innerWidth] = await page.evaluate(() => [
    document.documentElement.scrollWidth,
    window.innerWidth,
  ]);
  check(scrollWidth <= innerWidth, `${name}: the page scrolls sideways (${scrollWidth} > ${innerWidth} px)`);
  const all = await widgets(page);
  check(all.length > 0, `${name}: the page published no controls`);
  const past = all.filter((w) => w.x + w.w > viewport.width + 1 && w.w < viewport.width * 2);
  check(past.length === 0, `${name}: controls reach past the right edge: ${JSON.stringify(past)}`);
  const taps = all.filter((w) => !w.drag && w.w > 0 && w.h > 0);
  const small = taps.filter((w) => w.h < TAP_TARGET - 0.5 || w.w < TAP_TARGET - 0.5);
  check(
    small.length === 0,
    `${name}: ${small.length} of ${taps.length} tap targets are under ${TAP_TARGET} px: ${JSON.stringify(small.map((w) => [Math.round(w.x), Math.round(w.y), Math.round(w.w), Math.round(w.h)]))}`,
  );
  return taps;
}

/**
 * The Other and note boxes: indented under the option rows (which start at the panel's margin)
 * and wider than half the screen. Widgets carry no kind, and once the page has been touched egui
 * makes labels sense taps (not drags) too, so the boxes are found by where they are.
 */
function isTextBox(w) {
  return w.x > 20 && w.x < 40 && w.w > viewport.width / 2 && w.h >= 30;
}

/** The footer's Submit on a narrow page: as wide as the page, one control tall, low down. */
function isSubmit(w) {
  return w.w > viewport.width * 0.9 && w.h >= TAP_TARGET && w.h < TAP_TARGET + 6 && w.y > viewport.height / 2;
}

/** Scrolls the form to its end (a finger's swipe; the wheel is what Playwright can send). */
async function scrollDown(page) {
  await page.mouse.move(viewport.width / 2, viewport.height / 3);
  await page.mouse.wheel(0, 2000);
  await settle(page);
}

/** The tap target whose rectangle holds the point `at` (the smallest, when several do). */
function targetAt(taps, at) {
  const holding = taps.filter((w) => at.x >= w.x && at.x <= w.x + w.w && at.y >= w.y && at.y <= w.y + w.h);
  holding.sort((a, b) => a.w * a.h - b.w * b.h);
  return holding[0];
}

async function database(context, base) {
  const name = "database on a phone";
  const { page, problems } = await open(context, base, "#fixture=database");
  await page.screenshot({ path: join(artifacts, "web-phone-database.png") });
  const taps = await checkLayout(page, name);
  // Other: the last option row; its text box takes the on-screen keyboard.
  const other = taps.filter((w) => w.h >= TAP_TARGET && w.w > viewport.width / 2).sort((a, b) => a.y - b.y);
  check(other.length >= 5, `${name}: expected five option rows, found ${other.length}`);
  const otherRow = other[4];
  await page.touchscreen.tap(otherRow.x + 40, otherRow.y + otherRow.h / 2);
  await scrollDown(page);
  const boxes = (await widgets(page)).filter(isTextBox);
  check(boxes.length >= 1, `${name}: no text box for Other after tapping it`);
  const box = boxes.sort((a, b) => a.y - b.y)[0];
  check(box.h >= TAP_TARGET - 0.5, `${name}: the Other box is ${box.h} px tall`);
  await page.touchscreen.tap(box.x + box.w / 2, box.y + box.h / 2);
  // Typing waits for the tap's frame, as a person waits for the caret (README, Limits).
  await settle(page);
  await page.keyboard.type("MariaDB 10.11", { delay: 20 });
  await settle(page);
  await page.screenshot({ path: join(artifacts, "web-phone-other.png") });
  // The note: its fold-out, then its box.
  await scrollDown(page);
  const scrolled = await widgets(page);
  const typedIn = scrolled.filter(isTextBox)[0];
  // The fold-out is under the Other box, at the margin, narrower than the footer's Submit.
  const footerTop = Math.min(...scrolled.filter(isSubmit).map((w) => w.y));
  const fold = scrolled
    .filter((w) => w.y > typedIn.y + typedIn.h && w.y + w.h <= footerTop && w.x < 20)
    .sort((a, b) => a.y - b.y)[0];
  check(fold, `${name}: no note fold-out under the Other box`);
  await page.touchscreen.tap(fold.x + 40, fold.y + fold.h / 2);
  await settle(page);
  await scrollDown(page);
  await page.screenshot({ path: join(artifacts, "web-phone-note-open.png") });
  const afterFold = await widgets(page);
  const noteBox = afterFold.filter(isTextBox).sort((a, b) => b.y - a.y)[0];
  check(noteBox, `${name}: no note box after opening the fold-out: ${JSON.stringify(afterFold)}`);
  check(noteBox.h >= TAP_TARGET - 0.5, `${name}: the note box is ${noteBox.h} px tall`);
  await page.touchscreen.tap(noteBox.x + noteBox.w / 2, noteBox.y + noteBox.h / 2);
  await settle(page);
  await page.keyboard.type("needs JSON", { delay: 20 });
  await settle(page);
  await page.screenshot({ path: join(artifacts, "web-phone-note.png") });
  // Submit: the wide accent button at the top of the footer.
  const submit = (await widgets(page)).filter(isSubmit)[0];
  check(submit, `${name}: no Submit across the footer`);
  await page.touchscreen.tap(submit.x + submit.w / 2, submit.y + submit.h / 2);
  try {
    await page.waitForFunction(() => window.askpaneReplies?.length > 0, null, { timeout: 10_000 });
  } catch {
    await page.screenshot({ path: join(artifacts, "web-phone-after-submit.png") });
    throw new Failure(`${name}: no reply after tapping Submit (target/test-artifacts/web-phone-after-submit.png)`);
  }
  const reply = JSON.parse((await page.evaluate(() => window.askpaneReplies))[0]);
  const answers = JSON.stringify(reply.answers);
  check(answers === JSON.stringify({ [DATABASE_QUESTION]: "MariaDB 10.11" }), `${name}: answers ${answers}`);
  const notes = reply.annotations?.[DATABASE_QUESTION]?.notes;
  check(notes === "needs JSON", `${name}: the note is ${JSON.stringify(notes)}`);
  check(problems.length === 0, `${name}:\n  ${problems.join("\n  ")}`);
  await page.close();
  console.log(`ok   ${name}: ${taps.length} tap targets ≥ ${TAP_TARGET} px, Other and note typed by touch`);
}

async function everyDemo(context, base) {
  const name = "every demo set on a phone";
  const { page, problems } = await open(context, base, "");
  await page.screenshot({ path: join(artifacts, "web-phone-all.png") });
  const taps = await checkLayout(page, name);
  // One column: nothing sits beside the form; the bar's "All waiting" shows the list instead.
  const footerTop = Math.min(...taps.filter(isSubmit).map((w) => w.y));
  const rows = taps.filter((w) => w.y > 120 && w.y < footerTop && w.x > 40 && w.x + w.w < viewport.width / 2 + 40);
  check(rows.length === 0, `${name}: controls in a column beside the form: ${JSON.stringify(rows)}`);
  const bar = taps.filter((w) => w.y < 12).sort((a, b) => a.x - b.x);
  check(bar.length >= 2, `${name}: no bar to pick the list (${JSON.stringify(bar)})`);
  // The mouse, not a finger: the list is measured as an untouched page (see checkLayout).
  await page.mouse.click(bar[1].x + bar[1].w / 2, bar[1].y + bar[1].h / 2);
  await settle(page);
  await page.screenshot({ path: join(artifacts, "web-phone-list.png") });
  const list = await checkLayout(page, `${name} (the list)`);
  check(!list.some(isSubmit), `${name}: "All waiting" still shows the form beside the list`);
  const entries = list.filter((w) => w.y > 60 && w.w > viewport.width / 2);
  check(entries.length >= 5, `${name}: the list shows only ${entries.length} requests`);
  // Picking one shows it, in the one column.
  const third = entries.sort((a, b) => a.y - b.y)[2];
  await page.mouse.click(third.x + third.w / 2, third.y + third.h / 2);
  await settle(page);
  await page.screenshot({ path: join(artifacts, "web-phone-picked.png") });
  check((await widgets(page)).some(isSubmit), `${name}: picking a request from the list did not show it`);
  // It has previews: under the options, not beside them, and its controls a finger's size too.
  await checkLayout(page, `${name} (a question with previews)`);
  check(problems.length === 0, `${name}:\n  ${problems.join("\n  ")}`);
  await page.close();
  console.log(`ok   ${name}: one column, ${taps.length} tap targets ≥ ${TAP_TARGET} px, the list behind a bar, a pick shows the form`);
}

async function main() {
  check(existsSync(join(dist, "app_bg.wasm")), "dist/web is missing: run scripts/build-web first");
  check(existsSync(chromiumPath), `${chromiumPath} is missing: apt-get install chromium`);
  mkdirSync(artifacts, { recursive: true });
  const scratch = mkdtempSync(join(tmpdir(), "askpane-phone-test-"));
  const { server, base } = await serveDirectory(dist);
  let context;
  try {
    context = await launch(scratch, viewport, { hasTouch: true, isMobile: true, deviceScaleFactor: 1 });
    await database(context, base);
    await everyDemo(context, base);
  } finally {
    await context?.close();
    server.close();
    rmSync(scratch, { recursive: true, force: true });
  }
}

try {
  await main();
  console.log("phone test passed");
} catch (error) {
  console.error(`phone test FAILED: ${error instanceof Failure ? error.message : (error.stack ?? error)}`);
  process.exit(1);
}
