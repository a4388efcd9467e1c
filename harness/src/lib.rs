//! ackbench: a load-test and chaos harness for message-queue consumers.
//!
//! It drives a consumer (a *target*) against a broker with real lease semantics and a fake
//! downstream *provider*, injects faults, and counts *effects* per message key against what was
//! published: duplicate, lost and late effects, DLQ entries with and without effect, handler
//! latency against the visibility timeout.
//!
//! # As a library
//!
//! [`Bench`] runs a profile in sim mode, in-process and deterministically, with a consumer
//! written in Rust: an async closure over the worker's [`SimClient`] (the queue, provider,
//! runtime and store traits of [`targets`]), restarted on kills like a built-in target. It
//! returns the run's [`Summary`] (summary.json's content). `examples/embed.rs` is a whole
//! example, run as a doc test of [`Bench`].
//!
//! # Layout
//!
//! The public surface is the root: [`Bench`], [`BenchError`], [`Summary`], [`Verdict`],
//! [`SimClient`], [`Scenario`], [`ProfileError`], [`RunError`] and [`targets`], and
//! [`summary`], which names every type a [`Summary`] holds. Every module below is `pub(crate)`;
//! what the `ackbench` binary, the benches (`harness/benches`), the end-to-end tests
//! (`tests/e2e`) and the fuzz targets (`fuzz/`) use of them is named in one `#[doc(hidden)]`
//! module, `internals`, which is not a stable interface.
//!
//! - `cli` and `commands`: the command line and one pipeline per subcommand (`main.rs` only
//!   dispatches).
//! - `profile`: YAML scenarios in two stages: raw (as written, with positions) and the resolved
//!   [`Scenario`] the runner reads; `--set` overrides; errors name file:line:column.
//! - `broker`: the embedded broker: leases, receive counts, DLQ, stale-ack policies. A pure state
//!   machine driven by explicit time, shared by sim and live mode; `broker::sqs` serves it over
//!   the SQS API.
//! - `provider`: the fake downstream: latency model with timed phases, errors and hangs, and the
//!   effect ledger; `provider::http` serves it over HTTP.
//! - `workload`: arrival processes, keys, bodies and poison selection.
//! - `chaos`: worker kills at handler points and on a timer, rolling deploys, acks and
//!   deliveries dropped or held back.
//! - `runner`: wires a run together and hands its history to a sink (`record::Sink`);
//!   `runner::sim` is the deterministic virtual-time executor, `runner::live` runs on wall time
//!   with real sockets and worker processes.
//! - `serving`: the accept loop of the SQS endpoint and the provider, with header-read and idle
//!   timeouts and a connection limit.
//! - `seed`: one seed, one named random stream per consumer of randomness.
//! - `seq_window`: entries by message seq in a window that moves as messages are let go (the
//!   broker models' messages, the streamed accounting's open messages).
//! - `record`: what a run records, events only; the only input of metrics, verdict and report.
//! - `metrics`: pure functions of a record (and of a streamed run's folds, kept beside it:
//!   `metrics::Recording`): accounting, histograms, time series.
//! - `verdict`: budgets to pass/fail and exit codes.
//! - `report`: everything a run writes (summary.json, console table, timeseries.csv, charts,
//!   report.html, junit.xml, summary.md, recorded data for re-rendering, `--trace`).
//! - `sizing`: sweeps over a grid of settings; lease, worker, limit and alert sizing.
//! - `fuzz_entry`: the parsers of outside bytes (SQS requests, the proxies' frames, the
//!   provider's calls) as entry points for `fuzz/`'s targets.
//! - `stdout`: printing that ends quietly when stdout is closed (`| head`): `stdout::outln!`.
//! - `summary`: the types of a [`Summary`]'s fields, by name.
//! - `internals`: what the binary, the benches, the end-to-end tests and the fuzz targets use.

mod bench;
pub(crate) mod broker;
pub(crate) mod chaos;
pub(crate) mod cli;
pub(crate) mod commands;
pub(crate) mod fuzz_entry;
#[doc(hidden)]
pub mod internals;
pub(crate) mod metrics;
pub(crate) mod profile;
pub(crate) mod provider;
pub(crate) mod record;
pub(crate) mod report;
pub(crate) mod runner;
pub(crate) mod seed;
pub(crate) mod seq_window;
pub(crate) mod serving;
pub(crate) mod sizing;
pub(crate) mod stdout;
pub mod summary;
pub(crate) mod verdict;
pub(crate) mod workload;

pub use ackbench_targets as targets;
pub use bench::{Bench, BenchError};
pub use profile::{ProfileError, Scenario};
pub use report::Summary;
pub use runner::sim::SimClient;
pub use runner::RunError;
pub use verdict::Verdict;

#[cfg(test)]
mod code_map_tests;
#[cfg(test)]
mod fuzz_entry_tests;
