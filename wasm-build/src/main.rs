//! `krt-wasm-build TARGET_DIR PROFILE ARGS...`: builds components as the build
//! scripts do (used by `tests/compose.sh`), from the workspace root.

use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let (Some(target_dir), Some(profile)) = (args.next(), args.next()) else {
        eprintln!("usage: krt-wasm-build TARGET_DIR PROFILE CARGO_BUILD_ARGS...");
        return ExitCode::from(2);
    };
    let select: Vec<String> = args.collect();
    let select: Vec<&str> = select.iter().map(String::as_str).collect();
    let workspace = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("wasm-build/ sits in the workspace root");
    let build = krt_wasm_build::Build::new(workspace, target_dir, &profile, &select);
    match build.run(true) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
