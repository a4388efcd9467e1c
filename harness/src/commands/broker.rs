//! `ackbench broker [PROFILE] --listen ADDR`: the embedded broker on its own, over the SQS API.

use super::{exit_code, load, serve_limits, CommandError, Outcome};
use crate::broker::sqs::{is_queue_name, run_standalone, QueueSpec, SqsConfig};
use crate::broker::BrokerConfig;
use crate::cli::BrokerArgs;
use crate::record::nanos;
use crate::verdict::exit;

pub fn broker(args: BrokerArgs) -> Outcome {
    let limits = serve_limits(&args.serve)?;
    check_queue_name(&args.queue).map_err(CommandError::bad_input)?;
    let mut config = SqsConfig {
        limits,
        // Nobody takes a standalone broker's events, nor needs a settled message: keeping them
        // would only grow its memory with every message it carries.
        record_events: false,
        forget_settled: true,
        ..SqsConfig::default()
    };
    if let Some(path) = &args.profile {
        let scenario = load(path, &args.sets)?;
        let b = &scenario.broker;
        let broker = BrokerConfig {
            visibility_timeout: nanos(b.lease),
            max_receives: b.max_deliveries,
            stale_ack: b.stale_ack,
        };
        let dead_letter_queue = (b.max_deliveries > 0).then(|| format!("{}-dlq", args.queue));
        if let Some(dlq) = dead_letter_queue.as_deref().filter(|d| !is_queue_name(d)) {
            return Err(CommandError::bad_input(format!(
                "--queue {}: its dead-letter queue `{dlq}` would be over 80 characters: use a name of at most 76",
                args.queue
            )));
        }
        config.queues.push((
            args.queue.clone(),
            QueueSpec {
                broker,
                dead_letter_queue,
                fifo: None,
            },
        ));
    }
    run_standalone(args.listen, config)
        .map_err(|e| CommandError::run_failed(format!("broker on {}: {e}", args.listen)))?;
    Ok(exit_code(exit::PASS))
}

/// `--queue`: a standard queue's name, as SQS allows it.
fn check_queue_name(name: &str) -> Result<(), String> {
    if is_queue_name(name) {
        Ok(())
    } else if name.ends_with(".fifo") {
        Err(format!("--queue {name}: FIFO queues are not supported"))
    } else {
        Err(format!(
            "--queue {name:?}: a queue name is 1 to 80 characters, each a letter, a digit, `-` or `_`"
        ))
    }
}
