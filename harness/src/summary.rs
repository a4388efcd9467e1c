//! Every type a [`Summary`] holds, by name: what a program that reads a run's results (from
//! [`crate::Bench::run`], or summary.json deserialized) can name, field by field.
//!
//! ```
//! use ackbench::summary::{BudgetResult, LatencySummary, Summary};
//!
//! fn failed_budgets(s: &Summary) -> Vec<&BudgetResult> {
//!     s.budgets.iter().filter(|b| !b.pass).collect()
//! }
//! fn p99_ms(l: &LatencySummary) -> f64 {
//!     l.p99
//! }
//! # let _ = (failed_budgets, p99_ms);
//! # use ackbench::summary::*;
//! # #[allow(clippy::type_complexity)]
//! # fn every_one_is_named(
//! #     _: (Anomaly, AnomalyKind, UnattributedCalls, BrokenConnection, BrokerCounts, Figure),
//! #     _: (Missing, Capacity, CapacityStep, RuleFires, Crash, DeployCost, GroupSummary),
//! #     _: (HarnessCpuSummary, GooseResponse, GooseSummary, IngressSummary, LateGroup),
//! #     _: (HandlerLeases, PublisherSummary, Rebalance, ReturnCounts, StderrTail),
//! #     _: (WorkerLogsRecord, ConsumerClockRecord, RebalanceWhy, RemovedQueue, Verdict),
//! #     _: (KindName, KindWords, LeaseRole, DoneWords, GivenUpWords, HeldWords, SizingWords),
//! #     _: (StaleWords, TimeoutWords, TraceWords, Autoscaling, ScaleEvent, ScaleOutLag),
//! #     _: (StopCost, ScaledBy),
//! # ) {}
//! ```

pub use crate::metrics::anomalies::{Anomaly, AnomalyKind};
pub use crate::metrics::attribution::UnattributedCalls;
pub use crate::metrics::autoscale::{Autoscaling, ScaleEvent, ScaleOutLag};
pub use crate::metrics::broken_connections::BrokenConnection;
pub use crate::metrics::broker_counts::{BrokerCounts, Figure, Missing};
pub use crate::metrics::capacity::{Capacity, CapacityStep};
pub use crate::metrics::chaos::RuleFires;
pub use crate::metrics::crashes::Crash;
pub use crate::metrics::deploys::{DeployCost, StopCost};
pub use crate::metrics::groups::GroupSummary;
pub use crate::metrics::harness_cpu::HarnessCpuSummary;
pub use crate::metrics::ingress::{GooseResponse, GooseSummary, IngressSummary};
pub use crate::metrics::late_group::LateGroup;
pub use crate::metrics::latency::LatencySummary;
pub use crate::metrics::leases::HandlerLeases;
pub use crate::metrics::publisher::PublisherSummary;
pub use crate::metrics::rebalances::Rebalance;
pub use crate::profile::kinds::words::{
    DoneWords, GivenUpWords, HeldWords, SizingWords, StaleWords, TimeoutWords, TraceWords,
};
pub use crate::profile::kinds::{KindName, KindWords, LeaseRole};
pub use crate::record::returned::ReturnCounts;
pub use crate::record::worker_logs::{StderrTail, WorkerLogsRecord};
pub use crate::record::{ConsumerClockRecord, RebalanceWhy, RemovedQueue, ScaledBy};
pub use crate::report::Summary;
pub use crate::verdict::{BudgetResult, Verdict};
