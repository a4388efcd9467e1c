//! Sweeps and sizing: run a profile over a grid of settings, and recommend a visibility timeout,
//! a worker count, a delivery limit and an alert threshold, each verified by a sim run.
//!
//! - `ackbench sweep` ([`sweep`]): the cartesian product of `--vary` axes ([`vary`], [`grid`]),
//!   run in parallel ([`parallel`]), written as sweep.csv, sweep.json ([`sweep_files`]), a table
//!   ([`sweep_table`]) and charts ([`chart`]).
//! - `ackbench size` ([`size`]): pure rules of the handler latency histogram and the settings
//!   ([`lease`], [`poll`] on a kind that polls batches, [`duplicates`], [`workers`],
//!   [`partitions`] on a consumer group, [`alert`], [`limit`], [`checks`], and [`fleet`] for
//!   an `autoscale` rule), then sim runs that check them, written as sizing.md, sizing.json
//!   and sizing.png/.svg (and a KEDA ScaledObject for an autoscaled fleet).
//!
//! Everything here reads profiles, runs and summaries through their public interfaces; the rules
//! are pure functions of histograms, settings and summaries, tested without running anything.

pub mod alert;
pub mod assemble;
pub mod chart;
pub mod checks;
pub mod duplicates;
pub mod error;
pub mod fleet;
pub mod grid;
pub mod hlog;
pub mod kinds;
pub mod lease;
pub mod limit;
pub mod markdown;
pub mod metric;
pub mod outcome;
pub mod parallel;
pub mod partitions;
pub mod plan;
pub mod poll;
pub mod probe;
pub mod readable;
pub mod recovery;
pub mod request;
pub mod sets;
pub mod settings;
pub mod simulate;
pub mod size;
pub mod sweep;
pub mod sweep_files;
pub mod sweep_table;
pub mod vary;
pub mod workers;

pub use error::SizingError;
pub use request::{SizeRequest, SweepRequest};
