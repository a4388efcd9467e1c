//! Poison selection: which messages carry an old-schema body no naive consumer can read.
//!
//! No flag is stored per message: [`Selection`] answers for any message at once (a `fraction`
//! by seeking its draw on the `workload` stream), and a [`Cursor`] reads the flags in order.

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use super::arrival::seek;
use crate::profile::Poison;
use crate::record::{Key, Seq};

/// Which of a plan's messages are poison.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Selection {
    None,
    /// Messages 1 to k.
    First(u64),
    /// Message `seq` is poison when draw `seq - 1` from `draws` is below `fraction`.
    Drawn {
        fraction: f64,
        draws: Box<ChaCha8Rng>,
    },
    /// These messages, ascending (`poison: { keys }`; as many as the profile names at most).
    Listed(Vec<Seq>),
}

impl Selection {
    /// The selection among `n` messages. `keys` are the explicit keys, if the profile names them
    /// (otherwise keys are `msg-<seq>`). A fraction's draws start where `rng` is: the flags made
    /// all at once would draw one per message from there.
    pub fn new(p: &Poison, n: usize, keys: Option<&[String]>, rng: &ChaCha8Rng) -> Selection {
        match p {
            Poison::None => Selection::None,
            Poison::First(k) => Selection::First(*k),
            Poison::Fraction(f) => Selection::Drawn {
                fraction: *f,
                draws: Box::new(rng.clone()),
            },
            Poison::Keys(poison) => {
                let mut seqs: Vec<Seq> = match keys {
                    Some(k) => {
                        let poison: std::collections::HashSet<&str> =
                            poison.iter().map(String::as_str).collect();
                        (1..)
                            .zip(&k[..n])
                            .filter(|(_, key)| poison.contains(key.as_str()))
                            .map(|(seq, _)| seq)
                            .collect()
                    }
                    // Message n's key is `msg-<n>`, that spelling only.
                    None => poison
                        .iter()
                        .filter_map(|k| Key::number_of(k))
                        .filter(|&seq| seq >= 1 && seq as usize <= n)
                        .collect(),
                };
                seqs.sort_unstable();
                seqs.dedup();
                Selection::Listed(seqs)
            }
        }
    }

    /// Whether message `seq` (1-based) is poison; a fraction's draw is found at once.
    pub fn is_poison(&self, seq: Seq) -> bool {
        match self {
            Selection::None => false,
            Selection::First(k) => u64::from(seq) <= *k,
            Selection::Drawn { fraction, draws } => {
                seek(draws, u128::from(seq - 1)).random::<f64>() < *fraction
            }
            Selection::Listed(seqs) => seqs.binary_search(&seq).is_ok(),
        }
    }

    /// A cursor at message 1.
    pub fn cursor(&self) -> Cursor {
        Cursor {
            next: 1,
            draws: match self {
                Selection::Drawn { draws, .. } => Some(ChaCha8Rng::clone(draws)),
                _ => None,
            },
        }
    }
}

/// Reads the flags in message order, a fraction's draws one after the other.
#[derive(Debug, Clone)]
pub(super) struct Cursor {
    /// The message whose flag comes next.
    next: Seq,
    /// A fraction's stream, at message `next`'s draw.
    draws: Option<ChaCha8Rng>,
}

impl Cursor {
    /// The flag of the next message, and moves past it.
    pub fn next(&mut self, s: &Selection) -> bool {
        let seq = self.next;
        self.next += 1;
        match (s, &mut self.draws) {
            (Selection::Drawn { fraction, .. }, Some(rng)) => rng.random::<f64>() < *fraction,
            _ => s.is_poison(seq),
        }
    }
}

/// Poison flag for each of `n` messages, all at once: what [`Selection`] answers one by one.
#[cfg(test)]
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

    /// The flags of messages 1 to `n`, through a cursor and one by one.
    fn both(s: &Selection, n: u32) -> (Vec<bool>, Vec<bool>) {
        let mut c = s.cursor();
        let read = (1..=n).map(|_| c.next(s)).collect();
        let each = (1..=n).map(|seq| s.is_poison(seq)).collect();
        (read, each)
    }

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

    #[test]
    fn selections_answer_as_the_flags() {
        // First 2 of 4: messages 1 and 2.
        let rng = seed::stream(1, "w");
        let s = Selection::new(&Poison::First(2), 4, None, &rng);
        assert_eq!(
            both(&s, 4),
            (
                vec![true, true, false, false],
                vec![true, true, false, false]
            )
        );
        // Default keys: msg-3 is message 3; msg-03 and msg-9 (of 4) name no message, msg-3
        // twice is one message.
        let k = Poison::Keys(vec![
            "msg-3".into(),
            "msg-03".into(),
            "msg-9".into(),
            "msg-3".into(),
        ]);
        let s = Selection::new(&k, 4, None, &rng);
        assert_eq!(s, Selection::Listed(vec![3]));
        // Explicit keys: the messages whose key is listed, here 2 and 4.
        let keys: Vec<String> = ["a", "msg-3", "b", "a2"].map(String::from).to_vec();
        let k = Poison::Keys(vec!["msg-3".into(), "a2".into(), "zz".into()]);
        assert_eq!(
            Selection::new(&k, 4, Some(&keys), &rng),
            Selection::Listed(vec![2, 4])
        );
        // A fraction: the same flags as drawn all at once from the same place of the stream.
        let mut eager = seed::stream(5, "workload");
        let s = Selection::new(&Poison::Fraction(0.3), 5_000, None, &eager);
        let flags = poison_flags(&Poison::Fraction(0.3), 5_000, None, &mut eager);
        assert_eq!(both(&s, 5_000), (flags.clone(), flags));
    }
}
