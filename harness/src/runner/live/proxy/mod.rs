//! A protocol proxy between each worker and a real broker: every worker connects to its own
//! port on 127.0.0.1, and each of its connections is forwarded to the broker while a
//! [`Connection`] of the broker's protocol reads the bytes both ways (deliveries, acks and the
//! broker's answers to them) and reports them to the run's state.
//!
//! The bytes from the broker pass through [`Connection::from_server`] before they are written
//! to the worker, so a delivery a `received` kill is decided for is never forwarded: the
//! connection is cut ([`Flow::Cut`]) and the worker, being killed, never sees it. Both sides of a
//! connection are closed when either side ends, as the broker would see a consumer's death.
//!
//! A run with `connection` faults hands the proxy the workers' [`Links`]: each connection's
//! bytes then go through its worker's link ([`link`]: cut, delayed, held by a partition) before
//! the [`Connection`] reads them, so what the proxy reports is what reached the other side, when
//! it did. Without them the bytes take the direct path they always took.
//!
//! A [`Connection`] may hold a frame back (a `message` fault delaying an ack or a delivery): it
//! names the instant its next held frame is due ([`Connection::next_due`]), and the direction's
//! writer asks for it then ([`Connection::due`]), between two chunks it passes on, so a held
//! frame goes on whole, between whole frames.

pub mod link;
mod linked;
#[cfg(test)]
mod linked_tests;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;

use crate::record::WorkerId;
use link::{Direction, Links};
use linked::forward_linked;

/// What to do after the bytes just read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Write what was produced and go on.
    Go,
    /// Write what was produced, then close both sides (the worker is being killed).
    Cut,
}

/// One worker connection's reader of the broker's protocol. Both directions share it (under a
/// lock), so an answer of the broker can be matched with the worker's request.
// `from_worker` / `from_server` name where the bytes come from, not a conversion.
// `from_worker` / `from_server` name the direction of the bytes, not a conversion.
#[allow(clippy::wrong_self_convention)]
pub trait Connection: Send + 'static {
    /// Bytes the worker sent: append to `forward` what goes on to the broker (normally all).
    fn from_worker(&mut self, bytes: &[u8], forward: &mut Vec<u8>) -> Flow;
    /// Bytes the broker sent: append to `forward` what goes on to the worker. A frame that is
    /// not complete yet is kept until the rest arrives.
    fn from_server(&mut self, bytes: &[u8], forward: &mut Vec<u8>) -> Flow;
    /// The connection ended, by either side.
    fn closed(&mut self) {}
    /// When the next frame it holds back in direction `dir` is due (none held: `None`).
    fn next_due(&self, _dir: Direction) -> Option<Instant> {
        None
    }
    /// The frames held back in direction `dir` that are due at `now`: appended to `forward`
    /// ([`Flow::Cut`]: the worker is being killed as one reaches it).
    fn due(&mut self, _dir: Direction, _now: Instant, _forward: &mut Vec<u8>) -> Flow {
        Flow::Go
    }
}

/// Completes at `at` (never for `None`).
async fn until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at.into()).await,
        None => std::future::pending().await,
    }
}

/// Makes the [`Connection`] of each new worker connection.
pub trait Protocol: Send + Sync + 'static {
    fn connection(&self, worker: WorkerId) -> Box<dyn Connection>;
}

/// A protocol the proxy forwards without reading it: for a broker that sees its workers itself
/// (the embedded SQS endpoint), whose proxy is there only to put each worker on its link.
pub struct Unread;

impl Protocol for Unread {
    fn connection(&self, _worker: WorkerId) -> Box<dyn Connection> {
        Box::new(Unread)
    }
}

impl Connection for Unread {
    fn from_worker(&mut self, bytes: &[u8], forward: &mut Vec<u8>) -> Flow {
        forward.extend_from_slice(bytes);
        Flow::Go
    }
    fn from_server(&mut self, bytes: &[u8], forward: &mut Vec<u8>) -> Flow {
        forward.extend_from_slice(bytes);
        Flow::Go
    }
}

/// The per-worker listeners of one run.
pub struct Proxy {
    addrs: Vec<SocketAddr>,
    tasks: JoinSet<()>,
}

impl Proxy {
    /// Listens on one 127.0.0.1 port per worker (1..=`workers`), forwarding to `upstream`;
    /// with `links`, each worker's connections follow its link.
    pub async fn start(
        upstream: SocketAddr,
        workers: u32,
        protocol: Arc<dyn Protocol>,
        links: Option<Arc<Links>>,
    ) -> std::io::Result<Proxy> {
        let mut addrs = Vec::with_capacity(workers as usize);
        let mut tasks = JoinSet::new();
        for w in 1..=workers {
            let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
            addrs.push(listener.local_addr()?);
            let protocol = protocol.clone();
            let links = links.clone();
            tasks.spawn(accept(listener, upstream, w, protocol, links));
        }
        Ok(Proxy { addrs, tasks })
    }

    /// Worker `w`'s address.
    pub fn addr(&self, w: WorkerId) -> SocketAddr {
        self.addrs[(w - 1) as usize]
    }

    /// Stops listening and closes every forwarded connection.
    pub async fn stop(mut self) {
        self.tasks.shutdown().await;
    }
}

async fn accept(
    listener: TcpListener,
    upstream: SocketAddr,
    w: WorkerId,
    protocol: Arc<dyn Protocol>,
    links: Option<Arc<Links>>,
) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((client, _)) = accepted else { continue };
                let conn = protocol.connection(w);
                match &links {
                    None => connections.spawn(forward(client, upstream, conn)),
                    Some(l) => connections.spawn(forward_linked(client, upstream, conn, l.watch(w))),
                };
            }
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}

/// Forwards one worker connection until either side closes or the connection is cut.
async fn forward(client: TcpStream, upstream: SocketAddr, conn: Box<dyn Connection>) {
    let Ok(server) = TcpStream::connect(upstream).await else {
        return;
    };
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    let conn = Arc::new(Mutex::new(conn));
    let (mut client_rd, mut client_wr) = client.into_split();
    let (mut server_rd, mut server_wr) = server.into_split();
    let up = {
        let conn = conn.clone();
        async move {
            let mut buf = vec![0u8; 64 * 1024];
            let mut out = Vec::with_capacity(64 * 1024);
            loop {
                let due = lock(&conn).next_due(Direction::ToBroker);
                out.clear();
                let flow = tokio::select! {
                    read = client_rd.read(&mut buf) => match read {
                        Ok(0) | Err(_) => return,
                        Ok(n) => lock(&conn).from_worker(&buf[..n], &mut out),
                    },
                    _ = until(due) => lock(&conn).due(Direction::ToBroker, Instant::now(), &mut out),
                };
                if server_wr.write_all(&out).await.is_err() || flow == Flow::Cut {
                    return;
                }
            }
        }
    };
    let down = {
        let conn = conn.clone();
        async move {
            let mut buf = vec![0u8; 64 * 1024];
            let mut out = Vec::with_capacity(64 * 1024);
            loop {
                let due = lock(&conn).next_due(Direction::ToWorker);
                out.clear();
                let flow = tokio::select! {
                    read = server_rd.read(&mut buf) => match read {
                        Ok(0) | Err(_) => return,
                        Ok(n) => lock(&conn).from_server(&buf[..n], &mut out),
                    },
                    _ = until(due) => lock(&conn).due(Direction::ToWorker, Instant::now(), &mut out),
                };
                if client_wr.write_all(&out).await.is_err() || flow == Flow::Cut {
                    return;
                }
            }
        }
    };
    // Either side ending ends both: dropping the halves closes the sockets.
    tokio::select! {
        _ = up => {}
        _ = down => {}
    }
    lock(&conn).closed();
}

fn lock<T: ?Sized>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What a proxy reported, one line per event its tests assert on (deliveries, acks, fenced
/// commits, dead-lettering, lease moves), in the order recorded.
#[cfg(test)]
pub(crate) fn observed_lines(events: &[crate::record::Event]) -> Vec<String> {
    use crate::record::EventKind;
    events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Delivered {
                seq,
                worker,
                delivery,
                ..
            } => Some(format!("deliver {seq}.{delivery} to {worker}")),
            EventKind::Acked {
                seq,
                worker,
                delivery,
                outcome,
            } => Some(format!("ack {seq}.{delivery} by {worker}: {outcome:?}")),
            EventKind::CommitFenced { seq, worker } => {
                Some(format!("commit of {seq} by {worker} fenced"))
            }
            EventKind::DeadLettered { seq, delivery } => Some(format!("dead {seq}.{delivery}")),
            EventKind::VisibilityChanged { seq, worker, .. } => {
                Some(format!("touch {seq} by {worker}"))
            }
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Passes everything on, but cuts the connection at the broker's first `!` (as a proxy cuts
    /// at a delivery a `received` kill was decided for), holding that byte and what follows.
    struct CutAtBang;

    impl Connection for CutAtBang {
        fn from_worker(&mut self, bytes: &[u8], forward: &mut Vec<u8>) -> Flow {
            forward.extend_from_slice(bytes);
            Flow::Go
        }
        fn from_server(&mut self, bytes: &[u8], forward: &mut Vec<u8>) -> Flow {
            match bytes.iter().position(|&b| b == b'!') {
                Some(i) => {
                    forward.extend_from_slice(&bytes[..i]);
                    Flow::Cut
                }
                None => {
                    forward.extend_from_slice(bytes);
                    Flow::Go
                }
            }
        }
    }

    struct Cutting;
    impl Protocol for Cutting {
        fn connection(&self, _worker: WorkerId) -> Box<dyn Connection> {
            Box::new(CutAtBang)
        }
    }

    /// Holds the worker's first chunk back 300 ms, then passes it on; the rest as it comes.
    #[derive(Default)]
    struct HoldFirst {
        seen: bool,
        held: Option<(Instant, Vec<u8>)>,
    }

    impl Connection for HoldFirst {
        fn from_worker(&mut self, bytes: &[u8], forward: &mut Vec<u8>) -> Flow {
            match self.seen {
                false => {
                    let due = Instant::now() + std::time::Duration::from_millis(300);
                    self.held = Some((due, bytes.to_vec()));
                    self.seen = true;
                }
                true => forward.extend_from_slice(bytes),
            }
            Flow::Go
        }
        fn from_server(&mut self, bytes: &[u8], forward: &mut Vec<u8>) -> Flow {
            forward.extend_from_slice(bytes);
            Flow::Go
        }
        fn next_due(&self, dir: Direction) -> Option<Instant> {
            let to_broker = dir == Direction::ToBroker;
            self.held.as_ref().filter(|_| to_broker).map(|(at, _)| *at)
        }
        fn due(&mut self, _dir: Direction, now: Instant, forward: &mut Vec<u8>) -> Flow {
            if self.held.as_ref().is_some_and(|(at, _)| *at <= now) {
                forward.extend(self.held.take().map(|(_, b)| b).unwrap_or_default());
            }
            Flow::Go
        }
    }

    struct Holding;
    impl Protocol for Holding {
        fn connection(&self, _worker: WorkerId) -> Box<dyn Connection> {
            Box::new(HoldFirst::default())
        }
    }

    /// An echo server standing for the broker: its address.
    async fn echo() -> SocketAddr {
        let echo = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
        let upstream = echo.local_addr().unwrap();
        tokio::spawn(async move {
            let (mut s, _) = echo.accept().await.unwrap();
            let mut buf = [0u8; 1024];
            while let Ok(n) = s.read(&mut buf).await {
                if n == 0 || s.write_all(&buf[..n]).await.is_err() {
                    return;
                }
            }
        });
        upstream
    }

    #[tokio::test]
    async fn bytes_a_connection_holds_back_go_on_when_they_come_due() {
        let proxy = Proxy::start(echo().await, 1, Arc::new(Holding), None)
            .await
            .unwrap();
        let mut c = TcpStream::connect(proxy.addr(1)).await.unwrap();
        // "abc" is held 300 ms; "def", sent 50 ms after it, passes at once and comes back
        // first; "abc" follows when due, though nothing more is read from either side.
        c.write_all(b"abc").await.unwrap();
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        c.write_all(b"def").await.unwrap();
        let mut got = [0u8; 6];
        c.read_exact(&mut got).await.unwrap();
        assert_eq!(&got, b"defabc");
        proxy.stop().await;
    }

    #[tokio::test]
    async fn bytes_pass_both_ways_until_the_connection_is_cut_before_the_held_bytes() {
        // An echo server stands for the broker.
        let echo = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
        let upstream = echo.local_addr().unwrap();
        tokio::spawn(async move {
            let (mut s, _) = echo.accept().await.unwrap();
            let mut buf = [0u8; 1024];
            while let Ok(n) = s.read(&mut buf).await {
                if n == 0 || s.write_all(&buf[..n]).await.is_err() {
                    return;
                }
            }
        });
        let proxy = Proxy::start(upstream, 2, Arc::new(Cutting), None)
            .await
            .unwrap();
        assert_ne!(proxy.addr(1), proxy.addr(2));
        let mut c = TcpStream::connect(proxy.addr(2)).await.unwrap();
        c.write_all(b"hello").await.unwrap();
        let mut got = [0u8; 5];
        c.read_exact(&mut got).await.unwrap();
        assert_eq!(&got, b"hello");
        // "ab!cd" comes back as "ab", then the connection closes: "!cd" never reaches us.
        c.write_all(b"ab!cd").await.unwrap();
        let mut rest = Vec::new();
        c.read_to_end(&mut rest).await.unwrap();
        assert_eq!(rest, b"ab");
        proxy.stop().await;
    }
}
