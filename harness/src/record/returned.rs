//! What ended a delivery before its ack, when the broker says so: a RabbitMQ channel or
//! connection closing returns every delivery it held, whoever closed it and why, and only one of
//! those closes is the consumer timeout. Recorded as [`crate::record::EventKind::Returned`]
//! just before the `LeaseExpired` it explains.

use serde::{Deserialize, Serialize};

/// Why the broker took a delivery back from the worker holding it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReturnWhy {
    /// The broker's own bound on holding a delivery ran out (RabbitMQ's `consumer_timeout`:
    /// its 406 channel close saying the delivery acknowledgement timed out).
    Lease,
    /// The worker closed the channel that held it (`channel.close`).
    ChannelClosed,
    /// The worker closed its connection (`connection.close`); frames it sent after the close,
    /// an ack among them, are discarded by the broker.
    ConnectionClosed,
    /// The worker's connection ended without a close: its process exited or was killed, or the
    /// link was cut.
    ConnectionLost,
    /// The broker closed the channel over an ack it refused (406, unknown delivery tag: a tag
    /// acked twice, or on a channel that never had it).
    AckRefused,
    /// The broker closed the channel for another reason, with this reply code.
    BrokerClosedChannel { code: u16 },
    /// The broker closed the connection, with this reply code (0: its end of the socket closed
    /// without one).
    BrokerClosedConnection { code: u16 },
    /// The worker handed it back (a nack or reject with requeue).
    Nack,
}

impl ReturnWhy {
    /// What ended the delivery, after "because" (`the worker closed its connection`), without
    /// a reply code.
    pub fn reason(self) -> &'static str {
        match self {
            ReturnWhy::Lease => "the consumer timeout ran out and the broker closed its channel",
            ReturnWhy::ChannelClosed => "the worker closed the channel that held it",
            ReturnWhy::ConnectionClosed => "the worker closed its connection",
            ReturnWhy::ConnectionLost => {
                "the worker's connection ended without a close (its process ended, or the link \
                 was cut)"
            }
            ReturnWhy::AckRefused => {
                "the broker refused an ack on its channel (unknown delivery tag) and closed it"
            }
            ReturnWhy::BrokerClosedChannel { .. } => "the broker closed its channel",
            ReturnWhy::BrokerClosedConnection { code: 0 } => {
                "the broker's end of the connection closed"
            }
            ReturnWhy::BrokerClosedConnection { .. } => "the broker closed the connection",
            ReturnWhy::Nack => "the worker handed it back (nack or reject with requeue)",
        }
    }

    /// [`ReturnWhy::reason`] with the broker's reply code, where it gave one.
    pub fn words(self) -> String {
        match self {
            ReturnWhy::BrokerClosedChannel { code }
            | ReturnWhy::BrokerClosedConnection { code: code @ 1.. } => {
                format!("{} (reply code {code})", self.reason())
            }
            _ => self.reason().to_string(),
        }
    }
}

/// Handlers whose delivery was taken back while they held it for a reason other than its lease
/// (summary.json's `handler_leases.returned_by`), by reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ReturnCounts {
    /// The worker closed the channel holding it.
    pub channel_closed: u64,
    /// The worker closed its connection.
    pub connection_closed: u64,
    /// The worker's connection ended without a close.
    pub connection_lost: u64,
    /// The broker refused an ack on the channel and closed it.
    pub ack_refused: u64,
    /// The broker closed the channel for another reason.
    pub broker_closed_channel: u64,
    /// The broker closed the connection.
    pub broker_closed_connection: u64,
}

impl ReturnCounts {
    /// Counts one handler whose delivery `why` ended; false for the reasons that are not counted
    /// here (the lease's end: an outlived handler; a nack: a release).
    pub fn count(&mut self, why: ReturnWhy) -> bool {
        let slot = match why {
            ReturnWhy::Lease | ReturnWhy::Nack => return false,
            ReturnWhy::ChannelClosed => &mut self.channel_closed,
            ReturnWhy::ConnectionClosed => &mut self.connection_closed,
            ReturnWhy::ConnectionLost => &mut self.connection_lost,
            ReturnWhy::AckRefused => &mut self.ack_refused,
            ReturnWhy::BrokerClosedChannel { .. } => &mut self.broker_closed_channel,
            ReturnWhy::BrokerClosedConnection { .. } => &mut self.broker_closed_connection,
        };
        *slot += 1;
        true
    }

    /// Each reason with its count, in words, the reasons with none left out:
    /// `(2, "the worker closed its connection")`.
    pub fn in_words(&self) -> Vec<(u64, &'static str)> {
        [
            (self.channel_closed, ReturnWhy::ChannelClosed),
            (self.connection_closed, ReturnWhy::ConnectionClosed),
            (self.connection_lost, ReturnWhy::ConnectionLost),
            (self.ack_refused, ReturnWhy::AckRefused),
            (
                self.broker_closed_channel,
                ReturnWhy::BrokerClosedChannel { code: 0 },
            ),
            (
                self.broker_closed_connection,
                ReturnWhy::BrokerClosedConnection { code: 1 },
            ),
        ]
        .into_iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, why)| (n, why.reason()))
        .collect()
    }

    /// Every handler counted, whatever the reason.
    pub fn total(&self) -> u64 {
        self.channel_closed
            + self.connection_closed
            + self.connection_lost
            + self.ack_refused
            + self.broker_closed_channel
            + self.broker_closed_connection
    }

    pub fn is_empty(&self) -> bool {
        *self == ReturnCounts::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lease_and_a_nack_are_not_returns_the_closes_are() {
        // Eight reasons: the lease (outlived) and the nack (a release) are not counted; the six
        // others each once, the two broker closes by kind whatever their code.
        let mut c = ReturnCounts::default();
        let counted: Vec<bool> = [
            ReturnWhy::Lease,
            ReturnWhy::Nack,
            ReturnWhy::ChannelClosed,
            ReturnWhy::ConnectionClosed,
            ReturnWhy::ConnectionLost,
            ReturnWhy::AckRefused,
            ReturnWhy::BrokerClosedChannel { code: 404 },
            ReturnWhy::BrokerClosedConnection { code: 320 },
        ]
        .into_iter()
        .map(|w| c.count(w))
        .collect();
        assert_eq!(counted, [false, false, true, true, true, true, true, true]);
        assert_eq!(c.in_words().len(), 6);
        assert!(c.in_words().iter().all(|(n, _)| *n == 1));
        assert!(ReturnCounts::default().in_words().is_empty());
        assert!(ReturnCounts::default().is_empty() && !c.is_empty());
    }
}
