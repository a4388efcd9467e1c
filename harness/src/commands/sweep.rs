//! `ackbench sweep PROFILE --vary ...`: the request from the flags, the sweep, the exit code.

use super::signals::exit_on_signals;
use super::{exit_code, Outcome};
use crate::cli::SweepArgs;
use crate::sizing::{self, SweepRequest};
use crate::verdict::exit;

pub fn sweep(args: SweepArgs) -> Outcome {
    exit_on_signals("ackbench sweep:");
    let sets = super::sets_with_mode(&args.profile.profile, &args.profile.sets, &args.mode)?;
    let request = SweepRequest {
        profile: args.profile.profile,
        sets,
        vary: args.vary,
        metrics: args.metrics,
        out: args.out,
        force: args.force,
        jobs: args.jobs,
    };
    sizing::sweep::sweep(&request)?;
    Ok(exit_code(exit::PASS))
}
