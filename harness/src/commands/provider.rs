//! `ackbench provider PROFILE --listen ADDR`: the fake provider on its own, over HTTP.

use super::{exit_code, load, serve_limits, CommandError, Outcome};
use crate::cli::ProviderArgs;
use crate::profile;
use crate::verdict::exit;

pub fn provider(args: ProviderArgs) -> Outcome {
    use crate::provider::http::standalone;
    let bad = CommandError::bad_input;
    let scenario = load(&args.profile.profile, &args.profile.sets)?;
    let limits = serve_limits(&args.serve)?;
    let key = standalone::parse_key_source(&args.key).map_err(|e| bad(e.to_string()))?;
    if !(profile::defaults::MIN_TIME_SCALE..=1.0).contains(&args.time_scale) {
        return Err(bad(format!(
            "--time-scale {}: must be from {} to 1",
            profile::number_text(args.time_scale),
            profile::defaults::MIN_TIME_SCALE
        )));
    }
    if let Some(path) = &args.ledger {
        std::fs::File::create(path)
            .map_err(|e| bad(format!("--ledger {}: cannot write it: {e}", path.display())))?;
    }
    let run_for = (args
        .run_for
        .as_deref()
        .map(profile::parse_duration)
        .transpose())
    .map_err(|e| bad(format!("--for: {e}")))?;
    let rt = tokio::runtime::Runtime::new()
        .map_err(|e| CommandError::run_failed(format!("cannot start the async runtime: {e}")))?;
    let served = rt.block_on(standalone::serve(
        &scenario,
        args.listen,
        key,
        args.time_scale,
        run_for,
        args.ledger.as_deref(),
        limits,
    ));
    served.map_err(|e| CommandError::run_failed(format!("provider on {}: {e}", args.listen)))?;
    Ok(exit_code(exit::PASS))
}
