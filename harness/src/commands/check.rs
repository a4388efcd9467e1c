//! `ackbench check PROFILE`: validate only.

use super::load;
use crate::cli::CheckArgs;
use crate::verdict::exit;

pub fn check(args: CheckArgs) -> i32 {
    match load(&args.profile.profile, &args.profile.sets) {
        Ok(s) => {
            crate::outln!("ok: {} ({})", s.name, args.profile.profile.display());
            exit::PASS
        }
        Err(code) => code,
    }
}
