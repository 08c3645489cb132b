//! `registry`: components from an OCI registry (docker-registry on loopback):
//! the first pull (download, digest checks, compile into an empty cache) and
//! a cached start (a new process's store and engine finding both in their
//! caches), by tag (one manifest request) and by digest (no request at all).

use crate::{Bench, kube_cluster, start_cluster};
use krt_host::oci::{OciOptions, OciReference, OciStore};
use krt_host::{ComponentRuntime, ComponentSource, EngineOptions, Middleware};
use krt_testkit::{RegistrySetup, TestCluster, TestRegistry};
use std::path::Path;
use std::time::{Duration, Instant};

/// Loads krt's guest with `reference` in front as a middleware (or as the
/// runtime when `middleware` is false), through a new store and engine with
/// their caches in `dir`, as a new krt process would; the time.
async fn start(
    cluster: &TestCluster,
    reference: &OciReference,
    middleware: bool,
    dir: &Path,
) -> Duration {
    let started = Instant::now();
    let store = OciStore::new(OciOptions {
        cache_dir: Some(dir.join("oci")),
        ..OciOptions::default()
    })
    .expect("the store");
    let source = ComponentSource::Oci {
        reference: reference.clone(),
        store,
    };
    let builder = match middleware {
        true => ComponentRuntime::builder(ComponentSource::Default)
            .middleware(Middleware::new("measured", source)),
        false => ComponentRuntime::builder(source),
    };
    let options = EngineOptions {
        cache_dir: Some(dir.join("components")),
        ..EngineOptions::default()
    };
    builder
        .build(kube_cluster(cluster), &options)
        .await
        .expect("the component loads");
    started.elapsed()
}

impl Bench {
    /// krt's guest and the JavaScript middleware (when npm built it), each
    /// pushed to a registry on loopback, then started from it.
    pub async fn registry(&self) {
        let Some(registry) = TestRegistry::start(RegistrySetup::default()) else {
            say!("registry: skipped (docker-registry is not installed)");
            return;
        };
        let js = crate::js_labels_component();
        let mut components = vec![(
            "krt's guest (runtime)",
            krt_guest_component::COMPONENT.to_vec(),
            false,
        )];
        if let Some(js) = &js {
            components.push((
                "the js-labels middleware (JavaScript)",
                std::fs::read(js).expect("the JS middleware"),
                true,
            ));
        }
        let publisher = OciStore::new(OciOptions {
            cache_dir: None,
            ..OciOptions::default()
        })
        .expect("the store");
        let cluster = start_cluster().await;
        let mut rows = Vec::new();
        for (i, (what, bytes, middleware)) in components.into_iter().enumerate() {
            let size = bytes.len();
            let tag = OciReference::parse(&registry.reference(&format!("bench/c{i}:v1"))).unwrap();
            let pushed = publisher.push(what, bytes, &tag).await.expect("pushed");
            let by_digest = tag.pinned(&pushed.digest);
            let dir = tempfile::tempdir_in(self.path()).unwrap();
            // The guest's own compile is not the middleware's first use.
            if middleware {
                let options = EngineOptions {
                    cache_dir: Some(dir.path().join("components")),
                    ..EngineOptions::default()
                };
                ComponentRuntime::new(&ComponentSource::Default, kube_cluster(&cluster), &options)
                    .await
                    .expect("krt's guest loads");
            }
            let first = start(&cluster, &tag, middleware, dir.path()).await;
            let mut tagged = Vec::new();
            let mut pinned = Vec::new();
            for _ in 0..5 {
                tagged.push(start(&cluster, &tag, middleware, dir.path()).await);
                pinned.push(start(&cluster, &by_digest, middleware, dir.path()).await);
            }
            rows.push(vec![
                what.to_string(),
                format!("{:.1}", size as f64 / 1e6),
                format!("{:.2}", first.as_secs_f64()),
                format!(
                    "{:.1}",
                    crate::percentile(&mut tagged, 0.5).as_secs_f64() * 1e3
                ),
                format!(
                    "{:.1}",
                    crate::percentile(&mut pinned, 0.5).as_secs_f64() * 1e3
                ),
            ]);
        }
        if js.is_none() {
            rows.push(vec![
                "the js-labels middleware (JavaScript)".into(),
                "not built (its build script failed: npm missing?)".into(),
                String::new(),
                String::new(),
                String::new(),
            ]);
        }
        crate::table(
            "Registry: components pushed to docker-registry on loopback, then started from it; \
             first pull = download, digest checks and the compile into empty caches; cached = a new \
             store and engine finding both in their caches (median of 5), by tag (one manifest \
             request) and by digest (no request); a middleware's rows include loading krt's guest \
             from the cache",
            &[
                "component",
                "MB",
                "first pull s",
                "cached by tag ms",
                "cached by digest ms",
            ],
            &rows,
        );
    }
}
