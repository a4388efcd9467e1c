//! ackbench: a load-test and chaos harness for message-queue consumers.
//!
//! It drives a consumer (a *target*) against a broker with real lease semantics and a fake
//! downstream *provider*, injects faults, and counts *effects* per message key against what was
//! published: duplicate, lost and late effects, DLQ entries with and without effect, handler
//! latency against the visibility timeout.
//!
//! # Layout
//! - [`cli`] and [`commands`]: the command line and one pipeline per subcommand (`main.rs` only
//!   dispatches).
//! - [`profile`]: YAML scenarios in two stages: raw (as written, with positions) and the resolved
//!   [`profile::Scenario`] the runner reads; `--set` overrides; errors name file:line:column.
//! - [`broker`]: the embedded broker: leases, receive counts, DLQ, stale-ack policies. A pure
//!   state machine driven by explicit time, shared by sim and live mode; [`broker::sqs`] serves it
//!   over the SQS API.
//! - [`provider`]: the fake downstream: latency model with timed phases, errors and hangs, and
//!   the effect ledger; [`provider::http`] serves it over HTTP.
//! - [`workload`]: arrival processes, keys, bodies and poison selection.
//! - [`chaos`]: worker kills at handler points and on a timer.
//! - [`runner`]: wires a run together; [`runner::sim`] is the deterministic virtual-time executor,
//!   [`runner::live`] runs on wall time with real sockets and worker processes.
//! - [`serving`]: the accept loop of the SQS endpoint and the provider, with header-read and
//!   idle timeouts and a connection limit.
//! - [`seed`]: one seed, one named random stream per consumer of randomness.
//! - [`seq_window`]: entries by message seq in a window that moves as messages are let go (the
//!   broker models' messages, the streamed accounting's open messages).
//! - [`record`]: what a run records; the only input of metrics, verdict and report.
//! - [`metrics`]: pure functions of a [`record::RunRecord`]: accounting, histograms, time series.
//! - [`verdict`]: budgets to pass/fail and exit codes.
//! - [`report`]: everything a run writes (summary.json, console table, timeseries.csv, charts,
//!   report.html, junit.xml, summary.md, recorded data for re-rendering, `--trace`).
//! - [`sizing`]: sweeps over a grid of settings; lease, worker, limit and alert sizing.
//! - [`stdout`]: printing that ends quietly when stdout is closed (`| head`).

pub mod broker;
pub mod chaos;
pub mod cli;
pub mod commands;
pub mod metrics;
pub mod profile;
pub mod provider;
pub mod record;
pub mod report;
pub mod runner;
pub mod seed;
pub mod seq_window;
pub mod serving;
pub mod sizing;
pub mod stdout;
pub mod verdict;
pub mod workload;

#[cfg(test)]
mod code_map_tests;
