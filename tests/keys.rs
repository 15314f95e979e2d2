//! Typing into the CPU-drawn window (issue 30): the window redraws only the tiles a key changed,
//! so these check that what is on screen is still all of it. Keys at autorepeat speed, and a
//! resize in the middle of typing, are taken whole and shown whole: the picture after the typing
//! equals the one drawn from nothing after a resize out and back (but for the blinking cursor);
//! and the cursor's blink, an animation with no input, still draws.

use std::path::Path;
use std::process::Command;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::display::{App, Xvfb};
use crate::support::{artifact, run_bounded};
use crate::window::{DATABASE_PATTERN, DATABASE_QUESTION, DATABASE_TITLE};

/// A held key repeats 25–30 times a second: 33 ms between characters.
const AUTOREPEAT_DELAY_MS: &str = "33";

/// The pixels where two screenshots differ: their count, and the width of the box around them.
fn difference(first: &Path, second: &Path) -> (u64, u64) {
    let diff = first.with_extension("diff.png");
    let mut command = Command::new("compare");
    command.args(["-metric", "AE", "-fuzz", "0%"]).arg(first).arg(second).arg(&diff);
    // `compare` prints the count on stderr and exits 1 when the pictures differ.
    let run = run_bounded(&mut command, None);
    let count: f64 = run
        .stderr
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("compare printed {run:?}"));
    if count == 0.0 {
        return (0, 0);
    }
    // The box around the changed pixels: `compare` paints them red over a faded copy; keep only
    // the red, then trim to it.
    let mut command = Command::new("convert");
    command.arg(first).arg(second).args([
        "-compose",
        "difference",
        "-composite",
        "-threshold",
        "0",
        "-format",
        "%@",
        "info:",
    ]);
    let run = run_bounded(&mut command, None);
    let width =
        run.stdout.split('x').next().and_then(|w| w.trim().parse().ok()).unwrap_or(u64::MAX);
    (count as u64, width)
}

/// The window drawn from nothing at its size: made wider, then its size again (a new size
/// draws every tile), waiting for each to show.
fn drawn_from_nothing(xvfb: &Xvfb, window: u32, before: &Path, after: &Path) {
    let (width, height) = xvfb.window_size(window);
    let id = window.to_string();
    xvfb.xdotool(&["windowsize", "--sync", &id, &(width + 48).to_string(), &height.to_string()]);
    settle();
    xvfb.xdotool(&["windowsize", "--sync", &id, &width.to_string(), &height.to_string()]);
    settle();
    xvfb.screenshot(window, after);
    let _ = before;
}

/// Frames follow input within a few milliseconds; this leaves them ample time on a loaded
/// machine (nothing here waits for a frame to be absent).
fn settle() {
    thread::sleep(Duration::from_millis(400));
}

/// Compares the picture after typing with the one drawn from nothing: they may differ only in
/// the text cursor, a box a few pixels wide (it blinks).
fn assert_shown_whole(xvfb: &Xvfb, window: u32, name: &str) {
    let typed = artifact(&format!("keys-{name}-typed.png"));
    let fresh = artifact(&format!("keys-{name}-fresh.png"));
    // One more frame with no change (the pointer moved over empty space): a debug build's egui
    // paints a passing warning ("request_discard … in a row") after a resize or keys at
    // autorepeat speed (each key's frame draws its result in a second pass), which the frame
    // drawn from nothing would not have. On a loaded machine that frame may come late: the
    // typed picture is the one that stays the same over a settling pause (the cursor's blink
    // aside), taken again after another such frame otherwise, three times at most.
    let again = artifact(&format!("keys-{name}-typed-again.png"));
    for attempt in 0..3 {
        let x = if attempt % 2 == 0 { "300" } else { "310" };
        xvfb.xdotool(&["mousemove", "--window", &window.to_string(), x, "480"]);
        settle();
        xvfb.screenshot(window, &typed);
        settle();
        xvfb.screenshot(window, &again);
        let (count, width) = difference(&typed, &again);
        if count == 0 || width <= 4 {
            break;
        }
    }
    drawn_from_nothing(xvfb, window, &typed, &fresh);
    let (count, width) = difference(&typed, &fresh);
    assert!(
        count == 0 || width <= 4,
        "{name}: the typed picture differs from one drawn from nothing in {count} pixels, \
         {width} wide (see {} and {})",
        typed.display(),
        fresh.display()
    );
}

fn open_database(xvfb: &Xvfb) -> (App, u32) {
    let mut app = App::start(xvfb, &["demo", "--fixture", "database"]);
    let window = app.wait_for_window(DATABASE_PATTERN, DATABASE_TITLE);
    xvfb.focus(window);
    // 5 chooses Other (the fixture has four options) and puts the cursor in its box.
    xvfb.keys_for(window, &["5"], Some(&app));
    (app, window)
}

fn type_text(xvfb: &Xvfb, window: u32, text: &str, app: &App) {
    let id = window.to_string();
    xvfb.xdotool_for(&["type", "--window", &id, "--delay", AUTOREPEAT_DELAY_MS, text], Some(app));
}

#[test]
fn keys_at_autorepeat_speed_are_taken_and_shown_whole() {
    let xvfb = Xvfb::start();
    let (app, window) = open_database(&xvfb);
    let text = "abcdefghijklmnopqrstuvwxyz".repeat(3);
    type_text(&xvfb, window, &text, &app);
    assert_shown_whole(&xvfb, window, "autorepeat");
    xvfb.keys_for(window, &["ctrl+Return"], Some(&app));
    let reply = app.reply();
    assert_eq!(reply["answers"], json!({ DATABASE_QUESTION: text }), "reply: {reply}");
}

#[test]
fn a_resize_in_the_middle_of_typing_loses_nothing_on_screen_or_in_the_answer() {
    let xvfb = Xvfb::start();
    let (app, window) = open_database(&xvfb);
    type_text(&xvfb, window, "before the resize ", &app);
    let (width, height) = xvfb.window_size(window);
    let id = window.to_string();
    xvfb.xdotool(&["windowsize", &id, &(width - 40).to_string(), &(height + 30).to_string()]);
    type_text(&xvfb, window, "and after it", &app);
    assert_shown_whole(&xvfb, window, "resize");
    xvfb.keys_for(window, &["ctrl+Return"], Some(&app));
    let reply = app.reply();
    let text = "before the resize and after it";
    assert_eq!(reply["answers"], json!({ DATABASE_QUESTION: text }), "reply: {reply}");
}

#[test]
fn the_text_cursor_still_blinks_with_no_input() {
    let xvfb = Xvfb::start();
    let (app, window) = open_database(&xvfb);
    type_text(&xvfb, window, "blink", &app);
    // The cursor is shown, then hidden, each for half a second (egui's default): screenshots for
    // two seconds (at least four, however slow they are here) must see both.
    let first = artifact("keys-blink-0.png");
    xvfb.screenshot(window, &first);
    let deadline = Instant::now() + Duration::from_secs(2);
    let mut changed = false;
    let mut shot = 1;
    while (Instant::now() < deadline || shot < 5) && !changed && shot < 40 {
        thread::sleep(Duration::from_millis(150));
        let next = artifact(&format!("keys-blink-{shot}.png"));
        xvfb.screenshot(window, &next);
        changed = difference(&first, &next).0 > 0;
        shot += 1;
    }
    assert!(
        changed,
        "the window did not change in {shot} screenshots: the cursor does not blink\n{}",
        app.stderr()
    );
}
