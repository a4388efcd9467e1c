//! Signals during a command whose runs write nothing until they all end (`sweep`, `size`).

use crate::runner::interrupt;
use crate::verdict::exit;

/// A signal ends the process at once with exit 3 (the run could not complete), saying what was
/// interrupted, instead of the shell's 128 + signal. Nothing half-written is left: those
/// commands write their folder only after every run.
pub(crate) fn exit_on_signals(what: &'static str) {
    let Ok(interrupt) = interrupt::on_signals() else {
        return;
    };
    std::thread::spawn(move || loop {
        if interrupt.requested() {
            eprintln!(
                "error: {what} {}: its report files were not written (exit 3)",
                interrupt::REASON
            );
            std::process::exit(exit::RUN_FAILED);
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    });
}
