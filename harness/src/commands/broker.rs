//! `ackbench broker [PROFILE] --listen ADDR`: the embedded broker on its own, over the SQS API.

use super::load;
use crate::broker::sqs::{run_standalone, QueueSpec, SqsConfig};
use crate::broker::BrokerConfig;
use crate::cli::BrokerArgs;
use crate::record::nanos;
use crate::verdict::exit;

pub fn broker(args: BrokerArgs) -> i32 {
    let mut config = SqsConfig {
        // Nobody takes a standalone broker's events: keeping them would only grow its memory.
        record_events: false,
        ..SqsConfig::default()
    };
    if let Some(path) = &args.profile {
        let scenario = match load(path, &args.sets) {
            Ok(s) => s,
            Err(code) => return code,
        };
        let b = &scenario.broker;
        let broker = BrokerConfig {
            visibility_timeout: nanos(b.visibility_timeout),
            max_receives: b.max_receives,
            stale_ack: b.stale_ack,
        };
        let dead_letter_queue = (b.max_receives > 0).then(|| format!("{}-dlq", args.queue));
        config.queues.push((
            args.queue.clone(),
            QueueSpec {
                broker,
                dead_letter_queue,
            },
        ));
    }
    match run_standalone(args.listen, config) {
        Ok(()) => exit::PASS,
        Err(e) => {
            eprintln!("error: broker on {}: {e}", args.listen);
            exit::RUN_FAILED
        }
    }
}
