//! Discovery documents, legacy (`/api`, `/apis`, `/apis/{group}`, `/api/v1`,
//! `/apis/{group}/{version}`) and aggregated (`/api` and `/apis` answered with an
//! `apidiscovery.k8s.io/v2` `APIGroupDiscoveryList` to a client that asks for one, as kubectl
//! does), both built from the same served resource types, plus `/version`.
//!
//! Groups come in the order of the served types; a group's versions in kube's version priority
//! (GA, then beta, then alpha, newer first), the first being the preferred one; a group
//! version's resources by name.

use std::cmp::Ordering;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    APIGroup, APIGroupList, APIResource, APIResourceList, APIVersions, GroupVersionForDiscovery,
    ServerAddressByClientCIDR,
};
use k8s_openapi::apimachinery::pkg::version::Info;
use serde_json::{Value, json};

use crate::registry::ResourceType;
use crate::store::State;

/// The verbs of `status` and `scale` subresources.
const SUBRESOURCE_VERBS: &[&str] = &["get", "patch", "update"];

fn with_type(mut value: Value, kind: &str) -> Value {
    value["kind"] = Value::String(kind.into());
    value["apiVersion"] = Value::String("v1".into());
    value
}

/// `value` with `kind` and no `apiVersion`: the legacy group's documents (`/api`, `/api/v1`),
/// which kube-apiserver writes without one.
fn with_kind_only(mut value: Value, kind: &str) -> Value {
    value["kind"] = Value::String(kind.into());
    if let Some(map) = value.as_object_mut() {
        map.remove("apiVersion");
    }
    value
}

/// The `storageVersionHash` of a resource stored as `kind` in `group_version`
/// (`discovery.StorageVersionHash`): the first 8 bytes of the SHA-256 of
/// `<group>/<version>/<kind>`, in base64. Clients compare it to see a storage version change.
fn storage_version_hash(group: &str, version: &str, kind: &str) -> String {
    use base64::Engine;
    use sha2::Digest;
    let digest = sha2::Sha256::digest(format!("{group}/{version}/{kind}"));
    base64::engine::general_purpose::STANDARD.encode(&digest[..8])
}

/// The hash of the version `t`'s objects are stored in, for a resource that is stored (watched):
/// a CRD's `storage` version, a built-in kind's preferred version among those serving it.
fn storage_hash_of(state: &State, t: &ResourceType) -> Option<String> {
    if !t.verbs.iter().any(|v| v == "watch") {
        return None;
    }
    let version = match &t.storage_version {
        Some(version) => version.clone(),
        None => state
            .resource_types()
            .filter(|o| o.group == t.group && o.plural == t.plural)
            .map(|o| o.version.clone())
            .min_by(|a, b| compare_versions(a, b))?,
    };
    Some(storage_version_hash(&t.group, &version, &t.kind))
}

/// The aggregated discovery version an `Accept` header asks for (`v2` or `v2beta1`), if any.
pub fn aggregated_version(accept: &str) -> Option<&'static str> {
    accept.split(',').find_map(|part| {
        let params: Vec<&str> = part.split(';').map(str::trim).collect();
        let has = |p: &str| params.contains(&p);
        if !has("g=apidiscovery.k8s.io") || !has("as=APIGroupDiscoveryList") {
            return None;
        }
        ["v2", "v2beta1"]
            .into_iter()
            .find(|v| has(&format!("v={v}")))
    })
}

/// The media type of an aggregated discovery document of `version`.
pub fn aggregated_media_type(version: &str) -> String {
    format!("application/json;g=apidiscovery.k8s.io;v={version};as=APIGroupDiscoveryList")
}

/// Kube's version priority: `v2` before `v1` before `v1beta2` before `v1beta1` before
/// `v1alpha1`; versions that do not look like Kubernetes versions last, by name.
pub fn compare_versions(a: &str, b: &str) -> Ordering {
    fn parse(v: &str) -> Option<(u32, u8, u32)> {
        let rest = v.strip_prefix('v')?;
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let major: u32 = rest[..digits].parse().ok()?;
        match &rest[digits..] {
            "" => Some((major, 2, 0)),
            tail => {
                let (level, minor) = if let Some(m) = tail.strip_prefix("beta") {
                    (1, m)
                } else {
                    (0, tail.strip_prefix("alpha")?)
                };
                Some((major, level, minor.parse().ok()?))
            }
        }
    }
    match (parse(a), parse(b)) {
        (Some((ma, la, na)), Some((mb, lb, nb))) => lb.cmp(&la).then(mb.cmp(&ma)).then(nb.cmp(&na)),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => a.cmp(b),
    }
}

/// Every served group (`""` for core) with its versions, preferred first.
fn group_versions(state: &State) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for t in state.resource_types() {
        let i = match out.iter().position(|(g, _)| *g == t.group) {
            Some(i) => i,
            None => {
                out.push((t.group.clone(), Vec::new()));
                out.len() - 1
            }
        };
        if !out[i].1.contains(&t.version) {
            out[i].1.push(t.version.clone());
        }
    }
    for (_, versions) in &mut out {
        versions.sort_by(|a, b| compare_versions(a, b));
    }
    out
}

/// `/api`: the legacy group's versions.
pub fn core_versions(server_address: &str) -> Value {
    let doc = APIVersions {
        versions: vec!["v1".into()],
        server_address_by_client_cidrs: vec![ServerAddressByClientCIDR {
            client_cidr: "0.0.0.0/0".into(),
            server_address: server_address.into(),
        }],
    };
    with_kind_only(serde_json::to_value(doc).unwrap_or_default(), "APIVersions")
}

fn api_group(name: &str, versions: &[String]) -> APIGroup {
    let versions: Vec<GroupVersionForDiscovery> = versions
        .iter()
        .map(|v| GroupVersionForDiscovery {
            group_version: format!("{name}/{v}"),
            version: v.clone(),
        })
        .collect();
    APIGroup {
        name: name.to_string(),
        preferred_version: versions.first().cloned(),
        versions,
        server_address_by_client_cidrs: None,
    }
}

/// The group versions APIServices register for other servers (`spec.service`), with each
/// one's `versionPriority`. krt-sim proxies to none of them: their discovery fails, as
/// kube-aggregator's does for a server it cannot reach.
pub(crate) fn remote_group_versions(state: &State) -> Vec<(String, String, i64)> {
    state
        .list("apiregistration.k8s.io", "apiservices", None)
        .into_iter()
        .filter(|(_, service)| service["spec"]["service"].is_object())
        .filter_map(|(_, service)| {
            let spec = &service["spec"];
            Some((
                spec["group"].as_str()?.to_string(),
                spec["version"].as_str()?.to_string(),
                spec["versionPriority"].as_i64().unwrap_or_default(),
            ))
        })
        .collect()
}

/// The groups APIServices register for other servers, after the served ones: listed as
/// kube-aggregator lists them, though krt-sim reaches no such server.
fn aggregated_groups(
    state: &State,
    served: &[(String, Vec<String>)],
) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<(i64, String)>)> = Vec::new();
    for (group, version, priority) in remote_group_versions(state) {
        if served.iter().any(|(g, _)| *g == group) {
            continue;
        }
        match out.iter_mut().find(|(g, _)| *g == group) {
            Some((_, versions)) => versions.push((priority, version)),
            None => out.push((group, vec![(priority, version)])),
        }
    }
    out.into_iter()
        .map(|(group, mut versions)| {
            versions.sort_by(|(pa, a), (pb, b)| pb.cmp(pa).then_with(|| compare_versions(a, b)));
            (group, versions.into_iter().map(|(_, v)| v).collect())
        })
        .collect()
}

/// `/apis`: every named group with its versions.
pub fn groups(state: &State) -> Value {
    let mut served = group_versions(state);
    served.extend(aggregated_groups(state, &served));
    let groups = served
        .into_iter()
        .filter(|(g, _)| !g.is_empty())
        .map(|(g, versions)| api_group(&g, &versions))
        .collect();
    let mut list = with_type(
        serde_json::to_value(APIGroupList { groups }).unwrap_or_default(),
        "APIGroupList",
    );
    // The list's groups carry no type of their own.
    for group in list["groups"].as_array_mut().into_iter().flatten() {
        if let Some(group) = group.as_object_mut() {
            group.remove("apiVersion");
            group.remove("kind");
        }
    }
    list
}

/// `/apis/{group}`: one group.
pub fn group(state: &State, name: &str) -> Option<Value> {
    let (_, versions) = group_versions(state)
        .into_iter()
        .find(|(g, _)| !g.is_empty() && g == name)?;
    let doc = api_group(name, &versions);
    Some(with_type(
        serde_json::to_value(doc).unwrap_or_default(),
        "APIGroup",
    ))
}

fn of_group_version<'a>(
    state: &'a State,
    group: &'a str,
    version: &'a str,
) -> impl Iterator<Item = &'a ResourceType> {
    state
        .resource_types()
        .filter(move |t| t.group == group && t.version == version)
}

/// A subresource in discovery: name, responseKind group, version, kind, and verbs.
type Subresource<'a> = (
    &'static str,
    &'a str,
    &'a str,
    &'a str,
    &'static [&'static str],
);

/// The subresources of a type, and the ServiceAccount `token` subresource (a `TokenRequest`
/// the server's authentication layer answers).
fn subresources(t: &ResourceType) -> Vec<Subresource<'_>> {
    let mut out: Vec<Subresource<'_>> = Vec::new();
    if t.scale_subresource {
        out.push(("scale", "autoscaling", "v1", "Scale", SUBRESOURCE_VERBS));
    }
    if t.status_subresource {
        out.push(("status", "", "", t.kind.as_str(), SUBRESOURCE_VERBS));
    }
    if t.group.is_empty() && t.plural == "serviceaccounts" && !t.custom {
        out.push((
            "token",
            "authentication.k8s.io",
            "v1",
            "TokenRequest",
            &["create"],
        ));
    }
    out
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_string()).collect()
}

fn non_empty(items: &[String]) -> Option<Vec<String>> {
    (!items.is_empty()).then(|| items.to_vec())
}

/// `/api/v1` or `/apis/{group}/{version}`: the resources of one group/version, with their
/// `status` and `scale` subresources; `None` when nothing is served there.
pub fn resources(state: &State, group: &str, version: &str) -> Option<Value> {
    let mut list = Vec::new();
    for t in of_group_version(state, group, version) {
        list.push(APIResource {
            name: t.plural.clone(),
            singular_name: t.singular.clone(),
            namespaced: t.namespaced,
            kind: t.kind.clone(),
            verbs: t.verbs.clone(),
            short_names: non_empty(&t.short_names),
            categories: non_empty(&t.categories),
            storage_version_hash: storage_hash_of(state, t),
            ..APIResource::default()
        });
        for (name, g, v, kind, verbs) in subresources(t) {
            list.push(APIResource {
                name: format!("{}/{name}", t.plural),
                namespaced: t.namespaced,
                group: (!g.is_empty()).then(|| g.to_string()),
                version: (!v.is_empty()).then(|| v.to_string()),
                kind: kind.to_string(),
                verbs: strings(verbs),
                ..APIResource::default()
            });
        }
    }
    if list.is_empty() {
        return None;
    }
    list.sort_by(|a, b| a.name.cmp(&b.name));
    let group_version = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    let doc = APIResourceList {
        group_version,
        resources: list,
    };
    let doc = serde_json::to_value(doc).unwrap_or_default();
    Some(match group.is_empty() {
        true => with_kind_only(doc, "APIResourceList"),
        false => with_type(doc, "APIResourceList"),
    })
}

fn discovery_resource(t: &ResourceType) -> Value {
    let mut resource = json!({
        "resource": t.plural,
        "responseKind": {"group": "", "version": "", "kind": t.kind},
        "scope": if t.namespaced { "Namespaced" } else { "Cluster" },
        "singularResource": t.singular,
        "verbs": t.verbs,
    });
    if !t.short_names.is_empty() {
        resource["shortNames"] = json!(t.short_names);
    }
    if !t.categories.is_empty() {
        resource["categories"] = json!(t.categories);
    }
    let subresources: Vec<Value> = subresources(t)
        .into_iter()
        .map(|(name, g, v, kind, verbs)| {
            json!({"subresource": name, "responseKind": {"group": g, "version": v, "kind": kind},
                "verbs": verbs})
        })
        .collect();
    if !subresources.is_empty() {
        resource["subresources"] = Value::Array(subresources);
    }
    resource
}

/// The aggregated discovery document (`apidiscovery.k8s.io/{version}` `APIGroupDiscoveryList`)
/// of the core group (`core`, for `/api`) or of every named group (for `/apis`).
pub fn aggregated(state: &State, core: bool, version: &str) -> Value {
    let items: Vec<Value> = group_versions(state)
        .into_iter()
        .filter(|(g, _)| g.is_empty() == core)
        .map(|(g, versions)| {
            let versions: Vec<Value> = versions
                .iter()
                .map(|v| {
                    let mut resources: Vec<&ResourceType> =
                        of_group_version(state, &g, v).collect();
                    resources.sort_by(|a, b| a.plural.cmp(&b.plural));
                    let resources: Vec<Value> =
                        resources.into_iter().map(discovery_resource).collect();
                    json!({"version": v, "resources": resources, "freshness": "Current"})
                })
                .collect();
            let mut metadata = json!({"creationTimestamp": null});
            if !core {
                metadata["name"] = Value::String(g);
            }
            json!({"metadata": metadata, "versions": versions})
        })
        .collect();
    json!({
        "kind": "APIGroupDiscoveryList",
        "apiVersion": format!("apidiscovery.k8s.io/{version}"),
        "metadata": {},
        "items": items,
    })
}

/// `/version`.
pub fn version() -> Value {
    serde_json::to_value(Info {
        major: "1".into(),
        minor: crate::deprecation::MINOR.to_string(),
        git_version: crate::deprecation::git_version(),
        git_commit: "0000000000000000000000000000000000000000".into(),
        git_tree_state: "clean".into(),
        build_date: "2025-01-01T00:00:00Z".into(),
        go_version: "go1.26".into(),
        compiler: "gc".into(),
        platform: "linux/amd64".into(),
        ..Info::default()
    })
    .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;

    #[test]
    fn versions_sort_by_kube_priority() {
        let mut versions = vec![
            "v1alpha3",
            "v1beta1",
            "v1",
            "v2",
            "v1beta2",
            "foo",
            "v10alpha1",
        ];
        versions.sort_by(|a, b| compare_versions(a, b));
        assert_eq!(
            versions,
            [
                "v2",
                "v1",
                "v1beta2",
                "v1beta1",
                "v10alpha1",
                "v1alpha3",
                "foo"
            ]
        );
    }

    #[test]
    fn legacy_and_aggregated_discovery_agree() {
        let store = Store::new(10);
        let state = store.lock();
        let named = aggregated(&state, false, "v2");
        for (name, versions) in group_versions(&state)
            .into_iter()
            .filter(|(g, _)| !g.is_empty())
        {
            let legacy = group(&state, &name).unwrap();
            assert_eq!(legacy["preferredVersion"]["version"], versions[0].as_str());
            let item = named["items"]
                .as_array()
                .unwrap()
                .iter()
                .find(|i| i["metadata"]["name"] == name.as_str())
                .unwrap();
            for (i, v) in versions.iter().enumerate() {
                assert_eq!(item["versions"][i]["version"], v.as_str());
                let legacy = resources(&state, &name, v).unwrap();
                let names: Vec<&str> = legacy["resources"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter_map(|r| r["name"].as_str())
                    .collect();
                let mut from_aggregated: Vec<String> = Vec::new();
                for r in item["versions"][i]["resources"].as_array().unwrap() {
                    let name = r["resource"].as_str().unwrap();
                    from_aggregated.push(name.to_string());
                    for s in r["subresources"].as_array().into_iter().flatten() {
                        from_aggregated
                            .push(format!("{name}/{}", s["subresource"].as_str().unwrap()));
                    }
                }
                from_aggregated.sort();
                assert_eq!(names, from_aggregated, "{name}/{v}");
            }
        }
        let autoscaling = group(&state, "autoscaling").unwrap();
        assert_eq!(autoscaling["preferredVersion"]["version"], "v2");
        let apps = resources(&state, "apps", "v1").unwrap();
        let scale = apps["resources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == "deployments/scale")
            .unwrap();
        assert_eq!(
            (&scale["group"], &scale["kind"]),
            (&json!("autoscaling"), &json!("Scale"))
        );
        assert!(resources(&state, "nope", "v1").is_none());
        let core = aggregated(&state, true, "v2");
        assert_eq!(core["items"].as_array().unwrap().len(), 1);
        assert_eq!(core["items"][0]["versions"][0]["version"], "v1");
    }

    #[test]
    fn aggregated_discovery_is_negotiated() {
        let kubectl = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";
        assert_eq!(aggregated_version(kubectl), Some("v2"));
        assert_eq!(aggregated_version("application/json"), None);
        assert_eq!(
            aggregated_version(
                "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"
            ),
            Some("v2beta1")
        );
    }
}
