//! The accept loop: every connection is served by hyper's HTTP/1.1 connection directly, with one
//! shared router, a watchdog for its timeouts, and a permit of the connection limit.
//!
//! A provider holds thousands of calls open at once (each waits out its latency), so what one
//! open connection costs is what the server costs. `axum::serve` spends more per connection
//! than needed: it rebuilds the router's state for each connection, and its HTTP/1-or-2
//! detection reads the first bytes ahead of hyper, which makes hyper's read buffer grow to
//! 16 KiB on the first request. Here a connection is one task holding hyper's buffers, a clone
//! of the router (a reference count), its activity and the request in flight. Both servers
//! speak HTTP/1.1, what SDKs and HTTP clients speak to a plain `http://` URL.
//!
//! A handler that answers [`Unanswered`] has its connection closed at once, nothing written:
//! the provider's injected reset.

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use axum::body::Body;
use axum::serve::Listener;
use axum::Router;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, Semaphore};
use tower::ServiceExt;

use super::activity::Activity;
use super::body::DeadlineBody;
use super::{trim, ServeLimits};

/// Serves `app` on `listener` within `limits` until `stop` resolves (or this future is
/// dropped); then it accepts no more, each open connection finishes the request it is
/// answering and closes, and this returns once every connection has closed.
pub async fn serve(
    mut listener: TcpListener,
    app: Router,
    limits: ServeLimits,
    stop: impl Future<Output = ()>,
) {
    let permits = Arc::new(Semaphore::new(limits.max_connections));
    // Connections watch the receiver: they close gracefully when it says so or goes.
    let (closing, closing_rx) = watch::channel(false);
    tokio::pin!(stop);
    loop {
        let permit = tokio::select! {
            p = permits.clone().acquire_owned() => p.expect("the semaphore is never closed"),
            () = &mut stop => break,
        };
        // Accept errors (a connection reset before it was accepted, too many open files) are
        // handled inside: a connection always comes back.
        let tcp = tokio::select! {
            (tcp, _) = Listener::accept(&mut listener) => tcp,
            () = &mut stop => break,
        };
        // Answers go out at once (no Nagle delay behind a client's delayed ACK).
        let _ = tcp.set_nodelay(true);
        let app = app.clone();
        let closing = closing_rx.clone();
        tokio::spawn(async move {
            connection(tcp, app, limits, closing).await;
            drop(permit);
            trim::released();
        });
    }
    drop(listener);
    let _ = closing.send(true);
    // Every permit back: every connection has closed.
    let all = u32::try_from(limits.max_connections).unwrap_or(u32::MAX);
    let _ = permits.acquire_many(all).await;
}

/// Serves one connection until the client closes it, a timeout of `limits` expires (the socket
/// is dropped at once), or the server closes (the request in progress is answered first).
async fn connection(
    tcp: TcpStream,
    app: Router,
    limits: ServeLimits,
    mut closing: watch::Receiver<bool>,
) {
    let activity = Arc::new(Activity::new());
    let io = TokioIo::new(Watched {
        tcp,
        activity: activity.clone(),
    });
    let service = Tracked {
        app,
        activity: activity.clone(),
        limits,
    };
    let conn = http1::Builder::new().serve_connection(io, service);
    tokio::pin!(conn);
    loop {
        let (at, expiry) = activity.deadline(&limits);
        tokio::select! {
            // A failed connection (the client went away) has no one left to tell.
            _ = conn.as_mut() => return,
            // A request answered `Unanswered`: the socket goes, nothing written.
            () = activity.close.notified() => return,
            _ = closing.wait_for(|&c| c) => break,
            () = activity.wake.notified() => {}
            () = tokio::time::sleep_until(at.into()) => {
                // Expired only if nothing moved the deadline meanwhile.
                let (now_at, now_expiry) = activity.deadline(&limits);
                if expiry.is_some() && now_expiry == expiry && now_at <= Instant::now() {
                    return;
                }
            }
        }
    }
    conn.as_mut().graceful_shutdown();
    let _ = conn.await;
}

/// A response marked so is never written: its connection is closed instead, as a server that
/// dropped the connection does (the client sees the connection closed before an answer).
#[derive(Debug, Clone, Copy)]
pub struct Unanswered;

impl Unanswered {
    /// A response its connection closes instead of writing.
    pub fn response() -> axum::response::Response {
        let mut r = axum::response::Response::new(Body::empty());
        r.extensions_mut().insert(Unanswered);
        r
    }
}

/// The router, telling the connection's activity when each request starts and ends, and
/// holding each request body to the header-read timeout.
#[derive(Clone)]
struct Tracked {
    app: Router,
    activity: Arc<Activity>,
    limits: ServeLimits,
}

/// Ends the request in the activity when dropped: answered, or abandoned by hyper.
struct InFlight(Arc<Activity>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.end();
    }
}

impl hyper::service::Service<http::Request<Incoming>> for Tracked {
    type Response = http::Response<Body>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<http::Response<Body>, Infallible>> + Send>>;

    fn call(&self, req: http::Request<Incoming>) -> Self::Future {
        self.activity.begin();
        let in_flight = InFlight(self.activity.clone());
        let by = Instant::now() + self.limits.header_read_timeout;
        let req = req.map(|b| Body::new(DeadlineBody::new(b, by)));
        let app = self.app.clone();
        let activity = self.activity.clone();
        Box::pin(async move {
            let answer = app.oneshot(req).await;
            if let Ok(r) = &answer {
                if r.extensions().get::<Unanswered>().is_some() {
                    activity.close.notify_one();
                    // The connection drops this request with its socket.
                    return std::future::pending().await;
                }
            }
            drop(in_flight);
            answer
        })
    }
}

/// The socket, telling the connection's activity when bytes come in.
struct Watched {
    tcp: TcpStream,
    activity: Arc<Activity>,
}

impl AsyncRead for Watched {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let r = Pin::new(&mut this.tcp).poll_read(cx, buf);
        if matches!(r, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            this.activity.read();
        }
        r
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().tcp).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().tcp).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().tcp).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().tcp).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.tcp.is_write_vectored()
    }
}
