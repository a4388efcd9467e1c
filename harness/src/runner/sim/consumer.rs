//! What a sim worker runs: a built-in target chosen by name, or a consumer written as a closure
//! over the worker's clients ([`crate::Bench::consumer`]). Either is started again, as a new
//! incarnation, after a kill or a crash.

use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;

use ackbench_targets::worker::run_worker;
use ackbench_targets::{BuiltinTarget, Crash};

use super::client::SimClient;

/// One worker's task: it ends only when the consumer dies by itself.
pub(super) type Task = Pin<Box<dyn Future<Output = Crash>>>;

/// A consumer written as a closure: called with a worker's clients at each (re)start, it returns
/// the worker's loop, which is meant to run until the worker is killed.
pub(crate) type ConsumerFn = Rc<dyn Fn(SimClient) -> Pin<Box<dyn Future<Output = ()>>>>;

/// The consumer every worker of a sim run runs.
#[derive(Clone)]
pub(crate) enum Consumer {
    Builtin(BuiltinTarget),
    Closure(ConsumerFn),
}

impl Consumer {
    /// A worker's task over `client`.
    pub(super) fn task(&self, client: SimClient) -> Task {
        match self {
            Consumer::Builtin(target) => {
                let target = target.clone();
                Box::pin(async move { run_worker(&target, &client).await })
            }
            Consumer::Closure(f) => {
                let work = f(client);
                Box::pin(async move {
                    work.await;
                    Crash {
                        reason: "the consumer's loop returned".to_string(),
                    }
                })
            }
        }
    }
}
