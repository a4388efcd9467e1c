//! `ackbench provider PROFILE --listen ADDR`: the fake provider on its own, over HTTP.

use super::{load, serve_limits};
use crate::cli::ProviderArgs;
use crate::profile;
use crate::verdict::exit;

pub fn provider(args: ProviderArgs) -> i32 {
    use crate::provider::http::standalone;
    let scenario = match load(&args.profile.profile, &args.profile.sets) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let limits = match serve_limits(&args.serve) {
        Ok(l) => l,
        Err(code) => return code,
    };
    let key = match standalone::parse_key_source(&args.key) {
        Ok(k) => k,
        Err(e) => {
            eprintln!("error: {e}");
            return exit::BAD_INPUT;
        }
    };
    if !(args.time_scale > 0.0 && args.time_scale <= 1.0) {
        eprintln!(
            "error: --time-scale {}: must be above 0 and at most 1",
            args.time_scale
        );
        return exit::BAD_INPUT;
    }
    let run_for = match args
        .run_for
        .as_deref()
        .map(profile::parse_duration)
        .transpose()
    {
        Ok(d) => d,
        Err(e) => {
            eprintln!("error: --for: {e}");
            return exit::BAD_INPUT;
        }
    };
    let rt = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return exit::RUN_FAILED;
        }
    };
    let served = rt.block_on(standalone::serve(
        &scenario,
        args.listen,
        key,
        args.time_scale,
        run_for,
        args.ledger.as_deref(),
        limits,
    ));
    match served {
        Ok(_) => exit::PASS,
        Err(e) => {
            eprintln!("error: provider on {}: {e}", args.listen);
            exit::RUN_FAILED
        }
    }
}
