//! Where each message is: the broker's per-message state.

use crate::record::{Nanos, WorkerId};

/// The state of one message. Every published message is in exactly one of these.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageState {
    /// Published with a delay; visible at `until`.
    Delayed { until: Nanos },
    /// In the visible queue, waiting for a receive.
    Visible,
    /// Handed to `worker`; the lease of receipt `nonce` ends at `lease_end`.
    Leased {
        worker: WorkerId,
        nonce: u32,
        lease_end: Nanos,
    },
    /// Acked: gone for good.
    Deleted,
    /// Moved to the dead-letter queue.
    DeadLettered,
}

/// How many messages are in each state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub delayed: u64,
    pub visible: u64,
    pub leased: u64,
    pub deleted: u64,
    pub dead_lettered: u64,
}

impl Counts {
    pub(crate) fn slot(&mut self, s: MessageState) -> &mut u64 {
        match s {
            MessageState::Delayed { .. } => &mut self.delayed,
            MessageState::Visible => &mut self.visible,
            MessageState::Leased { .. } => &mut self.leased,
            MessageState::Deleted => &mut self.deleted,
            MessageState::DeadLettered => &mut self.dead_lettered,
        }
    }

    /// Messages the main queue still holds (visible, leased or delayed).
    pub fn in_queue(&self) -> u64 {
        self.delayed + self.visible + self.leased
    }
}
