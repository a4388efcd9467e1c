//! The sweep grid: the cartesian product of the `--vary` axes, and each point's seed.
//!
//! Points are ordered like nested loops with the first `--vary` outermost: for
//! `--vary a=1,2 --vary b=x,y` the order is (1,x), (1,y), (2,x), (2,y). The order never depends
//! on how the points are scheduled.

use super::error::SizingError;
use super::vary::Vary;

/// The most points a sweep runs. Each point is a full sim run; past a thousand a sweep is better
/// split, and a typo (`--vary x=1,2,...` twice over) should fail before it burns an afternoon.
pub const MAX_POINTS: usize = 1000;

/// One point of the grid: one value per `--vary`, in `--vary` order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Point {
    /// 0-based position in the grid.
    pub index: usize,
    /// (path, value) per `--vary`.
    pub params: Vec<(String, String)>,
}

impl Point {
    /// The point's overrides, as `--set` takes them.
    pub fn sets(&self) -> Vec<String> {
        self.params
            .iter()
            .map(|(p, v)| format!("{p}={v}"))
            .collect()
    }

    /// `path=value, path=value`, for messages.
    pub fn label(&self) -> String {
        self.sets().join(", ")
    }

    /// The value of `path` at this point.
    pub fn value(&self, path: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(p, _)| p == path)
            .map(|(_, v)| v.as_str())
    }
}

/// Every point of the grid, or an error when there are more than [`MAX_POINTS`].
pub fn points(axes: &[Vary]) -> Result<Vec<Point>, SizingError> {
    let shape = axes
        .iter()
        .map(|a| a.values.len().to_string())
        .collect::<Vec<_>>()
        .join(" x ");
    let total = axes
        .iter()
        .try_fold(1usize, |n, a| n.checked_mul(a.values.len()));
    match total {
        Some(n) if n <= MAX_POINTS => {}
        _ => {
            let points = total.map_or_else(|| "too many".to_string(), |n| n.to_string());
            return Err(SizingError::GridTooLarge {
                points,
                shape,
                max: MAX_POINTS,
            });
        }
    }
    let mut out = vec![Vec::new()];
    for axis in axes {
        out = out
            .into_iter()
            .flat_map(|prefix: Vec<(String, String)>| {
                axis.values.iter().map(move |v| {
                    let mut p = prefix.clone();
                    p.push((axis.path.clone(), v.clone()));
                    p
                })
            })
            .collect();
    }
    Ok(out
        .into_iter()
        .enumerate()
        .map(|(index, params)| Point { index, params })
        .collect())
}

/// A point's seed: a fixed hash of the profile's seed and the point's parameters, so that a
/// point gives the same run whatever the other points are and however they are scheduled.
///
/// `splitmix64(fnv1a64(b"ackbench-sweep" ++ seed as 8 little-endian bytes ++
/// for each (path, value) in --vary order: path ++ "=" ++ value ++ 0x00))`: FNV-1a 64 (offset
/// 0xcbf29ce484222325, prime 0x100000001b3), then SplitMix64's finaliser to spread its bits.
/// A sweep that varies `seed` itself runs each point with the seed it names.
pub fn point_seed(profile_seed: u64, params: &[(String, String)]) -> u64 {
    let mut h = Fnv::new();
    h.write(b"ackbench-sweep");
    h.write(&profile_seed.to_le_bytes());
    for (path, value) in params {
        h.write(path.as_bytes());
        h.write(b"=");
        h.write(value.as_bytes());
        h.write(&[0]);
    }
    splitmix64(h.0)
}

struct Fnv(u64);

impl Fnv {
    fn new() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
}

fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn axis(path: &str, values: &[&str]) -> Vary {
        Vary {
            arg: format!("{path}={}", values.join(",")),
            path: path.into(),
            values: values.iter().map(|v| v.to_string()).collect(),
        }
    }

    #[test]
    fn the_first_vary_is_the_outer_loop() {
        let p = points(&[axis("a", &["1", "2"]), axis("b", &["x", "y", "z"])]).expect("fits");
        let labels: Vec<String> = p.iter().map(Point::label).collect();
        assert_eq!(
            labels,
            ["a=1, b=x", "a=1, b=y", "a=1, b=z", "a=2, b=x", "a=2, b=y", "a=2, b=z"]
        );
        assert_eq!(p[4].index, 4);
        assert_eq!(p[4].value("b"), Some("y"));
        assert_eq!(p[4].sets(), ["a=2", "b=y"]);
    }

    #[test]
    fn a_grid_past_the_cap_is_refused_before_it_is_built() {
        let values: Vec<String> = (0..101).map(|i| i.to_string()).collect();
        let refs: Vec<&str> = values.iter().map(String::as_str).collect();
        let err = points(&[axis("a", &refs), axis("b", &refs[..10])])
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            err.contains("1010 points (101 x 10), more than the 1000"),
            "{err}"
        );
        assert!(points(&[axis("a", &refs[..100]), axis("b", &refs[..10])]).is_ok());
    }

    #[test]
    fn seeds_depend_on_the_profile_seed_and_the_parameters_only() {
        let p = |v: &str| vec![("broker.visibility_timeout".to_string(), v.to_string())];
        assert_eq!(point_seed(1, &p("30s")), point_seed(1, &p("30s")));
        assert_ne!(point_seed(1, &p("30s")), point_seed(1, &p("45s")));
        assert_ne!(point_seed(1, &p("30s")), point_seed(2, &p("30s")));
        // Fixed forever: a sweep's points reproduce across versions and machines.
        assert_eq!(point_seed(1, &p("30s")), 7_646_702_632_407_524_813);
    }
}
