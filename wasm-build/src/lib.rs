//! Builds krt's `wasm32-wasip2` components with a nested cargo: krt's guest,
//! kept prebuilt in `guest-component/` ([`guest_component`]), the test
//! components of `tests/build.rs`, for
//! the tests and benchmarks that need a test component ([`test_examples`])
//! and for `tests/compose.sh` (through this crate's binary).
//!
//! Each build gets its own target directory under the outer one, so it
//! neither deadlocks on the outer build's lock nor is rebuilt when only
//! native code changes. The outer build's flags and wrappers (clippy,
//! coverage) are not passed on. When the toolchain lacks the `wasm32-wasip2`
//! target (rustup does not add the targets of `rust-toolchain.toml` to a
//! toolchain that is already installed), it is added with rustup; without
//! rustup the build stops with the command that fixes it.

use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The target every krt component is built for.
pub const TARGET: &str = "wasm32-wasip2";

/// Environment variables of the outer build that must not reach the nested one.
const OUTER_ONLY: &[&str] = &[
    "RUSTFLAGS",
    "CARGO_ENCODED_RUSTFLAGS",
    "RUSTC_WRAPPER",
    "RUSTC_WORKSPACE_WRAPPER",
    "CARGO_BUILD_TARGET",
    "CARGO_TARGET_DIR",
    "CARGO_MAKEFLAGS",
    "MAKEFLAGS",
    "MFLAGS",
];

/// One component build: which packages, with which features and profile.
#[derive(Debug, Clone)]
pub struct Build {
    /// The workspace root (holding `Cargo.toml`).
    pub workspace: PathBuf,
    /// The target directory of this build.
    pub target_dir: PathBuf,
    /// The cargo profile (`guest`, `release`).
    pub profile: String,
    /// Arguments selecting what to build: `-p krt-guest --features component`, ...
    pub select: Vec<String>,
    /// Flags for rustc (none by default: the outer build's are never passed on).
    pub rustflags: Vec<String>,
}

/// Why a component could not be built.
#[derive(Debug)]
pub enum BuildError {
    /// The `wasm32-wasip2` target is missing and could not be added.
    MissingTarget {
        /// What was tried, and the command that fixes it.
        detail: String,
    },
    /// cargo could not be started.
    Spawn(std::io::Error),
    /// cargo failed (its output is above).
    Failed(std::process::ExitStatus),
    /// cargo succeeded but a component is not where it should be.
    Missing(PathBuf),
    /// A built or kept component could not be read or written.
    File {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::MissingTarget { detail } => write!(f, "{detail}"),
            BuildError::Spawn(e) => write!(f, "failed to run cargo to build the components: {e}"),
            BuildError::Failed(status) => write!(
                f,
                "building the components failed ({status}); cargo's output is above"
            ),
            BuildError::Missing(path) => write!(f, "component missing at {}", path.display()),
            BuildError::File { path, source } => write!(f, "{}: {source}", path.display()),
        }
    }
}

impl std::error::Error for BuildError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BuildError::Spawn(e) | BuildError::File { source: e, .. } => Some(e),
            _ => None,
        }
    }
}

fn cargo() -> OsString {
    std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into())
}

/// The `rustc` the nested cargo will use.
fn rustc() -> OsString {
    std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into())
}

/// Whether the toolchain has the standard library for [`TARGET`].
fn has_target(workspace: &Path) -> bool {
    let out = Command::new(rustc())
        .current_dir(workspace)
        .args(["--print", "target-libdir", "--target", TARGET])
        .output();
    match out {
        Ok(out) if out.status.success() => {
            let dir = String::from_utf8_lossy(&out.stdout).trim().to_owned();
            std::fs::read_dir(&dir).is_ok_and(|mut entries| {
                entries.any(|e| {
                    e.is_ok_and(|e| e.file_name().to_string_lossy().starts_with("libstd-"))
                })
            })
        }
        _ => false,
    }
}

/// The rustup toolchain cargo runs under, when it runs under rustup.
fn rustup_toolchain() -> Option<String> {
    std::env::var("RUSTUP_TOOLCHAIN")
        .ok()
        .filter(|t| !t.is_empty())
}

/// Makes sure the toolchain can build for [`TARGET`], adding it with rustup
/// when it is missing.
///
/// # Errors
/// [`BuildError::MissingTarget`] naming the command that fixes it.
pub fn ensure_target(workspace: &Path) -> Result<(), BuildError> {
    if has_target(workspace) {
        return Ok(());
    }
    let fix = match rustup_toolchain() {
        Some(t) => format!("rustup target add {TARGET} --toolchain {t}"),
        None => format!("rustup target add {TARGET}"),
    };
    let mut cmd = Command::new("rustup");
    cmd.current_dir(workspace).args(["target", "add", TARGET]);
    if let Some(t) = rustup_toolchain() {
        cmd.args(["--toolchain", &t]);
    }
    eprintln!("krt: the {TARGET} target is missing; adding it with `{fix}`");
    match cmd.status() {
        Ok(status) if status.success() && has_target(workspace) => Ok(()),
        Ok(status) => Err(BuildError::MissingTarget {
            detail: format!(
                "the Rust toolchain lacks the {TARGET} target and `{fix}` failed ({status}); \
                 run it yourself, then build again"
            ),
        }),
        Err(_) => Err(BuildError::MissingTarget {
            detail: format!(
                "the Rust toolchain lacks the {TARGET} target, which krt's components need, and \
                 rustup is not installed to add it; install the target for your toolchain \
                 (with rustup: `{fix}`), then build again"
            ),
        }),
    }
}

impl Build {
    /// A build of `select` in profile `profile` under `target_dir`.
    pub fn new(
        workspace: impl Into<PathBuf>,
        target_dir: impl Into<PathBuf>,
        profile: &str,
        select: &[&str],
    ) -> Self {
        Build {
            workspace: workspace.into(),
            target_dir: target_dir.into(),
            profile: profile.to_owned(),
            select: select.iter().map(|s| (*s).to_owned()).collect(),
            rustflags: Vec::new(),
        }
    }

    /// The same build with every source path rustc records remapped (the
    /// workspace to `/krt`, cargo's home to `/cargo`), so that its output does
    /// not depend on where the checkout or the registry sit.
    pub fn reproducible(mut self) -> Self {
        let cargo_home = std::env::var_os("CARGO_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")));
        let mut remap = vec![(self.workspace.clone(), "/krt")];
        if let Some(home) = cargo_home {
            remap.push((home, "/cargo"));
        }
        for (from, to) in remap {
            self.rustflags
                .push(format!("--remap-path-prefix={}={to}", from.display()));
        }
        self
    }

    /// The same build with a wasm shadow stack of `bytes` (Rust's default is
    /// 1 MiB): the component's initial linear memory shrinks by the difference.
    /// A call that overflows it traps; it never writes over other data, because
    /// the stack lies below everything else in memory.
    pub fn stack_size(mut self, bytes: u32) -> Self {
        self.rustflags
            .push(format!("-Clink-arg=-zstack-size={bytes}"));
        self
    }

    /// The same build with wasm's 128-bit SIMD (`simd128`), which wasmtime
    /// enables by default: krt's component writes JSON with it (simd-json).
    pub fn simd128(mut self) -> Self {
        self.rustflags.push("-Ctarget-feature=+simd128".into());
        self
    }

    /// Where a built artifact named `file` (for example `krt_guest.wasm`,
    /// `examples/spin.wasm`) lands.
    pub fn artifact(&self, file: &str) -> PathBuf {
        self.target_dir.join(TARGET).join(&self.profile).join(file)
    }

    /// Runs the build; `quiet` passes `--quiet` to cargo.
    ///
    /// # Errors
    /// A missing target that cannot be added, or a failed build.
    pub fn run(&self, quiet: bool) -> Result<(), BuildError> {
        ensure_target(&self.workspace)?;
        let mut cmd = Command::new(cargo());
        cmd.current_dir(&self.workspace).arg("build");
        if quiet {
            cmd.arg("--quiet");
        }
        cmd.arg("--manifest-path")
            .arg(self.workspace.join("Cargo.toml"))
            .args(&self.select)
            .args(["--target", TARGET, "--profile", &self.profile])
            .arg("--target-dir")
            .arg(&self.target_dir);
        for var in OUTER_ONLY {
            cmd.env_remove(var);
        }
        if !self.rustflags.is_empty() {
            cmd.env("CARGO_ENCODED_RUSTFLAGS", self.rustflags.join("\x1f"));
        }
        let status = cmd.status().map_err(BuildError::Spawn)?;
        if !status.success() {
            return Err(BuildError::Failed(status));
        }
        Ok(())
    }

    /// Runs the build and returns the paths of `files` (see [`Build::artifact`]).
    ///
    /// # Errors
    /// As [`Build::run`], or an artifact that is missing afterwards.
    pub fn outputs(&self, quiet: bool, files: &[&str]) -> Result<Vec<PathBuf>, BuildError> {
        self.run(quiet)?;
        files
            .iter()
            .map(|f| {
                let path = self.artifact(f);
                if path.exists() {
                    Ok(path)
                } else {
                    Err(BuildError::Missing(path))
                }
            })
            .collect()
    }
}

/// The directory the test components are built into: `krt-test-guests`
/// under the target directory of this cargo run (`CARGO_TARGET_DIR`, else
/// `<workspace>/target`). `tests/build.rs` builds there too, so a component
/// one of them built is not built again by the other.
pub fn test_guests_dir(workspace: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace.join("target"))
        .join("krt-test-guests")
}

/// For the tests and benchmarks of krt's crates: builds the examples of
/// `package` (a crate of `tests/`, such as `krt-test-middleware`) in release
/// mode into [`test_guests_dir`], quietly, and returns the path of each of
/// `examples` (`examples/<name>.wasm`), in that order.
///
/// # Errors
/// As [`Build::outputs`].
pub fn test_examples(
    workspace: &Path,
    package: &str,
    examples: &[&str],
) -> Result<Vec<PathBuf>, BuildError> {
    let build = Build::new(
        workspace,
        test_guests_dir(workspace),
        "release",
        &["-p", package, "--examples"],
    );
    let files: Vec<String> = examples
        .iter()
        .map(|name| format!("examples/{name}.wasm"))
        .collect();
    let files: Vec<&str> = files.iter().map(String::as_str).collect();
    build.outputs(true, &files)
}

/// For build scripts: `<target>` from `OUT_DIR`
/// (`<target>/[<triple>/]<profile>/build/<pkg>-<hash>/out`).
pub fn outer_target_dir(out_dir: &Path) -> PathBuf {
    out_dir
        .ancestors()
        .find(|p| p.file_name().is_some_and(|n| n == "build"))
        .and_then(|build| build.parent())
        .and_then(|profile| profile.parent())
        .map(Path::to_path_buf)
        .unwrap_or_else(|| out_dir.join("target"))
}

/// For build scripts: tells cargo to run the script again when any of
/// `paths` (relative to `workspace`) changes.
pub fn rerun_if_changed(workspace: &Path, paths: &[&str]) {
    for path in paths {
        println!("cargo:rerun-if-changed={}", workspace.join(path).display());
    }
}

/// Where the prebuilt guest component is kept: `guest-component/krt_guest.wasm`.
pub fn guest_component_file(workspace: &Path) -> PathBuf {
    workspace.join("guest-component").join("krt_guest.wasm")
}

/// What [`guest_component`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GuestComponent {
    /// The kept file was already what the sources build.
    UpToDate,
    /// The kept file was written anew.
    Written,
    /// (With `check`) the kept file is not what the sources build.
    Stale,
}

/// The shadow stack of krt's guest component: 256 KiB, room for objects nested
/// about as deep as serde_json parses (the conformance tests create and update
/// one of 122 levels through every recursion of the guest), and 12 pages less
/// initial memory than Rust's default of 1 MiB (the boundary bench's levers
/// measured each call a little faster with it).
pub const GUEST_STACK_BYTES: u32 = 256 << 10;

/// Builds krt's guest component (`krt-guest` with `component`, profile
/// `guest`) reproducibly under `target_dir`, and compares it and its SHA-256
/// with the kept files ([`guest_component_file`] and `krt_guest.wasm.sha256`
/// beside it); writes them unless `check`.
///
/// # Errors
/// As [`Build::outputs`], or the kept file cannot be read or written.
pub fn guest_component(
    workspace: &Path,
    target_dir: &Path,
    check: bool,
) -> Result<GuestComponent, BuildError> {
    let built = Build::new(
        workspace,
        target_dir.join("krt-guest-component"),
        "guest",
        &["--package", "krt-guest", "--features", "component"],
    )
    .reproducible()
    .stack_size(GUEST_STACK_BYTES)
    .simd128()
    .outputs(false, &["krt_guest.wasm"])?
    .remove(0);
    let file = |path: &Path| {
        let path = path.to_path_buf();
        move |source| BuildError::File { path, source }
    };
    let bytes = std::fs::read(&built).map_err(file(&built))?;
    let digest = sha256_hex(&bytes);
    let kept = guest_component_file(workspace);
    let kept_digest = kept.with_extension("wasm.sha256");
    if std::fs::read(&kept).is_ok_and(|k| k == bytes)
        && std::fs::read_to_string(&kept_digest).is_ok_and(|d| d == digest)
    {
        return Ok(GuestComponent::UpToDate);
    }
    if check {
        return Ok(GuestComponent::Stale);
    }
    std::fs::write(&kept, bytes).map_err(file(&kept))?;
    std::fs::write(&kept_digest, digest).map_err(file(&kept_digest))?;
    Ok(GuestComponent::Written)
}

/// The SHA-256 of `bytes` in lowercase hex.
fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    use std::fmt::Write;
    Sha256::digest(bytes)
        .iter()
        .fold(String::new(), |mut hex, byte| {
            let _ = write!(hex, "{byte:02x}");
            hex
        })
}
