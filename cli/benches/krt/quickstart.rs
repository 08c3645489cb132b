//! The README's first command, measured twice over: `quickstart`, the time a
//! built krt takes to apply `examples/quickstart.yaml` to the embedded
//! cluster, and `first-apply`, the time from a fresh clone to that apply.

use crate::{Bench, Run, percentile, secs, this_krt, timed};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Interleaved rounds of the quickstart apply per krt binary.
const ROUNDS: usize = 7;

/// `krt apply -f examples/quickstart.yaml --yes` by `bin` in a fresh
/// directory with no kubeconfig, so that krt starts krt-sim in-process, with
/// its compile cache in `cache`.
async fn apply_quickstart(bin: &Path, cache: &Path, work: &Path) -> (Duration, Run) {
    let quickstart = krt_testkit::workspace().join("examples/quickstart.yaml");
    let mut cmd = tokio::process::Command::new(bin);
    cmd.args(["apply", "-f"])
        .arg(quickstart)
        .arg("--yes")
        .current_dir(work)
        .env("HOME", work)
        .env("XDG_CACHE_HOME", cache)
        .env_remove("KUBECONFIG")
        .env_remove("KRT_KUBECONFIG")
        .env_remove("KUBERNETES_SERVICE_HOST");
    timed(cmd).await
}

impl Bench {
    /// The quickstart applied to the embedded cluster by this krt, and by
    /// `KRT_BENCH_OTHER_KRT` when set, interleaved, each with a warm compile
    /// cache of its own and a fresh directory (so a fresh embedded cluster).
    pub async fn quickstart(&self) {
        let mut bins: Vec<(String, PathBuf)> = vec![("this krt".into(), this_krt())];
        if let Some(other) = std::env::var_os("KRT_BENCH_OTHER_KRT") {
            bins.push(("other krt".into(), PathBuf::from(other)));
        }
        let caches: Vec<PathBuf> = (0..bins.len())
            .map(|b| self.path().join(format!("quickstart-cache-{b}")))
            .collect();
        for ((name, bin), cache) in bins.iter().zip(&caches) {
            let work = tempfile::tempdir_in(self.path()).unwrap();
            let (_, run) = apply_quickstart(bin, cache, work.path()).await;
            run.check(&format!("{name}, warming its cache"));
        }
        let mut samples = vec![Vec::new(); bins.len()];
        for _ in 0..ROUNDS {
            for (b, (name, bin)) in bins.iter().enumerate() {
                let work = tempfile::tempdir_in(self.path()).unwrap();
                let (took, run) = apply_quickstart(bin, &caches[b], work.path()).await;
                run.check(&format!("{name}, the quickstart"));
                assert!(
                    run.stderr.contains("Applied: 4 created")
                        || run.stdout.contains("Applied: 4 created"),
                    "{name} did not create the quickstart's 4 objects:\n{}\n{}",
                    run.stdout,
                    run.stderr
                );
                samples[b].push(took);
            }
        }
        let first = percentile(&mut samples[0].clone(), 0.5);
        let rows: Vec<Vec<String>> = bins
            .iter()
            .zip(&mut samples)
            .map(|((name, bin), samples)| {
                let median = percentile(samples, 0.5);
                vec![
                    format!("{name} (`{}`)", bin.display()),
                    secs(median),
                    secs(samples[0]),
                    format!("{:.2}", median.as_secs_f64() / first.as_secs_f64()),
                ]
            })
            .collect();
        crate::table(
            &format!(
                "Quickstart: krt apply -f examples/quickstart.yaml on the embedded cluster \
                 (median of {ROUNDS}, interleaved, warm compile cache)"
            ),
            &["krt", "median s", "fastest s", "median / this krt's"],
            &rows,
        );
    }

    /// The README's first command on a fresh clone: this checkout's HEAD
    /// cloned into a temporary directory, then `cargo run -p krt-cli --bin krt
    /// -- apply -f examples/quickstart.yaml` with a new target directory (the
    /// registry cache and the toolchain as they are), under `/usr/bin/time`.
    pub async fn first_apply(&self) {
        let clone = self.path().join("first-apply");
        let workspace = krt_testkit::workspace();
        let cloned = std::process::Command::new("git")
            .args(["clone", "--quiet", "--no-hardlinks"])
            .arg(&workspace)
            .arg(&clone)
            .status()
            .expect("git runs");
        assert!(
            cloned.success(),
            "git clone of {} failed",
            workspace.display()
        );
        let head = std::process::Command::new("git")
            .args(["rev-parse", "--short", "HEAD"])
            .current_dir(&clone)
            .output()
            .expect("git runs");
        let head = String::from_utf8_lossy(&head.stdout).trim().to_owned();
        let mut cmd = tokio::process::Command::new("/usr/bin/time");
        cmd.args(["-f", "krt-bench-time %e %U %S", "cargo", "run", "--quiet"])
            .args(["-p", "krt-cli", "--bin", "krt", "--"])
            .args(["apply", "-f", "examples/quickstart.yaml", "--yes"])
            .current_dir(&clone)
            .env("HOME", &clone)
            .env("CARGO_HOME", cargo_home())
            .env("RUSTUP_HOME", rustup_home())
            .env_remove("CARGO_TARGET_DIR")
            .env_remove("KUBECONFIG")
            .env_remove("KRT_KUBECONFIG");
        let (took, run) = timed(cmd).await;
        run.check("the first command on a fresh clone");
        let times = run
            .stderr
            .lines()
            .find_map(|l| l.strip_prefix("krt-bench-time "))
            .expect("/usr/bin/time's line");
        let [_, user, system]: [f64; 3] = times
            .split_whitespace()
            .map(|t| t.parse().expect("a number of seconds"))
            .collect::<Vec<_>>()
            .try_into()
            .expect("three times");
        let total = took.as_secs();
        crate::table(
            &format!(
                "First apply: the README's first command on a fresh clone of {head} (cargo's \
                 registry cache warm, toolchain present, new target directory)"
            ),
            &["build", "wall", "CPU s (user + system)"],
            &[vec![
                "dev profile (`cargo run -p krt-cli --bin krt -- apply -f examples/quickstart.yaml`)"
                    .into(),
                format!("{}m{:02}s", total / 60, total % 60),
                format!("{:.0}", user + system),
            ]],
        );
    }
}

/// Cargo's home as this process has it, so the clone's build finds the
/// registry cache with `HOME` moved.
fn cargo_home() -> PathBuf {
    std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| home().join(".cargo"))
}

/// Rustup's home as this process has it.
fn rustup_home() -> PathBuf {
    std::env::var_os("RUSTUP_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| home().join(".rustup"))
}

fn home() -> PathBuf {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .expect("HOME is set")
}
