//! The provider over real HTTP, for live runs: the same latency, phase, error and hang model as
//! sim mode, and the same effect ledger.
//!
//! Each worker gets its own base URL, `http://ADDR/w/<worker>/`, so every call is attributed to
//! the worker that made it whatever its HTTP client. Any method and any path below that base is
//! the provider call (a reference target posts to `/send`). The effect key comes from the request:
//! a JSON pointer into the body (default `/key`), a header such as `Idempotency-Key`, or a path
//! segment ([`KeySource`]).
//!
//! An injected reset (`errors: { status: reset }`) is answered [`crate::serving::Unanswered`]:
//! the connection is closed with nothing written, after the effect if the phase says
//! `after_effect`.
//!
//! Kills before the reply leaves: at `call_started` (the request arrived) and `call_answered`
//! (the answer is ready, not yet written), the server asks its [`LiveHooks`] whether the worker
//! dies; if so it never answers, so no ack can race the kill and counts stay exact.
//!
//! Built on axum/hyper rather than wiremock: a wiremock responder decides its answer (and its
//! delay) before the delay starts, so it has no point between "the answer is ready" and "the
//! answer is written" where a `call_answered` kill can happen, and no way to record an effect at
//! the moment of the answer. (Load is not the reason: the `provider_concurrency` bench measures a
//! wiremock server beside this one, and it holds 10,000 slow calls too.)

mod clock;
mod key;
mod server;
pub mod standalone;

pub use clock::LiveClock;
pub use key::KeySource;
#[cfg(feature = "live")]
pub use server::LiveHooks;
pub use server::{HttpProvider, NoHooks};

#[cfg(test)]
mod tests;
