//! The ClusterRole aggregation controller (kube-controller-manager's
//! `clusterrole-aggregation`): a ClusterRole with an `aggregationRule` gets as `rules` the rules
//! of every other ClusterRole its `clusterRoleSelectors` match (in name order, each rule once),
//! and again whenever a ClusterRole changes.

use serde_json::Value;

use crate::selectors::{Selector, label_selector_string};
use crate::store::{Key, State};

const GROUP: &str = "rbac.authorization.k8s.io";

/// The rules `role`'s aggregation rule gathers from `roles`.
fn aggregated_rules(name: &str, rule: &Value, roles: &[(Key, Value)]) -> Vec<Value> {
    let mut rules: Vec<Value> = Vec::new();
    for selector in rule["clusterRoleSelectors"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let Ok(selector) = Selector::parse_labels(&label_selector_string(selector)) else {
            continue;
        };
        for (key, other) in roles {
            if key.name == name || !selector.matches_labels(other) {
                continue;
            }
            for r in other["rules"].as_array().into_iter().flatten() {
                if !rules.contains(r) {
                    rules.push(r.clone());
                }
            }
        }
    }
    rules
}

fn roles(state: &State) -> Vec<(Key, Value)> {
    state
        .list(GROUP, "clusterroles", None)
        .into_iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// One pass: if any ClusterRole changed since the last pass, every aggregated ClusterRole's
/// rules brought up to date, until none changes (an aggregated role may select another).
pub(crate) fn reconcile(state: &mut State) {
    if !state.changed_since_last_run("clusterrole-aggregation", &[(GROUP, "clusterroles")]) {
        return;
    }
    let bound = roles(state).len() + 1;
    for _ in 0..bound {
        let roles = roles(state);
        let mut changed = false;
        for (key, role) in &roles {
            let rule = &role["aggregationRule"];
            if rule.is_null() {
                continue;
            }
            let rules = aggregated_rules(&key.name, rule, &roles);
            let current = role["rules"].as_array().cloned().unwrap_or_default();
            if current != rules {
                let mut updated = role.clone();
                updated["rules"] = Value::Array(rules);
                state.put(key.clone(), updated);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
}
