//! The binary's logger (issue 25): the library's lines, written through the `log` facade, one
//! each on stderr, reading as they always have: `askpane: {message}` for errors, warnings and
//! information; debug and trace lines say their level (`askpane: debug: …`), and a line of
//! another crate names where it comes from. `ASKPANE_LOG` picks the lines: a level for askpane's
//! own, `module=level` for one module of askpane or of a crate it uses, comma-separated.
//!
//! stderr is the inbox's log file too: a client that starts an inbox sends its stderr to
//! `inbox.log` (`client::start_inbox`), and the lean inbox's `exec` keeps it.

use std::io::{self, Write};

use log::kv::Key;
use log::{Level, LevelFilter, Log, Metadata, Record};

/// The variable that picks the lines.
pub(super) const VARIABLE: &str = "ASKPANE_LOG";

/// askpane's own module, whose lines pass from info up unless `ASKPANE_LOG` says otherwise;
/// also who a line says it is from unless it names a `speaker`.
const OURS: &str = "askpane";

/// Which lines pass: each module named, with its level; a line passes at the level of the
/// longest module its target is in, and a line of no module named (another crate's) does not.
#[derive(Debug, PartialEq)]
pub(super) struct Filter {
    modules: Vec<(String, LevelFilter)>,
}

impl Filter {
    /// `ASKPANE_LOG`'s `spec` over the default, which is `ours` for askpane and nothing for
    /// other crates. A bare level is askpane's own. Also returns the directives that are
    /// neither a level nor `module=level`, which are left out.
    pub(super) fn parse(spec: &str, ours: LevelFilter) -> (Filter, Vec<String>) {
        let mut filter = Filter { modules: vec![(OURS.to_owned(), ours)] };
        let mut not_understood = Vec::new();
        for directive in spec.split(',').map(str::trim).filter(|text| !text.is_empty()) {
            let (module, level) = match directive.split_once('=') {
                Some((module, level)) => (module.trim(), level.trim()),
                None => (OURS, directive),
            };
            match level.parse::<LevelFilter>() {
                Ok(level) if !module.is_empty() => filter.set(module, level),
                _ => not_understood.push(directive.to_owned()),
            }
        }
        (filter, not_understood)
    }

    fn set(&mut self, module: &str, level: LevelFilter) {
        match self.modules.iter_mut().find(|(named, _)| named == module) {
            Some((_, was)) => *was = level,
            None => self.modules.push((module.to_owned(), level)),
        }
    }

    /// The level a line from `target` (a module path) passes at.
    pub(super) fn level(&self, target: &str) -> LevelFilter {
        self.modules
            .iter()
            .filter(|(module, _)| within(module, target))
            .max_by_key(|(module, _)| module.len())
            .map_or(LevelFilter::Off, |(_, level)| *level)
    }

    /// The most any module lets through: `log` skips what is finer at the call, for free.
    fn most(&self) -> LevelFilter {
        self.modules.iter().map(|(_, level)| *level).max().unwrap_or(LevelFilter::Off)
    }
}

/// Whether `target` is `module` or one of its submodules (`askpane::store` is in `askpane`,
/// `askpane_x` is not).
fn within(module: &str, target: &str) -> bool {
    target.strip_prefix(module).is_some_and(|rest| rest.is_empty() || rest.starts_with("::"))
}

/// One line for `record`, newline included: `askpane: {message}` for askpane's own errors,
/// warnings and information (the speaker may be another: `askpane inbox`, an agent echoed);
/// the level after the speaker for debug and trace; and the level and target for another
/// crate's line.
pub(super) fn write_line(out: &mut impl Write, record: &Record<'_>) -> io::Result<()> {
    let speaker = record
        .key_values()
        .get(Key::from_str("speaker"))
        .and_then(|value| value.to_borrowed_str())
        .unwrap_or(OURS);
    let message = record.args();
    let level = record.level();
    let name = match level {
        Level::Error => "error",
        Level::Warn => "warn",
        Level::Info => "info",
        Level::Debug => "debug",
        Level::Trace => "trace",
    };
    if !within(OURS, record.target()) {
        return writeln!(out, "{speaker}: {name}: {}: {message}", record.target());
    }
    match level {
        Level::Error | Level::Warn | Level::Info => writeln!(out, "{speaker}: {message}"),
        Level::Debug | Level::Trace => writeln!(out, "{speaker}: {name}: {message}"),
    }
}

struct StderrLogger {
    filter: Filter,
}

impl Log for StderrLogger {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        metadata.level() <= self.filter.level(metadata.target())
    }

    /// Formats the whole line first, so that it reaches stderr in one write (lines of several
    /// threads never interleave). A stderr that cannot be written to is not a reason to stop.
    fn log(&self, record: &Record<'_>) {
        if !self.enabled(record.metadata()) {
            return;
        }
        let mut line = Vec::new();
        if write_line(&mut line, record).is_ok() {
            let _ = io::stderr().lock().write_all(&line);
        }
    }

    fn flush(&self) {}
}

/// Installs the logger, once, before a mode runs: askpane's lines from info up (from debug up
/// with `debug`, the `--debug` flag), as `ASKPANE_LOG` changes that. What `ASKPANE_LOG` holds
/// that is not understood is said in one line and left out.
pub(super) fn install(debug: bool) {
    let ours = if debug { LevelFilter::Debug } else { LevelFilter::Info };
    let spec = match std::env::var_os(VARIABLE) {
        None => String::new(),
        Some(value) => value.into_string().unwrap_or_else(|_| {
            eprintln!("askpane: {VARIABLE} is not UTF-8; left out");
            String::new()
        }),
    };
    let (filter, not_understood) = Filter::parse(&spec, ours);
    for directive in not_understood {
        eprintln!(
            "askpane: {VARIABLE}: `{directive}` is neither a level (error, warn, info, debug, \
             trace, off) nor module=level; left out"
        );
    }
    log::set_max_level(filter.most());
    let _ = log::set_boxed_logger(Box::new(StderrLogger { filter }));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(level: Level, target: &str, speaker: Option<&str>, message: &str) -> String {
        let speaker_kv = speaker.map(|speaker| [("speaker", speaker)]);
        let mut builder = Record::builder();
        builder.level(level).target(target);
        if let Some(key_values) = &speaker_kv {
            builder.key_values(key_values);
        }
        let mut out = Vec::new();
        write_line(&mut out, &builder.args(format_args!("{message}")).build()).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn askpanes_own_lines_read_as_they_always_have() {
        for level in [Level::Error, Level::Warn, Level::Info] {
            assert_eq!(line(level, "askpane::store::files", None, "message"), "askpane: message\n");
        }
        assert_eq!(
            line(Level::Warn, "askpane::transport::inbox", Some("askpane inbox"), "asked to quit"),
            "askpane inbox: asked to quit\n"
        );
        assert_eq!(line(Level::Info, "askpane", Some("claude"), "error: x"), "claude: error: x\n");
    }

    #[test]
    fn debug_and_trace_lines_say_their_level_and_other_crates_their_module() {
        assert_eq!(
            line(Level::Debug, "askpane::transport::agents::claude", None, "ignored a line"),
            "askpane: debug: ignored a line\n"
        );
        assert_eq!(line(Level::Trace, "askpane::store", None, "m"), "askpane: trace: m\n");
        assert_eq!(
            line(Level::Warn, "zbus::connection", None, "gone"),
            "askpane: warn: zbus::connection: gone\n"
        );
    }

    #[test]
    fn askpane_passes_from_info_and_other_crates_not_at_all_by_default() {
        let (filter, not_understood) = Filter::parse("", LevelFilter::Info);
        assert!(not_understood.is_empty());
        assert_eq!(filter.level("askpane"), LevelFilter::Info);
        assert_eq!(filter.level("askpane::transport::inbox"), LevelFilter::Info);
        assert_eq!(filter.level("zbus::connection"), LevelFilter::Off);
        assert_eq!(filter.level("askpanes"), LevelFilter::Off);
        assert_eq!(filter.most(), LevelFilter::Info);
        let (with_debug, _) = Filter::parse("", LevelFilter::Debug);
        assert_eq!(with_debug.level("askpane::store"), LevelFilter::Debug);
    }

    #[test]
    fn a_level_is_askpanes_and_module_level_names_one_module() {
        let (filter, not_understood) = Filter::parse(
            " WARN , askpane::transport::inbox=debug,zbus=error,askpane::store=off",
            LevelFilter::Info,
        );
        assert!(not_understood.is_empty(), "{not_understood:?}");
        assert_eq!(filter.level("askpane::transport::notify"), LevelFilter::Warn);
        assert_eq!(filter.level("askpane::transport::inbox"), LevelFilter::Debug);
        assert_eq!(filter.level("askpane::transport::inbox::writer"), LevelFilter::Debug);
        assert_eq!(filter.level("askpane::transport::inboxes"), LevelFilter::Warn);
        assert_eq!(filter.level("askpane::store::files"), LevelFilter::Off);
        assert_eq!(filter.level("zbus::proxy"), LevelFilter::Error);
        assert_eq!(filter.most(), LevelFilter::Debug);
        // A level given later wins, and the --debug default gives way to ASKPANE_LOG's level.
        let (filter, _) = Filter::parse("trace,error", LevelFilter::Debug);
        assert_eq!(filter.level("askpane::cli"), LevelFilter::Error);
    }

    #[test]
    fn what_is_not_understood_is_left_out_and_the_rest_kept() {
        let (filter, not_understood) =
            Filter::parse("loud,askpane::store=,=debug,zbus=warn", LevelFilter::Info);
        assert_eq!(not_understood, ["loud", "askpane::store=", "=debug"]);
        assert_eq!(filter.level("askpane::store"), LevelFilter::Info);
        assert_eq!(filter.level("zbus"), LevelFilter::Warn);
    }
}
