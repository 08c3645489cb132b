//! What krt-sim's one node and the infrastructure around it report: the kubelet's status of a Pod
//! bound to the node, the ingress controller's address of an Ingress, the load balancer's of a
//! LoadBalancer Service. krt-sim's controllers write them into the store; krt-testkit's stand-in
//! writes them through the API of a control plane that has none of these, so that rollouts and
//! health waits finish there too.
//!
//! Failures on request, by the annotation [`FAIL_ANNOTATION`] on the Pod (or on the template
//! its owner copies it from):
//! - `crash-loop`: the containers run but never get Ready (`CrashLoopBackOff`);
//! - `image-pull`: the Pod stays Pending with `ErrImagePull`;
//! - `job`: a Job's Pod fails.

use serde_json::{Value, json};

use crate::meta;

/// The node every simulated Pod runs on.
pub const NODE: &str = "krt-sim-node";

/// The address the ingress controller serves every Ingress on, whatever its class.
pub const INGRESS_IP: &str = "172.18.255.201";

/// The address the load balancer gives every LoadBalancer Service.
pub const LOAD_BALANCER_IP: &str = "172.18.255.200";

/// The `status` of an Ingress once the ingress controller serves it.
pub fn ingress_status() -> Value {
    json!({"loadBalancer": {"ingress": [{"ip": INGRESS_IP}]}})
}

/// The `status` of Service `service`: an address when it is a LoadBalancer, none otherwise.
pub fn service_status(service: &Value) -> Value {
    if service["spec"]["type"] == "LoadBalancer" {
        json!({"loadBalancer": {"ingress": [{"ip": LOAD_BALANCER_IP, "ipMode": "VIP"}]}})
    } else {
        json!({"loadBalancer": {}})
    }
}

/// The failure-injection annotation (also read on workload objects; see the controllers).
pub const FAIL_ANNOTATION: &str = "sim.krt.dev/fail";

/// The failure `object` asks for: its own [`FAIL_ANNOTATION`], or its Pod template's.
pub(crate) fn fail_mode(object: &Value) -> Option<&str> {
    object["metadata"]["annotations"][FAIL_ANNOTATION]
        .as_str()
        .or_else(|| object["spec"]["template"]["metadata"]["annotations"][FAIL_ANNOTATION].as_str())
}

/// A PodCondition as the kubelet and the scheduler write one: `lastProbeTime` null, and a
/// reason and message only when they say something.
pub(crate) fn pod_condition(kind: &str, status: bool, reason: &str) -> Value {
    let mut condition = json!({"type": kind, "status": if status { "True" } else { "False" },
        "lastProbeTime": null, "lastTransitionTime": meta::now()});
    if !reason.is_empty() {
        condition["reason"] = json!(reason);
    }
    condition
}

/// The status the kubelet reports next for `pod`, a Pending Pod bound to a node: its containers
/// started (Running and Ready), a Job's Pod run to completion, or the failure
/// [`FAIL_ANNOTATION`] asks for. None when it has nothing more to report. `qosClass` is kept
/// from the Pod.
pub fn pod_status(pod: &Value) -> Option<Value> {
    if pod["status"]["phase"] != "Pending" || pod["spec"]["nodeName"].is_null() {
        return None;
    }
    let fail = fail_mode(pod);
    let owner_kind = &pod["metadata"]["ownerReferences"][0]["kind"];
    let scheduled = pod_condition("PodScheduled", true, "");
    let mut status = match fail {
        Some("image-pull") if !pod["status"]["containerStatuses"].is_null() => return None,
        Some("image-pull") => json!({"phase": "Pending", "conditions": [scheduled],
            "containerStatuses": container_statuses(pod, false, Some(("ErrImagePull", "simulated image pull failure")))}),
        _ if owner_kind == "Job" => {
            let done = if fail == Some("job") {
                "Failed"
            } else {
                "Succeeded"
            };
            json!({"phase": done, "conditions": [scheduled, pod_condition("Ready", false, "PodCompleted")]})
        }
        Some("crash-loop") => json!({"phase": "Running", "conditions": [scheduled,
                pod_condition("Ready", false, "ContainersNotReady")],
            "containerStatuses": container_statuses(pod, false, Some(("CrashLoopBackOff", "back-off restarting failed container")))}),
        _ => json!({"phase": "Running", "podIP": "10.244.0.10", "hostIP": "172.18.0.2",
            "startTime": meta::now(),
            "conditions": [scheduled, pod_condition("Initialized", true, ""),
                pod_condition("ContainersReady", true, ""), pod_condition("Ready", true, "")],
            "containerStatuses": container_statuses(pod, true, None)}),
    };
    status["qosClass"] = match &pod["status"]["qosClass"] {
        Value::Null => json!("BestEffort"),
        class => class.clone(),
    };
    Some(status)
}

fn container_statuses(pod: &Value, ready: bool, waiting: Option<(&str, &str)>) -> Value {
    let containers = pod["spec"]["containers"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    Value::Array(
        containers
            .iter()
            .map(|c| {
                let state = match waiting {
                    Some((reason, message)) => json!({"waiting": {"reason": reason, "message": message}}),
                    None => json!({"running": {"startedAt": meta::now()}}),
                };
                json!({"name": c["name"], "image": c["image"], "imageID": "", "ready": ready,
                    "restartCount": if waiting.is_some_and(|w| w.0 == "CrashLoopBackOff") { 3 } else { 0 },
                    "started": ready, "state": state})
            })
            .collect(),
    )
}
