//! Issue 27: what a connection of the inbox may do, by where it comes from. A connection of this
//! machine may do everything; one that `askpane remote HOST` relays from an SSH host (it said
//! `via_link` first) may ask and take back its own requests and list that host's, nothing else:
//! anyone who can act as the user on the remote (root there included) reaches the inbox only
//! through this. Pure: the inbox asks [`Scope::admit`] before it acts on each message.

use super::inbox::{ClientMessage, Listed};

/// The longest host name a link may give (DNS names are at most 253 bytes; an ssh alias is
/// usually far shorter).
pub const MAX_HOST_BYTES: usize = 253;

/// Who a connection acts for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Scope {
    /// A client of this machine (the inbox's peer check admitted it).
    #[default]
    Local,
    /// A client on SSH host `host`, relayed by its link.
    Link { host: String },
}

/// Why a message was refused on this connection; said back in an `error`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    #[error(
        "this connection comes through the link of {host}: it cannot name another host (a client \
         on the remote sent `via_link`)"
    )]
    LinkedAlready { host: String },
    #[error("not a host name a link can give: {0}")]
    BadHost(String),
    #[error(
        "this connection comes through the link of {host}: `{verb}` is for this machine's \
         clients only (a remote client may ask, withdraw its own requests and list its host's)"
    )]
    NotThroughALink { host: String, verb: &'static str },
}

impl Scope {
    /// Checks `message` against this connection's scope; `via_link` on a local connection
    /// scopes it to its host from then on.
    pub fn admit(&mut self, message: &ClientMessage) -> Result<(), Refused> {
        let host = match self {
            Scope::Local => {
                if let ClientMessage::ViaLink { host } = message {
                    *self = Scope::Link { host: valid_host(host)?.to_owned() };
                }
                return Ok(());
            }
            Scope::Link { host } => host.clone(),
        };
        let verb = match message {
            // Their own requests only: the inbox keys requests by connection.
            ClientMessage::Hello { .. }
            | ClientMessage::Ask(_)
            | ClientMessage::Withdraw { .. }
            // Filtered by [`Scope::sees`].
            | ClientMessage::List { .. }
            // A remote agent's hosted session and its permissions are this connection's own,
            // and shown with the host.
            | ClientMessage::Host { .. }
            | ClientMessage::SessionEvent { .. }
            | ClientMessage::Permission { .. }
            | ClientMessage::WithdrawPermission { .. }
            | ClientMessage::PermissionTimedOut { .. }
            // A remote terminal that waits: its notice is stamped with the link's host.
            | ClientMessage::Notice { .. } => return Ok(()),
            ClientMessage::ViaLink { .. } => return Err(Refused::LinkedAlready { host }),
            // Every host's events, the desk's window, the page's link (whose token lets anyone
            // answer), the inbox's end: the desk's, never a remote's.
            ClientMessage::Subscribe { .. } => "subscribe",
            ClientMessage::Show => "show",
            ClientMessage::NewLink => "new_link",
            ClientMessage::Quit => "quit",
            // Issue 31: a remote host never answers the desk's asks.
            ClientMessage::Answer { .. } => "answer",
            ClientMessage::Decline { .. } => "decline",
            ClientMessage::Clarify { .. } => "clarify",
            ClientMessage::Decide { .. } => "decide",
        };
        Err(Refused::NotThroughALink { host, verb })
    }

    /// Whether this connection's `list` shows `listed`: a link's, only its own host's.
    pub fn sees(&self, listed: &Listed) -> bool {
        match self {
            Scope::Local => true,
            Scope::Link { host } => listed.host.as_deref() == Some(host.as_str()),
        }
    }

    /// The host this connection's requests come from.
    pub fn host(&self) -> Option<&str> {
        match self {
            Scope::Local => None,
            Scope::Link { host } => Some(host),
        }
    }
}

/// A host name as a link gives it (the name the person typed for ssh: an alias, a DNS name, an
/// address, `user@host`): printable, no spaces, not too long.
pub fn valid_host(host: &str) -> Result<&str, Refused> {
    let fits = !host.is_empty()
        && host.len() <= MAX_HOST_BYTES
        && !host.starts_with('-')
        && host.chars().all(|c| c.is_ascii_alphanumeric() || "._-@:[]%".contains(c));
    match fits {
        true => Ok(host),
        false => Err(Refused::BadHost(format!("{host:?}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed(host: Option<&str>) -> Listed {
        Listed {
            connection: 1,
            id: "1".to_owned(),
            from: "hook".to_owned(),
            title: "Colour".to_owned(),
            tool_use_id: None,
            pid: None,
            host: host.map(str::to_owned),
            agent: None,
            project: None,
            asked_at: None,
            deadline_at: None,
            kind: None,
            content: None,
        }
    }

    fn line(json: &str) -> ClientMessage {
        serde_json::from_str(json).expect("a client message")
    }

    #[test]
    fn a_local_connection_may_do_everything_and_sees_every_host() {
        let mut scope = Scope::Local;
        for json in [
            r#"{"type":"list"}"#,
            r#"{"type":"subscribe"}"#,
            r#"{"type":"quit"}"#,
            r#"{"type":"new_link"}"#,
            r#"{"type":"show"}"#,
        ] {
            assert_eq!(scope.admit(&line(json)), Ok(()), "{json}");
        }
        assert!(scope.sees(&listed(None)));
        assert!(scope.sees(&listed(Some("devbox"))));
        assert_eq!(scope.host(), None);
    }

    #[test]
    fn via_link_scopes_the_connection_to_its_host_once_and_for_all() {
        let mut scope = Scope::Local;
        assert_eq!(scope.admit(&line(r#"{"type":"via_link","host":"devbox"}"#)), Ok(()));
        assert_eq!(scope.host(), Some("devbox"));
        // A remote client's own `via_link` (it came through the link) is refused, and changes
        // nothing.
        let refused = scope.admit(&line(r#"{"type":"via_link","host":"laptop"}"#));
        assert_eq!(refused, Err(Refused::LinkedAlready { host: "devbox".to_owned() }));
        assert_eq!(scope.host(), Some("devbox"));
    }

    #[test]
    fn a_link_sees_only_its_host_and_cannot_act_on_the_desk() {
        let mut scope = Scope::Link { host: "devbox".to_owned() };
        assert!(scope.sees(&listed(Some("devbox"))));
        assert!(!scope.sees(&listed(None)), "this machine's requests");
        assert!(!scope.sees(&listed(Some("devbox2"))), "another host's");
        for (json, verb) in [
            (r#"{"type":"subscribe"}"#, "subscribe"),
            (r#"{"type":"quit"}"#, "quit"),
            (r#"{"type":"new_link"}"#, "new_link"),
            (r#"{"type":"show"}"#, "show"),
        ] {
            let refused = scope.admit(&line(json));
            assert_eq!(
                refused,
                Err(Refused::NotThroughALink { host: "devbox".to_owned(), verb }),
                "{json}"
            );
        }
        for json in [
            r#"{"type":"list"}"#,
            r#"{"type":"withdraw","id":"1"}"#,
            r#"{"type":"hello","version":1}"#,
            r#"{"type":"ask","id":"1","mode":"hook","message":{}}"#,
        ] {
            assert_eq!(scope.admit(&line(json)), Ok(()), "{json}");
        }
    }

    #[test]
    fn hostile_host_names_are_refused() {
        for host in ["", "-oProxyCommand=x", "dev box", "dev\nbox", "dév", &"a".repeat(254)] {
            let mut scope = Scope::Local;
            let message = ClientMessage::ViaLink { host: host.to_owned() };
            assert!(matches!(scope.admit(&message), Err(Refused::BadHost(_))), "{host:?}");
            assert_eq!(scope, Scope::Local);
        }
        for host in ["devbox", "me@10.0.0.7", "[::1]", "build-01.example.org"] {
            assert_eq!(valid_host(host), Ok(host));
        }
    }
}
