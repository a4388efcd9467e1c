//! What a live run read from the broker itself, apart from what it observed: the broker's own
//! DLQ depth, backlog and in-flight count, sampled on `run.sample_every` over the run's own
//! connection to the server. Instants are profile time, like the rest of the record.

use super::Nanos;

/// The figures a broker can be asked for, by their names in summary.json and the report.
pub const FIGURES: [&str; 3] = ["dlq", "backlog", "in_flight"];

/// Every sample of the run, and what the broker could not give.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BrokerSamples {
    /// The interval the run sampled on (profile time).
    pub every: Nanos,
    /// The samples that succeeded, in time order.
    pub samples: Vec<BrokerSample>,
    /// Samples that failed (no answer in time, an error): counted, not fatal.
    pub failed: u64,
    /// The last failure's reason, if any.
    pub last_failure: Option<String>,
    /// Each figure the kind cannot give ([`FIGURES`]), with the reason.
    pub unavailable: Vec<Unavailable>,
}

/// The broker's figures at one instant; `None` for one the kind cannot give.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BrokerSample {
    /// When the sample was asked for.
    pub at: Nanos,
    /// Messages the broker gave up on and keeps (its DLQ, MaxDeliver, the dead stream).
    pub dlq: Option<u64>,
    /// Messages waiting to be handed out.
    pub backlog: Option<u64>,
    /// Messages handed out and not yet acked.
    pub in_flight: Option<u64>,
}

impl BrokerSample {
    /// Figure `name` ([`FIGURES`]) of the sample.
    pub fn figure(&self, name: &str) -> Option<u64> {
        match name {
            "dlq" => self.dlq,
            "backlog" => self.backlog,
            "in_flight" => self.in_flight,
            _ => None,
        }
    }
}

/// A figure the kind cannot give, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unavailable {
    /// One of [`FIGURES`].
    pub figure: String,
    pub reason: String,
}
