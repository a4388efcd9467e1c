//! The provider's accept loop: every connection is served by hyper's HTTP/1.1 connection
//! directly, with one shared router.
//!
//! A provider holds thousands of calls open at once (each waits out its latency), so what one
//! open connection costs is what the provider costs. `axum::serve` spends more per connection
//! than a provider needs: it rebuilds the router's state for each connection, and its
//! HTTP/1-or-2 detection reads the first bytes ahead of hyper, which makes hyper's read buffer
//! grow to 16 KiB on the first request. Here a connection is one task holding hyper's buffers,
//! a clone of the router (a reference count) and the call in flight. The provider speaks
//! HTTP/1.1, what a worker's HTTP client speaks to a plain `http://` URL.

use axum::serve::Listener;
use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::watch;

/// Serves `app` on `listener` until this future is dropped; then each open connection finishes
/// the call it is answering and closes (as `axum::serve` does).
pub async fn serve(mut listener: TcpListener, app: Router) {
    // Connections watch the receiver: it goes when the accept loop does.
    let (closing, _open) = watch::channel(());
    loop {
        // Accept errors (a connection reset before it was accepted, too many open files) are
        // handled inside: a connection always comes back.
        let (tcp, _) = Listener::accept(&mut listener).await;
        let service = TowerToHyperService::new(app.clone());
        let closing = closing.clone();
        tokio::spawn(async move {
            let conn = http1::Builder::new().serve_connection(TokioIo::new(tcp), service);
            tokio::pin!(conn);
            tokio::select! {
                // A failed connection (the worker went away) has no one left to tell.
                _ = conn.as_mut() => return,
                _ = closing.closed() => conn.as_mut().graceful_shutdown(),
            }
            let _ = conn.await;
        });
    }
}
