//! Faults injected into a run. One fault kind per file, each with a probability and a scope.
//!
//! - [`kill_worker`]: kills a worker at a point of its handler (`received`, `call_started`,
//!   `call_answered`, or a checkpoint the target declares), or on a timer (`at`, `every`).
//!
//! Provider faults (slowness, errors) are the provider's timed phases (`provider::model`).

pub mod kill_worker;

pub use kill_worker::{KillSchedule, PointHit};
