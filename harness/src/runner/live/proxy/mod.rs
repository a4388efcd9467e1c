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

mod guard;
pub mod link;
mod linked;
#[cfg(test)]
mod linked_tests;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;
use tokio::task::JoinSet;

use super::state::LiveState;
use crate::record::WorkerId;
use guard::Guard;
pub use guard::Refusal;
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
    /// The broker closed its side while a partition holds what passes: what it does of a closed
    /// connection happens now, before the held bytes go on ([`Connection::closed`] follows
    /// when the connection ends).
    fn broker_closed(&mut self) {}
    /// When the next frame it holds back in direction `dir` is due (none held: `None`).
    fn next_due(&self, _dir: Direction) -> Option<Instant> {
        None
    }
    /// The frames held back in direction `dir` that are due at `now`: appended to `forward`
    /// ([`Flow::Cut`]: the worker is being killed as one reaches it).
    fn due(&mut self, _dir: Direction, _now: Instant, _forward: &mut Vec<u8>) -> Flow {
        Flow::Go
    }
    /// The reader gave up on the connection in what it just read (a frame over the broker's
    /// limits, bytes that are no frame): why, and what the broker answers before it closes.
    /// Asked after every read; from then on the connection only ends ([`guard`]).
    fn refusal(&mut self) -> Option<Refusal> {
        None
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
    /// A connection of `worker` broke, for `why` (its reader's refusal, or its panic), and was
    /// closed: the run records it.
    fn broke(&self, worker: WorkerId, why: String);
}

/// A protocol the proxy forwards without reading it: for a broker that sees its workers itself
/// (the embedded SQS endpoint), whose proxy is there only to put each worker on its link.
pub struct Unread(pub Arc<LiveState>);

impl Protocol for Unread {
    fn connection(&self, _worker: WorkerId) -> Box<dyn Connection> {
        Box::new(Passed)
    }
    fn broke(&self, worker: WorkerId, why: String) {
        self.0.connection_broke(worker, why);
    }
}

/// A connection of [`Unread`]: its bytes pass as they are.
struct Passed;

impl Connection for Passed {
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
                let conn = Box::new(Guard::new(protocol.connection(w), w, protocol.clone()));
                match &links {
                    None => connections.spawn(forward(client, upstream, conn)),
                    Some(l) => connections.spawn(forward_linked(client, upstream, conn, l.watch(w))),
                };
            }
            Some(ended) = connections.join_next(), if !connections.is_empty() => {
                // A panic ended this connection's task, and with it both its sockets: the
                // worker sees its connection closed, the run goes on.
                if let Err(e) = ended {
                    if e.is_panic() {
                        protocol.broke(w, panicked(e.into_panic()));
                    }
                }
            }
        }
    }
}

/// A reader's panic in words: `the proxy's reader panicked: <its message>`.
fn panicked(payload: Box<dyn std::any::Any + Send>) -> String {
    let message = match payload.downcast::<String>() {
        Ok(s) => *s,
        Err(p) => match p.downcast::<&'static str>() {
            Ok(s) => s.to_string(),
            Err(_) => "no message".to_string(),
        },
    };
    format!("the proxy's reader panicked: {message}")
}

/// Forwards one worker connection until either side closes or the connection is cut.
async fn forward(client: TcpStream, upstream: SocketAddr, conn: Box<dyn Connection>) {
    let Ok(server) = TcpStream::connect(upstream).await else {
        return;
    };
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    let conn: Shared = Arc::new(Mutex::new(conn));
    let wakes = Wakes::default();
    let (client_rd, client_wr) = client.into_split();
    let (server_rd, server_wr) = server.into_split();
    let up = pass(client_rd, server_wr, Direction::ToBroker, &conn, &wakes);
    let down = pass(server_rd, client_wr, Direction::ToWorker, &conn, &wakes);
    // Either side ending ends both: dropping the halves closes the sockets.
    tokio::select! {
        _ = up => {}
        _ = down => {}
    }
    lock(&conn).closed();
}

/// One direction of a connection off any link: each chunk read goes through the
/// [`Connection`] and on, and so does what it held back, when due.
async fn pass(
    mut rd: OwnedReadHalf,
    mut wr: OwnedWriteHalf,
    dir: Direction,
    conn: &Shared,
    wakes: &Wakes,
) {
    let mut buf = vec![0u8; 64 * 1024];
    let mut out = Vec::with_capacity(64 * 1024);
    loop {
        let due = lock(conn).next_due(dir);
        out.clear();
        let flow = tokio::select! {
            read = rd.read(&mut buf) => match read {
                Ok(0) | Err(_) => return,
                Ok(n) => {
                    let mut c = lock(conn);
                    let flow = match dir {
                        Direction::ToBroker => c.from_worker(&buf[..n], &mut out),
                        Direction::ToWorker => c.from_server(&buf[..n], &mut out),
                    };
                    wakes.after(&**c, dir);
                    flow
                }
            },
            _ = until(due) => lock(conn).due(dir, Instant::now(), &mut out),
            // The other direction gave this one something to pass on: look again.
            _ = wakes.of(dir).notified() => continue,
        };
        if wr.write_all(&out).await.is_err() || flow == Flow::Cut {
            return;
        }
    }
}

/// One connection shared by its two directions.
pub(crate) type Shared = Arc<Mutex<Box<dyn Connection>>>;

/// Wakes a direction's writer when reading the other direction gave it something to pass on
/// (a reply the [`Connection`] made up for the worker while its request goes nowhere): it is
/// waiting for its own reads and for what it knew was due.
#[derive(Default)]
pub(crate) struct Wakes {
    to_broker: Notify,
    to_worker: Notify,
}

impl Wakes {
    pub(crate) fn of(&self, dir: Direction) -> &Notify {
        match dir {
            Direction::ToBroker => &self.to_broker,
            Direction::ToWorker => &self.to_worker,
        }
    }

    /// `conn` (its lock still held) just read bytes going `dir`: the other direction's writer
    /// is woken when it has something held.
    pub(crate) fn after(&self, conn: &dyn Connection, dir: Direction) {
        let other = match dir {
            Direction::ToBroker => Direction::ToWorker,
            Direction::ToWorker => Direction::ToBroker,
        };
        if conn.next_due(other).is_some() {
            self.of(other).notify_one();
        }
    }
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
            EventKind::Republished {
                seq,
                worker,
                delivery,
                to,
            } => Some(format!("retry {seq}.{delivery} by {worker} to {to:?}")),
            EventKind::VisibilityChanged { seq, worker, .. } => {
                Some(format!("touch {seq} by {worker}"))
            }
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod guard_tests;
#[cfg(test)]
mod tests;
