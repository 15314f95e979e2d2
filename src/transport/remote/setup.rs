//! `askpane remote HOST --setup AGENT` (issue 27 item 2): puts this askpane on the host
//! (`~/.local/bin/askpane`, and the small hook client `askpane-hook` when it is beside this one,
//! after checking the host's system and processor match this binary's,
//! verified by its SHA-256 there) and runs `askpane install AGENT` there; `--undo` runs
//! `askpane uninstall AGENT` there and removes the binary. Everything goes through the person's
//! own ssh, the binary on ssh's standard input: nothing is written to the host's `/tmp`, so a
//! `noexec` `/tmp` does not matter.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use sha2::{Digest, Sha256};

use super::Ssh;

/// Where the binary goes on the host, from its `$HOME` (double-quoted in the host's `sh`).
const REMOTE_DIR: &str = "$HOME/.local/bin";

/// The small hook client's name (issue 30), copied beside askpane when it is beside this one.
const SMALL_HOOK: &str = "askpane-hook";

/// What set-up made on the host that was not there before (`dir .local`, `file
/// .claude/settings.json`, paths from `$HOME`, one a line), so that `--undo` takes away exactly
/// that: a folder or settings file the person had stays.
const RECORD: &str = "$HOME/.local/bin/.askpane-setup";

/// The folder and the settings file `askpane install AGENT` writes on the host, from `$HOME`.
fn agent_files(agent: &str) -> (&'static str, &'static str) {
    match agent {
        "codex" => (".codex", ".codex/hooks.json"),
        _ => (".claude", ".claude/settings.json"),
    }
}

/// What `uname -sm` says on a host this binary runs on.
pub fn this_system() -> Option<&'static str> {
    match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") => Some("Linux x86_64"),
        ("linux", "aarch64") => Some("Linux aarch64"),
        ("macos", "x86_64") => Some("Darwin x86_64"),
        ("macos", "aarch64") => Some("Darwin arm64"),
        _ => None,
    }
}

/// What set-up did, in lines for the person.
pub type Said = Vec<String>;

impl Ssh {
    /// Runs `script` with `sh` on the host, `input` on its standard input; its stdout, or why
    /// it failed (its last stderr line).
    fn run_sh(&self, script: &str, input: Option<&Path>) -> Result<String, String> {
        let mut command = Command::new(&self.program);
        command.args(&self.args).arg(&self.host).arg(format!("sh -c '{script}'"));
        command.stdout(Stdio::piped()).stderr(Stdio::piped());
        command.stdin(if input.is_some() { Stdio::piped() } else { Stdio::null() });
        let mut child =
            command.spawn().map_err(|error| format!("cannot run {:?}: {error}", self.program))?;
        let feeding = match (input, child.stdin.take()) {
            (Some(path), Some(mut stdin)) => {
                let path = path.to_owned();
                let feeder = crate::transport::spawn_named("remote-setup-copy", move || {
                    let mut file = std::fs::File::open(path)?;
                    std::io::copy(&mut file, &mut stdin)?;
                    stdin.flush()
                })
                .map_err(|error| format!("cannot start a thread: {error}"))?;
                Some(feeder)
            }
            _ => None,
        };
        let mut stdout = String::new();
        let mut stderr = String::new();
        if let Some(mut out) = child.stdout.take() {
            let _ = out.read_to_string(&mut stdout);
        }
        if let Some(mut err) = child.stderr.take() {
            let _ = err.read_to_string(&mut stderr);
        }
        let status = child.wait().map_err(|error| format!("cannot wait for ssh: {error}"))?;
        if let Some(feeder) = feeding {
            match feeder.join() {
                Ok(Ok(())) => {}
                Ok(Err(error)) => return Err(format!("cannot send askpane to the host: {error}")),
                Err(_) => return Err("the copy to the host failed".to_owned()),
            }
        }
        if !status.success() {
            let last = stderr.lines().rev().find(|line| !line.trim().is_empty());
            return Err(format!("{status}: {}", last.unwrap_or("no message")));
        }
        Ok(stdout)
    }

    /// Copies `binary` (this askpane) to the host and runs `askpane install AGENT` there.
    pub fn set_up(&self, binary: &Path, agent: &str) -> Result<Said, String> {
        let host = &self.host;
        let mut said = Said::new();
        let theirs = self.run_sh("uname -sm", None)?;
        let theirs = theirs.trim();
        match this_system() {
            Some(ours) if ours == theirs => {}
            ours => {
                return Err(format!(
                    "{host} runs {theirs}, this askpane is built for {}: copy an askpane built \
                     for {theirs} there yourself",
                    ours.unwrap_or(std::env::consts::OS)
                ));
            }
        }
        said.push(self.copy_over(binary, "askpane")?);
        // The small hook client (issue 30) beside this askpane goes too: the hook installed
        // there runs it.
        let small = binary.with_file_name(SMALL_HOOK);
        if small.is_file() {
            said.push(self.copy_over(&small, SMALL_HOOK)?);
        }
        // Noted before the install makes them: the agent's folder and settings file.
        let (folder, settings) = agent_files(agent);
        let installed = self.run_sh(
            &format!(
                "set -e; [ -d \"$HOME/{folder}\" ] || echo \"dir {folder}\" >> \"{RECORD}\"; \
                 [ -e \"$HOME/{settings}\" ] || echo \"file {settings}\" >> \"{RECORD}\"; \
                 \"{REMOTE_DIR}/askpane\" install {agent}; \
                 grep -Fqx \"agent {agent}\" \"{RECORD}\" 2>/dev/null || echo \"agent {agent}\" >> \"{RECORD}\""
            ),
            None,
        )?;
        said.extend(installed.lines().map(|line| format!("{host}: {line}")));
        Ok(said)
    }

    /// Copies the program at `local` to the host as `REMOTE_DIR/name`: written beside its place
    /// and renamed over it (an askpane running there, a hook, keeps its file), the checksum the
    /// host's own reading of what arrived. The folders it makes are noted for `--undo`.
    fn copy_over(&self, local: &Path, name: &str) -> Result<String, String> {
        let host = &self.host;
        let checksum = file_sha256(local)?;
        let partial = format!("{REMOTE_DIR}/.{name}.partial");
        let copied = self.run_sh(
            &format!(
                "set -e; new=\"\"; for d in .local .local/bin; do \
                 [ -d \"$HOME/$d\" ] || new=\"$new $d\"; done; mkdir -p \"{REMOTE_DIR}\"; \
                 for d in $new; do echo \"dir $d\" >> \"{RECORD}\"; done; \
                 f=\"{partial}\"; cat > \"$f\"; chmod 0755 \"$f\"; \
                 if command -v sha256sum >/dev/null; then sha256sum \"$f\"; \
                 else shasum -a 256 \"$f\"; fi"
            ),
            Some(local),
        )?;
        let arrived = copied.split_whitespace().next().unwrap_or_default();
        if arrived != checksum {
            let _ = self.run_sh(&format!("rm -f \"{partial}\""), None);
            return Err(format!(
                "the copy of {name} on {host} does not match (SHA-256 {arrived}, not \
                 {checksum}); removed"
            ));
        }
        let placed = self.run_sh(
            &format!("mv -f \"{partial}\" \"{REMOTE_DIR}/{name}\" && echo \"{REMOTE_DIR}/{name}\""),
            None,
        )?;
        Ok(format!("copied {name} to {host}:{} (SHA-256 {checksum}, checked there)", placed.trim()))
    }

    /// Runs `askpane uninstall AGENT` on the host and removes the binary set-up put there.
    pub fn undo_set_up(&self, agent: &str) -> Result<Said, String> {
        let host = &self.host;
        let mut said = Said::new();
        let removed = self.run_sh(&format!("\"{REMOTE_DIR}/askpane\" uninstall {agent}"), None)?;
        said.extend(removed.lines().map(|line| format!("{host}: {line}")));
        // What set-up made for this agent goes: a settings file it made that the uninstall
        // left empty (`{}`) with askpane's backups of it, else it stays and is named; the
        // folders it made, if empty, deepest first (`sort -r`). The binary and its folders
        // go with the last agent set up: another's hook runs that binary.
        let (folder, settings) = agent_files(agent);
        let gone = self.run_sh(
            &format!(
                "made=\"\"; [ -f \"{RECORD}\" ] && made=$(cat \"{RECORD}\"); \
                 others=$(echo \"$made\" | grep \"^agent \" | grep -Fvx \"agent {agent}\" \
                 | sed \"s/^agent //\" | tr \"\\n\" \" \"); \
                 if [ -n \"$others\" ]; then \
                 mine=$(echo \"$made\" | grep -Fx -e \"file {settings}\" -e \"dir {folder}\"); \
                 echo \"$made\" | grep -Fvx -e \"agent {agent}\" -e \"file {settings}\" \
                 -e \"dir {folder}\" > \"{RECORD}.new\"; mv -f \"{RECORD}.new\" \"{RECORD}\"; \
                 echo \"kept {REMOTE_DIR}/askpane (set up for $others too)\"; \
                 else mine=\"$made\"; \
                 rm -f \"{REMOTE_DIR}/askpane\" \"{REMOTE_DIR}/.askpane.partial\" \"{RECORD}\"; \
                 echo \"removed {REMOTE_DIR}/askpane\"; \
                 if [ -e \"{REMOTE_DIR}/{SMALL_HOOK}\" ]; then \
                 rm -f \"{REMOTE_DIR}/{SMALL_HOOK}\" \"{REMOTE_DIR}/.{SMALL_HOOK}.partial\"; \
                 echo \"removed {REMOTE_DIR}/{SMALL_HOOK}\"; fi; fi; \
                 echo \"$mine\" | grep \"^file \" | while read -r kind path; do f=\"$HOME/$path\"; \
                 if [ -f \"$f\" ] && [ \"$(tr -d \"[:space:]\" < \"$f\")\" = \"{{}}\" ]; then \
                 rm -f \"$f\" \"$f\".askpane-backup-*; echo \"removed $f\"; \
                 elif [ -e \"$f\" ]; then echo \"kept $f (it holds settings of yours)\"; fi; done; \
                 echo \"$mine\" | grep \"^dir \" | sort -r | while read -r kind path; do \
                 rmdir \"$HOME/$path\" 2>/dev/null && echo \"removed $HOME/$path\"; done; true"
            ),
            None,
        )?;
        for line in gone.lines() {
            match line.strip_prefix("removed ") {
                Some(path) => said.push(format!("removed {host}:{path}")),
                None => said.push(format!("{host}: {line}")),
            }
        }
        Ok(said)
    }
}

/// The SHA-256 of the file at `path`, in lower-case hex.
fn file_sha256(path: &Path) -> Result<String, String> {
    let mut file = std::fs::File::open(path)
        .map_err(|error| format!("cannot read {}: {error}", path.display()))?;
    let mut digest = Sha256::new();
    let mut buffer = vec![0; 1 << 16];
    loop {
        let read = file
            .read(&mut buffer)
            .map_err(|error| format!("cannot read {}: {error}", path.display()))?;
        let Some(chunk) = buffer.get(..read).filter(|chunk| !chunk.is_empty()) else { break };
        digest.update(chunk);
    }
    Ok(digest.finalize().iter().map(|byte| format!("{byte:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scripts_have_no_single_quote_to_break_their_quoting() {
        assert!(!REMOTE_DIR.contains('\''));
        assert!(!RECORD.contains('\''));
        for agent in ["claude", "codex"] {
            let (folder, settings) = agent_files(agent);
            assert!(!folder.contains('\'') && !settings.contains('\''));
        }
    }

    #[test]
    fn this_build_names_its_system_as_uname_does() {
        #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
        assert_eq!(this_system(), Some("Linux x86_64"));
    }
}
