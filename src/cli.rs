//! The native composition root: the command line, one `run_*` per mode, and the exit codes.

use std::io;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use anyhow::Context as _;
use clap::{Args, Parser, Subcommand, ValueEnum};
use crossbeam_channel::Receiver;
use serde_json::Value;

use askpane::app::{App, AppOptions};
use askpane::claude_settings::{self, Change};
use askpane::demo::{self, Fixture};
use askpane::protocol::stream::CliMessage;
use askpane::protocol::{
    self, Envelope, EnvelopeError, Incoming, Outcome, ReplyFormat, build_answers,
    drafts_from_preset, parse_message,
};
use askpane::transport::claude::{self, Autopilot, ClaudeOptions, ClaudeSession};
use askpane::transport::pipe::{self, ReadError};
use askpane::transport::replies::{AwaitedReply, write_replies};
use askpane::transport::serve::{self, Bridge, BridgeOptions};
use askpane::transport::signals::{SignalWatch, StopSignal};
use askpane::transport::{
    Inbound, IoThreads, Provenance, Request, SessionEvent, Waker, ui_channel,
};
use askpane::web_bundle;

/// Prints one line on standard output for the modes that print text (`validate`, `demo --list`,
/// `install`). A reader that went away (`askpane validate … | head -n1`) ends the printing
/// quietly: the mode still exits with its own code, never with a panic.
macro_rules! say {
    ($($arg:tt)*) => {
        print_line(format_args!($($arg)*))
    };
}

/// [`say!`]'s writer. A closed stdout is remembered, so the rest of the text is skipped.
fn print_line(line: std::fmt::Arguments<'_>) {
    use std::io::Write as _;
    use std::sync::atomic::{AtomicBool, Ordering};
    static CLOSED: AtomicBool = AtomicBool::new(false);
    if CLOSED.load(Ordering::Relaxed) {
        return;
    }
    let mut out = io::stdout().lock();
    if let Err(error) = out.write_fmt(line).and_then(|()| out.write_all(b"\n")) {
        CLOSED.store(true, Ordering::Relaxed);
        if error.kind() != io::ErrorKind::BrokenPipe {
            eprintln!("askpane: cannot write to standard output: {error}");
        }
    }
}

/// Exit codes, the same in every mode (see the README).
mod exit {
    /// Answered, or the command did what it was asked.
    pub const OK: u8 = 0;
    /// The user declined, or closed the window.
    pub const DECLINED: u8 = 1;
    /// Invalid input: the reply and standard error say what is wrong.
    pub const INVALID: u8 = 2;
    /// No human can answer: no display, or a non-interactive run.
    pub const NO_HUMAN: u8 = 3;
    /// askpane was stopped by a signal (SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1) before anyone
    /// answered; the agent was told so. (`hook` still exits 0 once it printed.)
    pub const STOPPED: u8 = 4;
    /// Nobody answered in time (`--timeout`).
    pub const TIMED_OUT: u8 = 5;
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
    /// Answer one request (any envelope) from a file or stdin; print the reply in the same envelope.
    Ask(AskArgs),
    /// Claude Code PreToolUse / PermissionRequest hook: answer AskUserQuestion in the window.
    Hook(HookArgs),
    /// Run Claude Code under askpane as its host: the transcript, questions and permissions in
    /// one window. Exits with Claude Code's exit code.
    Claude(ClaudeArgs),
    /// Add askpane's hook to Claude Code's settings.
    Install {
        #[command(subcommand)]
        target: Target,
    },
    /// Remove askpane's hook from Claude Code's settings.
    Uninstall {
        #[command(subcommand)]
        target: Target,
    },
    /// Check a request (any envelope askpane reads) and report what is wrong with it.
    Validate {
        /// The request file; `-` reads standard input.
        file: PathBuf,
    },
}

/// Where the questions are shown.
#[derive(Args, Clone, Debug)]
struct UiArgs {
    /// A native window, a browser page that askpane serves, or auto (native when a display
    /// exists, else the browser).
    #[arg(long, value_enum, value_name = "WHERE", default_value = "native", env = "ASKPANE_UI")]
    ui: UiKind,
    /// Where `--ui web` listens (a loopback address unless you mean to share it).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:0", env = "ASKPANE_BIND")]
    bind: SocketAddr,
    /// The window's colours: auto follows the system, else the desktop's colour-scheme setting
    /// (the XDG portal or GNOME's), else dark.
    #[arg(long, value_enum, value_name = "THEME", default_value = "auto", env = "ASKPANE_THEME")]
    theme: ThemeArg,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum ThemeArg {
    Auto,
    Dark,
    Light,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum UiKind {
    Native,
    Web,
    Auto,
}

impl UiArgs {
    /// The native window, for runs that show nothing.
    fn native() -> Self {
        UiArgs {
            ui: UiKind::Native,
            bind: SocketAddr::from(([127, 0, 0, 1], 0)),
            theme: ThemeArg::Auto,
        }
    }

    /// True when this run shows its questions in a browser.
    fn web(&self) -> bool {
        match self.ui {
            UiKind::Native => false,
            UiKind::Web => true,
            UiKind::Auto => missing_display().is_some(),
        }
    }
}

#[derive(Args, Debug)]
struct DemoArgs {
    /// List the built-in question sets and exit.
    #[arg(long)]
    list: bool,
    /// Show only this question set (see --list).
    #[arg(long, value_name = "NAME")]
    fixture: Option<String>,
    #[command(flatten)]
    shown: UiArgs,
}

#[derive(Args, Debug)]
struct AskArgs {
    /// The request; `-` (the default) reads standard input.
    #[arg(default_value = "-")]
    file: PathBuf,
    /// Reply in this envelope instead of the one the request came in.
    #[arg(long, value_enum, value_name = "ENVELOPE")]
    format: Option<FormatArg>,
    #[command(flatten)]
    answering: AnsweringArgs,
    #[command(flatten)]
    shown: UiArgs,
}

#[derive(Args, Debug)]
struct HookArgs {
    /// Never show a window: hand the question back to Claude Code's own dialog.
    #[arg(long, value_enum, value_name = "WHERE")]
    fallback: Option<Fallback>,
    #[command(flatten)]
    answering: AnsweringArgs,
    #[command(flatten)]
    shown: UiArgs,
}

#[derive(Args, Debug)]
struct ClaudeArgs {
    /// The Claude Code executable.
    #[arg(long, value_name = "PATH", default_value = "claude", env = "ASKPANE_CLAUDE_BIN")]
    claude_bin: PathBuf,
    /// The first prompt; without it the window asks for one.
    #[arg(short = 'p', long, value_name = "PROMPT")]
    prompt: Option<String>,
    /// Tools to allow without asking, comma-separated (e.g. Read,Grep).
    #[arg(long, value_name = "TOOLS", value_delimiter = ',')]
    allow_tools: Vec<String>,
    /// Copy every line Claude Code writes to stdout, unchanged.
    #[arg(long)]
    print_stream: bool,
    /// Log the message kinds askpane ignores to stderr.
    #[arg(long, env = "ASKPANE_DEBUG", value_parser = clap::builder::FalseyValueParser::new())]
    debug: bool,
    #[command(flatten)]
    answering: AnsweringArgs,
    #[command(flatten)]
    shown: UiArgs,
    /// Arguments passed on to Claude Code (after `--`).
    #[arg(last = true, value_name = "CLAUDE_ARGS")]
    extra: Vec<String>,
}

/// How a request may be answered; each flag can also come from the environment, so a hook
/// started by Claude Code can be steered without editing its command.
#[derive(Args, Debug)]
struct AnsweringArgs {
    /// Pre-selected answers (JSON keyed by question text or header) that fill the form.
    #[arg(long, value_name = "FILE", env = "ASKPANE_ANSWERS")]
    answers: Option<PathBuf>,
    /// Send the --answers as they are, without showing the window.
    #[arg(long, requires = "answers", env = "ASKPANE_SUBMIT", value_parser = clap::builder::FalseyValueParser::new())]
    submit: bool,
    /// Decline without showing the window; the message is what the agent reads.
    #[arg(long, value_name = "MESSAGE", env = "ASKPANE_DECLINE", conflicts_with = "answers")]
    decline: Option<String>,
    /// Seconds the user has (1 to 31536000, a year); then what they touched is sent (nothing
    /// touched: "timed out").
    #[arg(long, value_name = "SECS", env = "ASKPANE_TIMEOUT", value_parser = parse_timeout)]
    timeout: Option<Duration>,
    /// Never show a window: reply at once that no human is available.
    #[arg(long, env = "ASKPANE_NONINTERACTIVE", value_parser = clap::builder::FalseyValueParser::new())]
    non_interactive: bool,
}

/// The longest `--timeout`: a year. Far longer means a typo, and an `Instant` that far out can
/// overflow (issue 9: a huge value panicked the browser bridge).
const MAX_TIMEOUT_SECS: u64 = 365 * 24 * 60 * 60;

/// `--timeout` / `ASKPANE_TIMEOUT`: whole seconds, from 1 to a year.
fn parse_timeout(text: &str) -> Result<Duration, String> {
    match text.trim().parse::<u64>() {
        Ok(secs @ 1..=MAX_TIMEOUT_SECS) => Ok(Duration::from_secs(secs)),
        _ => Err(format!(
            "the timeout is a whole number of seconds from 1 to {MAX_TIMEOUT_SECS} (a year)"
        )),
    }
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum FormatArg {
    /// `{questions, answers, annotations}`, or `{outcome, message}`.
    ToolInput,
    /// A stream-json `control_response`.
    ControlResponse,
    /// A PreToolUse hook's `hookSpecificOutput`.
    PreToolUse,
    /// A PermissionRequest hook's `hookSpecificOutput`.
    PermissionRequest,
    /// The web protocol's `question_answer`.
    SeedWeb,
}

impl From<FormatArg> for ReplyFormat {
    fn from(format: FormatArg) -> Self {
        match format {
            FormatArg::ToolInput => ReplyFormat::ToolInput,
            FormatArg::ControlResponse => ReplyFormat::ControlResponse,
            FormatArg::PreToolUse => ReplyFormat::PreToolUse,
            FormatArg::PermissionRequest => ReplyFormat::PermissionRequest,
            FormatArg::SeedWeb => ReplyFormat::SeedWeb,
        }
    }
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Fallback {
    /// Claude Code's own terminal dialog.
    Terminal,
}

#[derive(Subcommand, Debug)]
enum Target {
    /// Claude Code: a PreToolUse hook for AskUserQuestion in settings.json.
    Claude(ClaudeTarget),
}

#[derive(Args, Debug)]
#[group(multiple = false)]
struct ClaudeTarget {
    /// Your user settings, ~/.claude/settings.json (the default).
    #[arg(long)]
    user: bool,
    /// A project's shared settings, DIR/.claude/settings.json.
    #[arg(long, value_name = "DIR")]
    project: Option<PathBuf>,
}

pub fn main() -> ExitCode {
    install_panic_hook();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) if is_hook_run() && error.use_stderr() => {
            // A hook that exits 2 blocks the tool call in Claude Code: a bad ASKPANE_* variable
            // must not do that. Print nothing, so Claude Code asks in its own dialog.
            eprintln!("askpane hook: {}; leaving the question to Claude Code", first_line(&error));
            return ExitCode::from(exit::OK);
        }
        Err(error) => error.exit(),
    };
    match run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(error) => {
            eprintln!("askpane: {error:#}");
            ExitCode::from(exit::INVALID)
        }
    }
}

/// Set while the native window runs: a panic then is the window being lost (winit 0.30 panics
/// when another program destroys its window), which `show_window` turns into a closed window.
static WINDOW_OPEN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Replaces Rust's panic report (a "panicked at" line and a backtrace, which a user cannot act
/// on and which looks like a crash after the agent was already answered) with one honest line.
/// `ASKPANE_BACKTRACE=1` brings the standard report back, for debugging.
fn install_panic_hook() {
    if std::env::var_os("ASKPANE_BACKTRACE").is_some_and(|value| value != "0") {
        return;
    }
    std::panic::set_hook(Box::new(|info| {
        let payload = info.payload();
        let what = payload
            .downcast_ref::<&str>()
            .copied()
            .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
            .unwrap_or("no message");
        let what: String = what.lines().next().unwrap_or_default().chars().take(300).collect();
        // A dependency's path without the registry folder before it: `winit-0.30.13/src/…`.
        let place = info.location().map(|at| {
            let file = at.file();
            let file = file
                .rsplit_once("/registry/src/")
                .and_then(|(_, rest)| rest.split_once('/'))
                .map_or(file, |(_, crate_path)| crate_path);
            format!(" (at {file}:{})", at.line())
        });
        let place = place.unwrap_or_default();
        match WINDOW_OPEN.load(std::sync::atomic::Ordering::SeqCst) {
            true => eprintln!(
                "askpane: the window ended unexpectedly: {what}{place}; its open questions are \
                 answered as a closed window"
            ),
            false => eprintln!("askpane: internal error: {what}{place}"),
        }
    }));
}

/// True when askpane was started as `askpane hook …`.
fn is_hook_run() -> bool {
    std::env::args_os().nth(1).is_some_and(|command| command == "hook")
}

fn first_line(error: &clap::Error) -> String {
    let text = error.to_string();
    let line = text.lines().next().unwrap_or_default();
    line.trim_start_matches("error: ").to_owned()
}

fn run(cli: Cli) -> anyhow::Result<u8> {
    match cli.command {
        Command::Demo(args) => run_demo(args),
        Command::Ask(args) => run_ask(args),
        Command::Hook(args) => run_hook(args),
        Command::Claude(args) => run_claude(args),
        Command::Install { target: Target::Claude(target) } => run_install(&target, true),
        Command::Uninstall { target: Target::Claude(target) } => run_install(&target, false),
        Command::Validate { file } => run_validate(&file),
    }
}

fn run_demo(args: DemoArgs) -> anyhow::Result<u8> {
    if args.list {
        let width = demo::FIXTURES.iter().map(|f| f.name.len()).max().unwrap_or(0);
        for fixture in demo::FIXTURES {
            say!("{:width$}  {}", fixture.name, fixture.summary);
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
    if !args.shown.web()
        && let Some(problem) = missing_display()
    {
        return Ok(no_display(&problem));
    }
    let mut requests = Vec::with_capacity(fixtures.len());
    let mut awaited = Vec::with_capacity(fixtures.len());
    for fixture in fixtures {
        let (request, outcome) = fixture.request()?;
        let envelope = request.envelope.clone();
        awaited.push(AwaitedReply { envelope, format: None, outcome, always_a_line: false });
        requests.push(request);
    }
    let window = serve(
        requests,
        awaited,
        AppOptions { close_when_done: false, ..AppOptions::default() },
        &args.shown,
    )?;
    match (window.problem, window.stopped_by) {
        (Some(problem), _) => Ok(no_display(&problem)),
        (None, Some(_)) => Ok(exit::STOPPED),
        (None, None) => Ok(exit::OK),
    }
}

/// What happened to a run of the window.
struct Served {
    /// The outcomes, in the order they were written.
    outcomes: Vec<Outcome>,
    /// Why no window could be shown, if it could not.
    problem: Option<String>,
    /// The browser bridge could not start (a taken `--bind`, no web app): a usage error.
    bridge_failed: bool,
    /// The signal that stopped askpane while the questions were shown, if one did.
    stopped_by: Option<StopSignal>,
}

/// Shows `requests` in the window or the browser (an empty list shows nothing) while a writer
/// thread writes each reply on stdout as it is decided. Returns once every reply is written.
fn serve(
    requests: Vec<Request>,
    awaited: Vec<AwaitedReply>,
    options: AppOptions,
    shown: &UiArgs,
) -> anyhow::Result<Served> {
    let (written_sender, written) = crossbeam_channel::bounded(1);
    let mut threads = IoThreads::default();
    let shown_requests = !requests.is_empty();
    // While questions are shown, a signal ends them with a reply that says so (issue 9).
    let signals = match shown_requests {
        true => watch_signals(),
        false => None,
    };
    let window_ctx = Arc::new(OnceLock::<egui::Context>::new());
    let (to_ui, inbox) = ui_channel(repaint_waker(&window_ctx));
    for request in requests {
        to_ui.send(Inbound::Ask(Box::new(request)));
    }
    // The signal route keeps the channel open until every reply is written; then the window
    // (or the bridge) sees its adapters are done and closes.
    let route = signals.as_ref().map(|watch| watch.route(to_ui.clone()));
    drop(to_ui);
    threads.spawn("reply-writer", move || {
        let outcomes = write_replies(awaited, &mut io::stdout().lock());
        drop(route);
        let _ = written_sender.send(outcomes?);
        Ok(())
    })?;
    let mut problem = None;
    let mut bridge_failed = false;
    if shown_requests {
        if shown.web() {
            let bridge_options = BridgeOptions {
                bind: shown.bind,
                assets: web_bundle::ASSETS,
                stop_when_done: options.close_when_done,
                stop_after_turn: false,
                page_gone_grace: serve::PAGE_GONE_GRACE,
            };
            let unshown = inbox.clone();
            match start_bridge(&bridge_options, inbox, &mut threads) {
                Ok(bridge) => {
                    bridge.wait();
                    bridge.stop();
                }
                Err(error) => {
                    // No page can show them: the agent hears "no human available", never a
                    // window that was not there.
                    let error = format!("{error:#}");
                    tell_unavailable(&unshown, &error);
                    problem = Some(error);
                    bridge_failed = true;
                }
            }
        } else {
            let unshown = inbox.clone();
            let app = move |ctx: &egui::Context| {
                let app = App::new(ctx, inbox, options);
                // A demo is what the user asked to see; a question arrives on its own and must
                // not take the keyboard from where the user is typing.
                match options.close_when_done {
                    true => app.with_frame_hook(leave_the_keyboard_alone()),
                    false => app,
                }
            };
            if let Err(error) = show_window(window_ctx, shown.theme, app) {
                // No window ever opened: what is still queued was never seen by anyone.
                tell_unavailable(&unshown, &error);
                problem = Some(error);
            }
        }
    }
    // The app is gone, so every request has its outcome and the writer finishes.
    threads.join().context("writing the reply")?;
    let outcomes = written.try_recv().unwrap_or_default();
    let stopped_by = signals.and_then(|watch| watch.caught());
    Ok(Served { outcomes, problem, bridge_failed, stopped_by })
}

/// Starts the browser bridge, says where it is, and opens a browser when there is a display.
fn start_bridge(
    options: &BridgeOptions,
    inbox: Receiver<Inbound>,
    threads: &mut IoThreads,
) -> anyhow::Result<Bridge> {
    // Checked before the inbox is handed over, so a failure leaves it to the caller.
    anyhow::ensure!(
        web_bundle::available(),
        "this askpane was built without its web app: run scripts/build-web, then build askpane \
         again"
    );
    if serve::is_exposed(&options.bind) {
        eprintln!(
            "askpane: warning: --bind {} can be reached from other machines; anyone with the link \
             (it holds the token) can answer",
            options.bind
        );
    }
    let bridge = Bridge::start(options, inbox, threads).context("starting the browser bridge")?;
    let url = bridge.url();
    eprintln!("askpane: answer in your browser: {url}");
    // `--bind 0.0.0.0`: a link per address of this machine, for a phone or another computer.
    for other in bridge.urls().iter().skip(1) {
        eprintln!("askpane: or, from another device: {other}");
    }
    if missing_display().is_none() {
        // Best effort, and not waited for: xdg-open may stay until the browser it started
        // closes. The URL above is the way in when no browser opens.
        let _ = std::process::Command::new("xdg-open")
            .arg(&url)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn();
    }
    Ok(bridge)
}

/// Starts catching termination signals (issue 9). Without it (no thread could be started) the
/// run goes on as before: a signal then ends askpane at once.
fn watch_signals() -> Option<SignalWatch> {
    SignalWatch::start()
        .map_err(|error| eprintln!("askpane: cannot catch signals ({error}); going on without"))
        .ok()
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
/// program) is caught here and ends the window like a close: the app is dropped while unwinding,
/// so every agent is told the window closed, and the panic hook has said what happened.
fn show_window(
    window_ctx: Arc<OnceLock<egui::Context>>,
    theme: ThemeArg,
    app: impl FnOnce(&egui::Context) -> App,
) -> Result<(), String> {
    use std::sync::atomic::Ordering;
    WINDOW_OPEN.store(true, Ordering::SeqCst);
    let run = std::panic::AssertUnwindSafe(|| run_window(window_ctx, theme, app));
    let ended = std::panic::catch_unwind(run);
    WINDOW_OPEN.store(false, Ordering::SeqCst);
    match ended {
        Ok(Ok(())) | Err(_) => Ok(()),
        Ok(Err(error)) => Err(window_error_summary(&error)),
    }
}

/// The last clause of a windowing error: `Failed to open connection to X server`, without the
/// source path winit puts before it.
fn window_error_summary(error: &eframe::Error) -> String {
    let text = error.to_string();
    text.rsplit(": ").next().unwrap_or(&text).trim().to_owned()
}

fn run_window(
    window_ctx: Arc<OnceLock<egui::Context>>,
    theme: ThemeArg,
    app: impl FnOnce(&egui::Context) -> App,
) -> Result<(), eframe::Error> {
    // Read while the window is being made: X11 reports no theme, the desktop may have one.
    let desktop = (theme == ThemeArg::Auto)
        .then(|| std::thread::Builder::new().name("desktop-theme".into()).spawn(desktop_theme))
        .and_then(Result::ok);
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
            let desktop = desktop.and_then(|lookup| lookup.join().ok()).flatten();
            let chosen = match theme {
                ThemeArg::Dark => Some(egui::Theme::Dark),
                ThemeArg::Light => Some(egui::Theme::Light),
                // The window system's own theme, followed live, where it reports one.
                ThemeArg::Auto if creation.egui_ctx.system_theme().is_some() => None,
                ThemeArg::Auto => Some(desktop.unwrap_or(egui::Theme::Dark)),
            };
            if let Some(chosen) = chosen {
                creation.egui_ctx.set_theme(chosen);
            }
            Ok(Box::new(app(&creation.egui_ctx)))
        }),
    )
}

/// A frame hook that, in the first frame (before the window is shown), asks the window manager not
/// to give the window the keyboard when it appears.
fn leave_the_keyboard_alone() -> askpane::app::FrameHook {
    let mut first = true;
    Box::new(move |_ctx, frame| {
        if std::mem::take(&mut first) {
            askpane::window_manager::never_take_focus_on_arrival(frame);
        }
    })
}

/// The desktop's colour-scheme preference: the XDG desktop portal first, then GNOME's settings
/// (a real dconf store only, not gsettings' in-memory stand-in). `None` when neither says.
fn desktop_theme() -> Option<egui::Theme> {
    let portal = briefly(
        "gdbus",
        &[
            "call",
            "--session",
            "--dest",
            "org.freedesktop.portal.Desktop",
            "--object-path",
            "/org/freedesktop/portal/desktop",
            "--method",
            "org.freedesktop.portal.Settings.Read",
            "org.freedesktop.appearance",
            "color-scheme",
        ],
    );
    if let Some(theme) = portal.as_deref().and_then(askpane::theme::theme_from_portal) {
        return Some(theme);
    }
    let gsettings = |key| briefly("gsettings", &["get", "org.gnome.desktop.interface", key]);
    let scheme = gsettings("color-scheme")?;
    askpane::theme::theme_from_gsettings(&scheme, gsettings("gtk-theme").as_deref())
}

/// What a desktop helper prints, if it answers within a moment and has a real store behind it.
fn briefly(program: &str, args: &[&str]) -> Option<String> {
    let mut child = std::process::Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .ok()?;
    let deadline = std::time::Instant::now() + Duration::from_millis(300);
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => break,
            Ok(Some(_)) | Err(_) => return None,
            Ok(None) if std::time::Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
        }
    }
    let output = child.wait_with_output().ok()?;
    // gsettings without dconf answers from memory: its defaults, not the user's desktop.
    let stderr = String::from_utf8_lossy(&output.stderr);
    if stderr.contains("memory") {
        return None;
    }
    Some(String::from_utf8_lossy(&output.stdout).into_owned())
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

/// `askpane ask`: one request in, its reply out, an exit code that says how it ended.
fn run_ask(args: AskArgs) -> anyhow::Result<u8> {
    let format = args.format.map(ReplyFormat::from);
    let message = match pipe::read_json(&args.file) {
        Ok(message) => message,
        Err(error) => return Ok(unreadable(&error, format)),
    };
    let incoming = match parse_message(&message) {
        Ok(incoming) => incoming,
        Err(error) => {
            eprintln!("askpane: {}: {error}", pipe::source_name(&args.file));
            let outcome = Outcome::Refused { reason: error.to_string() };
            write_direct(&Envelope::ToolInput, format, &outcome, true)?;
            return Ok(exit::INVALID);
        }
    };
    let Answered { outcome, stopped_by } =
        answer_one(incoming, PipeMode::Ask, format, &args.answering, &args.shown, None)?;
    if stopped_by.is_some_and(|signal| outcome == signal.outcome()) {
        return Ok(exit::STOPPED);
    }
    Ok(match outcome {
        Outcome::Answered(_) | Outcome::Replied(_) => exit::OK,
        Outcome::Declined { .. }
        | Outcome::Stopped { .. }
        | Outcome::Clarify { .. }
        | Outcome::Withdrawn => exit::DECLINED,
        Outcome::Refused { .. } => exit::INVALID,
        Outcome::Unavailable { .. } => exit::NO_HUMAN,
        Outcome::TimedOut { .. } => exit::TIMED_OUT,
    })
}

/// A message that could not be read: say why on stderr and exit 2, with a reply on stdout all the
/// same. Input that is at fault (not JSON, too large) is refused, so the agent can fix it; a file
/// that cannot be read or empty stdin is the caller's mistake, which the agent cannot fix: it
/// hears that no one could be asked.
fn unreadable(error: &ReadError, format: Option<ReplyFormat>) -> u8 {
    eprintln!("askpane: {error}");
    let outcome = match error.is_input_at_fault() {
        true => Outcome::Refused { reason: error.to_string() },
        false => {
            Outcome::Unavailable { reason: format!("askpane could not read the request: {error}") }
        }
    };
    match write_direct(&Envelope::ToolInput, format, &outcome, true) {
        Ok(()) => exit::INVALID,
        Err(write_error) => {
            eprintln!("askpane: cannot write the reply: {write_error:#}");
            exit::INVALID
        }
    }
}

/// Writes a reply decided before any window or thread exists, through the same writer.
fn write_direct(
    envelope: &Envelope,
    format: Option<ReplyFormat>,
    outcome: &Outcome,
    always_a_line: bool,
) -> anyhow::Result<()> {
    let (responder, receiver) = askpane::transport::Responder::channel();
    responder.send(outcome.clone());
    let envelope = envelope.clone();
    let awaited = vec![AwaitedReply { envelope, format, outcome: receiver, always_a_line }];
    serve(Vec::new(), awaited, AppOptions::default(), &UiArgs::native()).map(drop)
}

/// `askpane hook`: Claude Code's hook input in, `hookSpecificOutput` out (or nothing, for
/// another tool). Exits 0 whenever it printed a reply, as Claude Code reads it only then.
fn run_hook(args: HookArgs) -> anyhow::Result<u8> {
    let message = match pipe::read_json(Path::new("-")) {
        Ok(message) => message,
        Err(error) => {
            // Not a hook input at all: print nothing, so Claude Code carries on as usual.
            eprintln!("askpane hook: {error}; leaving the question to Claude Code");
            return Ok(exit::OK);
        }
    };
    let incoming = match parse_message(&message) {
        Ok(incoming) => incoming,
        Err(EnvelopeError::OtherTool { .. }) => return Ok(exit::OK),
        Err(error) => {
            eprintln!("askpane hook: {error}; leaving the question to Claude Code");
            return Ok(exit::OK);
        }
    };
    let fallback = args.fallback.map(|_| "askpane hook --fallback terminal");
    let answered =
        answer_one(incoming, PipeMode::Hook, None, &args.answering, &args.shown, fallback);
    if let Err(error) = answered {
        // The reply is written ("no human available": Claude Code asks instead). Exiting 2 would
        // make Claude Code block the tool call, so the problem only goes to stderr.
        eprintln!("askpane hook: {error:#}");
    }
    Ok(exit::OK)
}

/// How one message was answered: its outcome, and the signal that stopped askpane, if any.
struct Answered {
    outcome: Outcome,
    stopped_by: Option<StopSignal>,
}

/// The two modes that answer one message from a pipe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PipeMode {
    Ask,
    Hook,
}

impl PipeMode {
    fn name(self) -> &'static str {
        match self {
            PipeMode::Ask => "ask",
            PipeMode::Hook => "hook",
        }
    }

    /// `ask` promises exactly one line on stdout; a hook prints nothing where that is how Claude
    /// Code is told to ask in its own dialog.
    fn always_a_line(self) -> bool {
        self == PipeMode::Ask
    }
}

/// Answers one parsed message: refuse it if invalid, settle it from the flags if they say so,
/// or show the window. The reply is written (once) by the writer thread; the outcome is returned.
fn answer_one(
    incoming: Incoming,
    mode: PipeMode,
    format: Option<ReplyFormat>,
    answering: &AnsweringArgs,
    shown: &UiArgs,
    unavailable: Option<&str>,
) -> anyhow::Result<Answered> {
    let envelope = incoming.envelope.clone();
    let provenance = Provenance::from_envelope(mode.name(), &incoming.envelope);
    let (mut request, outcome) = match Request::new(incoming, provenance) {
        Ok(pair) => pair,
        Err(invalid) => {
            eprintln!("askpane: the questions cannot be shown: {invalid}");
            let outcome = Outcome::Refused { reason: invalid.to_string() };
            write_direct(&envelope, format, &outcome, mode.always_a_line())?;
            return Ok(Answered { outcome, stopped_by: None });
        }
    };
    for warning in &request.warnings {
        eprintln!("askpane: warning: {warning}");
    }
    let always_a_line = mode.always_a_line();
    let awaited = vec![AwaitedReply { envelope, format, outcome, always_a_line }];
    let settled = match unavailable {
        Some(reason) => Ok(Some(Outcome::Unavailable { reason: reason.to_owned() })),
        None => settle_without_window(&mut request, answering, shown.web()),
    };
    let decided = match settled {
        Ok(decided) => decided,
        Err(problem) => {
            // The flags do not fit these questions: the agent is told no answer is available,
            // and the caller gets the error (exit 2) that names what did not match.
            request.reply.send(Outcome::Unavailable { reason: problem.clone() });
            serve(Vec::new(), awaited, AppOptions::default(), shown)?;
            anyhow::bail!(problem);
        }
    };
    let requests = match decided {
        Some(outcome) => {
            request.reply.send(outcome);
            Vec::new()
        }
        None => vec![request],
    };
    let served = serve(
        requests,
        awaited,
        AppOptions { close_when_done: true, ..AppOptions::default() },
        shown,
    )?;
    match (&served.problem, served.bridge_failed) {
        // The agent was told no one can answer; the caller hears the usage error (exit 2).
        (Some(problem), true) => anyhow::bail!("cannot show the questions: {problem}"),
        (Some(problem), false) => eprintln!("askpane: cannot show the questions ({problem})"),
        (None, _) => {}
    }
    let outcome = served.outcomes.into_iter().next().context("no reply was decided")?;
    Ok(Answered { outcome, stopped_by: served.stopped_by })
}

/// The outcome the flags decide on their own (`--decline`, `--answers --submit`, a
/// non-interactive run, no display); `None` when the user is to answer in the window. Pre-selected
/// answers without `--submit` go into the request to fill the form.
fn settle_without_window(
    request: &mut Request,
    answering: &AnsweringArgs,
    in_browser: bool,
) -> Result<Option<Outcome>, String> {
    request.timeout = answering.timeout;
    if let Some(message) = &answering.decline {
        return Ok(Some(Outcome::declined(message)));
    }
    if let Some(path) = &answering.answers {
        let preset = pipe::read_json(path).map_err(|error| format!("--answers: {error}"))?;
        let drafts = drafts_from_preset(&request.ask, &preset)
            .map_err(|error| format!("--answers {}: {error}", path.display()))?;
        if answering.submit {
            let answers = build_answers(&request.ask, &drafts)
                .map_err(|error| format!("--answers {}: {error}", path.display()))?;
            return Ok(Some(Outcome::Answered(answers)));
        }
        request.drafts = drafts;
    }
    if answering.non_interactive {
        let reason = "askpane runs non-interactively (--non-interactive or ASKPANE_NONINTERACTIVE)";
        return Ok(Some(Outcome::Unavailable { reason: reason.to_owned() }));
    }
    if !in_browser && let Some(problem) = missing_display() {
        return Ok(Some(Outcome::Unavailable { reason: format!("no display: {problem}") }));
    }
    Ok(None)
}

/// `askpane claude`: Claude Code as a child, askpane as its host, until the window closes (or,
/// without a window, until Claude Code ends). Exits with Claude Code's exit code.
fn run_claude(args: ClaudeArgs) -> anyhow::Result<u8> {
    let answering = &args.answering;
    let in_browser = args.shown.web() && !answering.non_interactive;
    let headless = !in_browser && (answering.non_interactive || missing_display().is_some());
    if (headless || in_browser) && args.prompt.is_none() {
        anyhow::bail!("without a window there is nowhere to type a prompt: give one with -p");
    }
    let preset = match &answering.answers {
        Some(path) => Some(pipe::read_json(path).context("--answers")?),
        None => None,
    };
    let options = ClaudeOptions {
        program: args.claude_bin.clone(),
        extra_args: args.extra.clone(),
        prompt: args.prompt.clone(),
        allow_tools: args.allow_tools.clone(),
        print_stream: args.print_stream,
        debug: args.debug,
        autopilot: Autopilot {
            decline: answering.decline.clone(),
            preset,
            submit: answering.submit,
            headless,
            timeout: answering.timeout,
        },
    };
    // A signal ends the session the way closing the window does: open questions hear why, and
    // Claude Code's process group is stopped (issue 9).
    let signals = watch_signals();
    let window_ctx = Arc::new(OnceLock::<egui::Context>::new());
    let (to_ui, inbox) = ui_channel(repaint_waker(&window_ctx));
    let route = signals.as_ref().map(|watch| watch.route(to_ui.clone()));
    let mut threads = IoThreads::default();
    let session = ClaudeSession::start(&options, to_ui, &mut threads)?;
    if headless {
        host_without_window(&inbox);
    } else if in_browser {
        // The browser shows the questions only: the run ends with the prompt's turn.
        let bridge_options = BridgeOptions {
            bind: args.shown.bind,
            assets: web_bundle::ASSETS,
            stop_when_done: true,
            stop_after_turn: true,
            page_gone_grace: serve::PAGE_GONE_GRACE,
        };
        let bridge = start_bridge(&bridge_options, inbox, &mut threads)?;
        bridge.wait();
        bridge.stop();
    } else {
        let commands = session.commands();
        let prompt = args.prompt.clone();
        let unshown = inbox.clone();
        let app = move |ctx: &egui::Context| {
            App::new(ctx, inbox, AppOptions::default()).with_session(commands, prompt.as_deref())
        };
        if let Err(problem) = show_window(window_ctx, args.shown.theme, app) {
            tell_unavailable(&unshown, &problem);
            eprintln!("askpane: no display to open a window on ({problem})");
        }
    }
    drop(route);
    let stopped_by = signals.as_ref().and_then(SignalWatch::caught);
    let status = session.shut_down(claude::GRACE)?;
    threads.join().context("ending the Claude Code session")?;
    if stopped_by.is_some() {
        return Ok(exit::STOPPED);
    }
    Ok(status.code().map_or(1, |code| u8::try_from(code).unwrap_or(1)))
}

/// The host without a window: notices go to stderr, and whatever reaches the window is answered
/// "no human available", until the turn ends (or Claude Code does).
fn host_without_window(inbox: &Receiver<Inbound>) {
    for message in inbox {
        match message {
            Inbound::Ask(request) => {
                let reason = "askpane runs Claude Code without a window".to_owned();
                request.reply.send(Outcome::Unavailable { reason });
            }
            Inbound::Notice(notice) => eprintln!("askpane: {notice}"),
            Inbound::Session(event) => match *event {
                // The prompt's turn is over: there is no one to type another.
                SessionEvent::Message(CliMessage::Result(_)) => break,
                SessionEvent::Ended { status, stderr_tail } => {
                    if !status.ends_with(" 0") {
                        eprintln!("askpane: Claude Code ended ({status})");
                        for line in stderr_tail {
                            eprintln!("  {line}");
                        }
                    }
                    break;
                }
                SessionEvent::Message(_) => {}
            },
            // askpane is being stopped: nothing is open here (everything is answered at once).
            Inbound::Shutdown { .. } => break,
            // Permissions are decided by the reader when headless.
            Inbound::Permission(_)
            | Inbound::WithdrawPermission { .. }
            | Inbound::Withdraw { .. }
            | Inbound::Settled { .. }
            | Inbound::Delivery(_)
            | Inbound::Countdown { .. } => {}
        }
    }
}

/// `askpane install claude` / `askpane uninstall claude`.
fn run_install(target: &ClaudeTarget, install: bool) -> anyhow::Result<u8> {
    let path = settings_path(target)?;
    let existing = match std::fs::read_to_string(&path) {
        Ok(text) => Some(text),
        Err(error) if error.kind() == io::ErrorKind::NotFound => None,
        Err(error) => return Err(error).with_context(|| format!("cannot read {}", path.display())),
    };
    let mut settings: Value = match &existing {
        Some(text) if !text.trim().is_empty() => serde_json::from_str(text)
            .with_context(|| format!("{} is not valid JSON; left it untouched", path.display()))?,
        _ => Value::Object(serde_json::Map::new()),
    };
    let change = match install {
        true => {
            let binary = std::env::current_exe().context("cannot find askpane's own path")?;
            let command = claude_settings::hook_command(&binary);
            claude_settings::install(&mut settings, &command)
        }
        false => claude_settings::uninstall(&mut settings),
    }
    .with_context(|| format!("{}: left it untouched", path.display()))?;
    if !change.changed() {
        let what = match change {
            Change::AlreadyThere => "already has askpane's hook",
            _ => "has no askpane hook",
        };
        say!("{} {what}; nothing changed", path.display());
        return Ok(exit::OK);
    }
    let backup = match &existing {
        Some(text) => Some(write_backup(&path, text)?),
        None => None,
    };
    if let Some(folder) = path.parent() {
        std::fs::create_dir_all(folder)
            .with_context(|| format!("cannot create {}", folder.display()))?;
    }
    let mut text = serde_json::to_string_pretty(&settings)?;
    text.push('\n');
    std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
    let what = match &change {
        Change::Added => "added askpane's PreToolUse hook for AskUserQuestion to".to_owned(),
        Change::Updated { from } => {
            format!("pointed askpane's hook (was `{from}`) at this binary in")
        }
        Change::Removed { count } => format!("removed {count} askpane hook(s) from"),
        Change::AlreadyThere | Change::NothingToRemove => "left".to_owned(),
    };
    match backup {
        Some(backup) => say!("{what} {} (backup: {})", path.display(), backup.display()),
        None => say!("{what} {} (a new file)", path.display()),
    }
    Ok(exit::OK)
}

fn settings_path(target: &ClaudeTarget) -> anyhow::Result<PathBuf> {
    if let Some(project) = &target.project {
        // A mistyped project must not grow a new folder tree.
        anyhow::ensure!(project.is_dir(), "{} is not a folder", project.display());
        return Ok(project.join(".claude").join("settings.json"));
    }
    let home = std::env::var_os("HOME").context("HOME is not set; use --project DIR")?;
    Ok(PathBuf::from(home).join(".claude").join("settings.json"))
}

/// Copies the settings before they are changed: `settings.json.askpane-backup-<unix time>`.
fn write_backup(path: &Path, text: &str) -> anyhow::Result<PathBuf> {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_secs());
    // Never overwrite an earlier backup: two changes within a second get -2, -3, ….
    let base = path.file_name().unwrap_or_default().to_string_lossy().into_owned();
    let backup = (1..)
        .map(|n| match n {
            1 => path.with_file_name(format!("{base}.askpane-backup-{stamp}")),
            n => path.with_file_name(format!("{base}.askpane-backup-{stamp}-{n}")),
        })
        .find(|candidate| !candidate.exists())
        .context("no free backup name")?;
    std::fs::write(&backup, text)
        .with_context(|| format!("cannot write the backup {}", backup.display()))?;
    Ok(backup)
}

fn run_validate(file: &Path) -> anyhow::Result<u8> {
    let name = pipe::source_name(file);
    let message = match pipe::read_json(file) {
        Ok(message) => message,
        Err(ReadError::NotJson { error, .. }) => {
            say!("{name}: invalid: not JSON: {error}");
            return Ok(exit::INVALID);
        }
        Err(error @ ReadError::TooLarge { .. }) => {
            say!("{name}: invalid: {error}");
            return Ok(exit::INVALID);
        }
        Err(error) => return Err(error.into()),
    };
    let incoming = match parse_message(&message) {
        Ok(incoming) => incoming,
        Err(error) => {
            say!("{name}: invalid: {error}");
            return Ok(exit::INVALID);
        }
    };
    let kind = incoming.envelope.describe();
    match protocol::validate(&incoming.input) {
        Ok(validated) => {
            let count = validated.ask.questions().len();
            let plural = if count == 1 { "" } else { "s" };
            say!("{name}: valid {kind} with {count} question{plural}");
            for warning in &validated.warnings {
                say!("  warning: {warning}");
            }
            Ok(exit::OK)
        }
        Err(invalid) => {
            say!("{name}: invalid {kind}");
            for error in &invalid.0 {
                say!("  error: {error}");
            }
            Ok(exit::INVALID)
        }
    }
}
