//! The floor: a minimal discrete-event model of the benchmark's scenario, written for the
//! benchmark only, to compare the simulator against. A binary heap of timers, a queue of visible
//! messages, an event log; 64 workers, the same latency mix and arrival process, a 30 s lease
//! with 5 deliveries and a DLQ, a late ack refused. Nothing else: no targets, no provider model,
//! no chaos, no metrics.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, LogNormal};

const LEASE: u64 = 30_000_000_000;
const MAX_RECEIVES: u8 = 5;
const WORKERS: u32 = 64;
const RATE_PER_S: f64 = 80.0;

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Timer {
    /// The next message of the workload is published.
    Arrive,
    /// A handler's provider call answered: the worker acks (delivery `d` of `seq`).
    Done { worker: u32, seq: u32, d: u8 },
    /// Delivery `d`'s lease of `seq` ends.
    LeaseEnd { seq: u32, d: u8 },
}

#[derive(Clone, Copy)]
struct Message {
    receives: u8,
    /// Deleted or dead-lettered.
    settled: bool,
    /// Leased by its latest delivery.
    leased: bool,
}

/// One logged event: when, which message, what (1 delivered, 2 acked, 3 stale ack, 4 expired,
/// 5 dead-lettered, 6 published).
pub type LogEntry = (u64, u32, u8);

pub struct Outcome {
    pub deliveries: u64,
    pub log: Vec<LogEntry>,
}

/// Runs `n` messages to the end; the log is returned so it is not optimised away.
pub fn run(n: u32, seed: u64) -> Outcome {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    // 99% lognormal(240 ms, p99 900 ms), 1% uniform(31 s, 40 s), in nanoseconds.
    let mu = 240e6f64.ln();
    let sigma = (900e6f64.ln() - mu) / 2.326_347_874_040_841;
    let lognormal = LogNormal::new(mu, sigma).expect("valid");
    let mut heap: BinaryHeap<Reverse<(u64, u64, Timer)>> = BinaryHeap::new();
    let mut order = 0u64;
    let mut messages: Vec<Message> = Vec::with_capacity(n as usize);
    let mut visible: VecDeque<u32> = VecDeque::new();
    let mut idle: Vec<u32> = (1..=WORKERS).rev().collect();
    let mut log: Vec<LogEntry> = Vec::with_capacity(n as usize * 4);
    let mut deliveries = 0u64;
    let mut push = |heap: &mut BinaryHeap<_>, at: u64, t: Timer| {
        order += 1;
        heap.push(Reverse((at, order, t)));
    };
    let gap = |rng: &mut ChaCha8Rng| (-(1.0 - rng.random::<f64>()).ln() * 1e9 / RATE_PER_S) as u64;
    let first = gap(&mut rng);
    push(&mut heap, first, Timer::Arrive);
    while let Some(Reverse((now, _, timer))) = heap.pop() {
        match timer {
            Timer::Arrive => {
                messages.push(Message {
                    receives: 0,
                    settled: false,
                    leased: false,
                });
                let seq = messages.len() as u32;
                visible.push_back(seq);
                log.push((now, seq, 6));
                if seq < n {
                    let next = now + gap(&mut rng);
                    push(&mut heap, next, Timer::Arrive);
                }
            }
            Timer::Done { worker, seq, d } => {
                let m = &mut messages[(seq - 1) as usize];
                if m.leased && m.receives == d {
                    m.leased = false;
                    m.settled = true;
                    log.push((now, seq, 2));
                } else {
                    log.push((now, seq, 3));
                }
                idle.push(worker);
            }
            Timer::LeaseEnd { seq, d } => {
                let m = &mut messages[(seq - 1) as usize];
                if m.leased && m.receives == d {
                    m.leased = false;
                    if m.receives >= MAX_RECEIVES {
                        m.settled = true;
                        log.push((now, seq, 5));
                    } else {
                        visible.push_front(seq);
                        log.push((now, seq, 4));
                    }
                }
            }
        }
        // Hand-outs: every idle worker takes the front visible message.
        while let (Some(&worker), Some(&seq)) = (idle.last(), visible.front()) {
            idle.pop();
            visible.pop_front();
            let m = &mut messages[(seq - 1) as usize];
            m.receives += 1;
            m.leased = true;
            deliveries += 1;
            log.push((now, seq, 1));
            let latency = if rng.random::<f64>() < 0.99 {
                lognormal.sample(&mut rng).round() as u64
            } else {
                rng.random_range(31_000_000_000u64..=40_000_000_000)
            };
            let d = m.receives;
            push(&mut heap, now + latency, Timer::Done { worker, seq, d });
            push(&mut heap, now + LEASE, Timer::LeaseEnd { seq, d });
        }
    }
    Outcome { deliveries, log }
}
