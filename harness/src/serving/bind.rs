//! The listening socket of a server.

use std::net::SocketAddr;

use tokio::net::{TcpListener, TcpSocket};

/// A listener on `addr` with a deep accept queue: a fleet of workers (or a load test) may open
/// thousands of connections at once, and a shallow queue (the standard library's 128) turns
/// that burst into connect timeouts: a connection whose SYN finds the queue full is retried by
/// the client's kernel only a second later.
pub fn listen(addr: SocketAddr) -> std::io::Result<TcpListener> {
    let socket = if addr.is_ipv4() {
        TcpSocket::new_v4()?
    } else {
        TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(ACCEPT_BACKLOG)
}

/// Requested accept-queue depth (the kernel caps it at net.core.somaxconn).
pub const ACCEPT_BACKLOG: u32 = 16_384;
