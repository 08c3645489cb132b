//! Service defaults (kube's `SetDefaults_Service`) and what the Service registry allocates: a
//! cluster IP from 10.96.0.0/12, its IP family, and node ports for NodePort and LoadBalancer
//! Services.

use std::sync::atomic::{AtomicU32, Ordering};

use serde_json::{Value, json};

use super::{default, each_mut};

/// Allocates the next ClusterIP from 10.96.0.0/12.
fn next_cluster_ip() -> String {
    static NEXT: AtomicU32 = AtomicU32::new(10);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    format!("10.96.{}.{}", (n >> 8) & 0xff, n & 0xff)
}

/// Allocates the next node port from 30000-32767.
fn next_node_port() -> u32 {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    30000 + NEXT.fetch_add(1, Ordering::Relaxed) % 2768
}

/// Fills a Service's defaults; `live` is the stored Service on updates (its allocations stay).
pub fn service(object: &mut Value) {
    let Some(spec) = object.get_mut("spec").filter(|s| s.is_object()) else {
        return;
    };
    default(spec, "type", json!("ClusterIP"));
    default(spec, "sessionAffinity", json!("None"));
    match spec["sessionAffinity"].as_str() {
        Some("None") => {
            if let Some(m) = spec.as_object_mut() {
                m.remove("sessionAffinityConfig");
            }
        }
        Some("ClientIP")
            if spec
                .pointer("/sessionAffinityConfig/clientIP/timeoutSeconds")
                .is_none() =>
        {
            spec["sessionAffinityConfig"] = json!({"clientIP": {"timeoutSeconds": 10800}});
        }
        _ => {}
    }
    let kind = spec["type"].as_str().unwrap_or_default().to_string();
    let node_ports = matches!(kind.as_str(), "NodePort" | "LoadBalancer");
    for port in each_mut(spec, "ports") {
        default(port, "protocol", json!("TCP"));
        if port["targetPort"].is_null() || port["targetPort"] == 0 || port["targetPort"] == "" {
            port["targetPort"] = port["port"].clone();
        }
    }
    if node_ports {
        default(spec, "externalTrafficPolicy", json!("Cluster"));
    }
    if kind == "LoadBalancer" {
        default(spec, "allocateLoadBalancerNodePorts", json!(true));
    }
    if kind == "ExternalName" {
        return;
    }
    default(spec, "internalTrafficPolicy", json!("Cluster"));
}

/// What the Service registry allocates after the defaults: node ports, the cluster IP (kept
/// from `live` when an update leaves it out) and its families.
pub fn allocate(object: &mut Value, live: Option<&Value>) {
    let Some(spec) = object.get_mut("spec").filter(|s| s.is_object()) else {
        return;
    };
    let kind = spec["type"].as_str().unwrap_or_default().to_string();
    let live_spec = live.map(|l| &l["spec"]);
    if matches!(kind.as_str(), "NodePort" | "LoadBalancer") {
        let live_ports: Vec<Value> = live_spec
            .and_then(|s| s["ports"].as_array())
            .cloned()
            .unwrap_or_default();
        for port in each_mut(spec, "ports") {
            if port["nodePort"].is_null() || port["nodePort"] == 0 {
                let kept = live_ports
                    .iter()
                    .find(|l| l["port"] == port["port"] && l["protocol"] == port["protocol"])
                    .map(|l| l["nodePort"].clone())
                    .filter(|p| !p.is_null());
                port["nodePort"] = kept.unwrap_or_else(|| json!(next_node_port()));
            }
        }
    }
    if kind == "ExternalName" {
        return;
    }
    if spec["clusterIP"].as_str().is_none_or(str::is_empty) {
        let live_ip = live_spec
            .and_then(|l| l["clusterIP"].as_str())
            .filter(|ip| !ip.is_empty())
            .map(str::to_string);
        spec["clusterIP"] = json!(live_ip.unwrap_or_else(next_cluster_ip));
    }
    let ip = spec["clusterIP"].clone();
    default(spec, "clusterIPs", json!([ip]));
    default(spec, "ipFamilies", json!(["IPv4"]));
    default(spec, "ipFamilyPolicy", json!("SingleStack"));
}

/// A new Service's status: a LoadBalancer's is filled in by the load-balancer controller.
pub fn initial_status(object: &mut Value) {
    object["status"] = json!({"loadBalancer": {}});
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn services_get_a_cluster_ip_that_updates_keep() {
        let mut s = json!({"metadata": {}, "spec": {"ports": [{"port": 80}]}});
        service(&mut s);
        allocate(&mut s, None);
        let ip = s["spec"]["clusterIP"].clone();
        assert!(ip.as_str().unwrap().starts_with("10.96."));
        assert_eq!(s["spec"]["clusterIPs"], json!([ip.clone()]));
        assert_eq!(s["spec"]["type"], "ClusterIP");
        assert_eq!(s["spec"]["internalTrafficPolicy"], "Cluster");
        assert_eq!(s["spec"]["ports"][0]["targetPort"], 80);
        assert_eq!(s["spec"]["ports"][0]["protocol"], "TCP");
        let mut again = json!({"metadata": {}, "spec": {"ports": [{"port": 80}]}});
        service(&mut again);
        allocate(&mut again, Some(&s));
        assert_eq!(again["spec"]["clusterIP"], ip);
    }

    #[test]
    fn load_balancers_get_node_ports_and_external_names_no_ip() {
        let mut lb = json!({"spec": {"type": "LoadBalancer", "sessionAffinity": "ClientIP",
            "ports": [{"port": 443, "targetPort": "https"}]}});
        service(&mut lb);
        allocate(&mut lb, None);
        let spec = &lb["spec"];
        assert!(spec["ports"][0]["nodePort"].as_u64().unwrap() >= 30000);
        assert_eq!(spec["ports"][0]["targetPort"], "https");
        assert_eq!(spec["allocateLoadBalancerNodePorts"], true);
        assert_eq!(spec["externalTrafficPolicy"], "Cluster");
        assert_eq!(
            spec["sessionAffinityConfig"]["clientIP"]["timeoutSeconds"],
            10800
        );
        let mut name = json!({"spec": {"type": "ExternalName", "externalName": "example.com"}});
        service(&mut name);
        allocate(&mut name, None);
        assert!(name["spec"]["clusterIP"].is_null());
        assert!(name["spec"]["internalTrafficPolicy"].is_null());
    }
}
