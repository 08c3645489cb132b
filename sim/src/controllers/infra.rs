//! Controllers for the non-workload kinds: LoadBalancer Service → ingress IP, Ingress → the
//! ingress controller's address (one controller serving every Ingress, whatever its class),
//! Service with a selector → an EndpointSlice of its pods, CRD → Established.

use serde_json::{Value, json};

use super::workloads::{objects, save};
use crate::store::{Key, State};
use crate::{meta, node};

/// The label tying an EndpointSlice to its Service.
const SERVICE_NAME: &str = "kubernetes.io/service-name";

/// Runs `step` on every non-terminating object of `group`/`resource`, saving what it returns;
/// skipped when no such object changed since the last run (`step` reads only its object).
fn each(
    state: &mut State,
    name: &'static str,
    (group, resource): (&str, &str),
    step: impl Fn(&Value) -> Option<Value>,
) {
    if !state.changed_since_last_run(name, &[(group, resource)]) {
        return;
    }
    for (k, object) in objects(state, group, resource, |_| true) {
        if let Some(next) = step(&object) {
            save(state, &k, next);
        }
    }
}

/// One pass of each controller whose inputs changed since its last one.
pub fn reconcile(state: &mut State) {
    each(state, "load-balancers", ("", "services"), |svc| {
        let mut next = svc.clone();
        next["status"] = node::service_status(svc);
        Some(next)
    });
    each(
        state,
        "ingresses",
        ("networking.k8s.io", "ingresses"),
        |ingress| {
            let mut next = ingress.clone();
            next["status"] = node::ingress_status();
            Some(next)
        },
    );
    endpoint_slices(state);
    each(
        state,
        "crds",
        ("apiextensions.k8s.io", "customresourcedefinitions"),
        |crd| {
            let mut next = crd.clone();
            next["status"] = json!({"acceptedNames": crd["spec"]["names"], "storedVersions":
            crd["spec"]["versions"].as_array().into_iter().flatten()
                .filter(|v| v["storage"].as_bool().unwrap_or(false)).map(|v| v["name"].clone()).collect::<Vec<_>>(),
            "conditions": [
                {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts", "message": "no conflicts found",
                 "lastTransitionTime": crd["metadata"]["creationTimestamp"]},
                {"type": "Established", "status": "True", "reason": "InitialNamesAccepted",
                 "message": "the initial names have been accepted", "lastTransitionTime": crd["metadata"]["creationTimestamp"]}]});
            Some(next)
        },
    );
}

/// Whether `pod`'s labels include every pair of the Service selector `selector`.
fn selects(selector: &serde_json::Map<String, Value>, pod: &Value) -> bool {
    selector
        .iter()
        .all(|(k, v)| pod["metadata"]["labels"].get(k) == Some(v))
}

/// The endpoints and ports of `svc` (a Service with a selector) from the pods it selects.
fn endpoints_of(state: &State, svc: &Value, selector: &serde_json::Map<String, Value>) -> Value {
    let namespace = svc["metadata"]["namespace"].as_str().unwrap_or_default();
    let endpoints: Vec<Value> = state
        .list("", "pods", Some(namespace))
        .into_iter()
        .filter(|(_, pod)| selects(selector, pod) && pod["status"]["podIP"].is_string())
        .map(|(_, pod)| {
            let ready = pod["status"]["conditions"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|c| c["type"] == "Ready" && c["status"] == "True");
            let terminating = !pod["metadata"]["deletionTimestamp"].is_null();
            json!({"addresses": [pod["status"]["podIP"]],
                "conditions": {"ready": ready && !terminating, "serving": ready, "terminating": terminating},
                "nodeName": pod["spec"]["nodeName"],
                "targetRef": {"kind": "Pod", "namespace": namespace, "name": pod["metadata"]["name"],
                    "uid": pod["metadata"]["uid"]}})
        })
        .collect();
    let ports: Vec<Value> = svc["spec"]["ports"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            let port = p["targetPort"].as_i64().or_else(|| p["port"].as_i64());
            json!({"name": p["name"].as_str().unwrap_or_default(), "port": port,
                "protocol": p["protocol"].as_str().unwrap_or("TCP")})
        })
        .collect();
    json!({"endpoints": endpoints, "ports": ports})
}

/// Keeps one EndpointSlice per Service with a selector (named `<service>-<suffix>`, labelled
/// with the service name, owned by the Service so it goes with it).
fn endpoint_slices(state: &mut State) {
    const READS: &[(&str, &str)] = &[
        ("", "services"),
        ("", "pods"),
        ("discovery.k8s.io", "endpointslices"),
    ];
    if !state.changed_since_last_run("endpointslices", READS) {
        return;
    }
    let services: Vec<Value> = state
        .list("", "services", None)
        .into_iter()
        .map(|(_, svc)| svc.clone())
        .filter(|svc| {
            svc["metadata"]["deletionTimestamp"].is_null()
                && svc["spec"]["selector"]
                    .as_object()
                    .is_some_and(|s| !s.is_empty())
        })
        .collect();
    for svc in services {
        let Some(selector) = svc["spec"]["selector"].as_object() else {
            continue;
        };
        let namespace = svc["metadata"]["namespace"].as_str().unwrap_or_default();
        let name = svc["metadata"]["name"].as_str().unwrap_or_default();
        let content = endpoints_of(state, &svc, selector);
        let existing = state
            .list("discovery.k8s.io", "endpointslices", Some(namespace))
            .into_iter()
            .find(|(_, s)| s["metadata"]["labels"][SERVICE_NAME] == name)
            .map(|(k, s)| (k.clone(), s.clone()));
        match existing {
            Some((key, slice)) => {
                let mut next = slice.clone();
                next["endpoints"] = content["endpoints"].clone();
                next["ports"] = content["ports"].clone();
                save(state, &key, next);
            }
            None => {
                let slice_name = format!("{name}-{}", meta::name_suffix());
                let key = Key::of("discovery.k8s.io", "endpointslices", namespace, &slice_name);
                let slice = json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                    "metadata": {"name": slice_name, "namespace": namespace, "uid": meta::uid(),
                        "creationTimestamp": meta::now(), "generateName": format!("{name}-"),
                        "labels": {SERVICE_NAME: name,
                            "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io"},
                        "ownerReferences": [{"apiVersion": "v1", "kind": "Service", "name": name,
                            "uid": svc["metadata"]["uid"], "controller": true, "blockOwnerDeletion": true}]},
                    "addressType": "IPv4", "endpoints": content["endpoints"], "ports": content["ports"]});
                state.put(key, slice);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;

    fn key(group: &str, resource: &str, name: &str) -> Key {
        Key::of(group, resource, "d", name)
    }

    #[test]
    fn load_balancers_and_ingresses_get_an_address() {
        let store = Store::new(100);
        let mut state = store.lock();
        let lb = key("", "services", "front");
        state.put(
            lb.clone(),
            json!({"metadata": {"name": "front", "namespace": "d", "uid": "s1"},
            "spec": {"type": "LoadBalancer", "ports": [{"port": 80}]}}),
        );
        let ingress = key("networking.k8s.io", "ingresses", "web");
        state.put(
            ingress.clone(),
            json!({"metadata": {"name": "web", "namespace": "d", "uid": "i1"},
            "spec": {"rules": [{"host": "shop.example.com"}]}, "status": {"loadBalancer": {}}}),
        );
        reconcile(&mut state);
        let front = state.get(&lb).unwrap();
        assert!(
            front["status"]["loadBalancer"]["ingress"][0]["ip"].is_string(),
            "{front}"
        );
        let web = state.get(&ingress).unwrap().clone();
        assert_eq!(
            web["status"]["loadBalancer"]["ingress"],
            json!([{"ip": node::INGRESS_IP}])
        );
        reconcile(&mut state);
        assert_eq!(
            state.get(&ingress).unwrap()["metadata"]["resourceVersion"],
            web["metadata"]["resourceVersion"],
            "a settled Ingress is not rewritten"
        );
    }

    #[test]
    fn services_with_selectors_get_a_slice_of_their_ready_pods() {
        let store = Store::new(100);
        let mut state = store.lock();
        state.put(key("", "services", "web"), json!({"metadata": {"name": "web", "namespace": "d", "uid": "s1"},
            "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": 8080, "protocol": "TCP"}]}}));
        state.put(
            key("", "services", "headless"),
            json!({"metadata": {"name": "headless", "namespace": "d"},
            "spec": {"ports": [{"port": 80}]}}),
        );
        let pod = |name: &str, app: &str, ready: &str| {
            json!({"metadata": {"name": name, "namespace": "d",
            "uid": name, "labels": {"app": app}}, "spec": {"nodeName": "n"},
            "status": {"podIP": "10.0.0.1", "conditions": [{"type": "Ready", "status": ready}]}})
        };
        state.put(key("", "pods", "a"), pod("a", "web", "True"));
        state.put(key("", "pods", "b"), pod("b", "web", "False"));
        state.put(key("", "pods", "c"), pod("c", "db", "True"));
        reconcile(&mut state);
        let slices = state.list("discovery.k8s.io", "endpointslices", Some("d"));
        assert_eq!(slices.len(), 1, "only the service with a selector");
        let slice = slices[0].1.clone();
        assert_eq!(slice["metadata"]["labels"][SERVICE_NAME], "web");
        assert_eq!(slice["metadata"]["ownerReferences"][0]["uid"], "s1");
        assert_eq!(
            slice["ports"],
            json!([{"name": "", "port": 8080, "protocol": "TCP"}])
        );
        let ready: Vec<(String, bool)> = slice["endpoints"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                (
                    e["targetRef"]["name"].as_str().unwrap().to_string(),
                    e["conditions"]["ready"] == true,
                )
            })
            .collect();
        assert_eq!(ready, [("a".to_string(), true), ("b".to_string(), false)]);
        state.remove(&key("", "pods", "a"));
        reconcile(&mut state);
        let slices = state.list("discovery.k8s.io", "endpointslices", Some("d"));
        assert_eq!(slices.len(), 1, "updated in place");
        assert_eq!(slices[0].1["endpoints"].as_array().unwrap().len(), 1);
    }
}
