//! askpane's native entry point: the command line, one `run_*` per mode, and the exit codes.

use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, OnceLock};

use anyhow::Context as _;
use clap::{Args, Parser, Subcommand};

use askpane::app::{App, AppOptions};
use askpane::demo::{self, Fixture};
use askpane::protocol::{self, Outcome, envelope};
use askpane::transport::replies::{AwaitedReply, write_replies};
use askpane::transport::{Inbound, IoThreads, Waker, ui_channel};
use crossbeam_channel::Receiver;

/// Exit codes, the same in every mode (see the README).
mod exit {
    /// Answered, or the command did what it was asked.
    pub const OK: u8 = 0;
    /// Invalid input: the reply or report says what is wrong.
    pub const INVALID: u8 = 2;
    /// No human can answer: no display to show a window on.
    pub const NO_HUMAN: u8 = 3;
}

#[derive(Parser, Debug)]
#[command(name = "askpane", version, about = "Answer an AI coding agent's questions in a window")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Open the window on built-in question sets; no agent needed. Prints each reply on stdout.
    Demo(DemoArgs),
    /// Check a request (any envelope askpane reads) and report what is wrong with it.
    Validate {
        /// The request file; `-` reads standard input.
        file: PathBuf,
    },
}

#[derive(Args, Debug)]
struct DemoArgs {
    /// List the built-in question sets and exit.
    #[arg(long)]
    list: bool,
    /// Show only this question set (see --list).
    #[arg(long, value_name = "NAME")]
    fixture: Option<String>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(error) => {
            eprintln!("askpane: {error:#}");
            ExitCode::from(exit::INVALID)
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<u8> {
    match cli.command {
        Command::Demo(args) => run_demo(args),
        Command::Validate { file } => run_validate(&file),
    }
}

fn run_demo(args: DemoArgs) -> anyhow::Result<u8> {
    if args.list {
        let width = demo::FIXTURES.iter().map(|f| f.name.len()).max().unwrap_or(0);
        for fixture in demo::FIXTURES {
            println!("{:width$}  {}", fixture.name, fixture.summary);
        }
        return Ok(exit::OK);
    }
    let fixtures: Vec<&Fixture> = match &args.fixture {
        Some(name) => {
            let fixture = demo::find(name).with_context(|| {
                format!("no demo question set named {name:?}; `askpane demo --list` shows them")
            })?;
            vec![fixture]
        }
        None => demo::FIXTURES.iter().collect(),
    };
    if let Some(problem) = missing_display() {
        return Ok(no_display(&problem));
    }

    let window_ctx = Arc::new(OnceLock::<egui::Context>::new());
    let (to_ui, inbox) = ui_channel(repaint_waker(&window_ctx));
    let mut awaited = Vec::with_capacity(fixtures.len());
    for fixture in fixtures {
        let (request, outcome) = fixture.request()?;
        awaited.push(AwaitedReply { envelope: request.envelope.clone(), format: None, outcome });
        to_ui.send(Inbound::Ask(Box::new(request)));
    }
    drop(to_ui);

    let mut threads = IoThreads::default();
    threads.spawn("reply-writer", move || {
        write_replies(awaited, &mut io::stdout().lock()).map(drop)
    })?;
    let unshown = inbox.clone();
    let shown = show_window(inbox, window_ctx, AppOptions { close_when_done: false });
    if let Err(problem) = &shown {
        // No window ever opened: what is still queued was never seen by anyone.
        tell_unavailable(&unshown, problem);
    }
    drop(unshown);
    // The app is gone, so every request has its outcome and the writer finishes.
    threads.join().context("writing the replies")?;
    match shown {
        Ok(()) => Ok(exit::OK),
        Err(problem) => Ok(no_display(&problem)),
    }
}

/// Answers every request still in the channel with "no human can answer".
fn tell_unavailable(inbox: &Receiver<Inbound>, problem: &str) {
    for message in inbox.try_iter() {
        if let Inbound::Ask(request) = message {
            let reason = format!("askpane could not open a window: {problem}");
            request.reply.send(Outcome::Unavailable { reason });
        }
    }
}

/// The waker handed to the transport: it repaints the window once the window exists.
fn repaint_waker(window_ctx: &Arc<OnceLock<egui::Context>>) -> Waker {
    let window_ctx = Arc::clone(window_ctx);
    Waker::new(move || {
        if let Some(ctx) = window_ctx.get() {
            ctx.request_repaint();
        }
    })
}

/// Runs the native window until it closes. The error says, in one line, why no window could be
/// shown. A panic inside the windowing stack (the X server gone, the window destroyed by another
/// program) is caught here: the app is dropped while unwinding, so every agent is still told.
fn show_window(
    inbox: Receiver<Inbound>,
    window_ctx: Arc<OnceLock<egui::Context>>,
    options: AppOptions,
) -> Result<(), String> {
    let run = std::panic::AssertUnwindSafe(|| run_window(inbox, window_ctx, options));
    match std::panic::catch_unwind(run) {
        Ok(Ok(())) => Ok(()),
        Ok(Err(error)) => Err(window_error_summary(&error)),
        Err(_) => Err("the window system failed while the window was open".to_owned()),
    }
}

/// The last clause of a windowing error: `Failed to open connection to X server`, without the
/// source path winit puts before it.
fn window_error_summary(error: &eframe::Error) -> String {
    let text = error.to_string();
    text.rsplit(": ").next().unwrap_or(&text).trim().to_owned()
}

fn run_window(
    inbox: Receiver<Inbound>,
    window_ctx: Arc<OnceLock<egui::Context>>,
    options: AppOptions,
) -> Result<(), eframe::Error> {
    let native_options = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default()
            .with_title("askpane")
            .with_app_id("askpane")
            .with_inner_size([960.0, 680.0])
            .with_min_inner_size([520.0, 380.0]),
        renderer: eframe::Renderer::Glow,
        ..Default::default()
    };
    eframe::run_native(
        "askpane",
        native_options,
        Box::new(move |creation| {
            // Ignored if already set: one window per run.
            let _ = window_ctx.set(creation.egui_ctx.clone());
            Ok(Box::new(App::new(&creation.egui_ctx, inbox, options)))
        }),
    )
}

/// Why no window can be shown, when the environment already says so.
fn missing_display() -> Option<String> {
    if !cfg!(all(unix, not(target_os = "macos"))) {
        return None;
    }
    let set = |name| std::env::var_os(name).is_some_and(|value| !value.is_empty());
    match set("DISPLAY") || set("WAYLAND_DISPLAY") {
        true => None,
        false => Some("DISPLAY and WAYLAND_DISPLAY are not set".to_owned()),
    }
}

fn no_display(problem: &str) -> u8 {
    eprintln!(
        "askpane: no display to open a window on ({problem}); run it in a desktop session, or \
         under a virtual display: xvfb-run askpane …"
    );
    exit::NO_HUMAN
}

fn run_validate(file: &Path) -> anyhow::Result<u8> {
    let name = file.display();
    let text = read_input(file).with_context(|| format!("cannot read {name}"))?;
    let message: serde_json::Value = match serde_json::from_str(&text) {
        Ok(message) => message,
        Err(error) => {
            println!("{name}: invalid: not JSON: {error}");
            return Ok(exit::INVALID);
        }
    };
    let incoming = match envelope::parse_message(&message) {
        Ok(incoming) => incoming,
        Err(error) => {
            println!("{name}: invalid: {error}");
            return Ok(exit::INVALID);
        }
    };
    let kind = incoming.envelope.describe();
    match protocol::validate(&incoming.input) {
        Ok(validated) => {
            let count = validated.ask.questions().len();
            let plural = if count == 1 { "" } else { "s" };
            println!("{name}: valid {kind} with {count} question{plural}");
            for warning in &validated.warnings {
                println!("  warning: {warning}");
            }
            Ok(exit::OK)
        }
        Err(invalid) => {
            println!("{name}: invalid {kind}");
            for error in &invalid.0 {
                println!("  error: {error}");
            }
            Ok(exit::INVALID)
        }
    }
}

fn read_input(file: &Path) -> io::Result<String> {
    if file == Path::new("-") {
        let mut text = String::new();
        io::stdin().read_to_string(&mut text)?;
        return Ok(text);
    }
    std::fs::read_to_string(file)
}
