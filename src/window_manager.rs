//! What askpane tells the window manager about a window that appears on its own: it must not
//! take the keyboard from the program the user is typing in. Only attention is asked for.
//!
//! X11 is the one window system where this needs saying: a window manager gives new windows the
//! focus unless the window's `_NET_WM_USER_TIME` is 0 when it is mapped (EWMH: "the window should
//! not be activated"). eframe maps the window after its first frame, so setting it in the first
//! frame is in time. Wayland compositors never hand focus to a window that did not ask.

/// Asks the window manager not to focus `window` when it is mapped. Best effort: the key grace
/// in [`crate::app`] still guards keys if the window manager ignores the hint.
#[cfg(target_os = "linux")]
pub fn never_take_focus_on_arrival(window: &impl raw_window_handle::HasWindowHandle) {
    use raw_window_handle::RawWindowHandle;
    let Ok(handle) = window.window_handle() else { return };
    let id = match handle.as_raw() {
        RawWindowHandle::Xlib(xlib) => u32::try_from(xlib.window).ok(),
        RawWindowHandle::Xcb(xcb) => Some(xcb.window.get()),
        _ => None,
    };
    if let Some(id) = id
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
