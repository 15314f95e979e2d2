//! Issue 31: `askpane-matrix`, the bridge from the inbox to an encrypted Matrix room, as a real
//! process. The binaries are the workspace members `askpane-matrix` and `askpane-matrix-peer`
//! (a second Matrix client the tests drive over JSON lines, so this test binary carries no
//! Matrix SDK); both are found beside `askpane` in the target directory.

mod answerers;
mod claude;
mod end_to_end;
mod live;
mod peer;

use std::path::PathBuf;
use std::process::Command;

use crate::support::{private_state_dir, run_bounded, scratch_dir};

/// A workspace member's binary beside askpane's (`cargo build -p askpane-matrix -p
/// askpane-matrix-peer`, or scripts/test's `cargo build --workspace --all-targets`, builds it;
/// `cargo test --workspace` builds only its unit tests).
///
/// `ASKPANE_MATRIX_TEST_BIN_DIR` names another folder for them: the figures' run with optimised
/// builds (`cargo build --profile bench-fast -p askpane-matrix -p askpane-matrix-peer`, then
/// `ASKPANE_MATRIX_TEST_BIN_DIR=target/bench-fast`), as an unoptimised SDK's own work is most of
/// a debug build's time.
pub(crate) fn member_binary(name: &str) -> PathBuf {
    let folder = match std::env::var_os("ASKPANE_MATRIX_TEST_BIN_DIR") {
        Some(folder) => PathBuf::from(folder),
        None => PathBuf::from(env!("CARGO_BIN_EXE_askpane")).with_file_name(""),
    };
    let binary = folder.join(name);
    assert!(
        binary.exists(),
        "{} is not built: run `cargo build -p askpane-matrix -p askpane-matrix-peer` (scripts/test builds the workspace)",
        binary.display()
    );
    binary
}

/// `askpane-matrix <args>` with a state directory of its own and no inherited secret.
fn bridge(args: &[&str], state: &std::path::Path) -> Command {
    let mut command = Command::new(member_binary("askpane-matrix"));
    command
        .args(args)
        .env("ASKPANE_STATE_DIR", state)
        .env("XDG_RUNTIME_DIR", scratch_dir("matrix-run"))
        .env_remove("ASKPANE_MATRIX_PASSWORD")
        .env_remove("ASKPANE_MATRIX_TOKEN");
    command
}

#[test]
fn login_takes_no_secret_from_the_command_line_and_says_where_to_put_it() {
    let state = private_state_dir();
    let login = ["login", "--homeserver", "http://127.0.0.1:9", "--user", "@bot:localhost"];
    let finished = run_bounded(&mut bridge(&login, &state), None);
    assert!(!finished.status.success());
    assert!(
        finished.stderr.contains("no secret: give --password-file FILE or --token-file FILE"),
        "{}",
        finished.stderr
    );
    let mut with_password = login.to_vec();
    with_password.extend(["--password", "hunter2"]);
    let finished = run_bounded(&mut bridge(&with_password, &state), None);
    assert!(!finished.status.success());
    assert!(finished.stderr.contains("unexpected argument '--password'"), "{}", finished.stderr);
}

#[test]
fn an_unreachable_homeserver_and_a_missing_session_are_said_plainly() {
    let state = private_state_dir();
    let login = ["login", "--homeserver", "http://127.0.0.1:9", "--user", "@bot:localhost"];
    let finished =
        run_bounded(bridge(&login, &state).env("ASKPANE_MATRIX_PASSWORD", "secret"), None);
    assert!(!finished.status.success());
    assert!(finished.stderr.contains("cannot reach http://127.0.0.1:9"), "{}", finished.stderr);
    assert!(!state.join("matrix/session.json").exists(), "no session is kept after a failed login");
    for command in [&["run"][..], &["logout"], &["room", "create", "--invite", "@alice:localhost"]]
    {
        let finished = run_bounded(&mut bridge(command, &state), None);
        assert!(!finished.status.success(), "{command:?}");
        assert!(
            finished.stderr.contains("not logged in: run `askpane-matrix login` first")
                || finished.stderr.contains("no room configured"),
            "{command:?}: {}",
            finished.stderr
        );
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(state.join("matrix"))
            .expect("the bridge's directory")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o700, "the bridge's directory is the user's alone");
    }
}
