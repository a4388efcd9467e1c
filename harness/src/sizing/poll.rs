//! The poll rule, for a kind whose consumer polls batches ([`KindDescriptor::batch`], Kafka):
//! the records per poll and the poll interval a handler latency histogram calls for.
//!
//! A poll returns up to `records` records, which the consumer handles one by one before it
//! polls again; so the time between two polls is about `records x` the time one record takes.
//! It must stay under the poll interval (`max.poll.interval.ms`), or the member is removed from
//! its group, its partitions go to the others from the last committed offset, and every record
//! since that commit is processed twice. A record's time is the lease rule's ([`super::lease`]):
//! the smallest latency fewer than `target_risk` of the handlers outlive, times the margin.
//!
//! Two settings can make the batch fit: fewer records (`interval / per record`, rounded down)
//! or a longer interval (`records x per record`, rounded up to a readable value). The rule
//! changes the records when at least one fits: the interval is also how long a member that is
//! alive but stuck holds its partitions, while a smaller batch costs one more poll round trip
//! per batch. Only when one record alone outlasts the interval does it raise the interval (and
//! take one record per poll).
//!
//! [`KindDescriptor::batch`]: crate::profile::KindDescriptor

use std::time::Duration;

use hdrhistogram::Histogram;

use super::lease::{tail_us, LeaseRule};
use super::readable;

/// Which setting the rule changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PollChange {
    /// The batch already fits in the interval.
    Nothing,
    /// Fewer records per poll, the interval kept.
    Records,
    /// One record alone outlasts the interval: a longer interval, and one record per poll.
    Interval,
}

/// The rule applied to a histogram and the current settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PollSizing {
    /// Handlers measured.
    pub handlers: u64,
    /// The smallest latency (µs, top of its HDR bucket) fewer than `target_risk` of the
    /// handlers outlive: the lease rule's tail.
    pub tail_us: u64,
    /// `tail x margin`: the time one record is given.
    pub per_record: Duration,
    pub interval_now: Duration,
    pub records_now: u32,
    /// The records whose time fits in `interval_now` (0: not even one).
    pub records_that_fit: u32,
    /// The interval `records_now` records need, rounded up to a readable value.
    pub interval_needed: Duration,
    pub change: PollChange,
}

impl PollSizing {
    /// The records per poll recommended.
    pub fn records(&self) -> u32 {
        match self.change {
            PollChange::Nothing => self.records_now,
            PollChange::Records => self.records_that_fit,
            PollChange::Interval => 1,
        }
    }

    /// The poll interval recommended.
    pub fn interval(&self) -> Duration {
        match self.change {
            PollChange::Nothing | PollChange::Records => self.interval_now,
            PollChange::Interval => readable_at_least(self.per_record),
        }
    }

    /// The time between two polls with `records` records per poll.
    pub fn batch_time(&self, records: u32) -> Duration {
        self.per_record * records
    }
}

/// The smallest readable value at or above `d`; past the ladder's 12 h, `d` rounded up to a
/// whole minute.
fn readable_at_least(d: Duration) -> Duration {
    readable::round_up(d).unwrap_or_else(|| Duration::from_secs(d.as_secs().div_ceil(60) * 60))
}

/// The rule; `None` for an empty histogram.
pub fn size_poll(
    h: &Histogram<u64>,
    rule: &LeaseRule,
    interval_now: Duration,
    records_now: u32,
) -> Option<PollSizing> {
    let tail = tail_us(h, rule.target_risk)?;
    let per_record = Duration::from_micros(tail).mul_f64(rule.margin.max(1.0));
    let fit = if per_record.is_zero() {
        u32::MAX
    } else {
        u32::try_from(interval_now.as_nanos() / per_record.as_nanos()).unwrap_or(u32::MAX)
    };
    let records_that_fit = fit.min(records_now.max(1));
    let interval_needed = readable_at_least(per_record * records_now);
    let change = if per_record * records_now <= interval_now {
        PollChange::Nothing
    } else if fit >= 1 {
        PollChange::Records
    } else {
        PollChange::Interval
    };
    Some(PollSizing {
        handlers: h.len(),
        tail_us: tail,
        per_record,
        interval_now,
        records_now,
        records_that_fit: if fit == 0 { 0 } else { records_that_fit },
        interval_needed,
        change,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sizing::lease::tests::{hist, S};

    fn secs(s: u64) -> Duration {
        Duration::from_secs(s)
    }

    #[test]
    fn the_thursday_takes_six_records_a_poll_not_an_eight_hour_interval() {
        // 28 handlers of 35 s (fewer than 1/risk: the slowest sets the tail). 35,000,000 µs
        // lies in the HDR bucket of 32,768 µs (2^(25 - 10)): 1,068 x 32,768 = 34,996,224 up to
        // 35,028,991, the tail. x1.25 = 43.78623875 s a record. 500 records: 21,893.1 s, past
        // the 5m interval; rounded up on the ladder past 6h (21,600) to 8h (28,800). In 300 s:
        // 300 / 43.786 = 6.85, so 6 records fit (262.7 s).
        let h = hist(&[(35 * S, 28)]);
        let p = size_poll(&h, &LeaseRule::default(), secs(300), 500).expect("sized");
        assert_eq!(p.tail_us, 35_028_991);
        assert_eq!(p.per_record, Duration::from_nanos(43_786_238_750));
        assert_eq!(p.records_that_fit, 6);
        assert_eq!(p.interval_needed, secs(8 * 3600));
        assert_eq!(p.change, PollChange::Records);
        assert_eq!((p.records(), p.interval()), (6, secs(300)));
        assert_eq!(p.batch_time(6), Duration::from_nanos(262_717_432_500));
    }

    #[test]
    fn a_batch_that_fits_changes_nothing() {
        // 1,000 handlers of 200 ms: bucket of 128 µs (2^(17 - 10)), 1,562 x 128 = 199,936 up
        // to 200,063 µs; x1.25 = 250.07875 ms. 500 records: 125.04 s, under 300 s; rounded up
        // to 3m. 300 / 0.25007875 = 1,199.6: 1,199 fit, more than the 500 asked.
        let h = hist(&[(200_000, 1000)]);
        let p = size_poll(&h, &LeaseRule::default(), secs(300), 500).expect("sized");
        assert_eq!(p.tail_us, 200_063);
        assert_eq!(p.change, PollChange::Nothing);
        assert_eq!(p.records_that_fit, 500);
        assert_eq!(p.interval_needed, secs(180));
        assert_eq!((p.records(), p.interval()), (500, secs(300)));
    }

    #[test]
    fn a_record_longer_than_the_interval_raises_the_interval() {
        // 10 handlers of 400 s: bucket of 262,144 µs (2^(28 - 10)), 1,525 x 262,144 =
        // 399,769,600 up to 400,031,743 µs; x1.25 = 500.04 s, past the 300 s interval: not one
        // record fits. One record a poll and 500.04 s rounded up to 10m. 500 records would need
        // 250,019.8 s, past the 12h ladder: whole minutes, 4,167m = 250,020 s.
        let h = hist(&[(400 * S, 10)]);
        let p = size_poll(&h, &LeaseRule::default(), secs(300), 500).expect("sized");
        assert_eq!(p.tail_us, 400_031_743);
        assert_eq!(p.records_that_fit, 0);
        assert_eq!(p.change, PollChange::Interval);
        assert_eq!((p.records(), p.interval()), (1, secs(600)));
        assert_eq!(p.interval_needed, secs(250_020));
    }

    #[test]
    fn an_empty_histogram_sizes_nothing() {
        assert!(size_poll(&hist(&[]), &LeaseRule::default(), secs(300), 500).is_none());
    }
}
