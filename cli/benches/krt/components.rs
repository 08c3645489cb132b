//! `components`: the size of each component krt ships or tests with, as
//! built from this checkout, and what its first use (a compile) and a later
//! start (the compile cache) cost.

use crate::{Bench, kube_cluster, start_cluster, verdict};
use krt_host::model::ApplyOptions;
use krt_host::{ComponentRuntime, ComponentSource, EngineOptions, Middleware, Runtime};
use krt_testkit::{TestCluster, resource};
use std::path::Path;
use std::time::{Duration, Instant};

/// The goal for the first use of the largest component (the JavaScript middleware).
const FIRST_USE_GOAL: Duration = Duration::from_secs(8);
/// The goal for a cached start of the same.
const CACHED_GOAL: Duration = Duration::from_millis(50);

/// Loads krt's guest with `middleware` in front (or alone) on a new engine
/// with its compile cache in `cache`, as a new krt process would; the time.
async fn load(cluster: &TestCluster, middleware: Option<&Path>, cache: &Path) -> Duration {
    load_with(cluster, middleware, cache, true).await.0
}

/// [`load`] with Cranelift's optimization on or off; the time and the runtime.
async fn load_with(
    cluster: &TestCluster,
    middleware: Option<&Path>,
    cache: &Path,
    optimize_code: bool,
) -> (Duration, ComponentRuntime) {
    let options = EngineOptions {
        cache_dir: Some(cache.to_path_buf()),
        optimize_code,
        ..EngineOptions::default()
    };
    let mut builder = ComponentRuntime::builder(ComponentSource::Default);
    if let Some(path) = middleware {
        builder = builder.middleware(Middleware::new(
            "measured",
            ComponentSource::File(path.to_path_buf()),
        ));
    }
    let started = Instant::now();
    let runtime = builder
        .build(kube_cluster(cluster), &options)
        .await
        .expect("the component loads");
    (started.elapsed(), runtime)
}

/// Cranelift's `opt_level` `speed` (krt's) against `none` for a large
/// component: its first use (krt's guest already cached) and the p50 of
/// interleaved applies of an unchanged ConfigMap through it; table rows.
async fn opt_levels(cluster: &TestCluster, middleware: &Path, dir: &Path) -> Vec<Vec<String>> {
    const ROUNDS: usize = 60;
    let mut runtimes = Vec::new();
    for optimize in [true, false] {
        let cache = tempfile::tempdir_in(dir).unwrap();
        load_with(cluster, None, cache.path(), optimize).await;
        let (first, runtime) = load_with(cluster, Some(middleware), cache.path(), optimize).await;
        runtimes.push((optimize, first, runtime, Vec::new()));
    }
    let object = resource(crate::configmap("opt-level", 0));
    let apply = ApplyOptions::default();
    for round in 0..ROUNDS + 5 {
        for (_, _, runtime, samples) in &mut runtimes {
            let started = Instant::now();
            let answer = runtime.apply(None, Some(&object), &apply).await;
            assert_eq!(answer.status, None, "apply through the middleware");
            if round >= 5 {
                samples.push(started.elapsed());
            }
        }
    }
    let speed = crate::percentile(&mut runtimes[0].3, 0.5);
    runtimes
        .iter_mut()
        .map(|(optimize, first, _, samples)| {
            let p50 = crate::percentile(samples, 0.5);
            vec![
                if *optimize { "speed (krt's)" } else { "none" }.to_string(),
                format!("{:.2}", first.as_secs_f64()),
                format!("{:.2}", p50.as_secs_f64() * 1e3),
                format!("{:.2}", p50.as_secs_f64() / speed.as_secs_f64()),
            ]
        })
        .collect()
}

/// The first use of a component (its compile, into an empty cache that
/// already holds krt's guest) and a later start (a new engine finding it in
/// the cache), for `middleware`, or for krt's guest alone when `None`.
async fn first_use_and_cached(
    cluster: &TestCluster,
    middleware: Option<&Path>,
    dir: &Path,
) -> (Duration, Duration) {
    let cache = tempfile::tempdir_in(dir).unwrap();
    if middleware.is_some() {
        load(cluster, None, cache.path()).await;
    }
    let first = load(cluster, middleware, cache.path()).await;
    let mut cached: Vec<Duration> = Vec::new();
    for _ in 0..5 {
        cached.push(load(cluster, middleware, cache.path()).await);
    }
    // What the guest alone costs from the cache is not the middleware's.
    let guest = if middleware.is_some() {
        let mut alone: Vec<Duration> = Vec::new();
        for _ in 0..5 {
            alone.push(load(cluster, None, cache.path()).await);
        }
        crate::percentile(&mut alone, 0.5)
    } else {
        Duration::ZERO
    };
    let cached = crate::percentile(&mut cached, 0.5).saturating_sub(guest);
    (first, cached)
}

/// A size in decimal megabytes and in bytes: `12.3 MB (12,253,853 bytes)`.
fn size(bytes: u64) -> String {
    let digits = bytes.to_string();
    let mut grouped = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(c);
    }
    format!("{:.1} MB ({grouped} bytes)", bytes as f64 / 1e6)
}

impl Bench {
    /// krt's prebuilt guest, the org-rules and pass-through middleware (built
    /// as the tests build them) and the JavaScript middleware
    /// (`examples/js-labels/build.sh`, which needs npm).
    pub async fn components(&self) {
        let workspace = krt_testkit::workspace();
        let mut rows = vec![vec![
            "krt's guest (`guest-component/krt_guest.wasm`)".to_string(),
            size(krt_guest_component::COMPONENT.len() as u64),
        ]];
        let org_rules = krt_wasm_build::Build::new(
            &workspace,
            krt_wasm_build::test_guests_dir(&workspace),
            "release",
            &["-p", "org-rules", "--lib"],
        )
        .outputs(true, &["org_rules.wasm"])
        .unwrap_or_else(|e| panic!("building org-rules failed: {e}"));
        let passthrough = crate::passthrough_component();
        let js = crate::js_labels_component();
        let built = [
            (
                "the org-rules middleware (Rust, `examples/org-rules`)",
                Some(&org_rules[0]),
            ),
            (
                "a pass-through middleware (Rust, `tests/middleware`)",
                Some(&passthrough),
            ),
            (
                "the js-labels middleware (JavaScript, `examples/js-labels`)",
                js.as_ref(),
            ),
        ];
        for (what, path) in built {
            let cell = match path {
                Some(path) => size(std::fs::metadata(path).expect("the component").len()),
                None => "not built (its build script failed: npm missing?)".into(),
            };
            rows.push(vec![what.to_string(), cell]);
        }
        let cluster = start_cluster().await;
        let mut timed = Vec::new();
        for (i, (what, path)) in [(rows[0][0].clone(), None)]
            .into_iter()
            .chain(
                built
                    .iter()
                    .filter_map(|(what, path)| path.map(|p| (what.to_string(), Some(p.as_path())))),
            )
            .enumerate()
        {
            let (first, cached) = first_use_and_cached(&cluster, path, self.path()).await;
            rows[i].push(format!("{:.2}", first.as_secs_f64()));
            rows[i].push(format!("{:.1}", cached.as_secs_f64() * 1e3));
            timed.push((what, first, cached));
        }
        for row in &mut rows {
            row.resize(4, "".into());
        }
        crate::table(
            "Components: size on disk, as built from this checkout (wasm32-wasip2, release); \
             first use = the compile into an empty cache, cached = a new engine loading it \
             from the cache (median of 5; a middleware's row leaves krt's guest out)",
            &["component", "size", "first use s", "cached ms"],
            &rows,
        );
        if let Some(js) = &js {
            crate::table(
                "Cranelift's opt_level for the JavaScript middleware: first use (as above) and \
                 the p50 of 60 interleaved applies of an unchanged ConfigMap through it",
                &["opt_level", "first use s", "apply ms", "apply / speed's"],
                &opt_levels(&cluster, js, self.path()).await,
            );
        }
        if let Some((what, first, cached)) = timed.iter().find(|(w, _, _)| w.contains("JavaScript"))
        {
            say!(
                "\n{what}: first use {:.2} s (goal ≤ {} s: {}), cached {:.1} ms (goal ≤ {} ms: {})",
                first.as_secs_f64(),
                FIRST_USE_GOAL.as_secs(),
                verdict(*first <= FIRST_USE_GOAL),
                cached.as_secs_f64() * 1e3,
                CACHED_GOAL.as_millis(),
                verdict(*cached <= CACHED_GOAL),
            );
        }
    }
}
