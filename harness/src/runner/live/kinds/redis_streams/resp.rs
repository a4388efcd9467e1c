//! RESP as the proxy reads it: the worker's commands (arrays of bulk strings) and the server's
//! replies, decoded by the `redis-protocol` crate (RESP2, or RESP3 after the worker's `HELLO 3`)
//! into one small value type that says what the stream commands' replies carry.

use redis_protocol::resp2::decode::decode as decode2;
use redis_protocol::resp2::types::OwnedFrame as Frame2;
use redis_protocol::resp3::decode::complete::decode as decode3;
use redis_protocol::resp3::types::OwnedFrame as Frame3;

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

/// The first complete value in `buf` and its length, `None` while it is incomplete.
pub fn decode(buf: &[u8], resp: Resp) -> Result<Option<(Value, usize)>, Undecodable> {
    let err = |e: redis_protocol::error::RedisProtocolError| Undecodable(e.to_string());
    Ok(match resp {
        Resp::Two => decode2(buf).map_err(err)?.map(|(f, n)| (from2(f), n)),
        Resp::Three => decode3(buf).map_err(err)?.map(|(f, n)| (from3(f), n)),
    })
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

/// A command as the worker sent it: its arguments as text (a stream command's arguments are
/// names, ids and numbers; bodies are not read).
pub fn command(v: &Value) -> Option<Vec<String>> {
    match v {
        Value::Array(args) if !args.is_empty() => args.iter().map(Value::text).collect(),
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
        assert_eq!(command(&v).unwrap(), ["XACK", "s", "g"]);
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
}
