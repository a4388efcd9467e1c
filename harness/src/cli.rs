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
