//! krt's performance, measured side by side in one run against krt-sim and
//! printed as tables of ratios (`cargo bench -p krt-cli --bench krt`, optionally
//! followed by `-- SECTION…` to pick sections). Every figure is taken in this
//! run; none is a stored number. With `--write-docs`, each section's output
//! also replaces its block in `docs/performance.md`, the one place the docs'
//! figures come from (`cli/tests/suite/docs.rs` checks that they do).
//!
//! 1. boundary: the same Runtime calls through `ComponentRuntime` (sandboxed
//!    guest) and `NativeRuntime` (the same logic compiled in), interleaved.
//! 2. throughput: `krt apply` vs `kubectl apply` (client-side and server-side)
//!    vs a raw concurrent server-side-apply loop, each on a fresh simulator.
//! 3. requests: the requests per object of a create, an unchanged re-apply
//!    and an update, counted at the simulator, and krt's time against the
//!    limit those requests set at 5 ms each.
//! 4. startup: `krt apply` of one ConfigMap with a cold and a warm compile
//!    cache, the time to its first request, and its time outside API calls.
//! 5. memory: peak RSS of `krt apply` (1,000 resources) and the most linear
//!    memory one guest instance used.
//! 6. scaling: `krt apply` of 10 to 5,000 ConfigMaps.
//! 7. middleware: what a chain of 1 and of 3 pass-through middleware adds to
//!    an apply, against the same runtime with no chain, interleaved.
//! 8. profiles: with `KRT_BENCH_OTHER_KRT=path`, a krt binary built with
//!    another profile against this one, interleaved: a first apply at 5 ms
//!    per request, an unchanged re-apply and a cold start.
//! 9. quickstart: `krt apply -f examples/quickstart.yaml` on the embedded
//!    cluster, against `KRT_BENCH_OTHER_KRT` when set, interleaved.
//! 10. components: the size of each component krt ships or tests with.
//! 11. instructions: the instructions `krt apply` executes per object (1,000
//!     creates, then 1,000 unchanged), counted by callgrind and split by crate.
//! 12. first-apply (only when named): the README's first command on a fresh
//!     clone, wall and CPU time.
//! 13. real (only when named, with `KRT_E2E_KUBECONFIG`): krt, kubectl and the
//!     limit their requests set, for 1,000 ConfigMaps in a new namespace, on
//!     krt-sim and on the real cluster that variable names, side by side.
//!
//! `KRT_BENCH_KRT=path` measures another krt binary (a release build, say)
//! in place of the one this bench was built with.

use futures::{StreamExt, stream};
use krt_host::model::{ApplyOptions, ReadOptions, Resource, WatchRequest};
use krt_host::{
    ComponentRuntime, ComponentSource, EngineOptions, KubeCluster, Middleware, NativeRuntime,
    Runtime,
};
use krt_sim::SimConfig;
use krt_testkit::{TestCluster, resource};
use kube::api::{Api, DynamicObject, Patch, PatchParams};
use kube::discovery::ApiResource;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Every section, in the order a full run takes them. A run names sections to
/// pick them; `OPT_IN` ones run only when named.
const SECTIONS: [&str; 14] = [
    "boundary",
    "throughput",
    "requests",
    "startup",
    "memory",
    "scaling",
    "middleware",
    "profiles",
    "quickstart",
    "components",
    "registry",
    "instructions",
    "first-apply",
    "real",
];

/// Sections that a run without names leaves out: `first-apply` builds krt
/// from a fresh clone (minutes of both cores); `real` needs a real cluster.
const OPT_IN: [&str; 2] = ["first-apply", "real"];

/// What the running section has printed, kept for `--write-docs`.
static OUTPUT: Mutex<String> = Mutex::new(String::new());

/// Prints a line, and keeps it as part of the running section's output.
macro_rules! say {
    () => {
        say!("")
    };
    ($($arg:tt)*) => {{
        let line = format!($($arg)*);
        println!("{line}");
        let mut output = $crate::OUTPUT.lock().unwrap();
        output.push_str(&line);
        output.push('\n');
    }};
}

mod components;
mod docs;
mod instructions;
mod quickstart;
mod registry;

/// The krt binary measured: `KRT_BENCH_KRT` when set (a krt built another
/// way, such as `target/release/krt`), else the one this bench was built with.
fn this_krt() -> PathBuf {
    std::env::var_os("KRT_BENCH_KRT")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_krt")))
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let write_docs = args.iter().any(|a| a == "--write-docs");
    let wanted: Vec<&str> = args
        .iter()
        .filter(|a| !a.starts_with('-'))
        .map(String::as_str)
        .collect();
    if let Some(unknown) = wanted.iter().find(|w| !SECTIONS.contains(w)) {
        panic!(
            "no section {unknown:?}: the sections are {}",
            SECTIONS.join(", ")
        );
    }
    let picked: Vec<&str> = SECTIONS
        .into_iter()
        .filter(|name| {
            if wanted.is_empty() {
                !OPT_IN.contains(name)
            } else {
                wanted.contains(name)
            }
        })
        .collect();
    let backtraces = ["RUST_BACKTRACE", "RUST_LIB_BACKTRACE"]
        .iter()
        .any(|v| std::env::var_os(v).is_some());
    if picked.len() > 1 || backtraces {
        // Each section in a process of its own: what one section's simulators
        // leave in this process (tasks, memory, a busy runtime) must not slow
        // the next one down. Nor does it capture a backtrace with every error,
        // whatever the environment says.
        for name in picked {
            let status = std::process::Command::new(std::env::current_exe().unwrap())
                .env_remove("RUST_BACKTRACE")
                .env_remove("RUST_LIB_BACKTRACE")
                .arg(name)
                .args(write_docs.then_some("--write-docs"))
                .status()
                .expect("the bench runs itself");
            assert!(status.success(), "the {name} section failed");
        }
        return;
    }
    let bench = Bench::new();
    let machine = format!(
        "{} CPUs, {}, krt {}",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        kubectl_version().await,
        env!("CARGO_PKG_VERSION")
    );
    println!("krt benchmarks: {machine}");
    let name = picked[0];
    match name {
        "boundary" => bench.boundary().await,
        "throughput" => bench.throughput().await,
        "requests" => bench.requests().await,
        "startup" => bench.startup().await,
        "memory" => bench.memory().await,
        "scaling" => bench.scaling().await,
        "middleware" => bench.middleware().await,
        "profiles" => bench.profiles().await,
        "quickstart" => bench.quickstart().await,
        "components" => bench.components().await,
        "registry" => bench.registry().await,
        "instructions" => bench.instructions().await,
        "first-apply" => bench.first_apply().await,
        "real" => bench.real().await,
        _ => unreachable!("every section is matched"),
    }
    if write_docs {
        docs::write(name, &OUTPUT.lock().unwrap(), &machine);
    }
}

/// The pass-through middleware of `tests/middleware`, built as `tests/build.rs`
/// builds it (in the same target directory, so an up-to-date one is reused).
pub(crate) fn passthrough_component() -> PathBuf {
    let workspace = krt_testkit::workspace();
    match krt_wasm_build::test_examples(&workspace, "krt-test-middleware", &["passthrough"]) {
        Ok(mut paths) => paths.remove(0),
        Err(e) => panic!("building the pass-through middleware failed: {e}"),
    }
}

/// The JavaScript middleware `examples/js-labels`, built by its script;
/// `None` when that fails (npm missing).
fn js_labels_component() -> Option<PathBuf> {
    let script = krt_testkit::workspace().join("examples/js-labels/build.sh");
    std::process::Command::new(script)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()))
}

/// Where the benchmark keeps its files and the warm compile cache.
struct Bench {
    dir: tempfile::TempDir,
    cache: PathBuf,
}

/// A simulator with a kubeconfig and a client for it, keeping 100,000
/// events so that every watch can resume, over HTTPS as a real API server
/// (and as kubectl needs to send its credentials).
async fn start_cluster() -> TestCluster {
    TestCluster::simulated(
        SimConfig {
            history_limit: 100_000,
            tls: true,
            ..SimConfig::default()
        },
        "the bench's krt-sim rows",
    )
    .await
}

fn kube_cluster(cluster: &TestCluster) -> Arc<KubeCluster> {
    Arc::new(KubeCluster::new(cluster.client.clone(), "default"))
}

fn configmap(name: &str, i: usize) -> Value {
    krt_testkit::configmap(name)
        .namespace("default")
        .data(json!({"index": i.to_string(), "payload": "x".repeat(200)}))
        .value()
}

fn deployment(name: &str) -> Value {
    krt_testkit::deployment(name)
        .namespace("default")
        .labels(json!({"app": name}))
        .replicas(2)
        .containers(json!([{"name": "web", "image": "nginx:1.27",
            "ports": [{"containerPort": 80}],
            "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}]))
        .value()
}

/// Writes one YAML file per object into a fresh directory.
fn manifests(dir: &Path, name: &str, objects: &[Value]) -> PathBuf {
    let out = dir.join(name);
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).unwrap();
    for (i, o) in objects.iter().enumerate() {
        let yaml = serde_json::to_string_pretty(o).unwrap();
        std::fs::write(out.join(format!("{i:05}.json")), yaml).unwrap();
    }
    out
}

/// The latency the "API latency" rows add to every request.
const LATENCY: Duration = Duration::from_millis(5);

/// Adds `latency` to every request `cluster` answers.
fn slow_down(cluster: &TestCluster, latency: Duration) {
    cluster.sim().inject_fault(krt_sim::Fault {
        verb: None,
        path: None,
        times: usize::MAX,
        action: krt_sim::FaultAction::Latency {
            millis: latency.as_millis() as u64,
        },
    });
}

/// A Namespace `bench` and `n` ConfigMaps in it (the Namespace's file first,
/// so that kubectl, which applies in file order, creates it first).
fn in_new_namespace(n: usize) -> Vec<Value> {
    let mut objects = vec![krt_testkit::namespace("bench").value()];
    objects.extend((0..n).map(|i| {
        let mut cm = configmap(&format!("cm-{i:05}"), i);
        cm["metadata"]["namespace"] = json!("bench");
        cm
    }));
    objects
}

fn configmaps(n: usize) -> Vec<Value> {
    (0..n)
        .map(|i| configmap(&format!("cm-{i:05}"), i))
        .collect()
}

fn deployments(n: usize) -> Vec<Value> {
    (0..n).map(|i| deployment(&format!("web-{i:04}"))).collect()
}

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    let i = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples[i]
}

fn micros(d: Duration) -> String {
    format!("{:.1}", d.as_secs_f64() * 1e6)
}

fn secs(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64())
}

fn verdict(ok: bool) -> &'static str {
    if ok { "met" } else { "NOT met" }
}

fn table(title: &str, header: &[&str], rows: &[Vec<String>]) {
    let widths: Vec<usize> = (0..header.len())
        .map(|c| {
            rows.iter()
                .map(|r| r[c].chars().count())
                .chain([header[c].chars().count()])
                .max()
                .unwrap()
        })
        .collect();
    let line = |cells: Vec<&str>| {
        let cells: Vec<String> = cells
            .iter()
            .enumerate()
            .map(|(i, c)| format!("{c:<w$}", w = widths[i]))
            .collect();
        say!("| {} |", cells.join(" | "));
    };
    say!("\n### {title}\n");
    line(header.to_vec());
    let rules: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
    line(rules.iter().map(String::as_str).collect());
    for r in rows {
        line(r.iter().map(String::as_str).collect());
    }
}

async fn kubectl_version() -> String {
    let out = tokio::process::Command::new("kubectl")
        .args(["version", "--client", "-o", "json"])
        .output()
        .await;
    match out {
        Ok(o) if o.status.success() => {
            let v: Value = serde_json::from_slice(&o.stdout).unwrap_or_default();
            format!(
                "kubectl {}",
                v["clientVersion"]["gitVersion"].as_str().unwrap_or("?")
            )
        }
        _ => "kubectl not found".into(),
    }
}

impl Bench {
    fn new() -> Bench {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("cache");
        Bench { dir, cache }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Runs `krt` with `args` in a fresh directory (its own state), with the
    /// warm cache unless `cache` says otherwise; the wall time and the exit.
    async fn krt(&self, kubeconfig: &Path, args: &[&str], cache: &Path) -> (Duration, Run) {
        let work = tempfile::tempdir_in(self.path()).unwrap();
        self.krt_in(kubeconfig, args, work.path(), cache).await
    }

    /// Runs `krt` with `args` in `work` (whose state persists between runs),
    /// with the warm cache; the wall time and the exit.
    async fn krt_at(&self, kubeconfig: &Path, args: &[&str], work: &Path) -> (Duration, Run) {
        self.krt_in(kubeconfig, args, work, &self.cache).await
    }

    async fn krt_in(
        &self,
        kubeconfig: &Path,
        args: &[&str],
        work: &Path,
        cache: &Path,
    ) -> (Duration, Run) {
        let bin = this_krt();
        run_krt(&bin, kubeconfig, args, work, cache).await
    }

    /// Runs `kubectl` with `args` against `cluster`.
    async fn kubectl(&self, cluster: &TestCluster, args: &[&str]) -> (Duration, Run) {
        let mut cmd = tokio::process::Command::new("kubectl");
        cmd.arg("--kubeconfig").arg(&cluster.kubeconfig).args(args);
        timed(cmd).await
    }

    async fn boundary(&self) {
        const ROUNDS: usize = 300;
        let cluster = start_cluster().await;
        let kc = kube_cluster(&cluster);
        let options = EngineOptions {
            cache_dir: Some(self.cache.clone()),
            ..EngineOptions::default()
        };
        let component = ComponentRuntime::new(&ComponentSource::Default, kc.clone(), &options)
            .await
            .expect("the component loads");
        let native = NativeRuntime::new(kc.clone());
        let web = resource(deployment("boundary"));
        let apply = ApplyOptions::default();
        assert_eq!(native.apply(None, Some(&web), &apply).await.status, None);
        // A large object: just under the 1 MiB a ConfigMap's data may hold
        // (keys included), in 64 keys.
        let mut big = configmap("big", 0);
        for k in 0..64 {
            big["data"][format!("k{k}")] = json!("y".repeat((16 << 10) - 8));
        }
        let big = resource(big);
        assert_eq!(native.apply(None, Some(&big), &apply).await.status, None);
        let watch = WatchRequest {
            timeout_ms: 10_000,
            default_namespace: None,
        };
        let read = ReadOptions::default();

        let mut rows = Vec::new();
        // Times `$call` on `$b` (the baseline) and `$a`, interleaved; pushes a
        // row to `$rows` and gives the ratio a / b of the medians.
        macro_rules! versus {
            ($rows:ident, $a:expr, $b:expr, $name:expr, $goal:expr, $rt:ident => $call:expr) => {{
                let (mut c, mut n) = (Vec::new(), Vec::new());
                for round in 0..ROUNDS + 20 {
                    let t = Instant::now();
                    let ok = {
                        let $rt: &dyn Dyn = $a;
                        $call.await
                    };
                    let tc = t.elapsed();
                    let t = Instant::now();
                    let ok2 = {
                        let $rt: &dyn Dyn = $b;
                        $call.await
                    };
                    let tn = t.elapsed();
                    assert!(ok && ok2, "{} failed", $name);
                    if round >= 20 {
                        c.push(tc);
                        n.push(tn);
                    }
                }
                let (pc, pn) = (percentile(&mut c, 0.5), percentile(&mut n, 0.5));
                let ratio = pc.as_secs_f64() / pn.as_secs_f64();
                $rows.push(vec![
                    $name.to_string(),
                    micros(pn),
                    micros(pc),
                    format!("{:+.1}", (pc.as_secs_f64() - pn.as_secs_f64()) * 1e6),
                    format!("{ratio:.3}"),
                    $goal.to_string(),
                ]);
                ratio
            }};
        }
        macro_rules! measure {
            ($name:expr, $goal:expr, $rt:ident => $call:expr) => {
                versus!(rows, &component, &native, $name, $goal, $rt => $call)
            };
        }
        let apply_ratio = measure!(
            "apply, unchanged Deployment",
            "≤ 1.10×",
            rt => rt.apply_ok(&web, &apply)
        );
        let read_ratio = measure!("read, Deployment", "≤ 1.10×", rt => rt.read_ok(&web, &read));
        let ordinary = component.stats().peak_instance_memory_bytes;
        // Before the watch: what its mebibyte objects leave behind for a moment
        // slowed the native and component calls timed right after them alike.
        measure!(
            "instantiate + call (read, invalid request, no API call)",
            "≤ 25 µs p50",
            rt => rt.empty_read()
        );
        let call = rows.last().unwrap()[2].parse::<f64>().unwrap();
        let watch_ratio = measure!(
            "watch (GET + health), 1 MiB ConfigMap",
            "≤ 1.25×",
            rt => rt.watch_ok(&big, &watch)
        );
        table(
            &format!("Boundary cost: p50 of {ROUNDS} interleaved calls each, same simulator"),
            &[
                "operation",
                "native µs",
                "component µs",
                "difference µs",
                "component / native",
                "goal",
            ],
            &rows,
        );
        say!(
            "\napply ratio {apply_ratio:.3} ({}), read ratio {read_ratio:.3} ({}), \
             watch ratio {watch_ratio:.3} ({}), instantiate+call p50 {call:.1} µs ({})",
            verdict(apply_ratio <= 1.10),
            verdict(read_ratio <= 1.10),
            verdict(watch_ratio <= 1.25),
            verdict(call <= 25.0)
        );
        let stats = component.stats();
        let mib = |b: usize| b as f64 / f64::from(1 << 20);
        say!(
            "guest instances: {}; most linear memory one instance held: {:.2} MiB for the \
             Deployment calls (goal ≤ 4 MiB: {}), {:.2} MiB with the 1 MiB ConfigMap",
            stats.instances,
            mib(ordinary),
            verdict(ordinary <= 4 << 20),
            mib(stats.peak_instance_memory_bytes),
        );

        // Levers, each against the default set-up above.
        let mut levers = Vec::new();
        let lever = |options: EngineOptions, source: ComponentSource| {
            let kc = kc.clone();
            async move {
                ComponentRuntime::new(&source, kc, &options)
                    .await
                    .expect("the component loads")
            }
        };
        let released = lever(
            EngineOptions {
                keep_resident_bytes: 0,
                ..options.clone()
            },
            ComponentSource::Default,
        )
        .await;
        versus!(levers, &released, &component,
            "memory handed back to the kernel after each instance (keep_resident 0): instantiate + call",
            "", rt => rt.empty_read());
        versus!(levers, &released, &component,
            "memory handed back to the kernel after each instance (keep_resident 0): read",
            "", rt => rt.read_ok(&web, &read));
        let checked = lever(
            EngineOptions {
                memory_reservation: 0,
                ..options.clone()
            },
            ComponentSource::Default,
        )
        .await;
        let what =
            "address space reserved at the memory limit, not 4 GiB (every access bounds-checked)";
        versus!(levers, &checked, &component, format!("{what}: apply, unchanged Deployment"),
            "", rt => rt.apply_ok(&web, &apply));
        versus!(levers, &checked, &component, format!("{what}: read, Deployment"),
            "", rt => rt.read_ok(&web, &read));
        versus!(levers, &checked, &component, format!("{what}: watch, 1 MiB ConfigMap"),
            "", rt => rt.watch_ok(&big, &watch));
        versus!(levers, &checked, &component, format!("{what}: instantiate + call"),
            "", rt => rt.empty_read());
        if let Some((path, label)) = bench_guest() {
            let other = lever(options.clone(), ComponentSource::File(path)).await;
            versus!(levers, &other, &component, format!("{label}: apply, unchanged Deployment"),
                "", rt => rt.apply_ok(&web, &apply));
            versus!(levers, &other, &component, format!("{label}: read, Deployment"),
                "", rt => rt.read_ok(&web, &read));
            versus!(levers, &other, &component, format!("{label}: watch, 1 MiB ConfigMap"),
                "", rt => rt.watch_ok(&big, &watch));
            versus!(levers, &other, &component, format!("{label}: instantiate + call"),
                "", rt => rt.empty_read());
        }
        table(
            "Levers: each variant against the default component runtime, interleaved",
            &[
                "variant and operation",
                "default µs",
                "variant µs",
                "difference µs",
                "variant / default",
                "",
            ],
            &levers,
        );
    }

    async fn throughput(&self) {
        self.warm_cache().await;
        let mut rows = Vec::new();
        let mut goals = Vec::new();
        for (what, objects) in [
            ("1,000 ConfigMaps", configmaps(1000)),
            ("200 Deployments", deployments(200)),
        ] {
            let dir = manifests(self.path(), "throughput", &objects);
            let dir = dir.to_str().unwrap();
            let n = objects.len() as f64;
            let mut times = Vec::new();
            for (tool, args) in [
                ("krt apply", vec!["apply", "-f", dir, "--yes"]),
                (
                    "krt apply --watch=false",
                    vec!["apply", "-f", dir, "--yes", "--watch=false"],
                ),
                ("kubectl apply (client-side)", vec!["apply", "-f", dir]),
                (
                    "kubectl apply --server-side",
                    vec!["apply", "--server-side", "-f", dir],
                ),
            ] {
                let cluster = start_cluster().await;
                let (took, run) = if tool.starts_with("krt") {
                    self.krt(&cluster.kubeconfig, &args, &self.cache).await
                } else {
                    self.kubectl(&cluster, &args).await
                };
                run.check(tool);
                times.push((tool.to_string(), took));
            }
            let cluster = start_cluster().await;
            let raw = raw_apply(&cluster, &objects, 32).await;
            times.push((
                "raw server-side apply, 32 concurrent (simulator capacity)".into(),
                raw,
            ));
            let krt = times[0].1;
            for (tool, took) in &times {
                rows.push(vec![
                    what.to_string(),
                    tool.clone(),
                    secs(*took),
                    format!("{:.0}", n / took.as_secs_f64()),
                    format!("{:.2}", took.as_secs_f64() / krt.as_secs_f64()),
                ]);
            }
        }
        // The simulator answers in well under a millisecond; a real API server
        // is a network round trip away. 1,000 ConfigMaps with 5 ms added to
        // every request, in `default` and in a namespace the stack creates:
        let old_default = ["--concurrency", "16"];
        for (what, objects) in [
            ("1,000 ConfigMaps, 5 ms API latency", configmaps(1000)),
            (
                "1,000 ConfigMaps in a new namespace, 5 ms API latency",
                in_new_namespace(1000),
            ),
        ] {
            let dir = manifests(self.path(), "latency", &objects);
            let dir = dir.to_str().unwrap();
            let mut times = Vec::new();
            for (tool, args) in [
                ("krt apply", vec!["apply", "-f", dir, "--yes"]),
                (
                    "krt apply --concurrency 16 (the old default, fixed)",
                    [vec!["apply", "-f", dir, "--yes"], old_default.to_vec()].concat(),
                ),
                ("kubectl apply (client-side)", vec!["apply", "-f", dir]),
                (
                    "kubectl apply --server-side",
                    vec!["apply", "--server-side", "-f", dir],
                ),
            ] {
                let cluster = start_cluster().await;
                slow_down(&cluster, LATENCY);
                let (took, run) = if tool.starts_with("krt") {
                    self.krt(&cluster.kubeconfig, &args, &self.cache).await
                } else {
                    self.kubectl(&cluster, &args).await
                };
                run.check(tool);
                times.push((tool.to_string(), took));
            }
            let krt = times[0].1;
            for (tool, took) in &times {
                rows.push(vec![
                    what.into(),
                    tool.clone(),
                    secs(*took),
                    format!("{:.0}", objects.len() as f64 / took.as_secs_f64()),
                    format!("{:.2}", took.as_secs_f64() / krt.as_secs_f64()),
                ]);
            }
            if what.contains("new namespace") {
                let kubectl = times[2].1.as_secs_f64() / krt.as_secs_f64();
                goals.push(format!(
                    "kubectl apply (client-side) / krt apply, {what}: {kubectl:.1}× (goal ≥ 20×: {})",
                    verdict(kubectl >= 20.0)
                ));
            }
        }
        table(
            "Throughput: each tool on a fresh simulator (krt waits for health; kubectl does not)",
            &[
                "objects",
                "tool",
                "seconds",
                "objects/s",
                "its time / krt's (> 1: krt faster)",
            ],
            &rows,
        );
        say!();
        for goal in goals {
            say!("{goal}");
        }

        // The ceiling: the requests in flight adapt below it.
        let dir = manifests(self.path(), "sweep", &in_new_namespace(1000));
        let mut rows = Vec::new();
        for c in ["1", "4", "16", "64", "128"] {
            let cluster = start_cluster().await;
            slow_down(&cluster, LATENCY);
            let (took, run) = self
                .krt(
                    &cluster.kubeconfig,
                    &[
                        "apply",
                        "-f",
                        dir.to_str().unwrap(),
                        "--yes",
                        "--concurrency",
                        c,
                    ],
                    &self.cache,
                )
                .await;
            run.check("krt apply --concurrency");
            rows.push(vec![
                c.to_string(),
                secs(took),
                format!("{:.0}", 1000.0 / took.as_secs_f64()),
            ]);
        }
        table(
            "Concurrency ceiling: krt apply of 1,000 ConfigMaps in a new namespace, 5 ms API latency",
            &["--concurrency", "seconds", "objects/s"],
            &rows,
        );
    }

    /// This bench's krt against `KRT_BENCH_OTHER_KRT` (krt built with another
    /// profile), interleaved, each run on a fresh simulator: the median of 3 of
    /// a first apply of 1,000 ConfigMaps in a new namespace at 5 ms per
    /// request, of an unchanged re-apply of them, and of a cold start.
    async fn profiles(&self) {
        let Some(other) = std::env::var_os("KRT_BENCH_OTHER_KRT").map(PathBuf::from) else {
            say!("\nprofiles: set KRT_BENCH_OTHER_KRT to another krt binary to compare");
            return;
        };
        self.warm_cache().await;
        let this = this_krt();
        let other_cache = self.path().join("other-cache");
        let dir = manifests(self.path(), "profiles", &in_new_namespace(1000));
        let args = ["apply", "-f", dir.to_str().unwrap(), "--yes"];
        let one = manifests(self.path(), "profiles-one", &configmaps(1));
        let one_args = ["apply", "-f", one.to_str().unwrap(), "--yes"];
        // The other build compiles the component once into its own warm cache.
        let warm = start_cluster().await;
        let work = tempfile::tempdir_in(self.path()).unwrap();
        run_krt(
            &other,
            &warm.kubeconfig,
            &one_args,
            work.path(),
            &other_cache,
        )
        .await
        .1
        .check("the other krt, warming its cache");
        let runs = [
            "first apply, 5 ms per request",
            "unchanged re-apply",
            "cold start, one ConfigMap",
        ];
        let mut samples = vec![[Vec::new(), Vec::new()]; runs.len()];
        for round in 0..3 {
            for (b, (bin, cache)) in [(&this, &self.cache), (&other, &other_cache)]
                .into_iter()
                .enumerate()
            {
                let slow = start_cluster().await;
                slow_down(&slow, LATENCY);
                let work = tempfile::tempdir_in(self.path()).unwrap();
                let (first, run) = run_krt(bin, &slow.kubeconfig, &args, work.path(), cache).await;
                run.check(runs[0]);
                let cluster = start_cluster().await;
                let work = tempfile::tempdir_in(self.path()).unwrap();
                run_krt(bin, &cluster.kubeconfig, &args, work.path(), cache)
                    .await
                    .1
                    .check("the apply before the unchanged one");
                let (unchanged, run) =
                    run_krt(bin, &cluster.kubeconfig, &args, work.path(), cache).await;
                run.check(runs[1]);
                // Its own stack, with an empty compile cache.
                let cold = self.path().join(format!("profiles-cold-{round}-{b}"));
                let work = tempfile::tempdir_in(self.path()).unwrap();
                let (cold, run) =
                    run_krt(bin, &cluster.kubeconfig, &one_args, work.path(), &cold).await;
                run.check(runs[2]);
                for (r, took) in [first, unchanged, cold].into_iter().enumerate() {
                    samples[r][b].push(took);
                }
            }
        }
        let rows: Vec<Vec<String>> = runs
            .iter()
            .zip(&mut samples)
            .map(|(run, [this, other])| {
                let (t, o) = (percentile(this, 0.5), percentile(other, 0.5));
                vec![
                    run.to_string(),
                    secs(t),
                    secs(o),
                    format!("{:.2}", o.as_secs_f64() / t.as_secs_f64()),
                ]
            })
            .collect();
        table(
            &format!(
                "Profiles: this krt against {} (median of 3, interleaved, fresh simulators)",
                other.display()
            ),
            &["run", "this s", "other s", "other / this"],
            &rows,
        );
    }

    /// Requests per object counted at the simulator, and krt's time against
    /// the limit its requests set: requests × per-request latency ÷ concurrency.
    async fn requests(&self) {
        self.warm_cache().await;
        let concurrency = krt_host::DEFAULT_MAX_IN_FLIGHT;
        let cluster = start_cluster().await;
        slow_down(&cluster, LATENCY);
        let latency = round_trip(&cluster).await;
        let mut objects = in_new_namespace(1000);
        let n = objects.len();
        let work = tempfile::tempdir_in(self.path()).unwrap();
        let mut rows = Vec::new();
        let mut ratios = Vec::new();
        for run in ["create, in a new namespace", "unchanged", "update"] {
            if run == "update" {
                for cm in &mut objects[1..] {
                    cm["data"]["payload"] = json!("z".repeat(200));
                }
            }
            let dir = manifests(self.path(), "requests", &objects);
            cluster.reset_requests();
            let (took, done) = self
                .krt_at(
                    &cluster.kubeconfig,
                    &["apply", "-f", dir.to_str().unwrap(), "--yes"],
                    work.path(),
                )
                .await;
            done.check(run);
            let requests = cluster.requests().total();
            let limit = latency.mul_f64(requests as f64 / concurrency as f64);
            let ratio = took.as_secs_f64() / limit.as_secs_f64();
            ratios.push((run, ratio));
            rows.push(vec![
                run.to_string(),
                n.to_string(),
                requests.to_string(),
                format!("{:.2}", requests as f64 / n as f64),
                secs(took),
                secs(limit),
                format!("{ratio:.2}"),
            ]);
        }
        table(
            &format!(
                "Requests: krt apply of a Namespace and 1,000 ConfigMaps, {} ms added to every \
                 request (measured round trip {:.2} ms), --concurrency {concurrency}; requests \
                 counted at the simulator; limit = requests × round trip ÷ concurrency",
                LATENCY.as_millis(),
                latency.as_secs_f64() * 1e3
            ),
            &[
                "run",
                "objects",
                "requests",
                "per object",
                "seconds",
                "limit s",
                "krt / limit",
            ],
            &rows,
        );
        let create = ratios[0].1;
        say!(
            "\ncreate in a new namespace: {create:.2}× the limit (goal ≤ 1.5×: {})",
            verdict(create <= 1.5)
        );

        // The unchanged re-apply with nothing added to the simulator's answers.
        let cluster = start_cluster().await;
        let dir = manifests(self.path(), "unchanged", &in_new_namespace(1000));
        let args = ["apply", "-f", dir.to_str().unwrap(), "--yes"];
        let work = tempfile::tempdir_in(self.path()).unwrap();
        let (_, first) = self.krt_at(&cluster.kubeconfig, &args, work.path()).await;
        first.check("krt apply (first)");
        let (took, again) = self.krt_at(&cluster.kubeconfig, &args, work.path()).await;
        again.check("krt apply (unchanged)");
        say!(
            "unchanged re-apply of 1,000 ConfigMaps and their Namespace: {} s (goal ≤ 0.5 s: {})",
            secs(took),
            verdict(took <= Duration::from_millis(500))
        );
    }

    /// Compiles the built-in component into the warm cache.
    /// krt against kubectl and against the limit their requests set (requests × round trip ÷
    /// requests in flight), for a Namespace and 1,000 ConfigMaps in it: on krt-sim and on the
    /// real cluster `KRT_E2E_KUBECONFIG` names, side by side. Requests are counted at krt-sim,
    /// or at krt-testkit's proxy in front of the real cluster (which every tool goes through
    /// alike); each tool starts on a cluster wiped of the run before.
    async fn real(&self) {
        assert!(
            krt_testkit::real_tier(),
            "the real section needs {} to name a real cluster's kubeconfig",
            krt_testkit::KUBECONFIG_VAR
        );
        self.warm_cache().await;
        let dir = manifests(self.path(), "real", &in_new_namespace(1000));
        let dir = dir.to_str().unwrap();
        let in_flight = krt_host::DEFAULT_MAX_IN_FLIGHT;
        let mut rows = Vec::new();
        for server in ["krt-sim", "real"] {
            let fresh = || async {
                match server {
                    "real" => TestCluster::start().await,
                    _ => start_cluster().await,
                }
            };
            let mut times = Vec::new();
            // krt's create and unchanged re-apply share a state; each kubectl run starts anew.
            let cluster = fresh().await;
            let latency = round_trip(&cluster).await;
            let work = tempfile::tempdir_in(self.path()).unwrap();
            for run in ["krt apply (create)", "krt apply (unchanged)"] {
                cluster.reset_requests();
                let (took, done) = self
                    .krt_at(
                        &cluster.kubeconfig,
                        &["apply", "-f", dir, "--yes"],
                        work.path(),
                    )
                    .await;
                done.check(run);
                times.push((run, took, cluster.requests().total(), in_flight));
            }
            drop(cluster);
            for (run, args) in [
                ("kubectl apply (client-side)", vec!["apply", "-f", dir]),
                (
                    "kubectl apply --server-side",
                    vec!["apply", "--server-side", "-f", dir],
                ),
            ] {
                let cluster = fresh().await;
                cluster.reset_requests();
                let (took, done) = self.kubectl(&cluster, &args).await;
                done.check(run);
                // kubectl sends one request at a time.
                times.push((run, took, cluster.requests().total(), 1));
            }
            let krt = times[0].1;
            for (run, took, requests, concurrency) in times {
                let limit = latency.mul_f64(requests as f64 / concurrency as f64);
                rows.push(vec![
                    server.to_string(),
                    format!("{:.2}", latency.as_secs_f64() * 1e3),
                    run.to_string(),
                    secs(took),
                    requests.to_string(),
                    concurrency.to_string(),
                    secs(limit),
                    format!("{:.2}", took.as_secs_f64() / limit.as_secs_f64()),
                    format!("{:.2}", took.as_secs_f64() / krt.as_secs_f64()),
                ]);
            }
        }
        table(
            "krt-sim and a real cluster: a Namespace and 1,000 ConfigMaps; limit = requests × \
             round trip ÷ requests in flight",
            &[
                "cluster",
                "round trip ms",
                "run",
                "seconds",
                "requests",
                "in flight",
                "limit s",
                "its time / limit",
                "its time / krt's create",
            ],
            &rows,
        );
    }

    async fn warm_cache(&self) {
        let cluster = start_cluster().await;
        let dir = manifests(self.path(), "warm", &configmaps(1));
        let (_, run) = self
            .krt(
                &cluster.kubeconfig,
                &["apply", "-f", dir.to_str().unwrap(), "--yes"],
                &self.cache,
            )
            .await;
        run.check("warming the cache");
    }

    async fn startup(&self) {
        self.warm_cache().await;
        let cluster = start_cluster().await;
        let proxy = Proxy::start(cluster.sim().url()).await;
        let kubeconfig = self.path().join("kubeconfig-proxy");
        std::fs::write(
            &kubeconfig,
            cluster
                .sim()
                .kubeconfig_yaml()
                .replace(cluster.sim().url().trim_end_matches('/'), &proxy.url),
        )
        .unwrap();
        let dir = manifests(self.path(), "startup", &configmaps(1));
        let args = ["apply", "-f", dir.to_str().unwrap(), "--yes"];
        let mut rows = Vec::new();
        let mut overheads = Vec::new();
        for (label, runs) in [("cold cache", 3), ("warm cache", 7)] {
            let (mut wall, mut first, mut api) = (Vec::new(), Vec::new(), Vec::new());
            let mut requests = 0;
            for i in 0..runs {
                let cache = if label == "cold cache" {
                    self.path().join(format!("cold-{i}"))
                } else {
                    self.cache.clone()
                };
                proxy.reset();
                let started = Instant::now();
                let (took, run) = self.krt(&kubeconfig, &args, &cache).await;
                run.check(label);
                let (first_request, busy, seen) = proxy.report(started);
                requests = seen;
                wall.push(took);
                first.push(first_request);
                api.push(busy);
                if label == "warm cache" {
                    overheads.push(took.saturating_sub(busy));
                }
            }
            let (w, f, a) = (
                percentile(&mut wall, 0.5),
                percentile(&mut first, 0.5),
                percentile(&mut api, 0.5),
            );
            rows.push(vec![
                label.to_string(),
                format!("{:.0}", w.as_secs_f64() * 1e3),
                format!("{:.0}", f.as_secs_f64() * 1e3),
                format!("{:.0}", a.as_secs_f64() * 1e3),
                format!("{:.0}", w.saturating_sub(a).as_secs_f64() * 1e3),
                requests.to_string(),
            ]);
        }
        let cold = rows[0][1].parse::<f64>().unwrap();
        let warm = rows[1][1].parse::<f64>().unwrap();
        table(
            "Start-up: krt apply of one ConfigMap (median; the API time is measured by a proxy)",
            &[
                "compile cache",
                "wall ms",
                "first request after ms",
                "in API calls ms",
                "outside API calls ms",
                "API requests",
            ],
            &rows,
        );
        let overhead = percentile(&mut overheads, 0.5);
        say!(
            "\ncold / warm: {:.2}×; warm start-up beyond the API round trips: {} ms (goal ≤ 100 ms: {})",
            cold / warm,
            overhead.as_millis(),
            verdict(overhead <= Duration::from_millis(100))
        );
        drop(cluster);
    }

    async fn memory(&self) {
        self.warm_cache().await;
        let mut rows = Vec::new();
        for (what, objects) in [
            ("1,000 ConfigMaps", configmaps(1000)),
            ("200 Deployments", deployments(200)),
        ] {
            let dir = manifests(self.path(), "memory", &objects);
            let cluster = start_cluster().await;
            let work = tempfile::tempdir_in(self.path()).unwrap();
            let mut cmd = tokio::process::Command::new("/usr/bin/time");
            cmd.args(["-f", "maxrss_kib=%M"])
                .arg(this_krt())
                .arg("--kubeconfig")
                .arg(&cluster.kubeconfig)
                .args(["apply", "-f", dir.to_str().unwrap(), "--yes"])
                .current_dir(work.path())
                .env("XDG_CACHE_HOME", &self.cache);
            let (_, run) = timed(cmd).await;
            run.check("krt apply under /usr/bin/time");
            let kib: f64 = run
                .stderr
                .lines()
                .find_map(|l| l.strip_prefix("maxrss_kib="))
                .and_then(|v| v.trim().parse().ok())
                .expect("/usr/bin/time printed the peak RSS");
            let mib = kib / 1024.0;
            rows.push(vec![
                format!("krt apply, {what}"),
                format!("{mib:.1}"),
                format!("≤ 150 MiB: {}", verdict(mib <= 150.0)),
            ]);
        }
        table(
            "Memory: peak resident set of the krt process",
            &["run", "peak RSS MiB", "goal"],
            &rows,
        );
    }

    async fn middleware(&self) {
        const ROUNDS: usize = 300;
        let cluster = start_cluster().await;
        let options = EngineOptions {
            cache_dir: Some(self.cache.clone()),
            ..EngineOptions::default()
        };
        let passthrough = passthrough_component();
        let chain = async |links: usize| {
            let mut builder = ComponentRuntime::builder(ComponentSource::Default);
            for i in 0..links {
                builder = builder.middleware(Middleware::new(
                    format!("passthrough-{i}"),
                    ComponentSource::File(passthrough.clone()),
                ));
            }
            builder
                .build(kube_cluster(&cluster), &options)
                .await
                .expect("the chain loads")
        };
        let runtimes = [chain(0).await, chain(1).await, chain(3).await];
        let web = resource(deployment("chained"));
        let apply = ApplyOptions::default();
        assert_eq!(
            runtimes[0].apply(None, Some(&web), &apply).await.status,
            None
        );
        let mut samples = vec![Vec::new(); runtimes.len()];
        for round in 0..ROUNDS + 20 {
            for (rt, samples) in runtimes.iter().zip(&mut samples) {
                let t = Instant::now();
                let ok = rt.apply(None, Some(&web), &apply).await.status.is_none();
                let took = t.elapsed();
                assert!(ok, "apply through the chain failed");
                if round >= 20 {
                    samples.push(took);
                }
            }
        }
        let p50: Vec<Duration> = samples.iter_mut().map(|s| percentile(s, 0.5)).collect();
        let rows: Vec<Vec<String>> = [0, 1, 3]
            .iter()
            .zip(&p50)
            .map(|(links, p)| {
                let added = p.as_secs_f64() - p50[0].as_secs_f64();
                vec![
                    format!("{links} pass-through middleware"),
                    micros(*p),
                    format!("{:+.1}", added * 1e6),
                    if *links == 0 {
                        String::new()
                    } else {
                        format!("{:.1}", added * 1e6 / *links as f64)
                    },
                    if *links == 0 {
                        String::new()
                    } else {
                        format!("≤ 30 µs: {}", verdict(added * 1e6 / *links as f64 <= 30.0))
                    },
                ]
            })
            .collect();
        table(
            &format!(
                "Middleware: p50 of {ROUNDS} interleaved applies of an unchanged Deployment, same simulator"
            ),
            &[
                "chain",
                "apply µs",
                "added µs",
                "per link µs",
                "goal per link",
            ],
            &rows,
        );
    }

    async fn scaling(&self) {
        self.warm_cache().await;
        let mut rows = Vec::new();
        let mut per = Vec::new();
        for n in [10usize, 100, 1000, 5000] {
            let dir = manifests(self.path(), "scaling", &configmaps(n));
            let cluster = start_cluster().await;
            let (took, run) = self
                .krt(
                    &cluster.kubeconfig,
                    &["apply", "-f", dir.to_str().unwrap(), "--yes"],
                    &self.cache,
                )
                .await;
            run.check("krt apply (scaling)");
            let each = took / n as u32;
            per.push(each);
            rows.push(vec![
                n.to_string(),
                secs(took),
                format!("{:.0}", each.as_secs_f64() * 1e6),
                format!("{:.0}", n as f64 / took.as_secs_f64()),
            ]);
        }
        table(
            "Scaling: krt apply of N ConfigMaps, fresh simulator each",
            &["N", "seconds", "µs per object", "objects/s"],
            &rows,
        );
        let growth = per[3].as_secs_f64() / per[2].as_secs_f64();
        say!(
            "\nper-object time at 5,000 / at 1,000: {growth:.2} (linear or better: ≤ 1.10; {})",
            verdict(growth <= 1.10)
        );
    }
}

/// The two runtimes behind one object-safe face, so one loop times both.
trait Dyn: Sync {
    fn apply_ok<'a>(
        &'a self,
        r: &'a Resource,
        o: &'a ApplyOptions,
    ) -> futures::future::BoxFuture<'a, bool>;
    fn read_ok<'a>(
        &'a self,
        r: &'a Resource,
        o: &'a ReadOptions,
    ) -> futures::future::BoxFuture<'a, bool>;
    fn watch_ok<'a>(
        &'a self,
        r: &'a Resource,
        o: &'a WatchRequest,
    ) -> futures::future::BoxFuture<'a, bool>;
    fn empty_read(&self) -> futures::future::BoxFuture<'_, bool>;
}

impl<R: Runtime> Dyn for R {
    fn apply_ok<'a>(
        &'a self,
        r: &'a Resource,
        o: &'a ApplyOptions,
    ) -> futures::future::BoxFuture<'a, bool> {
        Box::pin(async move { self.apply(None, Some(r), o).await.status.is_none() })
    }
    fn read_ok<'a>(
        &'a self,
        r: &'a Resource,
        o: &'a ReadOptions,
    ) -> futures::future::BoxFuture<'a, bool> {
        Box::pin(async move { self.read(None, Some(r), o).await.resource.is_some() })
    }
    fn watch_ok<'a>(
        &'a self,
        r: &'a Resource,
        o: &'a WatchRequest,
    ) -> futures::future::BoxFuture<'a, bool> {
        Box::pin(async move { self.watch(r, o).await.status.is_none() })
    }
    fn empty_read(&self) -> futures::future::BoxFuture<'_, bool> {
        Box::pin(async move {
            let r = self.read(None, None, &ReadOptions::default()).await;
            r.status.is_some_and(|s| s.is_error())
        })
    }
}

/// A finished process.
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Run {
    fn check(&self, what: &str) {
        assert_eq!(
            self.code,
            Some(0),
            "{what} failed:\n{}\n{}",
            self.stdout,
            self.stderr
        );
    }
}

/// Runs the krt binary `bin` with `args` against `kubeconfig` in `work`, with
/// its compile cache in `cache`; the wall time and the exit.
async fn run_krt(
    bin: &Path,
    kubeconfig: &Path,
    args: &[&str],
    work: &Path,
    cache: &Path,
) -> (Duration, Run) {
    timed(krt_command(None, bin, kubeconfig, args, work, cache)).await
}

/// The command that runs the krt binary `bin` with `args` against
/// `kubeconfig` in `work`, with its compile cache in `cache`; under `wrapper`
/// (a program and its arguments, such as valgrind's) when given.
fn krt_command(
    wrapper: Option<&[String]>,
    bin: &Path,
    kubeconfig: &Path,
    args: &[&str],
    work: &Path,
    cache: &Path,
) -> tokio::process::Command {
    let mut cmd = match wrapper {
        Some([program, wrapper_args @ ..]) => {
            let mut cmd = tokio::process::Command::new(program);
            cmd.args(wrapper_args).arg(bin);
            cmd
        }
        _ => tokio::process::Command::new(bin),
    };
    cmd.arg("--kubeconfig")
        .arg(kubeconfig)
        .args(args)
        .current_dir(work)
        .env("XDG_CACHE_HOME", cache)
        .env_remove("KUBECONFIG");
    cmd
}

/// `KRT_BENCH_GUEST=path`: a runtime component to measure against (or in
/// place of) the built-in guest, with how the tables name it
/// (`KRT_BENCH_GUEST_LABEL`, else `KRT_BENCH_GUEST`).
fn bench_guest() -> Option<(PathBuf, String)> {
    let path = std::env::var_os("KRT_BENCH_GUEST")?;
    let label = std::env::var("KRT_BENCH_GUEST_LABEL").unwrap_or_else(|_| "KRT_BENCH_GUEST".into());
    Some((PathBuf::from(path), label))
}

async fn timed(mut cmd: tokio::process::Command) -> (Duration, Run) {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let started = Instant::now();
    let out = cmd.output().await.expect("the command starts");
    let took = started.elapsed();
    (
        took,
        Run {
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        },
    )
}

/// The median round trip of one request to `cluster`, sent one at a time.
async fn round_trip(cluster: &TestCluster) -> Duration {
    let api: Api<DynamicObject> = cluster.api("v1", "Namespace", "namespaces", None);
    let mut samples = Vec::new();
    for _ in 0..50 {
        let started = Instant::now();
        api.get("default").await.expect("the default namespace");
        samples.push(started.elapsed());
    }
    percentile(&mut samples, 0.5)
}

/// The simulator's capacity: server-side applies of `objects` straight from a
/// kube client, `concurrency` at a time.
async fn raw_apply(cluster: &TestCluster, objects: &[Value], concurrency: usize) -> Duration {
    let started = Instant::now();
    let results: Vec<bool> = stream::iter(objects)
        .map(|o| {
            let client = cluster.client.clone();
            async move {
                let (group, version) = o["apiVersion"]
                    .as_str()
                    .unwrap()
                    .split_once('/')
                    .unwrap_or(("", o["apiVersion"].as_str().unwrap()));
                let kind = o["kind"].as_str().unwrap();
                let ar = ApiResource {
                    group: group.into(),
                    version: version.into(),
                    api_version: o["apiVersion"].as_str().unwrap().into(),
                    kind: kind.into(),
                    plural: format!("{}s", kind.to_lowercase()),
                };
                let api: Api<DynamicObject> = Api::namespaced_with(client, "default", &ar);
                api.patch(
                    o["metadata"]["name"].as_str().unwrap(),
                    &PatchParams::apply("raw"),
                    &Patch::Apply(o),
                )
                .await
                .is_ok()
            }
        })
        .buffer_unordered(concurrency)
        .collect()
        .await;
    assert!(results.iter().all(|ok| *ok), "raw applies failed");
    started.elapsed()
}

/// A TCP proxy in front of the simulator that notes when the first connection
/// arrives and the spans during which requests are outstanding.
struct Proxy {
    url: String,
    log: Arc<Mutex<ProxyLog>>,
}

#[derive(Default)]
struct ProxyLog {
    first: Option<Instant>,
    /// (request sent, last response byte) spans, per request.
    spans: Vec<(Instant, Instant)>,
}

impl Proxy {
    async fn start(upstream: &str) -> Proxy {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        // A TCP relay: TLS passes through, so the proxy's URL keeps the scheme.
        let (scheme, address) = upstream.split_once("://").expect("a URL");
        let url = format!("{scheme}://{}", listener.local_addr().unwrap());
        let upstream = address.trim_end_matches('/').to_owned();
        let log = Arc::new(Mutex::new(ProxyLog::default()));
        let shared = log.clone();
        tokio::spawn(async move {
            loop {
                let Ok((client, _)) = listener.accept().await else {
                    return;
                };
                shared
                    .lock()
                    .unwrap()
                    .first
                    .get_or_insert_with(Instant::now);
                let server = tokio::net::TcpStream::connect(&upstream).await.unwrap();
                tokio::spawn(relay(client, server, shared.clone()));
            }
        });
        Proxy { url, log }
    }

    fn reset(&self) {
        *self.log.lock().unwrap() = ProxyLog::default();
    }

    /// The time from `started` to the first connection, the time during
    /// which at least one request was outstanding, and the requests seen.
    fn report(&self, started: Instant) -> (Duration, Duration, usize) {
        let log = self.log.lock().unwrap();
        let requests = log.spans.len();
        let first = log.first.map_or(Duration::ZERO, |f| f - started);
        let mut spans = log.spans.clone();
        spans.sort();
        let mut busy = Duration::ZERO;
        let mut current: Option<(Instant, Instant)> = None;
        for (s, e) in spans {
            current = match current {
                Some((cs, ce)) if s <= ce => Some((cs, ce.max(e))),
                Some((cs, ce)) => {
                    busy += ce - cs;
                    Some((s, e))
                }
                None => Some((s, e)),
            };
        }
        if let Some((cs, ce)) = current {
            busy += ce - cs;
        }
        (first, busy, requests)
    }
}

/// Copies both ways; a request starts with the first client bytes after a
/// response and ends with the last response bytes before the next request.
async fn relay(
    mut client: tokio::net::TcpStream,
    mut server: tokio::net::TcpStream,
    log: Arc<Mutex<ProxyLog>>,
) {
    let (mut cr, mut cw) = client.split();
    let (mut sr, mut sw) = server.split();
    let span: Mutex<Option<(Instant, Instant)>> = Mutex::new(None);
    let close = |span: &Mutex<Option<(Instant, Instant)>>| {
        if let Some(s) = span.lock().unwrap().take() {
            log.lock().unwrap().spans.push(s);
        }
    };
    let up = async {
        let mut buf = vec![0u8; 64 << 10];
        loop {
            let n = match cr.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            let now = Instant::now();
            {
                // Bytes after a response has begun start the next request.
                let mut s = span.lock().unwrap();
                if s.is_none_or(|(start, end)| end > start) {
                    if let Some(done) = s.take() {
                        log.lock().unwrap().spans.push(done);
                    }
                    *s = Some((now, now));
                }
            }
            if sw.write_all(&buf[..n]).await.is_err() {
                break;
            }
        }
        let _ = sw.shutdown().await;
    };
    let down = async {
        let mut buf = vec![0u8; 64 << 10];
        loop {
            let n = match sr.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            if let Some((_, end)) = span.lock().unwrap().as_mut() {
                *end = Instant::now();
            }
            if cw.write_all(&buf[..n]).await.is_err() {
                break;
            }
        }
        let _ = cw.shutdown().await;
    };
    tokio::join!(up, down);
    close(&span);
}
