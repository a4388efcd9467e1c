//! Which consumers a round of hand-outs passes over (`idle.rs`), worked out by hand.

use super::tests::{config, Run, S};

/// Bits of the workers passed over (worker 1 is bit 0).
fn idle(r: &Run) -> u64 {
    r.k.idle_receivers().first().copied().unwrap_or(0)
}

#[test]
fn a_member_that_found_nothing_is_passed_over_until_its_partition_gets_a_record() {
    // Two partitions, two workers. Both join at 0 s; the first rebalance completes at the
    // broker's 3 s initial delay: range gives partition 0 to worker 1 and partition 1 to
    // worker 2. Until then a poll rejoins or waits for the rebalance: nobody is passed over.
    let mut r = Run::new(config(2, 10));
    assert!(r.recv(1).is_none() && r.recv(2).is_none());
    assert_eq!(idle(&r), 0);
    r.at(3 * S);
    assert_eq!(r.k.generation(), 1);
    assert_eq!(idle(&r), 0, "the rebalance's completion unmarks everyone");
    // Each polls its empty partition: found nothing, blocked in a poll, marked (bits 0 and 1).
    assert!(r.recv(1).is_none() && r.recv(2).is_none());
    assert_eq!(idle(&r), 0b11);
    // Record 1 goes to partition (1 - 1) % 2 = 0: worker 1's, so worker 1 polls again and takes
    // it; worker 2 is still passed over.
    r.publish(1);
    assert_eq!(idle(&r), 0b10);
    let got = r.recv(1).expect("record 1");
    assert_eq!(got.seq, 1);
    assert_eq!(idle(&r), 0b10);
    // Record 2 goes to partition 1: worker 2's.
    r.publish(1);
    assert_eq!(idle(&r), 0b00);
    assert_eq!(r.recv(2).expect("record 2").seq, 2);
    // Both at work, nothing marked; worker 1 commits record 1 and polls: nothing past offset 1
    // of partition 0, so it is passed over again (a commit changes nobody's positions).
    r.ack(got, 1).expect("its commit");
    assert!(r.recv(1).is_none());
    assert_eq!(idle(&r), 0b01);
}

#[test]
fn a_rebalance_or_a_member_with_two_partitions_is_never_passed_over() {
    // One worker owns both partitions after the rebalance at 3 s: each poll turns which
    // partition is fetched first, so it is always made (never marked).
    let mut r = Run::new(config(2, 10));
    assert!(r.recv(1).is_none());
    r.at(3 * S);
    assert!(r.recv(1).is_none());
    assert_eq!(idle(&r), 0);
    // One partition each, both blocked in a poll (marked). Worker 3 joins: the rebalance it
    // starts unmarks everyone; workers 1 and 2, blocked in a poll, rejoin at once, so it
    // completes at once: range over 3 members and 2 partitions leaves worker 3 none. Worker 3,
    // owning nothing, found nothing: marked (bit 2).
    let mut r = Run::new(config(2, 10));
    assert!(r.recv(1).is_none() && r.recv(2).is_none());
    r.at(3 * S);
    assert!(r.recv(1).is_none() && r.recv(2).is_none());
    assert_eq!(idle(&r), 0b011);
    assert!(r.recv(3).is_none());
    assert_eq!(r.k.generation(), 2);
    assert_eq!(idle(&r), 0b100);
    // Record 1 (partition 0) to worker 1, which is then at work. Worker 4 joins: worker 1 has
    // not rejoined, so the rebalance stays in progress, and nobody is passed over while it is:
    // workers 2 and 3 poll again (each poll asks whether it may complete).
    r.publish(1);
    assert_eq!(r.recv(1).expect("record 1").seq, 1);
    assert!(r.recv(4).is_none());
    assert_eq!(r.k.generation(), 2);
    assert!(r.recv(2).is_none() && r.recv(3).is_none());
    assert_eq!(idle(&r), 0, "a rebalance in progress");
}
