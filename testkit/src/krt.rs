//! Running the `krt` binary that this `cargo test` run built.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

/// The target directory of the running test binary (`<target>/<profile>/deps/x` → `<target>`).
fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    exe.ancestors()
        .nth(3)
        .expect("tests run from <target>/<profile>/deps")
        .to_path_buf()
}

/// The compiled-component cache shared by the tests (inside the target dir).
pub fn cache_dir() -> PathBuf {
    target_dir().join("krt-test-cache")
}

/// The workspace root.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("testkit/ sits in the workspace root")
        .to_path_buf()
}

/// The `krt` binary built by this `cargo test` run (the krt-cli package's
/// integration tests make cargo build it).
pub fn krt_bin() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let profile = exe
        .ancestors()
        .nth(2)
        .expect("tests run from <target>/<profile>/deps");
    let bin = profile.join("krt");
    assert!(
        bin.exists(),
        "{} is missing: run `cargo test --workspace` (it builds the krt binary)",
        bin.display()
    );
    bin
}

/// The result of running `krt`.
#[derive(Debug)]
pub struct Run {
    /// The exit code (-1 when killed by a signal).
    pub code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

/// Runs `krt` with `args` against `kubeconfig`, with stdin from `input`, in
/// the kubeconfig's directory (so each cluster has its own `.krt/state`).
pub async fn krt(kubeconfig: &Path, args: &[&str], input: Option<&str>) -> Run {
    krt_at(
        kubeconfig.parent().expect("a directory"),
        kubeconfig,
        args,
        input,
    )
    .await
}

/// Runs `krt --kubeconfig KUBECONFIG ARGS` in `dir` (where its `.krt/state`
/// lives), with stdin from `input`.
pub async fn krt_at(dir: &Path, kubeconfig: &Path, args: &[&str], input: Option<&str>) -> Run {
    let mut full = vec!["--kubeconfig", kubeconfig.to_str().expect("UTF-8 path")];
    full.extend_from_slice(args);
    krt_in(dir, &full, input).await
}

/// A run's exit code, stdout and stderr, for assertion messages.
pub fn show(run: &Run) -> String {
    format!(
        "exit {}\nstdout:\n{}\nstderr:\n{}",
        run.code, run.stdout, run.stderr
    )
}

/// Runs `krt` with `args` in directory `dir`, with no kubeconfig in the environment.
pub async fn krt_in(dir: &Path, args: &[&str], input: Option<&str>) -> Run {
    krt_env(dir, args, &[], input).await
}

/// Runs `krt` with `args` in `dir` with extra environment variables `env`
/// (`KUBECONFIG` is cleared and `HOME` is `dir` unless given), within 2 minutes.
pub async fn krt_env(dir: &Path, args: &[&str], env: &[(&str, &str)], input: Option<&str>) -> Run {
    let mut cmd = tokio::process::Command::new(krt_bin());
    cmd.args(args)
        .current_dir(dir)
        .env("XDG_CACHE_HOME", cache_dir())
        .env_remove("KUBECONFIG")
        .env("HOME", dir)
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("krt starts");
    if let Some(text) = input {
        use tokio::io::AsyncWriteExt;
        let mut stdin = child.stdin.take().expect("piped stdin");
        stdin
            .write_all(text.as_bytes())
            .await
            .expect("stdin written");
    }
    drop(child.stdin.take());
    let out = tokio::time::timeout(Duration::from_secs(120), child.wait_with_output())
        .await
        .expect("krt finishes within 2 minutes")
        .expect("krt's output");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Starts `krt` with `args` in `dir` without waiting for it (to kill it or
/// stop the cluster mid-run), stdin closed and no kubeconfig in the
/// environment; dropping the child kills it.
pub fn krt_spawn(dir: &Path, args: &[&str], stdout: Stdio, stderr: Stdio) -> tokio::process::Child {
    tokio::process::Command::new(krt_bin())
        .args(args)
        .current_dir(dir)
        .env("XDG_CACHE_HOME", cache_dir())
        .env_remove("KUBECONFIG")
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr)
        .kill_on_drop(true)
        .spawn()
        .expect("krt starts")
}

/// A temporary directory for one test, named after `tag`, removed on drop.
pub fn temp_dir(tag: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("krt-{tag}-"))
        .tempdir()
        .expect("a temporary directory")
}

/// The local state of `stack` that `krt` kept in `dir` (`.krt/state/<stack>.json`).
pub fn local_state(dir: &Path, stack: &str) -> serde_json::Value {
    let path = dir.join(format!(".krt/state/{stack}.json"));
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

/// The IDs that the local state of `stack` in `dir` records, sorted.
pub fn state_ids(dir: &Path, stack: &str) -> Vec<String> {
    let mut ids: Vec<String> = local_state(dir, stack)["resources"]
        .as_array()
        .expect("a state lists its resources")
        .iter()
        .map(|r| r["id"].as_str().expect("an ID").to_owned())
        .collect();
    ids.sort();
    ids
}
