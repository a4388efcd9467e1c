//! `ackbench sweep PROFILE --vary ...`: the request from the flags, the sweep, the exit code.

use super::signals::exit_on_signals;
use crate::cli::SweepArgs;
use crate::sizing::{self, SweepRequest};
use crate::verdict::exit;

pub fn sweep(args: SweepArgs) -> i32 {
    exit_on_signals("ackbench sweep:");
    let request = SweepRequest {
        profile: args.profile.profile,
        sets: args.profile.sets,
        vary: args.vary,
        metrics: args.metrics,
        out: args.out,
        force: args.force,
        jobs: args.jobs,
    };
    match sizing::sweep::sweep(&request) {
        Ok(()) => exit::PASS,
        Err(e) => {
            eprintln!("error: {e}");
            e.exit_code()
        }
    }
}
