//! Which replicas a scale-in removes: the ReplicaSet controller's order. Not ready before ready
//! (a worker still starting goes first), then the lower `pod-deletion-cost`, then the one ready
//! for the shortest time, then the one made last; equal in all, the higher worker number.
//! (Kubernetes' LogarithmicScaleDown compares ready times by powers of two and breaks the
//! remaining ties at random; here the exact times decide, so a run repeats.)

use std::cmp::Reverse;

use crate::record::{Nanos, WorkerId};

/// A replica as the controller ranks it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Replica {
    pub worker: WorkerId,
    /// When it was made (a scale-out's instant; 0 for the fleet the run starts with).
    pub made: Nanos,
    /// When it became ready (took its first message's turn); `None` while starting.
    pub ready: Option<Nanos>,
    /// Its `controller.kubernetes.io/pod-deletion-cost`.
    pub cost: i32,
}

/// The `n` replicas a scale-in by `n` removes, first removed first.
pub fn to_remove(replicas: &[Replica], n: usize) -> Vec<WorkerId> {
    let mut ranked: Vec<&Replica> = replicas.iter().collect();
    ranked.sort_by_key(|r| {
        (
            r.ready.is_some(),
            r.cost,
            Reverse(r.ready),
            Reverse(r.made),
            Reverse(r.worker),
        )
    });
    ranked.into_iter().take(n).map(|r| r.worker).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Nanos = 1_000_000_000;

    fn ready(worker: WorkerId, made: u64, ready: u64) -> Replica {
        Replica {
            worker,
            made: made * S,
            ready: Some(ready * S),
            cost: 0,
        }
    }

    #[test]
    fn the_youngest_replica_goes_first() {
        // Workers 1-3 from the start (ready at 0s), 4 ready at 60s, 5 at 45s: a scale-in by 2
        // removes 4 (ready 60s) then 5 (ready 45s).
        let fleet = [
            ready(1, 0, 0),
            ready(2, 0, 0),
            ready(3, 0, 0),
            ready(4, 30, 60),
            ready(5, 30, 45),
        ];
        assert_eq!(to_remove(&fleet, 2), vec![4, 5]);
        // Equal in all, the higher number first: 3, then 2.
        assert_eq!(to_remove(&fleet[..3], 2), vec![3, 2]);
    }

    #[test]
    fn a_starting_replica_and_a_low_deletion_cost_go_before_the_youngest() {
        // Worker 6 is still starting: it goes first though made before 4 was ready. Worker 1
        // has cost -5: before every ready replica of cost 0, however old.
        let mut fleet = vec![ready(1, 0, 0), ready(2, 0, 0), ready(4, 30, 60)];
        fleet.push(Replica {
            worker: 6,
            made: 50 * S,
            ready: None,
            cost: 0,
        });
        fleet[0].cost = -5;
        assert_eq!(to_remove(&fleet, 3), vec![6, 1, 4]);
    }
}
