//! `message` faults on deliveries in the AMQP proxy: a `basic.deliver` the rules select (its
//! method, content header and body frames) is kept from the worker (`drop_delivery`) or passed
//! on `delay` later (`delay_delivery`).
//!
//! The server handed it out either way: it counts as the consumer's (against its `prefetch`)
//! until acked, or until its channel closes (the connection cut, `consumer_timeout`), when the
//! server requeues it as any unacked delivery; a held delivery whose channel closed first never
//! reaches the worker. A held delivery goes on whole, once all its body frames are in, and never
//! inside another delivery's content on its channel (AMQP's content frames of one channel do
//! not interleave): it waits for that content's last body frame. Its handler span starts when
//! it is handed out; the `received` kill rules are checked when it reaches the worker.

use std::collections::HashMap;
use std::time::Instant;

use super::AmqpConnection;
use crate::record::{Nanos, Seq};
use crate::runner::live::proxy::Flow;
use crate::runner::live::state::HeldDelivery;

/// What becomes of the body frames of the content a channel is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Body {
    /// They go on (a delivery no rule selected, or content other than a delivery).
    Passing,
    /// A dropped delivery's: they go nowhere.
    Dropping,
    /// A held delivery's: they join it.
    Holding,
}

/// A delivery held back.
#[derive(Debug)]
struct Later {
    due: Instant,
    channel: u16,
    seq: Seq,
    delivery: u32,
    bytes: Vec<u8>,
    /// Its last body frame is in.
    complete: bool,
    /// Due, and waiting for its channel's content in progress to end (or for its own).
    waiting: bool,
}

/// The deliveries one connection drops or holds back, and the content each channel is in.
#[derive(Debug, Default)]
pub(super) struct KeptDeliveries {
    /// Channel -> what its body frames do, and how many body bytes are still to come.
    content: HashMap<u16, (Body, u64)>,
    later: Vec<Later>,
}

/// A `basic.get-empty` (60, 72) on channel `ch`, its reserved cluster id empty.
pub(super) fn get_empty(ch: u16) -> Vec<u8> {
    let mut f = vec![1];
    f.extend_from_slice(&ch.to_be_bytes());
    f.extend_from_slice(&5u32.to_be_bytes());
    f.extend_from_slice(&[0, 60, 0, 72, 0, 0xCE]);
    f
}

impl KeptDeliveries {
    /// Channel `channel` closed: what it held never reaches the worker (the server requeued
    /// it), and no content is in progress on it.
    pub(super) fn channel_closed(&mut self, channel: u16) {
        self.later.retain(|l| l.channel != channel);
        self.content.remove(&channel);
    }

    /// When the next held delivery is due (one already due and waiting is not counted again).
    pub(super) fn next_due(&self) -> Option<Instant> {
        self.later
            .iter()
            .filter(|l| !l.waiting)
            .map(|l| l.due)
            .min()
    }

    /// Content of `size` body bytes begins on `channel`, its body frames doing `body`.
    fn began(&mut self, channel: u16, size: u64, body: Body) {
        if size > 0 {
            self.content.insert(channel, (body, size));
        }
    }

    /// Whether another delivery's content is going on to the worker on `channel` now.
    fn passing(&self, channel: u16) -> bool {
        matches!(self.content.get(&channel), Some((Body::Passing, _)))
    }
}

impl AmqpConnection {
    /// A content header of `size` body bytes on `channel` that is no delivery of the run (its
    /// body frames go on).
    pub(super) fn content_passes(&mut self, channel: u16, size: u64) {
        if self.deliveries_faulted {
            self.kept_deliveries.began(channel, size, Body::Passing);
        }
    }

    /// The rules' decision on delivery `delivery` of `seq`, handed out on `channel` as `bytes`
    /// (its method and content header, `size` body bytes to come; `get`: a `basic.get-ok`):
    /// `false` when no rule fired (the caller passes it on), else it is dropped or held here.
    /// A dropped `basic.get-ok` is answered `basic.get-empty` in its place (`out`): the worker,
    /// waiting on its `basic.get`, finds nothing and asks again.
    pub(super) fn delivery_kept(
        &mut self,
        (channel, size, get): (u16, u64, bool),
        (seq, delivery, lease_end): (Seq, u32, Nanos),
        bytes: Vec<u8>,
        out: &mut Vec<u8>,
    ) -> bool {
        if !self.deliveries_faulted {
            return false;
        }
        let fault = self.state.delivery_fault(self.worker, seq, delivery);
        let kept = &mut self.kept_deliveries;
        match fault {
            None => {
                kept.began(channel, size, Body::Passing);
                return false;
            }
            Some(HeldDelivery::Dropped) => {
                self.state
                    .observed_dropped_delivery(self.worker, seq, delivery, lease_end);
                kept.began(channel, size, Body::Dropping);
                if get {
                    out.extend(get_empty(channel));
                }
            }
            Some(HeldDelivery::Later(d)) => {
                self.state
                    .observed_handout(self.worker, seq, delivery, lease_end);
                kept.later.push(Later {
                    due: Instant::now() + d,
                    channel,
                    seq,
                    delivery,
                    bytes,
                    complete: size == 0,
                    waiting: false,
                });
                kept.began(channel, size, Body::Holding);
            }
        }
        true
    }

    /// A body frame of `len` bytes on `channel`: passed on, dropped or held with its delivery.
    pub(super) fn body_frame(&mut self, channel: u16, len: u64, bytes: Vec<u8>, out: &mut Vec<u8>) {
        let kept = &mut self.kept_deliveries;
        let Some((body, left)) = kept.content.get_mut(&channel) else {
            out.extend(bytes);
            return;
        };
        *left = left.saturating_sub(len);
        let (body, ended) = (*body, *left == 0);
        if ended {
            kept.content.remove(&channel);
        }
        match body {
            Body::Passing => out.extend(bytes),
            Body::Dropping => {}
            Body::Holding => {
                let held = kept
                    .later
                    .iter_mut()
                    .rev()
                    .find(|l| l.channel == channel && !l.complete);
                if let Some(l) = held {
                    l.bytes.extend(bytes);
                    l.complete = ended;
                }
            }
        }
    }

    /// The held deliveries due at `now` go on, each once it is whole and its channel is between
    /// contents.
    pub(super) fn deliveries_due(&mut self, now: Instant, out: &mut Vec<u8>) -> Flow {
        for l in self.kept_deliveries.later.iter_mut() {
            l.waiting |= l.due <= now;
        }
        self.pass_waiting(out)
    }

    /// Passes on every due delivery that can go now, in the order they came due; [`Flow::Cut`]
    /// when a `received` kill is decided for one (it stays here, as what follows).
    pub(super) fn pass_waiting(&mut self, out: &mut Vec<u8>) -> Flow {
        loop {
            let kept = &self.kept_deliveries;
            let next = (0..kept.later.len())
                .filter(|&i| {
                    let l = &kept.later[i];
                    l.waiting && l.complete && !kept.passing(l.channel)
                })
                .min_by_key(|&i| kept.later[i].due);
            let Some(i) = next else { return Flow::Go };
            let l = self.kept_deliveries.later.remove(i);
            if self.state.observed_arrival(self.worker, l.seq, l.delivery) {
                return Flow::Cut;
            }
            out.extend(l.bytes);
        }
    }
}
