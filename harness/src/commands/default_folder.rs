//! Where `ackbench run` writes its report without `--out`: `reports/<name>/` for the profile as
//! written, and a folder of its own for each variant of it, so that a run with overrides never
//! replaces the report of the profile itself.
//!
//! A variant's folder is `reports/<name>+<overrides>/`: the `--set` arguments as given, then
//! `seed=N` for a `--seed` other than the profile's, joined with `+`
//! (`reports/marlow-thursday+consumer.target=ack-before-work/`). Characters other than letters,
//! digits and `._=-` become `_`; when that changed anything, or the overrides are longer than
//! [`MAX_READABLE`] bytes, the readable part is cut to [`MAX_READABLE`] bytes and ends with `-`
//! and 8 hex digits of a hash of the overrides as given (FNV-1a 64, folded to 32 bits), so that
//! two different variants never share a folder.

use std::path::PathBuf;

/// The longest readable part of a variant's folder name, in bytes.
pub const MAX_READABLE: usize = 60;

/// The report folder of a run of the profile named `name` with `sets` (`--set` arguments), and
/// `seed` when `--seed` gave one other than the profile's own.
pub fn default_folder(name: &str, sets: &[String], seed: Option<u64>) -> PathBuf {
    let mut parts: Vec<String> = sets.iter().map(|s| s.trim().to_string()).collect();
    if let Some(seed) = seed {
        parts.push(format!("seed={seed}"));
    }
    let reports = PathBuf::from("reports");
    if parts.is_empty() {
        return reports.join(name);
    }
    reports.join(format!("{name}+{}", slug(&parts)))
}

/// The overrides as one file-name-safe word (see the module documentation).
pub fn slug(parts: &[String]) -> String {
    let safe: Vec<String> = parts.iter().map(|p| safe_part(p)).collect();
    let exact = safe.iter().zip(parts).all(|(s, p)| s == p);
    let joined = safe.join("+");
    if exact && joined.len() <= MAX_READABLE {
        return joined;
    }
    let cut: String = joined.chars().take(MAX_READABLE).collect();
    format!(
        "{}-{:08x}",
        cut.trim_end_matches(['_', '+']),
        hash32(&parts.join("\n"))
    )
}

/// One override with every character but letters, digits and `._=-` as `_` (a run of them as
/// one), and no leading `.` or `-` (a hidden file, or what looks like a flag).
fn safe_part(part: &str) -> String {
    let mut safe = String::with_capacity(part.len());
    for c in part.chars() {
        let c = if c.is_ascii_alphanumeric() || "._=-".contains(c) {
            c
        } else {
            '_'
        };
        if !(c == '_' && safe.ends_with('_')) {
            safe.push(c);
        }
    }
    safe.trim_start_matches(['.', '-']).to_string()
}

/// FNV-1a 64 of `text`, folded to 32 bits.
fn hash32(text: &str) -> u32 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    (h ^ (h >> 32)) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sets(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_profile_as_written_keeps_its_folder() {
        assert_eq!(
            default_folder("marlow-thursday", &[], None),
            PathBuf::from("reports/marlow-thursday")
        );
    }

    #[test]
    fn overrides_and_a_seed_name_a_folder_of_their_own() {
        assert_eq!(
            default_folder(
                "marlow-thursday",
                &sets(&["consumer.target=ack-before-work"]),
                None
            ),
            PathBuf::from("reports/marlow-thursday+consumer.target=ack-before-work")
        );
        assert_eq!(
            default_folder(
                "healthy",
                &sets(&["broker.visibility_timeout=90s", "consumer.workers=8"]),
                Some(7)
            ),
            PathBuf::from(
                "reports/healthy+broker.visibility_timeout=90s+consumer.workers=8+seed=7"
            )
        );
        assert_eq!(
            default_folder("healthy", &[], Some(7)),
            PathBuf::from("reports/healthy+seed=7")
        );
    }

    #[test]
    fn unsafe_or_long_overrides_are_shortened_and_hashed() {
        // `/`, spaces, braces and quotes become `_` (runs of them one `_`), and a hash keeps
        // `a=x y` and `a=x_y` apart.
        let a = slug(&sets(&["a=x y"]));
        let b = slug(&sets(&["a=x_y"]));
        assert_eq!(b, "a=x_y");
        assert!(
            a.starts_with("a=x_y-") && a.len() == "a=x_y-".len() + 8,
            "{a}"
        );
        let flow = slug(&sets(&["provider.latency={dist: fixed, value: 45s}"]));
        assert!(
            flow.starts_with("provider.latency=_dist_fixed_value_45s-"),
            "{flow}"
        );
        // A `+` inside one override is not the separator of two.
        assert_ne!(slug(&sets(&["a=x+b=y"])), slug(&sets(&["a=x", "b=y"])));
        let path = slug(&sets(&["../../etc=x"]));
        assert!(!path.contains('/') && !path.starts_with('.'), "{path}");
        let long = slug(&sets(&[&format!("workload.keys=[{}]", "k,".repeat(200))]));
        assert_eq!(long.len(), MAX_READABLE + 9, "{long}");
        assert!(long
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._=-+".contains(c)));
    }
}
