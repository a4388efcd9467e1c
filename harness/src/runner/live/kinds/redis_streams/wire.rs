//! A consumer on the scaled clock (`consumer.clock: scaled`) sends and reads durations in
//! profile time; the Redis server keeps wall time. Each worker's proxy ([`super::proxy`])
//! converts them on the way:
//!
//! - to the server, profile to wall (× `time_scale`): XREADGROUP's and XREAD's `BLOCK` ms (0,
//!   forever, stays 0; a positive block stays at least 1 ms), XCLAIM's min-idle-time, `IDLE`
//!   ms and `TIME` (a Unix-ms time on the consumer's faked clock, moved to the wall clock),
//!   XAUTOCLAIM's min-idle-time, XPENDING's `IDLE` filter, and the timeouts of the blocking
//!   list and sorted-set pops (BLPOP, BRPOP, BRPOPLPUSH, BLMOVE, BLMPOP, BZPOPMIN, BZPOPMAX,
//!   BZMPOP: seconds);
//! - to the consumer, wall to profile (÷ `time_scale`): the idle time of each entry of
//!   XPENDING's extended form, and `idle` and `inactive` of XINFO CONSUMERS;
//! - key expiries both ways ([`super::expiry`]).
//!
//! A positive duration that would round to 0 ms on the wire is sent as 1 ms; -1 (XINFO's
//! "never") is kept. Entry ids, and every other time the server returns (TIME, XINFO STREAM
//! FULL's times), stay the server's wall clock.

use super::resp::Reply;

/// What a command's reply carries that is a duration the consumer reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retime {
    /// XPENDING's extended form: `[[id, consumer, idle ms, deliveries], ...]`.
    PendingIdle,
    /// XINFO CONSUMERS: each consumer's `idle` and `inactive` ms.
    ConsumerIdle,
    /// A key's time to live or expiry time, one integer ([`super::expiry`]).
    Expiry(super::expiry::Reads),
}

/// The conversion of one run: its scale and where the consumer's faked timeline starts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WireTime {
    /// Wall seconds per profile second (`run.time_scale`).
    scale: f64,
    /// Where the faked timeline meets the wall clock, Unix ms: a consumer reads
    /// `start + (wall - start) / scale`.
    start_ms: f64,
}

pub(super) fn upper(a: &[u8]) -> Vec<u8> {
    a.to_ascii_uppercase()
}

pub(super) fn number<T: std::str::FromStr>(a: &[u8]) -> Option<T> {
    std::str::from_utf8(a).ok()?.parse().ok()
}

/// Puts `new` in place of `a`: whether that changed it.
pub(super) fn replace(a: &mut Vec<u8>, new: String) -> bool {
    let changed = *a != new.as_bytes();
    *a = new.into_bytes();
    changed
}

impl WireTime {
    pub fn new(scale: f64, start_ms: f64) -> WireTime {
        WireTime { scale, start_ms }
    }

    /// Profile ms as wall ms: 0 stays 0, a positive duration is at least 1 ms.
    pub fn wall_ms(&self, profile_ms: u64) -> u64 {
        match profile_ms {
            0 => 0,
            ms => ((ms as f64 * self.scale).round() as u64).max(1),
        }
    }

    /// Wall ms as profile ms; a negative value (a "never") is kept.
    pub fn profile_ms(&self, wall_ms: i64) -> i64 {
        if wall_ms < 0 {
            wall_ms
        } else {
            (wall_ms as f64 / self.scale).round() as i64
        }
    }

    /// A time on the consumer's faked clock (Unix ms) on the wall clock.
    pub fn wall_time(&self, faked_ms: u64) -> u64 {
        (self.start_ms + (faked_ms as f64 - self.start_ms) * self.scale)
            .round()
            .max(0.0) as u64
    }

    /// A wall-clock time (Unix ms) on the consumer's faked clock.
    pub fn faked_time(&self, wall_ms: u64) -> u64 {
        (self.start_ms + (wall_ms as f64 - self.start_ms) / self.scale)
            .round()
            .max(0.0) as u64
    }

    /// Profile seconds (a blocking pop's timeout, a decimal) as wall seconds, to the ms.
    fn wall_secs(&self, secs: f64) -> String {
        if secs <= 0.0 {
            return "0".to_string();
        }
        let ms = ((secs * 1e3 * self.scale).round() as u64).max(1);
        format!("{}.{:03}", ms / 1000, ms % 1000)
    }

    /// Converts the durations in command `args` (its name first) in place: whether any changed,
    /// and what its reply carries.
    pub fn command(&self, args: &mut [Vec<u8>]) -> (bool, Option<Retime>) {
        let Some(name) = args.first().map(|a| upper(a)) else {
            return (false, None);
        };
        let mut changed = false;
        let mut ms = |a: &mut Vec<u8>| {
            if let Some(v) = number::<u64>(a) {
                changed |= replace(a, self.wall_ms(v).to_string());
            }
        };
        let mut retime = None;
        match name.as_slice() {
            b"XREADGROUP" | b"XREAD" => {
                // Options come after `GROUP group consumer` (XREADGROUP) and before STREAMS.
                let from = if name == b"XREADGROUP" { 4 } else { 1 };
                let mut i = from;
                while i + 1 < args.len() {
                    match upper(&args[i]).as_slice() {
                        b"STREAMS" => break,
                        b"BLOCK" => ms(&mut args[i + 1]),
                        _ => {}
                    }
                    i += 1;
                }
            }
            b"XCLAIM" => {
                // key group consumer min-idle-time id... [IDLE ms] [TIME ms] [RETRYCOUNT n] ...
                let mut time = None;
                if let Some(a) = args.get_mut(4) {
                    ms(a);
                }
                let mut i = 5;
                while i + 1 < args.len() {
                    match upper(&args[i]).as_slice() {
                        b"IDLE" => ms(&mut args[i + 1]),
                        b"TIME" => time = Some(i + 1),
                        _ => {}
                    }
                    i += 1;
                }
                if let Some(t) = time {
                    if let Some(v) = number::<u64>(&args[t]) {
                        changed |= replace(&mut args[t], self.wall_time(v).to_string());
                    }
                }
            }
            b"XAUTOCLAIM" => {
                if let Some(a) = args.get_mut(4) {
                    ms(a);
                }
            }
            b"XPENDING" if args.len() > 3 => {
                // key group [IDLE min-idle-time] start end count [consumer]: the extended form.
                if upper(&args[3]) == b"IDLE" {
                    if let Some(a) = args.get_mut(4) {
                        ms(a);
                    }
                }
                retime = Some(Retime::PendingIdle);
            }
            b"XINFO" if args.get(1).is_some_and(|a| upper(a) == b"CONSUMERS") => {
                retime = Some(Retime::ConsumerIdle);
            }
            b"BLPOP" | b"BRPOP" | b"BRPOPLPUSH" | b"BLMOVE" | b"BZPOPMIN" | b"BZPOPMAX"
                if args.len() > 2 =>
            {
                let last = args.len() - 1;
                changed |= self.secs(&mut args[last]);
            }
            b"BLMPOP" | b"BZMPOP" if args.len() > 1 => changed |= self.secs(&mut args[1]),
            _ => return self.expiry(args),
        }
        (changed, retime)
    }

    /// Converts a timeout in seconds in place: whether it changed.
    fn secs(&self, a: &mut Vec<u8>) -> bool {
        match number::<f64>(a) {
            Some(v) if v.is_finite() => replace(a, self.wall_secs(v)),
            _ => false,
        }
    }

    /// Converts the durations in a reply (RESP2 or RESP3) the command said it carries.
    pub fn retime<F: Reply>(&self, retime: Retime, f: &mut F) {
        if let Retime::Expiry(reads) = retime {
            if let Some(v) = f.int_mut() {
                *v = self.read_expiry(reads, *v);
            }
            return;
        }
        for item in f.items_mut() {
            match retime {
                Retime::PendingIdle => {
                    if let Some(idle) = item.items_mut().get_mut(2).and_then(Reply::int_mut) {
                        *idle = self.profile_ms(*idle);
                    }
                }
                Retime::ConsumerIdle => {
                    for field in ["idle", "inactive"] {
                        if let Some(v) = item.field_mut(field).and_then(Reply::int_mut) {
                            *v = self.profile_ms(*v);
                        }
                    }
                }
                Retime::Expiry(_) => {}
            }
        }
    }
}

/// `line` (space-separated arguments) as the server gets it through `w`, and what its reply
/// carries; checks that `command` says whether it changed.
#[cfg(test)]
pub(super) fn converted(w: &WireTime, line: &str) -> (String, Option<Retime>) {
    let mut a: Vec<Vec<u8>> = line.split(' ').map(|a| a.as_bytes().to_vec()).collect();
    let (changed, retime) = w.command(&mut a);
    let out = a
        .iter()
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect::<Vec<_>>()
        .join(" ");
    assert_eq!(changed, out != line, "{line}");
    (out, retime)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::live::kinds::redis_streams::resp::{decode_frame, Frame, Resp};

    /// 20x: time_scale 0.05, the faked timeline starting at Unix ms 1 000 000.
    const W: WireTime = WireTime {
        scale: 0.05,
        start_ms: 1_000_000.0,
    };

    /// Converts a decoded reply's durations.
    fn convert(retime: Retime, frame: &mut Frame) {
        match frame {
            Frame::Two(f) => W.retime(retime, f),
            Frame::Three(f) => W.retime(retime, f),
        }
    }

    fn sent(line: &str) -> (String, Option<Retime>) {
        converted(&W, line)
    }

    #[test]
    fn blocking_reads_block_for_the_wall_time_of_their_profile_ms() {
        // 1000 profile ms x 0.05 = 50 wall ms; 0 (forever) stays 0; 5 x 0.05 = 0.25, sent as 1;
        // 30 x 0.05 = 1.5, rounded to 2.
        for (block, wall) in [("1000", "50"), ("0", "0"), ("5", "1"), ("30", "2")] {
            assert_eq!(
                sent(&format!(
                    "XREADGROUP GROUP g c COUNT 1 BLOCK {block} STREAMS s >"
                ))
                .0,
                format!("XREADGROUP GROUP g c COUNT 1 BLOCK {wall} STREAMS s >")
            );
        }
        assert_eq!(
            sent("xread block 2000 streams s $").0,
            "xread block 100 streams s $"
        );
        // A group or consumer named BLOCK is a name; keys after STREAMS are keys.
        assert_eq!(
            sent("XREADGROUP GROUP BLOCK 40 STREAMS BLOCK 0").0,
            "XREADGROUP GROUP BLOCK 40 STREAMS BLOCK 0"
        );
    }

    #[test]
    fn claims_take_their_idle_times_and_time_in_wall_time() {
        // min-idle-time 30 000 -> 1500; IDLE 10 000 -> 500; TIME 1 020 000 on the faked clock
        // is 20 000 faked ms after the start, 1000 wall ms: 1 001 000.
        assert_eq!(
            sent("XCLAIM s g c 30000 0-1 0-2 IDLE 10000 TIME 1020000 RETRYCOUNT 2 JUSTID"),
            (
                "XCLAIM s g c 1500 0-1 0-2 IDLE 500 TIME 1001000 RETRYCOUNT 2 JUSTID".into(),
                None
            )
        );
        // A min-idle-time of 0 stays 0.
        assert_eq!(sent("XCLAIM s g c 0 0-1").0, "XCLAIM s g c 0 0-1");
        assert_eq!(
            sent("XAUTOCLAIM s g c 30000 0-0 COUNT 5").0,
            "XAUTOCLAIM s g c 1500 0-0 COUNT 5"
        );
    }

    #[test]
    fn xpending_filters_in_wall_time_and_its_extended_reply_is_converted() {
        assert_eq!(
            sent("XPENDING s g IDLE 30000 - + 16"),
            (
                "XPENDING s g IDLE 1500 - + 16".into(),
                Some(Retime::PendingIdle)
            )
        );
        assert_eq!(
            sent("XPENDING s g - + 16 c1"),
            ("XPENDING s g - + 16 c1".into(), Some(Retime::PendingIdle))
        );
        // The summary form carries no duration.
        assert_eq!(sent("XPENDING s g"), ("XPENDING s g".into(), None));
        // [[0-1, c1, 1500 ms idle, 2 deliveries]]: 1500 / 0.05 = 30 000 profile ms.
        let reply = b"*1\r\n*4\r\n$3\r\n0-1\r\n$2\r\nc1\r\n:1500\r\n:2\r\n";
        for resp in [Resp::Two, Resp::Three] {
            let (mut f, _) = decode_frame(reply, resp).unwrap().unwrap();
            convert(Retime::PendingIdle, &mut f);
            assert_eq!(
                f.encode().unwrap(),
                b"*1\r\n*4\r\n$3\r\n0-1\r\n$2\r\nc1\r\n:30000\r\n:2\r\n"
            );
        }
    }

    #[test]
    fn xinfo_consumers_idle_and_inactive_are_profile_ms() {
        assert_eq!(
            sent("XINFO CONSUMERS s g"),
            ("XINFO CONSUMERS s g".into(), Some(Retime::ConsumerIdle))
        );
        assert_eq!(sent("XINFO GROUPS s"), ("XINFO GROUPS s".into(), None));
        // RESP2: idle 75 wall ms -> 1500; inactive -1 (never) stays.
        let r2 =
            b"*1\r\n*6\r\n$4\r\nname\r\n$2\r\nc1\r\n$4\r\nidle\r\n:75\r\n$8\r\ninactive\r\n:-1\r\n";
        let (mut f, _) = decode_frame(r2, Resp::Two).unwrap().unwrap();
        convert(Retime::ConsumerIdle, &mut f);
        assert_eq!(
            f.encode().unwrap(),
            b"*1\r\n*6\r\n$4\r\nname\r\n$2\r\nc1\r\n$4\r\nidle\r\n:1500\r\n$8\r\ninactive\r\n:-1\r\n"
        );
        // RESP3: a map per consumer; idle 75 -> 1500, inactive 10 -> 200, order kept.
        let r3 =
            b"*1\r\n%3\r\n$4\r\nname\r\n$2\r\nc1\r\n$4\r\nidle\r\n:75\r\n$8\r\ninactive\r\n:10\r\n";
        let (mut f, _) = decode_frame(r3, Resp::Three).unwrap().unwrap();
        convert(Retime::ConsumerIdle, &mut f);
        assert_eq!(
            f.encode().unwrap(),
            b"*1\r\n%3\r\n$4\r\nname\r\n$2\r\nc1\r\n$4\r\nidle\r\n:1500\r\n$8\r\ninactive\r\n:200\r\n"
        );
    }

    #[test]
    fn blocking_pops_take_wall_seconds() {
        // 2 profile s x 0.05 = 0.1 s; 0.01 s x 0.05 = 0.5 ms, sent as 1 ms; 0 stays 0.
        assert_eq!(sent("BLPOP a b 2").0, "BLPOP a b 0.100");
        assert_eq!(sent("BRPOP a 0.01").0, "BRPOP a 0.001");
        assert_eq!(sent("BLPOP a 0").0, "BLPOP a 0");
        assert_eq!(
            sent("BLMOVE a b LEFT RIGHT 30").0,
            "BLMOVE a b LEFT RIGHT 1.500"
        );
        assert_eq!(
            sent("BZMPOP 60 1 z MIN COUNT 2").0,
            "BZMPOP 3.000 1 z MIN COUNT 2"
        );
    }

    #[test]
    fn times_move_between_the_faked_timeline_and_the_wall_clock() {
        // 60 000 wall ms after the start is 1 200 000 faked ms after it, and back.
        assert_eq!(W.faked_time(1_060_000), 2_200_000);
        assert_eq!(W.wall_time(2_200_000), 1_060_000);
        // Before the start too: 1000 wall ms before it is 20 000 faked ms before.
        assert_eq!(W.faked_time(999_000), 980_000);
        assert_eq!(W.profile_ms(-1), -1);
        assert_eq!(W.profile_ms(3), 60);
    }

    #[test]
    fn other_commands_pass_unchanged() {
        for line in ["XACK s g 0-1", "XADD s * body x", "GET k", "XRANGE s - +"] {
            assert_eq!(sent(line), (line.to_string(), None));
        }
    }
}
