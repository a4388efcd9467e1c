//! A FIFO queue's message groups (`MessageGroupId`): within a group one message is in flight at a
//! time and order holds, so a message that is slow, or poison and redelivered until its delivery
//! limit, holds back the rest of its group (head-of-line blocking) and nothing else.
//!
//! The broker keeps its one visible queue; a receive takes the first visible message whose group
//! has nothing in flight. Since a lease that ends puts its message back at the front, and only a
//! group's first visible message is ever handed out, each group's messages stay in publish order
//! in that queue. This keeps the per-group counts a receive needs: messages in flight and visible
//! per group, and how many visible messages belong to a group that could take a receive now.

use super::state::MessageState;

/// Per-group counts, updated on every change of a message's state.
#[derive(Debug, Clone, Default)]
pub struct Groups {
    /// Messages leased (in flight, a delivery's visibility changed included), per group.
    in_flight: Vec<u32>,
    /// Visible messages, per group.
    visible: Vec<u32>,
    /// Visible messages of groups with nothing in flight: what a receive could take now.
    receivable: u64,
}

impl Groups {
    pub fn new() -> Groups {
        Groups::default()
    }

    fn grow(&mut self, group: u32) -> usize {
        let g = group as usize;
        if g >= self.in_flight.len() {
            self.in_flight.resize(g + 1, 0);
            self.visible.resize(g + 1, 0);
        }
        g
    }

    /// The contribution of group `g` to `receivable`.
    fn receivable_in(&self, g: usize) -> u64 {
        if self.in_flight[g] == 0 {
            u64::from(self.visible[g])
        } else {
            0
        }
    }

    /// A message of `group` went from state `from` (`None`: it is new) to `to`.
    pub fn moved(&mut self, group: u32, from: Option<MessageState>, to: MessageState) {
        let g = self.grow(group);
        let before = self.receivable_in(g);
        let count = |s: &MessageState| match s {
            MessageState::Visible => (0, 1),
            MessageState::Leased { .. } => (1, 0),
            _ => (0, 0),
        };
        if let Some(from) = from {
            let (f, v) = count(&from);
            self.in_flight[g] -= f;
            self.visible[g] -= v;
        }
        let (f, v) = count(&to);
        self.in_flight[g] += f;
        self.visible[g] += v;
        self.receivable = self.receivable - before + self.receivable_in(g);
    }

    /// True when group `group` has no message in flight.
    pub fn is_free(&self, group: u32) -> bool {
        self.in_flight.get(group as usize).is_none_or(|&n| n == 0)
    }

    /// Visible messages a receive could take now.
    pub fn receivable(&self) -> u64 {
        self.receivable
    }

    /// Messages of `group` in flight and visible.
    #[cfg(test)]
    pub fn counts(&self, group: u32) -> (u32, u32) {
        let g = group as usize;
        (
            self.in_flight.get(g).copied().unwrap_or(0),
            self.visible.get(g).copied().unwrap_or(0),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LEASED: MessageState = MessageState::Leased {
        worker: 1,
        nonce: 1,
        lease_end: 30,
    };

    #[test]
    fn a_group_with_a_message_in_flight_holds_back_its_visible_ones() {
        // Group 0: messages a, b visible (2 receivable); a leased: b waits (0 receivable from
        // group 0). Group 1: c visible: 1 receivable. a's lease ends: a and b visible, 3 in all.
        let mut g = Groups::new();
        g.moved(0, None, MessageState::Visible);
        g.moved(0, None, MessageState::Visible);
        assert_eq!(g.receivable(), 2);
        g.moved(0, Some(MessageState::Visible), LEASED);
        assert_eq!((g.receivable(), g.is_free(0)), (0, false));
        g.moved(1, None, MessageState::Visible);
        assert_eq!((g.receivable(), g.is_free(1)), (1, true));
        g.moved(0, Some(LEASED), MessageState::Visible);
        assert_eq!(g.receivable(), 3);
        // a deleted after a second lease: group 0 has b visible, nothing in flight.
        g.moved(0, Some(MessageState::Visible), LEASED);
        g.moved(0, Some(LEASED), MessageState::Deleted);
        assert_eq!((g.counts(0), g.receivable()), ((0, 1), 2));
    }
}
