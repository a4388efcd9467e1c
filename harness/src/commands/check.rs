//! `ackbench check PROFILE`: validate only.

use super::{exit_code, load, sets_with_mode, Outcome};
use crate::cli::CheckArgs;
use crate::verdict::exit;

pub fn check(args: CheckArgs) -> Outcome {
    let sets = sets_with_mode(&args.profile.profile, &args.profile.sets, &args.mode)?;
    let s = load(&args.profile.profile, &sets)?;
    super::consumer_program::check(&args.profile.profile, &s)?;
    crate::stdout::outln!("ok: {} ({})", s.name, args.profile.profile.display());
    Ok(exit_code(exit::PASS))
}
