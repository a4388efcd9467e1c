//! Receipt handles: opaque strings that prove one delivery's lease.
//!
//! A handle encodes the queue (its incarnation number, so that a handle from a deleted and
//! re-created queue of the same name is refused), the message's seq and the delivery's nonce,
//! authenticated with an HMAC-SHA256 tag under a key drawn when the server starts. A forged or
//! corrupted handle fails the tag check and is refused as `ReceiptHandleIsInvalid`.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

use crate::broker::Receipt;

/// Format version byte, first in every handle.
const VERSION: u8 = 1;
/// Bytes of the truncated tag.
const TAG: usize = 16;
/// version + queue + seq + nonce + tag.
const RAW: usize = 1 + 4 + 4 + 4 + TAG;
/// Length of an encoded handle.
pub const HANDLE_LEN: usize = (RAW * 8).div_ceil(6);

/// Why a receipt handle was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ReceiptError {
    #[error("not a receipt handle of this broker")]
    Malformed,
    #[error("the receipt handle's signature does not match")]
    Forged,
}

/// Encodes and checks receipt handles under one key.
#[derive(Clone)]
pub struct ReceiptCodec {
    /// HMAC-SHA256 keyed once; each tag starts from a copy.
    keyed: Hmac<Sha256>,
}

impl std::fmt::Debug for ReceiptCodec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ReceiptCodec { .. }")
    }
}

impl ReceiptCodec {
    pub fn new(key: [u8; 32]) -> ReceiptCodec {
        // HMAC takes keys of any length: this cannot fail.
        let keyed = <Hmac<Sha256> as KeyInit>::new_from_slice(&key)
            .unwrap_or_else(|_| unreachable!("HMAC accepts any key length"));
        ReceiptCodec { keyed }
    }

    /// A codec with a fresh random key: handles of another server (or an earlier run) are refused.
    pub fn random() -> ReceiptCodec {
        ReceiptCodec::new(rand::random())
    }

    fn mac(&self, payload: &[u8]) -> Hmac<Sha256> {
        let mut mac = self.keyed.clone();
        mac.update(payload);
        mac
    }

    /// The handle of delivery `receipt` of queue incarnation `queue`.
    pub fn encode(&self, queue: u32, receipt: Receipt) -> String {
        let mut raw = [0u8; RAW];
        raw[0] = VERSION;
        raw[1..5].copy_from_slice(&queue.to_be_bytes());
        raw[5..9].copy_from_slice(&receipt.seq.to_be_bytes());
        raw[9..13].copy_from_slice(&receipt.nonce.to_be_bytes());
        let tag = self.mac(&raw[..13]).finalize().into_bytes();
        raw[13..].copy_from_slice(&tag[..TAG]);
        URL_SAFE_NO_PAD.encode(raw)
    }

    /// The queue incarnation and receipt a handle proves, if this codec issued it.
    pub fn decode(&self, handle: &str) -> Result<(u32, Receipt), ReceiptError> {
        if handle.len() != HANDLE_LEN {
            return Err(ReceiptError::Malformed);
        }
        let mut raw = [0u8; RAW];
        let n = URL_SAFE_NO_PAD
            .decode_slice(handle.as_bytes(), &mut raw)
            .map_err(|_| ReceiptError::Malformed)?;
        if n != RAW || raw[0] != VERSION {
            return Err(ReceiptError::Malformed);
        }
        self.mac(&raw[..13])
            .verify_truncated_left(&raw[13..])
            .map_err(|_| ReceiptError::Forged)?;
        let word = |i: usize| u32::from_be_bytes([raw[i], raw[i + 1], raw[i + 2], raw[i + 3]]);
        Ok((
            word(1),
            Receipt {
                seq: word(5),
                nonce: word(9),
            },
        ))
    }
}
