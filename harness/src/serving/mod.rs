//! Serving HTTP on a socket, for the SQS endpoint and the provider: one accept loop with the
//! limits a long-running server needs against clients that hold connections.
//!
//! - **Header-read timeout**: a request's head must arrive within it of its first byte, and its
//!   body within it of the head; otherwise the connection is closed (a slowloris client that
//!   sends its head byte by byte holds a connection that long at most).
//! - **Idle timeout**: a keep-alive connection with no request for this long is closed.
//! - **Connection limit**: at most this many connections are served at once; further ones wait
//!   in the listen backlog until one closes.
//!
//! A request being answered is never cut, however long it takes: a `ReceiveMessage` long poll
//! of 20 s, or a provider call a slow phase holds for 40 s (or a hang, which only the client
//! ends). See [`ServeLimits`] for the defaults.
//!
//! A handler can answer [`Unanswered`]: its connection is closed at once, nothing written (the
//! provider's injected reset).
//!
//! [`trim`] gives memory freed by closed connections and purged queues back to the system.

mod accept;
mod activity;
mod bind;
mod body;
mod limits;
mod listen;
pub mod stop;
pub mod trim;

pub use accept::{serve, Unanswered};
pub use bind::listen;
pub use limits::ServeLimits;
pub use listen::parse_listen;
