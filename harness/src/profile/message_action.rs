//! What a `message` fault does to the delivery or the ack it selects: a word of the profile that
//! the kinds' descriptors also use (which actions a live run of the kind applies).

/// What a `message` rule does to the delivery or the ack it selects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageAction {
    /// The consumer believes it acked; the broker never hears of it.
    DropAck,
    /// The broker hears of the ack `delay` after the consumer sent it.
    DelayAck,
    /// The broker handed the message out (lease started, delivery counted); the consumer never
    /// sees it.
    DropDelivery,
    /// The consumer sees the delivery `delay` after the broker handed it out, its lease running.
    DelayDelivery,
}

impl MessageAction {
    pub const ALL: [MessageAction; 4] = [
        MessageAction::DropAck,
        MessageAction::DelayAck,
        MessageAction::DropDelivery,
        MessageAction::DelayDelivery,
    ];

    /// The name a profile writes.
    pub fn name(self) -> &'static str {
        match self {
            MessageAction::DropAck => "drop_ack",
            MessageAction::DelayAck => "delay_ack",
            MessageAction::DropDelivery => "drop_delivery",
            MessageAction::DelayDelivery => "delay_delivery",
        }
    }

    /// The action a profile names `name`.
    pub fn named(name: &str) -> Option<MessageAction> {
        Self::ALL.into_iter().find(|a| a.name() == name)
    }

    /// Whether it holds something back for a `delay` (else it drops it).
    pub fn delays(self) -> bool {
        matches!(self, MessageAction::DelayAck | MessageAction::DelayDelivery)
    }

    /// Whether it acts on the ack (else on the delivery).
    pub fn on_ack(self) -> bool {
        matches!(self, MessageAction::DropAck | MessageAction::DelayAck)
    }
}
