//! A link coming up on this host (issue 27, stop 38): `askpane remote`'s first ssh of each try
//! writes `link-ID.coming` in the inbox's folder here before it removes the socket an ended link
//! left, and the forward's session removes it once the forward holds. A client that finds no
//! inbox while such a note is fresh waits (bounded) for the forward instead of answering here:
//! between those two moments the socket is stale or missing although the desk is seconds away.

use std::path::Path;
use std::time::{Duration, SystemTime};

use super::Place;

/// The note's name is `link-ID.coming`; `remote::ssh`'s snippets write and remove it.
pub const COMING_PREFIX: &str = "link-";
pub const COMING_SUFFIX: &str = ".coming";

/// How long a note is believed after it was written, and so the longest a client waits: a
/// forward holds within a second or two of its login; a note older than this is a try that
/// failed (its link tries again later, writing a new one) or a link stopped while it came up.
pub const COMING_WAIT: Duration = Duration::from_secs(15);

/// How long ago the newest fresh note in `dir` was written, if one is younger than
/// [`COMING_WAIT`].
fn newest_coming(dir: &Path) -> Option<Duration> {
    let now = SystemTime::now();
    std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .filter(|entry| {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            name.starts_with(COMING_PREFIX) && name.ends_with(COMING_SUFFIX)
        })
        .filter_map(|entry| entry.metadata().ok()?.modified().ok())
        // A note stamped a moment ahead (a clock stepped back) counts as just written.
        .map(|written| now.duration_since(written).unwrap_or_default())
        .filter(|age| *age < COMING_WAIT)
        .min()
}

/// When a link is coming up here (a fresh note): how long to wait for its forward at most, the
/// rest of the newest note's [`COMING_WAIT`]. `None` when no link is coming up (the caller goes on
/// as with no inbox). The caller waits as for a link that went down (`deliver::wait_for_link`),
/// so a signal, a cancel or the agent's end are heard meanwhile.
pub fn coming_link_wait(place: &Place) -> Option<Duration> {
    let dir = place.socket().parent()?.to_owned();
    let age = newest_coming(&dir)?;
    Some(COMING_WAIT.saturating_sub(age))
}
