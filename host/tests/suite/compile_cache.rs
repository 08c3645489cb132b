//! The compiled-component cache: a component is compiled once, later engines
//! map it from the cache, a damaged entry is compiled again, the least
//! recently used entries go past the size limit, and a cache directory that
//! is not private to the user is refused (krt runs the code it finds there).

use krt_host::model::{Action, ApplyOptions};
use krt_host::{
    CacheError, ComponentRuntime, ComponentSource, EngineOptions, Error, KubeCluster, Runtime,
    SharedEngine,
};
use krt_testkit::{TestCluster, configmap};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// An engine whose cache is `dir`, holding at most `max_bytes`.
fn engine(dir: &Path, max_bytes: u64) -> SharedEngine {
    SharedEngine::new(&EngineOptions {
        cache_dir: Some(dir.to_path_buf()),
        cache_max_bytes: max_bytes,
        max_instances: 2,
        ..EngineOptions::default()
    })
    .expect("the engine starts")
}

/// The cache's entries (compiled components), wherever the engine put them under `dir`.
fn entries(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for sub in std::fs::read_dir(dir).unwrap() {
        let sub = sub.unwrap().path();
        for entry in std::fs::read_dir(&sub).unwrap() {
            let entry = entry.unwrap().path();
            if entry.extension().is_some_and(|e| e == "cwasm") {
                found.push(entry);
            }
        }
    }
    found.sort();
    found
}

/// The smallest valid component (no imports, no exports): it compiles, and
/// krt refuses it as a runtime only after compiling it.
const EMPTY_COMPONENT: &[u8] = b"\0asm\x0d\x00\x01\x00";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_component_is_compiled_once_and_later_engines_run_it_from_the_cache() {
    let dir = tempfile::tempdir().unwrap();
    let first = engine(dir.path(), 1 << 30);
    let precompiled = first.precompile(&ComponentSource::Default).await.unwrap();
    assert!(precompiled.compiled && !precompiled.middleware);
    assert!(
        !first
            .precompile(&ComponentSource::Default)
            .await
            .unwrap()
            .compiled
    );
    assert_eq!(first.compile_cache_counts(), Some((1, 1)));
    assert_eq!(entries(dir.path()).len(), 1);

    // A new engine (a new krt process) maps the entry and runs it.
    let later = engine(dir.path(), 1 << 30);
    let sim = TestCluster::start().await;
    let cluster = Arc::new(KubeCluster::new(sim.client.clone(), "default"));
    let runtime = ComponentRuntime::with_engine(
        &later,
        &ComponentSource::Default,
        cluster,
        Default::default(),
    )
    .await
    .unwrap();
    assert_eq!(later.compile_cache_counts(), Some((1, 0)));
    let object = configmap("cached").resource();
    let applied = runtime
        .apply(None, Some(&object), &ApplyOptions::default())
        .await;
    assert_eq!(applied.action, Action::Create, "{applied:?}");
    assert!(sim.get_configmap("default", "cached").await.is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_damaged_entry_is_compiled_again() {
    let dir = tempfile::tempdir().unwrap();
    engine(dir.path(), 1 << 30)
        .precompile(&ComponentSource::Default)
        .await
        .unwrap();
    let [entry] = entries(dir.path()).try_into().unwrap();
    let mut bytes = std::fs::read(&entry).unwrap();
    bytes.truncate(bytes.len() / 2);
    std::fs::write(&entry, &bytes).unwrap();

    let again = engine(dir.path(), 1 << 30);
    assert!(
        again
            .precompile(&ComponentSource::Default)
            .await
            .unwrap()
            .compiled
    );
    assert_eq!(again.compile_cache_counts(), Some((0, 1)));
    assert!(std::fs::metadata(&entry).unwrap().len() > bytes.len() as u64);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_least_recently_used_entries_go_past_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    // Room for one entry: the newest always stays.
    let small = engine(dir.path(), 1);
    small.precompile(&ComponentSource::Default).await.unwrap();
    let guest = entries(dir.path());
    let empty = ComponentSource::Bytes(Arc::from(EMPTY_COMPONENT));
    let refused = small.precompile(&empty).await.unwrap_err();
    assert!(matches!(refused, Error::NotARuntime { .. }), "{refused}");
    let now = entries(dir.path());
    assert_eq!(now.len(), 1, "{now:?}");
    assert_ne!(now, guest, "the older entry went");
    assert!(
        small
            .precompile(&ComponentSource::Default)
            .await
            .unwrap()
            .compiled
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cache_others_may_write_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("shared");
    std::fs::create_dir(&cache).unwrap();
    std::fs::set_permissions(&cache, std::fs::Permissions::from_mode(0o777)).unwrap();
    let refused = SharedEngine::new(&EngineOptions {
        cache_dir: Some(cache.clone()),
        max_instances: 2,
        ..EngineOptions::default()
    })
    .err()
    .expect("the cache is refused");
    assert!(
        matches!(
            refused,
            Error::CompileCache(CacheError::NotPrivate { mode: 0o777, .. })
        ),
        "{refused:?}"
    );
    krt_testkit::assert_contains(
        &refused.to_string(),
        &format!(
            "the compile cache at '{}' is not private to this user",
            cache.display()
        ),
    );
    assert!(
        std::fs::read_dir(&cache).unwrap().next().is_none(),
        "nothing written"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn precompiling_without_a_cache_says_so() {
    let engine = SharedEngine::new(&EngineOptions {
        cache_dir: None,
        max_instances: 2,
        ..EngineOptions::default()
    })
    .unwrap();
    let refused = engine
        .precompile(&ComponentSource::Default)
        .await
        .unwrap_err();
    assert!(matches!(refused, Error::NoCompileCache), "{refused:?}");
}
