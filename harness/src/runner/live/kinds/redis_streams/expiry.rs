//! Key expiries of a consumer on the scaled clock (an idempotency key kept for a day, a lock
//! for 30 s): what it sends is profile time, converted to wall time ([`super::wire`]), and the
//! times to live it reads back are converted to profile time.
//!
//! A whole number of profile seconds is rarely a whole number of wall seconds, so the
//! seconds forms go to the server as their milliseconds forms: `SET ... EX s` as `PX`, `EXAT`
//! as `PXAT`, `SETEX` as `PSETEX`, `EXPIRE` as `PEXPIRE`, `EXPIREAT` as `PEXPIREAT`, the same
//! options of `GETEX`; `TTL` as `PTTL` and `EXPIRETIME` as `PEXPIRETIME`, whose replies are
//! turned back into the consumer's seconds. Absolute times (`EXAT`, `PXAT`, `EXPIREAT`,
//! `PEXPIREAT`, `EXPIRETIME`) move between the consumer's faked clock and the wall clock.
//! A reply's -1 (no expiry) and -2 (no key) are kept.

use super::wire::{number, replace, upper, Retime, WireTime};

/// What an expiry command's reply is, as the consumer reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reads {
    /// TTL: seconds to live (sent as PTTL: the reply is wall ms).
    Seconds,
    /// PTTL: ms to live.
    Millis,
    /// EXPIRETIME: Unix seconds (sent as PEXPIRETIME: the reply is wall Unix ms).
    UnixSeconds,
    /// PEXPIRETIME: Unix ms.
    UnixMillis,
}

impl WireTime {
    /// Converts an expiry command in place: whether it changed, and what its reply carries.
    pub(super) fn expiry(&self, args: &mut [Vec<u8>]) -> (bool, Option<Retime>) {
        let Some(name) = args.first().map(|a| upper(a)) else {
            return (false, None);
        };
        let mut changed = false;
        let mut to = |args: &mut [Vec<u8>], name: &str, i: usize, value: Option<u64>| {
            if let Some(v) = value {
                changed |= replace(&mut args[0], name.to_string());
                changed |= replace(&mut args[i], v.to_string());
            }
        };
        let arg = |args: &[Vec<u8>], i: usize| args.get(i).and_then(|a| number::<u64>(a));
        let reads = match name.as_slice() {
            b"SET" | b"GETEX" => {
                // SET key value [options], GETEX key [options]: the option, then its value.
                let from = if name == b"SET" { 3 } else { 2 };
                for i in from..args.len().saturating_sub(1) {
                    let v = arg(args, i + 1);
                    let (option, value) = match upper(&args[i]).as_slice() {
                        b"EX" => ("PX", v.map(|s| self.wall_ms(s.saturating_mul(1000)))),
                        b"PX" => ("PX", v.map(|ms| self.wall_ms(ms))),
                        b"EXAT" => ("PXAT", v.map(|s| self.wall_time(s.saturating_mul(1000)))),
                        b"PXAT" => ("PXAT", v.map(|ms| self.wall_time(ms))),
                        _ => continue,
                    };
                    if let Some(v) = value {
                        changed |= replace(&mut args[i], option.to_string());
                        changed |= replace(&mut args[i + 1], v.to_string());
                    }
                }
                None
            }
            b"SETEX" | b"EXPIRE" => {
                let ms = arg(args, 2).map(|s| self.wall_ms(s.saturating_mul(1000)));
                let millis = if name == b"SETEX" {
                    "PSETEX"
                } else {
                    "PEXPIRE"
                };
                to(args, millis, 2, ms);
                None
            }
            b"PSETEX" | b"PEXPIRE" => {
                let ms = arg(args, 2).map(|ms| self.wall_ms(ms));
                to(args, &String::from_utf8_lossy(&name), 2, ms);
                None
            }
            b"EXPIREAT" | b"PEXPIREAT" => {
                let per = if name == b"EXPIREAT" { 1000 } else { 1 };
                let at = arg(args, 2).map(|t| self.wall_time(t.saturating_mul(per)));
                to(args, "PEXPIREAT", 2, at);
                None
            }
            b"TTL" | b"PTTL" | b"EXPIRETIME" | b"PEXPIRETIME" if args.len() == 2 => {
                let (millis, reads) = match name.as_slice() {
                    b"TTL" => ("PTTL", Reads::Seconds),
                    b"PTTL" => ("PTTL", Reads::Millis),
                    b"EXPIRETIME" => ("PEXPIRETIME", Reads::UnixSeconds),
                    _ => ("PEXPIRETIME", Reads::UnixMillis),
                };
                changed |= replace(&mut args[0], millis.to_string());
                Some(Retime::Expiry(reads))
            }
            _ => None,
        };
        (changed, reads)
    }

    /// A converted expiry command's reply (wall ms, or wall Unix ms) as the consumer reads it.
    pub(super) fn read_expiry(&self, reads: Reads, v: i64) -> i64 {
        if v < 0 {
            return v;
        }
        let faked = || self.faked_time(v as u64) as i64;
        match reads {
            // Redis rounds a TTL to the nearest second.
            Reads::Seconds => (self.profile_ms(v) as f64 / 1000.0).round() as i64,
            Reads::Millis => self.profile_ms(v),
            Reads::UnixSeconds => faked() / 1000,
            Reads::UnixMillis => faked(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::wire::converted;
    use super::*;

    /// 20x: time_scale 0.05, the faked timeline starting at Unix ms 1 000 000.
    const W: fn() -> WireTime = || WireTime::new(0.05, 1_000_000.0);

    fn sent(line: &str) -> (String, Option<Retime>) {
        converted(&W(), line)
    }

    #[test]
    fn relative_expiries_go_as_wall_milliseconds() {
        // 86 400 profile s (a day) x 0.05 = 4320 wall s = 4 320 000 ms; 30 s -> 1500 ms;
        // PX 10 -> 0.5 ms, sent as 1.
        assert_eq!(
            sent("SET done:k 1 NX EX 86400").0,
            "SET done:k 1 NX PX 4320000"
        );
        assert_eq!(sent("SET lock 1 PX 10 NX").0, "SET lock 1 PX 1 NX");
        assert_eq!(sent("SETEX k 30 v").0, "PSETEX k 1500 v");
        assert_eq!(sent("PSETEX k 30000 v").0, "PSETEX k 1500 v");
        assert_eq!(sent("EXPIRE k 30 NX").0, "PEXPIRE k 1500 NX");
        assert_eq!(sent("PEXPIRE k 30000").0, "PEXPIRE k 1500");
        assert_eq!(sent("GETEX k EX 30").0, "GETEX k PX 1500");
        // A value named EX is a value; KEEPTTL and PERSIST carry no time.
        assert_eq!(sent("SET k EX KEEPTTL").0, "SET k EX KEEPTTL");
        assert_eq!(sent("GETEX k PERSIST").0, "GETEX k PERSIST");
    }

    #[test]
    fn absolute_expiries_move_to_the_wall_clock() {
        // Faked Unix second 1020 = ms 1 020 000, 20 000 faked ms after the start: 1000 wall ms,
        // so wall ms 1 001 000.
        assert_eq!(sent("EXPIREAT k 1020").0, "PEXPIREAT k 1001000");
        assert_eq!(sent("PEXPIREAT k 1020000").0, "PEXPIREAT k 1001000");
        assert_eq!(sent("SET k v EXAT 1020").0, "SET k v PXAT 1001000");
        assert_eq!(sent("GETEX k PXAT 1020000").0, "GETEX k PXAT 1001000");
    }

    #[test]
    fn times_to_live_read_back_in_profile_time() {
        assert_eq!(
            sent("TTL k"),
            ("PTTL k".into(), Some(Retime::Expiry(Reads::Seconds)))
        );
        assert_eq!(
            sent("EXPIRETIME k"),
            (
                "PEXPIRETIME k".into(),
                Some(Retime::Expiry(Reads::UnixSeconds))
            )
        );
        assert_eq!(sent("PTTL k").1, Some(Retime::Expiry(Reads::Millis)));
        let w = W();
        // 1499 wall ms to live: 29 980 profile ms, 30 s rounded; -1 (no expiry), -2 (no key).
        assert_eq!(w.read_expiry(Reads::Seconds, 1499), 30);
        assert_eq!(w.read_expiry(Reads::Millis, 1499), 29_980);
        assert_eq!(w.read_expiry(Reads::Seconds, -1), -1);
        assert_eq!(w.read_expiry(Reads::Millis, -2), -2);
        // Wall ms 1 001 000 is faked ms 1 020 000: second 1020.
        assert_eq!(w.read_expiry(Reads::UnixMillis, 1_001_000), 1_020_000);
        assert_eq!(w.read_expiry(Reads::UnixSeconds, 1_001_000), 1020);
    }
}
