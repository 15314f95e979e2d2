//! A link coming up on this host (issue 27, stop 38): `askpane remote`'s first ssh of each try
//! writes `link-ID.coming` in the inbox's folder here before it removes the socket an ended link
//! left, and the forward's session removes it once the forward holds. A client that finds no
//! inbox while such a note is fresh waits (bounded) for the forward instead of answering here:
//! between those two moments the socket is stale or missing although the desk is seconds away.

use std::path::Path;
use std::time::{Duration, Instant, SystemTime};

use super::{ConnectError, InboxClient, Place};

/// The note's name is `link-ID.coming`; `remote::ssh`'s snippets write and remove it.
pub const COMING_PREFIX: &str = "link-";
pub const COMING_SUFFIX: &str = ".coming";

/// How long a note is believed after it was written, and so the longest a client waits: a
/// forward holds within a second or two of its login; a note older than this is a try that
/// failed (its link tries again later, writing a new one) or a link stopped while it came up.
pub const COMING_WAIT: Duration = Duration::from_secs(15);

/// How often the socket is tried again meanwhile.
const COMING_POLL: Duration = Duration::from_millis(50);

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

/// When a link is coming up here (a fresh note): tries the socket until its forward answers, the
/// note goes stale, or [`COMING_WAIT`] has passed; what the last try gave. `None` when no link is
/// coming up (the caller goes on as with no inbox).
pub fn wait_for_a_coming_link(place: &Place) -> Option<Result<InboxClient, ConnectError>> {
    let dir = place.socket().parent()?.to_owned();
    newest_coming(&dir)?;
    log::info!("a link to your desk is coming up on this host; waiting for it");
    let deadline = Instant::now() + COMING_WAIT;
    loop {
        std::thread::sleep(COMING_POLL);
        let tried = InboxClient::connect(place);
        let again = matches!(tried, Err(ConnectError::NotRunning(_)))
            && Instant::now() < deadline
            && newest_coming(&dir).is_some();
        if !again {
            return Some(tried);
        }
    }
}
