//! The charts' one font, shipped in the repository (DejaVu Sans, `harness/assets/`) and embedded
//! in the binary, so drawing text needs no system font library.

use std::sync::OnceLock;

use plotters::style::{register_font, FontStyle};

/// The family every chart's text uses; the embedded font is registered under it.
pub const FAMILY: &str = "sans-serif";

/// DejaVu Sans (see `harness/assets/LICENSE-DejaVu.txt`).
static DEJAVU_SANS: &[u8] = include_bytes!("../../../assets/DejaVuSans.ttf");

/// Registers the embedded font with plotters, once per process. `false` if the font could not be
/// read (it is part of the binary, so only a corrupt build gets there).
pub fn register() -> bool {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    *REGISTERED.get_or_init(|| register_font(FAMILY, FontStyle::Normal, DEJAVU_SANS).is_ok())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_embedded_font_registers() {
        assert!(super::register());
        assert!(super::register(), "registering twice is harmless");
    }
}
