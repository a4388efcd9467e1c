//! Interruptions: SIGINT (Ctrl-C), SIGTERM and SIGHUP end a run early, and the run still writes
//! what it recorded up to then (a report marked incomplete, exit 3).
//!
//! One process-wide handler, installed once through the `ctrlc` crate (with its `termination`
//! feature: SIGTERM and SIGHUP are handled like SIGINT, which is what `timeout`, CI cancellation
//! and `docker stop` send). An ingress load's goose installs a Ctrl-C handler of its own when it
//! starts (and would then stop only its users, leaving the run going); installing ours first,
//! through the same crate, makes goose's attempt fail harmlessly, so a signal always ends the
//! whole run.
//!
//! An [`Interrupt`] is what a run looks at: the sim executor checks [`Interrupt::requested`]
//! between instants; a live run awaits [`Interrupt::subscribe`]'s receiver.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use tokio::sync::watch;

/// The reason an interrupted run's report gives (`incomplete_reason` in summary.json). The
/// handler cannot tell the three signals apart, so the reason names all three.
pub const REASON: &str = "interrupted by a signal (SIGINT, SIGTERM or SIGHUP)";

/// A request to stop a run early, shared by whoever asks and the run.
#[derive(Debug, Clone)]
pub struct Interrupt(Arc<Inner>);

#[derive(Debug)]
struct Inner {
    requested: AtomicBool,
    /// Changes at each request (a live run's tasks wait on it).
    changes: watch::Sender<u64>,
}

impl Default for Interrupt {
    fn default() -> Self {
        Self::new()
    }
}

impl Interrupt {
    /// One that nothing triggers but [`Interrupt::trigger`].
    pub fn new() -> Self {
        Interrupt(Arc::new(Inner {
            requested: AtomicBool::new(false),
            changes: watch::channel(0).0,
        }))
    }

    /// Asks the run to stop.
    pub fn trigger(&self) {
        self.0.requested.store(true, Ordering::SeqCst);
        self.0.changes.send_modify(|n| *n += 1);
    }

    /// Whether the run was asked to stop.
    pub fn requested(&self) -> bool {
        self.0.requested.load(Ordering::Relaxed)
    }

    /// A receiver that changes at each request from now on.
    #[cfg_attr(not(feature = "live"), allow(dead_code))] // the live runner's only
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.0.changes.subscribe()
    }
}

static ON_SIGNALS: OnceLock<Interrupt> = OnceLock::new();
static INSTALLED: OnceLock<Result<(), String>> = OnceLock::new();

/// The process-wide interrupt triggered by SIGINT, SIGTERM and SIGHUP; the handler is installed
/// at the first call. An error says why the handler could not be installed.
pub fn on_signals() -> Result<Interrupt, String> {
    let interrupt = ON_SIGNALS.get_or_init(Interrupt::new).clone();
    INSTALLED
        .get_or_init(|| {
            ctrlc::set_handler(|| {
                if let Some(i) = ON_SIGNALS.get() {
                    i.trigger();
                }
            })
            .map_err(|e| e.to_string())
        })
        .clone()?;
    Ok(interrupt)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trigger_is_seen_by_the_flag_and_by_every_receiver() {
        let i = Interrupt::new();
        let mut rx = i.subscribe();
        assert!(!i.requested());
        assert!(!rx.has_changed().unwrap_or(true));
        i.clone().trigger();
        assert!(i.requested());
        assert!(rx.has_changed().unwrap_or(false));
        assert_eq!(*rx.borrow_and_update(), 1);
    }
}
