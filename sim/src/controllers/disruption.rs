//! The disruption controller: a PodDisruptionBudget's status counts the Pods its selector
//! matches, the healthy (Ready) ones, how many must stay healthy (`minAvailable`, or all but
//! `maxUnavailable`; percentages of the matched Pods, rounded up) and so how many disruptions
//! are allowed.

use serde_json::{Value, json};

use super::workloads::{objects, save};
use crate::meta;
use crate::store::State;

const READS: &[(&str, &str)] = &[("policy", "poddisruptionbudgets"), ("", "pods")];

/// Whether a `LabelSelector` object (`matchLabels`, `matchExpressions`) selects `labels`; an
/// empty selector selects everything.
pub fn selects(selector: &Value, labels: &Value) -> bool {
    let label = |k: &str| labels.get(k).and_then(Value::as_str);
    let by_labels = selector["matchLabels"]
        .as_object()
        .into_iter()
        .flatten()
        .all(|(k, v)| label(k) == v.as_str());
    let by_expressions = selector["matchExpressions"]
        .as_array()
        .into_iter()
        .flatten()
        .all(|e| {
            let key = e["key"].as_str().unwrap_or_default();
            let values: Vec<&str> = e["values"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            match e["operator"].as_str() {
                Some("In") => label(key).is_some_and(|v| values.contains(&v)),
                Some("NotIn") => label(key).is_none_or(|v| !values.contains(&v)),
                Some("Exists") => label(key).is_some(),
                Some("DoesNotExist") => label(key).is_none(),
                _ => false,
            }
        });
    by_labels && by_expressions
}

/// An int-or-percent of `total`, percentages rounded up.
fn scaled(value: &Value, total: u64) -> Option<u64> {
    match value {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => {
            let pct: u64 = s.strip_suffix('%')?.parse().ok()?;
            Some((total * pct).div_ceil(100))
        }
        _ => None,
    }
}

fn is_ready(pod: &Value) -> bool {
    pod["status"]["conditions"].as_array().is_some_and(|cs| {
        cs.iter()
            .any(|c| c["type"] == "Ready" && c["status"] == "True")
    })
}

/// One pass over every PodDisruptionBudget (none when neither budgets nor Pods changed).
pub fn reconcile(state: &mut State) {
    if !state.changed_since_last_run("disruption", READS) {
        return;
    }
    for (key, pdb) in objects(state, "policy", "poddisruptionbudgets", |_| true) {
        let pods: Vec<Value> = state
            .list("", "pods", Some(&key.namespace))
            .into_iter()
            .filter(|(_, p)| {
                p["metadata"]["deletionTimestamp"].is_null()
                    && selects(&pdb["spec"]["selector"], &p["metadata"]["labels"])
            })
            .map(|(_, p)| p.clone())
            .collect();
        let expected = pods.len() as u64;
        let healthy = pods.iter().filter(|p| is_ready(p)).count() as u64;
        let spec = &pdb["spec"];
        let desired = match (
            scaled(&spec["minAvailable"], expected),
            scaled(&spec["maxUnavailable"], expected),
        ) {
            (Some(min), _) => min,
            (None, Some(max)) => expected.saturating_sub(max),
            (None, None) => expected,
        };
        let allowed = healthy.saturating_sub(desired);
        let generation = pdb["metadata"]["generation"].clone();
        let (status, reason) = if allowed > 0 {
            ("True", "SufficientPods")
        } else {
            ("False", "InsufficientPods")
        };
        let previous = pdb["status"]["conditions"][0].clone();
        let since = if previous["status"] == status {
            previous["lastTransitionTime"].clone()
        } else {
            json!(meta::now())
        };
        let mut next = pdb.clone();
        next["status"] = json!({"observedGeneration": generation, "disruptionsAllowed": allowed,
            "currentHealthy": healthy, "desiredHealthy": desired, "expectedPods": expected,
            "conditions": [{"type": "DisruptionAllowed", "status": status, "reason": reason,
                "message": "", "observedGeneration": generation, "lastTransitionTime": since}]});
        save(state, &key, next);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Key, Store};

    fn key(group: &str, resource: &str, name: &str) -> Key {
        Key::of(group, resource, "d", name)
    }

    #[test]
    fn budgets_count_matching_healthy_pods() {
        let store = Store::new(100);
        let mut s = store.lock();
        for (name, app, ready) in [
            ("a", "web", "True"),
            ("b", "web", "True"),
            ("c", "web", "False"),
            ("d", "db", "True"),
        ] {
            s.put(
                key("", "pods", name),
                json!({"metadata": {"name": name, "labels": {"app": app}},
                    "status": {"conditions": [{"type": "Ready", "status": ready}]}}),
            );
        }
        let pdb = key("policy", "poddisruptionbudgets", "web");
        s.put(
            pdb.clone(),
            json!({"metadata": {"name": "web", "generation": 1},
                "spec": {"minAvailable": "50%", "selector": {"matchLabels": {"app": "web"}}}}),
        );
        reconcile(&mut s);
        let status = &s.get(&pdb).unwrap()["status"];
        assert_eq!(status["expectedPods"], 3);
        assert_eq!(status["currentHealthy"], 2);
        assert_eq!(status["desiredHealthy"], 2);
        assert_eq!(status["disruptionsAllowed"], 0);
        assert_eq!(status["conditions"][0]["reason"], "InsufficientPods");
        assert!(selects(
            &json!({"matchExpressions": [{"key": "app", "operator": "In", "values": ["web", "db"]}]}),
            &json!({"app": "db"})
        ));
        assert!(!selects(
            &json!({"matchExpressions": [{"key": "tier", "operator": "Exists"}]}),
            &json!({"app": "db"})
        ));
    }
}
