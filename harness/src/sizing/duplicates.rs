//! The predicted duplicate rate of a lease.
//!
//! A delivery whose handler outlives the lease (chance `p`) is followed by another delivery
//! that does the work again, up to the delivery limit `k`: a consumer that repeats its work on
//! every delivery (ack after the work) has `p + p^2 + ... + p^(k-1)` duplicate effects per
//! message on average, and `p / (1 - p)` without a limit. Consumers that recognise a repeat
//! (dedupe table, status fence, claim) turn these redeliveries into no-ops: for them it is the
//! rate of redeliveries their fence must absorb.

/// Duplicate effects per message predicted for outlive chance `p` and delivery limit `limit`
/// (0 = no limit); `None` when it has no bound (every delivery outlives its lease, no limit).
pub fn predicted_duplicate_rate(p: f64, limit: u32) -> Option<f64> {
    let p = p.clamp(0.0, 1.0);
    if limit == 0 {
        return (p < 1.0).then(|| p / (1.0 - p));
    }
    Some((1..limit).map(|i| p.powi(i as i32)).sum())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_delivery_outliving_its_lease_repeats_the_work_up_to_the_limit() {
        // The reference incident: p = 1, limit 3: two duplicates per order (324 emails for 108).
        assert_eq!(predicted_duplicate_rate(1.0, 3), Some(2.0));
        assert_eq!(predicted_duplicate_rate(0.0, 3), Some(0.0));
        assert_eq!(predicted_duplicate_rate(0.5, 3), Some(0.75));
        assert_eq!(predicted_duplicate_rate(0.5, 1), Some(0.0));
    }

    #[test]
    fn without_a_limit_the_rate_is_geometric_or_unbounded() {
        assert_eq!(predicted_duplicate_rate(0.5, 0), Some(1.0));
        assert_eq!(predicted_duplicate_rate(1.0, 0), None);
    }
}
