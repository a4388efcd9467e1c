//! What one connection is doing, as its watchdog sees it: a request in progress (never cut), a
//! request head arriving (the header-read timeout runs from its first byte), or idle (the idle
//! timeout runs from the end of the last request, or from the accept).

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

use super::ServeLimits;

/// Why a watchdog closes a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expiry {
    HeaderRead,
    Idle,
}

/// The connection's state, shared by its socket reader, its requests and its watchdog. Times
/// are nanoseconds since the accept.
#[derive(Debug)]
pub struct Activity {
    start: Instant,
    /// Requests being answered.
    in_flight: AtomicU32,
    /// First byte of the head now arriving, plus 1 (0: none arriving).
    head_from: AtomicU64,
    /// End of the last request (0: the accept).
    idle_from: AtomicU64,
    /// Wakes the watchdog when a head starts to arrive (its deadline came earlier).
    pub wake: Notify,
    /// Tells the connection to close at once, its request unanswered ([`super::Unanswered`]).
    pub close: Notify,
}

impl Activity {
    pub fn new() -> Activity {
        Activity {
            start: Instant::now(),
            in_flight: AtomicU32::new(0),
            head_from: AtomicU64::new(0),
            idle_from: AtomicU64::new(0),
            wake: Notify::new(),
            close: Notify::new(),
        }
    }

    fn now(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_nanos()).unwrap_or(u64::MAX - 1)
    }

    /// Bytes came in. With no request in progress they are a new head.
    pub fn read(&self) {
        if self.in_flight.load(Ordering::SeqCst) == 0 && self.head_from.load(Ordering::SeqCst) == 0
        {
            self.head_from.store(self.now() + 1, Ordering::SeqCst);
            self.wake.notify_one();
        }
    }

    /// A request's head is in: it is being answered.
    pub fn begin(&self) {
        self.in_flight.fetch_add(1, Ordering::SeqCst);
        self.head_from.store(0, Ordering::SeqCst);
    }

    /// A request was answered (or dropped): the connection is idle from now if it was the last.
    pub fn end(&self) {
        self.idle_from.store(self.now(), Ordering::SeqCst);
        self.head_from.store(0, Ordering::SeqCst);
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
    }

    /// When the watchdog must next look, and what expires then: `None` while a request is in
    /// progress (it looks again after `idle_timeout`, or when woken).
    pub fn deadline(&self, limits: &ServeLimits) -> (Instant, Option<Expiry>) {
        let at = |ns: u64, d: Duration| self.start + Duration::from_nanos(ns) + d;
        let state = (
            self.in_flight.load(Ordering::SeqCst),
            self.head_from.load(Ordering::SeqCst),
            self.idle_from.load(Ordering::SeqCst),
        );
        match decide(state) {
            Due::Busy => (Instant::now() + limits.idle_timeout, None),
            Due::Head(from) => (
                at(from, limits.header_read_timeout),
                Some(Expiry::HeaderRead),
            ),
            Due::Idle(from) => (at(from, limits.idle_timeout), Some(Expiry::Idle)),
        }
    }
}

/// What a connection's timers wait for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Due {
    /// A request is being answered: no timer.
    Busy,
    /// A head started arriving at this time.
    Head(u64),
    /// Idle since this time.
    Idle(u64),
}

/// (requests in progress, head start + 1 or 0, idle since) -> what runs.
fn decide((in_flight, head_from, idle_from): (u32, u64, u64)) -> Due {
    if in_flight > 0 {
        Due::Busy
    } else if head_from > 0 {
        Due::Head(head_from - 1)
    } else {
        Due::Idle(idle_from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_in_progress_is_never_timed_and_a_head_times_from_its_first_byte() {
        // Nothing yet: idle since the accept.
        assert_eq!(decide((0, 0, 0)), Due::Idle(0));
        // The first byte of a head at 7 (stored as 8).
        assert_eq!(decide((0, 8, 0)), Due::Head(7));
        // Its head complete: being answered, however long.
        assert_eq!(decide((1, 0, 0)), Due::Busy);
        // Answered at 50: idle from 50.
        assert_eq!(decide((0, 0, 50)), Due::Idle(50));
    }

    #[test]
    fn bytes_while_answering_are_not_a_head_and_the_end_starts_the_idle_time() {
        let a = Activity::new();
        a.begin();
        a.read();
        assert_eq!(a.deadline(&ServeLimits::default()).1, None);
        a.end();
        assert_eq!(a.deadline(&ServeLimits::default()).1, Some(Expiry::Idle));
        a.read();
        assert_eq!(
            a.deadline(&ServeLimits::default()).1,
            Some(Expiry::HeaderRead)
        );
    }
}
