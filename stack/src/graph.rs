//! A stack's resources as a dependency graph: checked as a whole (duplicate
//! IDs, unknown dependencies, cycles), with the implicit edges users expect
//! (a Namespace before what lives in it, a CRD before its custom resources).
//! [`crate::walk`] walks it with bounded concurrency.

use crate::manifest::{Loaded, ManifestError};
use crate::state::State;
use crate::wait::WaitSpec;
use krt_guest::model::Resource;
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};

/// Resources in dependency order with their edges.
#[derive(Debug, Clone)]
pub struct Stack {
    /// The resources, in input order.
    pub resources: Vec<Resource>,
    /// `deps[i]`: indices of the resources `i` depends on (explicit and implicit).
    pub deps: Vec<Vec<usize>>,
    /// Indices in an order where every resource comes after its dependencies;
    /// ties keep the input order.
    pub order: Vec<usize>,
}

/// Problems with a stack as a whole; every one is listed.
#[derive(Debug, thiserror::Error)]
#[error("{}", problems.join("\n"))]
pub struct StackError {
    /// One line per problem.
    pub problems: Vec<String>,
}

impl Stack {
    /// Builds and checks the graph of the input: every ID unique, every
    /// `dependsOn` naming a resource of the input, valid wait settings
    /// ([`WaitSpec`]), no cycle.
    ///
    /// # Errors
    /// [`StackError`] listing each duplicate (with both origins), each unknown
    /// dependency, each bad wait setting and each cycle (as `a -> b -> a`).
    pub fn new(input: Vec<Loaded>) -> Result<Stack, StackError> {
        let mut problems = Vec::new();
        let mut seen: HashMap<&str, &str> = HashMap::new();
        for l in &input {
            if let Some(first) = seen.insert(&l.resource.id, &l.origin) {
                problems.push(format!(
                    "{}: duplicate resource ID {} (first defined at {first})",
                    l.origin, l.resource.id
                ));
            }
        }
        let index = id_index(input.iter().map(|l| &l.resource));
        for l in &input {
            if let Err(problem) = WaitSpec::of(&l.resource) {
                problems.push(format!("{}: {}: {problem}", l.origin, l.resource.id));
            }
            for dep in &l.resource.depends_on {
                if !index.contains_key(dep.as_str()) {
                    problems.push(format!(
                        "{}: {} depends on {dep}, which is not in the input",
                        l.origin, l.resource.id
                    ));
                }
            }
        }
        if !problems.is_empty() {
            return Err(StackError { problems });
        }
        let resources: Vec<Resource> = input.into_iter().map(|l| l.resource).collect();
        let deps = edges(&resources);
        let order = topological(&deps).map_err(|cycles| StackError {
            problems: cycles
                .into_iter()
                .map(|c| {
                    let names: Vec<&str> = c.iter().map(|&i| resources[i].id.as_str()).collect();
                    format!("dependency cycle: {} -> {}", names.join(" -> "), names[0])
                })
                .collect(),
        })?;
        Ok(Stack {
            resources,
            deps,
            order,
        })
    }

    /// The graph of recorded resources (a state): dependencies on IDs that are
    /// not among them are dropped, and a cycle (which a checked input never
    /// has) falls back to the recorded order.
    pub fn recorded(resources: Vec<Resource>) -> Stack {
        let deps = edges(&resources);
        let order = topological(&deps).unwrap_or_else(|_| (0..resources.len()).collect());
        Stack {
            resources,
            deps,
            order,
        }
    }

    /// `dependents[i]`: indices of the resources that depend on `i`.
    pub fn dependents(&self) -> Vec<Vec<usize>> {
        let mut out = vec![Vec::new(); self.deps.len()];
        for (i, deps) in self.deps.iter().enumerate() {
            for &d in deps {
                out[d].push(i);
            }
        }
        out
    }
}

/// Each resource a command works on, with its recorded version if any.
pub type Targets = Vec<(Resource, Option<Resource>)>;

/// The resources a command works on: those of `input` (in dependency order,
/// each with its recorded version, if any), or without input every resource
/// recorded in `state`.
pub fn targets(input: Option<&Stack>, state: &State) -> Targets {
    match input {
        None => state
            .resources
            .iter()
            .map(|r| (r.clone(), Some(r.clone())))
            .collect(),
        Some(stack) => stack
            .order
            .iter()
            .map(|&i| {
                let r = stack.resources[i].clone();
                let recorded = state.get(&r.id).cloned();
                (r, recorded)
            })
            .collect(),
    }
}

/// Loads every input path and checks them as one stack.
///
/// # Errors
/// Every problem of every file and of the stack as a whole, one per line.
pub fn load(paths: &[impl AsRef<std::path::Path>]) -> Result<Stack, StackError> {
    let mut loaded = Vec::new();
    let mut problems = Vec::new();
    for path in paths {
        match crate::manifest::load(path.as_ref()) {
            Ok(mut l) => loaded.append(&mut l),
            Err(ManifestError { problems: mut p }) => problems.append(&mut p),
        }
    }
    if !problems.is_empty() {
        return Err(StackError { problems });
    }
    Stack::new(loaded)
}

fn id_index<'a>(resources: impl Iterator<Item = &'a Resource>) -> HashMap<&'a str, usize> {
    resources
        .enumerate()
        .map(|(i, r)| (r.id.as_str(), i))
        .collect()
}

/// A reference kube-apiserver's admission requires to resolve before it creates the object
/// that holds it, in the object's namespace: it refuses a Pod whose ServiceAccount is missing
/// (ServiceAccount admission) and a PodGroup whose Workload is missing (PodGroup admission),
/// both with 403 Forbidden.
struct Required {
    /// The referring kind: its API group and kind.
    from: (&'static str, &'static str),
    /// Where it names the required object (JSON pointers, the first present wins).
    names: &'static [&'static str],
    /// The required kind: its API group and kind.
    to: (&'static str, &'static str),
}

/// The references [`edges`] orders by.
const REQUIRED: [Required; 2] = [
    Required {
        from: ("", "Pod"),
        names: &["/spec/serviceAccountName", "/spec/serviceAccount"],
        to: ("", "ServiceAccount"),
    },
    Required {
        from: ("scheduling.k8s.io", "PodGroup"),
        names: &["/spec/podGroupTemplateRef/workload/workloadName"],
        to: ("scheduling.k8s.io", "Workload"),
    },
];

/// The API group and kind of `a`.
fn group_kind(a: &Value) -> Option<(&str, &str)> {
    let api_version = a["apiVersion"].as_str()?;
    let group = api_version.rsplit_once('/').map_or("", |(group, _)| group);
    Some((group, a["kind"].as_str()?))
}

/// Explicit `dependsOn` edges plus the implicit ones: a namespaced object
/// after its Namespace, a custom resource after its CRD, and an object after
/// what its admission requires to exist in its namespace ([`REQUIRED`]).
fn edges(resources: &[Resource]) -> Vec<Vec<usize>> {
    let index = id_index(resources.iter());
    let mut namespaces = HashMap::new();
    let mut crds = HashMap::new();
    let mut required = HashMap::new();
    for (i, r) in resources.iter().enumerate() {
        let a = &r.attributes;
        let meta = &a["metadata"];
        if let (Some(kind), Some(name)) = (group_kind(a), meta["name"].as_str())
            && REQUIRED.iter().any(|r| r.to == kind)
        {
            required.insert((kind, meta["namespace"].as_str(), name), i);
        }
        match (a["apiVersion"].as_str(), a["kind"].as_str()) {
            (Some("v1"), Some("Namespace")) => {
                if let Some(name) = a["metadata"]["name"].as_str() {
                    namespaces.insert(name.to_owned(), i);
                }
            }
            (Some(v), Some("CustomResourceDefinition"))
                if v.starts_with("apiextensions.k8s.io/") =>
            {
                let spec = &a["spec"];
                if let (Some(group), Some(kind)) =
                    (spec["group"].as_str(), spec["names"]["kind"].as_str())
                {
                    crds.insert((group.to_owned(), kind.to_owned()), i);
                }
            }
            _ => {}
        }
    }
    resources
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let a = &r.attributes;
            let mut deps: BTreeSet<usize> = r
                .depends_on
                .iter()
                .filter_map(|d| index.get(d.as_str()).copied())
                .collect();
            if let Some(&ns) = a["metadata"]["namespace"]
                .as_str()
                .and_then(|n| namespaces.get(n))
            {
                deps.insert(ns);
            }
            let group = a["apiVersion"]
                .as_str()
                .and_then(|v| v.split_once('/'))
                .map(|(g, _)| g.to_owned());
            if let (Some(group), Some(kind)) = (group, a["kind"].as_str())
                && let Some(&crd) = crds.get(&(group, kind.to_owned()))
            {
                deps.insert(crd);
            }
            for r in REQUIRED.iter().filter(|r| group_kind(a) == Some(r.from)) {
                let name = r.names.iter().find_map(|p| a.pointer(p)?.as_str());
                let namespace = a["metadata"]["namespace"].as_str();
                if let Some(&needed) = name.and_then(|n| required.get(&(r.to, namespace, n))) {
                    deps.insert(needed);
                }
            }
            deps.remove(&i);
            deps.into_iter().collect()
        })
        .collect()
}

/// Kahn's algorithm, smallest index first; on failure, the cycles found.
fn topological(deps: &[Vec<usize>]) -> Result<Vec<usize>, Vec<Vec<usize>>> {
    let n = deps.len();
    let mut waiting: Vec<usize> = deps.iter().map(Vec::len).collect();
    let mut dependents = vec![Vec::new(); n];
    for (i, ds) in deps.iter().enumerate() {
        for &d in ds {
            dependents[d].push(i);
        }
    }
    let mut ready: BTreeSet<usize> = (0..n).filter(|&i| waiting[i] == 0).collect();
    let mut order = Vec::with_capacity(n);
    while let Some(i) = ready.pop_first() {
        order.push(i);
        for &j in &dependents[i] {
            waiting[j] -= 1;
            if waiting[j] == 0 {
                ready.insert(j);
            }
        }
    }
    if order.len() == n {
        return Ok(order);
    }
    Err(cycles(deps, &waiting))
}

/// The distinct cycles among the nodes Kahn's algorithm could not order.
fn cycles(deps: &[Vec<usize>], waiting: &[usize]) -> Vec<Vec<usize>> {
    // 0 = unvisited, 1 = on the current path, 2 = done.
    let mut color = vec![0u8; deps.len()];
    let mut found = Vec::new();
    fn visit(
        i: usize,
        deps: &[Vec<usize>],
        color: &mut [u8],
        path: &mut Vec<usize>,
        found: &mut Vec<Vec<usize>>,
    ) {
        color[i] = 1;
        path.push(i);
        for &d in &deps[i] {
            match color[d] {
                0 => visit(d, deps, color, path, found),
                1 => {
                    let start = path.iter().position(|&p| p == d).unwrap_or(0);
                    found.push(path[start..].to_vec());
                }
                _ => {}
            }
        }
        path.pop();
        color[i] = 2;
    }
    for i in (0..deps.len()).filter(|&i| waiting[i] > 0) {
        if color[i] == 0 {
            visit(i, deps, &mut color, &mut Vec::new(), &mut found);
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::parse;

    fn stack(text: &str) -> Result<Stack, StackError> {
        Stack::new(parse("s.yaml", text).unwrap())
    }

    fn ordered(s: &Stack) -> Vec<&str> {
        s.order
            .iter()
            .map(|&i| s.resources[i].id.as_str())
            .collect()
    }

    #[test]
    fn namespaces_and_crds_come_before_what_needs_them() {
        let s = stack(
            "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: app}\n---\n\
             apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: app}\n---\n\
             apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: widgets.example.com}\nspec: {group: example.com, names: {kind: Widget, plural: widgets}}\n---\n\
             apiVersion: v1\nkind: Namespace\nmetadata: {name: app}\n",
        )
        .unwrap();
        assert_eq!(
            ordered(&s),
            [
                "apiextensions.k8s.io/v1:CustomResourceDefinition:widgets.example.com",
                "v1:Namespace:app",
                "example.com/v1:Widget:app:w",
                "v1:ConfigMap:app:c",
            ]
        );
        assert_eq!(s.deps[0], [2, 3]);
    }

    #[test]
    fn what_admission_requires_comes_first_in_its_namespace() {
        let s = stack(
            "apiVersion: scheduling.k8s.io/v1alpha2\nkind: PodGroup\nmetadata: {name: g, namespace: a}\n\
             spec: {podGroupTemplateRef: {workload: {workloadName: w, podGroupTemplateName: t}}}\n---\n\
             apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: a}\nspec: {serviceAccountName: robot}\n---\n\
             apiVersion: v1\nkind: Pod\nmetadata: {name: elsewhere, namespace: b}\nspec: {serviceAccountName: robot}\n---\n\
             apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: robot, namespace: a}\n---\n\
             apiVersion: scheduling.k8s.io/v1alpha2\nkind: Workload\nmetadata: {name: w, namespace: a}\n",
        )
        .unwrap();
        assert_eq!(s.deps[0], [4], "the PodGroup after its Workload");
        assert_eq!(s.deps[1], [3], "the Pod after its ServiceAccount");
        assert!(
            s.deps[2].is_empty(),
            "another namespace's ServiceAccount is not the Pod's"
        );
        assert_eq!(
            ordered(&s),
            [
                "v1:Pod:b:elsewhere",
                "v1:ServiceAccount:a:robot",
                "v1:Pod:a:p",
                "scheduling.k8s.io/v1alpha2:Workload:a:w",
                "scheduling.k8s.io/v1alpha2:PodGroup:a:g",
            ]
        );
    }

    #[test]
    fn reports_duplicates_unknown_dependencies_and_cycles() {
        let dup = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n";
        let err = stack(&format!("{dup}---\n{dup}")).unwrap_err().to_string();
        assert_eq!(
            err,
            "s.yaml: document 2: duplicate resource ID v1:ConfigMap:a (first defined at s.yaml: document 1)"
        );
        let err = stack("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, annotations: {krt.dev/depends-on: 'v1:Secret:nope'}}\n")
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "s.yaml: document 1: v1:ConfigMap:a depends on v1:Secret:nope, which is not in the input"
        );
        let cm = |n: &str, d: &str| {
            format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {n}, annotations: {{krt.dev/depends-on: 'v1:ConfigMap:{d}'}}}}\n---\n"
            )
        };
        let text = format!("{}{}{}", cm("a", "b"), cm("b", "c"), cm("c", "a"));
        let err = stack(&text).unwrap_err().to_string();
        assert_eq!(
            err,
            "dependency cycle: v1:ConfigMap:a -> v1:ConfigMap:b -> v1:ConfigMap:c -> v1:ConfigMap:a"
        );
    }

    #[test]
    fn bad_wait_settings_are_refused_naming_the_resource() {
        let err = stack(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, annotations: {krt.dev/wait: sometimes}}\n---\n\
             apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b, annotations: {krt.dev/timeout: soon}}\n---\n\
             apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, annotations: {krt.dev/wait: none, krt.dev/timeout: 10s}}\n",
        )
        .unwrap_err();
        assert_eq!(err.problems.len(), 2, "{err}");
        assert_eq!(
            err.problems[0],
            "s.yaml: document 1: v1:ConfigMap:a: krt.dev/wait must be none, exists or healthy, not 'sometimes'"
        );
        assert!(
            err.problems[1].starts_with(
                "s.yaml: document 2: v1:ConfigMap:b: krt.dev/timeout must be a duration"
            ),
            "{err}"
        );
    }

    #[test]
    fn recorded_state_ignores_missing_dependencies() {
        let text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, annotations: {krt.dev/depends-on: 'v1:Secret:gone'}}\n";
        let resources = parse("s.yaml", text)
            .unwrap()
            .into_iter()
            .map(|l| l.resource)
            .collect();
        let s = Stack::recorded(resources);
        assert_eq!(s.order, [0]);
        assert!(s.deps[0].is_empty());
    }
}
