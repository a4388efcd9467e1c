//! ackbench's own CPU time over a live run: `getrusage(RUSAGE_SELF)` (user + system time of
//! every thread of this process; the worker processes, its children, are not counted) read
//! every sampling interval (profile time) and once more when the drive ends, into the record's
//! [`HarnessCpu`]. A run that drives its consumer near a core's worth of ackbench's own time
//! measures ackbench, not the consumer: the report says so (`metrics::harness_cpu`).

use nix::sys::resource::{getrusage, UsageWho};
use tokio::sync::watch;

use super::sampling::{next_tick, MIN_WALL_EVERY};
use crate::provider::http::LiveClock;
use crate::record::{HarnessCpu, Nanos};

/// CPU seconds (user + system) this process has used so far; `None` where it cannot tell.
pub fn used_s() -> Option<f64> {
    let u = getrusage(UsageWho::RUSAGE_SELF).ok()?;
    let secs = |t: nix::sys::time::TimeVal| t.tv_sec() as f64 + t.tv_usec() as f64 / 1e6;
    Some(secs(u.user_time()) + secs(u.system_time()))
}

/// The reading task of a run; dropping it stops the task.
pub struct CpuWatch {
    stop: watch::Sender<bool>,
    task: Option<tokio::task::JoinHandle<HarnessCpu>>,
}

impl CpuWatch {
    /// Starts reading every `every` (profile time), the first reading now; `None` where the
    /// process's CPU time cannot be read.
    pub fn start(clock: LiveClock, every: Nanos) -> Option<CpuWatch> {
        let first = used_s()?;
        let (stop, mut stopped) = watch::channel(false);
        let task = tokio::spawn(async move {
            let mut record = HarnessCpu {
                readings: vec![(clock.now(), 0.0)],
                time_scale: clock.scale(),
            };
            let mut ticks = tokio::time::interval(clock.wall(every).max(MIN_WALL_EVERY));
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
            ticks.tick().await;
            while let Some(last) = next_tick(&mut ticks, &mut stopped).await {
                if let Some(used) = used_s() {
                    record.readings.push((clock.now(), used - first));
                }
                if last {
                    break;
                }
            }
            record
        });
        Some(CpuWatch {
            stop,
            task: Some(task),
        })
    }

    /// Takes the last reading and hands back every reading.
    pub async fn finish(mut self) -> Option<HarnessCpu> {
        let _ = self.stop.send(true);
        self.task.take()?.await.ok()
    }
}

impl Drop for CpuWatch {
    fn drop(&mut self) {
        if let Some(t) = &self.task {
            t.abort();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn busy_work_shows_in_the_readings() {
        let clock = LiveClock::new(1.0);
        let watch = CpuWatch::start(clock, 10_000_000).expect("getrusage answers on Linux");
        // Spin until this process has used 50 ms more CPU: the last reading counts them.
        let from = used_s().expect("getrusage");
        let mut x = 0u64;
        while used_s().expect("getrusage") - from < 0.05 {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        let cpu = watch.finish().await.expect("a record");
        assert_eq!(cpu.readings[0].1, 0.0, "the first reading is the zero");
        let (at, used) = *cpu.readings.last().expect("a last reading");
        // The last reading comes after the spin: later than the first. (How much later depends
        // on how many cores the process's threads had meanwhile: not asserted.)
        assert!(at > 0, "{at}");
        assert!(used >= 0.05, "{used}");
        assert!(cpu
            .readings
            .windows(2)
            .all(|w| w[0].0 <= w[1].0 && w[0].1 <= w[1].1));
    }
}
