//! The fake downstream provider (e.g. an email API): a latency and error model with timed
//! phases, and the effect ledger that counts what it did.
//!
//! - [`latency`]: sampling of `fixed`, `uniform`, `lognormal`, `per_message` and `mix`.
//! - [`model`]: which latency and error a call gets at a given instant (phases).
//! - [`ledger`]: every call and every effect, keyed by message; the single source of effect
//!   counts.
//! - [`http`]: the same model and ledger served over HTTP for live runs.

pub mod http;
pub(crate) mod latency;
pub(crate) mod ledger;
pub(crate) mod model;

pub use ledger::{CallId, EffectLedger};
pub use model::{CallPlan, ProviderModel};
