//! `ackbench provider`: the HTTP provider on its own, for consumers driven from elsewhere.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use super::{HttpProvider, KeySource, LiveClock, NoHooks};
use crate::profile::Scenario;
use crate::provider::ProviderModel;
use crate::record::{secs_f64, CallOutcome, Ledger};
use crate::serving::ServeLimits;

pub use crate::profile::key_source::parse_key_source;

/// Serves until Ctrl-C or `run_for`, then prints the counts and writes the ledger.
pub async fn serve(
    scenario: &Scenario,
    listen: std::net::SocketAddr,
    key: KeySource,
    time_scale: f64,
    run_for: Option<Duration>,
    ledger_csv: Option<&Path>,
    limits: ServeLimits,
) -> std::io::Result<Ledger> {
    let model = ProviderModel::new(&scenario.provider, scenario.seed);
    let workers = scenario.consumer.workers;
    let p = HttpProvider::bind_limited(
        listen,
        model,
        LiveClock::new(time_scale),
        key,
        workers,
        Arc::new(NoHooks),
        limits,
    )
    .await?;
    let trimmer = tokio::spawn(crate::serving::trim::keep_trimming(Duration::from_secs(1)));
    crate::stdout::outln!("provider listening on http://{}", p.local_addr());
    for w in 1..=workers {
        crate::stdout::outln!("  worker {w}: {}", p.base_url(w));
    }
    match run_for {
        Some(d) => tokio::select! {
            _ = tokio::time::sleep(d) => {}
            _ = crate::serving::stop::stop_signal() => {}
        },
        None => {
            crate::serving::stop::stop_signal().await;
        }
    }
    trimmer.abort();
    let ledger = p.shutdown().await;
    let answered = ledger.calls.iter().filter(|c| c.ended.is_some()).count();
    crate::stdout::outln!(
        "calls {}, answered {answered}, effects {}",
        ledger.calls.len(),
        ledger.effects.len()
    );
    if let Some(path) = ledger_csv {
        write_csv(&ledger, path)?;
        crate::stdout::outln!("ledger: {}", path.display());
    }
    Ok(ledger)
}

fn write_csv(ledger: &Ledger, path: &Path) -> std::io::Result<()> {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
    writeln!(f, "key,worker,started_s,ended_s,outcome")?;
    for c in &ledger.calls {
        let outcome = match c.outcome {
            CallOutcome::Accepted => "accepted".to_string(),
            CallOutcome::Error(s) => format!("error {s}"),
            CallOutcome::Reset => "reset".to_string(),
            CallOutcome::Abandoned => "abandoned".to_string(),
            CallOutcome::TimedOut => "timed out".to_string(),
        };
        let ended = c
            .ended
            .map(|e| format!("{:.6}", secs_f64(e)))
            .unwrap_or_default();
        let key = c.key.as_deref().unwrap_or_default().replace('"', "\"\"");
        writeln!(
            f,
            "\"{key}\",{},{:.6},{ended},{outcome}",
            c.worker,
            secs_f64(c.started)
        )?;
    }
    f.flush()
}
