//! The plan made on demand against the plan drawn all at once (the oracle: [`eager`], the
//! arrival and poison functions as they were before the plan stopped storing them): the same
//! instants, poison flags and sends for every arrival and poison kind, seed and size.

use std::time::Duration;

use proptest::prelude::*;

use super::arrival::arrival_times;
use super::poison::poison_flags;
use super::*;
use crate::profile::{Arrival, Poison, ProducerBackoff, ProducerSpec, RateProcess, Unacknowledged};

const S: Nanos = 1_000_000_000;

/// What the plan held when it stored everything: the instants, the flags and the sends.
struct Eager {
    at: Vec<Nanos>,
    poison: Vec<bool>,
    sends: Option<Vec<Attempt>>,
}

/// The plan drawn all at once, as [`plan_of`] drew it before.
fn eager(w: &WorkloadSpec, duration: Nanos, seed: u64, fifo: bool) -> Eager {
    let mut rng = crate::seed::stream(seed, "workload");
    let mut cap = w.count.unwrap_or(u64::MAX);
    if let Some(k) = &w.keys {
        cap = cap.min(k.len() as u64);
    }
    let at = arrival_times(&w.arrival, duration, cap, &mut rng);
    let keys = w.keys.as_ref().map(|k| k[..at.len()].to_vec());
    let poison = poison_flags(&w.poison, at.len(), keys.as_deref(), &mut rng);
    let key = |i: usize| match &keys {
        Some(k) => k[i].clone(),
        None => format!("msg-{}", i + 1),
    };
    let sends = match &w.producer {
        Some(p) => Some(producer::attempts(
            p,
            at.iter().copied(),
            key,
            &mut crate::seed::stream(seed, "producer"),
        )),
        None if fifo => Some(producer::single_attempts(at.iter().copied())),
        None => None,
    };
    Eager { at, poison, sends }
}

fn workload(arrival: Arrival, count: Option<u64>, poison: Poison) -> WorkloadSpec {
    WorkloadSpec {
        arrival,
        count,
        poison,
        keys: None,
        ingress: None,
        producer: None,
        groups: None,
        message: None,
    }
}

/// Checks every way of reading `plan` against `e`: length, instants in order and one by one,
/// flags one by one, the send cursor, the sends.
fn same(plan: &Plan, e: &Eager) -> Result<(), TestCaseError> {
    let n = e.at.len();
    prop_assert_eq!(plan.len(), n);
    prop_assert_eq!(plan.arrivals().len(), n);
    prop_assert_eq!(&plan.arrivals().collect::<Vec<_>>(), &e.at);
    // One by one: around each kept mark of a rate (every 1024th), the ends, and a stride.
    let mut probe: Vec<usize> = (0..n).step_by(97).collect();
    for m in (0..=n).step_by(1024) {
        probe.extend([m.saturating_sub(1), m, m + 1]);
    }
    probe.extend([n.saturating_sub(1), n, n + 1]);
    for &i in &probe {
        prop_assert_eq!(
            plan.publish_at(i),
            e.at.get(i).copied(),
            "publish_at({})",
            i
        );
    }
    let flags: Vec<bool> = (1..=n as Seq).map(|seq| plan.poison(seq)).collect();
    prop_assert_eq!(&flags, &e.poison);
    prop_assert_eq!(&plan.sends, &e.sends);
    // The sends in order, as the sim reads them: each one's instant and its message's flag.
    let want: Vec<(Nanos, bool)> = match &e.sends {
        Some(s) => s
            .iter()
            .map(|a| (a.at, e.poison[(a.planned - 1) as usize]))
            .collect(),
        None => e.at.iter().copied().zip(e.poison.iter().copied()).collect(),
    };
    prop_assert_eq!(plan.send_count(), want.len());
    for &i in &probe {
        prop_assert_eq!(plan.send_at(i), want.get(i).map(|w| w.0), "send_at({})", i);
    }
    let mut c = SendCursor::new(plan);
    let mut got = Vec::new();
    while let Some(at) = c.next_at() {
        got.push((at, c.advance(plan)));
    }
    prop_assert_eq!(c.sent(), plan.send_count());
    prop_assert_eq!(plan.send_at(c.sent()), None);
    prop_assert_eq!(got, want);
    Ok(())
}

/// An arrival process of about `size` messages: its kind, and the window that holds them.
fn arrival_of(kind: u8, size: u64, gap_ms: u64, listed: &[u64]) -> (Arrival, Nanos) {
    let gap = Duration::from_millis(gap_ms);
    let window = gap.as_nanos() as Nanos * size;
    match kind {
        0 => (Arrival::Every(gap), window),
        1 | 2 => {
            let process = if kind == 1 {
                RateProcess::Poisson
            } else {
                RateProcess::Uniform
            };
            let rate_per_s = 1000.0 / gap_ms as f64;
            (
                Arrival::Rate {
                    rate_per_s,
                    process,
                },
                window,
            )
        }
        3 => (
            Arrival::At(listed.iter().map(|&ms| Duration::from_millis(ms)).collect()),
            window,
        ),
        _ => (Arrival::Closed, window),
    }
}

fn poison_strategy() -> impl Strategy<Value = Poison> {
    prop_oneof![
        Just(Poison::None),
        (0u64..3_000).prop_map(Poison::First),
        (0.0f64..=1.0).prop_map(Poison::Fraction),
        // Default keys, explicit-key spellings, and spellings no message has (`msg-07`).
        prop::collection::vec(
            prop_oneof![
                (0u32..3_500).prop_map(|n| format!("msg-{n}")),
                (0u32..50).prop_map(|n| format!("msg-0{n}")),
                (0u32..200).prop_map(|n| format!("k{n}")),
            ],
            0..40
        )
        .prop_map(Poison::Keys),
    ]
}

fn producer_strategy() -> impl Strategy<Value = Option<ProducerSpec>> {
    prop_oneof![
        Just(None),
        (0.0f64..=1.0, 1u64..120, any::<bool>()).prop_map(|(p, backoff_s, some_keys)| {
            Some(ProducerSpec {
                unacknowledged: Unacknowledged::Probability(p),
                keys: some_keys.then(|| vec!["msg-2".into(), "k3".into()]),
                backoff: ProducerBackoff::List(vec![
                    Duration::from_secs(backoff_s),
                    Duration::from_secs(2 * backoff_s),
                ]),
            })
        }),
        (0u32..4).prop_map(|k| Some(ProducerSpec {
            unacknowledged: Unacknowledged::FirstAttempts(k),
            keys: None,
            backoff: ProducerBackoff::List(vec![Duration::from_secs(60); 3]),
        })),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 384, .. ProptestConfig::default() })]

    /// Every arrival kind with every poison kind, sizes from none to a few thousand (several
    /// kept marks of a rate), with or without a cap, explicit keys, a producer, a FIFO queue.
    #[test]
    fn the_plan_made_on_demand_is_the_plan_drawn_at_once(
        seed in any::<u64>(),
        kind in 0u8..5,
        size in prop_oneof![0u64..40, 900u64..3_200],
        gap_ms in 1u64..5_000,
        listed in prop::collection::vec(0u64..100_000, 0..60),
        count in prop_oneof![Just(None), (0u64..3_500).prop_map(Some)],
        poison in poison_strategy(),
        keys in prop_oneof![Just(None), (0usize..3_500, 1u64..400).prop_map(Some)],
        producer in producer_strategy(),
        fifo in any::<bool>(),
        stretch in 0.5f64..1.5,
    ) {
        let (arrival, window) = arrival_of(kind, size, gap_ms, &listed);
        // A window a little shorter or longer than `size` gaps, so a rate ends inside it.
        let duration = (window as f64 * stretch) as Nanos;
        // `Closed` needs a finite cap (resolve requires `count` or `keys`).
        let count = match (&arrival, count, keys) {
            (Arrival::Closed, None, None) => Some(size),
            _ => count,
        };
        let mut w = workload(arrival, count, poison);
        w.keys = keys.map(|(n, salt)| {
            (0..n as u64)
                .map(|i| match i % 3 {
                    0 => format!("k{}", (i * salt) % 211),
                    _ => format!("msg-{}", (i * salt) % 3_500),
                })
                .collect()
        });
        w.producer = producer;
        let plan = plan_of(&w, duration, seed, fifo);
        same(&plan, &eager(&w, duration, seed, fifo))?;
    }
}

#[test]
fn poison_fractions_draw_on_after_the_last_arrivals_gap() {
    // A Poisson process capped at 3,000 messages takes 3,001 draws (the first gap, then one
    // after each arrival); the poison fraction's draws start at draw 3,001, word 6,002 of the
    // `workload` stream. Uniform gaps draw nothing: the fraction starts at word 0.
    let poisson = Arrival::Rate {
        rate_per_s: 50.0,
        process: RateProcess::Poisson,
    };
    let w = workload(poisson, Some(3_000), Poison::Fraction(0.1));
    let plan = plan_of(&w, 3_600 * S, 7, false);
    assert_eq!(plan.len(), 3_000);
    let Selection::Drawn { draws, .. } = &plan.poison else {
        panic!("a fraction draws");
    };
    assert_eq!(draws.get_word_pos(), 6_002);
    let e = eager(&w, 3_600 * S, 7, false);
    assert_eq!(plan.arrivals().collect::<Vec<_>>(), e.at);
    assert_eq!(
        (1..=3_000).map(|q| plan.poison(q)).collect::<Vec<_>>(),
        e.poison
    );
    // 10% of 3,000: about 300 poison.
    let n = e.poison.iter().filter(|&&p| p).count();
    assert!((230..370).contains(&n), "{n}");

    let uniform = Arrival::Rate {
        rate_per_s: 50.0,
        process: RateProcess::Uniform,
    };
    let w = workload(uniform, None, Poison::Fraction(0.1));
    // 60 s at 50/s: 3,000 instants, 0 to 59.98 s.
    let plan = plan_of(&w, 60 * S, 7, false);
    assert_eq!(plan.len(), 3_000);
    let Selection::Drawn { draws, .. } = &plan.poison else {
        panic!("a fraction draws");
    };
    assert_eq!(draws.get_word_pos(), 0);
    assert_eq!(plan.publish_at(2_999), Some(59_980_000_000));
}

#[test]
fn the_cursor_counts_the_sends_of_a_retrying_producer() {
    // Two messages 30 s apart (`every: 30s`, count 2), first attempt unacknowledged, backoff
    // 1m: sends at 0 (msg-1), 30 s (msg-2), 60 s (msg-1 again), 90 s (msg-2 again): four sends
    // of two messages; message 1 is poison (`first: 1`), so sends 1 and 3 carry poison.
    let mut w = workload(
        Arrival::Every(Duration::from_secs(30)),
        Some(2),
        Poison::First(1),
    );
    w.producer = Some(ProducerSpec {
        unacknowledged: Unacknowledged::FirstAttempts(1),
        keys: None,
        backoff: ProducerBackoff::List(vec![Duration::from_secs(60)]),
    });
    let plan = plan_of(&w, 3_600 * S, 1, false);
    assert_eq!((plan.len(), plan.send_count()), (2, 4));
    let mut c = SendCursor::new(&plan);
    let mut got = Vec::new();
    while let Some(at) = c.next_at() {
        got.push((at / S, c.advance(&plan)));
    }
    assert_eq!(got, vec![(0, true), (30, false), (60, true), (90, false)]);
}

/// Peak memory of planning 100 million messages (`rate_per_s: 80`, Poisson, poison
/// `fraction`) over 400 h (80/s for 400 h is 115.2 million expected, so `count` caps it), and
/// of reading every send through a cursor. Prints the process's peak RSS (VmHWM) before and
/// after. Run alone:
/// `cargo test -p ackbench --lib workload::tests_lazy::a_plan_of_100_million_messages -- --ignored --exact --nocapture`
#[test]
#[ignore = "walks 100 million arrivals twice: minutes in a debug build"]
fn a_plan_of_100_million_messages() {
    fn vm_hwm_kib() -> u64 {
        let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("VmHWM")
    }
    const N: u64 = 100_000_000;
    let w = workload(
        Arrival::Rate {
            rate_per_s: 80.0,
            process: RateProcess::Poisson,
        },
        Some(N),
        Poison::Fraction(0.01),
    );
    let before = vm_hwm_kib();
    let started = std::time::Instant::now();
    let plan = plan_of(&w, 400 * 3_600 * S, 1, false);
    let planned = vm_hwm_kib();
    let plan_s = started.elapsed().as_secs_f64();
    assert_eq!(plan.len() as u64, N);
    let mut c = SendCursor::new(&plan);
    let (mut last, mut poison) = (0, 0u64);
    while let Some(at) = c.next_at() {
        assert!(at >= last);
        last = at;
        poison += u64::from(c.advance(&plan));
    }
    let read = vm_hwm_kib();
    println!(
        "100M messages: VmHWM {before} kB before, {planned} kB after planning ({plan_s:.1} s), \
         {read} kB after reading every send ({:.1} s in all); last publish {:.0} s, {poison} \
         poison",
        started.elapsed().as_secs_f64(),
        last as f64 / 1e9,
    );
    // The plan keeps 8 bytes per 1024 messages (about 0.8 MB here), not 9 bytes per message.
    assert!(planned - before < 16 * 1024, "{} kB", planned - before);
    assert!(read - before < 16 * 1024, "{} kB", read - before);
}
