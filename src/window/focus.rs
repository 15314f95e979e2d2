//! What askpane tells the window manager about a window that appears on its own: it must not
//! take the keyboard from the program the user is typing in, nor cover it. Only attention is
//! asked for.
//!
//! X11 is the one window system where this needs saying: a window manager gives new windows the
//! focus unless the window's `_NET_WM_USER_TIME` is 0 when it is mapped (EWMH: "the window should
//! not be activated"). eframe maps the window after its first frame, so setting it in the first
//! frame is in time. Wayland compositors never hand focus to a window that did not ask.

/// Asks the window manager not to focus `window` when it is mapped. Best effort: the key grace
/// in [`crate::app`] still guards keys if the window manager ignores the hint.
#[cfg(target_os = "linux")]
pub fn never_take_focus_on_arrival(window: &impl raw_window_handle::HasWindowHandle) {
    if let Some(id) = x11_id(window)
        && let Err(error) = set_user_time_zero(id)
    {
        eprintln!("askpane: could not ask the window manager to leave the keyboard alone: {error}");
    }
}

#[cfg(not(target_os = "linux"))]
pub fn never_take_focus_on_arrival<W>(_window: &W) {}

/// Sets `_NET_WM_USER_TIME` = 0 on `window` over a connection of its own (the property is the
/// window's, whoever sets it).
#[cfg(target_os = "linux")]
fn set_user_time_zero(window: u32) -> Result<(), Box<dyn std::error::Error>> {
    use x11rb::connection::Connection as _;
    use x11rb::protocol::xproto::{AtomEnum, ConnectionExt as _, PropMode};
    use x11rb::wrapper::ConnectionExt as _;

    let (connection, _screen) = x11rb::connect(None)?;
    let atom = connection.intern_atom(false, b"_NET_WM_USER_TIME")?.reply()?.atom;
    connection.change_property32(PropMode::REPLACE, window, atom, AtomEnum::CARDINAL, &[0])?;
    // A round trip, so the property is set before this connection closes.
    connection.get_input_focus()?.reply()?;
    connection.flush()?;
    Ok(())
}

/// How long after it is shown a window waits for the window manager to take it before giving up
/// on moving it below the active window.
#[cfg(target_os = "linux")]
const QUIET_ARRIVAL_WITHIN: std::time::Duration = std::time::Duration::from_millis(1500);

/// Keeps a window that appears on its own (a question coming to the inbox while the user works
/// elsewhere) from covering the window the user works in (issue 24: openbox put the inbox's
/// window above the user's editor, and a click meant for the editor answered a question). Once
/// the window manager manages the shown window, and another window is active, the window is
/// stacked just below that one: EWMH's `_NET_RESTACK_WINDOW`, sent as a pager would (source 2),
/// which window managers honour. The window still asks for attention (its task bar entry, the
/// notification); the user brings it up when they choose. Best effort: a window manager without
/// EWMH leaves it where it put it.
#[cfg(target_os = "linux")]
#[derive(Default)]
pub struct QuietArrival {
    connection: Option<x11rb::rust_connection::RustConnection>,
    /// The connection failed once: not tried again.
    unavailable: bool,
    was_visible: bool,
    /// Since when the window has been shown and not yet where it belongs.
    pending_since: Option<std::time::Instant>,
    /// The user asked for the window: it goes on top with the keyboard instead.
    asked_for: bool,
    /// The next showing is the user's own (they started the window): left where the window
    /// manager puts it.
    spare_next: bool,
}

#[cfg(target_os = "linux")]
impl QuietArrival {
    /// `first_on_top`: the user started the window, so its first showing is left to the window
    /// manager (on top, as any window they open).
    pub fn new(first_on_top: bool) -> Self {
        QuietArrival { spare_next: first_on_top, ..QuietArrival::default() }
    }

    /// Call once a frame with the window's X id, whether it is shown, and whether the user just
    /// asked for it (`askpane inbox` run again, a notification's "Open"). True while there is
    /// still something to do: call again soon. (Whether the window has the keyboard is read off
    /// the server: winit's own idea of it goes stale while the window is hidden.)
    pub fn after_frame(&mut self, window: Option<u32>, visible: bool, asked_for: bool) -> bool {
        let now = std::time::Instant::now();
        if asked_for {
            self.pending_since = Some(now);
            self.asked_for = true;
        } else if visible
            && !self.was_visible
            && !std::mem::take(&mut self.spare_next)
            && self.pending_since.is_none()
        {
            self.pending_since = Some(now);
            self.asked_for = false;
        }
        self.was_visible = visible;
        let Some(since) = self.pending_since else { return false };
        if now.duration_since(since) > QUIET_ARRIVAL_WITHIN {
            self.pending_since = None;
            return false;
        }
        // Not shown yet (the server has not mapped it): look again next frame.
        let (Some(window), true) = (window, visible) else { return true };
        let placed = match self.asked_for {
            true => self.activate(window),
            false => self.keep_below_the_active_window(window),
        };
        match placed {
            Ok(true) => {
                self.pending_since = None;
                false
            }
            Ok(false) => true,
            Err(error) => {
                eprintln!("askpane: could not keep the window below the one you work in: {error}");
                self.pending_since = None;
                self.unavailable = true;
                false
            }
        }
    }

    /// Asks the window manager to activate `window` (raise it, give it the keyboard) as a pager
    /// would: the user asked for it. True once it is the active window.
    fn activate(&mut self, window: u32) -> Result<bool, Box<dyn std::error::Error>> {
        let Some(x) = self.x()? else { return Ok(true) };
        if x.active()? == window {
            return Ok(true);
        }
        // Source 2 (a pager: the user's own request), no timestamp, no window of ours active.
        x.ask_window_manager(window, b"_NET_ACTIVE_WINDOW", [2, 0, 0, 0, 0])?;
        Ok(false)
    }

    /// True once there is nothing left to do: the window is below the active one, or there is no
    /// other active window. False while the window manager has not taken the window yet.
    fn keep_below_the_active_window(
        &mut self,
        window: u32,
    ) -> Result<bool, Box<dyn std::error::Error>> {
        let Some(x) = self.x()? else { return Ok(true) };
        let active = x.active()?;
        if active == 0 || active == window {
            return Ok(true);
        }
        // Bottom to top; the window manager lists a window once it manages it.
        let stacking = x.root_windows(b"_NET_CLIENT_LIST_STACKING")?;
        let (Some(ours), Some(theirs)) = (
            stacking.iter().position(|&listed| listed == window),
            stacking.iter().position(|&listed| listed == active),
        ) else {
            return Ok(false);
        };
        if ours < theirs {
            return Ok(true);
        }
        // Source 2 (a pager: the user's own tools), sibling: the active window, detail: Below.
        x.ask_window_manager(window, b"_NET_RESTACK_WINDOW", [2, active, 1, 0, 0])?;
        // Looked at again next frame: done once the window manager has done it.
        Ok(false)
    }

    /// The connection to the X server, made the first time; `None` once one could not be made.
    fn x(&mut self) -> Result<Option<X<'_>>, Box<dyn std::error::Error>> {
        if self.unavailable {
            return Ok(None);
        }
        if self.connection.is_none() {
            self.connection = Some(x11rb::connect(None)?.0);
        }
        let Some(connection) = &self.connection else { return Ok(None) };
        use x11rb::connection::Connection as _;
        let root = connection.setup().roots.first().ok_or("no screen")?.root;
        Ok(Some(X { connection, root }))
    }
}

/// An X connection and its root window: the two EWMH requests [`QuietArrival`] makes.
#[cfg(target_os = "linux")]
struct X<'a> {
    connection: &'a x11rb::rust_connection::RustConnection,
    root: u32,
}

#[cfg(target_os = "linux")]
impl X<'_> {
    fn atom(&self, name: &[u8]) -> Result<u32, Box<dyn std::error::Error>> {
        use x11rb::protocol::xproto::ConnectionExt as _;
        Ok(self.connection.intern_atom(false, name)?.reply()?.atom)
    }

    /// The windows a root window property lists (`_NET_CLIENT_LIST_STACKING`, …).
    fn root_windows(&self, property: &[u8]) -> Result<Vec<u32>, Box<dyn std::error::Error>> {
        use x11rb::protocol::xproto::{AtomEnum, ConnectionExt as _};
        let property = self.atom(property)?;
        let reply = self
            .connection
            .get_property(false, self.root, property, AtomEnum::WINDOW, 0, 4096)?
            .reply()?;
        Ok(reply.value32().map(Iterator::collect).unwrap_or_default())
    }

    /// The active window (`_NET_ACTIVE_WINDOW`), 0 for none.
    fn active(&self) -> Result<u32, Box<dyn std::error::Error>> {
        Ok(self.root_windows(b"_NET_ACTIVE_WINDOW")?.first().copied().unwrap_or(0))
    }

    /// Sends the window manager an EWMH request about `window` (a client message to the root).
    fn ask_window_manager(
        &self,
        window: u32,
        request: &[u8],
        data: [u32; 5],
    ) -> Result<(), Box<dyn std::error::Error>> {
        use x11rb::connection::Connection as _;
        use x11rb::protocol::xproto::{ClientMessageEvent, ConnectionExt as _, EventMask};
        let message = ClientMessageEvent::new(32, window, self.atom(request)?, data);
        let mask = EventMask::SUBSTRUCTURE_REDIRECT | EventMask::SUBSTRUCTURE_NOTIFY;
        self.connection.send_event(false, self.root, mask, message)?;
        self.connection.flush()?;
        Ok(())
    }
}

/// Where there is no X11: windows never cover another on their own (Wayland), or the platform's
/// own rules apply.
#[cfg(not(target_os = "linux"))]
#[derive(Default)]
pub struct QuietArrival;

#[cfg(not(target_os = "linux"))]
impl QuietArrival {
    pub fn new(_first_on_top: bool) -> Self {
        QuietArrival
    }

    pub fn after_frame(&mut self, _window: Option<u32>, _visible: bool, _asked_for: bool) -> bool {
        false
    }
}

/// The X11 id of `window`, when it is an X11 window.
#[cfg(target_os = "linux")]
pub fn x11_id(window: &impl raw_window_handle::HasWindowHandle) -> Option<u32> {
    use raw_window_handle::RawWindowHandle;
    match window.window_handle().ok()?.as_raw() {
        RawWindowHandle::Xlib(xlib) => u32::try_from(xlib.window).ok(),
        RawWindowHandle::Xcb(xcb) => Some(xcb.window.get()),
        _ => None,
    }
}

#[cfg(not(target_os = "linux"))]
pub fn x11_id<W>(_window: &W) -> Option<u32> {
    None
}
