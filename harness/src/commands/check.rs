//! `ackbench check PROFILE`: validate only.

use super::{exit_code, load, Outcome};
use crate::cli::CheckArgs;
use crate::verdict::exit;

pub fn check(args: CheckArgs) -> Outcome {
    let s = load(&args.profile.profile, &args.profile.sets)?;
    crate::outln!("ok: {} ({})", s.name, args.profile.profile.display());
    Ok(exit_code(exit::PASS))
}
