//! An `autoscale` rule's controllers in a live run: KEDA's poll and the HPA's sync, each at its
//! instants on the run's clock, read the queue's length from the broker
//! ([`LiveBroker::queue_length`]) and change the fleet through the run's state
//! ([`LiveState::look`]); each replica a scale-out makes starts after the rule's `startup`,
//! under a supervisor of its own ([`Launcher`]). The controllers run beside the run's loop and
//! end with it; one that cannot read the queue fails the run (the loop sees it as it sees a
//! worker that cannot start).

use std::convert::Infallible;
use std::sync::Arc;

use super::kinds::LiveBroker;
use super::state::LiveState;
use super::workers::Launcher;
use crate::chaos::autoscale::Controller;
use crate::record::{Nanos, WorkerId};
use crate::runner::RunError;

/// Runs the rule's controllers (none without a rule: then it waits for ever).
pub async fn control(
    broker: &dyn LiveBroker,
    state: &Arc<LiveState>,
    launcher: &Launcher,
) -> Infallible {
    // Each controller's next look, in the order the sim's timers take them: the earliest, and
    // at a tie the one scheduled first (KEDA's before the HPA's at the start).
    let mut looks: Vec<Look> = (state.autoscale_looks().into_iter().enumerate())
        .map(|(i, (at, by))| Look {
            at,
            order: i as u64,
            by,
        })
        .collect();
    let mut scheduled = looks.len() as u64;
    loop {
        let Some(next) = looks.iter_mut().min_by_key(|l| (l.at, l.order)) else {
            return std::future::pending().await;
        };
        let due = state.clock.wall(next.at.saturating_sub(state.clock.now()));
        tokio::time::sleep(due).await;
        let queue = match broker.queue_length().await {
            Some(Ok(queue)) => queue,
            Some(Err(e)) => return failed(launcher, format!("an autoscale look cannot read the queue: {e}")).await,
            None => return failed(launcher, "this broker's live path cannot read the queue's length, which an autoscale rule's looks need".to_string()).await,
        };
        match state.look(next.by, next.at, queue) {
            Ok(looked) => {
                next.at = looked.next;
                next.order = scheduled;
                scheduled += 1;
                for (w, made) in looked.made {
                    start_after_startup(state, launcher, w, made);
                }
            }
            Err(e) => return failed(launcher, e.to_string()).await,
        }
    }
}

/// A controller's next look.
struct Look {
    at: Nanos,
    /// When it was scheduled among the others: first at a tie.
    order: u64,
    by: Controller,
}

/// Fails the run with `why` and waits for the run's loop to end it.
async fn failed(launcher: &Launcher, why: String) -> Infallible {
    launcher.fail(RunError::Live(why));
    std::future::pending().await
}

/// Starts the replica made at `made` in number `w` once the rule's startup is over (image
/// pull, readiness), unless a scale-in removed it first or the run stopped its workers.
fn start_after_startup(state: &Arc<LiveState>, launcher: &Launcher, w: WorkerId, made: Nanos) {
    let (state, launcher) = (state.clone(), launcher.clone());
    let mut stopped = launcher.stopped();
    tokio::spawn(async move {
        let at = made + state.autoscale_startup();
        let due = state.clock.wall(at.saturating_sub(state.clock.now()));
        tokio::select! {
            _ = tokio::time::sleep(due) => {
                if state.replica_ready(w, made) {
                    launcher.launch(w, made);
                }
            }
            _ = stopped.changed() => {}
        }
    });
}
