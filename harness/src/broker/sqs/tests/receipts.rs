//! Receipt handles round-trip, and anything this broker did not issue is refused.

use proptest::prelude::*;

use crate::broker::sqs::receipt::{ReceiptCodec, ReceiptError, HANDLE_LEN};
use crate::broker::Receipt;

fn codec() -> ReceiptCodec {
    ReceiptCodec::new([7; 32])
}

proptest! {
    #[test]
    fn round_trip(queue in any::<u32>(), seq in any::<u32>(), nonce in any::<u32>()) {
        let r = Receipt { seq, nonce };
        let h = codec().encode(queue, r);
        prop_assert_eq!(h.len(), HANDLE_LEN);
        prop_assert_eq!(codec().decode(&h), Ok((queue, r)));
    }

    #[test]
    fn any_changed_character_is_refused(seq in 1u32..1000, nonce in 1u32..10, at in 0usize..HANDLE_LEN, c in "[A-Za-z0-9_-]") {
        let h = codec().encode(1, Receipt { seq, nonce });
        let mut chars: Vec<char> = h.chars().collect();
        let new = c.chars().next().unwrap();
        prop_assume!(chars[at] != new);
        chars[at] = new;
        let forged: String = chars.into_iter().collect();
        prop_assert!(codec().decode(&forged).is_err());
    }

    #[test]
    fn arbitrary_strings_are_refused_without_panic(s in ".{0,80}") {
        prop_assert!(codec().decode(&s).is_err());
    }
}

#[test]
fn another_key_or_a_hand_made_handle_is_forged() {
    let h = codec().encode(1, Receipt { seq: 1, nonce: 1 });
    assert_eq!(
        ReceiptCodec::new([8; 32]).decode(&h),
        Err(ReceiptError::Forged)
    );
    // A well-formed handle with a made-up tag.
    use base64::Engine;
    let mut raw = [0u8; 29];
    raw[0] = 1;
    raw[4] = 1;
    raw[8] = 1;
    raw[12] = 1;
    let made_up = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(raw);
    assert_eq!(made_up.len(), HANDLE_LEN);
    assert_eq!(codec().decode(&made_up), Err(ReceiptError::Forged));
    assert_eq!(codec().decode(""), Err(ReceiptError::Malformed));
    assert_eq!(
        codec().decode(&"*".repeat(HANDLE_LEN)),
        Err(ReceiptError::Malformed)
    );
}
