//! How deep a frame's field tables may nest before the proxy parses it. amq-protocol's parser
//! recurses once per nested table (`F`) or array (`A`), and a 131072-byte frame holds about
//! 26,000 of them (5 bytes each: the type, a 4-byte size), enough to overflow a thread's stack.
//! [`deeper_than`] bounds the depth without recursing and without knowing where a method keeps
//! its tables: every `F` or `A` whose size fits the frame is taken for a container, so the
//! count of those open at once is never below the real depth (bytes inside a string that
//! happen to look like a container only make it larger). A frame too small to hold `max + 1`
//! containers is not scanned.

/// The deepest nesting the proxy reads: no client or broker nests tables past a few levels.
pub const MAX_TABLE_DEPTH: usize = 128;

/// The bytes a container takes at the least: its type and its 4-byte size.
const CONTAINER: usize = 5;

/// Whether the field tables and arrays in `payload` (a method or content header frame's) may
/// nest deeper than `max`.
pub fn deeper_than(payload: &[u8], max: usize) -> bool {
    if payload.len() <= max.saturating_mul(CONTAINER) {
        return false;
    }
    // The ends of the containers still open at this byte, innermost last.
    let mut open: Vec<usize> = Vec::new();
    for at in 0..payload.len() {
        while open.last().is_some_and(|end| *end <= at) {
            open.pop();
        }
        if !matches!(payload[at], b'F' | b'A') {
            continue;
        }
        let Some(size) = payload.get(at + 1..at + CONTAINER) else {
            break;
        };
        let size = u32::from_be_bytes([size[0], size[1], size[2], size[3]]) as usize;
        let start = at + CONTAINER;
        // Within the frame, and within the container it would sit in.
        let end = start.saturating_add(size);
        if end > payload.len() || open.last().is_some_and(|outer| end > *outer) {
            continue;
        }
        open.push(end);
        if open.len() > max {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A table holding `n` tables, each inside the last: `F` + size + key `k` per level.
    fn nested(n: usize) -> Vec<u8> {
        let mut inner: Vec<u8> = Vec::new();
        for _ in 0..n {
            let mut t = vec![b'F'];
            t.extend_from_slice(&((inner.len() + 2) as u32).to_be_bytes());
            t.extend_from_slice(&[1, b'k']);
            t.append(&mut inner);
            inner = t;
        }
        inner
    }

    #[test]
    fn tables_nested_past_the_limit_are_found_without_recursing() {
        // 20,000 levels (140,000 bytes): deeper than 128, and the scan does not recurse.
        assert!(deeper_than(&nested(20_000), MAX_TABLE_DEPTH));
        // 129 levels (903 bytes) are over, 128 are not.
        assert!(deeper_than(&nested(129), MAX_TABLE_DEPTH));
        assert!(!deeper_than(&nested(128), MAX_TABLE_DEPTH));
        // A frame of at most 128 * 5 = 640 bytes cannot nest 129 deep: not scanned.
        assert!(!deeper_than(&[b'F'; 640], MAX_TABLE_DEPTH));
    }

    #[test]
    fn text_that_looks_like_a_container_does_not_add_up() {
        // 4,000 `F` and `A` in a header's text: the size each would have (0x46464646, about
        // 1.2 GB) fits no frame, so none is taken for a container.
        assert!(!deeper_than(&b"FA".repeat(2000), MAX_TABLE_DEPTH));
        // Sizes that fit but overlap rather than nest: each closes the one before it.
        let mut flat = Vec::new();
        for _ in 0..300 {
            flat.extend_from_slice(&[b'A', 0, 0, 0, 0]);
        }
        assert!(!deeper_than(&flat, MAX_TABLE_DEPTH));
        // An array of 300 empty arrays side by side: depth 2.
        let mut array = vec![b'A'];
        array.extend_from_slice(&(flat.len() as u32).to_be_bytes());
        array.extend_from_slice(&flat);
        assert!(!deeper_than(&array, MAX_TABLE_DEPTH));
    }
}
