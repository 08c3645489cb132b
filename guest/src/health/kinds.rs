//! H5 rules of Job, PersistentVolumeClaim, Service, Ingress, Namespace,
//! CustomResourceDefinition and APIService.

use serde_json::Value;

use super::fields::{at, condition, conditions, int_or, is_true, str_at, with_detail};
use super::{current, failed, in_progress};
use crate::model::{Health, HealthState};

/// Job: waits for `Complete=True` (a running Job is `InProgress`, unlike kstatus).
pub(super) fn job(object: &Value) -> Health {
    let completions = int_or(object, &["spec", "completions"], 1);
    let succeeded = int_or(object, &["status", "succeeded"], 0);
    let failures = int_or(object, &["status", "failed"], 0);
    let active = int_or(object, &["status", "active"], 0);
    let suspended = is_true(object, &["spec", "suspend"]);
    let decided = conditions(object).find_map(|c| match (c.type_, c.is_true()) {
        ("Complete", true) => Some(current(format!(
            "Job Completed. succeeded: {succeeded}/{completions}"
        ))),
        ("Failed", true) => Some(failed(
            c.reason_or("JobFailed"),
            with_detail(
                &format!("Job Failed. failed: {failures}/{completions}"),
                c.message,
            ),
        )),
        ("Suspended", true) if suspended => Some(current("Job is suspended")),
        _ => None,
    });
    decided.unwrap_or_else(|| match at(object, &["status", "startTime"]) {
        None | Some(Value::Null) => in_progress("JobNotStarted", "Job not started"),
        Some(_) => in_progress(
            "JobInProgress",
            format!("Job in progress. success:{succeeded}, active: {active}, failed: {failures}"),
        ),
    })
}

/// PersistentVolumeClaim: `Bound` is current, `Lost` failed, anything else waits.
pub(super) fn pvc(object: &Value) -> Health {
    match str_at(object, &["status", "phase"]) {
        Some("Bound") => current("PVC is Bound"),
        Some("Lost") => failed("ClaimLost", "PVC is Lost: its PersistentVolume is gone"),
        phase => in_progress(
            "NotBound",
            format!("PVC is not Bound. phase: {}", phase.unwrap_or("unknown")),
        ),
    }
}

/// Service: a LoadBalancer needs `spec.externalIPs` or an ingress `ip`/`hostname`.
pub(super) fn service(object: &Value) -> Health {
    if str_at(object, &["spec", "type"]) != Some("LoadBalancer") {
        return current("Service is ready");
    }
    let external_ips = at(object, &["spec", "externalIPs"])
        .and_then(Value::as_array)
        .is_some_and(|ips| !ips.is_empty());
    if external_ips || has_load_balancer_address(object) {
        return current("Service is ready");
    }
    let message = if str_at(object, &["spec", "clusterIP"])
        .unwrap_or("")
        .is_empty()
    {
        "ClusterIP not set. Service type: LoadBalancer"
    } else {
        "Load balancer address not assigned yet. Service type: LoadBalancer"
    };
    in_progress("NoIPAssigned", message)
}

/// Ingress: current once `status.loadBalancer.ingress` has an `ip` or `hostname`. Many
/// controllers never publish one, so waiting on this `InProgress` should be the caller's opt-in.
pub(super) fn ingress(object: &Value) -> Health {
    if has_load_balancer_address(object) {
        current("Ingress has a load balancer address")
    } else {
        in_progress(
            "NoLoadBalancerAddress",
            "Ingress has no load balancer address yet",
        )
    }
}

/// Whether `status.loadBalancer.ingress` has an entry with a non-empty `ip` or `hostname`.
fn has_load_balancer_address(object: &Value) -> bool {
    at(object, &["status", "loadBalancer", "ingress"])
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|entry| {
            ["ip", "hostname"]
                .iter()
                .any(|key| str_at(entry, &[key]).is_some_and(|s| !s.is_empty()))
        })
}

/// Namespace: current unless its phase is `Terminating` (normally caught by H2 already).
pub(super) fn namespace(object: &Value) -> Health {
    if str_at(object, &["status", "phase"]) == Some("Terminating") {
        Health::new(
            HealthState::Terminating,
            "Terminating",
            "Namespace is terminating",
        )
    } else {
        current("Namespace is active")
    }
}

/// CustomResourceDefinition: names accepted and established, conditions read in list order.
pub(super) fn crd(object: &Value) -> Health {
    conditions(object)
        .find_map(|c| match (c.type_, c.status) {
            ("NamesAccepted", "False") => Some(failed(c.reason_or("NamesNotAccepted"), c.message)),
            ("Established", "False") if c.reason != "Installing" => {
                Some(failed(c.reason_or("NotEstablished"), c.message))
            }
            ("Established", "True") => Some(current("CRD is established")),
            _ => None,
        })
        .unwrap_or_else(|| in_progress("Installing", "Install in progress"))
}

/// APIService: current when `Available=True`.
pub(super) fn api_service(object: &Value) -> Health {
    match condition(object, "Available") {
        Some(c) if c.is_true() => current("APIService is available"),
        Some(c) if !c.message.is_empty() => in_progress(c.reason_or("NotAvailable"), c.message),
        c => in_progress(
            c.map_or("NotAvailable", |c| c.reason_or("NotAvailable")),
            "APIService is not available",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn job_failure_uses_condition_reason_and_message() {
        let job_json = json!({"spec": {"completions": 2}, "status": {"failed": 3, "conditions": [
            {"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded",
             "message": "Job has reached the specified backoff limit"}]}});
        assert_eq!(
            job(&job_json),
            failed(
                "BackoffLimitExceeded",
                "Job Failed. failed: 3/2: Job has reached the specified backoff limit"
            )
        );
    }

    #[test]
    fn load_balancer_needs_an_address() {
        let pending = json!({"spec": {"type": "LoadBalancer", "clusterIP": "10.0.0.1"},
            "status": {"loadBalancer": {"ingress": [{}]}}});
        assert_eq!(service(&pending).reason, "NoIPAssigned");
        let ready = json!({"spec": {"type": "LoadBalancer"},
            "status": {"loadBalancer": {"ingress": [{"hostname": "lb.example"}]}}});
        assert_eq!(service(&ready), current("Service is ready"));
        let external = json!({"spec": {"type": "LoadBalancer", "externalIPs": ["1.2.3.4"]}});
        assert_eq!(service(&external).state, HealthState::Current);
        let external_name = json!({"spec": {"type": "ExternalName"}});
        assert_eq!(service(&external_name).state, HealthState::Current);
    }

    #[test]
    fn ingress_pvc_namespace_api_service() {
        let ingress_json = json!({"status": {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}}});
        assert_eq!(ingress(&ingress_json).state, HealthState::Current);
        assert_eq!(ingress(&json!({})).state, HealthState::InProgress);
        assert_eq!(
            pvc(&json!({"status": {"phase": "Lost"}})).state,
            HealthState::Failed
        );
        assert_eq!(
            pvc(&json!({"status": {"phase": "Pending"}})).message,
            "PVC is not Bound. phase: Pending"
        );
        assert_eq!(
            namespace(&json!({"status": {"phase": "Active"}})).state,
            HealthState::Current
        );
        assert_eq!(
            namespace(&json!({"status": {"phase": "Terminating"}})).state,
            HealthState::Terminating
        );
        let unavailable = json!({"status": {"conditions": [{"type": "Available", "status": "False",
            "reason": "MissingEndpoints", "message": "endpoints for service/metrics-server have no addresses"}]}});
        assert_eq!(
            api_service(&unavailable),
            in_progress(
                "MissingEndpoints",
                "endpoints for service/metrics-server have no addresses"
            )
        );
        assert_eq!(api_service(&json!({})).reason, "NotAvailable");
        let available =
            json!({"status": {"conditions": [{"type": "Available", "status": "True"}]}});
        assert_eq!(api_service(&available).state, HealthState::Current);
    }
}
