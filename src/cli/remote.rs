//! `askpane remote HOST [-- SSH-ARGS…]` (issue 27): links an SSH host's agents to this desk's
//! inbox through the person's own ssh, until stopped (Ctrl+C, SIGTERM); `--list` shows the
//! links that run. The link itself is `askpane::transport::remote`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context as _;
use clap::Args;

use askpane::transport::inbox::Place;
use askpane::transport::remote::{
    self, HostToken, HttpForward, HttpHooks, Link, LinkRecord, Ssh, TOKEN_HEADER, TokenMade,
};
use askpane::transport::signals::SignalWatch;
use askpane::transport::{Inbound, Waker, ui_channel};

use super::args::{StoreArgs, UiArgs};
use super::client::starter;
use super::exit;

#[derive(Args, Debug)]
pub(super) struct RemoteArgs {
    /// The host as ssh knows it (an alias of ~/.ssh/config, `user@host`, an address).
    #[arg(required_unless_present_any = ["list", "container"])]
    host: Option<String>,
    /// Show each link that runs on this desk, and its state; link nothing.
    #[arg(long, conflicts_with = "host")]
    list: bool,
    /// Print how a container on this desk sees the inbox (the `docker run` bind mount and the
    /// `devcontainer.json` snippet); link nothing.
    #[arg(long, conflicts_with_all = ["host", "list", "setup"])]
    container: bool,
    /// Instead of linking: copy this askpane to the host (~/.local/bin/askpane, checked for its
    /// system and by checksum) and run `askpane install AGENT` there.
    #[arg(long, value_name = "AGENT", conflicts_with = "list")]
    setup: Option<SetupAgent>,
    /// With --setup: run `askpane uninstall AGENT` on the host and remove the binary.
    #[arg(long, requires = "setup")]
    undo: bool,
    /// Also answer Claude Code's HTTP hooks on the host: ssh forwards the host's
    /// 127.0.0.1:PORT (default 47600) to askpane here, and the settings to put in the host's
    /// ~/.claude/settings.json are printed (no askpane is needed there).
    #[arg(
        long,
        value_name = "PORT",
        num_args = 0..=1,
        default_missing_value = "47600",
        conflicts_with_all = ["list", "setup"]
    )]
    http: Option<u16>,
    /// With --http: make the host a new token (the settings on the host must then be updated;
    /// the old token is refused). Without it, the token made for the host before is used again.
    #[arg(long, requires = "http")]
    new_token: bool,
    /// The ssh program to run.
    #[arg(long, default_value = "ssh", value_name = "PROGRAM")]
    ssh: OsString,
    /// How an inbox started for a remote question shows it (when none runs).
    #[command(flatten)]
    shown: UiArgs,
    #[command(flatten)]
    store: StoreArgs,
    /// Arguments for ssh, put before the host (`-- -p 2222 -F ~/.ssh/work`).
    #[arg(last = true, value_name = "SSH-ARGS")]
    ssh_args: Vec<OsString>,
}

/// The agents `--setup` installs askpane's hook for on the host.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum SetupAgent {
    Claude,
    Codex,
}

pub(super) fn run(args: RemoteArgs) -> anyhow::Result<u8> {
    if args.list {
        return list();
    }
    if args.container {
        let place = Place::find().context("cannot use the inbox's folder")?;
        let folder = place.socket().parent().map(Path::to_path_buf).unwrap_or_default();
        let desk = Desk {
            folder,
            runtime: std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from),
            uid: rustix::process::getuid().as_raw(),
            gid: rustix::process::getgid().as_raw(),
        };
        say!("{}", container_help(&desk));
        return Ok(exit::OK);
    }
    let Some(host) = args.host else {
        anyhow::bail!("name the host to link: askpane remote HOST");
    };
    if let Some(agent) = args.setup {
        let agent = match agent {
            SetupAgent::Claude => "claude",
            SetupAgent::Codex => "codex",
        };
        let ssh = Ssh { program: args.ssh, args: args.ssh_args, host };
        let said = match args.undo {
            true => ssh.undo_set_up(agent),
            false => {
                let binary = std::env::current_exe().context("cannot find this askpane")?;
                ssh.set_up(&binary, agent)
            }
        };
        let said = said.map_err(|why| anyhow::anyhow!("{why}"))?;
        for line in said {
            say!("{line}");
        }
        if !args.undo {
            say!("now link it: askpane remote {}", ssh.host);
        }
        return Ok(exit::OK);
    }
    let place = Place::find().context("cannot use the inbox's folder")?;
    let ssh = Ssh { program: args.ssh, args: args.ssh_args, host: host.clone() };
    let mut link = Link::new(ssh)?;
    if let Some(remote_port) = args.http {
        let program = std::env::current_exe().context("cannot find this askpane")?;
        let tokens = askpane::store::state_dir(args.store.state_dir.as_deref())
            .context("cannot find the state folder for the host's token")?
            .join("remote");
        let token = remote::host_token(&tokens, &host, args.new_token)
            .with_context(|| format!("cannot keep the token in {}", tokens.display()))?;
        let hooks = HttpHooks::serve(program, link.http_runtime_dir(), token.token.clone())
            .context("cannot listen for HTTP hooks")?;
        say!("{}", http_settings(&host, remote_port, &token));
        link = link.with_http(HttpForward { hooks, remote_port });
    }
    let start = starter(&args.shown, &args.store);
    // SIGINT / SIGTERM end the link cleanly: ssh (by its pid), the relayed connections, the
    // link's socket and its state file.
    let signals = SignalWatch::start().context("cannot catch signals")?;
    let (to_me, inbound) = ui_channel(Waker::noop());
    let route = signals.route(to_me);
    let (stop, stopping) = crossbeam_channel::bounded::<()>(0);
    let watcher = askpane::transport::spawn_named("remote-signal", move || {
        // The one message routed here is a stop signal's; the channel's end (the route
        // dropped, the link ended on its own) ends the watcher too. Dropping `stop` tells the
        // link.
        let _: Result<Inbound, _> = inbound.recv();
        drop(stop);
    })
    .context("cannot start a thread")?;
    log::info!("linking {host}; Ctrl+C ends the link");
    let ran = link.run(place, Arc::new(start), &stopping);
    drop(route);
    drop(signals);
    let _ = watcher.join();
    ran?;
    Ok(exit::OK)
}

/// The HTTP hook's timeout: a day, as `askpane install claude` gives its command hook (a person
/// may take long to answer; Claude Code's own default would give up first).
const HTTP_HOOK_TIMEOUT_SECS: u64 = 86_400;

/// What `--http` prints: the hook for the host's `~/.claude/settings.json` (its `hooks` key),
/// after a line saying whether the settings already there hold (the host's token kept).
fn http_settings(host: &str, remote_port: u16, token: &HostToken) -> String {
    let kept_in = token.path.display();
    let whether = match &token.made {
        TokenMade::Kept => format!(
            "the token is the one kept for {host} ({kept_in}): settings pasted there before still \
             hold"
        ),
        TokenMade::New => format!("a token made for {host}, kept for its next links ({kept_in})"),
        TokenMade::Rotated => format!(
            "a new token for {host} (--new-token): update the settings on {host}, the old token is \
             refused from now on ({kept_in})"
        ),
        TokenMade::Replaced(why) => format!(
            "a new token for {host}: the one kept in {kept_in} could not be used ({why}); update \
             the settings on {host}"
        ),
    };
    let hook = serde_json::json!({
        "type": "http",
        "url": format!("http://127.0.0.1:{remote_port}/hook"),
        "headers": { TOKEN_HEADER: token.token },
        "timeout": HTTP_HOOK_TIMEOUT_SECS,
    });
    let settings = serde_json::json!({ "hooks": { "PreToolUse": [
        { "matcher": "AskUserQuestion", "hooks": [hook] }
    ]}});
    let pretty = serde_json::to_string_pretty(&settings).unwrap_or_default();
    format!(
        "{whether}.\nClaude Code on {host} asks here through this hook (in its \
         ~/.claude/settings.json; the same hook under \"PermissionRequest\", matcher \"*\" or say \
         \"Bash|Edit\", asks tool approvals here too):\n{pretty}"
    )
}

fn list() -> anyhow::Result<u8> {
    let records = remote::list().context("cannot read the links' folder")?;
    if records.is_empty() {
        say!("no link runs (start one with `askpane remote HOST`)");
    }
    for record in records {
        say!("{}", line(&record));
    }
    Ok(exit::OK)
}

/// `devbox  up  since 2026-11-26T15:20:00Z  pid 1234`, or why it is down.
fn line(record: &LinkRecord) -> String {
    let state = match remote::running(record.pid) {
        true => record.state.as_str(),
        false => "gone (its askpane remote ended without cleaning up)",
    };
    let since = std::time::UNIX_EPOCH + std::time::Duration::from_secs(record.since);
    let since = humantime::format_rfc3339_seconds(since);
    let mut line = format!("{}\t{state}\tsince {since}\tpid {}", record.host, record.pid);
    if let Some(why) = &record.why {
        line.push_str(&format!("\t{why}"));
    }
    line
}

/// Where the inbox's folder is inside a container: `XDG_RUNTIME_DIR` there is
/// [`CONTAINER_RUNTIME`], so its `askpane` finds the socket as it would at home, with the same
/// checks (the folder must be the client's own uid's, the socket served by its uid).
const CONTAINER_RUNTIME: &str = "/run/askpane-desk";

/// What `--container` needs to know of this desk.
struct Desk {
    /// The inbox's folder (`inbox.sock` in it).
    folder: PathBuf,
    /// `$XDG_RUNTIME_DIR` here, if set: the snippet names the folder through it.
    runtime: Option<PathBuf>,
    uid: u32,
    gid: u32,
}

/// The lines `askpane remote --container` prints: the bind mount for `docker run`/`podman
/// run`, the `devcontainer.json` snippet (a JSON object of its own lines), and who is let in.
fn container_help(desk: &Desk) -> String {
    let folder = desk.folder.display().to_string();
    let target = format!("{CONTAINER_RUNTIME}/askpane");
    // devcontainer.json is often shared: through `localEnv` it names each person's own folder.
    let source = match &desk.runtime {
        Some(runtime) if desk.folder == runtime.join("askpane") => {
            "${localEnv:XDG_RUNTIME_DIR}/askpane".to_owned()
        }
        _ => folder.clone(),
    };
    let snippet = serde_json::json!({
        "mounts": [{"source": source, "target": target, "type": "bind"}],
        "containerEnv": {"XDG_RUNTIME_DIR": CONTAINER_RUNTIME},
        "updateRemoteUserUID": true,
    });
    let snippet = serde_json::to_string_pretty(&snippet).unwrap_or_default();
    let (uid, gid) = (desk.uid, desk.gid);
    format!(
        "# The inbox's folder on this desk is {folder} (its socket inbox.sock).\n\
         # Mount the folder, not the socket: an inbox that restarts makes its socket anew there.\n\
         # docker run / podman run (rootful: run as your uid; rootless: leave --user out, the\n\
         # container's root is you):\n\
         -v \"{folder}:{target}\" -e XDG_RUNTIME_DIR={CONTAINER_RUNTIME} --user {uid}:{gid}\n\
         # devcontainer.json (the container user's uid is made yours by updateRemoteUserUID):\n\
         {snippet}\n\
         # Inside, askpane hook/ask/mcp find the inbox as here. The inbox admits only uid {uid}\n\
         # as the kernel reports it: a container user mapped to another uid is refused."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn desk(runtime: Option<&str>, folder: &str) -> Desk {
        Desk { folder: folder.into(), runtime: runtime.map(PathBuf::from), uid: 1000, gid: 100 }
    }

    /// The snippet between the first `{` and the last `}`.
    fn snippet(help: &str) -> serde_json::Value {
        let start = help.find('{').expect("a snippet");
        let end = help.rfind('}').expect("its end");
        serde_json::from_str(&help[start..=end]).expect("JSON")
    }

    #[test]
    fn the_container_help_mounts_the_folder_under_the_runtime_dir_it_sets() {
        let help = container_help(&desk(Some("/run/user/1000"), "/run/user/1000/askpane"));
        assert!(
            help.contains(
                "-v \"/run/user/1000/askpane:/run/askpane-desk/askpane\" \
                 -e XDG_RUNTIME_DIR=/run/askpane-desk --user 1000:100"
            ),
            "{help}"
        );
        let snippet = snippet(&help);
        assert_eq!(snippet["mounts"][0]["source"], "${localEnv:XDG_RUNTIME_DIR}/askpane");
        assert_eq!(snippet["mounts"][0]["target"], "/run/askpane-desk/askpane");
        assert_eq!(snippet["containerEnv"]["XDG_RUNTIME_DIR"], "/run/askpane-desk");
    }

    #[test]
    fn without_a_runtime_dir_the_snippet_names_the_folder_itself() {
        let help = container_help(&desk(None, "/tmp/askpane-1000"));
        assert_eq!(snippet(&help)["mounts"][0]["source"], "/tmp/askpane-1000");
        assert!(help.contains("-v \"/tmp/askpane-1000:/run/askpane-desk/askpane\""), "{help}");
    }
}
