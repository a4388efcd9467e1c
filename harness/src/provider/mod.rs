//! The fake downstream provider (e.g. an email API): a latency and error model with timed
//! phases, and the effect ledger that counts what it did.
//!
//! - [`latency`]: sampling of `fixed`, `uniform`, `lognormal`, `per_message` and `mix`.
//! - [`model`]: which latency and error a call gets, and whether the provider does its work
//!   (phases).
//! - [`select`]: which calls a phase selects (time window, key, attempt, delivery).
//! - [`ledger`]: every call and every effect, keyed by message; the single source of effect
//!   counts.
//! - [`http`]: the same model and ledger served over HTTP for live runs.

pub mod http;
pub(crate) mod latency;
pub(crate) mod ledger;
pub(crate) mod model;
pub(crate) mod select;

pub use ledger::{CallId, EffectLedger};
pub use model::ProviderModel;
pub use select::CallFacts;
