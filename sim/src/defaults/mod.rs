//! Server-side defaulting: the fields kube-apiserver fills in (the `SetDefaults_*` functions of
//! `pkg/apis/*/v1/defaults.go`, the registries' `PrepareForCreate`, the defaulting admission
//! plugins), and the status a new object starts with (its Go type's zero value, as the API
//! server serializes it).

mod pod;
mod service;

use serde_json::{Map, Value, json};

use crate::lifecycle;
use crate::registry::ResourceType;
use crate::store::State;

pub use pod::{admit as pod_admission, pod as pod_defaults};

/// Sets `field` on `object` when it is absent (or null).
fn default(object: &mut Value, field: &str, value: Value) {
    if let Some(map) = object.as_object_mut() {
        let slot = map.entry(field).or_insert(Value::Null);
        if slot.is_null() {
            *slot = value;
        }
    }
}

fn each_mut<'a>(value: &'a mut Value, field: &str) -> impl Iterator<Item = &'a mut Value> {
    value
        .get_mut(field)
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
}

/// The PodSpec of a workload's `spec.template`.
fn template(spec: &mut Value) {
    if let Some(s) = spec.get_mut("template").and_then(|t| t.get_mut("spec")) {
        pod::spec(s);
    }
}

/// A Container item's defaults (`SetDefaults_LimitRangeItem`): the default limit is the
/// maximum, and the default request the default limit, else the minimum.
fn limit_range_container(item: &mut Value) {
    let fill = |item: &mut Value, into: &str, from: &str| {
        let source: Vec<(String, Value)> = item[from]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        for (name, value) in source {
            if !item[into].is_object() {
                item[into] = json!({});
            }
            default(&mut item[into], &name, value);
        }
    };
    fill(item, "default", "max");
    fill(item, "defaultRequest", "default");
    fill(item, "defaultRequest", "min");
}

/// `rollingUpdate` defaults of a Deployment's `strategy` or a DaemonSet's `updateStrategy`.
fn rolling_update(strategy: &mut Value, max_unavailable: Value, max_surge: Value) {
    default(strategy, "type", json!("RollingUpdate"));
    if strategy["type"] == "RollingUpdate" {
        default(strategy, "rollingUpdate", json!({}));
        let rolling = &mut strategy["rollingUpdate"];
        default(rolling, "maxUnavailable", max_unavailable);
        default(rolling, "maxSurge", max_surge);
    }
}

fn deployment(spec: &mut Value) {
    default(spec, "replicas", json!(1));
    default(spec, "strategy", json!({}));
    rolling_update(&mut spec["strategy"], json!("25%"), json!("25%"));
    default(spec, "revisionHistoryLimit", json!(10));
    default(spec, "progressDeadlineSeconds", json!(600));
    template(spec);
}

fn daemon_set(spec: &mut Value) {
    default(spec, "updateStrategy", json!({}));
    rolling_update(&mut spec["updateStrategy"], json!(1), json!(0));
    default(spec, "revisionHistoryLimit", json!(10));
    template(spec);
}

/// The annotation apps/v1 carries a DaemonSet's template generation in.
const TEMPLATE_GENERATION: &str = "deprecated.daemonset.template.generation";

/// A DaemonSet's template generation (its registry's `TemplateGeneration`, which the apps/v1
/// conversion writes as an annotation): 1 on create, one more each time the template changes.
fn template_generation(object: &mut Value, live: Option<&Value>) {
    let generation = match live {
        None => 1,
        Some(live) => {
            let kept = live["metadata"]["annotations"][TEMPLATE_GENERATION]
                .as_str()
                .and_then(|g| g.parse::<i64>().ok())
                .unwrap_or(0);
            kept + i64::from(live["spec"]["template"] != object["spec"]["template"])
        }
    };
    if !object["metadata"]["annotations"].is_object() {
        object["metadata"]["annotations"] = json!({});
    }
    object["metadata"]["annotations"][TEMPLATE_GENERATION] = json!(generation.to_string());
}

/// A ReplicationController's defaults (`SetDefaults_ReplicationController`): one replica, its
/// template's, and the template's labels as its selector and its own labels when those are
/// unset.
fn replication_controller(object: &mut Value) {
    let Some(spec) = object.get_mut("spec").filter(|s| s.is_object()) else {
        return;
    };
    default(spec, "replicas", json!(1));
    template(spec);
    let labels = spec["template"]["metadata"]["labels"].clone();
    if labels.as_object().is_none_or(Map::is_empty) {
        return;
    }
    if spec["selector"].as_object().is_none_or(Map::is_empty) {
        spec["selector"] = labels.clone();
    }
    if object["metadata"]["labels"]
        .as_object()
        .is_none_or(Map::is_empty)
    {
        object["metadata"]["labels"] = labels;
    }
}

/// A PersistentVolumeClaim's spec defaults (claims and claim templates).
fn claim_spec(spec: &mut Value) {
    if spec.is_object() {
        default(spec, "volumeMode", json!("Filesystem"));
    }
}

fn stateful_set(spec: &mut Value) {
    default(spec, "podManagementPolicy", json!("OrderedReady"));
    default(spec, "updateStrategy", json!({}));
    let strategy = &mut spec["updateStrategy"];
    if strategy["type"].is_null() {
        strategy["type"] = json!("RollingUpdate");
        default(strategy, "rollingUpdate", json!({}));
    }
    if strategy["type"] == "RollingUpdate" && strategy["rollingUpdate"].is_object() {
        default(&mut strategy["rollingUpdate"], "partition", json!(0));
    }
    default(spec, "persistentVolumeClaimRetentionPolicy", json!({}));
    let retention = &mut spec["persistentVolumeClaimRetentionPolicy"];
    default(retention, "whenDeleted", json!("Retain"));
    default(retention, "whenScaled", json!("Retain"));
    default(spec, "replicas", json!(1));
    default(spec, "revisionHistoryLimit", json!(10));
    for claim in each_mut(spec, "volumeClaimTemplates") {
        default(claim, "apiVersion", json!("v1"));
        default(claim, "kind", json!("PersistentVolumeClaim"));
        default(claim, "metadata", json!({}));
        claim_spec(&mut claim["spec"]);
        default(claim, "status", json!({}));
    }
    template(spec);
}

/// Job defaults (`SetDefaults_Job`): counts, policies, the template's, and the Job's own labels
/// from its template's. The selector and template labels the registry generates on create come
/// later, after the field manager ([`job_selector`]).
fn job(object: &mut Value) {
    let spec = &mut object["spec"];
    if spec["completions"].is_null() && spec["parallelism"].is_null() {
        spec["completions"] = json!(1);
    }
    default(spec, "parallelism", json!(1));
    let backoff = if spec["backoffLimitPerIndex"].is_null() {
        json!(6)
    } else {
        json!(i32::MAX)
    };
    default(spec, "backoffLimit", backoff);
    default(spec, "completionMode", json!("NonIndexed"));
    default(spec, "suspend", json!(false));
    default(spec, "manualSelector", json!(false));
    let replacement = if spec["podFailurePolicy"].is_null() {
        "TerminatingOrFailed"
    } else {
        "Failed"
    };
    default(spec, "podReplacementPolicy", json!(replacement));
    template(spec);
    job_labels(object);
}

/// A Job's labels default to its template's.
fn job_labels(object: &mut Value) {
    let template_labels = object["spec"]["template"]["metadata"]["labels"].clone();
    if template_labels.is_object()
        && object["metadata"]["labels"]
            .as_object()
            .is_none_or(|l| l.is_empty())
    {
        object["metadata"]["labels"] = template_labels;
    }
}

/// The selector and template labels the Job registry generates from a new Job's uid (unless
/// `manualSelector`), in `PrepareForCreate`: after the field manager, so nobody owns them.
/// kube-apiserver defaults the created object again as it reads it back from storage, so a Job
/// created without labels has the generated ones at once.
fn job_selector(object: &mut Value) {
    let uid = object["metadata"]["uid"].clone();
    let name = object["metadata"]["name"].clone();
    let spec = &mut object["spec"];
    if spec["manualSelector"] == true || !spec.is_object() {
        return;
    }
    spec["selector"] = json!({"matchLabels": {"batch.kubernetes.io/controller-uid": uid}});
    let labels = &mut spec["template"]["metadata"]["labels"];
    if !labels.is_object() {
        *labels = json!({});
    }
    for (key, value) in [
        ("batch.kubernetes.io/controller-uid", &uid),
        ("batch.kubernetes.io/job-name", &name),
        ("controller-uid", &uid),
        ("job-name", &name),
    ] {
        labels[key] = value.clone();
    }
    job_labels(object);
}

fn cron_job(spec: &mut Value) {
    default(spec, "concurrencyPolicy", json!("Allow"));
    default(spec, "suspend", json!(false));
    default(spec, "successfulJobsHistoryLimit", json!(3));
    default(spec, "failedJobsHistoryLimit", json!(1));
    default(spec, "jobTemplate", json!({}));
    default(&mut spec["jobTemplate"], "metadata", json!({}));
    if let Some(job) = spec.pointer_mut("/jobTemplate/spec") {
        template(job);
    }
}

fn network_policy(spec: &mut Value) {
    for rule in ["ingress", "egress"] {
        for r in each_mut(spec, rule) {
            for port in each_mut(r, "ports") {
                default(port, "protocol", json!("TCP"));
            }
        }
    }
    if spec["policyTypes"].as_array().is_none_or(Vec::is_empty) {
        let egress = spec["egress"].as_array().is_some_and(|e| !e.is_empty());
        spec["policyTypes"] = if egress {
            json!(["Ingress", "Egress"])
        } else {
            json!(["Ingress"])
        };
    }
}

/// `scaleUp`/`scaleDown` rules of an HPA's `behavior`: the given fields over the defaults.
fn scaling_rules(rules: &mut Value, defaults: Value) {
    let given = rules.take();
    *rules = defaults;
    for field in [
        "selectPolicy",
        "stabilizationWindowSeconds",
        "policies",
        "tolerance",
    ] {
        if !given[field].is_null() {
            rules[field] = given[field].clone();
        }
    }
}

fn horizontal_pod_autoscaler(spec: &mut Value) {
    default(spec, "minReplicas", json!(1));
    if spec["metrics"].as_array().is_none_or(Vec::is_empty) {
        spec["metrics"] = json!([{"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": 80}}}]);
    }
    if let Some(behavior) = spec.get_mut("behavior").filter(|b| b.is_object()) {
        scaling_rules(
            &mut behavior["scaleUp"],
            json!({"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [
                {"type": "Pods", "value": 4, "periodSeconds": 15},
                {"type": "Percent", "value": 100, "periodSeconds": 15}]}),
        );
        scaling_rules(
            &mut behavior["scaleDown"],
            json!({"selectPolicy": "Max", "policies": [
                {"type": "Percent", "value": 100, "periodSeconds": 15}]}),
        );
    }
}

/// A CRD's defaults: names, `conversion: {strategy: None}`, the webhook service port.
fn custom_resource_definition(spec: &mut Value) {
    let kind = spec["names"]["kind"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    if spec["names"].is_object() && !kind.is_empty() {
        let names = &mut spec["names"];
        default(names, "singular", json!(kind.to_lowercase()));
        default(names, "listKind", json!(format!("{kind}List")));
    }
    default(spec, "conversion", json!({"strategy": "None"}));
    if let Some(service) = spec.pointer_mut("/conversion/webhook/clientConfig/service") {
        default(service, "port", json!(443));
    }
}

/// The name of the StorageClass marked default, as the DefaultStorageClass admission plugin
/// finds it (the newest when several are).
fn default_storage_class(state: &State) -> Option<String> {
    state
        .list("storage.k8s.io", "storageclasses", None)
        .into_iter()
        .filter(|(_, sc)| {
            sc["metadata"]["annotations"]["storageclass.kubernetes.io/is-default-class"] == "true"
        })
        .max_by_key(|(_, sc)| {
            sc["metadata"]["creationTimestamp"]
                .as_str()
                .map(str::to_string)
        })
        .and_then(|(_, sc)| sc["metadata"]["name"].as_str().map(str::to_string))
}

/// The status a new object of `kind` starts with: its Go status type's zero value as it
/// serializes (fields without `omitempty` show as zeros).
fn initial_status(kind: &str) -> Option<Value> {
    Some(match kind {
        "Deployment" | "Job" | "CronJob" => json!({}),
        "StatefulSet" => json!({"replicas": 0, "availableReplicas": 0}),
        "ReplicaSet" => json!({"replicas": 0}),
        "DaemonSet" => json!({"currentNumberScheduled": 0, "numberMisscheduled": 0,
            "desiredNumberScheduled": 0, "numberReady": 0}),
        "Ingress" => json!({"loadBalancer": {}}),
        "PersistentVolumeClaim" | "PersistentVolume" => json!({"phase": "Pending"}),
        "Namespace" => json!({"phase": "Active"}),
        "PodDisruptionBudget" => json!({"disruptionsAllowed": 0, "currentHealthy": 0,
            "desiredHealthy": 0, "expectedPods": 0}),
        "HorizontalPodAutoscaler" => json!({"desiredReplicas": 0}),
        _ => return None,
    })
}

/// What the admission plugins and the kind's registry add after the defaults, once the field
/// manager has recorded who owns what (so nobody owns it, as with kube-apiserver): a new
/// Namespace's `kubernetes` finalizer, a new Node's not-ready taint, a new Pod's service account token, priority and
/// tolerations, a new claim's default StorageClass and the pv/pvc/vac/podgroup-protection
/// finalizers, a
/// Service's allocated cluster IP and node ports; and the zero values a core
/// Event's Go type serializes (its times as `null`, its reporting fields as `""`), which equal
/// the kind's zero value and so are nobody's either.
pub fn admit(rt: &ResourceType, object: &mut Value, live: Option<&Value>, state: &State) {
    match (rt.custom, rt.kind.as_str(), live) {
        (false, "Namespace", None) => object["spec"]["finalizers"] = json!(["kubernetes"]),
        (false, "PersistentVolume", None) => {
            lifecycle::add_finalizer(object, lifecycle::PV_PROTECTION);
        }
        // The TaintNodesByCondition plugin: a new Node is not ready until its kubelet says so.
        (false, "Node", None) => {
            let not_ready = json!({"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"});
            let taints = &mut object["spec"]["taints"];
            match taints.as_array_mut() {
                Some(list)
                    if list
                        .iter()
                        .any(|t| t["key"] == not_ready["key"] && t["effect"] == "NoSchedule") => {}
                Some(list) => list.push(not_ready),
                None => *taints = json!([not_ready]),
            }
        }
        (false, "VolumeAttributesClass", None) => {
            lifecycle::add_finalizer(object, lifecycle::VAC_PROTECTION);
        }
        (false, "PodGroup", None) => {
            lifecycle::add_finalizer(object, lifecycle::PODGROUP_PROTECTION);
        }
        (false, "PersistentVolumeClaim", None) => {
            lifecycle::add_finalizer(object, lifecycle::PVC_PROTECTION);
            let class = default_storage_class(state);
            if let Some(spec) = object.get_mut("spec").filter(|s| s.is_object())
                && let Some(class) = class
                && spec.get("storageClassName").is_none_or(Value::is_null)
            {
                spec["storageClassName"] = json!(class);
            }
        }
        (false, "Event", _) if rt.group.is_empty() => {
            for (field, zero) in [
                ("firstTimestamp", Value::Null),
                ("lastTimestamp", Value::Null),
                ("eventTime", Value::Null),
                ("reportingComponent", json!("")),
                ("reportingInstance", json!("")),
            ] {
                if let Some(m) = object.as_object_mut() {
                    m.entry(field).or_insert(zero);
                }
            }
        }
        (false, "Pod", None) => pod::admit(object),
        (false, "Job", None) if rt.group == "batch" => job_selector(object),
        (false, "Service", _) => service::allocate(object, live),
        _ => {}
    }
}

/// Fills server defaults into `object` of type `rt` (`live` is the current object for
/// updates): what the API server's decoding defaults, before its field manager runs
/// (admission's additions are [`admit`]'s).
pub fn apply(rt: &ResourceType, object: &mut Value, live: Option<&Value>) {
    if rt.custom {
        return;
    }
    let created = live.is_none();
    if created && let Some(status) = initial_status(&rt.kind) {
        object["status"] = status;
    }
    match rt.kind.as_str() {
        "Namespace" => {
            if let Some(name) = object["metadata"]["name"].as_str().map(str::to_string) {
                if !object["metadata"]["labels"].is_object() {
                    object["metadata"]["labels"] = json!({});
                }
                object["metadata"]["labels"]["kubernetes.io/metadata.name"] = json!(name);
            }
            default(object, "spec", json!({}));
        }
        "Secret" => default(object, "type", json!("Opaque")),
        "Pod" => pod::pod(object),
        "Service" => {
            service::service(object);
            if created {
                service::initial_status(object);
            }
        }
        "Job" if object["spec"].is_object() => job(object),
        "CustomResourceDefinition" if created => {
            if let Some(spec) = object.get_mut("spec").filter(|s| s.is_object()) {
                custom_resource_definition(spec);
            }
            let storage: Vec<Value> = object["spec"]["versions"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|v| v["storage"] == true)
                .map(|v| v["name"].clone())
                .collect();
            object["status"] = json!({"acceptedNames": {"kind": "", "plural": ""},
                "storedVersions": storage});
        }
        "CustomResourceDefinition" => {
            if let Some(spec) = object.get_mut("spec").filter(|s| s.is_object()) {
                custom_resource_definition(spec);
            }
        }
        "PersistentVolumeClaim" => {
            if let Some(spec) = object.get_mut("spec").filter(|s| s.is_object()) {
                claim_spec(spec);
            }
        }
        "PersistentVolume" => {
            if let Some(spec) = object.get_mut("spec").filter(|s| s.is_object()) {
                default(spec, "persistentVolumeReclaimPolicy", json!("Retain"));
                default(spec, "volumeMode", json!("Filesystem"));
                if let Some(host_path) = spec.get_mut("hostPath").filter(|h| h.is_object()) {
                    default(host_path, "type", json!(""));
                }
            }
        }
        "LimitRange" => {
            for item in object
                .pointer_mut("/spec/limits")
                .and_then(Value::as_array_mut)
                .into_iter()
                .flatten()
                .filter(|item| item["type"] == "Container")
            {
                limit_range_container(item);
            }
        }
        "ResourcePoolStatusRequest" => {
            if let Some(spec) = object.get_mut("spec").filter(|s| s.is_object()) {
                default(spec, "limit", json!(100));
            }
        }
        "PodGroup" => {
            if let Some(spec) = object.get_mut("spec").filter(|s| s.is_object()) {
                default(spec, "disruptionMode", json!("Pod"));
            }
        }
        // The registry stamps a taint's time when the rule is written without one.
        "DeviceTaintRule" => {
            let stored = live
                .and_then(|l| l.pointer("/spec/taint/timeAdded"))
                .cloned();
            if let Some(taint) = object.pointer_mut("/spec/taint").filter(|t| t.is_object()) {
                default(
                    taint,
                    "timeAdded",
                    stored.unwrap_or_else(|| json!(crate::meta::now())),
                );
            }
        }
        "ResourceClaim" if rt.group == "resource.k8s.io" => {
            if let Some(devices) = object.pointer_mut("/spec/devices") {
                device_requests(devices, &rt.version);
            }
        }
        "ResourceClaimTemplate" if rt.group == "resource.k8s.io" => {
            if let Some(devices) = object.pointer_mut("/spec/spec/devices") {
                device_requests(devices, &rt.version);
            }
        }
        "ValidatingAdmissionPolicy" | "MutatingAdmissionPolicy" => {
            if let Some(spec) = object.get_mut("spec").filter(|s| s.is_object()) {
                admission_policy(spec);
            }
        }
        "ValidatingAdmissionPolicyBinding" | "MutatingAdmissionPolicyBinding" => {
            if let Some(resources) = object
                .pointer_mut("/spec/matchResources")
                .filter(|m| m.is_object())
            {
                match_resources(resources);
            }
        }
        "StorageClass" => {
            default(object, "reclaimPolicy", json!("Delete"));
            default(object, "volumeBindingMode", json!("Immediate"));
        }
        "MutatingWebhookConfiguration" | "ValidatingWebhookConfiguration" => {
            let mutating = rt.kind == "MutatingWebhookConfiguration";
            for webhook in each_mut(object, "webhooks") {
                admission_webhook(webhook, mutating);
            }
        }
        "PriorityClass" => default(object, "preemptionPolicy", json!("PreemptLowerPriority")),
        "Endpoints" => {
            for subset in each_mut(object, "subsets") {
                for port in each_mut(subset, "ports") {
                    default(port, "protocol", json!("TCP"));
                }
            }
        }
        "EndpointSlice" => {
            for port in each_mut(object, "ports") {
                default(port, "protocol", json!("TCP"));
            }
        }
        "CSINode" => {
            // `TopologyKeys []string json:"topologyKeys"`: no omitempty, so Go writes a null.
            if let Some(spec) = object.get_mut("spec").filter(|s| s.is_object()) {
                for driver in each_mut(spec, "drivers") {
                    if let Some(d) = driver.as_object_mut() {
                        d.entry("topologyKeys").or_insert(Value::Null);
                    }
                }
            }
        }
        "CSIDriver" => {
            if let Some(spec) = object.get_mut("spec").filter(|s| s.is_object()) {
                csi_driver(spec);
            }
        }
        "PriorityLevelConfiguration" => {
            if let Some(limited) = object.pointer_mut("/spec/limited")
                && limited.is_object()
            {
                default(limited, "lendablePercent", json!(0));
            }
        }
        "PodTemplate" => template(object),
        "ReplicationController" => replication_controller(object),
        "IngressClass" => {
            if let Some(parameters) = object.pointer_mut("/spec/parameters")
                && parameters.is_object()
            {
                default(parameters, "scope", json!("Cluster"));
            }
        }
        kind => {
            let Some(spec) = object.get_mut("spec").filter(|s| s.is_object()) else {
                return;
            };
            match kind {
                "Deployment" => deployment(spec),
                "StatefulSet" => stateful_set(spec),
                "DaemonSet" => daemon_set(spec),
                "ReplicaSet" => {
                    default(spec, "replicas", json!(1));
                    template(spec);
                }
                "CronJob" => cron_job(spec),
                "NetworkPolicy" => network_policy(spec),
                "HorizontalPodAutoscaler" => horizontal_pod_autoscaler(spec),
                _ => {}
            }
        }
    }
    if rt.kind == "DaemonSet" && object["spec"].is_object() {
        template_generation(object, live);
    }
}

/// admissionregistration/v1's `SetDefaults_ValidatingWebhook` and `SetDefaults_MutatingWebhook`,
/// and `SetDefaults_Rule` for each rule.
fn admission_webhook(webhook: &mut Value, mutating: bool) {
    default(webhook, "failurePolicy", json!("Fail"));
    default(webhook, "matchPolicy", json!("Equivalent"));
    default(webhook, "namespaceSelector", json!({}));
    default(webhook, "objectSelector", json!({}));
    default(webhook, "timeoutSeconds", json!(10));
    if mutating {
        default(webhook, "reinvocationPolicy", json!("Never"));
    }
    for rule in each_mut(webhook, "rules") {
        default(rule, "scope", json!("*"));
    }
}

/// admissionregistration/v1's `SetDefaults_ValidatingAdmissionPolicySpec` and
/// `SetDefaults_MutatingAdmissionPolicySpec`, with their `MatchResources`.
fn admission_policy(spec: &mut Value) {
    default(spec, "failurePolicy", json!("Fail"));
    if let Some(constraints) = spec.get_mut("matchConstraints").filter(|m| m.is_object()) {
        match_resources(constraints);
    }
}

/// admissionregistration/v1's `SetDefaults_MatchResources`, and `SetDefaults_Rule` for each
/// rule.
fn match_resources(resources: &mut Value) {
    default(resources, "matchPolicy", json!("Equivalent"));
    default(resources, "namespaceSelector", json!({}));
    default(resources, "objectSelector", json!({}));
    for rule in each_mut(resources, "resourceRules") {
        default(rule, "scope", json!("*"));
    }
}

/// resource.k8s.io's `SetDefaults_ExactDeviceRequest` and `SetDefaults_DeviceSubRequest` (in
/// v1beta1, `SetDefaults_DeviceRequest` of a request naming a device class) for each request
/// of a claim's `devices`.
fn device_requests(devices: &mut Value, version: &str) {
    for request in each_mut(devices, "requests") {
        if version == "v1beta1" {
            if request["deviceClassName"]
                .as_str()
                .is_some_and(|c| !c.is_empty())
            {
                allocation_mode(request);
            }
        } else if let Some(exactly) = request.get_mut("exactly").filter(|e| e.is_object()) {
            allocation_mode(exactly);
        }
        for sub in each_mut(request, "firstAvailable") {
            allocation_mode(sub);
        }
    }
}

/// An `ExactCount` allocation of one device, unless the request says otherwise.
fn allocation_mode(request: &mut Value) {
    let mode = request["allocationMode"].as_str().unwrap_or_default();
    if mode.is_empty() {
        request["allocationMode"] = json!("ExactCount");
    }
    if request["allocationMode"] == "ExactCount" && request["count"].as_i64().unwrap_or(0) == 0 {
        request["count"] = json!(1);
    }
}

/// storage/v1's `SetDefaults_CSIDriver`.
fn csi_driver(spec: &mut Value) {
    default(spec, "attachRequired", json!(true));
    default(spec, "podInfoOnMount", json!(false));
    default(spec, "volumeLifecycleModes", json!(["Persistent"]));
    default(spec, "storageCapacity", json!(false));
    default(spec, "fsGroupPolicy", json!("ReadWriteOnceWithFSType"));
    default(spec, "requiresRepublish", json!(false));
    default(spec, "seLinuxMount", json!(false));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::builtins;
    use crate::store::Store;

    fn rt(kind: &str) -> ResourceType {
        builtins().into_iter().find(|t| t.kind == kind).unwrap()
    }

    fn defaulted(kind: &str, mut object: Value) -> Value {
        apply(&rt(kind), &mut object, None);
        object
    }

    #[test]
    fn deployment_defaults() {
        let d = defaulted(
            "Deployment",
            json!({"metadata": {}, "spec": {"template": {"spec": {"containers": [
            {"name": "a", "image": "nginx:1.25", "ports": [{"containerPort": 80}],
             "livenessProbe": {"tcpSocket": {"port": 80}}}, {"name": "b", "image": "busybox"}]}}}}),
        );
        assert_eq!(
            d["spec"]["strategy"],
            json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}})
        );
        assert_eq!(d["spec"]["revisionHistoryLimit"], 10);
        assert_eq!(d["spec"]["progressDeadlineSeconds"], 600);
        assert_eq!(d["status"], json!({}));
        let pod = &d["spec"]["template"]["spec"];
        assert_eq!(pod["dnsPolicy"], "ClusterFirst");
        assert_eq!(pod["securityContext"], json!({}));
        assert!(pod["enableServiceLinks"].is_null(), "a template is no Pod");
        let c = &pod["containers"];
        assert_eq!(c[0]["imagePullPolicy"], "IfNotPresent");
        assert_eq!(c[1]["imagePullPolicy"], "Always");
        assert_eq!(c[0]["terminationMessagePath"], "/dev/termination-log");
        assert_eq!(c[0]["ports"][0]["protocol"], "TCP");
        assert_eq!(c[0]["livenessProbe"]["timeoutSeconds"], 1);
        let recreate = defaulted(
            "Deployment",
            json!({"spec": {"strategy": {"type": "Recreate"}}}),
        );
        assert_eq!(recreate["spec"]["strategy"], json!({"type": "Recreate"}));
    }

    #[test]
    fn stateful_set_claim_templates_are_full_claims() {
        let s = defaulted(
            "StatefulSet",
            json!({"spec": {"volumeClaimTemplates": [{"metadata": {"name": "data"},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]}}),
        );
        let claim = &s["spec"]["volumeClaimTemplates"][0];
        assert_eq!(claim["apiVersion"], "v1");
        assert_eq!(claim["kind"], "PersistentVolumeClaim");
        assert_eq!(claim["spec"]["volumeMode"], "Filesystem");
        assert_eq!(claim["status"], json!({}));
        assert_eq!(
            s["spec"]["updateStrategy"],
            json!({"type": "RollingUpdate", "rollingUpdate": {"partition": 0}})
        );
        assert_eq!(s["status"], json!({"replicas": 0, "availableReplicas": 0}));
    }

    #[test]
    fn jobs_get_a_generated_selector_and_network_policies_their_types() {
        let mut j = defaulted(
            "Job",
            json!({"metadata": {"name": "pi", "uid": "u1"},
            "spec": {"parallelism": 2, "template": {"spec": {"containers": [{"name": "a"}]}}}}),
        );
        assert!(j["spec"]["completions"].is_null());
        assert!(
            j["spec"]["selector"].is_null(),
            "the selector is generated at admission, after the field manager"
        );
        admit(&rt("Job"), &mut j, None, &Store::new(10).lock());
        assert_eq!(
            j["spec"]["selector"]["matchLabels"]["batch.kubernetes.io/controller-uid"],
            "u1"
        );
        assert_eq!(
            j["spec"]["template"]["metadata"]["labels"]["job-name"],
            "pi"
        );
        assert_eq!(
            j["metadata"]["labels"], j["spec"]["template"]["metadata"]["labels"],
            "a Job without labels takes its template's, generated ones included"
        );
        assert_eq!(j["spec"]["backoffLimit"], 6);
        let np = defaulted(
            "NetworkPolicy",
            json!({"spec": {"podSelector": {},
            "egress": [{"ports": [{"port": 53}]}]}}),
        );
        assert_eq!(np["spec"]["policyTypes"], json!(["Ingress", "Egress"]));
        assert_eq!(np["spec"]["egress"][0]["ports"][0]["protocol"], "TCP");
    }

    #[test]
    fn a_daemon_sets_template_generation_counts_template_changes() {
        let spec = json!({"selector": {"matchLabels": {"app": "a"}}, "template": {
            "metadata": {"labels": {"app": "a"}}, "spec": {"containers": [{"name": "a", "image": "x:1"}]}}});
        let created = defaulted("DaemonSet", json!({"metadata": {}, "spec": spec}));
        let generation = |o: &Value| o["metadata"]["annotations"][TEMPLATE_GENERATION].clone();
        assert_eq!(generation(&created), "1");
        let mut same = json!({"metadata": {}, "spec": spec});
        apply(&rt("DaemonSet"), &mut same, Some(&created));
        assert_eq!(generation(&same), "1", "an unchanged template keeps it");
        let mut changed = json!({"metadata": {}, "spec": spec});
        changed["spec"]["template"]["spec"]["containers"][0]["image"] = json!("x:2");
        apply(&rt("DaemonSet"), &mut changed, Some(&created));
        assert_eq!(generation(&changed), "2");
    }

    #[test]
    fn namespaces_crds_and_autoscalers() {
        let ns = defaulted("Namespace", json!({"metadata": {"name": "shop"}}));
        assert_eq!(
            ns["metadata"]["labels"]["kubernetes.io/metadata.name"],
            "shop"
        );
        assert!(
            ns["spec"]["finalizers"].is_null(),
            "the registry's, after the defaults"
        );
        let mut admitted = ns.clone();
        admit(
            &rt("Namespace"),
            &mut admitted,
            None,
            &Store::new(10).lock(),
        );
        assert_eq!(admitted["spec"]["finalizers"], json!(["kubernetes"]));
        let crd = defaulted(
            "CustomResourceDefinition",
            json!({"spec": {"names": {"kind": "Widget", "plural": "widgets"},
            "versions": [{"name": "v1", "storage": true}]}}),
        );
        assert_eq!(crd["spec"]["conversion"], json!({"strategy": "None"}));
        assert_eq!(crd["spec"]["names"]["listKind"], "WidgetList");
        assert_eq!(crd["status"]["storedVersions"], json!(["v1"]));
        let hpa = defaulted(
            "HorizontalPodAutoscaler",
            json!({"spec": {"maxReplicas": 3, "behavior": {}}}),
        );
        assert_eq!(hpa["spec"]["minReplicas"], 1);
        assert_eq!(
            hpa["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"],
            80
        );
        assert_eq!(
            hpa["spec"]["behavior"]["scaleUp"]["policies"][0]["value"],
            4
        );
        assert_eq!(hpa["spec"]["behavior"]["scaleDown"]["selectPolicy"], "Max");
    }
}
