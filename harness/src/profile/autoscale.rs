//! `autoscale`: the fleet's replica count changed the way KEDA and the HorizontalPodAutoscaler
//! change it, from the queue's length. Its scaling: `chaos::autoscale`; docs/autoscale.md says
//! what each setting is in KEDA's and the HPA's words.

use std::time::Duration;

use super::deploy::StopSignal;
use super::duration::format_duration;
use super::fault::FaultRule;
use super::kinds::spec::BrokerSpec;
use super::path::FieldPath;
use super::problem::Problem;
use super::run_spec::Mode;

/// `autoscale`: a KEDA `ScaledObject` over the consumer's Deployment.
#[derive(Debug, Clone, PartialEq)]
pub struct AutoscaleRule {
    /// What the scaler reads of the queue.
    pub metric: QueueMetric,
    /// Messages per replica: KEDA's target (`queueLength`, `value`), an `AverageValue` target
    /// of the HPA: desired = ceil(metric / target).
    pub target: u64,
    /// The queue is active above this many messages (KEDA's activation value, default 0).
    pub activation: u64,
    /// `minReplicaCount` (default 0: scaled to zero after `cooldown` inactive).
    pub min: u32,
    /// `maxReplicaCount` (default 100).
    pub max: u32,
    /// KEDA's `pollingInterval`: how often it checks activation (default 30s).
    pub polling_interval: Duration,
    /// KEDA's `cooldownPeriod`: inactive this long before it scales to zero (default 5m).
    pub cooldown: Duration,
    /// The HPA's sync period (`--horizontal-pod-autoscaler-sync-period`, default 15s).
    pub sync_period: Duration,
    /// The HPA's tolerance: no change while metric / (target x replicas) is within 1 ± this
    /// (default 0.1).
    pub tolerance: f64,
    /// `behavior.scaleUp` (default: no stabilization, the larger of +100% and +4 per 15s).
    pub scale_up: ScalingRules,
    /// `behavior.scaleDown` (default: 5m stabilization, -100% per 15s).
    pub scale_down: ScalingRules,
    /// From a scale-out to the new worker's start (image pull, start, readiness; default 0s).
    pub startup: Duration,
    /// `terminationGracePeriodSeconds`: from the stop signal to the kill (default 30s).
    pub grace: Duration,
    pub signal: StopSignal,
    /// `controller.kubernetes.io/pod-deletion-cost` per worker (default 0): lower goes first.
    pub deletion_cost: Vec<(u32, i32)>,
    /// A run in which the fleet never scales is not a failure (`optional: true`).
    pub optional: bool,
}

/// What KEDA's scaler reads as the queue's length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueMetric {
    /// Messages waiting to be delivered (RabbitMQ `messages_ready`, SQS
    /// `ApproximateNumberOfMessages`).
    Ready,
    /// Waiting and delivered but not yet settled (SQS with `scaleOnInFlight`, RabbitMQ
    /// `messages`, a stream's pending entries plus its lag).
    ReadyAndInFlight,
}

/// One direction of the HPA's `behavior`.
#[derive(Debug, Clone, PartialEq)]
pub struct ScalingRules {
    /// `stabilizationWindowSeconds`: the recommendations of this long ago still count.
    pub stabilization: Duration,
    pub policies: Vec<ScalingPolicy>,
    /// `selectPolicy`.
    pub select: SelectPolicy,
}

/// One policy: at most `value` pods, or `value` percent, per `period`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScalingPolicy {
    pub unit: PolicyUnit,
    pub value: u32,
    pub period: Duration,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PolicyUnit {
    Pods,
    Percent,
}

/// Which policy wins when several allow different changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SelectPolicy {
    /// The one allowing the largest change (the default).
    Max,
    /// The one allowing the smallest change.
    Min,
    /// No change in this direction.
    Disabled,
}

impl ScalingRules {
    /// The HPA's default `behavior.scaleUp`: no stabilization, +100% or +4 pods per 15s,
    /// whichever is more.
    pub fn default_up() -> ScalingRules {
        let per_15s = |unit, value| ScalingPolicy {
            unit,
            value,
            period: Duration::from_secs(15),
        };
        ScalingRules {
            stabilization: Duration::ZERO,
            policies: vec![
                per_15s(PolicyUnit::Percent, 100),
                per_15s(PolicyUnit::Pods, 4),
            ],
            select: SelectPolicy::Max,
        }
    }

    /// The HPA's default `behavior.scaleDown`: a 5m stabilization window, -100% per 15s.
    pub fn default_down() -> ScalingRules {
        ScalingRules {
            stabilization: Duration::from_secs(300),
            policies: vec![ScalingPolicy {
                unit: PolicyUnit::Percent,
                value: 100,
                period: Duration::from_secs(15),
            }],
            select: SelectPolicy::Max,
        }
    }
}

impl AutoscaleRule {
    /// A ScaledObject with `target` messages per replica and KEDA's and the HPA's defaults.
    pub fn new(target: u64) -> AutoscaleRule {
        AutoscaleRule {
            metric: QueueMetric::Ready,
            target,
            activation: 0,
            min: 0,
            max: 100,
            polling_interval: Duration::from_secs(30),
            cooldown: Duration::from_secs(300),
            sync_period: Duration::from_secs(15),
            tolerance: 0.1,
            scale_up: ScalingRules::default_up(),
            scale_down: ScalingRules::default_down(),
            startup: Duration::ZERO,
            grace: Duration::from_secs(30),
            signal: StopSignal::Term,
            deletion_cost: Vec::new(),
            optional: false,
        }
    }

    /// Worker `w`'s pod-deletion-cost.
    pub fn cost_of(&self, w: u32) -> i32 {
        self.deletion_cost
            .iter()
            .find(|&&(worker, _)| worker == w)
            .map_or(0, |&(_, cost)| cost)
    }
}

impl FaultRule for AutoscaleRule {
    const FAULT: &'static str = "autoscale";
    const ONE_PER_PROFILE: bool = true;

    fn optional(&self) -> bool {
        self.optional
    }

    /// `autoscale target 100 (min 0, max 8, polling 30s, cooldown 5m, grace 30s)`.
    fn label(&self) -> String {
        format!(
            "autoscale target {} (min {}, max {}, polling {}, cooldown {}, grace {})",
            self.target,
            self.min,
            self.max,
            format_duration(self.polling_interval),
            format_duration(self.cooldown),
            format_duration(self.grace)
        )
    }

    /// A live run scales its fleet where its kind's live path reads the queue's length while
    /// it runs; elsewhere it is refused with the reason, not run with a fixed fleet.
    fn check(&self, broker: &BrokerSpec, mode: Mode, path: &FieldPath) -> Result<(), Problem> {
        let descriptor = broker.kind.descriptor();
        let not_live = descriptor.keda.as_ref().and_then(|k| k.not_live);
        match (mode, not_live) {
            (Mode::Live, Some(why)) => Err(Problem::new(
                path.clone(),
                format!(
                    "runs in the sim only on broker kind {} (run.mode: sim): {why}",
                    descriptor.name
                ),
            )),
            _ => Ok(()),
        }
    }
}
