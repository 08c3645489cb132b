//! Workload controllers: Deployment → ReplicaSet → Pods, StatefulSet, DaemonSet (one node), Job,
//! and the Pod lifecycle. Each pass moves every object one step.
//!
//! Failures on request, by annotation `sim.krt.dev/fail` on the object (or on the Pod template,
//! which Pods inherit):
//! - `crash-loop`: Pods run but never get Ready (`CrashLoopBackOff`);
//! - `image-pull`: Pods stay Pending with `ErrImagePull`;
//! - `progress-deadline` (Deployment): `Progressing=False`, reason `ProgressDeadlineExceeded`;
//! - `job` (Job or its Pods): Pods fail and the Job gets `Failed=True`, reason `BackoffLimitExceeded`.
//!
//! A finalizer the simulator does not know never clears, which simulates a stuck deletion.

use std::hash::{DefaultHasher, Hash, Hasher};

use serde_json::{Value, json};

use crate::events::{self, Type};
use crate::node;
use crate::store::{Key, State};
use crate::{defaults, meta};

/// The objects of `group`/`resource` that are not terminating and pass `keep`, copied so the
/// pass can write while it goes through them.
pub(super) fn objects(
    state: &State,
    group: &str,
    resource: &str,
    keep: impl Fn(&Value) -> bool,
) -> Vec<(Key, Value)> {
    state
        .list(group, resource, None)
        .into_iter()
        .filter(|(_, o)| o["metadata"]["deletionTimestamp"].is_null() && keep(o))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// Writes `object` at `key` only when it differs from what is stored.
pub fn save(state: &mut State, key: &Key, object: Value) {
    if state.get(key) != Some(&object) {
        state.put(key.clone(), object);
    }
}

/// The annotation with a Deployment's revision, on the Deployment and on each of its ReplicaSets.
const REVISION: &str = "deployment.kubernetes.io/revision";

fn set_status(state: &mut State, key: &Key, object: &Value, status: Value) {
    let mut next = object.clone();
    next["status"] = status;
    save(state, key, next);
}

fn owner_ref(owner: &Value) -> Value {
    json!({"apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"], "controller": true, "blockOwnerDeletion": true})
}

/// The objects of `group`/`resource` in `owner`'s namespace that name it among their owners, in
/// key order (found through the store's dependents index).
fn owned_by<'a>(
    state: &'a State,
    resource: &str,
    group: &str,
    owner: &Value,
) -> Vec<(Key, &'a Value)> {
    let ns = owner["metadata"]["namespace"].as_str().unwrap_or_default();
    let uid = owner["metadata"]["uid"].as_str().unwrap_or_default();
    state
        .dependents(uid)
        .into_iter()
        .filter(|k| k.group == group && k.resource == resource && k.namespace == ns)
        .filter_map(|k| state.get(&k).map(|v| (k, v)))
        .collect()
}

/// A short stable hash of a pod template, like `pod-template-hash`.
fn template_hash(template: &Value) -> String {
    let mut h = DefaultHasher::new();
    template.to_string().hash(&mut h);
    let mut n = h.finish();
    (0..10)
        .map(|_| {
            let c = b"bcdfghjklmnpqrstvwxz2456789"[(n % 27) as usize];
            n /= 27;
            c as char
        })
        .collect()
}

fn new_object(api_version: &str, kind: &str, namespace: &str, name: &str, owner: &Value) -> Value {
    json!({"apiVersion": api_version, "kind": kind, "metadata": {"name": name, "namespace": namespace,
        "uid": meta::uid(), "creationTimestamp": meta::now(), "generation": 1,
        "ownerReferences": [owner_ref(owner)]}})
}

fn pod_from_template(
    template: &Value,
    namespace: &str,
    name: &str,
    owner: &Value,
    extra_labels: &Value,
) -> Value {
    let mut pod = new_object("v1", "Pod", namespace, name, owner);
    let mut labels = template["metadata"]["labels"].clone();
    if let (Some(l), Some(extra)) = (labels.as_object_mut(), extra_labels.as_object()) {
        l.extend(extra.clone());
    }
    pod["metadata"]["labels"] = labels;
    if !template["metadata"]["annotations"].is_null() {
        pod["metadata"]["annotations"] = template["metadata"]["annotations"].clone();
    }
    pod["metadata"]
        .as_object_mut()
        .expect("object")
        .remove("generation");
    pod["spec"] = template["spec"].clone();
    defaults::pod_defaults(&mut pod);
    defaults::pod_admission(&mut pod);
    pod
}

fn replicas(object: &Value) -> usize {
    object["spec"]["replicas"]
        .as_u64()
        .map_or(1, |r| usize::try_from(r).unwrap_or(0))
}

fn is_ready(pod: &Value) -> bool {
    pod["status"]["conditions"].as_array().is_some_and(|c| {
        c.iter()
            .any(|c| c["type"] == "Ready" && c["status"] == "True")
    })
}

/// A Deployment's condition (`DeploymentCondition`: updated and transitioned now).
fn condition(kind: &str, status: bool, reason: &str, message: &str) -> Value {
    let now = meta::now();
    json!({"type": kind, "status": if status { "True" } else { "False" }, "reason": reason, "message": message,
        "lastTransitionTime": now, "lastUpdateTime": now})
}

/// A Job's condition, as the job controller's `newCondition` writes it (`JobCondition` has no
/// `lastUpdateTime`: probed and transitioned now).
fn job_condition(kind: &str, reason: &str, message: &str) -> Value {
    let now = meta::now();
    json!({"type": kind, "status": "True", "reason": reason, "message": message,
        "lastProbeTime": now, "lastTransitionTime": now})
}

/// Records the `SuccessfulCreate` or `SuccessfulDelete` Event of `owner`'s controller for its
/// Pod `pod`, in that controller's words.
fn report_pod(state: &mut State, owner: &Value, pod: &str, created: bool) {
    let name = owner["metadata"]["name"].as_str().unwrap_or_default();
    let (reporter, message) = match owner["kind"].as_str().unwrap_or_default() {
        "StatefulSet" => (
            events::STATEFULSET,
            format!(
                "{} Pod {pod} in StatefulSet {name} successful",
                if created { "create" } else { "delete" }
            ),
        ),
        kind => {
            let reporter = match kind {
                "DaemonSet" => events::DAEMONSET,
                "Job" => events::JOB,
                _ => events::REPLICASET,
            };
            let verb = if created { "Created" } else { "Deleted" };
            (reporter, format!("{verb} pod: {pod}"))
        }
    };
    let reason = if created {
        "SuccessfulCreate"
    } else {
        "SuccessfulDelete"
    };
    let regarding = events::reference(owner, None);
    events::record(state, reporter, &regarding, Type::Normal, reason, &message);
}

/// Keeps `count` Pods owned by `owner`, named by `name_of(index)`.
fn scale_pods(
    state: &mut State,
    owner: &Value,
    count: usize,
    extra_labels: &Value,
    name_of: impl Fn(usize) -> String,
    generated: bool,
) {
    let ns = owner["metadata"]["namespace"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let pods: Vec<Key> = owned_by(state, "pods", "", owner)
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    if pods.len() < count {
        let name = (0..)
            .map(&name_of)
            .find(|n| !pods.iter().any(|k| k.name == *n))
            .expect("a free name");
        let mut pod =
            pod_from_template(&owner["spec"]["template"], &ns, &name, owner, extra_labels);
        if generated {
            pod["metadata"]["generateName"] = json!(format!(
                "{}-",
                owner["metadata"]["name"].as_str().unwrap_or_default()
            ));
        }
        state.put(Key::of("", "pods", &ns, &name), pod);
        report_pod(state, owner, &name, true);
    } else if pods.len() > count
        && let Some(extra) = pods.last()
    {
        state.remove(extra);
        report_pod(state, owner, &extra.name, false);
    }
}

fn pod_counts(state: &State, owner: &Value) -> (usize, usize) {
    let pods = owned_by(state, "pods", "", owner);
    (pods.len(), pods.iter().filter(|(_, p)| is_ready(p)).count())
}

/// The resources the workload controllers read: a pass when none of them changed since the last
/// one would change nothing.
const READS: &[(&str, &str)] = &[
    ("apps", "deployments"),
    ("apps", "replicasets"),
    ("apps", "statefulsets"),
    ("apps", "daemonsets"),
    ("batch", "jobs"),
    ("", "pods"),
];

/// One pass over every workload kind (none when nothing they read changed since the last).
pub fn reconcile(state: &mut State) {
    if !state.changed_since_last_run("workloads", READS) {
        return;
    }
    for (k, d) in objects(state, "apps", "deployments", |_| true) {
        deployment(state, &k, &d);
    }
    for (k, rs) in objects(state, "apps", "replicasets", |_| true) {
        // A Deployment's ReplicaSet carries its template hash to the Pods; a ReplicaSet of its
        // own gives them its template's labels alone.
        let hash = match &rs["metadata"]["labels"]["pod-template-hash"] {
            Value::String(hash) => json!({"pod-template-hash": hash}),
            _ => json!({}),
        };
        let name = rs["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        scale_pods(
            state,
            &rs,
            replicas(&rs),
            &hash,
            |_| format!("{name}-{}", meta::name_suffix()),
            true,
        );
        let (count, ready) = pod_counts(state, &rs);
        let status = json!({"replicas": count, "fullyLabeledReplicas": count, "readyReplicas": ready,
            "availableReplicas": ready, "observedGeneration": rs["metadata"]["generation"]});
        set_status(state, &k, &rs, status);
    }
    for (k, sts) in objects(state, "apps", "statefulsets", |_| true) {
        let name = sts["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let revision = format!("{name}-{}", template_hash(&sts["spec"]["template"]));
        scale_pods(
            state,
            &sts,
            replicas(&sts),
            &json!({"controller-revision-hash": revision}),
            |i| format!("{name}-{i}"),
            false,
        );
        let (count, ready) = pod_counts(state, &sts);
        let status = json!({"replicas": count, "readyReplicas": ready, "currentReplicas": count,
            "updatedReplicas": count, "availableReplicas": ready, "currentRevision": revision,
            "updateRevision": revision, "collisionCount": 0, "observedGeneration": sts["metadata"]["generation"]});
        set_status(state, &k, &sts, status);
    }
    for (k, ds) in objects(state, "apps", "daemonsets", |_| true) {
        let name = ds["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        // One Pod on each node: the worker, when there is one.
        let nodes = usize::from(state.has_worker());
        scale_pods(
            state,
            &ds,
            nodes,
            &json!({}),
            |_| format!("{name}-{}", meta::name_suffix()),
            true,
        );
        let (count, ready) = pod_counts(state, &ds);
        let status = json!({"desiredNumberScheduled": nodes, "currentNumberScheduled": count, "updatedNumberScheduled": count,
            "numberReady": ready, "numberAvailable": ready, "numberMisscheduled": 0,
            "observedGeneration": ds["metadata"]["generation"]});
        set_status(state, &k, &ds, status);
    }
    for (k, job) in objects(state, "batch", "jobs", |_| true) {
        self::job(state, &k, &job);
    }
    // Only a Pod without a phase or still Pending has a next step.
    let unsettled =
        |p: &Value| matches!(p["status"]["phase"].as_str(), None | Some("" | "Pending"));
    for (k, pod) in objects(state, "", "pods", unsettled) {
        self::pod(state, &k, &pod);
    }
}

fn deployment(state: &mut State, k: &Key, d: &Value) {
    let ns = &k.namespace;
    let hash = template_hash(&d["spec"]["template"]);
    let rs_name = format!("{}-{hash}", k.name);
    let want = replicas(d);
    let owned: Vec<(Key, Value)> = owned_by(state, "replicasets", "apps", d)
        .into_iter()
        .map(|(k, v)| (k, v.clone()))
        .collect();
    let revision = owned
        .iter()
        .filter_map(|(_, rs)| {
            rs["metadata"]["annotations"][REVISION]
                .as_str()?
                .parse::<u64>()
                .ok()
        })
        .max()
        .unwrap_or(0);
    let current = owned
        .iter()
        .find(|(k, _)| k.name == rs_name)
        .map(|(_, rs)| rs.clone());
    let rs = current.unwrap_or_else(|| {
        let mut rs = new_object("apps/v1", "ReplicaSet", ns, &rs_name, d);
        rs["metadata"]["annotations"] = json!({REVISION: (revision + 1).to_string()});
        rs["metadata"]["labels"] = d["spec"]["template"]["metadata"]["labels"].clone();
        rs["metadata"]["labels"]["pod-template-hash"] = json!(hash);
        let mut template = d["spec"]["template"].clone();
        template["metadata"]["labels"]["pod-template-hash"] = json!(hash);
        let mut selector = d["spec"]["selector"].clone();
        selector["matchLabels"]["pod-template-hash"] = json!(hash);
        rs["spec"] = json!({"replicas": 0, "selector": selector, "template": template});
        rs
    });
    scale_replica_set(state, d, rs, want as u64);
    let mut old_remaining = 0;
    for (_, old) in owned.into_iter().filter(|(k, _)| k.name != rs_name) {
        old_remaining += old["status"]["replicas"].as_u64().unwrap_or(0);
        scale_replica_set(state, d, old, 0);
    }
    let rs = state
        .get(&Key::of("apps", "replicasets", ns, &rs_name))
        .cloned()
        .unwrap_or_default();
    let updated = rs["status"]["replicas"].as_u64().unwrap_or(0);
    let ready = rs["status"]["readyReplicas"].as_u64().unwrap_or(0);
    let total = updated + old_remaining;
    let want = want as u64;
    let available = ready >= want;
    let complete = available && updated == want && old_remaining == 0;
    let progressing = match node::fail_mode(d) {
        Some("progress-deadline") if !complete => condition(
            "Progressing",
            false,
            "ProgressDeadlineExceeded",
            &format!("ReplicaSet \"{rs_name}\" has timed out progressing."),
        ),
        _ if complete => condition(
            "Progressing",
            true,
            "NewReplicaSetAvailable",
            &format!("ReplicaSet \"{rs_name}\" has successfully progressed."),
        ),
        _ => condition(
            "Progressing",
            true,
            "ReplicaSetUpdated",
            &format!("ReplicaSet \"{rs_name}\" is progressing."),
        ),
    };
    let available_condition = if available {
        condition(
            "Available",
            true,
            "MinimumReplicasAvailable",
            "Deployment has minimum availability.",
        )
    } else {
        condition(
            "Available",
            false,
            "MinimumReplicasUnavailable",
            "Deployment does not have minimum availability.",
        )
    };
    // The Deployment carries the revision of its current ReplicaSet, as the Deployment
    // controller writes it (`SetDeploymentRevision`, through the status subresource: no new
    // generation).
    let mut d = d.clone();
    let revision = &rs["metadata"]["annotations"][REVISION];
    if d["metadata"]["annotations"][REVISION] != *revision && revision.is_string() {
        if !d["metadata"]["annotations"].is_object() {
            d["metadata"]["annotations"] = json!({});
        }
        d["metadata"]["annotations"][REVISION] = revision.clone();
    }
    let mut status = json!({"observedGeneration": d["metadata"]["generation"], "replicas": total,
        "updatedReplicas": updated, "readyReplicas": ready, "availableReplicas": ready,
        "conditions": [keep_times(&d, available_condition), keep_times(&d, progressing)]});
    if total > ready {
        status["unavailableReplicas"] = json!(total - ready);
    }
    set_status(state, k, &d, status);
}

/// Sets the ReplicaSet `rs` of Deployment `d` to `to` replicas, recording the Deployment
/// controller's `ScalingReplicaSet` Event when that changes its scale (a new ReplicaSet scales
/// from 0).
fn scale_replica_set(state: &mut State, d: &Value, mut rs: Value, to: u64) {
    let name = rs["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let namespace = rs["metadata"]["namespace"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let rs_key = Key::of("apps", "replicasets", &namespace, &name);
    let from = state
        .get(&rs_key)
        .and_then(|stored| stored["spec"]["replicas"].as_u64())
        .unwrap_or(0);
    rs["spec"]["replicas"] = json!(to);
    save(state, &rs_key, rs);
    if from != to {
        let direction = if to > from { "up" } else { "down" };
        let message = format!("Scaled {direction} replica set {name} from {from} to {to}");
        let regarding = events::reference(d, None);
        let deployment = events::DEPLOYMENT;
        events::record(
            state,
            deployment,
            &regarding,
            Type::Normal,
            "ScalingReplicaSet",
            &message,
        );
    }
}

/// Keeps a condition's timestamps when its status and reason did not change (no churn).
fn keep_times(object: &Value, mut next: Value) -> Value {
    let previous = object["status"]["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == next["type"]));
    if let Some(p) = previous
        && p["status"] == next["status"]
        && p["reason"] == next["reason"]
    {
        next["lastTransitionTime"] = p["lastTransitionTime"].clone();
        next["lastUpdateTime"] = p["lastUpdateTime"].clone();
    }
    next
}

fn job(state: &mut State, k: &Key, job: &Value) {
    let name = k.name.clone();
    let completions = job["spec"]["completions"].as_u64().unwrap_or(1) as usize;
    let pods: Vec<Value> = owned_by(state, "pods", "", job)
        .into_iter()
        .map(|(_, p)| p.clone())
        .collect();
    let finished = job["status"]["conditions"].as_array().is_some_and(|c| {
        c.iter()
            .any(|c| (c["type"] == "Complete" || c["type"] == "Failed") && c["status"] == "True")
    });
    if finished {
        return;
    }
    let phase = |p: &&Value| {
        p["status"]["phase"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    let succeeded = pods.iter().filter(|p| phase(p) == "Succeeded").count();
    let failed = pods.iter().filter(|p| phase(p) == "Failed").count();
    let active = pods.len() - succeeded - failed;
    if pods.is_empty() {
        let labels = json!({"batch.kubernetes.io/job-name": name, "job-name": name});
        let pod_name = format!("{name}-{}", meta::name_suffix());
        let mut pod = pod_from_template(
            &job["spec"]["template"],
            &k.namespace,
            &pod_name,
            job,
            &labels,
        );
        pod["metadata"]["generateName"] = json!(format!("{name}-"));
        state.put(Key::of("", "pods", &k.namespace, &pod_name), pod);
        report_pod(state, job, &pod_name, true);
    }
    let start = job["status"]["startTime"]
        .as_str()
        .map_or_else(meta::now, str::to_string);
    let mut status = json!({"startTime": start, "active": active, "succeeded": succeeded, "failed": failed,
        "ready": 0, "terminating": 0, "uncountedTerminatedPods": {}});
    let regarding = events::reference(job, None);
    if failed > 0 {
        let message = "Job has reached the specified backoff limit";
        events::record(
            state,
            events::JOB,
            &regarding,
            Type::Warning,
            "BackoffLimitExceeded",
            message,
        );
        status["conditions"] = json!([
            job_condition(
                "FailureTarget",
                "BackoffLimitExceeded",
                "Job has reached the specified backoff limit"
            ),
            job_condition(
                "Failed",
                "BackoffLimitExceeded",
                "Job has reached the specified backoff limit"
            ),
        ]);
    } else if succeeded >= completions.max(1) {
        status["completionTime"] = json!(meta::now());
        events::record(
            state,
            events::JOB,
            &regarding,
            Type::Normal,
            "Completed",
            "Job completed",
        );
        status["conditions"] = json!([
            job_condition(
                "SuccessCriteriaMet",
                "CompletionsReached",
                "Reached expected number of succeeded pods"
            ),
            job_condition(
                "Complete",
                "CompletionsReached",
                "Reached expected number of succeeded pods"
            ),
        ]);
    }
    set_status(state, k, job, status);
}

fn pod(state: &mut State, k: &Key, pod: &Value) {
    // Without a worker no scheduler binds the Pod and no kubelet runs it.
    if !state.has_worker() {
        return;
    }
    let phase = pod["status"]["phase"].as_str().unwrap_or_default();
    let unscheduled = pod["spec"]["nodeName"].is_null();
    let status = if unscheduled {
        if !matches!(phase, "" | "Pending") {
            return;
        }
        let mut status = json!({"phase": "Pending", "conditions": [node::pod_condition("PodScheduled", true, "")]});
        status["qosClass"] = match &pod["status"]["qosClass"] {
            Value::Null => json!("BestEffort"),
            class => class.clone(),
        };
        status
    } else {
        match node::pod_status(pod) {
            Some(status) => status,
            None => return,
        }
    };
    let mut next = pod.clone();
    next["status"] = status;
    if unscheduled && next["spec"].is_object() {
        next["spec"]["nodeName"] = json!(node::NODE);
    }
    save(state, k, next);
    if unscheduled {
        events::record_scheduled(state, pod);
    } else {
        kubelet_events(state, pod, node::fail_mode(pod));
    }
}

/// The kubelet's Events for starting `pod`'s containers (the image is taken to be present, as
/// no image is pulled), or for the failure `fail` simulates.
fn kubelet_events(state: &mut State, pod: &Value, fail: Option<&str>) {
    let containers = pod["spec"]["containers"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let pod_name = pod["metadata"]["name"].as_str().unwrap_or_default();
    for c in &containers {
        let name = c["name"].as_str().unwrap_or_default();
        let image = c["image"].as_str().unwrap_or_default();
        let regarding = events::reference(pod, Some(&format!("spec.containers{{{name}}}")));
        let mut report = |event_type: Type, reason: &str, message: String| {
            events::record(
                state,
                events::KUBELET,
                &regarding,
                event_type,
                reason,
                &message,
            );
        };
        if fail == Some("image-pull") {
            report(
                Type::Warning,
                "Failed",
                format!("Failed to pull image \"{image}\": simulated image pull failure"),
            );
            report(Type::Warning, "Failed", "Error: ErrImagePull".into());
            continue;
        }
        report(
            Type::Normal,
            "Pulled",
            format!("Container image \"{image}\" already present on machine"),
        );
        report(
            Type::Normal,
            "Created",
            format!("Created container: {name}"),
        );
        report(Type::Normal, "Started", format!("Started container {name}"));
        if fail == Some("crash-loop") {
            let (ns, uid) = (
                pod["metadata"]["namespace"].as_str().unwrap_or_default(),
                pod["metadata"]["uid"].as_str().unwrap_or_default(),
            );
            report(
                Type::Warning,
                "BackOff",
                format!(
                    "Back-off restarting failed container {name} in pod {pod_name}_{ns}({uid})"
                ),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::node::FAIL_ANNOTATION;
    use crate::store::Store;

    fn deployment(fail: Option<&str>) -> Value {
        let mut d = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "d", "uid": "u1", "generation": 1},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "a", "image": "x"}]}}}});
        if let Some(mode) = fail {
            d["metadata"]["annotations"] = json!({FAIL_ANNOTATION: mode});
        }
        d
    }

    fn settle(state: &mut State) {
        for _ in 0..20 {
            reconcile(state);
        }
    }

    /// The (component, type, reason, message) of every Event in namespace `d`, sorted.
    fn recorded(state: &State) -> Vec<(String, String, String, String)> {
        let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
        let mut events: Vec<_> = state
            .list("", "events", Some("d"))
            .into_iter()
            .map(|(_, e)| {
                (
                    text(&e["reportingComponent"]),
                    text(&e["type"]),
                    text(&e["reason"]),
                    text(&e["message"]),
                )
            })
            .collect();
        events.sort();
        events
    }

    fn event(
        component: &str,
        kind: &str,
        reason: &str,
        message: &str,
    ) -> (String, String, String, String) {
        (component.into(), kind.into(), reason.into(), message.into())
    }

    #[test]
    fn deployments_roll_out_to_available() {
        let store = Store::new(1000);
        let mut s = store.lock();
        let k = Key::of("apps", "deployments", "d", "web");
        s.put(k.clone(), deployment(None));
        settle(&mut s);
        let d = s.get(&k).unwrap();
        assert_eq!(d["status"]["observedGeneration"], 1);
        assert_eq!(d["status"]["availableReplicas"], 2);
        assert_eq!(
            d["status"]["conditions"][1]["reason"],
            "NewReplicaSetAvailable"
        );
        assert_eq!(s.list("", "pods", Some("d")).len(), 2);
    }

    #[test]
    fn failure_annotations_stall_rollouts_and_crash_pods() {
        let store = Store::new(1000);
        let mut s = store.lock();
        let k = Key::of("apps", "deployments", "d", "web");
        s.put(k.clone(), deployment(Some("progress-deadline")));
        let mut crash = deployment(None);
        crash["metadata"]["name"] = json!("crash");
        crash["metadata"]["uid"] = json!("u2");
        crash["spec"]["template"]["metadata"]["annotations"] =
            json!({FAIL_ANNOTATION: "crash-loop"});
        s.put(Key::of("apps", "deployments", "d", "crash"), crash);
        settle(&mut s);
        // The progress-deadline Deployment still completes: the failure shows only while incomplete.
        let crash = s
            .get(&Key::of("apps", "deployments", "d", "crash"))
            .unwrap();
        assert_eq!(crash["status"]["readyReplicas"], 0);
        let pods = s.list("", "pods", Some("d"));
        assert!(pods.iter().any(
            |(_, p)| p["status"]["containerStatuses"][0]["state"]["waiting"]["reason"]
                == "CrashLoopBackOff"
        ));
    }

    #[test]
    fn statefulsets_get_ordinal_pods_and_a_settled_revision() {
        let store = Store::new(1000);
        let mut s = store.lock();
        let k = Key::of("apps", "statefulsets", "d", "db");
        s.put(
            k.clone(),
            json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
                "metadata": {"name": "db", "namespace": "d", "uid": "s1", "generation": 1},
                "spec": {"replicas": 3, "serviceName": "db", "selector": {"matchLabels": {"app": "db"}},
                    "template": {"metadata": {"labels": {"app": "db"}}, "spec": {"containers": [{"name": "db", "image": "x"}]}}}}),
        );
        settle(&mut s);
        let sts = s.get(&k).unwrap();
        assert_eq!(sts["status"]["observedGeneration"], 1);
        assert_eq!(sts["status"]["readyReplicas"], 3);
        assert_eq!(sts["status"]["currentReplicas"], 3);
        assert_eq!(
            sts["status"]["currentRevision"],
            sts["status"]["updateRevision"]
        );
        let mut pods: Vec<String> = s
            .list("", "pods", Some("d"))
            .into_iter()
            .map(|(key, _)| key.name.clone())
            .collect();
        pods.sort();
        assert_eq!(pods, ["db-0", "db-1", "db-2"]);
        let events = recorded(&s);
        for i in 0..3 {
            let message = format!("create Pod db-{i} in StatefulSet db successful");
            let created = event(
                "statefulset-controller",
                "Normal",
                "SuccessfulCreate",
                &message,
            );
            assert!(events.contains(&created), "{events:?}");
        }
        let mut scaled = s.get(&k).unwrap().clone();
        scaled["spec"]["replicas"] = json!(2);
        s.put(k.clone(), scaled);
        settle(&mut s);
        let deleted = event(
            "statefulset-controller",
            "Normal",
            "SuccessfulDelete",
            "delete Pod db-2 in StatefulSet db successful",
        );
        assert!(recorded(&s).contains(&deleted));
    }

    #[test]
    fn daemonsets_schedule_one_pod_on_the_single_node() {
        let store = Store::new(1000);
        let mut s = store.lock();
        let k = Key::of("apps", "daemonsets", "d", "agent");
        s.put(
            k.clone(),
            json!({"apiVersion": "apps/v1", "kind": "DaemonSet",
                "metadata": {"name": "agent", "namespace": "d", "uid": "ds1", "generation": 2},
                "spec": {"selector": {"matchLabels": {"app": "agent"}},
                    "template": {"metadata": {"labels": {"app": "agent"}}, "spec": {"containers": [{"name": "a", "image": "x"}]}}}}),
        );
        settle(&mut s);
        let ds = s.get(&k).unwrap();
        assert_eq!(ds["status"]["observedGeneration"], 2);
        assert_eq!(ds["status"]["desiredNumberScheduled"], 1);
        assert_eq!(ds["status"]["numberReady"], 1);
        assert_eq!(ds["status"]["updatedNumberScheduled"], 1);
        let pods = s.list("", "pods", Some("d"));
        assert_eq!(pods.len(), 1);
        let created = format!("Created pod: {}", pods[0].0.name);
        let expected = event(
            "daemonset-controller",
            "Normal",
            "SuccessfulCreate",
            &created,
        );
        assert!(recorded(&s).contains(&expected));
    }

    #[test]
    fn jobs_complete_or_fail_on_request() {
        let store = Store::new(1000);
        let mut s = store.lock();
        let job = |name: &str, uid: &str| {
            json!({"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": "d", "uid": uid},
            "spec": {"template": {"spec": {"containers": [{"name": "a", "image": "x"}]}}}})
        };
        s.put(Key::of("batch", "jobs", "d", "ok"), job("ok", "j1"));
        let mut bad = job("bad", "j2");
        bad["metadata"]["annotations"] = json!({FAIL_ANNOTATION: "job"});
        bad["spec"]["template"]["metadata"] = json!({"annotations": {FAIL_ANNOTATION: "job"}});
        s.put(Key::of("batch", "jobs", "d", "bad"), bad);
        settle(&mut s);
        assert_eq!(
            s.get(&Key::of("batch", "jobs", "d", "ok")).unwrap()["status"]["conditions"][1]["type"],
            "Complete"
        );
        assert_eq!(
            s.get(&Key::of("batch", "jobs", "d", "bad")).unwrap()["status"]["conditions"][1]["type"],
            "Failed"
        );
        let events = recorded(&s);
        let jobs: Vec<_> = events
            .iter()
            .filter(|e| e.0 == "job-controller")
            .map(|e| (e.1.as_str(), e.2.as_str()))
            .collect();
        assert_eq!(
            jobs,
            [
                ("Normal", "Completed"),
                ("Normal", "SuccessfulCreate"),
                ("Normal", "SuccessfulCreate"),
                ("Warning", "BackoffLimitExceeded"),
            ]
        );
        assert!(events.contains(&event(
            "job-controller",
            "Normal",
            "Completed",
            "Job completed"
        )));
    }
}
