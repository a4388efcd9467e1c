//! The command line: what a user types, parsed by clap. Validation of the profile itself is the
//! profile module's job; this only names the inputs.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// Load-test and chaos harness for message-queue consumers.
///
/// ackbench drives a consumer against a broker with real lease semantics (visibility timeout,
/// receive count, dead-letter queue) and a fake downstream provider, injects faults, and counts
/// effects per message key: duplicate, lost and late effects, DLQ entries with and without
/// effect, handler latency against the visibility timeout. Budgets turn that into a verdict.
///
/// Exit codes: 0 all budgets pass; 1 a budget failed; 2 bad usage or invalid profile;
/// 3 the run itself could not complete.
#[derive(Debug, Parser)]
#[command(name = "ackbench", version, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run one scenario, print a summary table and write a report folder.
    ///
    /// Example: ackbench run profiles/marlow-thursday.yaml --set broker.visibility_timeout=90s
    Run(RunArgs),
    /// Validate a profile (and any --set overrides) without running it.
    Check(CheckArgs),
    /// Serve the profile's fake provider over HTTP, for a consumer run from elsewhere.
    ///
    /// Each worker gets its own base URL (http://ADDR/w/<worker>/); any path below it is the
    /// provider call, answered with the profile's latency, phases and errors. On Ctrl-C (or
    /// after --for) it prints the effect counts and writes the ledger if --ledger is given.
    ///
    /// Example: ackbench provider profiles/marlow-thursday.yaml --listen 127.0.0.1:8080
    Provider(ProviderArgs),
}

#[derive(Debug, Args)]
pub struct ProviderArgs {
    #[command(flatten)]
    pub profile: ProfileArgs,
    /// Address to listen on (loopback by default).
    #[arg(long, default_value = "127.0.0.1:8080", value_name = "ADDR")]
    pub listen: std::net::SocketAddr,
    /// Where each call's effect key is: `pointer:/key` (JSON pointer into the body),
    /// `header:Idempotency-Key`, or `segment:N` (N-th path segment below the base URL).
    #[arg(long, default_value = "pointer:/key", value_name = "SOURCE")]
    pub key: String,
    /// Compress every profile duration by this factor (0.05 turns 40 s calls into 2 s).
    #[arg(long, default_value_t = 1.0, value_name = "SCALE")]
    pub time_scale: f64,
    /// Stop by itself after this long (wall time, e.g. 90s); default: until Ctrl-C.
    #[arg(long = "for", value_name = "DURATION")]
    pub run_for: Option<String>,
    /// Write every call (key, worker, start, end, outcome) to this CSV file at exit.
    #[arg(long, value_name = "FILE")]
    pub ledger: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ProfileArgs {
    /// The profile (YAML scenario), e.g. profiles/marlow-thursday.yaml.
    pub profile: PathBuf,
    /// Override a profile field by its dotted path; repeatable.
    ///
    /// Examples: --set broker.visibility_timeout=90s  --set consumer.target=ack-before-work
    /// --set provider.phases.0.to=45m
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub sets: Vec<String>,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub profile: ProfileArgs,
    /// Report folder [default: reports/<profile name>/].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Seed for all randomness (overrides the profile's `seed`); printed with every run.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Print one message's life in time order (publish, deliveries with worker and lease end,
    /// calls and effects, acks and whether they were stale, visibility changes, kills, DLQ,
    /// redrive) and write it to the report as trace-KEY.txt; repeatable.
    ///
    /// Example: --trace msg-1
    #[arg(long, value_name = "KEY")]
    pub trace: Vec<String>,
    /// Print only the verdict line.
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub profile: ProfileArgs,
}
