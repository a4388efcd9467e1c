//! What a fault is: its registry entry ([`Fault`]), the trait its resolved rules implement
//! ([`FaultRule`]) and a rule of any fault ([`ChaosRule`]), with what labels share. The
//! registry itself, and the parsing of `chaos[]` it drives, is `faults.rs`.

use std::any::Any;
use std::fmt;
use std::time::Duration;

use super::consumer_spec::ConsumerSpec;
use super::duration::format_duration;
use super::kinds::spec::BrokerSpec;
use super::path::FieldPath;
use super::problem::Problem;
use super::resolve::keys::KeyUniverse;
use super::run_spec::{Mode, RunSpec};

/// One fault: what the registry knows of it.
pub struct Fault {
    /// Its key in a `chaos[]` rule.
    pub name: &'static str,
    /// A rule of it, as a message shows one (`kill_worker: { point: received }`).
    pub example: &'static str,
    /// A sim run with a rule of it keeps its full record (its report reads the record's
    /// messages), rather than streaming its accounting.
    pub needs_full_record: bool,
    /// Reads and checks the rule's keys (the value under its name, at `path`).
    pub resolve: fn(&yaml_serde::Value, &Context, &FieldPath) -> Result<ChaosRule, Problem>,
}

/// What a rule is checked against while the profile is resolved.
pub struct Context<'a> {
    pub run: &'a RunSpec,
    pub consumer: &'a ConsumerSpec,
    /// The broker: what its kind can give a rule (the metric KEDA's scaler reads).
    pub broker: &'a BrokerSpec,
    /// The keys the workload can publish, for rules that select messages by key or seq (made
    /// once for every rule).
    pub keys: &'a KeyUniverse<'a>,
}

impl fmt::Debug for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

/// A resolved rule of one fault.
pub trait FaultRule: fmt::Debug + Clone + PartialEq + Send + Sync + 'static {
    /// Its fault's name, as the profile writes it.
    const FAULT: &'static str;

    /// A profile holds at most one rule of this fault (one ScaledObject per Deployment).
    const ONE_PER_PROFILE: bool = false;

    /// `optional: true`: a run in which the rule never fires is not a failure.
    fn optional(&self) -> bool;

    /// What the rule does, as reports show it (`kill_worker at call_started (delivery 5)`).
    fn label(&self) -> String;

    /// Checks that need the broker and the mode (a live run on a kind that cannot apply the
    /// rule is refused); `path` is the rule's place in `chaos`.
    fn check(&self, _broker: &BrokerSpec, _mode: Mode, _path: &FieldPath) -> Result<(), Problem> {
        Ok(())
    }
}

/// One `chaos[]` rule, of any fault.
pub struct ChaosRule(Box<dyn AnyRule>);

impl ChaosRule {
    pub fn new<R: FaultRule>(rule: R) -> ChaosRule {
        ChaosRule(Box::new(rule))
    }

    /// The rule if it is of fault `R`.
    pub fn get<R: FaultRule>(&self) -> Option<&R> {
        self.0.as_any().downcast_ref()
    }

    /// Its fault's name, as the profile writes it.
    pub fn fault(&self) -> &'static str {
        self.0.fault()
    }

    /// `optional: true`: a run in which the rule never fires is not a failure.
    pub fn optional(&self) -> bool {
        self.0.optional()
    }

    /// A profile holds at most one rule of its fault ([`FaultRule::ONE_PER_PROFILE`]).
    pub fn one_per_profile(&self) -> bool {
        self.0.one_per_profile()
    }

    pub fn label(&self) -> String {
        self.0.label()
    }

    /// Its checks against the broker and the mode ([`FaultRule::check`]).
    pub fn check(&self, broker: &BrokerSpec, mode: Mode, path: &FieldPath) -> Result<(), Problem> {
        self.0.check(broker, mode, path)
    }
}

impl Clone for ChaosRule {
    fn clone(&self) -> ChaosRule {
        ChaosRule(self.0.clone_box())
    }
}

impl PartialEq for ChaosRule {
    fn eq(&self, other: &ChaosRule) -> bool {
        self.0.same_as(other.0.as_any())
    }
}

impl fmt::Debug for ChaosRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// [`FaultRule`] made object-safe, for every rule type.
trait AnyRule: fmt::Debug + Send + Sync {
    fn fault(&self) -> &'static str;
    fn optional(&self) -> bool;
    fn one_per_profile(&self) -> bool;
    fn label(&self) -> String;
    fn check(&self, broker: &BrokerSpec, mode: Mode, path: &FieldPath) -> Result<(), Problem>;
    fn as_any(&self) -> &dyn Any;
    fn clone_box(&self) -> Box<dyn AnyRule>;
    fn same_as(&self, other: &dyn Any) -> bool;
}

impl<R: FaultRule> AnyRule for R {
    fn fault(&self) -> &'static str {
        R::FAULT
    }
    fn optional(&self) -> bool {
        FaultRule::optional(self)
    }
    fn one_per_profile(&self) -> bool {
        R::ONE_PER_PROFILE
    }
    fn label(&self) -> String {
        FaultRule::label(self)
    }
    fn check(&self, broker: &BrokerSpec, mode: Mode, path: &FieldPath) -> Result<(), Problem> {
        FaultRule::check(self, broker, mode, path)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn clone_box(&self) -> Box<dyn AnyRule> {
        Box::new(self.clone())
    }
    fn same_as(&self, other: &dyn Any) -> bool {
        other.downcast_ref::<R>() == Some(self)
    }
}

/// A rule's window, `times` and probability in its label, each only when it narrows the rule.
pub(crate) fn window_scope(
    scope: &mut Vec<String>,
    from: Option<Duration>,
    to: Option<Duration>,
    times: Option<u64>,
    probability: f64,
) {
    if let Some(f) = from {
        scope.push(format!("from {}", format_duration(f)));
    }
    if let Some(t) = to {
        scope.push(format!("to {}", format_duration(t)));
    }
    if let Some(n) = times {
        scope.push(format!("times {n}"));
    }
    if probability < 1.0 {
        scope.push(format!("probability {probability}"));
    }
}

/// `keys a, b, c, ...`: a rule's keys selector in its label (the first three).
pub(crate) fn keys_scope(keys: &[String]) -> String {
    let shown: Vec<&str> = keys.iter().take(3).map(String::as_str).collect();
    let more = if keys.len() > 3 { ", ..." } else { "" };
    format!("keys {}{more}", shown.join(", "))
}
