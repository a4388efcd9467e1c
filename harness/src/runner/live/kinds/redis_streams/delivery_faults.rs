//! `drop_delivery` in the RESP proxy: an entry of an XREADGROUP, XCLAIM or XAUTOCLAIM reply
//! the rules select is taken out of the reply before the worker reads it. The server counted
//! the delivery and keeps the entry in the consumer's pending entries list, so it stays there,
//! idle, until a consumer's XAUTOCLAIM (or XCLAIM) takes it once `min_idle` has passed, as in
//! the sim model. An XREADGROUP reply left with no entry at all goes on as the nil the server
//! sends when a read finds nothing, so the worker reads again.
//!
//! `delay_delivery` is refused live on this kind: holding an entry back would hold its reply,
//! and every reply after it on the connection.

use redis_protocol::resp2::types::OwnedFrame as Frame2;
use redis_protocol::resp3::types::OwnedFrame as Frame3;

use super::proxy::RespConnection;
use super::resp::{Frame, Resp};
use crate::record::{Nanos, Seq};
use crate::runner::live::state::HeldDelivery;

impl RespConnection {
    /// Delivery `delivery` of `seq` (entry `id`), handed to the worker by the server, its lease
    /// ending at `lease_end`: true when a rule drops it (recorded here as a delivery the worker
    /// never sees, and noted to be taken out of the reply).
    pub(super) fn delivery_dropped(
        &mut self,
        id: &str,
        seq: Seq,
        delivery: u32,
        lease_end: Nanos,
    ) -> bool {
        if !self.deliveries_faulted {
            return false;
        }
        let state = &self.run.state;
        match state.delivery_fault(self.worker, seq, delivery) {
            Some(HeldDelivery::Dropped) => {
                state.observed_dropped_delivery(self.worker, seq, delivery, lease_end);
                self.dropped.push(id.to_string());
                true
            }
            // The profile check refuses delay_delivery live on this kind.
            Some(HeldDelivery::Later(_)) | None => false,
        }
    }
}

/// Takes the stream entries `ids` (an entry: an array of its id and its fields) out of
/// `frame`, wherever they are in it.
pub(super) fn without_entries(frame: &mut Frame, ids: &[String]) {
    match frame {
        Frame::Two(f) => drop2(f, ids),
        Frame::Three(f) => drop3(f, ids),
    }
}

/// The nil a read that found nothing gets.
pub(super) fn nil(resp: Resp) -> Vec<u8> {
    match resp {
        Resp::Two => b"*-1\r\n".to_vec(),
        Resp::Three => b"_\r\n".to_vec(),
    }
}

fn id2(f: &Frame2) -> Option<&[u8]> {
    match f {
        Frame2::Array(a) if a.len() == 2 && matches!(a[1], Frame2::Array(_) | Frame2::Null) => {
            match &a[0] {
                Frame2::BulkString(id) | Frame2::SimpleString(id) => Some(id),
                _ => None,
            }
        }
        _ => None,
    }
}

fn drop2(f: &mut Frame2, ids: &[String]) {
    let Frame2::Array(items) = f else { return };
    items.retain(|i| !id2(i).is_some_and(|id| ids.iter().any(|d| d.as_bytes() == id)));
    items.iter_mut().for_each(|i| drop2(i, ids));
}

fn id3(f: &Frame3) -> Option<&[u8]> {
    match f {
        Frame3::Array { data, .. }
            if data.len() == 2
                && matches!(
                    data[1],
                    Frame3::Array { .. } | Frame3::Map { .. } | Frame3::Null
                ) =>
        {
            match &data[0] {
                Frame3::BlobString { data, .. } | Frame3::SimpleString { data, .. } => Some(data),
                _ => None,
            }
        }
        _ => None,
    }
}

fn drop3(f: &mut Frame3, ids: &[String]) {
    match f {
        Frame3::Array { data, .. } => {
            data.retain(|i| !id3(i).is_some_and(|id| ids.iter().any(|d| d.as_bytes() == id)));
            data.iter_mut().for_each(|i| drop3(i, ids));
        }
        Frame3::Map { data, .. } => data.values_mut().for_each(|v| drop3(v, ids)),
        _ => {}
    }
}
