//! RESP as the proxy reads it: the worker's commands (arrays of bulk strings) and the server's
//! replies, decoded by the `redis-protocol` crate (RESP2, or RESP3 after the worker's `HELLO 3`)
//! into one small value type that says what the stream commands' replies carry. A command or a
//! reply whose durations the proxy converts ([`super::wire`]) is encoded again by the crate
//! (a RESP3 map keeps its order: the crate's `index-map` feature).

use redis_protocol::resp2::decode::decode as decode2;
use redis_protocol::resp2::encode::encode as encode2;
use redis_protocol::resp2::types::{OwnedFrame as Frame2, Resp2Frame};
use redis_protocol::resp3::decode::complete::decode as decode3;
use redis_protocol::resp3::encode::complete::encode as encode3;
use redis_protocol::resp3::types::{OwnedFrame as Frame3, Resp3Frame};

/// A decoded RESP value, RESP2 and RESP3 alike (a RESP3 map is its key-value pairs in a row).
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Int(i64),
    Bytes(Vec<u8>),
    Array(Vec<Value>),
    Null,
    Error(String),
    /// A RESP3 push (out of band: it answers no request).
    Push,
    /// Anything else (a double, a boolean...): no stream command answers with it.
    Other,
}

/// Which RESP the server speaks on a connection (RESP3 after a successful `HELLO 3`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resp {
    Two,
    Three,
}

/// Why bytes could not be read as RESP.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Undecodable(pub String);

/// A reply as the crate decoded it, kept to be encoded again when converted.
#[derive(Debug, Clone, PartialEq)]
pub enum Frame {
    Two(Frame2),
    Three(Frame3),
}

/// The first complete frame in `buf` and its length, `None` while it is incomplete.
pub fn decode_frame(buf: &[u8], resp: Resp) -> Result<Option<(Frame, usize)>, Undecodable> {
    let err = |e: redis_protocol::error::RedisProtocolError| Undecodable(e.to_string());
    Ok(match resp {
        Resp::Two => decode2(buf).map_err(err)?.map(|(f, n)| (Frame::Two(f), n)),
        Resp::Three => decode3(buf)
            .map_err(err)?
            .map(|(f, n)| (Frame::Three(f), n)),
    })
}

/// The first complete value in `buf` and its length, `None` while it is incomplete.
pub fn decode(buf: &[u8], resp: Resp) -> Result<Option<(Value, usize)>, Undecodable> {
    Ok(decode_frame(buf, resp)?.map(|(f, n)| (f.into_value(), n)))
}

impl Frame {
    pub fn into_value(self) -> Value {
        match self {
            Frame::Two(f) => from2(f),
            Frame::Three(f) => from3(f),
        }
    }

    /// A RESP3 push: out of band, it answers no request.
    pub fn is_push(&self) -> bool {
        matches!(self, Frame::Three(Frame3::Push { .. }))
    }

    /// The frame's bytes on the wire. The crate's decoder builds a RESP3 map from its last
    /// pair to its first (into an `IndexMap`: its `index-map` feature), so each map is turned
    /// back to the server's order first (a test below checks the bytes).
    pub fn encode(&mut self) -> Result<Vec<u8>, Undecodable> {
        let err = |e: redis_protocol::error::RedisProtocolError| Undecodable(e.to_string());
        let mut buf = match self {
            Frame::Two(f) => vec![0; f.encode_len(false)],
            Frame::Three(f) => {
                wire_order(f);
                vec![0; f.encode_len(false)]
            }
        };
        let n = match self {
            Frame::Two(f) => encode2(&mut buf, f, false).map_err(err)?,
            Frame::Three(f) => encode3(&mut buf, f, false).map_err(err)?,
        };
        buf.truncate(n);
        Ok(buf)
    }
}

/// Reverses every map in `f` (see [`Frame::encode`]).
fn wire_order(f: &mut Frame3) {
    match f {
        Frame3::Map { data, .. } => {
            data.reverse();
            data.values_mut().for_each(wire_order);
        }
        Frame3::Array { data, .. } | Frame3::Push { data, .. } => {
            data.iter_mut().for_each(wire_order)
        }
        _ => {}
    }
}

/// A command's bytes on the wire: an array of bulk strings.
pub fn encode_command(args: &[Vec<u8>]) -> Result<Vec<u8>, Undecodable> {
    let frame = Frame2::Array(args.iter().cloned().map(Frame2::BulkString).collect());
    Frame::Two(frame).encode()
}

/// What converting a reply's durations needs of a frame, RESP2 and RESP3 alike.
pub trait Reply {
    /// An integer's value, to change in place.
    fn int_mut(&mut self) -> Option<&mut i64>;
    /// An array's (or a set's) elements.
    fn items_mut(&mut self) -> &mut [Self]
    where
        Self: Sized;
    /// The value of `field` in a RESP3 map, or in a RESP2 array of field-value pairs.
    fn field_mut(&mut self, field: &str) -> Option<&mut Self>
    where
        Self: Sized;
    /// An integer `n` put into an array at `at` (a reply made up among the server's).
    fn insert_int(&mut self, at: usize, n: i64);
}

impl Reply for Frame2 {
    fn int_mut(&mut self) -> Option<&mut i64> {
        match self {
            Frame2::Integer(i) => Some(i),
            _ => None,
        }
    }

    fn items_mut(&mut self) -> &mut [Frame2] {
        match self {
            Frame2::Array(a) => a,
            _ => &mut [],
        }
    }

    fn field_mut(&mut self, field: &str) -> Option<&mut Frame2> {
        self.items_mut()
            .chunks_exact_mut(2)
            .find(|kv| matches!(&kv[0], Frame2::BulkString(k) | Frame2::SimpleString(k) if k == field.as_bytes()))
            .map(|kv| &mut kv[1])
    }

    fn insert_int(&mut self, at: usize, n: i64) {
        if let Frame2::Array(a) = self {
            a.insert(at.min(a.len()), Frame2::Integer(n));
        }
    }
}

impl Reply for Frame3 {
    fn int_mut(&mut self) -> Option<&mut i64> {
        match self {
            Frame3::Number { data, .. } => Some(data),
            _ => None,
        }
    }

    fn items_mut(&mut self) -> &mut [Frame3] {
        match self {
            Frame3::Array { data, .. } => data,
            _ => &mut [],
        }
    }

    fn field_mut(&mut self, field: &str) -> Option<&mut Frame3> {
        let is = |k: &Frame3| matches!(k, Frame3::BlobString { data, .. } | Frame3::SimpleString { data, .. } if data == field.as_bytes());
        match self {
            Frame3::Map { data, .. } => data.iter_mut().find(|(k, _)| is(k)).map(|(_, v)| v),
            Frame3::Array { data, .. } => data
                .chunks_exact_mut(2)
                .find(|kv| is(&kv[0]))
                .map(|kv| &mut kv[1]),
            _ => None,
        }
    }

    fn insert_int(&mut self, at: usize, n: i64) {
        if let Frame3::Array { data, .. } = self {
            let number = Frame3::Number {
                data: n,
                attributes: None,
            };
            data.insert(at.min(data.len()), number);
        }
    }
}

fn from2(f: Frame2) -> Value {
    match f {
        Frame2::SimpleString(b) | Frame2::BulkString(b) => Value::Bytes(b),
        Frame2::Error(e) => Value::Error(e),
        Frame2::Integer(i) => Value::Int(i),
        Frame2::Array(a) => Value::Array(a.into_iter().map(from2).collect()),
        Frame2::Null => Value::Null,
    }
}

fn from3(f: Frame3) -> Value {
    match f {
        Frame3::BlobString { data, .. }
        | Frame3::SimpleString { data, .. }
        | Frame3::VerbatimString { data, .. } => Value::Bytes(data),
        Frame3::BlobError { data, .. } => Value::Error(String::from_utf8_lossy(&data).into()),
        Frame3::SimpleError { data, .. } => Value::Error(data),
        Frame3::Number { data, .. } => Value::Int(data),
        Frame3::Null => Value::Null,
        Frame3::Array { data, .. } => Value::Array(data.into_iter().map(from3).collect()),
        Frame3::Set { data, .. } => Value::Array(data.into_iter().map(from3).collect()),
        Frame3::Map { data, .. } => Value::Array(
            data.into_iter()
                .flat_map(|(k, v)| [from3(k), from3(v)])
                .collect(),
        ),
        Frame3::Push { .. } => Value::Push,
        _ => Value::Other,
    }
}

impl Value {
    pub fn bytes(&self) -> Option<&[u8]> {
        match self {
            Value::Bytes(b) => Some(b),
            _ => None,
        }
    }

    pub fn text(&self) -> Option<String> {
        self.bytes()
            .map(|b| String::from_utf8_lossy(b).into_owned())
    }

    pub fn array(&self) -> &[Value] {
        match self {
            Value::Array(a) => a,
            _ => &[],
        }
    }

    pub fn int(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            _ => None,
        }
    }

    /// The entries of a stream reply (`[[id, [field, value, ...]], ...]`): their ids. A deleted
    /// entry (nil in place of an entry or of its fields) is not a delivery.
    pub fn entry_ids(&self) -> Vec<String> {
        self.array()
            .iter()
            .filter_map(|e| match e.array() {
                [id, Value::Array(_)] => id.text(),
                _ => None,
            })
            .collect()
    }
}

/// A command's arguments as bytes, exactly as sent.
pub fn command_args(v: Value) -> Option<Vec<Vec<u8>>> {
    match v {
        Value::Array(args) if !args.is_empty() => args
            .into_iter()
            .map(|a| match a {
                Value::Bytes(b) => Some(b),
                _ => None,
            })
            .collect(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_is_read_once_complete() {
        let bytes = b"*3\r\n$4\r\nXACK\r\n$1\r\ns\r\n$1\r\ng\r\n";
        assert_eq!(decode(&bytes[..10], Resp::Two), Ok(None));
        let (v, n) = decode(bytes, Resp::Two).unwrap().unwrap();
        assert_eq!(n, bytes.len());
        assert_eq!(
            command_args(v).unwrap(),
            [b"XACK".to_vec(), b"s".to_vec(), b"g".to_vec()]
        );
    }

    #[test]
    fn stream_entries_are_read_in_resp2_and_resp3() {
        // XREADGROUP's reply: one stream, two entries, the second deleted (nil fields).
        let r2 = b"*1\r\n*2\r\n$1\r\ns\r\n*2\r\n*2\r\n$3\r\n0-1\r\n*2\r\n$4\r\nbody\r\n$1\r\nx\r\n*2\r\n$3\r\n0-2\r\n*-1\r\n";
        let (v, _) = decode(r2, Resp::Two).unwrap().unwrap();
        assert_eq!(v.array()[0].array()[1].entry_ids(), ["0-1"]);
        // The same in RESP3: a map of stream name to entries.
        let r3 = b"%1\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n0-1\r\n*2\r\n$4\r\nbody\r\n$1\r\nx\r\n";
        let (v, _) = decode(r3, Resp::Three).unwrap().unwrap();
        assert_eq!(v.array()[1].entry_ids(), ["0-1"]);
        let (push, _) = decode(b">2\r\n$1\r\na\r\n$1\r\nb\r\n", Resp::Three)
            .unwrap()
            .unwrap();
        assert_eq!(push, Value::Push);
    }

    #[test]
    fn a_frame_is_encoded_again_byte_for_byte() {
        // XPENDING's extended reply (RESP2), and XINFO CONSUMERS' in RESP3: maps (one inside
        // another here), whose fields keep their order.
        let r2 = b"*1\r\n*4\r\n$3\r\n0-1\r\n$2\r\nc1\r\n:1500\r\n:1\r\n";
        let r3 = b"*1\r\n%3\r\n$4\r\nname\r\n$2\r\nc1\r\n$4\r\nidle\r\n:75\r\n$1\r\nm\r\n%2\r\n$1\r\na\r\n:1\r\n$1\r\nb\r\n:2\r\n";
        for (bytes, resp) in [(&r2[..], Resp::Two), (&r3[..], Resp::Three)] {
            let (mut f, n) = decode_frame(bytes, resp).unwrap().unwrap();
            assert_eq!(n, bytes.len());
            assert_eq!(f.encode().unwrap(), bytes);
        }
        assert_eq!(
            encode_command(&[b"XACK".to_vec(), b"s".to_vec()]).unwrap(),
            b"*2\r\n$4\r\nXACK\r\n$1\r\ns\r\n"
        );
    }

    #[test]
    fn fields_and_integers_are_found_in_resp2_pairs_and_resp3_maps() {
        let r2 = b"*4\r\n$4\r\nname\r\n$2\r\nc1\r\n$4\r\nidle\r\n:75\r\n";
        let Some((Frame::Two(mut f), _)) = decode_frame(r2, Resp::Two).unwrap() else {
            panic!("RESP2")
        };
        *f.field_mut("idle").and_then(Reply::int_mut).unwrap() = 1500;
        assert_eq!(f.field_mut("name").and_then(Reply::int_mut), None);
        assert_eq!(f.items_mut()[3], Frame2::Integer(1500));
        let r3 = b"%2\r\n$4\r\nname\r\n$2\r\nc1\r\n$4\r\nidle\r\n:75\r\n";
        let Some((Frame::Three(mut f), _)) = decode_frame(r3, Resp::Three).unwrap() else {
            panic!("RESP3")
        };
        assert_eq!(f.field_mut("idle").and_then(Reply::int_mut), Some(&mut 75));
        assert!(f.field_mut("inactive").is_none());
    }
}
