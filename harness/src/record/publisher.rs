//! How a live run's own producer kept the plan's schedule: when each send was handed to the
//! broker against when the plan wanted it, and how often the broker made it wait.

use super::Nanos;

/// The run's own sends as they were made (a live run that publishes the plan itself; a sim
/// run publishes at each planned instant, and an ingress load records its own requests).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PublisherRecord {
    /// Per send, in send order: how long after its planned instant it was handed to the broker
    /// (profile nanoseconds; 0 for one on time).
    pub lags: Vec<Nanos>,
    /// When the first and the last send were handed to the broker (`None`: no send was made).
    pub first_sent: Option<Nanos>,
    pub last_sent: Option<Nanos>,
    /// When the last of them was confirmed by the broker (`None`: none was, or none was made).
    pub last_confirmed: Option<Nanos>,
    /// The most sends left unconfirmed at once (`run.publish_window`).
    pub window: u32,
    /// Sends that waited for the oldest confirmation first, the window being full: the broker
    /// pushing back (their wait is in their lag).
    pub pushed_back: u64,
}
