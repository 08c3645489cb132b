//! Policy rules: whether a rule allows a request (`RuleAllows` of kube's
//! `pkg/apis/rbac/v1/evaluation_helpers.go`), whether held rules cover requested ones
//! (`Covers` of `pkg/registry/rbac/validation/policy_comparator.go`), and the compact form
//! escalation errors print them in.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::rbac::v1::PolicyRule;

use super::Attributes;

/// The strings of an optional list field of a rule.
pub(crate) fn items(list: &Option<Vec<String>>) -> &[String] {
    list.as_deref().unwrap_or_default()
}

fn has(set: &[String], item: &str) -> bool {
    set.iter().any(|s| s == item)
}

fn has_all(set: &[String], wanted: &[String]) -> bool {
    wanted.iter().all(|w| has(set, w))
}

fn resource_matches(rule: &PolicyRule, combined: &str, subresource: &str) -> bool {
    items(&rule.resources).iter().any(|r| {
        r == "*"
            || r == combined
            || (!subresource.is_empty()
                && r.len() == subresource.len() + 2
                && r.starts_with("*/")
                && r.ends_with(subresource))
    })
}

/// Whether `url` is matched by the rule URL `pattern` (exact, `*`, or a trailing `*` prefix).
fn url_matches(pattern: &str, url: &str) -> bool {
    pattern == "*"
        || pattern == url
        || (pattern.ends_with('*') && url.starts_with(pattern.trim_end_matches('*')))
}

/// Whether `rule` allows the request `attributes` describe.
pub(crate) fn allows(rule: &PolicyRule, attributes: &Attributes) -> bool {
    let verb = has(&rule.verbs, "*") || has(&rule.verbs, &attributes.verb);
    if !attributes.resource_request {
        return verb
            && items(&rule.non_resource_urls)
                .iter()
                .any(|u| url_matches(u, &attributes.path));
    }
    let groups = items(&rule.api_groups);
    let combined = if attributes.subresource.is_empty() {
        attributes.resource.clone()
    } else {
        format!("{}/{}", attributes.resource, attributes.subresource)
    };
    let names = items(&rule.resource_names);
    verb && (has(groups, "*") || has(groups, &attributes.group))
        && resource_matches(rule, &combined, &attributes.subresource)
        && (names.is_empty() || has(names, &attributes.name))
}

fn one(item: &str) -> Option<Vec<String>> {
    Some(vec![item.to_string()])
}

/// `rule` split into rules of one group, resource, verb and resource name (or one URL and
/// verb), as kube's `BreakdownRule`.
fn breakdown(rule: &PolicyRule) -> Vec<PolicyRule> {
    let mut out = Vec::new();
    for group in items(&rule.api_groups) {
        for resource in items(&rule.resources) {
            for verb in &rule.verbs {
                let atom = |names| PolicyRule {
                    api_groups: one(group),
                    resources: one(resource),
                    verbs: vec![verb.clone()],
                    resource_names: names,
                    ..PolicyRule::default()
                };
                match items(&rule.resource_names) {
                    [] => out.push(atom(None)),
                    names => out.extend(names.iter().map(|n| atom(one(n)))),
                }
            }
        }
    }
    for url in items(&rule.non_resource_urls) {
        for verb in &rule.verbs {
            out.push(PolicyRule {
                non_resource_urls: one(url),
                verbs: vec![verb.clone()],
                ..PolicyRule::default()
            });
        }
    }
    out
}

fn resources_cover(owner: &[String], wanted: &[String]) -> bool {
    if has(owner, "*") || has_all(owner, wanted) {
        return true;
    }
    wanted.iter().all(|path| {
        has(owner, path)
            || path
                .split_once('/')
                .is_some_and(|(_, sub)| has(owner, &format!("*/{sub}")))
    })
}

fn rule_covers(owner: &PolicyRule, wanted: &PolicyRule) -> bool {
    let verbs = has(&owner.verbs, "*") || has_all(&owner.verbs, &wanted.verbs);
    let owner_groups = items(&owner.api_groups);
    let groups = has(owner_groups, "*") || has_all(owner_groups, items(&wanted.api_groups));
    let resources = resources_cover(items(&owner.resources), items(&wanted.resources));
    let urls = items(&wanted.non_resource_urls).iter().all(|url| {
        items(&owner.non_resource_urls)
            .iter()
            .any(|o| o == url || (o.ends_with('*') && url.starts_with(o.trim_end_matches('*'))))
    });
    let owner_names = items(&owner.resource_names);
    let names = owner_names.is_empty()
        || (!items(&wanted.resource_names).is_empty()
            && has_all(owner_names, items(&wanted.resource_names)));
    verbs && groups && resources && names && urls
}

/// The parts of `wanted` that no rule of `owner` covers (empty when `owner` covers them all).
pub(crate) fn uncovered(owner: &[PolicyRule], wanted: &[PolicyRule]) -> Vec<PolicyRule> {
    wanted
        .iter()
        .flat_map(breakdown)
        .filter(|atom| !owner.iter().any(|o| rule_covers(o, atom)))
        .collect()
}

/// Rules on one group and resource (and at most one name) merged into one rule with all their
/// verbs, as kube's `CompactRules`.
fn compact(rules: Vec<PolicyRule>) -> Vec<PolicyRule> {
    let mut out = Vec::new();
    let mut simple: BTreeMap<(String, String, Option<String>), PolicyRule> = BTreeMap::new();
    for rule in rules {
        let is_simple = items(&rule.resource_names).len() <= 1
            && items(&rule.non_resource_urls).is_empty()
            && items(&rule.api_groups).len() == 1
            && items(&rule.resources).len() == 1;
        if !is_simple {
            out.push(rule);
            continue;
        }
        let key = (
            items(&rule.api_groups)[0].clone(),
            items(&rule.resources)[0].clone(),
            items(&rule.resource_names).first().cloned(),
        );
        match simple.get_mut(&key) {
            Some(existing) => existing.verbs.extend(rule.verbs),
            None => {
                simple.insert(key, rule);
            }
        }
    }
    out.extend(simple.into_values());
    out
}

/// Go's `%q` of a string slice: `["a" "b"]`.
pub(crate) fn quoted(list: &[String]) -> String {
    let parts: Vec<String> = list.iter().map(|s| format!("{s:?}")).collect();
    format!("[{}]", parts.join(" "))
}

/// A rule as kube's `CompactString` prints it: `{APIGroups:[""], Resources:["pods"],
/// Verbs:["get"]}`.
pub(crate) fn compact_string(rule: &PolicyRule) -> String {
    let mut parts = Vec::new();
    for (label, list) in [
        ("APIGroups", items(&rule.api_groups)),
        ("Resources", items(&rule.resources)),
        ("NonResourceURLs", items(&rule.non_resource_urls)),
        ("ResourceNames", items(&rule.resource_names)),
        ("Verbs", &rule.verbs[..]),
    ] {
        if !list.is_empty() {
            parts.push(format!("{label}:{}", quoted(list)));
        }
    }
    format!("{{{}}}", parts.join(", "))
}

/// The missing rules of an escalation error: compacted, printed, sorted and deduplicated.
pub(crate) fn describe_missing(missing: Vec<PolicyRule>) -> Vec<String> {
    let set: BTreeSet<String> = compact(missing).iter().map(compact_string).collect();
    set.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(groups: &[&str], resources: &[&str], verbs: &[&str]) -> PolicyRule {
        let v = |l: &[&str]| Some(l.iter().map(|s| s.to_string()).collect());
        PolicyRule {
            api_groups: v(groups),
            resources: v(resources),
            verbs: verbs.iter().map(|s| s.to_string()).collect(),
            ..PolicyRule::default()
        }
    }

    #[test]
    fn held_rules_cover_subresources_by_star_and_names_by_none() {
        let owner = [rule(&[""], &["*/status", "pods"], &["get", "list"])];
        assert!(uncovered(&owner, &[rule(&[""], &["pods", "pods/status"], &["get"])]).is_empty());
        let missing = uncovered(
            &owner,
            &[rule(&["", "apps"], &["pods"], &["get", "delete"])],
        );
        assert_eq!(
            describe_missing(missing),
            [
                r#"{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}"#,
                r#"{APIGroups:["apps"], Resources:["pods"], Verbs:["get" "delete"]}"#,
            ]
        );
    }
}
