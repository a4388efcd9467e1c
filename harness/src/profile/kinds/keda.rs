//! KEDA's scaler for a kind: the trigger `ackbench size` writes into the `ScaledObject` of an
//! autoscaled profile, and what the scaler must be told to read the metric the profile scales on
//! (docs/autoscale.md).

/// One metadata entry of a trigger: a key and its value.
pub type Entry = (&'static str, &'static str);

/// KEDA's scaler for a kind.
#[derive(Debug)]
pub struct KedaScaler {
    /// The trigger's `type` (`aws-sqs-queue`, `rabbitmq`, ...).
    pub scaler: &'static str,
    /// The metadata key of the target: messages per replica.
    pub target: &'static str,
    /// The metadata key of the activation value.
    pub activation: &'static str,
    /// The metadata that makes the scaler read the messages ready; `None` when it cannot.
    pub ready: Option<&'static [Entry]>,
    /// ... the messages ready and in flight; `None` when it cannot.
    pub ready_and_in_flight: Option<&'static [Entry]>,
    /// The metadata naming the server and the queue: values the user fills in.
    pub placeholders: &'static [Entry],
    /// Why a live run of the kind cannot scale its fleet (its live path cannot read the queue's
    /// length while it runs); `None` when it can.
    pub not_live: Option<&'static str>,
}
