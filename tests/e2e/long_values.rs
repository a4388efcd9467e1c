//! A long bad value is echoed cut: its first 80 characters and its size in bytes, whether it came
//! from the profile file, a `--set` or a flag clap refused; exit 2 all the same.

use crate::common::{ackbench, stderr, temp_profile};
use crate::profile_errors::{with, BASE};

/// The one error line of `ackbench ARGS`, after checking exit 2.
fn refused_line(args: &[&str]) -> String {
    let o = ackbench(args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{}", &err[..err.len().min(400)]);
    assert!(err.len() < 1000, "the error is {} bytes long", err.len());
    err
}

#[test]
fn a_megabyte_value_in_the_profile_is_cut() {
    // 1 MiB of `x` as the seed, which takes a number.
    let big = "x".repeat(1 << 20);
    let (_dir, path) = temp_profile(&with(&format!("seed: \"{big}\"\n")));
    let err = refused_line(&["check", &path.display().to_string()]);
    let shown = format!(
        "seed: invalid type: string \"{}... (1048576 bytes)\"",
        "x".repeat(80)
    );
    assert!(err.contains(&shown), "{err}");
}

#[test]
fn a_long_set_value_and_key_are_cut() {
    let (_dir, path) = temp_profile(BASE);
    let path = path.display().to_string();
    // 100000 bytes: an argument may not be much longer (MAX_ARG_STRLEN is 128 KiB).
    let big = "m".repeat(100_000);
    let set = format!("mode={big}");
    let err = refused_line(&["check", &path, "--set", &set]);
    // `mode=` + 100000 = 100005 bytes.
    let m80 = "m".repeat(80);
    let prefix = format!(
        "--set mode={}... (100005 bytes): mode: unknown variant",
        &m80[..75]
    );
    assert!(err.contains(&prefix), "{err}");
    assert!(
        err.contains(&format!(
            "`{m80}... (100000 bytes)`, expected `sim` or `live`"
        )),
        "{err}"
    );

    let set = format!("{big}=1");
    let err = refused_line(&["check", &path, "--set", &set]);
    assert!(
        err.contains(&format!(
            "unknown field `{m80}... (100000 bytes)`, expected one of"
        )),
        "{err}"
    );
}

#[test]
fn a_long_flag_value_clap_refuses_is_cut() {
    let big = "f".repeat(100_000);
    let err = refused_line(&["report", ".", "--format", &big]);
    let f80 = "f".repeat(80);
    assert!(
        err.contains(&format!(
            "invalid value '{f80}... (100000 bytes)' for '--format"
        )),
        "{err}"
    );
}
