//! Components from a real OCI registry (docker-registry on loopback): push, pull, inspect and
//! run, tags that move and digests that do not, blobs changed behind the registry's back,
//! credentials, TLS under a CA of the test's own, the cache standing in offline, and cosign
//! signatures required by a verification policy.

use crate::middleware::js_labels;
use crate::support::{TestCluster, krt_at, krt_in, show, temp_dir, workspace};
use crate::wasmtime_cli::{installed, tool};
use krt_testkit::{RegistrySetup, TestRegistry, local_state};
use krt_testkit::{Run, krt_env, run_ok};
use std::path::Path;

const CONFIGMAP: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: from-oci, namespace: default}\ndata: {k: v}\n";

/// krt's guest with a custom section naming `marker` appended: a valid runtime component
/// whose digest no other test pushes.
fn guest_marked(marker: &str) -> Vec<u8> {
    let mut bytes = std::fs::read(workspace().join("guest-component/krt_guest.wasm")).unwrap();
    let name = b"krt-test-marker";
    let mut payload = vec![u8::try_from(name.len()).unwrap()];
    payload.extend_from_slice(name);
    payload.extend_from_slice(marker.as_bytes());
    bytes.push(0); // a custom section
    let mut size = payload.len();
    loop {
        let byte = u8::try_from(size & 0x7f).unwrap();
        size >>= 7;
        bytes.push(if size == 0 { byte } else { byte | 0x80 });
        if size == 0 {
            break;
        }
    }
    bytes.extend_from_slice(&payload);
    bytes
}

/// The `sha256:…` digest a krt line prints after `what`.
fn digest_after(text: &str, what: &str) -> String {
    let at = text
        .find(what)
        .unwrap_or_else(|| panic!("no `{what}` in:\n{text}"));
    let rest = &text[at..];
    let start = rest.find("sha256:").expect("a digest");
    rest[start..start + 71].to_owned()
}

/// Asserts that `run` failed (exit 1) saying `says`.
fn refused(run: &Run, says: &str) {
    assert_eq!(run.code, 1, "{}", show(run));
    assert!(run.stderr.contains(says), "no `{says}` in:\n{}", run.stderr);
}

/// `krt FLAGS apply --yes -f -` of [`CONFIGMAP`] in `dir`, against the cluster of `kubeconfig`.
async fn apply_configmap(dir: &Path, kubeconfig: &Path, flags: &[&str]) -> Run {
    let args = [flags, &["apply", "--yes", "-f", "-"]].concat();
    krt_at(dir, kubeconfig, &args, Some(CONFIGMAP)).await
}

/// `krt component push FILE REF` in `dir`; the digest it printed.
async fn push(dir: &Path, file: &Path, reference: &str, extra: &[&str]) -> String {
    let file = file.to_str().unwrap();
    let run = krt_in(
        dir,
        &[&["component", "push", file, reference][..], extra].concat(),
        None,
    )
    .await;
    assert_eq!(run.code, 0, "{}", show(&run));
    digest_after(&run.stdout, "pushed")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_guest_pushed_pulled_inspected_and_run_from_a_registry() {
    let Some(registry) = TestRegistry::start(RegistrySetup::default()) else {
        return;
    };
    let cluster = TestCluster::start().await;
    let dir = temp_dir("oci-guest");
    let file = dir.path().join("guest.wasm");
    let bytes = guest_marked("the_guest_pushed_pulled_inspected_and_run");
    std::fs::write(&file, &bytes).unwrap();
    let tag = registry.reference("krt/guest:v1");
    let digest = push(dir.path(), &file, &tag, &[]).await;

    let inspect = krt_in(dir.path(), &["component", "inspect", &tag], None).await;
    assert_eq!(inspect.code, 0, "{}", show(&inspect));
    for line in [
        format!("digest     {digest}"),
        format!("size       {} bytes", bytes.len()),
        format!(
            "world      kusion:runtime/kubernetes-runtime@{}",
            krt_host::WIT_VERSION
        ),
        format!("  kusion:runtime/kubernetes@{}", krt_host::WIT_VERSION),
        format!("  kusion:runtime/runtime@{}", krt_host::WIT_VERSION),
    ] {
        assert!(
            inspect.stdout.contains(&line),
            "no `{line}` in:\n{}",
            inspect.stdout
        );
    }

    let pull = krt_in(
        dir.path(),
        &["component", "pull", &tag, "-O", "pulled.wasm"],
        None,
    )
    .await;
    assert_eq!(pull.code, 0, "{}", show(&pull));
    assert_eq!(
        std::fs::read(dir.path().join("pulled.wasm")).unwrap(),
        bytes
    );

    let apply = apply_configmap(dir.path(), &cluster.kubeconfig, &["--component", &tag]).await;
    assert_eq!(apply.code, 0, "{}", show(&apply));
    assert_eq!(
        digest_after(&apply.stderr, &format!("component {tag}")),
        digest
    );
    assert!(cluster.get_configmap("default", "from-oci").await.is_some());
    let pinned = tag.replace(":v1", &format!("@{digest}"));
    assert_eq!(
        local_state(dir.path(), "default")["components"],
        serde_json::json!([pinned])
    );
}

/// The compiled components under `cache` (an `XDG_CACHE_HOME`), by engine configuration.
fn compiled_entries(cache: &Path) -> Vec<(String, usize)> {
    let root = cache.join("krt/components");
    let Ok(engines) = std::fs::read_dir(&root) else {
        return Vec::new();
    };
    let mut entries: Vec<(String, usize)> = engines
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .map(|p| {
            let count = std::fs::read_dir(&p)
                .unwrap()
                .filter(|f| {
                    f.as_ref()
                        .unwrap()
                        .path()
                        .extension()
                        .is_some_and(|x| x == "cwasm")
                })
                .count();
            (p.file_name().unwrap().to_string_lossy().into_owned(), count)
        })
        .collect();
    entries.sort();
    entries
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pull_compiles_the_component_for_its_first_run() {
    let Some(registry) = TestRegistry::start(RegistrySetup::default()) else {
        return;
    };
    let cluster = TestCluster::start().await;
    let dir = temp_dir("oci-precompiled");
    let file = dir.path().join("guest.wasm");
    std::fs::write(&file, guest_marked("a_pull_compiles_the_component")).unwrap();
    let tag = registry.reference("krt/precompiled:v1");
    push(dir.path(), &file, &tag, &[]).await;

    // A cache of this test's own: nothing is compiled before the pull.
    let cache = dir.path().join("cache");
    let env = [("XDG_CACHE_HOME", cache.to_str().unwrap())];
    let pull = krt_env(dir.path(), &["component", "pull", &tag], &env, None).await;
    assert_eq!(pull.code, 0, "{}", show(&pull));
    assert!(
        pull.stdout.contains("compiled into krt's cache in")
            && pull.stdout.contains("its first use starts cached"),
        "{}",
        show(&pull)
    );
    let compiled = compiled_entries(&cache);
    assert_eq!(compiled.len(), 1, "one engine configuration: {compiled:?}");
    assert_eq!(compiled[0].1, 1, "one compiled component: {compiled:?}");

    let again = krt_env(dir.path(), &["component", "pull", &tag], &env, None).await;
    assert_eq!(again.code, 0, "{}", show(&again));
    assert!(
        again.stdout.contains("already compiled in krt's cache"),
        "{}",
        show(&again)
    );
    let json = krt_env(
        dir.path(),
        &["component", "pull", &tag, "-o", "json"],
        &env,
        None,
    )
    .await;
    assert_eq!(json.code, 0, "{}", show(&json));
    let document: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(document["compiled"], true, "{}", json.stdout);

    // The run finds what the pull compiled: the same engine configuration,
    // the same entry, nothing compiled again.
    let kubeconfig = cluster.kubeconfig.to_str().unwrap();
    let apply = krt_env(
        dir.path(),
        &[
            "--kubeconfig",
            kubeconfig,
            "--component",
            &tag,
            "apply",
            "--yes",
            "-f",
            "-",
        ],
        &env,
        Some(CONFIGMAP),
    )
    .await;
    assert_eq!(apply.code, 0, "{}", show(&apply));
    assert!(cluster.get_configmap("default", "from-oci").await.is_some());
    assert_eq!(compiled_entries(&cache), compiled);

    // A component krt cannot load is pulled all the same, and the note says why.
    let other = dir.path().join("other.wasm");
    std::fs::write(&other, b"\0asm\x0d\0\x01\0").unwrap();
    let odd = registry.reference("krt/not-a-runtime:v1");
    push(dir.path(), &other, &odd, &[]).await;
    let pull = krt_env(dir.path(), &["component", "pull", &odd], &env, None).await;
    assert_eq!(pull.code, 0, "{}", show(&pull));
    assert!(
        pull.stderr.contains("not compiled into krt's cache:"),
        "{}",
        show(&pull)
    );
    assert!(dir.path().join("not-a-runtime.wasm").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_moved_tag_is_followed_on_the_next_run_and_a_digest_pin_is_not() {
    let Some(registry) = TestRegistry::start(RegistrySetup::default()) else {
        return;
    };
    let cluster = TestCluster::start().await;
    let dir = temp_dir("oci-moved");
    let tag = registry.reference("krt/moving:stable");
    let (first, second) = (
        dir.path().join("first.wasm"),
        dir.path().join("second.wasm"),
    );
    std::fs::write(&first, guest_marked("moved-first")).unwrap();
    std::fs::write(&second, guest_marked("moved-second")).unwrap();
    let digest_first = push(dir.path(), &first, &tag, &[]).await;
    let pinned_first = tag.replace(":stable", &format!("@{digest_first}"));

    let preview = |component: String| {
        let kubeconfig = cluster.kubeconfig.clone();
        let dir = dir.path().to_path_buf();
        async move {
            let run = krt_at(
                &dir,
                &kubeconfig,
                &["--component", &component, "preview", "-f", "-"],
                Some(CONFIGMAP),
            )
            .await;
            assert_eq!(run.code, 0, "{}", show(&run));
            digest_after(&run.stderr, &format!("component {component}"))
        }
    };
    assert_eq!(preview(tag.clone()).await, digest_first);
    let digest_second = push(dir.path(), &second, &tag, &[]).await;
    assert_ne!(digest_first, digest_second);
    assert_eq!(
        preview(tag.clone()).await,
        digest_second,
        "the tag is resolved on each run"
    );
    assert_eq!(
        preview(pinned_first.clone()).await,
        digest_first,
        "a digest pin never moves"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blob_changed_in_the_registrys_storage_is_refused_and_nothing_is_applied() {
    let Some(registry) = TestRegistry::start(RegistrySetup::default()) else {
        return;
    };
    let cluster = TestCluster::start().await;
    let dir = temp_dir("oci-tampered");
    let file = dir.path().join("guest.wasm");
    let mut bytes = guest_marked("tampered");
    std::fs::write(&file, &bytes).unwrap();
    let tag = registry.reference("krt/tampered:v1");
    push(dir.path(), &file, &tag, &[]).await;
    // The layer is the component's bytes: change one of them in the registry's storage.
    let layer = format!("sha256:{}", sha256_hex(&bytes));
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    std::fs::write(registry.blob_file(&layer), &bytes).unwrap();

    let pull = krt_in(
        dir.path(),
        &["component", "pull", &tag, "-O", "x.wasm"],
        None,
    )
    .await;
    assert_eq!(pull.code, 1, "{}", show(&pull));
    for part in ["digest mismatch for the component layer", &layer, "refused"] {
        assert!(
            pull.stderr.contains(part),
            "no `{part}` in:\n{}",
            pull.stderr
        );
    }
    assert!(!dir.path().join("x.wasm").exists());
    let apply = apply_configmap(dir.path(), &cluster.kubeconfig, &["--component", &tag]).await;
    assert_eq!(apply.code, 1, "{}", show(&apply));
    assert!(apply.stderr.contains("digest mismatch"), "{}", show(&apply));
    assert!(cluster.get_configmap("default", "from-oci").await.is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn credentials_tls_and_the_cache_when_the_registry_is_gone() {
    let setup = RegistrySetup {
        tls: true,
        basic_auth: Some(("krt".to_owned(), "s3cret".to_owned())),
        token: false,
        elsewhere: false,
    };
    let Some(mut registry) = TestRegistry::start(setup) else {
        return;
    };
    let cluster = TestCluster::start().await;
    let dir = temp_dir("oci-auth");
    let file = dir.path().join("guest.wasm");
    std::fs::write(&file, guest_marked("credentials")).unwrap();
    let tag = registry.reference("krt/private:v1");
    let file_arg = file.to_str().unwrap();
    let ca = registry.ca.clone().unwrap();
    let ca_args = ["--registry-ca", ca.to_str().unwrap()];

    let untrusted = krt_in(dir.path(), &["component", "push", file_arg, &tag], None).await;
    refused(
        &untrusted,
        &format!("cannot make a TLS connection to registry {}", registry.host),
    );

    let anonymous = krt_in(
        dir.path(),
        &[&["component", "push", file_arg, &tag][..], &ca_args].concat(),
        None,
    )
    .await;
    refused(
        &anonymous,
        &format!(
            "registry {} refused access to {tag} (401/403) with anonymous access",
            registry.host
        ),
    );

    registry.login(dir.path(), "wrong");
    let wrong = krt_in(
        dir.path(),
        &[&["component", "pull", &tag][..], &ca_args].concat(),
        None,
    )
    .await;
    refused(
        &wrong,
        &format!(
            "registry {} refused access to {tag} (401/403) with the credentials of user 'krt'",
            registry.host
        ),
    );

    registry.login(dir.path(), "s3cret");
    let digest = push(dir.path(), &file, &tag, &ca_args).await;
    let pinned = tag.replace(":v1", &format!("@{digest}"));
    let pull = krt_in(
        dir.path(),
        &[
            &["component", "pull", &tag, "-O", "pulled.wasm"][..],
            &ca_args,
        ]
        .concat(),
        None,
    )
    .await;
    assert_eq!(pull.code, 0, "{}", show(&pull));

    registry.stop();
    let flags = [&["--component", &pinned][..], &ca_args].concat();
    let offline = apply_configmap(dir.path(), &cluster.kubeconfig, &flags).await;
    assert_eq!(
        offline.code,
        0,
        "a cached digest needs no registry: {}",
        show(&offline)
    );
    assert!(offline.stderr.contains("(cached,"), "{}", offline.stderr);
    assert!(cluster.get_configmap("default", "from-oci").await.is_some());

    let tag_offline = krt_in(
        dir.path(),
        &[&["component", "pull", &tag][..], &ca_args].concat(),
        None,
    )
    .await;
    refused(
        &tag_offline,
        &format!(
            "registry {} is unreachable, and a tag needs the registry to be resolved",
            registry.host
        ),
    );
    let never = format!("sha256:{}", "0".repeat(64));
    let uncached = krt_in(
        dir.path(),
        &[
            &[
                "component",
                "pull",
                &tag.replace(":v1", &format!("@{never}")),
            ][..],
            &ca_args,
        ]
        .concat(),
        None,
    )
    .await;
    refused(
        &uncached,
        &format!(
            "registry {} is unreachable, and the cache has no copy of {never}",
            registry.host
        ),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_javascript_middleware_runs_from_a_registry() {
    let Some(labels) = js_labels() else { return };
    let Some(registry) = TestRegistry::start(RegistrySetup::default()) else {
        return;
    };
    let cluster = TestCluster::start().await;
    let dir = temp_dir("oci-js");
    let tag = registry.reference("team/labels:v1");
    let digest = push(dir.path(), labels, &tag, &[]).await;
    let inspect = krt_in(dir.path(), &["component", "inspect", &tag], None).await;
    let world = format!(
        "world      kusion:runtime/middleware@{}",
        krt_host::WIT_VERSION
    );
    assert!(inspect.stdout.contains(&world), "{}", show(&inspect));
    let run = apply_configmap(dir.path(), &cluster.kubeconfig, &["--middleware", &tag]).await;
    assert_eq!(run.code, 0, "{}", show(&run));
    assert_eq!(
        digest_after(&run.stderr, &format!("component {tag}")),
        digest
    );
    let live = cluster
        .get_configmap("default", "from-oci")
        .await
        .expect("applied");
    assert_eq!(
        live["metadata"]["labels"]["app.kubernetes.io/managed-by"],
        "krt"
    );
    let pinned = tag.replace(":v1", &format!("@{digest}"));
    assert_eq!(
        local_state(dir.path(), "default")["components"],
        serde_json::json!([pinned, "built-in"])
    );
}

/// The lowercase hex SHA-256 of `bytes`.
fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_verification_policy_refuses_unsigned_and_wrongly_signed_components() {
    let Some(registry) = TestRegistry::start(RegistrySetup::default()) else {
        return;
    };
    let cluster = TestCluster::start().await;
    let dir = temp_dir("oci-signed");
    let password = [("COSIGN_PASSWORD", "correct horse")];
    for prefix in ["cosign", "other"] {
        let run = krt_env(
            dir.path(),
            &[
                "component",
                "generate-key-pair",
                "--output-key-prefix",
                prefix,
            ],
            &password,
            None,
        )
        .await;
        assert_eq!(run.code, 0, "{}", show(&run));
    }
    let again = krt_env(
        dir.path(),
        &["component", "generate-key-pair"],
        &password,
        None,
    )
    .await;
    assert_eq!(
        again.code,
        1,
        "an existing key is not overwritten: {}",
        show(&again)
    );
    let file = dir.path().join("guest.wasm");
    std::fs::write(&file, guest_marked("signed")).unwrap();
    let tag = registry.reference("krt/signed:v1");
    let digest = push(dir.path(), &file, &tag, &[]).await;
    let apply = || {
        let (dir, kubeconfig, tag) = (
            dir.path().to_path_buf(),
            cluster.kubeconfig.clone(),
            tag.clone(),
        );
        async move {
            let flags = ["--verify-key", "cosign.pub", "--component", &tag];
            apply_configmap(&dir, &kubeconfig, &flags).await
        }
    };
    let sign = |key: &'static str| {
        let (dir, tag) = (dir.path().to_path_buf(), tag.clone());
        async move {
            let run = krt_env(
                &dir,
                &["component", "sign", "--key", key, &tag],
                &password,
                None,
            )
            .await;
            assert_eq!(run.code, 0, "{}", show(&run));
        }
    };

    let unsigned = apply().await;
    refused(
        &unsigned,
        &format!(
            "{tag} ({digest}) is not signed by any of the keys tried ('cosign.pub'): it has no signatures"
        ),
    );
    assert!(cluster.get_configmap("default", "from-oci").await.is_none());

    sign("other.key").await;
    let wrong = apply().await;
    assert_eq!(wrong.code, 1, "{}", show(&wrong));
    assert!(
        wrong
            .stderr
            .contains("it has 1 signature(s), none by these keys; refused"),
        "{}",
        wrong.stderr
    );
    assert!(cluster.get_configmap("default", "from-oci").await.is_none());

    let wrong_password = krt_env(
        dir.path(),
        &["component", "sign", "--key", "cosign.key", &tag],
        &[("COSIGN_PASSWORD", "nope")],
        None,
    )
    .await;
    assert_eq!(wrong_password.code, 1, "{}", show(&wrong_password));
    assert!(
        wrong_password
            .stderr
            .contains("cannot use the key 'cosign.key'"),
        "{}",
        wrong_password.stderr
    );

    sign("cosign.key").await;
    let signed = apply().await;
    assert_eq!(signed.code, 0, "{}", show(&signed));
    assert!(cluster.get_configmap("default", "from-oci").await.is_some());
    let inspect = krt_in(
        dir.path(),
        &["--verify-key", "cosign.pub", "component", "inspect", &tag],
        None,
    )
    .await;
    assert!(
        inspect
            .stdout
            .contains("signatures 2, verified by 'cosign.pub'"),
        "{}",
        show(&inspect)
    );

    // The signature is cosign's: sigstore-rs's own cosign client finds it under the
    // `sha256-<hex>.sig` tag and its public-key verifier accepts it.
    use sigstore::cosign::verification_constraint::{PublicKeyVerifier, VerificationConstraint};
    use sigstore::cosign::{CosignCapabilities, verify_constraints};
    let mut cosign = sigstore::cosign::ClientBuilder::default()
        .with_oci_client_config(sigstore::registry::ClientConfig {
            protocol: sigstore::registry::ClientProtocol::Http,
            ..Default::default()
        })
        .build()
        .unwrap();
    let image: sigstore::registry::OciReference = format!("{}/krt/signed@{digest}", registry.host)
        .parse()
        .unwrap();
    let (signature_image, signed_digest) = cosign
        .triangulate(&image, &sigstore::registry::Auth::Anonymous)
        .await
        .unwrap();
    assert_eq!(signed_digest, digest);
    assert_eq!(
        signature_image.tag(),
        Some(krt_host::oci::signature_tag(&digest).as_str())
    );
    let layers = cosign
        .trusted_signature_layers(&sigstore::registry::Auth::Anonymous, &image)
        .await
        .unwrap();
    assert_eq!(layers.len(), 2);
    let public = std::fs::read(dir.path().join("cosign.pub")).unwrap();
    let constraints: Vec<Box<dyn VerificationConstraint>> =
        vec![Box::new(PublicKeyVerifier::try_from(&public).unwrap())];
    verify_constraints(&layers, constraints.iter()).expect("sigstore-rs verifies krt's signature");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_registry_with_token_auth_over_tls_is_reached_through_its_bearer_challenge() {
    let Some(registry) = TestRegistry::start(RegistrySetup {
        tls: true,
        basic_auth: Some(("krt".to_owned(), "s3cret".to_owned())),
        token: true,
        elsewhere: false,
    }) else {
        return;
    };
    let cluster = TestCluster::start().await;
    let dir = temp_dir("oci-token");
    let file = dir.path().join("guest.wasm");
    std::fs::write(&file, guest_marked("token-auth")).unwrap();
    let tag = registry.reference("krt/token:v1");
    let file_arg = file.to_str().unwrap();
    let ca = registry.ca.clone().unwrap();
    let ca_args = ["--registry-ca", ca.to_str().unwrap()];

    registry.login(dir.path(), "wrong");
    let refusal = krt_in(
        dir.path(),
        &[&["component", "push", file_arg, &tag][..], &ca_args].concat(),
        None,
    )
    .await;
    refused(
        &refusal,
        &format!(
            "registry {} refused access to {tag} (401/403) with the credentials of user 'krt'",
            registry.host
        ),
    );
    assert_eq!(
        registry.tokens_issued(),
        0,
        "the token server refused the wrong password"
    );

    registry.login(dir.path(), "s3cret");
    let digest = push(dir.path(), &file, &tag, &ca_args).await;
    assert!(
        registry.tokens_issued() > 0,
        "the push went through the token server"
    );
    let flags = [&["--component", &tag][..], &ca_args].concat();
    let apply = apply_configmap(dir.path(), &cluster.kubeconfig, &flags).await;
    assert_eq!(apply.code, 0, "{}", show(&apply));
    assert_eq!(
        digest_after(&apply.stderr, &format!("component {tag}")),
        digest
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_wkg_pushed_krt_runs_and_what_krt_pushed_wkg_pulls() {
    if !installed(&["wkg"]) {
        return;
    }
    let Some(registry) = TestRegistry::start(RegistrySetup::default()) else {
        return;
    };
    let cluster = TestCluster::start().await;
    let dir = temp_dir("oci-wkg");
    let (from_wkg, from_krt) = (
        dir.path().join("from-wkg.wasm"),
        dir.path().join("from-krt.wasm"),
    );
    std::fs::write(&from_wkg, guest_marked("pushed-by-wkg")).unwrap();
    std::fs::write(&from_krt, guest_marked("pushed-by-krt")).unwrap();
    let host = registry.host.as_str();

    let wkg_ref = format!("{host}/krt/from-wkg:v1");
    run_ok(
        tool("wkg")
            .args(["oci", "push", "--insecure", host, &wkg_ref])
            .arg(&from_wkg)
            .env("HOME", dir.path()),
        "wkg oci push",
    );
    let tag = format!("oci://{wkg_ref}");
    let inspect = krt_in(dir.path(), &["component", "inspect", &tag], None).await;
    assert_eq!(inspect.code, 0, "{}", show(&inspect));
    let world = format!(
        "world      kusion:runtime/kubernetes-runtime@{}",
        krt_host::WIT_VERSION
    );
    assert!(inspect.stdout.contains(&world), "{}", inspect.stdout);
    let apply = apply_configmap(dir.path(), &cluster.kubeconfig, &["--component", &tag]).await;
    assert_eq!(apply.code, 0, "krt runs what wkg pushed: {}", show(&apply));
    assert!(cluster.get_configmap("default", "from-oci").await.is_some());

    let krt_tag = registry.reference("krt/from-krt:v1");
    push(dir.path(), &from_krt, &krt_tag, &[]).await;
    let pulled = dir.path().join("pulled-by-wkg.wasm");
    run_ok(
        tool("wkg")
            .args([
                "oci",
                "pull",
                "--insecure",
                host,
                &format!("{host}/krt/from-krt:v1"),
                "-o",
            ])
            .arg(&pulled)
            .env("HOME", dir.path()),
        "wkg oci pull",
    );
    assert_eq!(
        std::fs::read(&pulled).unwrap(),
        std::fs::read(&from_krt).unwrap(),
        "wkg pulls what krt pushed, byte for byte"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plain_http_registry_off_loopback_needs_insecure_registry() {
    let Some(registry) = TestRegistry::start(RegistrySetup {
        elsewhere: true,
        ..RegistrySetup::default()
    }) else {
        return;
    };
    let dir = temp_dir("oci-insecure");
    let file = dir.path().join("guest.wasm");
    std::fs::write(&file, guest_marked("insecure")).unwrap();
    let tag = registry.reference("krt/insecure:v1");
    let refusal = krt_in(
        dir.path(),
        &["component", "push", file.to_str().unwrap(), &tag],
        None,
    )
    .await;
    // TLS is the default off loopback.
    refused(
        &refusal,
        &format!("cannot make a TLS connection to registry {}", registry.host),
    );
    let digest = push(
        dir.path(),
        &file,
        &tag,
        &["--insecure-registry", &registry.host],
    )
    .await;
    let pull = krt_in(
        dir.path(),
        &[
            "--insecure-registry",
            &registry.host,
            "component",
            "pull",
            &tag,
            "-O",
            "x.wasm",
        ],
        None,
    )
    .await;
    assert_eq!(pull.code, 0, "{}", show(&pull));
    assert_eq!(digest_after(&pull.stdout, "pulled"), digest);
}
