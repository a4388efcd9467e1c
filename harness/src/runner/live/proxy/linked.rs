//! A forwarded connection on its worker's link ([`super::link`]): each direction reads chunks
//! of bytes as they come and hands them, stamped with the instant they were read and the delay
//! the link had then, to a writer that waits out the delay, waits while the link is
//! partitioned, and only then lets the [`Connection`] read the chunk and writes what it gives.
//! A cut of the link (or the end of a dropping partition) closes both sides, whatever is still
//! waiting discarded. The broker closing its side during a partition (RabbitMQ's heartbeat) is
//! told to the [`Connection`] at once ([`Connection::broker_closed`]): the broker acted then,
//! though the worker learns of it only when the window ends. A frame the [`Connection`] held
//! back goes on when it is due, as a chunk read then would (after a partition).
//!
//! At most [`HELD_CHUNKS`] chunks wait per direction; past them the reader stops reading, so a
//! long partition backs up into the sockets' buffers and then the sender, as a real network's
//! does, instead of growing without bound.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, watch};

use super::link::{Direction, LinkState};
use super::{lock, until, Connection, Flow, Shared, Wakes};

/// How many chunks (of up to 64 KiB) wait per direction of a connection before its reader
/// stops reading.
pub const HELD_CHUNKS: usize = 64;

/// Forwards one worker connection on its link until either side closes, the [`Connection`]
/// cuts it, or the link is cut.
pub(super) async fn forward_linked(
    client: TcpStream,
    upstream: SocketAddr,
    conn: Box<dyn Connection>,
    mut link: watch::Receiver<LinkState>,
) {
    let born = link.borrow_and_update().cuts;
    let server = tokio::select! {
        s = TcpStream::connect(upstream) => s,
        _ = cut(link.clone(), born) => return,
    };
    let Ok(server) = server else { return };
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    let conn: Shared = Arc::new(Mutex::new(conn));
    let wakes = Arc::new(Wakes::default());
    let (client_rd, client_wr) = client.into_split();
    let (server_rd, server_wr) = server.into_split();
    let up = pass(
        client_rd,
        server_wr,
        Direction::ToBroker,
        (conn.clone(), wakes.clone()),
        (link.clone(), born),
    );
    let down = pass(
        server_rd,
        client_wr,
        Direction::ToWorker,
        (conn.clone(), wakes),
        (link.clone(), born),
    );
    // Either side ending, or a cut, ends both: dropping the halves closes the sockets. The
    // worker's side is polled first, so what it sent during a partition is read as it goes on
    // at the window's end, before the broker's side, gone meanwhile, ends the connection.
    tokio::select! {
        biased;
        _ = cut(link, born) => {}
        _ = up => {}
        _ = down => {}
    }
    lock(&conn).closed();
}

/// Completes when the link is cut after `born` (never, once the run's links are gone).
async fn cut(mut link: watch::Receiver<LinkState>, born: u64) {
    if link.wait_for(|s| s.cuts != born).await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// One direction: done when the writer is (the reader's end, an end of file or an error,
/// lets the writer pass on what it already read, then ends it).
async fn pass(
    mut rd: OwnedReadHalf,
    mut wr: OwnedWriteHalf,
    dir: Direction,
    (conn, wakes): (Shared, Arc<Wakes>),
    (link, born): (watch::Receiver<LinkState>, u64),
) {
    let (tx, mut rx) = mpsc::channel::<(Vec<u8>, Instant, Duration)>(HELD_CHUNKS);
    let reading = link.clone();
    let closer = conn.clone();
    let read = async move {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = match rd.read(&mut buf).await {
                Ok(0) | Err(_) => {
                    // The broker's end, behind a partition: it acts now (RabbitMQ requeues),
                    // while what it sent before waits for the window's end.
                    if dir == Direction::ToWorker && reading.borrow().partitioned {
                        lock(&closer).broker_closed();
                    }
                    return;
                }
                Ok(n) => n,
            };
            let delay = reading.borrow().delay(dir);
            if tx
                .send((buf[..n].to_vec(), Instant::now(), delay))
                .await
                .is_err()
            {
                return;
            }
        }
    };
    let mut link = link;
    let write = async move {
        let mut out = Vec::with_capacity(64 * 1024);
        loop {
            // A chunk read, or a frame the connection held back coming due.
            let due = lock(&conn).next_due(dir);
            let chunk = tokio::select! {
                chunk = rx.recv() => match chunk {
                    Some(chunk) => Some(chunk),
                    // The reader ended: the end goes on as its bytes did.
                    None => break,
                },
                _ = until(due) => None,
                // The other direction gave this one something to pass on: look again.
                _ = wakes.of(dir).notified() => continue,
            };
            if let Some((_, read_at, delay)) = &chunk {
                if !delay.is_zero() {
                    tokio::time::sleep_until((*read_at + *delay).into()).await;
                }
            }
            // Held while partitioned; a cut (a dropping partition's end) ends the connection.
            if let Ok(s) = link.wait_for(|s| !s.partitioned || s.cuts != born).await {
                if s.cuts != born {
                    return;
                }
            }
            out.clear();
            let flow = {
                let mut c = lock(&conn);
                let flow = match (chunk, dir) {
                    (None, _) => c.due(dir, Instant::now(), &mut out),
                    (Some((bytes, ..)), Direction::ToBroker) => c.from_worker(&bytes, &mut out),
                    (Some((bytes, ..)), Direction::ToWorker) => c.from_server(&bytes, &mut out),
                };
                wakes.after(&**c, dir);
                flow
            };
            if wr.write_all(&out).await.is_err() || flow == Flow::Cut {
                return;
            }
        }
        // The end of the stream is held as its bytes are: the other side learns of it when
        // the window closes.
        let _ = link.wait_for(|s| !s.partitioned || s.cuts != born).await;
    };
    tokio::pin!(write);
    tokio::select! {
        _ = &mut write => return,
        _ = read => {}
    }
    write.await;
}
