//! Ctrl-C for live runs: one process-wide SIGINT handler that every live run listens to.
//!
//! An ingress load's goose installs a Ctrl-C handler of its own when it starts (and would then
//! stop only its users, leaving the run going). Installing ours first, through the same crate
//! goose uses, makes goose's attempt fail harmlessly, so Ctrl-C always ends the whole run: every
//! worker, the ingress service and the load.

use std::sync::OnceLock;

use tokio::sync::watch;

static INTERRUPTS: OnceLock<watch::Sender<u64>> = OnceLock::new();
static INSTALLED: OnceLock<Result<(), String>> = OnceLock::new();

/// A receiver that changes at each Ctrl-C from now on.
pub fn listen() -> Result<watch::Receiver<u64>, String> {
    let tx = INTERRUPTS.get_or_init(|| watch::channel(0).0);
    INSTALLED
        .get_or_init(|| {
            ctrlc::set_handler(|| {
                if let Some(tx) = INTERRUPTS.get() {
                    tx.send_modify(|n| *n += 1);
                }
            })
            .map_err(|e| e.to_string())
        })
        .clone()?;
    Ok(tx.subscribe())
}
