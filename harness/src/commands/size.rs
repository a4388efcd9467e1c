//! `ackbench size PROFILE`: the request from the flags, the sizing, the exit code.

use super::signals::exit_on_signals;
use super::{exit_code, Outcome};
use crate::cli::SizeArgs;
use crate::sizing::{self, SizeRequest};
use crate::verdict::exit;

pub fn size(args: SizeArgs) -> Outcome {
    exit_on_signals("ackbench size:");
    let sets = super::sets_with_mode(&args.profile.profile, &args.profile.sets, &args.mode)?;
    let request = SizeRequest {
        profile: args.profile.profile,
        sets,
        latency_from: args.latency_from,
        target_risk: args.target_risk,
        margin: args.margin,
        utilisation: args.utilisation,
        max_lease: args.max_lease,
        dedup_window: args.dedup_window,
        out: args.out,
        force: args.force,
    };
    sizing::size::size(&request)?;
    Ok(exit_code(exit::PASS))
}
