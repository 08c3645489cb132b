//! `krt-wasm-build TARGET_DIR PROFILE ARGS...`: builds components as the build
//! scripts do (used by `tests/compose.sh`), from the workspace root.
//!
//! `krt-wasm-build guest-component [--check]`: builds krt's guest component
//! reproducibly and keeps it in `guest-component/krt_guest.wasm` (with
//! `--check`, fails when the kept file is not what the sources build).

use krt_wasm_build::GuestComponent;
use std::process::ExitCode;

/// `guest-component [--check]`.
fn guest_component(workspace: &std::path::Path, check: bool) -> ExitCode {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| workspace.join("target"));
    let kept = krt_wasm_build::guest_component_file(workspace);
    match krt_wasm_build::guest_component(workspace, &target, check) {
        Ok(GuestComponent::UpToDate) => {
            eprintln!("{} is up to date", kept.display());
            ExitCode::SUCCESS
        }
        Ok(GuestComponent::Written) => {
            eprintln!("wrote {}", kept.display());
            ExitCode::SUCCESS
        }
        Ok(GuestComponent::Stale) => {
            eprintln!(
                "error: {} is not what guest/, wit/ and Cargo.lock build: run \
                 `cargo run -p krt-wasm-build -- guest-component` and commit it",
                kept.display()
            );
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn main() -> ExitCode {
    let workspace = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("wasm-build/ sits in the workspace root");
    let all: Vec<String> = std::env::args().skip(1).collect();
    if all.first().map(String::as_str) == Some("guest-component") {
        return match all[1..].iter().map(String::as_str).collect::<Vec<_>>()[..] {
            [] => guest_component(workspace, false),
            ["--check"] => guest_component(workspace, true),
            _ => {
                eprintln!("usage: krt-wasm-build guest-component [--check]");
                ExitCode::from(2)
            }
        };
    }
    let mut args = all.into_iter();
    let (Some(target_dir), Some(profile)) = (args.next(), args.next()) else {
        eprintln!("usage: krt-wasm-build TARGET_DIR PROFILE CARGO_BUILD_ARGS...");
        return ExitCode::from(2);
    };
    let select: Vec<String> = args.collect();
    let select: Vec<&str> = select.iter().map(String::as_str).collect();
    let build = krt_wasm_build::Build::new(workspace, target_dir, &profile, &select);
    match build.run(true) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
