//! Links the swarm binary at a fixed address on Linux with glibc (docs/ARCHITECTURE.md,
//! "Start-up"). Every send, claim and hook starts swarm afresh; as a position-independent
//! executable it made the dynamic loader apply some 25,000 relocations to a 20 MB binary, and
//! write to the pages holding them, on every start: more than /bin/true's whole start.
//! A fixed address leaves the loader only the shared libraries' few hundred symbols.
//!
//! A link argument rather than a rustc flag: it needs no `.cargo/config.toml`, so
//! `cargo install --path .` gets it, and it touches the binary alone (not the tests, the
//! benches, build scripts or proc macros).

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && env == "gnu" {
        println!("cargo::rustc-link-arg-bins=-no-pie");
    }
}
