//! The run's own producer on the plan's schedule: each send is handed to the broker as soon as
//! it is due ([`Sends::send`], in plan order), and its confirmation awaited later, with up to
//! `run.publish_window` of them outstanding (in a `FuturesOrdered`, oldest first). Only when
//! the window is full does a send wait, for the oldest confirmation: the broker pushing back.
//! So a send is late against its planned instant by the loop's wake-up (the runtime's timers
//! have a millisecond's grain), by the hand-over of the sends due before it, and by what the
//! broker makes it wait; each send's lag is recorded ([`PublisherRecord`]).
//!
//! A confirmation that fails fails the run with its message; confirmations are taken in send
//! order, so the first failure is the earliest send's, as when each send awaited its own.
//! Publishing lasts until every send is made and confirmed.

use futures::stream::FuturesOrdered;
use futures::{FutureExt, StreamExt};

use super::kinds::Confirmation;
use super::sends::Sends;
use crate::provider::http::LiveClock;
use crate::record::{Nanos, PublisherRecord};
use crate::workload::Plan;

/// The sends of a run, made on schedule with a window of unconfirmed ones.
pub struct Publisher<'a> {
    sends: Sends<'a>,
    plan: &'a Plan,
    clock: LiveClock,
    /// The next send to make (0-based, time order) and when it is due.
    next: usize,
    next_at: Option<Nanos>,
    window: usize,
    unconfirmed: FuturesOrdered<Confirmation>,
    record: PublisherRecord,
}

impl<'a> Publisher<'a> {
    /// The publisher of `plan`'s sends through `sends`, leaving at most `window` unconfirmed
    /// (at least 1); `from`: the first send to make (the plan's length: nothing to send).
    pub fn new(
        sends: Sends<'a>,
        plan: &'a Plan,
        clock: LiveClock,
        window: u32,
        from: usize,
    ) -> Publisher<'a> {
        Publisher {
            sends,
            plan,
            clock,
            next: from,
            next_at: plan.send_at(from),
            window: window.max(1) as usize,
            unconfirmed: FuturesOrdered::new(),
            record: PublisherRecord {
                window: window.max(1),
                ..PublisherRecord::default()
            },
        }
    }

    /// Sends left to make or to be confirmed.
    pub fn publishing(&self) -> bool {
        self.next_at.is_some() || !self.unconfirmed.is_empty()
    }

    /// When the next send is due (profile time); `None` once every send is made.
    pub fn next_due(&self) -> Option<Nanos> {
        self.next_at
    }

    /// Has a confirmation outstanding.
    pub fn awaiting(&self) -> bool {
        !self.unconfirmed.is_empty()
    }

    /// The sends so far.
    pub fn sends(&self) -> &Sends<'a> {
        &self.sends
    }

    /// Makes every send due by now, each at the instant it is handed over; with the window
    /// full, first waits for the oldest confirmation.
    pub async fn send_due(&mut self) -> Result<(), String> {
        while let Some(due) = self.next_at {
            if due > self.clock.now() {
                break;
            }
            if self.unconfirmed.len() >= self.window {
                // A confirmation already in is taken without a wait: only a wait is push-back.
                match self.unconfirmed.next().now_or_never() {
                    Some(Some(confirmed)) => self.confirmed(confirmed)?,
                    _ => {
                        self.record.pushed_back += 1;
                        self.confirm_oldest().await?;
                    }
                }
            }
            let now = self.clock.now();
            let confirmation = self.sends.send(self.next, now).await?;
            self.unconfirmed.push_back(confirmation);
            self.record.first_sent.get_or_insert(now);
            self.record.last_sent = Some(now);
            self.next += 1;
            self.next_at = self.plan.send_at(self.next);
        }
        Ok(())
    }

    /// Waits for the oldest outstanding confirmation (forever when there is none).
    pub async fn confirm_oldest(&mut self) -> Result<(), String> {
        match self.unconfirmed.next().await {
            Some(confirmed) => self.confirmed(confirmed),
            None => std::future::pending().await,
        }
    }

    /// The oldest confirmation is in.
    fn confirmed(&mut self, confirmed: Result<(), String>) -> Result<(), String> {
        confirmed?;
        self.record.last_confirmed = Some(self.clock.now());
        Ok(())
    }

    /// The sends made and what the publisher recorded of them.
    pub fn finish(mut self) -> (Sends<'a>, PublisherRecord) {
        self.record.lags = std::mem::take(&mut self.sends.lags);
        (self.sends, self.record)
    }
}
