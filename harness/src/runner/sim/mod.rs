//! Sim mode: the whole run on virtual time, in one thread (a streamed run's accounting on a
//! second), deterministically.
//!
//! A small executor of the project's own (not tokio's paused clock) so that the order of events
//! at one instant is exact and cheap:
//!
//! 1. publishes due now; then the broker's timers (lease expiries and DLQ moves, consumer
//!    timeouts, entries becoming claimable: [`crate::broker::BrokerModel::advance`]);
//! 2. timers due now in (class, order of creation): worker restarts, timed kills and rollouts
//!    (a worker told to stop exits at its next receive, [`stopping`]), then handler
//!    steps (provider answers, sleeps ending, delayed kills, acks and deliveries a `message`
//!    rule delayed, [`message_faults`]). Each wakes one worker, which runs
//!    until it waits again; steps that do no I/O (acks, visibility changes, store access) take no
//!    virtual time;
//! 3. hand-outs: each idle worker, in ascending id, gets the front visible message; then those
//!    workers run, in ascending id. Steps 2 and 3 repeat until nothing more happens at this
//!    instant; then the clock jumps to the next due instant.
//!
//! With `connection` rules, a worker's broker operations travel on its connection
//! ([`connection`]): delayed, held or dropped requests and answers are timers of their own.
//!
//! Workers are ordinary async target code ([`ackbench_targets`]) polled with a no-op waker: every
//! operation a target awaits (receive, provider call, sleep) completes by an event of this
//! executor, which then polls that worker again. No real socket, sleep or clock is used; the one
//! other thread, a streamed run's accounting ([`accounting`]), only folds what the run recorded,
//! in the order it was recorded.

pub(crate) mod accounting;
mod autoscale;
mod client;
mod connection;
mod consumer;
mod executor;
mod message_faults;
mod stopping;
mod timers;
mod waiting;
mod world;

pub use client::SimClient;
pub(crate) use consumer::{Consumer, ConsumerFn};
pub use executor::run;
pub(crate) use executor::run_consumer;

#[cfg(test)]
mod proptests;
#[cfg(test)]
mod proptests_autoscale;
#[cfg(test)]
mod proptests_stream;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_autoscale;
#[cfg(test)]
mod tests_connection;
#[cfg(test)]
mod tests_deploy;
#[cfg(test)]
mod tests_deploy_styles;
#[cfg(test)]
mod tests_groups;
#[cfg(test)]
mod tests_kafka;
#[cfg(test)]
mod tests_kinds;
#[cfg(test)]
mod tests_message;
#[cfg(test)]
mod tests_producer;
#[cfg(test)]
mod tests_provider_faults;
#[cfg(test)]
mod tests_republish;
#[cfg(test)]
mod tests_sqs_policy;
#[cfg(test)]
mod tests_targets;
