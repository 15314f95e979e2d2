//! `askpane-hook`: the small hook client (issue 30). Claude Code starts a hook process for every
//! tool call it asks about; this one answers the common case, a running inbox that shows the
//! question or the tool call, with a 1.4 MB program instead of askpane's whole binary (most of a
//! hook's start was the kernel mapping, relocating and tearing down that binary). Everything else
//! goes to `askpane hook` by `exec`, with the same standard input and arguments: arguments, a
//! variable that changes how it is answered
//! ([`ANSWERING_VARIABLES`](askpane::protocol::hook_input::ANSWERING_VARIABLES)), no inbox (one
//! is started, or a window of its own shown), a `Notification`, an input askpane refuses. Both
//! read the input with [`HookInput::of`](askpane::protocol::hook_input::HookInput::of) and hand it
//! over with the library's one thin client ([`askpane::transport::inbox::deliver`]), so the bytes
//! on stdout and the exit code are the same whichever process answered.

#[cfg(unix)]
#[path = "../cli/logger.rs"]
#[allow(dead_code, reason = "the binary's logger; this client uses only its install")]
mod logger;

#[cfg(unix)]
fn main() -> std::process::ExitCode {
    unix::main()
}

/// No fast path off Unix: `askpane hook` answers, with this process's standard streams.
#[cfg(not(unix))]
fn main() -> std::process::ExitCode {
    let askpane = full_askpane();
    let ran =
        std::process::Command::new(&askpane).arg("hook").args(std::env::args_os().skip(1)).status();
    match ran {
        Ok(status) => {
            let code = status.code().and_then(|code| u8::try_from(code).ok());
            std::process::ExitCode::from(code.unwrap_or(askpane::protocol::exit::OK))
        }
        Err(error) => {
            eprintln!(
                "askpane hook: cannot run {} ({error}); leaving the question to Claude Code",
                askpane.display()
            );
            std::process::ExitCode::from(askpane::protocol::exit::OK)
        }
    }
}

/// askpane's own binary: the one beside this client (as installed and packaged), else the one
/// on `PATH`.
fn full_askpane() -> std::path::PathBuf {
    let name = format!("askpane{}", std::env::consts::EXE_SUFFIX);
    std::env::current_exe()
        .ok()
        .and_then(|this| Some(this.parent()?.join(&name)))
        .filter(|beside| beside.is_file())
        .unwrap_or_else(|| name.into())
}

#[cfg(unix)]
mod unix {
    use std::ffi::OsString;
    use std::fs::File;
    use std::io::{self, Seek, Write};
    use std::os::unix::process::CommandExt;
    use std::path::Path;
    use std::process::{Command, ExitCode};

    use serde_json::Value;

    use askpane::protocol::envelope::ReplyShape;
    use askpane::protocol::exit;
    use askpane::protocol::hook_input::{ANSWERING_VARIABLES, HookInput};
    use askpane::protocol::inbox::{ClientMode, Policy};
    use askpane::protocol::permission::HookAgent;
    use askpane::transport::inbox::{Delivered, Until, deliver};
    use askpane::transport::lines::write_line;
    use askpane::transport::pipe;
    use askpane::transport::signals::StopSignal;

    use super::{full_askpane, logger};

    pub(super) fn main() -> ExitCode {
        let arguments: Vec<OsString> = std::env::args_os().skip(1).collect();
        let flagged = ANSWERING_VARIABLES.iter().any(|name| std::env::var_os(name).is_some());
        if !arguments.is_empty() || flagged {
            return hand_over(&arguments, None);
        }
        logger::install(false);
        let stdin = Path::new("-");
        let bytes = match pipe::read_bytes(stdin) {
            Ok(bytes) => bytes,
            Err(error) => return leave_it(&error),
        };
        let message = match pipe::json_of(stdin, &bytes) {
            Ok(message) => message,
            Err(error) => return leave_it(&error),
        };
        let answered = match HookInput::of(&message) {
            HookInput::Permission(Ok(_)) => {
                through_the_inbox(&message, HookAgent::of_input(&message).command(), |_| None)
            }
            HookInput::Question(incoming)
                if askpane::protocol::validate(&incoming.input).is_ok() =>
            {
                let shape = ReplyShape { format: None, always_a_line: false };
                through_the_inbox(&message, "askpane hook", |signal| {
                    shape.line(&incoming.envelope, &signal.outcome())
                })
            }
            HookInput::OtherTool => Some(exit::OK),
            // A notification, an input askpane refuses (said by `askpane hook`), a question it
            // refuses: all `askpane hook`'s.
            HookInput::Notification(_)
            | HookInput::Permission(Err(_))
            | HookInput::Question(_)
            | HookInput::Unreadable(_) => None,
        };
        match answered {
            Some(code) => ExitCode::from(code),
            None => hand_over(&arguments, Some(&bytes)),
        }
    }

    /// Not an input to read: said as `askpane hook` says it, nothing printed, exit 0.
    fn leave_it(error: &pipe::ReadError) -> ExitCode {
        eprintln!("askpane hook: {error}; leaving the question to Claude Code");
        ExitCode::from(exit::OK)
    }

    /// Hands `message` to the running inbox as `askpane hook` does and prints what it decided;
    /// `said` names the hook on stderr; `stopped` is the reply when a signal stops this client
    /// first (a question's, as from a window; none for a tool call, which the agent then
    /// decides). `None`: not answered here (no inbox runs, or it cannot be used).
    fn through_the_inbox(
        message: &Value,
        said: &str,
        stopped: impl FnOnce(StopSignal) -> Option<Value>,
    ) -> Option<u8> {
        match deliver(message, ClientMode::Hook, &Policy::default(), &Until::Signal, None) {
            Delivered::Outcome { reply, exit_code, problem } => {
                if let Some(problem) = problem {
                    eprintln!("{said}: {problem}");
                }
                if let Some(reply) = reply {
                    print_line(&reply);
                }
                Some(exit_code)
            }
            Delivered::Stopped(signal) => {
                if let Some(reply) = stopped(signal) {
                    print_line(&reply);
                }
                Some(exit::OK)
            }
            Delivered::Cancelled | Delivered::Yourself(_) | Delivered::NotRunning => None,
        }
    }

    /// The hook's one line on stdout.
    #[allow(clippy::disallowed_methods, reason = "the small hook's one writer: its reply line")]
    fn print_line(reply: &Value) {
        if let Err(error) = write_line(&mut io::stdout().lock(), reply)
            && error.kind() != io::ErrorKind::BrokenPipe
        {
            eprintln!("askpane: cannot write the reply: {error}");
        }
    }

    /// Becomes `askpane hook` with the same arguments; `input`: what was read of stdin, given to
    /// it again as its stdin. Nothing has been written to stdout before this.
    fn hand_over(arguments: &[OsString], input: Option<&[u8]>) -> ExitCode {
        let askpane = full_askpane();
        let mut command = Command::new(&askpane);
        command.arg("hook").args(arguments);
        if let Some(input) = input {
            match input_again(input) {
                Ok(file) => {
                    command.stdin(file);
                }
                Err(error) => {
                    eprintln!(
                        "askpane hook: cannot hand the input on ({error}); leaving the question \
                         to Claude Code"
                    );
                    return ExitCode::from(exit::OK);
                }
            }
        }
        // `exec` returns only when it failed.
        let error = command.exec();
        eprintln!(
            "askpane hook: cannot run {} ({error}); leaving the question to Claude Code",
            askpane.display()
        );
        ExitCode::from(exit::OK)
    }

    /// `input` in a file of no name, read from its start: the stdin `askpane hook` reads.
    fn input_again(input: &[u8]) -> io::Result<File> {
        let mut file = unnamed_file()?;
        file.write_all(input)?;
        file.rewind()?;
        Ok(file)
    }

    #[cfg(any(target_os = "linux", target_os = "android"))]
    fn unnamed_file() -> io::Result<File> {
        use rustix::fs::{MemfdFlags, memfd_create};
        Ok(File::from(memfd_create("askpane-hook-input", MemfdFlags::CLOEXEC)?))
    }

    /// A file in the temporary folder, only this process's (created new, mode 0600), removed
    /// from the folder at once.
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    fn unnamed_file() -> io::Result<File> {
        use std::os::unix::fs::OpenOptionsExt;
        let mut name = [0u8; 8];
        getrandom::fill(&mut name).map_err(|error| io::Error::other(error.to_string()))?;
        let name: String = name.iter().map(|byte| format!("{byte:02x}")).collect();
        let path = std::env::temp_dir().join(format!("askpane-hook-{name}"));
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)?;
        std::fs::remove_file(&path)?;
        Ok(file)
    }
}
