//! The run's look at the broker's own counts: every `run.sample_every` (in profile time) the
//! kind's sampler ([`super::kinds::BrokerSampler`]), on a connection of its own, reads the
//! broker's DLQ depth, backlog and in-flight count; the samples become the record's
//! [`BrokerSamples`]. A sample has a bounded time ([`bound`]); one that fails or takes longer
//! is counted and the run goes on. One last sample is taken when the run stops.

use std::time::Duration;

use tokio::sync::watch;

use super::kinds::{BrokerSampler, LiveBroker};
use crate::provider::http::LiveClock;
use crate::record::{BrokerSamples, Nanos};

/// The shortest wall interval between samples, whatever the time scale.
pub(super) const MIN_WALL_EVERY: Duration = Duration::from_millis(20);

/// How long one sample may take: its interval, at least 250 ms and at most 2 s.
pub fn bound(wall_every: Duration) -> Duration {
    wall_every.clamp(Duration::from_millis(250), Duration::from_secs(2))
}

/// The sampling task of a run; dropping it stops the task.
pub struct Sampling {
    stop: watch::Sender<bool>,
    task: Option<tokio::task::JoinHandle<BrokerSamples>>,
}

impl Sampling {
    /// Opens the kind's sampler and starts sampling every `every` (profile time); `None` for a
    /// kind without one (the embedded broker). A sampler that cannot be opened gives a record
    /// with that failure and no sample.
    pub async fn start(
        broker: &dyn LiveBroker,
        clock: LiveClock,
        every: Nanos,
    ) -> Option<Sampling> {
        let opened = broker.sampler().await?;
        let (stop, stopped) = watch::channel(false);
        let mut record = BrokerSamples {
            every,
            ..BrokerSamples::default()
        };
        let task = match opened {
            Ok(sampler) => {
                record.unavailable = sampler.unavailable();
                tokio::spawn(run(sampler, clock, record, stopped))
            }
            Err(e) => {
                record.failed = 1;
                record.last_failure = Some(format!("cannot open the sampling connection: {e}"));
                tokio::spawn(async move { record })
            }
        };
        Some(Sampling {
            stop,
            task: Some(task),
        })
    }

    /// Takes the last sample and hands back every sample.
    pub async fn finish(mut self) -> BrokerSamples {
        let _ = self.stop.send(true);
        match self.task.take() {
            Some(t) => t.await.unwrap_or_default(),
            None => BrokerSamples::default(),
        }
    }
}

impl Drop for Sampling {
    fn drop(&mut self) {
        if let Some(t) = &self.task {
            t.abort();
        }
    }
}

/// Waits for the next tick of `ticks`, or for a stop: `Some(last)`, `last` when asked to stop
/// (before or while waiting), so that the reading taken now is the last; `None` when the run
/// that could stop it is gone. What the run reads on an interval (the broker's counts,
/// ackbench's own CPU) reads on these.
pub(super) async fn next_tick(
    ticks: &mut tokio::time::Interval,
    stopped: &mut watch::Receiver<bool>,
) -> Option<bool> {
    if !*stopped.borrow() {
        tokio::select! {
            _ = ticks.tick() => {}
            changed = stopped.changed() => changed.ok()?,
        }
    }
    Some(*stopped.borrow())
}

async fn run(
    mut sampler: Box<dyn BrokerSampler>,
    clock: LiveClock,
    mut record: BrokerSamples,
    mut stopped: watch::Receiver<bool>,
) -> BrokerSamples {
    let wall_every = clock.wall(record.every).max(MIN_WALL_EVERY);
    let limit = bound(wall_every);
    let mut ticks = tokio::time::interval(wall_every);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    // Asked to stop (before or while waiting): this sample is the last.
    while let Some(last) = next_tick(&mut ticks, &mut stopped).await {
        let at = clock.now();
        match tokio::time::timeout(limit, sampler.sample()).await {
            Ok(Ok(mut s)) => {
                s.at = at;
                record.samples.push(s);
            }
            Ok(Err(e)) => {
                record.failed += 1;
                record.last_failure = Some(e);
            }
            Err(_) => {
                record.failed += 1;
                record.last_failure = Some(format!("no answer in {} ms", limit.as_millis()));
            }
        }
        if last {
            break;
        }
    }
    record
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sample_takes_at_most_its_interval_within_a_quarter_second_and_two_seconds() {
        assert_eq!(bound(Duration::from_millis(20)), Duration::from_millis(250));
        assert_eq!(
            bound(Duration::from_millis(500)),
            Duration::from_millis(500)
        );
        assert_eq!(bound(Duration::from_secs(10)), Duration::from_secs(2));
    }
}
