//! Discovery documents: `/api`, `/apis`, `/api/v1`, `/apis/{group}/{version}` and `/version`.
//!
//! Aggregated discovery is declined (plain `application/json` answers), so clients fall back to
//! the legacy per-group documents.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    APIGroup, APIGroupList, APIResource, APIResourceList, APIVersions, GroupVersionForDiscovery,
    ServerAddressByClientCIDR,
};
use k8s_openapi::apimachinery::pkg::version::Info;
use serde_json::Value;

use crate::registry::ResourceType;
use crate::store::State;

const VERBS: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

fn with_type(mut value: Value, kind: &str) -> Value {
    value["kind"] = Value::String(kind.into());
    value["apiVersion"] = Value::String("v1".into());
    value
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
    with_type(serde_json::to_value(doc).unwrap_or_default(), "APIVersions")
}

/// `/apis`: every named group with its versions.
pub fn groups(state: &State) -> Value {
    let mut by_group: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    let mut order: Vec<&str> = Vec::new();
    for t in state.resource_types().filter(|t| !t.group.is_empty()) {
        let versions = by_group.entry(&t.group).or_default();
        if versions.is_empty() {
            order.push(&t.group);
        }
        if !versions.contains(&t.version.as_str()) {
            versions.push(&t.version);
        }
    }
    let groups = order
        .into_iter()
        .map(|g| {
            let versions: Vec<GroupVersionForDiscovery> = by_group[g]
                .iter()
                .map(|v| GroupVersionForDiscovery {
                    group_version: format!("{g}/{v}"),
                    version: (*v).to_string(),
                })
                .collect();
            APIGroup {
                name: g.to_string(),
                preferred_version: versions.first().cloned(),
                versions,
                server_address_by_client_cidrs: None,
            }
        })
        .collect();
    with_type(
        serde_json::to_value(APIGroupList { groups }).unwrap_or_default(),
        "APIGroupList",
    )
}

/// `/apis/{group}`: one group.
pub fn group(state: &State, name: &str) -> Option<Value> {
    let all = groups(state);
    let found = all["groups"]
        .as_array()?
        .iter()
        .find(|g| g["name"] == name)?
        .clone();
    Some(with_type(found, "APIGroup"))
}

fn resource(t: &ResourceType) -> APIResource {
    APIResource {
        name: t.plural.clone(),
        singular_name: t.singular.clone(),
        namespaced: t.namespaced,
        kind: t.kind.clone(),
        verbs: VERBS.iter().map(|v| (*v).to_string()).collect(),
        short_names: (!t.short_names.is_empty()).then(|| t.short_names.clone()),
        categories: (!t.custom && matches!(t.group.as_str(), "apps" | "batch")
            || t.kind == "Pod"
            || t.kind == "Service")
            .then(|| vec!["all".to_string()]),
        ..APIResource::default()
    }
}

/// `/api/v1` or `/apis/{group}/{version}`: the resources of one group/version, with their
/// `status` and `scale` subresources; `None` when nothing is served there.
pub fn resources(state: &State, group: &str, version: &str) -> Option<Value> {
    let mut list = Vec::new();
    for t in state
        .resource_types()
        .filter(|t| t.group == group && t.version == version)
    {
        list.push(resource(t));
        if t.status_subresource {
            list.push(APIResource {
                name: format!("{}/status", t.plural),
                namespaced: t.namespaced,
                kind: t.kind.clone(),
                verbs: vec!["get".into(), "patch".into(), "update".into()],
                ..APIResource::default()
            });
        }
        if t.scale_subresource {
            list.push(APIResource {
                name: format!("{}/scale", t.plural),
                namespaced: t.namespaced,
                group: Some("autoscaling".into()),
                version: Some("v1".into()),
                kind: "Scale".into(),
                verbs: vec!["get".into(), "patch".into(), "update".into()],
                ..APIResource::default()
            });
        }
    }
    if list.is_empty() {
        return None;
    }
    let group_version = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    let doc = APIResourceList {
        group_version,
        resources: list,
    };
    Some(with_type(
        serde_json::to_value(doc).unwrap_or_default(),
        "APIResourceList",
    ))
}

/// `/version`.
pub fn version() -> Value {
    serde_json::to_value(Info {
        major: "1".into(),
        minor: "33".into(),
        git_version: "v1.33.0-krt-sim".into(),
        git_commit: "0000000000000000000000000000000000000000".into(),
        git_tree_state: "clean".into(),
        build_date: "2025-01-01T00:00:00Z".into(),
        go_version: "go1.24".into(),
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
    fn lists_groups_and_resources() {
        let store = Store::new(10);
        let state = store.lock();
        let groups = groups(&state);
        assert!(
            groups["groups"]
                .as_array()
                .unwrap()
                .iter()
                .any(|g| g["name"] == "apps")
        );
        let apps = resources(&state, "apps", "v1").unwrap();
        let names: Vec<&str> = apps["resources"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|r| r["name"].as_str())
            .collect();
        assert!(names.contains(&"deployments") && names.contains(&"deployments/scale"));
        assert_eq!(apps["kind"], "APIResourceList");
        assert!(resources(&state, "nope", "v1").is_none());
    }
}
