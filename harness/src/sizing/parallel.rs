//! Runs independent sim runs on several threads. Each run is deterministic (its executor one
//! thread; a streamed run's accounting, which folds what the run records in order, another);
//! results come back in the order of the inputs, whatever thread ran them and when.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;

/// How many threads to use by default: the machine's cores.
pub fn default_jobs() -> usize {
    thread::available_parallelism().map_or(1, |n| n.get())
}

/// `f` applied to every item on up to `jobs` threads; the results in input order.
pub fn map<T: Sync, R: Send>(items: &[T], jobs: usize, f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let jobs = jobs.clamp(1, items.len().max(1));
    let next = AtomicUsize::new(0);
    let mut done: Vec<(usize, R)> = thread::scope(|scope| {
        let workers: Vec<_> = (0..jobs)
            .map(|_| {
                scope.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(item) = items.get(i) else { break };
                        mine.push((i, f(item)));
                    }
                    mine
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| match w.join() {
                Ok(results) => results,
                Err(panic) => std::panic::resume_unwind(panic),
            })
            .collect()
    });
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_back_in_input_order() {
        let items: Vec<u64> = (0..50).collect();
        for jobs in [1, 2, 7, 100] {
            let out = map(&items, jobs, |&x| {
                std::thread::sleep(std::time::Duration::from_micros((50 - x) * 10));
                x * x
            });
            assert_eq!(out, items.iter().map(|x| x * x).collect::<Vec<_>>());
        }
        assert!(map(&Vec::<u8>::new(), 4, |&x| x).is_empty());
    }
}
