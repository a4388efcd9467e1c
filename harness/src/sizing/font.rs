//! The font every chart is drawn with: DejaVu Sans, shipped in `harness/assets/` with its
//! license, embedded in the binary so charts look the same on every machine.

use std::sync::OnceLock;

use plotters::style::{register_font, FontStyle};

/// The family name charts ask for.
pub const FAMILY: &str = "sans-serif";

static FONT: &[u8] = include_bytes!("../../assets/DejaVuSans.ttf");

/// Registers the embedded font once; `false` if it could not be read (charts are then skipped
/// with a message rather than drawn without text).
pub fn ready() -> bool {
    static OK: OnceLock<bool> = OnceLock::new();
    *OK.get_or_init(|| register_font(FAMILY, FontStyle::Normal, FONT).is_ok())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_embedded_font_registers() {
        assert!(super::ready());
    }
}
