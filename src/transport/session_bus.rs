//! The user's own session bus (Linux): a connection to it, refused when the bus is another
//! user's, for the notifications and the tray icon alike.
//!
//! `DBUS_SESSION_BUS_ADDRESS` is inherited, and a bus set up to admit everyone
//! (`<allow user="*"/>`) lets any user connect. Whoever runs that bus would then read what waits
//! (a notification's question text, the tray's tooltip) and could drive the inbox (the tray's
//! Pause and Quit, a notification's Open): nobody but the user may. So the bus daemon is asked
//! whose it is (`GetConnectionUnixUser` of `org.freedesktop.DBus`) before anything is shown on it.

use std::fmt;
use std::time::Duration;

/// Why there is no connection to the user's own session bus.
#[derive(Debug)]
pub enum NoOwnBus {
    /// No session bus, or it did not answer.
    Unreachable(zbus::Error),
    /// The bus's daemon runs as this other uid.
    AnotherUsers(u32),
}

impl From<zbus::Error> for NoOwnBus {
    fn from(error: zbus::Error) -> NoOwnBus {
        NoOwnBus::Unreachable(error)
    }
}

impl fmt::Display for NoOwnBus {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NoOwnBus::Unreachable(error) => write!(formatter, "{error}"),
            NoOwnBus::AnotherUsers(uid) => write!(
                formatter,
                "the session bus (DBUS_SESSION_BUS_ADDRESS) belongs to another user (uid {uid})"
            ),
        }
    }
}

impl std::error::Error for NoOwnBus {}

/// Connects to the session bus, every call on it bounded by `timeout`, and returns the connection
/// only once the bus's daemon is known to run as this process's user.
pub async fn connect_own(timeout: Duration) -> Result<zbus::Connection, NoOwnBus> {
    let connection = zbus::connection::Builder::session()?.method_timeout(timeout).build().await?;
    let bus = zbus::fdo::DBusProxy::new(&connection).await?;
    let daemon =
        zbus::names::BusName::try_from("org.freedesktop.DBus").map_err(zbus::Error::from)?;
    let owner = bus.get_connection_unix_user(daemon).await.map_err(zbus::Error::from)?;
    if owner != rustix::process::getuid().as_raw() {
        return Err(NoOwnBus::AnotherUsers(owner));
    }
    Ok(connection)
}
