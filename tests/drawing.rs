//! What draws the native window (issue 14): on a machine without a GPU, as these are, askpane
//! draws with the CPU and loads no OpenGL at all; `ASKPANE_DRAWING=gpu` still gives the OpenGL
//! window; a Wayland session gets OpenGL (saying why when the CPU was asked for); and pixels
//! the X server lost (a window that covered ours went away) are drawn again.

use serde_json::json;

use crate::display::{App, Xvfb};
use crate::lean::mapped;
use crate::support::{WAIT, artifact};
use crate::window::{DATABASE_PATTERN, DATABASE_QUESTION, DATABASE_TITLE};

/// The libraries an OpenGL window of eframe loads under Mesa's llvmpipe.
const OPENGL: [&str; 4] = ["libGL", "libEGL", "libLLVM", "libgallium"];

/// Opens the database demo with `env`, checks which OpenGL libraries the process has mapped
/// with `check`, then answers MySQL from the keyboard and checks the reply. Returns what
/// askpane wrote on stderr.
fn answer_by_keyboard(env: &[(&str, &str)], check: impl Fn(&[String], &App)) -> String {
    let xvfb = Xvfb::start();
    let mut app = App::start_with_env(&xvfb, &["demo", "--fixture", "database"], None, env);
    let window = app.wait_for_window(DATABASE_PATTERN, DATABASE_TITLE);
    let opengl: Vec<String> =
        OPENGL.iter().flat_map(|library| mapped(app.pid(), library)).collect();
    check(&opengl, &app);
    xvfb.focus(window);
    xvfb.keys_for(window, &["2", "ctrl+Return"], Some(&app));
    let reply = app.reply();
    assert_eq!(reply["answers"], json!({ DATABASE_QUESTION: "MySQL" }), "reply: {reply}");
    // Read now: the stderr file goes with the display's scratch directory.
    app.stderr()
}

#[test]
fn without_a_gpu_the_window_is_drawn_by_the_cpu_with_no_opengl_loaded() {
    // These machines have no /dev/dri render node: the choice askpane makes by itself.
    assert!(
        !std::path::Path::new("/dev/dri").exists(),
        "this test describes a machine without a GPU"
    );
    answer_by_keyboard(&[], |opengl, app| {
        assert!(opengl.is_empty(), "OpenGL loaded: {opengl:?}\n{}", app.stderr());
    });
}

#[test]
fn askpane_drawing_gpu_still_gives_the_opengl_window() {
    answer_by_keyboard(&[("ASKPANE_DRAWING", "gpu")], |opengl, app| {
        assert!(
            opengl.iter().any(|library| library.contains("libGL")),
            "no OpenGL loaded: {opengl:?}\n{}",
            app.stderr()
        );
    });
}

#[test]
fn a_wayland_session_is_drawn_by_opengl_and_asking_for_the_cpu_there_says_why() {
    // The CPU window is X11 only. No Wayland compositor runs here, so the window cannot open
    // either way: what is checked is the choice, and that it is told when the user asked.
    let xvfb = Xvfb::start();
    let wayland = ("WAYLAND_DISPLAY", "askpane-test-no-such-compositor");
    for (env, told) in [(vec![wayland], false), (vec![wayland, ("ASKPANE_DRAWING", "cpu")], true)] {
        let mut app = App::start_with_env(&xvfb, &["demo", "--fixture", "database"], None, &env);
        let status = app.process.wait(crate::support::WAIT).expect("askpane exits");
        let stderr = app.stderr();
        assert_eq!(status.code(), Some(3), "no display: {stderr}");
        assert!(stderr.contains("Could not find wayland compositor"), "{stderr}");
        let why = "drawing with OpenGL: cannot draw with the CPU (a Wayland session";
        assert_eq!(stderr.contains(why), told, "{env:?}: {stderr}");
    }
}

#[test]
fn an_unknown_askpane_drawing_is_named_and_the_machine_decides() {
    let stderr = answer_by_keyboard(&[("ASKPANE_DRAWING", "vulkan")], |opengl, app| {
        assert!(opengl.is_empty(), "OpenGL loaded: {opengl:?}\n{}", app.stderr());
    });
    assert!(stderr.contains("ASKPANE_DRAWING=\"vulkan\" is neither cpu nor gpu"), "{stderr}");
}

#[test]
fn pixels_the_x_server_lost_are_drawn_again() {
    // A light window, then a dark one over it at the same place (no window manager: both at the
    // top-left corner). When the dark one goes, the server has no copy of what it covered: the
    // light window must draw it again, although nothing in it changed.
    let xvfb = Xvfb::start();
    let light_args = ["demo", "--fixture", "database", "--theme", "light"];
    let mut light = App::start(&xvfb, &light_args);
    let window = light.wait_for_window(DATABASE_PATTERN, DATABASE_TITLE);
    let before_path = artifact("drawing-light-before.png");
    let before = xvfb.brightness_when(window, &before_path, WAIT, |mean| mean > 0.6);
    assert!(before > 0.6, "the light window is light: mean {before}");

    let dark_args = ["demo", "--fixture", "multi-select", "--theme", "dark"];
    let mut dark = App::start(&xvfb, &dark_args);
    dark.wait_for_window_titled("^multi-select ", |_| {});
    let covered_path = artifact("drawing-light-covered.png");
    let covered = xvfb.brightness_when(window, &covered_path, WAIT, |mean| mean < 0.4);
    assert!(covered < 0.4, "the dark window covers it: mean {covered}");
    drop(dark);
    // The light window draws what it lost once the server tells it (an expose): the same picture.
    let after_path = artifact("drawing-light-after.png");
    let after =
        xvfb.brightness_when(window, &after_path, WAIT, |mean| (mean - before).abs() < 0.02);
    assert!(after > 0.6, "drawn again once uncovered: mean {after}\n{}", light.stderr());
    assert!((after - before).abs() < 0.02, "the same picture: {before} then {after}");
}
