//! `krt` stacks end to end against a simulator: preview, apply, change,
//! destroy; invalid stacks; failures that skip dependents; interrupted and
//! concurrent runs; the JSON report; drift.

use crate::support::{
    Run, TestCluster, assert_contains, krt_at, krt_in, krt_spawn, local_state, show, state_ids,
    temp_dir, workspace,
};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Runs `krt --kubeconfig K ARGS` in `dir` (where its `.krt/state` lives).
async fn krt(dir: &Path, cluster: &TestCluster, args: &[&str], input: Option<&str>) -> Run {
    krt_at(dir, &cluster.kubeconfig, args, input).await
}

/// A copy of `examples/three-tier` in `dir`, for editing.
fn three_tier(dir: &Path) -> PathBuf {
    let to = dir.join("three-tier");
    std::fs::create_dir_all(&to).unwrap();
    for entry in std::fs::read_dir(workspace().join("examples/three-tier")).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
    to
}

fn edit(file: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(file).unwrap();
    assert!(text.contains(from), "{} lacks {from}", file.display());
    std::fs::write(file, text.replace(from, to)).unwrap();
}

const THREE_TIER_IDS: [&str; 8] = [
    "v1:Namespace:shop",
    "apiextensions.k8s.io/v1:CustomResourceDefinition:storefronts.shop.krt.dev",
    "v1:ConfigMap:shop:web-config",
    "v1:Secret:shop:db-credentials",
    "apps/v1:Deployment:shop:web",
    "v1:Service:shop:web",
    "networking.k8s.io/v1:Ingress:shop:web",
    "shop.krt.dev/v1:Storefront:shop:main",
];

/// Asserts the summary of an apply lists every three-tier resource created and Current.
fn assert_all_created_and_current(apply: &Run) {
    for id in THREE_TIER_IDS {
        let line = apply
            .stdout
            .lines()
            .find(|l| l.starts_with(&format!("  {id} ")))
            .unwrap_or_else(|| panic!("{id} missing from the summary\n{}", show(apply)));
        assert!(line.contains("create     created    Current"), "{line}");
    }
    assert!(
        apply.stdout.contains(
            "Applied: 8 created, 0 updated, 0 replaced, 0 deleted, 0 unchanged, 0 failed, 0 timed out, 0 skipped"
        ),
        "{}",
        show(apply)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_three_tier_example_converges_on_the_embedded_cluster_within_30_seconds() {
    let dir = temp_dir("three-tier-embedded");
    let app = workspace().join("examples/three-tier");
    let started = std::time::Instant::now();
    let apply = krt_in(
        dir.path(),
        &["--cluster", "sim", "apply", "-f", app.to_str().unwrap()],
        None,
    )
    .await;
    let elapsed = started.elapsed();
    assert_eq!(apply.code, 0, "{}", show(&apply));
    assert!(
        apply.stderr.contains("using the embedded cluster krt-sim"),
        "{}",
        show(&apply)
    );
    assert_all_created_and_current(&apply);
    assert!(
        elapsed < Duration::from_secs(30),
        "took {elapsed:?}\n{}",
        show(&apply)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_three_tier_app_is_previewed_applied_changed_and_destroyed() {
    let cluster = TestCluster::start().await;
    let dir = temp_dir("three-tier");
    let app = three_tier(dir.path());
    let app = app.to_str().unwrap();

    // Preview: everything is a create, in dependency order, as one JSON document.
    let preview = krt(
        dir.path(),
        &cluster,
        &["-o", "json", "preview", "-f", app],
        None,
    )
    .await;
    assert_eq!(preview.code, 0, "{}", show(&preview));
    let doc: Value = serde_json::from_str(&preview.stdout).expect("stdout is one JSON document");
    assert_eq!(doc["command"], "preview");
    let planned: Vec<(&str, &str)> = doc["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["id"].as_str().unwrap(), r["action"].as_str().unwrap()))
        .collect();
    assert_eq!(planned, THREE_TIER_IDS.map(|id| (id, "create")));
    assert!(
        cluster
            .names("v1", "Namespace", "namespaces", None)
            .await
            .iter()
            .all(|n| n != "shop")
    );

    // Apply: everything becomes Current, the Ingress once the simulated ingress controller
    // gives it an address.
    let apply = krt(
        dir.path(),
        &cluster,
        &["apply", "-f", app, "--timeout", "20s"],
        None,
    )
    .await;
    assert_eq!(apply.code, 0, "{}", show(&apply));
    assert_all_created_and_current(&apply);
    let mut expected: Vec<String> = THREE_TIER_IDS.iter().map(|s| s.to_string()).collect();
    expected.sort();
    assert_eq!(state_ids(dir.path(), "default"), expected);
    let recorded = local_state(dir.path(), "default");
    let deployment = recorded["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "apps/v1:Deployment:shop:web")
        .unwrap();
    assert_eq!(deployment["attributes"]["spec"]["replicas"], 2);
    assert!(
        deployment["attributes"]["status"].is_null(),
        "the state records the plan, not the server's object"
    );
    let storefront = cluster
        .get(
            "shop.krt.dev/v1",
            "Storefront",
            "storefronts",
            Some("shop"),
            "main",
        )
        .await
        .expect("custom resource exists");
    assert_eq!(storefront["spec"]["title"], "The krt shop");

    // Change three resources and preview again: the exact diffs, the Secret masked.
    edit(
        &Path::new(app).join("30-web.yaml"),
        "replicas: 2",
        "replicas: 3",
    );
    edit(
        &Path::new(app).join("20-config.yaml"),
        "welcome to the shop",
        "welcome back",
    );
    edit(
        &Path::new(app).join("20-config.yaml"),
        "s3cr3t-one",
        "s3cr3t-two",
    );
    let preview = krt(dir.path(), &cluster, &["preview", "-f", app], None).await;
    assert_eq!(preview.code, 0, "{}", show(&preview));
    let expected = "\
Preview of stack 'default' (state: .krt/state/default.json):
  = unchanged v1:Namespace:shop
  = unchanged apiextensions.k8s.io/v1:CustomResourceDefinition:storefronts.shop.krt.dev
  ~ update    v1:ConfigMap:shop:web-config
      @@ -6,4 +6,4 @@
         labels:
           krt.dev/stack: default
       data:
      -  GREETING: welcome to the shop
      +  GREETING: welcome back
  ~ update    v1:Secret:shop:db-credentials
      @@ -6,5 +6,5 @@
         labels:
           krt.dev/stack: default
       data:
      -  password: \"*** (before)\"
      +  password: \"*** (after)\"
       type: Opaque
  ~ update    apps/v1:Deployment:shop:web
      @@ -9,7 +9,7 @@
           deployment.kubernetes.io/revision: \"1\"
           krt.dev/depends-on: v1:ConfigMap:shop:web-config, v1:Secret:shop:db-credentials
       spec:
      -  replicas: 2
      +  replicas: 3
         selector:
           matchLabels:
             app: web
  = unchanged v1:Service:shop:web
  = unchanged networking.k8s.io/v1:Ingress:shop:web
  = unchanged shop.krt.dev/v1:Storefront:shop:main
Plan: 0 to create, 3 to update, 0 to replace, 0 to delete, 5 unchanged.
";
    assert_eq!(preview.stdout, expected, "{}", show(&preview));
    assert!(!preview.stdout.contains("s3cr3t") && !preview.stderr.contains("s3cr3t"));

    // Apply the change without waiting; then nothing is left to change.
    let apply = krt(
        dir.path(),
        &cluster,
        &["apply", "-f", app, "--watch=false"],
        None,
    )
    .await;
    assert_eq!(apply.code, 0, "{}", show(&apply));
    assert!(
        apply.stdout.contains(
            "Applied: 0 created, 3 updated, 0 replaced, 0 deleted, 5 unchanged, 0 failed"
        ),
        "{}",
        show(&apply)
    );
    let live = cluster.get_deployment("shop", "web").await.unwrap();
    assert_eq!(live["spec"]["replicas"], 3);
    let again = krt(dir.path(), &cluster, &["preview", "-f", app], None).await;
    assert!(
        again
            .stdout
            .ends_with("Plan: 0 to create, 0 to update, 0 to replace, 0 to delete, 8 unchanged.\n"),
        "{}",
        show(&again)
    );

    // A resource dropped from the input is a delete.
    std::fs::remove_file(Path::new(app).join("40-storefront.yaml")).unwrap();
    let preview = krt(dir.path(), &cluster, &["preview", "-f", app], None).await;
    assert!(
        preview
            .stdout
            .contains("  - delete    shop.krt.dev/v1:Storefront:shop:main\n"),
        "{}",
        show(&preview)
    );
    assert!(
        preview
            .stdout
            .ends_with("Plan: 0 to create, 0 to update, 0 to replace, 1 to delete, 7 unchanged.\n")
    );

    // Destroy everything recorded, dependents first.
    let destroy = krt(dir.path(), &cluster, &["destroy"], None).await;
    assert_eq!(destroy.code, 0, "{}", show(&destroy));
    let order: Vec<&str> = destroy
        .stdout
        .lines()
        .filter_map(|l| l.strip_prefix("  deleted    "))
        .collect();
    assert_eq!(order.len(), 8, "{}", show(&destroy));
    let position = |id: &str| order.iter().position(|o| *o == id).unwrap();
    assert!(position("v1:Service:shop:web") < position("apps/v1:Deployment:shop:web"));
    assert!(position("networking.k8s.io/v1:Ingress:shop:web") < position("v1:Service:shop:web"));
    assert!(
        position("shop.krt.dev/v1:Storefront:shop:main")
            < position("apiextensions.k8s.io/v1:CustomResourceDefinition:storefronts.shop.krt.dev")
    );
    assert_eq!(*order.last().unwrap(), "v1:Namespace:shop");
    assert!(state_ids(dir.path(), "default").is_empty());
    assert!(cluster.get_deployment("shop", "web").await.is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cycles_and_duplicate_ids_are_rejected_with_nothing_applied() {
    let cluster = TestCluster::start().await;
    let dir = temp_dir("invalid");
    let spec = r#"
resources:
  - id: v1:ConfigMap:default:a
    type: Kubernetes
    attributes: {apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: default}}
    dependsOn: [v1:ConfigMap:default:b]
  - id: v1:ConfigMap:default:b
    type: Kubernetes
    attributes: {apiVersion: v1, kind: ConfigMap, metadata: {name: b, namespace: default}}
    dependsOn: [v1:ConfigMap:default:a]
  - id: v1:ConfigMap:default:c
    type: Kubernetes
    attributes: {apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: default}}
"#;
    let run = krt(dir.path(), &cluster, &["apply", "-f", "-"], Some(spec)).await;
    assert_eq!(run.code, 1, "{}", show(&run));
    assert_eq!(
        run.stderr,
        "error: dependency cycle: v1:ConfigMap:default:a -> v1:ConfigMap:default:b -> v1:ConfigMap:default:a\n\
         krt: invalid input: nothing was applied\n"
    );
    let dup = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: default}\n";
    let more = "---\napiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: default, annotations: {krt.dev/depends-on: 'v1:Secret:default:nope'}}\n";
    let run = krt(
        dir.path(),
        &cluster,
        &["apply", "-f", "-"],
        Some(&format!("{dup}---\n{dup}{more}")),
    )
    .await;
    assert_eq!(run.code, 1, "{}", show(&run));
    assert_eq!(
        run.stderr,
        "error: -: document 2: duplicate resource ID v1:ConfigMap:default:c (first defined at -: document 1)\n\
         error: -: document 3: v1:Secret:default:s depends on v1:Secret:default:nope, which is not in the input\n\
         krt: invalid input: nothing was applied\n"
    );
    assert!(run.stdout.is_empty());
    assert!(
        cluster
            .names("v1", "ConfigMap", "configmaps", Some("default"))
            .await
            .iter()
            .all(|n| !["a", "b", "c"].contains(&n.as_str()))
    );
    assert!(
        !dir.path().join(".krt/state").exists(),
        "no state was written"
    );
}

const FAILING: &str = r#"
resources:
  - id: v1:Namespace:fail
    type: Kubernetes
    attributes: {apiVersion: v1, kind: Namespace, metadata: {name: fail}}
  - id: apps/v1:Deployment:fail:api
    type: Kubernetes
    attributes:
      apiVersion: apps/v1
      kind: Deployment
      metadata: {name: api, namespace: fail, annotations: {sim.krt.dev/fail: progress-deadline}}
      spec:
        replicas: 1
        selector: {matchLabels: {app: api}}
        template:
          metadata: {labels: {app: api}}
          spec: {containers: [{name: api, image: api:1}]}
  - id: v1:Service:fail:api
    type: Kubernetes
    attributes: {apiVersion: v1, kind: Service, metadata: {name: api, namespace: fail}, spec: {selector: {app: api}, ports: [{port: 80}]}}
    dependsOn: [apps/v1:Deployment:fail:api]
  - id: v1:ConfigMap:fail:after-service
    type: Kubernetes
    attributes: {apiVersion: v1, kind: ConfigMap, metadata: {name: after-service, namespace: fail}}
    dependsOn: [v1:Service:fail:api]
  - id: v1:ConfigMap:fail:independent
    type: Kubernetes
    attributes: {apiVersion: v1, kind: ConfigMap, metadata: {name: independent, namespace: fail}}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_deployment_is_reported_and_its_dependents_skipped() {
    let cluster = TestCluster::simulated(
        Default::default(),
        "its Deployment fails by krt-sim's progress-deadline annotation",
    )
    .await;
    let dir = temp_dir("failing");
    let run = krt(
        dir.path(),
        &cluster,
        &["-o", "json", "apply", "-f", "-", "--timeout", "60s"],
        Some(FAILING),
    )
    .await;
    assert_eq!(run.code, 1, "{}", show(&run));
    let doc: Value = serde_json::from_str(&run.stdout).expect("stdout is one JSON document");
    assert_eq!(doc["apiVersion"], "krt.dev/v1alpha1");
    assert_eq!(doc["kind"], "Report");
    assert_eq!(doc["command"], "apply");
    assert_eq!(doc["stack"], "default");
    assert_eq!(doc["exitCode"], 1);
    assert_eq!(
        doc["summary"],
        serde_json::json!({"created": 2, "failed": 1, "skipped": 2})
    );
    let by_id = |id: &str| {
        doc["resources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["id"] == id)
            .unwrap()
            .clone()
    };
    let deployment = by_id("apps/v1:Deployment:fail:api");
    assert_eq!(deployment["result"], "failed");
    assert_eq!(deployment["action"], "create");
    assert_eq!(deployment["error"]["reason"], "ProgressDeadlineExceeded");
    assert_eq!(deployment["health"]["state"], "failed");
    assert!(deployment["durationMs"].as_u64().is_some());
    for skipped in ["v1:Service:fail:api", "v1:ConfigMap:fail:after-service"] {
        let r = by_id(skipped);
        assert_eq!(r["result"], "skipped", "{r}");
        assert_eq!(r["skippedBecause"], "apps/v1:Deployment:fail:api");
    }
    assert_eq!(by_id("v1:ConfigMap:fail:independent")["result"], "created");
    assert_eq!(
        by_id("v1:ConfigMap:fail:independent")["health"]["state"],
        "current"
    );
    assert!(
        run.stderr
            .contains("error: apps/v1:Deployment:fail:api: ProgressDeadlineExceeded:"),
        "{}",
        show(&run)
    );
    assert!(
        cluster
            .get("v1", "Service", "services", Some("fail"), "api")
            .await
            .is_none()
    );
    assert!(cluster.get_configmap("fail", "independent").await.is_some());
    // The failed Deployment exists, so it is recorded; the skipped ones are not.
    let ids = state_ids(dir.path(), "default");
    assert!(
        ids.contains(&"apps/v1:Deployment:fail:api".to_owned()),
        "{ids:?}"
    );
    assert!(!ids.contains(&"v1:Service:fail:api".to_owned()), "{ids:?}");
}

/// Polls `check` every 50 ms for up to 60 s.
async fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while !check() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_runs_are_refused_and_an_interrupted_apply_resumes() {
    let cluster = TestCluster::start().await;
    let dir = temp_dir("resume");
    // The Deployment never becomes ready, so the first run waits on it with
    // the Service (which depends on it) not yet applied.
    let stuck = FAILING
        .replace(", annotations: {sim.krt.dev/fail: progress-deadline}", "")
        .replace(
            "metadata: {labels: {app: api}}",
            "metadata: {labels: {app: api}, annotations: {sim.krt.dev/fail: crash-loop}}",
        )
        .replace(
            "  - id: v1:ConfigMap:fail:independent",
            "  - id: v1:ConfigMap:fail:independent\n    dependsOn: [apps/v1:Deployment:fail:api]",
        );
    let file = dir.path().join("app.yaml");
    std::fs::write(&file, &stuck).unwrap();
    let mut first = krt_spawn(
        dir.path(),
        &[
            "--kubeconfig",
            cluster.kubeconfig.to_str().unwrap(),
            "apply",
            "-f",
            file.to_str().unwrap(),
        ],
        std::process::Stdio::null(),
        std::process::Stdio::null(),
    );
    let state_file = dir.path().join(".krt/state/default.json");
    eventually("the Deployment to be recorded", || {
        std::fs::read_to_string(&state_file)
            .is_ok_and(|t| t.contains("apps/v1:Deployment:fail:api"))
    })
    .await;

    // A second run on the same stack is refused while the first holds the lock.
    let second = krt(
        dir.path(),
        &cluster,
        &["apply", "-f", file.to_str().unwrap()],
        None,
    )
    .await;
    assert_eq!(second.code, 1, "{}", show(&second));
    assert!(
        second
            .stderr
            .contains("error: stack 'default' is locked by another krt run (pid "),
        "{}",
        show(&second)
    );
    assert_contains(&second.stderr, "run `krt state unlock default`");

    // Interrupt the first run: what it did is recorded, the rest is not.
    first.kill().await.unwrap();
    first.wait().await.unwrap();
    assert_eq!(
        state_ids(dir.path(), "default"),
        ["apps/v1:Deployment:fail:api", "v1:Namespace:fail"]
    );

    // Resume with the Deployment fixed: only what is left (and the fix) happens.
    std::fs::write(
        &file,
        stuck.replace(", annotations: {sim.krt.dev/fail: crash-loop}", ""),
    )
    .unwrap();
    let resumed = krt(
        dir.path(),
        &cluster,
        &["apply", "-f", file.to_str().unwrap(), "--timeout", "60s"],
        None,
    )
    .await;
    assert_eq!(resumed.code, 0, "{}", show(&resumed));
    assert_contains(&resumed.stdout, "  = unchanged v1:Namespace:fail\n");
    assert!(
        resumed
            .stdout
            .contains("  ~ update    apps/v1:Deployment:fail:api\n"),
        "{}",
        resumed.stdout
    );
    assert!(
        resumed
            .stdout
            .contains("  + create    v1:Service:fail:api\n"),
        "{}",
        resumed.stdout
    );
    assert!(
        resumed.stdout.contains(
            "Applied: 3 created, 1 updated, 0 replaced, 0 deleted, 1 unchanged, 0 failed"
        ),
        "{}",
        resumed.stdout
    );
    assert_eq!(state_ids(dir.path(), "default").len(), 5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drift_is_found_and_state_can_live_in_the_cluster() {
    let cluster = TestCluster::start().await;
    let dir = temp_dir("drift");
    let input = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: tuned, namespace: default}\ndata: {level: low}\n";
    let args = ["--state", "kubernetes", "--stack", "tuning"];
    let apply = krt(
        dir.path(),
        &cluster,
        &[&args[..], &["apply", "-f", "-"]].concat(),
        Some(input),
    )
    .await;
    assert_eq!(apply.code, 0, "{}", show(&apply));
    assert!(
        !dir.path().join(".krt/state").exists(),
        "the state is in the cluster"
    );
    let secret = cluster
        .get(
            "v1",
            "Secret",
            "secrets",
            Some("default"),
            "krt-state-tuning",
        )
        .await
        .expect("state Secret");
    assert_eq!(secret["type"], "krt.dev/state.v1");
    assert!(
        cluster
            .get(
                "v1",
                "Secret",
                "secrets",
                Some("default"),
                "krt-lock-tuning"
            )
            .await
            .is_none(),
        "the lock is released"
    );
    let list = krt(
        dir.path(),
        &cluster,
        &[&args[..], &["-o", "json", "state", "list"]].concat(),
        None,
    )
    .await;
    assert_eq!(
        serde_json::from_str::<Value>(&list.stdout).unwrap(),
        serde_json::json!(["tuning"]),
        "{}",
        show(&list)
    );

    let clean = krt(
        dir.path(),
        &cluster,
        &[&args[..], &["drift"]].concat(),
        None,
    )
    .await;
    assert_eq!(clean.code, 0, "{}", show(&clean));
    // Someone changes the object behind krt's back.
    let api: kube::Api<k8s_openapi::api::core::v1::ConfigMap> =
        kube::Api::namespaced(cluster.client.clone(), "default");
    let patch = serde_json::json!({"data": {"level": "high"}});
    api.patch(
        "tuned",
        &kube::api::PatchParams::default(),
        &kube::api::Patch::Merge(&patch),
    )
    .await
    .unwrap();
    let drift = krt(
        dir.path(),
        &cluster,
        &[&args[..], &["drift"]].concat(),
        None,
    )
    .await;
    assert_eq!(drift.code, 2, "{}", show(&drift));
    assert!(
        drift
            .stdout
            .contains("  drifted    v1:ConfigMap:default:tuned\n"),
        "{}",
        drift.stdout
    );
    assert!(
        drift
            .stdout
            .contains("      -  level: high\n      +  level: low\n"),
        "{}",
        drift.stdout
    );
    let read = krt(dir.path(), &cluster, &[&args[..], &["read"]].concat(), None).await;
    assert!(
        read.stdout
            .contains("# drift: 1 field(s) differ from the state: data.level"),
        "{}",
        show(&read)
    );
}
