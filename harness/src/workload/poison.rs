//! Poison selection: which messages carry an old-schema body no naive consumer can read.

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use crate::profile::Poison;

/// Poison flag for each of `n` messages. `keys` are the explicit keys, if the profile names them
/// (otherwise keys are `msg-<seq>`).
pub fn poison_flags(
    p: &Poison,
    n: usize,
    keys: Option<&[String]>,
    rng: &mut ChaCha8Rng,
) -> Vec<bool> {
    match p {
        Poison::None => vec![false; n],
        Poison::First(k) => (0..n).map(|i| (i as u64) < *k).collect(),
        Poison::Fraction(f) => (0..n).map(|_| rng.random::<f64>() < *f).collect(),
        Poison::Keys(poison) => {
            let poison: std::collections::HashSet<&str> =
                poison.iter().map(String::as_str).collect();
            (0..n)
                .map(|i| {
                    let key = match keys {
                        Some(k) => k[i].clone(),
                        None => format!("msg-{}", i + 1),
                    };
                    poison.contains(key.as_str())
                })
                .collect()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seed;

    #[test]
    fn first_keys_and_fraction() {
        let mut rng = seed::stream(1, "w");
        assert_eq!(
            poison_flags(&Poison::First(2), 4, None, &mut rng),
            vec![true, true, false, false]
        );
        let k = Poison::Keys(vec!["msg-3".into()]);
        assert_eq!(
            poison_flags(&k, 4, None, &mut rng),
            vec![false, false, true, false]
        );
        let n = poison_flags(&Poison::Fraction(0.25), 10_000, None, &mut rng)
            .iter()
            .filter(|&&p| p)
            .count();
        assert!((2_300..2_700).contains(&n), "{n}");
    }
}
