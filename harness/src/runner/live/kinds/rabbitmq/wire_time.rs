//! The durations on the AMQP wire of a consumer on the scaled clock (`consumer.clock: scaled`):
//! it counts them in profile time, the server in wall time, so the proxy converts each frame
//! that carries one, in both directions (amq-protocol parses and writes the frame again; its
//! length changes with it). Every other frame passes byte for byte.
//!
//! | frame | field | unit | direction |
//! |---|---|---|---|
//! | `connection.tune` | heartbeat | s (u16) | server to worker: wall to profile |
//! | `connection.tune-ok` | heartbeat | s (u16) | worker to server: profile to wall |
//! | `queue.declare` | `x-message-ttl`, `x-expires`, `x-consumer-timeout` arguments | ms | worker to server |
//! | `basic.consume` | `x-consumer-timeout` argument | ms | worker to server |
//! | content header | `expiration` property (ms, as text), `x-delay` header (ms) | ms | both: a publish's to wall, a delivery's back to profile |
//!
//! Each value is rounded to the nearest whole unit; a value that was not 0 stays at least 1
//! (0 means "off" for a heartbeat and "at once" for a TTL), and one past its type's range is
//! held at the range's end (a heartbeat is at most 65 535 s). A value ackbench cannot read as
//! a number (a TTL sent as text) passes unchanged, for the server to refuse as it would.

use amq_protocol::frame::{gen_frame, AMQPFrame, WriteContext};
use amq_protocol::protocol::{basic, connection, queue, AMQPClass};
use amq_protocol::types::{AMQPValue, FieldTable};

/// Durations in milliseconds among `queue.declare`'s arguments.
const DECLARE_ARGUMENTS: [&str; 3] = ["x-message-ttl", "x-expires", "x-consumer-timeout"];
/// Durations in milliseconds among `basic.consume`'s arguments.
const CONSUME_ARGUMENTS: [&str; 1] = ["x-consumer-timeout"];
/// Durations in milliseconds among a message's headers (the delayed-message exchange's).
const MESSAGE_HEADERS: [&str; 1] = ["x-delay"];

/// The conversion of one run: `scale` wall seconds per profile second (`run.time_scale`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WireTime {
    scale: f64,
}

impl WireTime {
    pub fn new(scale: f64) -> WireTime {
        WireTime { scale }
    }

    /// A frame from the worker (`bytes`, parsed as `frame`), as it goes on to the server.
    pub fn to_server(self, frame: Option<&AMQPFrame>, bytes: Vec<u8>) -> Vec<u8> {
        frame
            .and_then(|f| from_worker(f, self.scale))
            .and_then(|f| encode(&f))
            .unwrap_or(bytes)
    }

    /// A frame from the server, as it goes on to the worker.
    pub fn to_worker(self, frame: Option<&AMQPFrame>, bytes: Vec<u8>) -> Vec<u8> {
        frame
            .and_then(|f| from_server(f, 1.0 / self.scale))
            .and_then(|f| encode(&f))
            .unwrap_or(bytes)
    }
}

/// `frame` with its profile durations in wall time (`factor` = the run's scale), or `None`
/// when it carries none.
fn from_worker(frame: &AMQPFrame, factor: f64) -> Option<AMQPFrame> {
    let AMQPFrame::Method(ch, class) = frame else {
        return header(frame, factor);
    };
    let class = match class {
        AMQPClass::Connection(connection::AMQPMethod::TuneOk(t)) => {
            let heartbeat = scaled(t.heartbeat, factor, 0, u16::MAX);
            (heartbeat != t.heartbeat).then(|| {
                AMQPClass::Connection(connection::AMQPMethod::TuneOk(connection::TuneOk {
                    heartbeat,
                    ..t.clone()
                }))
            })?
        }
        AMQPClass::Queue(queue::AMQPMethod::Declare(d)) => {
            let arguments = table(&d.arguments, &DECLARE_ARGUMENTS, factor)?;
            AMQPClass::Queue(queue::AMQPMethod::Declare(queue::Declare {
                arguments,
                ..d.clone()
            }))
        }
        AMQPClass::Basic(basic::AMQPMethod::Consume(c)) => {
            let arguments = table(&c.arguments, &CONSUME_ARGUMENTS, factor)?;
            AMQPClass::Basic(basic::AMQPMethod::Consume(basic::Consume {
                arguments,
                ..c.clone()
            }))
        }
        _ => return None,
    };
    Some(AMQPFrame::Method(*ch, class))
}

/// `frame` with its wall durations in profile time (`factor` = 1 / the run's scale).
fn from_server(frame: &AMQPFrame, factor: f64) -> Option<AMQPFrame> {
    match frame {
        AMQPFrame::Method(ch, AMQPClass::Connection(connection::AMQPMethod::Tune(t))) => {
            let heartbeat = scaled(t.heartbeat, factor, 0, u16::MAX);
            (heartbeat != t.heartbeat).then(|| {
                AMQPFrame::Method(
                    *ch,
                    AMQPClass::Connection(connection::AMQPMethod::Tune(connection::Tune {
                        heartbeat,
                        ..t.clone()
                    })),
                )
            })
        }
        _ => header(frame, factor),
    }
}

/// A content header with its `expiration` and `x-delay` converted (a publish's from the
/// worker, a delivery's from the server).
fn header(frame: &AMQPFrame, factor: f64) -> Option<AMQPFrame> {
    let AMQPFrame::Header(ch, h) = frame else {
        return None;
    };
    let mut properties = h.properties.clone();
    let mut changed = false;
    if let Some(ms) = h.properties.expiration().as_ref() {
        if let Ok(n) = ms.as_str().parse::<i64>() {
            let wall = scaled(n, factor, i64::MIN, i64::MAX);
            if wall != n {
                properties = properties.with_expiration(wall.to_string().into());
                changed = true;
            }
        }
    }
    if let Some(headers) = h.properties.headers().as_ref() {
        if let Some(t) = table(headers, &MESSAGE_HEADERS, factor) {
            properties = properties.with_headers(t);
            changed = true;
        }
    }
    changed.then(|| {
        let mut h = h.clone();
        h.properties = properties;
        AMQPFrame::Header(*ch, h)
    })
}

/// `t` with the integer values of `keys` converted, or `None` when none changed.
fn table(t: &FieldTable, keys: &[&str], factor: f64) -> Option<FieldTable> {
    let mut out = t.clone();
    let mut changed = false;
    for (k, v) in t.inner() {
        if !keys.contains(&k.as_str()) {
            continue;
        }
        if let Some(n) = scaled_value(v, factor).filter(|n| n != v) {
            out.insert(k.clone(), n);
            changed = true;
        }
    }
    changed.then_some(out)
}

/// An integer field value times `factor`, of the same type; `None` for any other value.
fn scaled_value(v: &AMQPValue, factor: f64) -> Option<AMQPValue> {
    use AMQPValue as V;
    Some(match *v {
        V::ShortShortInt(n) => V::ShortShortInt(scaled(n, factor, i8::MIN, i8::MAX)),
        V::ShortShortUInt(n) => V::ShortShortUInt(scaled(n, factor, 0, u8::MAX)),
        V::ShortInt(n) => V::ShortInt(scaled(n, factor, i16::MIN, i16::MAX)),
        V::ShortUInt(n) => V::ShortUInt(scaled(n, factor, 0, u16::MAX)),
        V::LongInt(n) => V::LongInt(scaled(n, factor, i32::MIN, i32::MAX)),
        V::LongUInt(n) => V::LongUInt(scaled(n, factor, 0, u32::MAX)),
        V::LongLongInt(n) => V::LongLongInt(scaled(n, factor, i64::MIN, i64::MAX)),
        _ => return None,
    })
}

/// `n` times `factor`, rounded to the nearest whole unit (halves away from 0); not 0 when `n`
/// is not; held within `lo..=hi`.
fn scaled<T>(n: T, factor: f64, lo: T, hi: T) -> T
where
    T: Copy + Into<i64> + TryFrom<i64>,
{
    let n: i64 = n.into();
    if n == 0 {
        return T::try_from(0).unwrap_or(lo);
    }
    let mut x = (n as f64 * factor).round();
    if x == 0.0 {
        x = n.signum() as f64;
    }
    let x = x.clamp(lo.into() as f64, hi.into() as f64) as i64;
    T::try_from(x).unwrap_or(hi)
}

/// The frame's bytes (its length field counted again).
fn encode(frame: &AMQPFrame) -> Option<Vec<u8>> {
    gen_frame(frame)(WriteContext::from(Vec::new()))
        .ok()
        .map(|c| c.write)
}

#[cfg(test)]
mod tests {
    use super::super::test_frames::{frame, short, tune};
    use super::*;
    use amq_protocol::frame::parse_frame;

    /// time_scale 0.05: 20 profile seconds per wall second.
    const WIRE: WireTime = WireTime { scale: 0.05 };

    fn parsed(bytes: &[u8]) -> AMQPFrame {
        parse_frame(bytes).expect("a frame").1
    }

    fn to_server(bytes: Vec<u8>) -> Vec<u8> {
        WIRE.to_server(Some(&parsed(&bytes)), bytes)
    }

    fn to_worker(bytes: Vec<u8>) -> Vec<u8> {
        WIRE.to_worker(Some(&parsed(&bytes)), bytes)
    }

    #[test]
    fn the_servers_heartbeat_reaches_the_worker_in_profile_seconds_and_its_answer_in_wall() {
        // RabbitMQ's 60 s heartbeat is 60 / 0.05 = 1200 profile seconds; 0 (off) stays 0.
        assert_eq!(to_worker(tune(30, 60)), tune(30, 1200));
        assert_eq!(to_worker(tune(30, 0)), tune(30, 0));
        // A worker answering 1200 profile seconds asks the server for 1200 x 0.05 = 60 s.
        assert_eq!(to_server(tune(31, 1200)), tune(31, 60));
        // 30 s: 1.5 rounds to 2; 10 s: 0.5 rounds to 1; 1 s: 0.05 would round to 0, which
        // would switch heartbeats off, so it stays 1.
        assert_eq!(to_server(tune(31, 30)), tune(31, 2));
        assert_eq!(to_server(tune(31, 10)), tune(31, 1));
        assert_eq!(to_server(tune(31, 1)), tune(31, 1));
        assert_eq!(to_server(tune(31, 0)), tune(31, 0));
        // At time_scale 0.001 the server's 600 s would be 600 000 profile seconds: held at the
        // u16's 65 535; the answer 65 535 is 65.535 s, rounded to 66.
        let slow = WireTime::new(0.001);
        let b = tune(30, 600);
        assert_eq!(slow.to_worker(Some(&parsed(&b)), b), tune(30, 65_535));
        let b = tune(31, 65_535);
        assert_eq!(slow.to_server(Some(&parsed(&b)), b), tune(31, 66));
    }

    /// A field table entry: name, type letter, value bytes.
    fn entry(name: &str, kind: u8, value: &[u8]) -> Vec<u8> {
        let mut e = short(name);
        e.push(kind);
        e.extend_from_slice(value);
        e
    }

    fn table_bytes(entries: &[Vec<u8>]) -> Vec<u8> {
        let body: Vec<u8> = entries.concat();
        let mut t = (body.len() as u32).to_be_bytes().to_vec();
        t.extend(body);
        t
    }

    /// queue.declare (50, 10) of queue "q", durable, with `arguments`.
    fn declare(arguments: &[Vec<u8>]) -> Vec<u8> {
        let mut m = vec![0, 50, 0, 10, 0, 0];
        m.extend(short("q"));
        m.push(0b0000_0010);
        m.extend(table_bytes(arguments));
        frame(1, 1, &m)
    }

    #[test]
    fn queue_arguments_in_milliseconds_reach_the_server_in_wall_time() {
        // x-expires 1 800 000 ms (30 profile minutes, as a 64-bit 'l') is 90 000 ms; x-message-ttl
        // 60 000 ms (a 32-bit 'I') is 3 000 ms; x-max-length (a count) is not a duration. The
        // table is written again in name order (amq-protocol's), which the server does not mind.
        let sent = declare(&[
            entry("x-message-ttl", b'I', &60_000i32.to_be_bytes()),
            entry("x-max-length", b'I', &10i32.to_be_bytes()),
            entry("x-expires", b'l', &1_800_000i64.to_be_bytes()),
        ]);
        let wanted = declare(&[
            entry("x-expires", b'l', &90_000i64.to_be_bytes()),
            entry("x-max-length", b'I', &10i32.to_be_bytes()),
            entry("x-message-ttl", b'I', &3_000i32.to_be_bytes()),
        ]);
        assert_eq!(to_server(sent), wanted);
        // A TTL of 1 ms is 0.05 ms: still 1, not 0 (which would expire at once); one of 0
        // stays 0; one sent as text passes as it is, for the server to refuse.
        let one = declare(&[entry("x-message-ttl", b'I', &1i32.to_be_bytes())]);
        assert_eq!(to_server(one.clone()), one);
        let text = declare(&[entry("x-message-ttl", b'S', &[0, 0, 0, 2, b'6', b'0'])]);
        assert_eq!(to_server(text.clone()), text);
        // Without arguments the frame passes byte for byte.
        assert_eq!(to_server(declare(&[])), declare(&[]));
    }

    #[test]
    fn a_consumer_timeout_in_basic_consume_reaches_the_server_in_wall_time() {
        // basic.consume (60, 20): reserved, queue, tag, flags, x-consumer-timeout 600 000 ms
        // (10 profile minutes) = 30 000 ms.
        let consume = |ms: i64| {
            let mut m = vec![0, 60, 0, 20, 0, 0];
            m.extend(short("q"));
            m.extend(short("ctag"));
            m.push(0);
            m.extend(table_bytes(&[entry(
                "x-consumer-timeout",
                b'l',
                &ms.to_be_bytes(),
            )]));
            frame(1, 1, &m)
        };
        assert_eq!(to_server(consume(600_000)), consume(30_000));
    }

    /// A content header (class 60, body size 2) with `expiration` (flag 0x0100) and/or
    /// `headers` (flag 0x2000); the headers come first on the wire.
    fn content(expiration: Option<&str>, headers: Option<&[Vec<u8>]>) -> Vec<u8> {
        let mut flags = 0u16;
        let mut props = Vec::new();
        if let Some(h) = headers {
            flags |= 0x2000;
            props.extend(table_bytes(h));
        }
        if let Some(e) = expiration {
            flags |= 0x0100;
            props.extend(short(e));
        }
        let mut h = vec![0, 60, 0, 0];
        h.extend_from_slice(&2u64.to_be_bytes());
        h.extend_from_slice(&flags.to_be_bytes());
        h.extend(props);
        frame(2, 1, &h)
    }

    #[test]
    fn a_publishs_expiration_and_x_delay_go_to_wall_time_and_a_deliverys_come_back() {
        // expiration "60000" (1 profile minute) is "3000": one byte shorter, and the frame's
        // length field says so (20 bytes of payload, then 19).
        let sent = content(Some("60000"), None);
        let got = to_server(sent.clone());
        assert_eq!(got, content(Some("3000"), None));
        assert_eq!((sent.len(), got.len()), (7 + 20 + 1, 7 + 19 + 1));
        // A delivery's "3000" reads as the "60000" it was published with.
        assert_eq!(to_worker(content(Some("3000"), None)), sent);
        // "1" stays "1"; "0" stays "0"; "soon" is not a number and passes.
        for e in ["1", "0", "soon"] {
            assert_eq!(to_server(content(Some(e), None)), content(Some(e), None));
        }
        // x-delay 30 000 ms (a 32-bit 'I') is 1 500 ms; another header is left alone.
        let delayed = |ms: i32| {
            content(
                None,
                Some(&[
                    entry("trace", b'S', &[0, 0, 0, 1, b'x']),
                    entry("x-delay", b'I', &ms.to_be_bytes()),
                ]),
            )
        };
        assert_eq!(to_server(delayed(30_000)), delayed(1_500));
        assert_eq!(to_worker(delayed(1_500)), delayed(30_000));
    }

    #[test]
    fn frames_without_durations_and_unparsed_bytes_pass_unchanged() {
        // basic.ack (60, 80) of tag 1; a heartbeat; bytes that are no frame.
        let mut ack = vec![0, 60, 0, 80];
        ack.extend_from_slice(&1u64.to_be_bytes());
        ack.push(0);
        let ack = frame(1, 1, &ack);
        assert_eq!(to_server(ack.clone()), ack);
        let heartbeat = vec![8u8, 0, 0, 0, 0, 0, 0, 0xCE];
        assert_eq!(to_worker(heartbeat.clone()), heartbeat);
        assert_eq!(WIRE.to_server(None, vec![1, 2, 3]), [1, 2, 3]);
        // A content header without expiration or x-delay is not written again.
        let plain = content(None, Some(&[entry("trace", b'S', &[0, 0, 0, 1, b'x'])]));
        assert_eq!(to_worker(plain.clone()), plain);
    }
}
