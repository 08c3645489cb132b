//! The horizontal pod autoscaler, with metrics that always sit at their targets: the desired
//! replica count is the target's current count held within `minReplicas`..`maxReplicas`, the
//! target is scaled to it, and the status reports the replicas, the metrics and the
//! AbleToScale, ScalingActive and ScalingLimited conditions.

use serde_json::{Value, json};

use super::workloads::{objects, save};
use crate::meta;
use crate::store::{Key, State};

const READS: &[(&str, &str)] = &[
    ("autoscaling", "horizontalpodautoscalers"),
    ("apps", "deployments"),
    ("apps", "statefulsets"),
    ("apps", "replicasets"),
];

/// The key of the HPA's scale target, when it is a kind the simulator serves.
fn target_key(state: &State, hpa: &Value, namespace: &str) -> Option<Key> {
    let target = &hpa["spec"]["scaleTargetRef"];
    let rt = state.resource_types().find(|t| {
        t.api_version() == target["apiVersion"].as_str().unwrap_or_default()
            && t.kind == target["kind"].as_str().unwrap_or_default()
    })?;
    Some(Key::new(rt, namespace, target["name"].as_str()?))
}

/// The metrics as they would be read at their targets.
fn current_metrics(hpa: &Value) -> Value {
    let metrics: Vec<Value> = hpa["spec"]["metrics"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["type"] == "Resource")
        .map(|m| {
            let target = &m["resource"]["target"];
            let mut current = json!({});
            for field in ["averageUtilization", "averageValue", "value"] {
                if !target[field].is_null() {
                    current[field] = target[field].clone();
                }
            }
            json!({"type": "Resource", "resource": {"name": m["resource"]["name"], "current": current}})
        })
        .collect();
    Value::Array(metrics)
}

fn condition(kind: &str, status: bool, reason: &str, message: &str, previous: &Value) -> Value {
    let status = if status { "True" } else { "False" };
    let old = previous["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == kind));
    let since = match old {
        Some(c) if c["status"] == status => c["lastTransitionTime"].clone(),
        _ => json!(meta::now()),
    };
    json!({"type": kind, "status": status, "reason": reason, "message": message,
        "lastTransitionTime": since})
}

/// One pass over every HorizontalPodAutoscaler.
pub fn reconcile(state: &mut State) {
    if !state.changed_since_last_run("autoscaling", READS) {
        return;
    }
    for (key, hpa) in objects(state, "autoscaling", "horizontalpodautoscalers", |_| true) {
        let Some(target_key) = target_key(state, &hpa, &key.namespace) else {
            continue;
        };
        let Some(target) = state.get(&target_key).cloned() else {
            continue;
        };
        let current = target["spec"]["replicas"].as_u64().unwrap_or(1);
        let min = hpa["spec"]["minReplicas"].as_u64().unwrap_or(1);
        let max = hpa["spec"]["maxReplicas"]
            .as_u64()
            .unwrap_or(current)
            .max(min);
        let desired = current.clamp(min, max);
        let mut status = json!({"observedGeneration": hpa["metadata"]["generation"],
            "currentReplicas": target["status"]["replicas"].as_u64().unwrap_or(current),
            "desiredReplicas": desired, "currentMetrics": current_metrics(&hpa)});
        if let Some(t) = hpa["status"]["lastScaleTime"].as_str() {
            status["lastScaleTime"] = json!(t);
        }
        let rescaled = desired != current;
        if rescaled {
            let mut scaled = target.clone();
            scaled["spec"]["replicas"] = json!(desired);
            let generation = scaled["metadata"]["generation"].as_i64().unwrap_or(0) + 1;
            scaled["metadata"]["generation"] = json!(generation);
            save(state, &target_key, scaled);
            status["lastScaleTime"] = json!(meta::now());
        }
        let limited = if current < min {
            (
                true,
                "TooFewReplicas",
                "the desired replica count is less than the minimum replica count",
            )
        } else if current > max {
            (
                true,
                "TooManyReplicas",
                "the desired replica count is more than the maximum replica count",
            )
        } else {
            (
                false,
                "DesiredWithinRange",
                "the desired count is within the acceptable range",
            )
        };
        let previous = &hpa["status"];
        let able = if rescaled {
            condition(
                "AbleToScale",
                true,
                "SucceededRescale",
                &format!("the HPA controller was able to update the target scale to {desired}"),
                previous,
            )
        } else {
            condition(
                "AbleToScale",
                true,
                "ReadyForNewScale",
                "recommended size matches current size",
                previous,
            )
        };
        status["conditions"] = json!([
            able,
            condition(
                "ScalingActive",
                true,
                "ValidMetricFound",
                "the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)",
                previous
            ),
            condition("ScalingLimited", limited.0, limited.1, limited.2, previous),
        ]);
        let mut next = hpa.clone();
        next["status"] = status;
        save(state, &key, next);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;

    #[test]
    fn autoscalers_hold_their_target_within_bounds() {
        let store = Store::new(100);
        let mut s = store.lock();
        let deploy = Key::of("apps", "deployments", "d", "web");
        s.put(
            deploy.clone(),
            json!({"metadata": {"name": "web", "generation": 1}, "spec": {"replicas": 1}}),
        );
        let hpa = Key::of("autoscaling", "horizontalpodautoscalers", "d", "web");
        s.put(
            hpa.clone(),
            json!({"metadata": {"name": "web", "generation": 1}, "spec": {
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "minReplicas": 2, "maxReplicas": 5, "metrics": [{"type": "Resource",
                    "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}]}}),
        );
        reconcile(&mut s);
        let scaled = s.get(&deploy).unwrap();
        assert_eq!(scaled["spec"]["replicas"], 2);
        assert_eq!(scaled["metadata"]["generation"], 2);
        let status = &s.get(&hpa).unwrap()["status"];
        assert_eq!(status["desiredReplicas"], 2);
        assert_eq!(
            status["currentMetrics"][0]["resource"]["current"]["averageUtilization"],
            80
        );
        assert_eq!(status["conditions"][0]["reason"], "SucceededRescale");
        assert!(status["lastScaleTime"].is_string());
        reconcile(&mut s);
        let settled = &s.get(&hpa).unwrap()["status"];
        assert_eq!(settled["conditions"][0]["reason"], "ReadyForNewScale");
        assert_eq!(settled["conditions"][2]["reason"], "DesiredWithinRange");
    }
}
