//! What a sweep keeps of each point's run: its parameters, seed, summary and derived metrics.

use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;
use serde_json::Value;

use super::grid::Point;
use super::metric::{self, Derived};
use crate::report::Summary;

/// One point's result.
#[derive(Debug, Clone, Serialize)]
pub struct PointOutcome {
    /// The point's parameters, in `--vary` order: `{"broker.visibility_timeout": "30s"}`.
    #[serde(serialize_with = "ordered_params")]
    pub params: Vec<(String, String)>,
    /// The seed the point ran with (see [`super::grid::point_seed`]).
    pub seed: u64,
    /// The run's summary.json object.
    pub summary: Summary,
    /// Metrics that are not summary fields: busy fraction, recovery time and its source.
    pub derived: Derived,
}

impl PointOutcome {
    pub fn new(point: &Point, seed: u64, summary: Summary, derived: Derived) -> Self {
        PointOutcome {
            params: point.params.clone(),
            seed,
            summary,
            derived,
        }
    }

    /// The value of metric `name` at this point.
    pub fn metric(&self, name: &str) -> Option<f64> {
        let summary = serde_json::to_value(&self.summary).unwrap_or(Value::Null);
        metric::value(name, &summary, &self.derived)
    }

    /// The value of the varied `path` at this point.
    pub fn param(&self, path: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(p, _)| p == path)
            .map(|(_, v)| v.as_str())
    }
}

fn ordered_params<S: Serializer>(params: &[(String, String)], s: S) -> Result<S::Ok, S::Error> {
    let mut map = s.serialize_map(Some(params.len()))?;
    for (k, v) in params {
        map.serialize_entry(k, v)?;
    }
    map.end()
}

/// A number for tables and CSV: whole numbers without decimals, others with up to 6 decimals
/// (as every report writes them), and `nan` / `inf` for what is not finite.
pub fn number(x: f64) -> String {
    if !x.is_finite() {
        return if x.is_nan() {
            "nan".into()
        } else {
            "inf".into()
        };
    }
    crate::report::words::number(x)
}
