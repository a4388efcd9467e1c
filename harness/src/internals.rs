//! What the `ackbench` binary (`main.rs`), the benches (`harness/benches`), the end-to-end tests
//! (`tests/e2e`) and the fuzz targets (`fuzz/`) use of the crate's insides, by name, in one place.
//! Not a stable interface: a program embedding ackbench holds [`crate::Bench`] and reads
//! [`crate::summary`]. Every other module of the crate is `pub(crate)`.

/// The command line and one pipeline per subcommand.
pub mod commands {
    pub use crate::cli::{Cli, Command};
    pub use crate::commands::echo::cut_echoes;
    pub use crate::commands::{
        broker, check, exit_code, provider, rerender, run, size, sweep, CommandError, Outcome,
    };
}

/// Profiles: read, overridden, resolved.
pub mod profile {
    pub use crate::profile::{effective_yaml, load, load_str, Record, Scenario, StaleAck};
}

/// A run and what it records.
pub mod run {
    pub use crate::record::{nanos, AckOutcome, EventKind, Nanos, RunRecord, Seq};
    pub use crate::runner::run;
}

/// The analysis of a record and what a run writes.
pub mod report {
    pub use crate::metrics::publisher::{summarise as summarise_publisher, PublisherSummary};
    pub use crate::metrics::{analyse, default_interval, timeseries};
    pub use crate::report::{
        analyse_run, read_latency_log, rerender, summarise_with_metrics, write_all, Format,
        RunInfo, RunOutputs,
    };
}

/// The embedded SQS endpoint and the fake provider, served on their own.
pub mod serve {
    pub use crate::broker::sqs::{QueueSpec, SqsConfig, SqsServer};
    pub use crate::broker::BrokerConfig;
    pub use crate::provider::http::{HttpProvider, KeySource, LiveClock, NoHooks};
    pub use crate::provider::ProviderModel;
}

/// The parsers of outside bytes, one entry point per fuzz target.
pub mod fuzz {
    #[cfg(feature = "live")]
    pub use crate::fuzz_entry::{
        amqp_frames, kafka_requests, kafka_responses, nats_frames, resp_frames,
    };
    pub use crate::fuzz_entry::{provider_request, sqs_request};
}
