//! An autoscaled profile's section: the rule's settings sized ([`crate::sizing::fleet`]), what
//! the autoscaler did in the before- and after-runs, the ScaledObject written.

use super::Assembly;
use crate::sizing::fleet::scaled_object::{manifests, Manifests};
use crate::sizing::fleet::{AutoscaleSection, FleetRow};

/// The files a section writes, in order.
pub const FILES: [&str; 2] = ["scaledobject.yaml", "deployment-patch.yaml"];

pub(super) fn build(a: &Assembly, notes: &mut Vec<String>) -> Option<AutoscaleSection> {
    let (rule, fleet) = a.fleet?;
    let kind = a.now.kind;
    let manifests: Option<Manifests> = match &kind.keda {
        Some(scaler) => Some(manifests(&a.current.name, scaler, &fleet.rule)),
        None => {
            notes.push(format!(
                "KEDA has no scaler for {}: no ScaledObject is written; the settings above are \
                 those of whatever scales the fleet on the queue's length",
                kind.name
            ));
            None
        }
    };
    Some(AutoscaleSection {
        rule,
        settings: fleet.settings.clone(),
        before: FleetRow::of(a.before),
        after: FleetRow::of(a.after),
        files: if manifests.is_some() {
            FILES.to_vec()
        } else {
            Vec::new()
        },
        manifests,
    })
}
