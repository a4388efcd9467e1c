//! Kafka's framing: every request and every response is a 4-byte big-endian length and that
//! many bytes. A request starts with its API key, API version and correlation id; a response
//! starts with the correlation id of the request it answers (the client matches them, and so
//! does the proxy). Header and body are read and written with the `kafka-protocol` crate.

use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::{ApiKey, RequestHeader, RequestKind, ResponseHeader, ResponseKind};
use kafka_protocol::protocol::{decode_request_header_from_buffer, Decodable, Encodable};

/// Kafka's `socket.request.max.bytes` default, 100 MiB: a request declaring more (or a negative
/// size) makes the broker close the connection without an answer.
pub const MAX_REQUEST: usize = 100 << 20;

/// A response longer than this is taken for bytes that are not Kafka's protocol (the proxy
/// does not buffer more).
pub const MAX_RESPONSE: usize = 256 << 20;

/// Why bytes could not be read as Kafka frames.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    #[error("frame length {0} is not a Kafka frame's")]
    Length(i64),
    /// A size over the limit, or negative: the broker closes the connection at it.
    #[error("a frame declaring {len} bytes, over the broker's limit ({max}) or negative")]
    OverLimit { len: i64, max: usize },
    /// Bytes that are no request of Kafka's (an API key it does not have, a header or body
    /// that does not decode at a version the proxy reads): the broker closes the connection
    /// without an answer. The proxy's words for it.
    #[error("{0}: the broker closes the connection")]
    NotKafka(String),
    /// Bytes the proxy cannot read (a version newer than it knows): passed on as they are.
    #[error("{0}")]
    Decode(String),
}

fn decode_error(e: impl std::fmt::Display) -> FrameError {
    FrameError::Decode(e.to_string())
}

/// Splits every complete frame off the front of `buf`, each as `(whole frame, payload)`: what
/// follows the last complete frame stays in `buf` until the rest arrives. A size over `max`
/// (or negative) or too short for a header ends the split: the frames before it are handed
/// back with the error, `buf` left holding the bad frame and what follows.
pub fn take_frames(buf: &mut Vec<u8>, max: usize) -> (Vec<(Bytes, Bytes)>, Result<(), FrameError>) {
    let mut frames = Vec::new();
    let mut used = 0;
    let mut end_of_split = Ok(());
    while buf.len() - used >= 4 {
        let len = i32::from_be_bytes([buf[used], buf[used + 1], buf[used + 2], buf[used + 3]]);
        let Ok(size) = usize::try_from(len).map(|n| n.min(usize::MAX - 4)) else {
            end_of_split = Err(FrameError::OverLimit {
                len: i64::from(len),
                max,
            });
            break;
        };
        if size > max {
            end_of_split = Err(FrameError::OverLimit {
                len: i64::from(len),
                max,
            });
            break;
        }
        if size < 8 {
            end_of_split = Err(FrameError::Length(i64::from(len)));
            break;
        }
        let end = used + 4 + size;
        if buf.len() < end {
            break;
        }
        let whole = Bytes::copy_from_slice(&buf[used..end]);
        frames.push((whole.clone(), whole.slice(4..)));
        used = end;
    }
    buf.drain(..used);
    (frames, end_of_split)
}

/// A request's header and, when `wanted` says its API key is one the proxy reads, its body.
pub fn read_request(
    mut payload: Bytes,
    wanted: impl Fn(ApiKey) -> bool,
) -> Result<(RequestHeader, Option<RequestKind>), FrameError> {
    let raw = |at: usize| {
        payload
            .get(at..at + 2)
            .map(|b| i16::from_be_bytes([b[0], b[1]]))
    };
    let (Some(key), Some(version)) = (raw(0), raw(2)) else {
        return Err(FrameError::NotKafka(
            "a request too short for its header".into(),
        ));
    };
    let key = ApiKey::try_from(key).map_err(|_| {
        FrameError::NotKafka(format!(
            "a request of API key {key}, which Kafka does not have"
        ))
    })?;
    // At a version the proxy knows, what does not decode is no Kafka request; at a newer
    // one it may be, and is passed on.
    let range = key.valid_versions();
    let known = (range.min..=range.max).contains(&version);
    let refused = |what: &str, e: anyhow::Error| match known {
        true => FrameError::NotKafka(format!(
            "a {key:?} v{version} request whose {what} does not decode ({e})"
        )),
        false => decode_error(e),
    };
    let header =
        decode_request_header_from_buffer(&mut payload).map_err(|e| refused("header", e))?;
    if !wanted(key) {
        return Ok((header, None));
    }
    let body = RequestKind::decode(key, &mut payload, version).map_err(|e| refused("body", e))?;
    Ok((header, Some(body)))
}

/// The correlation id a response answers.
pub fn correlation_id(payload: &[u8]) -> i32 {
    i32::from_be_bytes([payload[0], payload[1], payload[2], payload[3]])
}

/// A response to a request of `key` at `version`: its header and body.
pub fn read_response(
    mut payload: Bytes,
    key: ApiKey,
    version: i16,
) -> Result<(ResponseHeader, ResponseKind), FrameError> {
    let header = ResponseHeader::decode(&mut payload, key.response_header_version(version))
        .map_err(decode_error)?;
    let body = ResponseKind::decode(key, &mut payload, version).map_err(decode_error)?;
    Ok((header, body))
}

/// A whole response frame (length first) for a request of `key` at `version`.
pub fn write_response(
    header: &ResponseHeader,
    body: &ResponseKind,
    key: ApiKey,
    version: i16,
) -> Result<Bytes, FrameError> {
    let mut buf = BytesMut::new();
    buf.extend_from_slice(&[0; 4]);
    header
        .encode(&mut buf, key.response_header_version(version))
        .map_err(decode_error)?;
    body.encode(&mut buf, version).map_err(decode_error)?;
    let len = (buf.len() - 4) as i32;
    buf[..4].copy_from_slice(&len.to_be_bytes());
    Ok(buf.freeze())
}

/// A whole request frame (length first), as a client sends it (the tests' client).
#[cfg(test)]
pub fn write_request(header: &RequestHeader, body: &RequestKind) -> Result<Bytes, FrameError> {
    let key = ApiKey::try_from(header.request_api_key)
        .map_err(|_| FrameError::Decode(format!("API key {}", header.request_api_key)))?;
    let mut buf = BytesMut::new();
    buf.extend_from_slice(&[0; 4]);
    header
        .encode(
            &mut buf,
            key.request_header_version(header.request_api_version),
        )
        .map_err(decode_error)?;
    body.encode(&mut buf, header.request_api_version)
        .map_err(decode_error)?;
    let len = (buf.len() - 4) as i32;
    buf[..4].copy_from_slice(&len.to_be_bytes());
    Ok(buf.freeze())
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_protocol::messages::{HeartbeatRequest, HeartbeatResponse};

    fn heartbeat_request(correlation: i32) -> Bytes {
        let header = RequestHeader::default()
            .with_request_api_key(ApiKey::Heartbeat as i16)
            .with_request_api_version(4)
            .with_correlation_id(correlation);
        let body = RequestKind::Heartbeat(HeartbeatRequest::default().with_generation_id(7));
        write_request(&header, &body).unwrap()
    }

    #[test]
    fn frames_split_where_their_lengths_say_and_a_partial_one_waits() {
        let one = heartbeat_request(1);
        let two = heartbeat_request(2);
        let mut buf = [one.as_ref(), two.as_ref()].concat();
        // Hold back the last 3 bytes of the second frame: only the first is complete.
        let rest = buf.split_off(buf.len() - 3);
        let frames = ok(take_frames(&mut buf, MAX_REQUEST));
        assert_eq!(frames.len(), 1);
        assert_eq!(frames[0].0, one);
        assert_eq!(buf.len(), two.len() - 3);
        buf.extend_from_slice(&rest);
        let frames = ok(take_frames(&mut buf, MAX_REQUEST));
        assert_eq!(frames.len(), 1);
        assert!(buf.is_empty());
        let (header, body) = read_request(frames[0].1.clone(), |k| k == ApiKey::Heartbeat).unwrap();
        assert_eq!(header.correlation_id, 2);
        let Some(RequestKind::Heartbeat(hb)) = body else {
            panic!("not a heartbeat: {body:?}");
        };
        assert_eq!(hb.generation_id, 7);
    }

    #[test]
    fn a_request_the_proxy_does_not_read_keeps_its_body_unread() {
        let mut buf = heartbeat_request(5).to_vec();
        let frames = ok(take_frames(&mut buf, MAX_REQUEST));
        let (header, body) = read_request(frames[0].1.clone(), |_| false).unwrap();
        assert_eq!((header.correlation_id, body.is_none()), (5, true));
    }

    fn ok(split: (Vec<(Bytes, Bytes)>, Result<(), FrameError>)) -> Vec<(Bytes, Bytes)> {
        split.1.unwrap();
        split.0
    }

    #[test]
    fn bytes_that_are_not_kafka_frames_are_refused_after_the_frames_before_them() {
        // A heartbeat, then "GET " read as a length: 1_195_725_856 bytes, over 100 MiB.
        let mut buf = heartbeat_request(5).to_vec();
        buf.extend_from_slice(b"GET / HTTP/1.1\r\n");
        let (frames, end) = take_frames(&mut buf, MAX_REQUEST);
        assert_eq!(frames.len(), 1);
        assert!(matches!(
            end,
            Err(FrameError::OverLimit {
                len: 1_195_725_856,
                ..
            })
        ));
        assert_eq!(buf, b"GET / HTTP/1.1\r\n");
        // A negative size (0xFFFFFFF0 = -16), exactly 100 MiB + 1, and a size too short for a
        // header; exactly 100 MiB waits for its bytes.
        for (head, bad) in [
            ([0xFF, 0xFF, 0xFF, 0xF0], true),
            (((100 << 20) + 1u32).to_be_bytes(), true),
            ([0, 0, 0, 3], false),
        ] {
            let (frames, end) = take_frames(&mut head.to_vec(), MAX_REQUEST);
            assert!(frames.is_empty());
            assert_eq!(matches!(end, Err(FrameError::OverLimit { .. })), bad);
            assert!(end.is_err());
        }
        let (frames, end) = take_frames(&mut (100u32 << 20).to_be_bytes().to_vec(), MAX_REQUEST);
        assert!(frames.is_empty() && end.is_ok());
    }

    /// A request's payload (no size): `key`, `version`, correlation id 7, client id "x", `body`.
    fn payload(key: i16, version: i16, body: &[u8]) -> Bytes {
        let mut p = Vec::new();
        for n in [key, version] {
            p.extend_from_slice(&n.to_be_bytes());
        }
        p.extend_from_slice(&[0, 0, 0, 7, 0, 1, b'x']);
        p.extend_from_slice(body);
        Bytes::from(p)
    }

    #[test]
    fn a_request_kafka_would_not_read_is_refused_and_a_newer_version_passed_on() {
        let not_kafka = |p: Bytes| match read_request(p, |_| true) {
            Err(FrameError::NotKafka(why)) => why,
            other => panic!("not refused: {other:?}"),
        };
        // API key 0x7777 (30583): no Kafka API.
        let why = not_kafka(payload(0x7777, 0, b"garb"));
        assert_eq!(why, "a request of API key 30583, which Kafka does not have");
        // Metadata v1 declaring 2^31 - 1 topics in 3 bytes: no allocation, a refusal.
        let why = not_kafka(payload(3, 1, b"\x7f\xff\xff\xff\x00\x01a"));
        assert!(
            why.starts_with("a Metadata v1 request whose body does not decode"),
            "{why}"
        );
        // A header cut in its client id, and a payload too short for a header at all.
        let why = not_kafka(Bytes::from_static(
            b"\x00\x03\x00\x01\x00\x00\x00\x07\x00\x09x",
        ));
        assert!(
            why.starts_with("a Metadata v1 request whose header does not decode"),
            "{why}"
        );
        assert_eq!(
            not_kafka(Bytes::from_static(b"\x00\x03\x00")),
            "a request too short for its header"
        );
        // Metadata v99 is newer than the proxy reads: passed on for the broker to judge.
        let newer = read_request(payload(3, 99, b"\x7f\xff\xff\xff"), |_| true);
        assert!(matches!(newer, Err(FrameError::Decode(_))), "{newer:?}");
        // A body the proxy does not read is not judged.
        assert!(read_request(payload(3, 1, b"\x7f"), |_| false).is_ok());
    }

    #[test]
    fn a_response_round_trips_with_its_correlation_id() {
        let header = ResponseHeader::default().with_correlation_id(42);
        let body = ResponseKind::Heartbeat(HeartbeatResponse::default().with_error_code(27));
        let frame = write_response(&header, &body, ApiKey::Heartbeat, 4).unwrap();
        let payload = frame.slice(4..);
        assert_eq!(correlation_id(&payload), 42);
        let (h, b) = read_response(payload, ApiKey::Heartbeat, 4).unwrap();
        assert_eq!(h.correlation_id, 42);
        assert!(matches!(b, ResponseKind::Heartbeat(r) if r.error_code == 27));
    }
}
