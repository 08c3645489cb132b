//! The action comes from what the server would store: for random plans of the
//! kinds whose fields the API server defaults and canonicalizes, the live object
//! is the plan plus the server's defaults (krt-sim's in-process cluster, which
//! defaults as kube-apiserver does), and applying the same plan again is always
//! `unchanged` and writes nothing, in both modes, dry run or not.

#[allow(dead_code, reason = "each test binary uses part of the shared support")]
use crate::support;

use krt_guest::model::{Action, ApplyMode, ApplyOptions, Resource};
use krt_guest::runtime;
use krt_testkit::resource;
use proptest::prelude::*;
use proptest::sample::select;
use serde_json::{Value, json};
use support::TestCluster;

/// Memory quantities, several spelling the same amount.
const MEMORY: [&str; 6] = ["1Gi", "1024Mi", "1073741824", "0.5Gi", "512Mi", "128M"];
/// CPU quantities, several spelling the same amount.
const CPU: [&str; 5] = ["1", "1000m", "0.5", "500m", "250m"];

/// A container port: a number, maybe a name, maybe a protocol.
fn port(number: u16) -> impl Strategy<Value = Value> {
    (
        any::<bool>(),
        proptest::option::of(select(vec!["TCP", "UDP"])),
    )
        .prop_map(move |(named, protocol)| {
            let mut p = json!({"containerPort": number});
            if named {
                p["name"] = json!(format!("p{number}"));
            }
            if let Some(protocol) = protocol {
                p["protocol"] = json!(protocol);
            }
            p
        })
}

/// A container with optional ports, requests and limits, a probe on its first
/// port (by name when it has one) and an empty securityContext.
fn container(name: &'static str) -> impl Strategy<Value = Value> {
    (
        proptest::collection::vec(port(8080), 0..=1),
        proptest::option::of((select(MEMORY.to_vec()), select(CPU.to_vec()))),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(move |(ports, requests, probe, security)| {
            let mut c = json!({"name": name, "image": "nginx:1.27"});
            if let Some(first) = ports.first() {
                let target = first.get("name").cloned().unwrap_or(json!(8080));
                if probe && first["protocol"] != "UDP" {
                    c["readinessProbe"] = json!({"httpGet": {"path": "/", "port": target}});
                }
                c["ports"] = json!(ports);
            }
            if let Some((memory, cpu)) = requests {
                c["resources"] = json!({"requests": {"memory": memory, "cpu": cpu},
                    "limits": {"memory": memory}});
            }
            if security {
                c["securityContext"] = json!({});
            }
            c
        })
}

/// A pod template labelled `app: NAME` with one or two containers.
fn template(name: &'static str) -> impl Strategy<Value = Value> {
    (
        container("app"),
        proptest::option::of(container("side")),
        any::<bool>(),
    )
        .prop_map(move |(app, side, security)| {
            let mut spec = json!({"containers": [app]});
            if let Some(side) = side {
                spec["containers"].as_array_mut().unwrap().push(side);
            }
            if security {
                spec["securityContext"] = json!({});
            }
            json!({"metadata": {"labels": {"app": name}}, "spec": spec})
        })
}

fn deployment() -> impl Strategy<Value = Value> {
    (template("web"), proptest::option::of(0u32..4)).prop_map(|(template, replicas)| {
        let mut d = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "web"},
            "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": template}});
        if let Some(r) = replicas {
            d["spec"]["replicas"] = json!(r);
        }
        d
    })
}

fn stateful_set() -> impl Strategy<Value = Value> {
    (
        template("db"),
        proptest::option::of(select(MEMORY.to_vec())),
    )
        .prop_map(|(template, storage)| {
            let mut s = json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
                "metadata": {"name": "db", "namespace": "web"},
                "spec": {"serviceName": "db", "selector": {"matchLabels": {"app": "db"}},
                    "template": template}});
            if let Some(storage) = storage {
                s["spec"]["volumeClaimTemplates"] = json!([{"metadata": {"name": "data"},
                    "spec": {"accessModes": ["ReadWriteOnce"],
                        "resources": {"requests": {"storage": storage}}}}]);
            }
            s
        })
}

fn service() -> impl Strategy<Value = Value> {
    (
        proptest::option::of(prop_oneof![
            Just(json!(8080)),
            Just(json!("http")),
            Just(json!(80))
        ]),
        proptest::option::of(select(vec!["TCP", "UDP"])),
        any::<bool>(),
        proptest::option::of(select(vec!["ClusterIP", "NodePort"])),
    )
        .prop_map(|(target, protocol, named, type_)| {
            let mut port = json!({"port": 80});
            if let Some(target) = target {
                port["targetPort"] = target;
            }
            if let Some(protocol) = protocol {
                port["protocol"] = json!(protocol);
            }
            if named {
                port["name"] = json!("http");
            }
            let mut s = json!({"apiVersion": "v1", "kind": "Service",
                "metadata": {"name": "web", "namespace": "web"},
                "spec": {"selector": {"app": "web"}, "ports": [port]}});
            if let Some(t) = type_ {
                s["spec"]["type"] = json!(t);
            }
            s
        })
}

fn network_policy() -> impl Strategy<Value = Value> {
    (
        proptest::collection::vec(
            (
                prop_oneof![Just(json!(5432)), Just(json!("pg"))],
                proptest::option::of(select(vec!["TCP", "UDP"])),
            ),
            1..=2,
        ),
        any::<bool>(),
    )
        .prop_map(|(ports, egress)| {
            let ports: Vec<Value> = ports
                .into_iter()
                .map(|(port, protocol)| match protocol {
                    Some(p) => json!({"port": port, "protocol": p}),
                    None => json!({"port": port}),
                })
                .collect();
            let mut n = json!({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                "metadata": {"name": "db", "namespace": "web"},
                "spec": {"podSelector": {"matchLabels": {"app": "db"}},
                    "ingress": [{"ports": ports.clone()}]}});
            if egress {
                n["spec"]["egress"] = json!([{"ports": ports}]);
            }
            n
        })
}

/// A plan of one of the kinds above.
fn plan() -> impl Strategy<Value = Value> {
    prop_oneof![deployment(), stateful_set(), service(), network_policy()]
}

fn options(mode: ApplyMode, dry_run: bool) -> ApplyOptions {
    ApplyOptions {
        mode,
        dry_run,
        ..ApplyOptions::default()
    }
}

/// Creates `plan` with krt in `mode`, then applies it again (a dry run, then for
/// real): the action of each re-apply, and whether anything was written.
fn reapply(plan: &Resource, mode: ApplyMode) -> Result<Vec<(Action, bool)>, String> {
    let c = TestCluster::new();
    let host = c.host();
    let created = runtime::apply(&c, &host, None, Some(plan), &options(mode, false));
    if let Some(status) = created.status.filter(|s| s.is_error()) {
        return Err(format!("the create failed: {status:?}"));
    }
    let mut out = Vec::new();
    for dry_run in [true, false] {
        c.clear_log();
        let r = runtime::apply(&c, &host, Some(plan), Some(plan), &options(mode, dry_run));
        if let Some(status) = r.status {
            return Err(format!("re-apply: {status:?}"));
        }
        out.push((r.action, c.wrote()));
    }
    Ok(out)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn a_plan_that_differs_from_live_only_by_defaults_is_unchanged(plan in plan()) {
        let plan = resource(plan);
        for mode in [ApplyMode::ServerSide, ApplyMode::ClientSideThreeWay] {
            let answers = reapply(&plan, mode).map_err(TestCaseError::fail)?;
            prop_assert_eq!(
                answers,
                vec![(Action::Unchanged, false); 2],
                "{:?} in {:?}",
                plan.attributes,
                mode
            );
        }
    }
}
