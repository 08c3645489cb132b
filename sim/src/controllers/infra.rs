//! Controllers for the non-workload kinds: LoadBalancer Service → ingress IP, Ingress → the
//! ingress controller's address (one controller serving every Ingress, whatever its class),
//! Service with a selector → an EndpointSlice and the legacy Endpoints of its pods, CRD →
//! Established.

use serde_json::{Value, json};

use super::save_as_controller_manager;
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
    endpoints(state);
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

/// The selector of a Service that is not terminating and selects Pods: the Services whose
/// endpoints the controllers keep.
fn live_selector(svc: &Value) -> Option<&serde_json::Map<String, Value>> {
    svc["spec"]["selector"]
        .as_object()
        .filter(|s| !s.is_empty() && svc["metadata"]["deletionTimestamp"].is_null())
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
        .collect();
    for svc in services {
        let Some(selector) = live_selector(&svc) else {
            continue;
        };
        let namespace = svc["metadata"]["namespace"].as_str().unwrap_or_default();
        let name = svc["metadata"]["name"].as_str().unwrap_or_default();
        let mut content = endpoints_of(state, &svc, selector);
        // A Service that selects no Pod keeps a placeholder slice: no endpoints, no ports.
        if content["endpoints"].as_array().is_none_or(Vec::is_empty) {
            content = json!({"endpoints": null, "ports": null});
        }
        let labels = labels_of(
            &svc,
            json!({SERVICE_NAME: name,
                "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io"}),
        );
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
                next["metadata"]["labels"] = labels;
                if next != slice
                    && let Some(generation) = slice["metadata"]["generation"].as_i64()
                {
                    next["metadata"]["generation"] = json!(generation + 1);
                }
                save_as_controller_manager(state, &key, Some(&slice), next);
            }
            None => {
                let slice_name = format!("{name}-{}", meta::name_suffix());
                let key = Key::of("discovery.k8s.io", "endpointslices", namespace, &slice_name);
                let slice = json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                    "metadata": {"name": slice_name, "namespace": namespace, "uid": meta::uid(),
                        "creationTimestamp": meta::now(), "generateName": format!("{name}-"),
                        "generation": 1, "labels": labels,
                        "ownerReferences": [{"apiVersion": "v1", "kind": "Service", "name": name,
                            "uid": svc["metadata"]["uid"], "controller": true, "blockOwnerDeletion": true}]},
                    "addressType": "IPv4", "endpoints": content["endpoints"], "ports": content["ports"]});
                save_as_controller_manager(state, &key, None, slice);
            }
        }
    }
}

/// The labels a Service's endpoints carry: the Service's own, then `own` (the controller's),
/// and `service.kubernetes.io/headless` for a headless Service.
fn labels_of(svc: &Value, own: Value) -> Value {
    let mut labels = svc["metadata"]["labels"].clone();
    if !labels.is_object() {
        labels = json!({});
    }
    let Some(map) = labels.as_object_mut() else {
        return labels;
    };
    map.remove(HEADLESS);
    if let Some(own) = own.as_object() {
        map.extend(own.clone());
    }
    if svc["spec"]["clusterIP"] == "None" {
        map.insert(HEADLESS.into(), json!(""));
    }
    labels
}

/// The label of a headless Service's endpoints.
const HEADLESS: &str = "service.kubernetes.io/headless";

/// The label kube-controller-manager's endpoints controller puts on the Endpoints it keeps.
const ENDPOINTS_MANAGED_BY: &str = "endpoints.kubernetes.io/managed-by";

/// The legacy Endpoints of every Service with a selector, as kube-controller-manager's endpoints
/// controller keeps them: named as the Service, labelled as it is, the ready Pods' addresses
/// and the others' as not ready, for the Service's ports; removed with the Service.
fn endpoints(state: &mut State) {
    const READS: &[(&str, &str)] = &[("", "services"), ("", "pods"), ("", "endpoints")];
    if !state.changed_since_last_run("endpoints", READS) {
        return;
    }
    let services: Vec<Value> = state
        .list("", "services", None)
        .into_iter()
        .map(|(_, svc)| svc.clone())
        .collect();
    for svc in &services {
        let Some(selector) = live_selector(svc) else {
            continue;
        };
        let namespace = svc["metadata"]["namespace"].as_str().unwrap_or_default();
        let name = svc["metadata"]["name"].as_str().unwrap_or_default();
        let content = endpoints_of(state, svc, selector);
        let mut next = json!({"apiVersion": "v1", "kind": "Endpoints",
            "metadata": {"name": name, "namespace": namespace,
                "labels": labels_of(svc, json!({ENDPOINTS_MANAGED_BY: "endpoint-controller"}))}});
        if let Some(subset) = subset(&content) {
            next["subsets"] = json!([subset]);
        }
        let key = Key::of("", "endpoints", namespace, name);
        match state.get(&key).cloned() {
            Some(existing) => {
                let mut updated = existing.clone();
                updated["metadata"]["labels"] = next["metadata"]["labels"].take();
                match next.get("subsets") {
                    Some(subsets) => updated["subsets"] = subsets.clone(),
                    None => {
                        if let Some(fields) = updated.as_object_mut() {
                            fields.remove("subsets");
                        }
                    }
                }
                save_as_controller_manager(state, &key, Some(&existing), updated);
            }
            None => {
                next["metadata"]["uid"] = json!(meta::uid());
                next["metadata"]["creationTimestamp"] = json!(meta::now());
                save_as_controller_manager(state, &key, None, next);
            }
        }
    }
    let gone: Vec<Key> = state
        .list("", "endpoints", None)
        .into_iter()
        .filter(|(k, ep)| {
            ep["metadata"]["labels"][ENDPOINTS_MANAGED_BY] == "endpoint-controller"
                && !services.iter().any(|s| {
                    live_selector(s).is_some()
                        && s["metadata"]["namespace"] == k.namespace.as_str()
                        && s["metadata"]["name"] == k.name.as_str()
                })
        })
        .map(|(k, _)| k.clone())
        .collect();
    for key in gone {
        state.remove(&key);
    }
}

/// The one subset of a Service's endpoints, `None` when it selects no Pod.
fn subset(content: &Value) -> Option<Value> {
    let endpoints = content["endpoints"].as_array().filter(|e| !e.is_empty())?;
    let address = |e: &Value| json!({"ip": e["addresses"][0], "nodeName": e["nodeName"], "targetRef": e["targetRef"]});
    let (ready, not_ready): (Vec<&Value>, Vec<&Value>) = endpoints
        .iter()
        .partition(|e| e["conditions"]["ready"] == true);
    let mut subset = json!({"ports": content["ports"]});
    if !ready.is_empty() {
        subset["addresses"] = ready.into_iter().map(address).collect();
    }
    if !not_ready.is_empty() {
        subset["notReadyAddresses"] = not_ready.into_iter().map(address).collect();
    }
    Some(subset)
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
