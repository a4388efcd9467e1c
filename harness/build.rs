//! Builds `native/clockwait.c` into the preload library a live run loads beside libfaketime for
//! a scaled consumer clock (`runner::live::clock`), and hands its path to the crate as
//! `ACKBENCH_CLOCKWAIT_SO`. Without a C compiler the library is empty and the scaled clock is
//! unavailable (a run falls back to the real clock with a warning); the build goes on.

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=native/clockwait.c");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"))
        .join("libackbench_clockwait.so");
    let linux = std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux");
    let built = linux
        && cc::Build::new()
            .try_get_compiler()
            .ok()
            .and_then(|compiler| {
                compiler
                    .to_command()
                    .args(["-shared", "-fPIC", "-O2", "-Wall", "-o"])
                    .arg(&out)
                    .arg("native/clockwait.c")
                    .arg("-ldl")
                    .status()
                    .ok()
            })
            .is_some_and(|status| status.success());
    if !built {
        println!(
            "cargo:warning=cannot build native/clockwait.c: live runs will use the real consumer clock"
        );
        std::fs::write(&out, b"").expect("cannot write to OUT_DIR");
    }
    println!("cargo:rustc-env=ACKBENCH_CLOCKWAIT_SO={}", out.display());
}
