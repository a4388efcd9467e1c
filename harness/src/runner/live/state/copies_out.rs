//! Copies of the run's messages that workers sent (their retries) and that the broker has not
//! shown yet: each kind learns a copy's place (a stream sequence, an entry id, an offset) only
//! when it sees it, and takes it here then.

use std::collections::HashMap;

use crate::record::Seq;

/// Per message, its copies sent and not found yet.
#[derive(Debug, Default)]
pub struct CopiesOut(HashMap<Seq, u32>);

impl CopiesOut {
    /// A worker sent a copy of `seq`.
    pub fn sent(&mut self, seq: Seq) {
        *self.0.entry(seq).or_insert(0) += 1;
    }

    /// Something unknown that names `seq` was found: whether it is one of its copies (then one
    /// fewer is out).
    pub fn found(&mut self, seq: Seq) -> bool {
        match self.0.get_mut(&seq) {
            Some(n) if *n > 0 => {
                *n -= 1;
                true
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_copy_sent_is_found_once() {
        let mut out = CopiesOut::default();
        // Two copies of seq 1 sent: two finds of seq 1 are copies, the third is not.
        out.sent(1);
        out.sent(1);
        assert_eq!(
            [out.found(1), out.found(1), out.found(1)],
            [true, true, false]
        );
        // No copy of seq 2 was sent.
        assert!(!out.found(2));
    }
}
