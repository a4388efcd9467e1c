//! Entry points for fuzzing the parsers that read bytes from outside: the SQS endpoint's request
//! parser, the live proxies' frame readers (AMQP, NATS, RESP, Kafka, both directions) and the
//! provider's reading of a call's effect key. Each takes any bytes and returns; a panic is a bug.
//!
//! The cargo-fuzz targets in `fuzz/` call these, and `cargo test` runs a proptest round of each
//! (`fuzz_entry_tests.rs`). Not a stable interface.

use http::{HeaderMap, HeaderName, HeaderValue};

/// `data` cut in two at its first newline: the head (lossily as text) and the rest.
fn split_line(data: &[u8]) -> (String, &[u8]) {
    match data.iter().position(|&b| b == b'\n') {
        Some(i) => (
            String::from_utf8_lossy(&data[..i]).into_owned(),
            &data[i + 1..],
        ),
        None => (String::from_utf8_lossy(data).into_owned(), &[][..]),
    }
}

/// The SQS request parser: the first byte picks the protocol's headers (JSON target, form, any
/// content type, credentials), the next line the action or path, the rest is the body.
pub fn sqs_request(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let (head, body) = split_line(rest);
    let mut headers = HeaderMap::new();
    let mut path = "/".to_string();
    let json = HeaderValue::from_static("application/x-amz-json-1.0");
    match mode % 4 {
        0 => {
            if let Ok(v) = HeaderValue::from_str(&format!("AmazonSQS.{head}")) {
                headers.insert("x-amz-target", v);
            }
            headers.insert("content-type", json);
        }
        1 => {
            let form = HeaderValue::from_static("application/x-www-form-urlencoded");
            headers.insert("content-type", form);
            path = format!("/{head}");
        }
        2 => {
            if let Ok(v) = HeaderValue::from_str(&head) {
                headers.insert("content-type", v);
            }
        }
        _ => {
            let credential = format!("AWS4-HMAC-SHA256 Credential={head}");
            if let Ok(v) = HeaderValue::from_str(&credential) {
                headers.insert("authorization", v);
            }
            let target = HeaderValue::from_static("AmazonSQS.SendMessageBatch");
            headers.insert("x-amz-target", target);
            headers.insert("content-type", json);
        }
    }
    let _ = crate::broker::sqs::parse_request(&path, &headers, body);
}

/// The provider's reading of a call: the first line is a key source as `--key` takes it
/// (`pointer:/order/id`, `header:x-key`, `segment:0`, `form:id`, with `|` steps), the second the
/// path below the worker's base URL, the third one header (`name: value`), the rest the body.
pub fn provider_request(data: &[u8]) {
    let (source, rest) = split_line(data);
    let (path, rest) = split_line(rest);
    let (header, body) = split_line(rest);
    let Ok(source) = crate::provider::http::standalone::parse_key_source(&source) else {
        return;
    };
    let mut headers = HeaderMap::new();
    if let Some((name, value)) = header.split_once(':') {
        if let (Ok(n), Ok(v)) = (
            HeaderName::from_bytes(name.trim().as_bytes()),
            HeaderValue::from_str(value.trim()),
        ) {
            headers.insert(n, v);
        }
    }
    let _ = source.key(&headers, &path, body);
}

/// Feeds `data` to `read` the way reads arrive: in pieces of the size its first byte says (1 to
/// 64), each appended to the buffer `read` takes its whole frames from.
#[cfg(feature = "live")]
fn in_pieces(data: &[u8], mut read: impl FnMut(&mut Vec<u8>)) {
    let Some((&size, rest)) = data.split_first() else {
        return;
    };
    let size = usize::from(size % 64) + 1;
    let mut buf = Vec::new();
    for piece in rest.chunks(size) {
        buf.extend_from_slice(piece);
        read(&mut buf);
    }
}

/// AMQP 0-9-1 frames, either direction (the RabbitMQ proxy's frame splitter and parser).
#[cfg(feature = "live")]
pub fn amqp_frames(data: &[u8]) {
    use crate::runner::live::kinds::rabbitmq::proxy::frame_max::FrameMax;
    use crate::runner::live::kinds::rabbitmq::proxy::frames;
    let mut max = FrameMax::default();
    in_pieces(data, |buf| {
        let (_, over) = frames(buf, &mut max);
        if over.is_some() {
            buf.clear();
        }
    });
}

/// NATS protocol frames, either direction (`INFO`, `CONNECT`, `PUB`, `HPUB`, `MSG`, `HMSG`, ...);
/// a message frame's payload is also replaced, as the proxy does for a fault, and every other
/// line read as a client's (its operation, a `CONNECT`'s options).
#[cfg(feature = "live")]
pub fn nats_frames(data: &[u8]) {
    use crate::runner::live::kinds::nats::frames::{client_line, frame, with_payload};
    use crate::runner::live::kinds::nats::frames::{DEFAULT_MAX_PAYLOAD, MAX_CONTROL_LINE};
    in_pieces(data, |buf| loop {
        match frame(buf, DEFAULT_MAX_PAYLOAD, MAX_CONTROL_LINE) {
            Ok(Some(f)) => {
                match &f.message {
                    Some(m) => drop(with_payload(&buf[..f.len], m, b"replaced")),
                    None => drop(client_line(&buf[..f.len])),
                }
                buf.drain(..f.len);
            }
            Ok(None) => break,
            // Refused at its line: the proxy closes the connection.
            Err(_) => {
                buf.clear();
                break;
            }
        }
    });
}

/// RESP2 or RESP3 frames (the first byte's low bit picks), either direction: commands a worker
/// sends and replies the server gives, each also read as a command's arguments.
#[cfg(feature = "live")]
pub fn resp_frames(data: &[u8]) {
    use crate::runner::live::kinds::redis_streams::limits::{check, COMMANDS, REPLIES};
    use crate::runner::live::kinds::redis_streams::resp::{command_args, decode, Resp};
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    let resp = if which & 1 == 0 {
        Resp::Two
    } else {
        Resp::Three
    };
    // Commands and replies alike pass the limits' scan before they are decoded, as in the proxy.
    let limits = if which & 2 == 0 { &COMMANDS } else { &REPLIES };
    in_pieces(rest, |buf| {
        if check(buf, limits).is_err() {
            buf.clear();
            return;
        }
        while let Ok(Some((value, n))) = decode(buf, resp) {
            let _ = command_args(value);
            buf.drain(..n.clamp(1, buf.len()));
        }
    });
}

/// Kafka requests, worker to broker: framed, each header read and its body decoded.
#[cfg(feature = "live")]
pub fn kafka_requests(data: &[u8]) {
    use crate::runner::live::kinds::kafka::frames::{read_request, take_frames, MAX_REQUEST};
    in_pieces(data, |buf| {
        let (frames, over) = take_frames(buf, MAX_REQUEST);
        for (_, payload) in frames {
            let _ = read_request(payload, |_| true);
        }
        if over.is_err() {
            buf.clear();
        }
    });
}

/// Kafka responses, broker to worker: the first four bytes are the API key and version of the
/// request they answer (big-endian, as a request header has them), the rest is framed responses.
#[cfg(feature = "live")]
pub fn kafka_responses(data: &[u8]) {
    use crate::runner::live::kinds::kafka::frames::MAX_RESPONSE;
    use crate::runner::live::kinds::kafka::frames::{correlation_id, read_response, take_frames};
    use kafka_protocol::messages::ApiKey;
    let Some((asked, rest)) = data.split_first_chunk::<4>() else {
        return;
    };
    let Ok(key) = ApiKey::try_from(i16::from_be_bytes([asked[0], asked[1]])) else {
        return;
    };
    let version = i16::from_be_bytes([asked[2], asked[3]]);
    let valid = key.valid_versions();
    if version < valid.min || version > valid.max {
        return;
    }
    in_pieces(rest, |buf| {
        let (frames, over) = take_frames(buf, MAX_RESPONSE);
        for (_, payload) in frames {
            let _ = correlation_id(&payload);
            let _ = read_response(payload, key, version);
        }
        if over.is_err() {
            buf.clear();
        }
    });
}
