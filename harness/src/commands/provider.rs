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
    if !(profile::defaults::MIN_TIME_SCALE..=1.0).contains(&args.time_scale) {
        eprintln!(
            "error: --time-scale {}: must be from {} to 1",
            profile::number_text(args.time_scale),
            profile::defaults::MIN_TIME_SCALE
        );
        return exit::BAD_INPUT;
    }
    // The ledger is written at exit: check now that it can be.
    if let Some(path) = &args.ledger {
        if let Err(e) = std::fs::File::create(path) {
            eprintln!("error: --ledger {}: cannot write it: {e}", path.display());
            return exit::BAD_INPUT;
        }
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
