//! When a standalone server stops: Ctrl-C (SIGINT), SIGTERM (what `timeout`, CI cancellation
//! and `docker stop` send) or SIGHUP.

/// Waits for SIGINT, SIGTERM or SIGHUP (only Ctrl-C where the others cannot be watched).
pub async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        if let (Ok(mut term), Ok(mut hup)) = (
            signal(SignalKind::terminate()),
            signal(SignalKind::hangup()),
        ) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
                _ = hup.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}
