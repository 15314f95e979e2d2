//! Who is on the other end of the inbox's Unix socket: the platform seam for peer credentials
//! (Linux `SO_PEERCRED`; macOS and the BSDs `getpeereid`, which gives no pid).

use std::io;
use std::os::unix::net::UnixStream;

/// The user (and, where the platform says, the process) that connected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Peer {
    pub uid: u32,
    pub pid: Option<u32>,
}

/// The peer of a connected socket, as the kernel recorded it when it connected.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub fn peer_of(stream: &UnixStream) -> io::Result<Peer> {
    let credentials = rustix::net::sockopt::socket_peercred(stream)?;
    Ok(Peer {
        uid: credentials.uid.as_raw(),
        pid: u32::try_from(credentials.pid.as_raw_nonzero().get()).ok(),
    })
}

/// The peer of a connected socket, as the kernel recorded it when it connected.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
pub fn peer_of(stream: &UnixStream) -> io::Result<Peer> {
    let (uid, _group) = nix::unistd::getpeereid(stream).map_err(io::Error::from)?;
    Ok(Peer { uid: uid.as_raw(), pid: None })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_socket_pair_is_this_user_and_this_process() {
        let (ours, _theirs) = UnixStream::pair().expect("socket pair");
        let peer = peer_of(&ours).expect("peer");
        assert_eq!(peer.uid, rustix::process::getuid().as_raw());
        #[cfg(target_os = "linux")]
        assert_eq!(peer.pid, Some(std::process::id()));
    }
}
