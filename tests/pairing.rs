//! Issue 11: the "Pair a phone" window beside `askpane inbox --ui web --lan`: the link another
//! device can use, its QR code (decoded back to the link), Copy, and New link through the
//! bridge's link control; and, with real processes, the window opening beside the pages and
//! closing with the inbox.

use std::cell::RefCell;
use std::rc::Rc;

use askpane::app::pairing::PairingApp;
use askpane::view::pairing::QrModules;
use egui::OutputCommand;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;

use crate::inbox::World;
use crate::support::{WAIT, run_bounded};
use crate::ui::FONTS;

fn encode(link: &str) -> Option<QrModules> {
    let code = qrcode::QrCode::new(link.as_bytes()).ok()?;
    let dark = code.to_colors().into_iter().map(|color| color == qrcode::Color::Dark).collect();
    Some(QrModules { width: code.width(), dark })
}

/// Reads the modules back with a QR decoder: what a phone's camera would read.
fn decode(code: &QrModules) -> String {
    let mut grid =
        rqrr::PreparedImage::prepare_from_bitmap(code.width + 8, code.width + 8, |x, y| {
            let (Some(x), Some(y)) = (x.checked_sub(4), y.checked_sub(4)) else { return false };
            x < code.width && y < code.width && code.dark[y * code.width + x]
        });
    let grids = grid.detect_grids();
    let (_, text) = grids.first().expect("one QR code").decode().expect("it decodes");
    text
}

const LOOPBACK: &str = "http://127.0.0.1:8123/#token=old";
const DEVICE: &str = "http://192.0.2.7:8123/#token=old";

#[test]
fn the_pairing_window_shows_the_device_link_as_a_code_copies_it_and_makes_a_new_one() {
    let calls = Rc::new(RefCell::new(0));
    let counted = Rc::clone(&calls);
    let relink = Box::new(move || {
        *counted.borrow_mut() += 1;
        match *counted.borrow() {
            1 => Ok(vec![
                "http://127.0.0.1:8123/#token=new".to_owned(),
                "http://192.0.2.7:8123/#token=new".to_owned(),
            ]),
            _ => Err("cannot make a new link: no randomness".to_owned()),
        }
    });
    let links = [LOOPBACK.to_owned(), DEVICE.to_owned()];
    let mut harness = Harness::builder()
        .with_size(egui::vec2(440.0, 720.0))
        .with_context_setup(|ctx| ctx.add_font_provider(FONTS.clone()))
        .build_eframe(move |cc| PairingApp::new(&cc.egui_ctx, &links, relink, encode));
    harness.run();
    // The link another device can use (not loopback), as text and as a code that reads back.
    harness.get_by_label(DEVICE);
    harness.get_by_label(&format!("QR code of {DEVICE}"));
    let code = harness.state().pairing().code.clone().expect("a code");
    assert_eq!(decode(&code), DEVICE);

    harness.get_by_label("Copy link").click();
    let mut copied = None;
    for _ in 0..4 {
        harness.step();
        let commands = &harness.output().platform_output.commands;
        copied = copied.or_else(|| {
            commands.iter().find_map(|command| match command {
                OutputCommand::CopyText(text) => Some(text.clone()),
                _ => None,
            })
        });
    }
    assert_eq!(copied.as_deref(), Some(DEVICE));

    harness.get_by_label("New link").click();
    harness.run();
    assert_eq!(*calls.borrow(), 1);
    let new = "http://192.0.2.7:8123/#token=new";
    harness.get_by_label(new);
    assert!(harness.query_by_label(DEVICE).is_none(), "the old link is gone");
    let code = harness.state().pairing().code.clone().expect("a code");
    assert_eq!(decode(&code), new);
    harness.get_by_label_contains("The link above is new");

    // A failure is said, and the link stays.
    harness.get_by_label("New link").click();
    harness.run();
    harness.get_by_label("cannot make a new link: no randomness");
    harness.get_by_label(new);
}

#[test]
fn the_inbox_with_lan_opens_the_pairing_window_which_ends_with_it() {
    let mut world = World::new("pairing-window");
    let mut command = world.askpane(&["inbox", "--ui", "web", "--lan"]);
    // No browser is opened for the test (xdg-open finds none to start).
    command.env("BROWSER", "true");
    world.start_inbox_command(command);
    let stderr = wait_for_the_links(&world);
    if !stderr.contains("or, from another device:") {
        // A machine with no address but loopback: no other device, so no pairing window.
        std::thread::sleep(NO_WINDOW_WITHIN);
        assert!(world.xvfb.find_window("^Pair a phone").is_none());
        return;
    }
    let window = crate::inbox::wait_for_window(&world.xvfb, "^Pair a phone", true);
    assert!(window.is_some(), "the pairing window");
    // `--new-link` goes on working beside it.
    let relinked = run_bounded(&mut world.askpane(&["inbox", "--new-link"]), None);
    assert_eq!(relinked.status.code(), Some(0), "{relinked:?}");
    let quit = run_bounded(&mut world.askpane(&["inbox", "--quit"]), None);
    assert_eq!(quit.status.code(), Some(0), "{quit:?}");
    let inbox = world.inbox.as_mut().expect("the test's inbox");
    let status = inbox.wait(WAIT).expect("the inbox ended, its window with it");
    assert_eq!(status.code(), Some(0));
    assert!(crate::inbox::wait_for_window(&world.xvfb, "^Pair a phone", false).is_none());
}

#[test]
fn without_another_device_to_reach_it_the_inbox_opens_no_pairing_window() {
    let mut world = World::new("pairing-none");
    let mut command = world.askpane(&["inbox", "--ui", "web"]);
    command.env("BROWSER", "true");
    world.start_inbox_command(command);
    wait_for_the_links(&world);
    std::thread::sleep(NO_WINDOW_WITHIN);
    assert!(world.xvfb.find_window("^Pair a phone").is_none());
}

/// How long a pairing window that should not come is given to show, once the inbox has
/// printed its links (it decides on the window then): a window that does not come marks
/// nothing.
const NO_WINDOW_WITHIN: std::time::Duration = std::time::Duration::from_secs(1);

/// Waits until the inbox has printed its links; what it has said on stderr.
fn wait_for_the_links(world: &World) -> String {
    let stderr = world.root.join("inbox.stderr");
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        let said = crate::support::read_lossy(&stderr);
        if said.contains("answer in your browser") {
            return said;
        }
        assert!(std::time::Instant::now() < deadline, "no link printed");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}
