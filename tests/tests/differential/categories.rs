//! The table's requests beyond one kind's own: finalizers, immutable fields, invalid
//! quantities, apply conflicts and mismatched names, CRD validation, pruning and defaulting,
//! Table and metadata-only output, discovery, OpenAPI, protobuf bodies, the review kinds and
//! ComponentStatus, and a terminating namespace. They run after every kind's steps, on the
//! objects those made, and before the deletes.

use crate::Step;
use crate::table::SETTLE_MS;
use serde_json::{Value, json};

/// The table's namespace.
const NS: &str = "/api/v1/namespaces/idem";
const MERGE: &str = "application/merge-patch+json";
const STRATEGIC: &str = "application/strategic-merge-patch+json";
const APPLY: &str = "application/apply-patch+yaml";
const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";
const TABLE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io";
const AGGREGATED: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

/// Every category's steps, in order.
pub fn steps() -> Vec<Step> {
    [
        finalizers(),
        immutable_fields(),
        quantities(),
        conflicts(),
        custom_resource_schemas(),
        tables(),
        discovery(),
        openapi(),
        protobuf(),
        legacy_watches(),
        reviews(),
        terminating_namespace(),
    ]
    .concat()
}

fn id(category: &str, what: &str) -> String {
    format!("{category}: {what}")
}

fn config_map(name: &str, extra: Value) -> Value {
    let mut object = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"a": "1"}});
    krt_guest::merge::json::apply(&mut object, &extra);
    object
}

/// A finalizer holds a deleted object; a new one may not be added while it is deleting.
fn finalizers() -> Vec<Step> {
    let c = |what| id("finalizers", what);
    let item = format!("{NS}/configmaps/held");
    vec![
        Step::new(
            c("create with a finalizer"),
            "POST",
            format!("{NS}/configmaps"),
        )
        .json(config_map(
            "held",
            json!({"metadata": {"finalizers": ["example.com/hold"]}}),
        )),
        Step::new(c("delete"), "DELETE", &item),
        Step::new(c("get while held"), "GET", &item),
        Step::new(c("add a finalizer while deleting"), "PATCH", &item).body(
            MERGE,
            json!({"metadata": {"finalizers": ["example.com/hold", "example.com/more"]}}),
        ),
        Step::new(c("update while deleting"), "PATCH", &item)
            .body(MERGE, json!({"data": {"a": "2"}})),
        Step::new(c("remove the finalizer"), "PATCH", &item)
            .body(MERGE, json!({"metadata": {"finalizers": null}})),
        Step::new(c("get once released"), "GET", &item),
    ]
}

/// Fields no update may change.
fn immutable_fields() -> Vec<Step> {
    let c = |what| id("immutable fields", what);
    let frozen = format!("{NS}/configmaps/frozen");
    vec![
        Step::new(
            c("create an immutable ConfigMap"),
            "POST",
            format!("{NS}/configmaps"),
        )
        .json(config_map("frozen", json!({"immutable": true}))),
        Step::new(c("change its data"), "PATCH", &frozen).body(MERGE, json!({"data": {"a": "2"}})),
        Step::new(c("make it mutable"), "PATCH", &frozen).body(MERGE, json!({"immutable": false})),
        Step::new(
            c("a Secret's type"),
            "PATCH",
            format!("{NS}/secrets/web-secret"),
        )
        .body(MERGE, json!({"type": "example.com/custom"})),
        Step::new(
            c("a Service's cluster IP"),
            "PATCH",
            format!("{NS}/services/web"),
        )
        .body(
            MERGE,
            json!({"spec": {"clusterIP": "10.0.0.99", "clusterIPs": ["10.0.0.99"]}}),
        ),
        Step::new(
            c("a Deployment's selector"),
            "PATCH",
            "/apis/apps/v1/namespaces/idem/deployments/web",
        )
        .body(
            STRATEGIC,
            json!({"spec": {"selector": {"matchLabels": {"app": "other"}}}}),
        ),
        Step::new(
            c("a StorageClass's provisioner"),
            "PATCH",
            "/apis/storage.k8s.io/v1/storageclasses/idem-fast",
        )
        .body(MERGE, json!({"provisioner": "other.example.com"})),
        Step::new(
            c("a Job's completions"),
            "PATCH",
            "/apis/batch/v1/namespaces/idem/jobs/migrate",
        )
        .body(MERGE, json!({"spec": {"completions": 5}})),
        Step::new(
            c("a Pod's restart policy"),
            "PATCH",
            format!("{NS}/pods/debug"),
        )
        .body(MERGE, json!({"spec": {"restartPolicy": "Never"}})),
        Step::new(
            c("a claim's storage class"),
            "PATCH",
            format!("{NS}/persistentvolumeclaims/uploads"),
        )
        .body(MERGE, json!({"spec": {"storageClassName": "other"}})),
    ]
}

/// Quantities that do not parse, or that validation refuses.
fn quantities() -> Vec<Step> {
    let c = |what| id("quantities", what);
    let pod = |name: &str, resources: Value| {
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": {
            "containers": [{"name": "app", "image": "busybox", "resources": resources}]}})
    };
    vec![
        Step::new(c("a CPU request that is no quantity"), "POST", format!("{NS}/pods"))
            .json(pod("bad-cpu", json!({"requests": {"cpu": "lots"}}))),
        Step::new(c("a negative memory limit"), "POST", format!("{NS}/pods"))
            .json(pod("negative-memory", json!({"limits": {"memory": "-1Gi"}}))),
        Step::new(c("a request above its limit"), "POST", format!("{NS}/pods")).json(pod(
            "over-limit",
            json!({"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}),
        )),
        Step::new(c("a claim of an unknown suffix"), "POST", format!("{NS}/persistentvolumeclaims"))
            .json(json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                "metadata": {"name": "bad-size"},
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Zi"}}}})),
        Step::new(c("a negative quota"), "POST", format!("{NS}/resourcequotas")).json(
            json!({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "negative"},
                "spec": {"hard": {"pods": "-1"}}}),
        ),
        Step::new(c("a number as a quantity"), "POST", format!("{NS}/limitranges")).json(
            json!({"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "numbers"},
                "spec": {"limits": [{"type": "Container", "max": {"cpu": 2, "memory": 1.5e9}}]}}),
        ),
    ]
}

/// Server-side apply's conflicts, and names and namespaces that disagree with the path.
fn conflicts() -> Vec<Step> {
    let c = |what| id("conflicts", what);
    let item = format!("{NS}/configmaps/web-config");
    let apply = |level: &str| {
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "web-config"},
            "data": {"LOG_LEVEL": level}})
    };
    vec![
        Step::new(
            c("apply another manager's field"),
            "PATCH",
            format!("{item}?fieldManager=other"),
        )
        .body(APPLY, apply("debug")),
        Step::new(
            c("apply the same value: shared"),
            "PATCH",
            format!("{item}?fieldManager=other"),
        )
        .body(APPLY, apply("info")),
        Step::new(
            c("apply with force: taken"),
            "PATCH",
            format!("{item}?fieldManager=other&force=true"),
        )
        .body(APPLY, apply("debug")),
        Step::new(
            c("force without apply"),
            "PATCH",
            format!("{item}?force=true"),
        )
        .body(MERGE, json!({"data": {"LOG_LEVEL": "warn"}})),
        Step::new(c("apply without a field manager"), "PATCH", &item).body(APPLY, apply("warn")),
        Step::new(c("update under another name"), "PUT", &item)
            .json(config_map("not-web-config", json!({}))),
        Step::new(
            c("create in another namespace"),
            "POST",
            format!("{NS}/configmaps"),
        )
        .json(config_map(
            "elsewhere",
            json!({"metadata": {"namespace": "other"}}),
        )),
        Step::new(c("update without a resourceVersion"), "PUT", &item).json(config_map(
            "web-config",
            json!({"data": {"LOG_LEVEL": "error"}}),
        )),
    ]
}

/// A CRD's structural schema: what it refuses, prunes, keeps and defaults.
fn custom_resource_schemas() -> Vec<Step> {
    let c = |what| id("custom resource schemas", what);
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "gizmos.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"kind": "Gizmo", "plural": "gizmos", "singular": "gizmo", "shortNames": ["gz"]},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "additionalPrinterColumns": [
                    {"name": "Title", "type": "string", "jsonPath": ".spec.title"},
                    {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
                    {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}],
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "required": ["title"], "properties": {
                        "title": {"type": "string", "maxLength": 10},
                        "code": {"type": "string", "pattern": "^[a-z]+$"},
                        "replicas": {"type": "integer", "minimum": 1, "maximum": 10, "default": 1},
                        "size": {"type": "string", "enum": ["small", "large"], "default": "small"},
                        "ports": {"type": "array", "items": {"type": "integer"}, "maxItems": 2},
                        "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}}}}]}});
    let gizmos = "/apis/example.com/v1/namespaces/idem/gizmos";
    let gizmo = |name: &str, spec: Value| json!({"apiVersion": "example.com/v1", "kind": "Gizmo", "metadata": {"name": name}, "spec": spec});
    let create = |what, name, spec| Step::new(c(what), "POST", gizmos).json(gizmo(name, spec));
    vec![
        Step::new(
            c("create the CRD"),
            "POST",
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        )
        .json(crd)
        .settle(SETTLE_MS),
        create(
            "defaulted and pruned",
            "plain",
            json!({"title": "one", "unknown": 1}),
        ),
        create(
            "kept under preserve-unknown-fields",
            "kept",
            json!({"title": "two", "extra": {"anything": [1, "two"]}}),
        ),
        create(
            "above the maximum",
            "many",
            json!({"title": "x", "replicas": 11}),
        ),
        create(
            "below the minimum",
            "none",
            json!({"title": "x", "replicas": 0}),
        ),
        create(
            "not in the enum",
            "huge",
            json!({"title": "x", "size": "huge"}),
        ),
        create(
            "of the wrong type",
            "typed",
            json!({"title": "x", "replicas": "three"}),
        ),
        create(
            "missing a required field",
            "untitled",
            json!({"size": "small"}),
        ),
        create("too long", "long", json!({"title": "far too long a title"})),
        create(
            "not matching the pattern",
            "coded",
            json!({"title": "x", "code": "ABC"}),
        ),
        create(
            "too many items",
            "ports",
            json!({"title": "x", "ports": [1, 2, 3]}),
        ),
        Step::new(
            c("unknown field, Strict"),
            "POST",
            format!("{gizmos}?fieldValidation=Strict"),
        )
        .json(gizmo("strict", json!({"title": "x", "unknown": 1}))),
        Step::new(c("list"), "GET", gizmos),
        Step::new(c("list as a Table"), "GET", gizmos).accept(TABLE),
        Step::new(
            c("merge patch out of range"),
            "PATCH",
            format!("{gizmos}/plain"),
        )
        .body(MERGE, json!({"spec": {"replicas": 20}})),
        Step::new(
            c("delete the CRD"),
            "DELETE",
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gizmos.example.com",
        )
        .settle(SETTLE_MS),
    ]
}

/// Table and metadata-only output, as kubectl asks for them.
fn tables() -> Vec<Step> {
    let c = |what| id("tables", what);
    let table = |what, path: &str| Step::new(c(what), "GET", path).accept(TABLE);
    vec![
        table("ConfigMaps", &format!("{NS}/configmaps")),
        table("one ConfigMap", &format!("{NS}/configmaps/web-config")),
        table(
            "ConfigMaps without objects",
            &format!("{NS}/configmaps?includeObject=None"),
        ),
        table(
            "ConfigMaps with whole objects",
            &format!("{NS}/configmaps?includeObject=Object"),
        ),
        table("Deployments", "/apis/apps/v1/namespaces/idem/deployments"),
        table("Pods", &format!("{NS}/pods")),
        table("Services", &format!("{NS}/services")),
        table("Secrets", &format!("{NS}/secrets")),
        table("Jobs", "/apis/batch/v1/namespaces/idem/jobs"),
        table("Nodes", "/api/v1/nodes"),
        table("Namespaces", "/api/v1/namespaces"),
        table(
            "ClusterRoles",
            "/apis/rbac.authorization.k8s.io/v1/clusterroles",
        ),
        table("Widgets", "/apis/example.com/v1/namespaces/idem/widgets"),
        Step::new(
            c("ConfigMaps as metadata"),
            "GET",
            format!("{NS}/configmaps"),
        )
        .accept("application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io"),
        Step::new(
            c("a ConfigMap as metadata"),
            "GET",
            format!("{NS}/configmaps/web-config"),
        )
        .accept("application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io"),
        Step::new(
            c("a Table of an unknown version"),
            "GET",
            format!("{NS}/configmaps"),
        )
        .accept("application/json;as=Table;v=v9;g=meta.k8s.io"),
    ]
}

/// The discovery documents, legacy and aggregated.
fn discovery() -> Vec<Step> {
    let c = |what| id("discovery", what);
    let get = |what, path: &str| Step::new(c(what), "GET", path);
    vec![
        get("/api", "/api"),
        get("/apis", "/apis"),
        get("/api/v1", "/api/v1"),
        get("/apis/apps", "/apis/apps"),
        get("/apis/apps/v1", "/apis/apps/v1"),
        get("/apis/batch/v1", "/apis/batch/v1"),
        get("/apis/example.com/v1", "/apis/example.com/v1"),
        get("a missing group version", "/apis/apps/v9"),
        get("/api, aggregated", "/api").accept(AGGREGATED),
        get("/apis, aggregated", "/apis").accept(AGGREGATED),
    ]
}

/// The OpenAPI documents: which paths and schemas they have (their text is the server's).
fn openapi() -> Vec<Step> {
    let c = |what| id("openapi", what);
    let get = |what, path: &str| Step::new(c(what), "GET", path);
    let document = ["/paths", "/components/schemas"];
    vec![
        get("the v3 index", "/openapi/v3").keys(&["/paths"]),
        get("v3 of api/v1", "/openapi/v3/api/v1").keys(&document),
        get("v3 of apps/v1", "/openapi/v3/apis/apps/v1").keys(&document),
        get("v3 of a CRD's group", "/openapi/v3/apis/example.com/v1").keys(&document),
        get("v3 of a missing group", "/openapi/v3/apis/example.org/v1"),
        get("v2", "/openapi/v2")
            .accept("application/json")
            .keys(&["/paths", "/definitions"]),
    ]
}

/// Protobuf request bodies and answers (an answer is compared as krt-sim's decoder reads it).
fn protobuf() -> Vec<Step> {
    let c = |what| id("protobuf", what);
    vec![
        Step::new(
            c("create from protobuf"),
            "POST",
            format!("{NS}/configmaps"),
        )
        .body(PROTOBUF, config_map("proto", json!({"data": {"b": "2"}}))),
        Step::new(
            c("get as protobuf"),
            "GET",
            format!("{NS}/configmaps/proto"),
        )
        .accept(PROTOBUF),
        Step::new(
            c("list as protobuf"),
            "GET",
            format!("{NS}/configmaps?fieldSelector=metadata.name%3Dproto"),
        )
        .accept(PROTOBUF),
        Step::new(
            c("a Deployment as protobuf"),
            "GET",
            "/apis/apps/v1/namespaces/idem/deployments/web",
        )
        .accept(PROTOBUF),
        Step::new(
            c("a Status as protobuf"),
            "GET",
            format!("{NS}/configmaps/missing"),
        )
        .accept(PROTOBUF),
        Step::new(
            c("a custom resource, protobuf only"),
            "GET",
            "/apis/example.com/v1/namespaces/idem/widgets/blue",
        )
        .accept(PROTOBUF),
        Step::new(
            c("a custom resource, protobuf or JSON"),
            "GET",
            "/apis/example.com/v1/namespaces/idem/widgets/blue",
        )
        .accept(&format!("{PROTOBUF}, application/json")),
        Step::new(c("delete"), "DELETE", format!("{NS}/configmaps/proto")),
    ]
}

/// Watches on the deprecated `watch/` paths, of a collection and of one object.
fn legacy_watches() -> Vec<Step> {
    let c = |what| id("legacy watches", what);
    vec![
        Step::new(
            c("a collection"),
            "GET",
            "/api/v1/watch/namespaces/idem/configmaps?timeoutSeconds=1",
        ),
        Step::new(
            c("one object"),
            "GET",
            "/api/v1/watch/namespaces/idem/configmaps/web-config?timeoutSeconds=1",
        ),
        Step::new(
            c("a cluster-scoped object"),
            "GET",
            "/api/v1/watch/namespaces/idem?timeoutSeconds=1",
        ),
    ]
}

/// The create-only review kinds, and ComponentStatus (read-only).
fn reviews() -> Vec<Step> {
    let c = |what| id("reviews", what);
    let attributes = json!({"namespace": "idem", "verb": "get", "resource": "pods"});
    let review = |what, path: &str, kind: &str, spec: Value| {
        let group = path.split('/').nth(2).unwrap_or_default();
        let mut body = json!({"apiVersion": format!("{group}/v1"), "kind": kind});
        if !spec.is_null() {
            body["spec"] = spec;
        }
        Step::new(c(what), "POST", path).json(body)
    };
    vec![
        review(
            "who am I",
            "/apis/authentication.k8s.io/v1/selfsubjectreviews",
            "SelfSubjectReview",
            json!(null),
        ),
        review(
            "may I",
            "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
            "SelfSubjectAccessReview",
            json!({"resourceAttributes": attributes}),
        ),
        review(
            "may nobody",
            "/apis/authorization.k8s.io/v1/subjectaccessreviews",
            "SubjectAccessReview",
            json!({"user": "nobody", "resourceAttributes": attributes}),
        ),
        review(
            "a review naming nobody",
            "/apis/authorization.k8s.io/v1/subjectaccessreviews",
            "SubjectAccessReview",
            json!({"resourceAttributes": attributes}),
        ),
        review(
            "may a ServiceAccount, locally",
            "/apis/authorization.k8s.io/v1/namespaces/idem/localsubjectaccessreviews",
            "LocalSubjectAccessReview",
            json!({"user": "system:serviceaccount:idem:web",
                "groups": ["system:serviceaccounts", "system:serviceaccounts:idem"],
                "resourceAttributes": attributes}),
        ),
        review(
            "a local review of another namespace",
            "/apis/authorization.k8s.io/v1/namespaces/idem/localsubjectaccessreviews",
            "LocalSubjectAccessReview",
            json!({"user": "nobody",
                "resourceAttributes": {"namespace": "default", "verb": "get", "resource": "pods"}}),
        ),
        review(
            "what may I",
            "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
            "SelfSubjectRulesReview",
            json!({"namespace": "idem"}),
        ),
        review(
            "a token that is none",
            "/apis/authentication.k8s.io/v1/tokenreviews",
            "TokenReview",
            json!({"token": "not-a-token"}),
        ),
        Step::new(
            c("get a review"),
            "GET",
            "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
        ),
        Step::new(c("component statuses"), "GET", "/api/v1/componentstatuses"),
        Step::new(
            c("etcd's status"),
            "GET",
            "/api/v1/componentstatuses/etcd-0",
        ),
    ]
}

/// A namespace being deleted refuses new objects, then is gone once emptied.
fn terminating_namespace() -> Vec<Step> {
    let c = |what| id("terminating namespace", what);
    let namespace = "/api/v1/namespaces/doomed";
    vec![
        Step::new(c("create"), "POST", "/api/v1/namespaces")
            .json(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "doomed"}}))
            .settle(SETTLE_MS),
        Step::new(
            c("create inside"),
            "POST",
            format!("{namespace}/configmaps"),
        )
        .json(config_map("inside", json!({}))),
        Step::new(c("delete"), "DELETE", namespace),
        Step::new(
            c("create inside while terminating"),
            "POST",
            format!("{namespace}/configmaps"),
        )
        .json(config_map("late", json!({}))),
        Step::new(c("get while terminating"), "GET", namespace).settle(10_000),
        Step::new(c("get once emptied"), "GET", namespace),
        Step::new(
            c("its content is gone"),
            "GET",
            format!("{namespace}/configmaps/inside"),
        ),
    ]
}
