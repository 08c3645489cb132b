//! The simulator speaks Kubernetes protobuf to a raw HTTP client as kube-apiserver does:
//! client-go's bodies (`k8s\0` + `runtime.Unknown`, Go's zero values included) create and
//! replace built-in objects, answers, lists, `Status` errors and watch frames come back in
//! protobuf when `Accept` asks for it first, aggregated discovery is served in protobuf, and a
//! custom resource gets JSON, 406 or 400 as the real server answers.

#[allow(
    dead_code,
    reason = "each test crate uses a part of the shared fixture"
)]
use crate::common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::http::{read, request};
use http_body_util::BodyExt;
use hyper::Response;
use hyper::body::Incoming;
use k8s_rs_pb::api::apidiscovery::v2::APIGroupDiscoveryList;
use k8s_rs_pb::api::apps::v1::{
    DaemonSet, DaemonSetSpec, Deployment, DeploymentSpec, ReplicaSet, ReplicaSetSpec, StatefulSet,
    StatefulSetSpec,
};
use k8s_rs_pb::api::authorization::v1::{
    LocalSubjectAccessReview, ResourceAttributes, SelfSubjectAccessReview,
    SelfSubjectAccessReviewSpec, SubjectAccessReview, SubjectAccessReviewSpec,
};
use k8s_rs_pb::api::batch::v1::{CronJob, CronJobSpec, Job, JobSpec, JobTemplateSpec};
use k8s_rs_pb::api::core::v1::{
    ConfigMap, ConfigMapList, Container, Pod, PodSpec, PodTemplateSpec, Service, ServicePort,
    ServiceSpec,
};
use k8s_rs_pb::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, CustomResourceDefinitionNames, CustomResourceDefinitionSpec,
    CustomResourceDefinitionVersion, CustomResourceValidation, JSONSchemaProps,
};
use k8s_rs_pb::apimachinery::pkg::apis::meta::v1::{
    DeleteOptions, LabelSelector, ObjectMeta, Status, Time, WatchEvent,
};
use k8s_rs_pb::apimachinery::pkg::runtime::{TypeMeta, Unknown};
use k8s_rs_pb::kube_aggregator::pkg::apis::apiregistration::v1::{APIService, APIServiceSpec};
use protobuf::{Message, MessageField};
use serde_json::{Value, json};

const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";
const CLIENT_GO: &str = "application/vnd.kubernetes.protobuf,application/json";
const CM: &str = "/api/v1/namespaces/default/configmaps";

/// Code, media type and body of one request sent as the admin.
async fn call(
    sim: &krt_sim::Sim,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Vec<u8>,
) -> (u16, String, Vec<u8>) {
    let token = Some(sim.admin_token());
    let response = request(sim, method, path, token, headers, body).await;
    let (code, headers, body) = read(response).await;
    let media = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    (code, media, body)
}

/// Code, media type and body of a GET that asks for protobuf first, as client-go does.
async fn get(sim: &krt_sim::Sim, path: &str) -> (u16, String, Vec<u8>) {
    call(sim, "GET", path, &[("accept", CLIENT_GO)], Vec::new()).await
}

/// A watch of `path` as the admin, asking for protobuf first; its frames are unread.
async fn watch(sim: &krt_sim::Sim, path: &str) -> Response<Incoming> {
    let token = Some(sim.admin_token());
    request(
        sim,
        "GET",
        path,
        token,
        &[("accept", CLIENT_GO)],
        Vec::new(),
    )
    .await
}

/// `raw` in the `k8s\0` + `runtime.Unknown` envelope as `api_version` `kind`; `client_go`
/// also writes the empty content encoding and type, as client-go does.
fn wrap(api_version: &str, kind: &str, raw: Vec<u8>, client_go: bool) -> Vec<u8> {
    let mut type_meta = TypeMeta::new();
    type_meta.set_apiVersion(api_version.into());
    type_meta.set_kind(kind.into());
    let mut unknown = Unknown::new();
    unknown.typeMeta = MessageField::some(type_meta);
    unknown.set_raw(raw);
    if client_go {
        unknown.set_contentEncoding(String::new());
        unknown.set_contentType(String::new());
    }
    let mut out = b"k8s\0".to_vec();
    out.extend(unknown.write_to_bytes().unwrap());
    out
}

/// `message` enveloped as client-go sends it.
fn envelope(api_version: &str, kind: &str, message: &impl Message) -> Vec<u8> {
    wrap(api_version, kind, message.write_to_bytes().unwrap(), true)
}

/// The `runtime.Unknown` a protobuf body holds.
fn unknown(bytes: &[u8]) -> Unknown {
    assert!(
        bytes.starts_with(b"k8s\0"),
        "not protobuf: {:?}",
        String::from_utf8_lossy(bytes)
    );
    Unknown::parse_from_bytes(&bytes[4..]).unwrap()
}

/// The envelope's kind and its message.
fn open<M: Message>(bytes: &[u8]) -> (String, M) {
    let unknown = unknown(bytes);
    (
        unknown.typeMeta.kind().to_string(),
        M::parse_from_bytes(unknown.raw()).unwrap(),
    )
}

/// A ConfigMap as gogo-protobuf writes it: every non-pointer field, empty ones too.
fn configmap(name: &str, value: &str, resource_version: &str) -> Vec<u8> {
    let mut metadata = ObjectMeta::new();
    metadata.set_name(name.into());
    for set in [
        ObjectMeta::set_generateName,
        ObjectMeta::set_namespace,
        ObjectMeta::set_selfLink,
        ObjectMeta::set_uid,
    ] {
        set(&mut metadata, String::new());
    }
    metadata.set_resourceVersion(resource_version.into());
    metadata.set_generation(0);
    metadata.creationTimestamp = MessageField::some(Time::new());
    let mut cm = ConfigMap::new();
    cm.metadata = MessageField::some(metadata);
    cm.data.insert("k".into(), value.into());
    envelope("v1", "ConfigMap", &cm)
}

#[tokio::test]
async fn client_go_creates_reads_updates_lists_and_deletes_in_protobuf() {
    let sim = krt_sim::Sim::start().await.unwrap();
    let proto = [("content-type", PROTOBUF), ("accept", CLIENT_GO)];
    let (code, media, body) = call(&sim, "POST", CM, &proto, configmap("a", "1", "")).await;
    assert_eq!((code, media.as_str()), (201, PROTOBUF));
    let (kind, created): (_, ConfigMap) = open(&body);
    assert_eq!(kind, "ConfigMap");
    assert_eq!(created.data["k"], "1");
    assert!(!created.metadata.uid().is_empty());
    assert!(created.metadata.creationTimestamp.seconds() > 0);
    let rv = created.metadata.resourceVersion().to_string();

    // A JSON client sees the same object.
    let (code, _, json_body) = call(&sim, "GET", &format!("{CM}/a"), &[], Vec::new()).await;
    let object: Value = serde_json::from_slice(&json_body).unwrap();
    assert_eq!((code, &object["data"]), (200, &json!({"k": "1"})));
    assert_eq!(object["metadata"]["resourceVersion"], rv.as_str());

    let put = configmap("a", "2", &rv);
    let (code, _, body) = call(&sim, "PUT", &format!("{CM}/a"), &proto, put).await;
    assert_eq!(code, 200);
    let (_, updated): (_, ConfigMap) = open(&body);
    assert_eq!(updated.data["k"], "2");
    // A stale resourceVersion conflicts, answered as a protobuf Status.
    let (code, media, body) = call(
        &sim,
        "PUT",
        &format!("{CM}/a"),
        &proto,
        configmap("a", "3", &rv),
    )
    .await;
    assert_eq!((code, media.as_str()), (409, PROTOBUF));
    let (kind, status): (_, Status) = open(&body);
    assert_eq!(
        (kind.as_str(), status.reason(), status.code()),
        ("Status", "Conflict", 409)
    );

    let (code, media, body) = get(&sim, CM).await;
    assert_eq!((code, media.as_str()), (200, PROTOBUF));
    let (kind, list): (_, ConfigMapList) = open(&body);
    assert_eq!(kind, "ConfigMapList");
    let names: Vec<&str> = list.items.iter().map(|cm| cm.metadata.name()).collect();
    assert_eq!(
        names,
        ["a", "kube-root-ca.crt"],
        "with the namespace's own root CA"
    );
    assert!(!list.metadata.resourceVersion().is_empty());

    let (code, _, body) = get(&sim, &format!("{CM}/missing")).await;
    let (_, status): (_, Status) = open(&body);
    assert_eq!(
        (code, status.message()),
        (404, "configmaps \"missing\" not found")
    );

    // Patches are JSON or YAML only.
    let (code, _, body) = call(
        &sim,
        "PATCH",
        &format!("{CM}/a"),
        &[("content-type", PROTOBUF)],
        configmap("a", "4", ""),
    )
    .await;
    let status: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(
        (code, &status["reason"]),
        (415, &json!("UnsupportedMediaType"))
    );

    // A protobuf DeleteOptions body (any group version's) is read: the precondition fails.
    let mut options = DeleteOptions::new();
    options
        .preconditions
        .mut_or_insert_default()
        .set_uid("not-the-uid".into());
    let body = envelope("v1", "DeleteOptions", &options);
    let (code, _, answer) = call(&sim, "DELETE", &format!("{CM}/a"), &proto, body).await;
    let (_, status): (_, Status) = open(&answer);
    assert_eq!((code, status.reason()), (409, "Conflict"));
    let mut options = DeleteOptions::new();
    options.set_gracePeriodSeconds(0);
    let body = envelope("meta.k8s.io/v1", "DeleteOptions", &options);
    let (code, _, _) = call(&sim, "DELETE", &format!("{CM}/a"), &proto, body).await;
    assert_eq!(code, 200);
    let (code, _, _) = call(&sim, "GET", &format!("{CM}/a"), &[], Vec::new()).await;
    assert_eq!(code, 404);

    // A pointer's meaningful zero is kept.
    let mut account = k8s_rs_pb::api::core::v1::ServiceAccount::new();
    account
        .metadata
        .mut_or_insert_default()
        .set_name("robot".into());
    account.set_automountServiceAccountToken(false);
    let body = envelope("v1", "ServiceAccount", &account);
    let accounts = "/api/v1/namespaces/default/serviceaccounts";
    let (code, _, _) = call(&sim, "POST", accounts, &proto, body).await;
    assert_eq!(code, 201);
    let (_, _, body) = call(&sim, "GET", &format!("{accounts}/robot"), &[], Vec::new()).await;
    let robot: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(robot["automountServiceAccountToken"], false);

    // A body that is not protobuf is refused in the real server's words.
    let (code, _, body) = call(
        &sim,
        "POST",
        CM,
        &[("content-type", PROTOBUF)],
        b"{\"kind\":1}".to_vec(),
    )
    .await;
    let status: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(code, 400);
    assert_eq!(
        status["message"],
        "the object provided is unrecognized (must be of type ConfigMap): provided data does not appear to be a protobuf message, expected prefix [107 56 115 0] ({\"kind\":1})"
    );
    sim.shutdown().await;
}

/// Reads length-prefixed frames from a watch until `count` arrived.
async fn frames(response: Response<Incoming>, count: usize) -> Vec<WatchEvent> {
    let mut body = response.into_body();
    let mut buffer = Vec::new();
    let mut events = Vec::new();
    while events.len() < count {
        let frame = tokio::time::timeout(Duration::from_secs(5), body.frame())
            .await
            .expect("a frame in time")
            .expect("stream open")
            .expect("frame");
        if let Ok(data) = frame.into_data() {
            buffer.extend_from_slice(&data);
        }
        while buffer.len() >= 4 {
            let length = u32::from_be_bytes(buffer[..4].try_into().unwrap()) as usize;
            if buffer.len() < 4 + length {
                break;
            }
            events.push(WatchEvent::parse_from_bytes(&buffer[4..4 + length]).unwrap());
            buffer.drain(..4 + length);
        }
    }
    events
}

#[tokio::test]
async fn watches_stream_protobuf_frames() {
    let sim = krt_sim::Sim::start().await.unwrap();
    let proto = [("content-type", PROTOBUF), ("accept", CLIENT_GO)];
    let (code, _, _) = call(&sim, "POST", CM, &proto, configmap("a", "1", "")).await;
    assert_eq!(code, 201);
    let watch = watch(&sim, &format!("{CM}?watch=1&resourceVersion=0")).await;
    assert_eq!(
        watch.headers()["content-type"],
        "application/vnd.kubernetes.protobuf;stream=watch"
    );
    let (code, _, _) = call(&sim, "POST", CM, &proto, configmap("b", "2", "")).await;
    assert_eq!(code, 201);
    let events = frames(watch, 3).await;
    let seen: Vec<(String, String)> = events
        .iter()
        .map(|e| {
            let (kind, cm): (String, ConfigMap) = open(e.object.raw());
            assert_eq!(kind, "ConfigMap");
            (e.type_().to_string(), cm.metadata.name().to_string())
        })
        .collect();
    assert!(seen.contains(&("ADDED".into(), "b".into())), "{seen:?}");
    assert!(
        seen.contains(&("ADDED".into(), "kube-root-ca.crt".into())),
        "{seen:?}"
    );
    sim.shutdown().await;
}

#[tokio::test]
async fn custom_resources_answer_json_406_or_400_and_discovery_speaks_protobuf() {
    let sim = krt_sim::Sim::start().await.unwrap();
    let crd = common::widget_crd();
    let json_type = [("content-type", "application/json")];
    let crds = common::CRDS;
    assert_eq!(
        call(&sim, "POST", crds, &json_type, crd.to_string().into_bytes())
            .await
            .0,
        201
    );
    let widgets = "/apis/example.com/v1/namespaces/default/widgets";
    let w = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}});
    let (code, media, _) = call(
        &sim,
        "POST",
        widgets,
        &[("content-type", "application/json"), ("accept", CLIENT_GO)],
        w.to_string().into_bytes(),
    )
    .await;
    assert_eq!((code, media.as_str()), (201, "application/json"));

    let (code, media, body) = call(
        &sim,
        "GET",
        &format!("{widgets}/w"),
        &[("accept", PROTOBUF)],
        Vec::new(),
    )
    .await;
    assert_eq!((code, media.as_str()), (406, PROTOBUF));
    let (_, status): (_, Status) = open(&body);
    assert_eq!(
        status.message(),
        "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"
    );
    // Errors on a custom resource's path still speak protobuf.
    let (code, media, _) = get(&sim, &format!("{widgets}/nope")).await;
    assert_eq!((code, media.as_str()), (404, PROTOBUF));

    let mut cm = ConfigMap::new();
    cm.metadata.mut_or_insert_default().set_name("w2".into());
    let body = envelope("example.com/v1", "Widget", &cm);
    let (code, _, body) = call(&sim, "POST", widgets, &[("content-type", PROTOBUF)], body).await;
    let status: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(code, 400);
    assert_eq!(
        status["message"],
        "Widget in version \"v1\" cannot be handled as a Widget: Object 'Kind' is missing in 'object has no kind field '"
    );

    let aggregated = "application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json";
    let (code, media, body) =
        call(&sim, "GET", "/apis", &[("accept", aggregated)], Vec::new()).await;
    assert_eq!(code, 200);
    assert_eq!(
        media,
        "application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
    );
    let (kind, groups): (_, APIGroupDiscoveryList) = open(&body);
    assert_eq!(kind, "APIGroupDiscoveryList");
    let apps = groups
        .items
        .iter()
        .find(|g| g.metadata.name() == "apps")
        .expect("apps");
    let deployments = apps.versions[0]
        .resources
        .iter()
        .find(|r| r.resource() == "deployments")
        .unwrap();
    assert_eq!(deployments.responseKind.kind(), "Deployment");
    // Legacy discovery in protobuf, `APIResource.verbs` in its `Verbs` wrapper.
    let (code, media, body) = get(&sim, "/apis/apps/v1").await;
    assert_eq!((code, media.as_str()), (200, PROTOBUF));
    let (kind, list): (
        _,
        k8s_rs_pb::apimachinery::pkg::apis::meta::v1::APIResourceList,
    ) = open(&body);
    assert_eq!(kind, "APIResourceList");
    let resource = list
        .resources
        .iter()
        .find(|r| r.name() == "deployments")
        .unwrap();
    assert!(resource.verbs.items.contains(&"create".to_string()));
    sim.shutdown().await;
}

/// The kind an envelope names.
fn kind_of(bytes: &[u8]) -> String {
    unknown(bytes).typeMeta.kind().to_string()
}

/// The CustomResourceDefinition [`full`] makes (its name is its plural and group).
const GIZMOS: &str = "gizmos.proto.example.com";

/// `message` in the `k8s\0` + `runtime.Unknown` envelope as `api_version` `kind`.
fn enveloped(api_version: &str, kind: &str, message: &impl Message) -> Vec<u8> {
    wrap(api_version, kind, message.write_to_bytes().unwrap(), false)
}

/// A Pod template labelled `app: name` running one container.
fn template(name: &str, restart: Option<&str>) -> MessageField<PodTemplateSpec> {
    let labels = BTreeMap::from([("app".to_string(), name.to_string())]);
    let container = Container {
        name: Some("c".into()),
        image: Some("busybox:1.36".into()),
        ..Container::default()
    };
    MessageField::some(PodTemplateSpec {
        metadata: MessageField::some(ObjectMeta {
            labels,
            ..ObjectMeta::default()
        }),
        spec: MessageField::some(PodSpec {
            containers: vec![container],
            restartPolicy: restart.map(String::from),
            ..PodSpec::default()
        }),
        ..PodTemplateSpec::default()
    })
}

fn selector(name: &str) -> MessageField<LabelSelector> {
    MessageField::some(LabelSelector {
        matchLabels: BTreeMap::from([("app".to_string(), name.to_string())]),
        ..LabelSelector::default()
    })
}

/// A valid object of `kind` named `name`, built from k8s-rs-pb's own messages, for the kinds a
/// metadata-only body cannot make (a spec is required); `None` for the others.
fn full(api_version: &str, kind: &str, name: &str) -> Option<Vec<u8>> {
    let meta = |name: &str| {
        MessageField::some(ObjectMeta {
            name: Some(name.into()),
            ..ObjectMeta::default()
        })
    };
    // An `$object` with `$metadata` and `$spec`, enveloped.
    macro_rules! object {
        ($object:ident, $metadata:expr, $spec:expr) => {{
            let object = $object {
                metadata: $metadata,
                spec: MessageField::some($spec),
                ..$object::default()
            };
            enveloped(api_version, kind, &object)
        }};
    }
    // An apps/v1 workload: a selector and the Pod template it selects.
    macro_rules! workload {
        ($object:ident, $spec:ident) => {{
            let spec = $spec {
                selector: selector(name),
                template: template(name, None),
                ..$spec::default()
            };
            object!($object, meta(name), spec)
        }};
    }
    let body = match (api_version, kind) {
        ("v1", "Pod") => {
            let spec = template(name, None).unwrap().spec;
            enveloped(
                api_version,
                kind,
                &Pod {
                    metadata: meta(name),
                    spec,
                    ..Pod::default()
                },
            )
        }
        ("v1", "Service") => {
            let port = ServicePort {
                port: Some(80),
                ..ServicePort::default()
            };
            let spec = ServiceSpec {
                ports: vec![port],
                ..ServiceSpec::default()
            };
            object!(Service, meta(name), spec)
        }
        ("apps/v1", "Deployment") => workload!(Deployment, DeploymentSpec),
        ("apps/v1", "ReplicaSet") => workload!(ReplicaSet, ReplicaSetSpec),
        ("apps/v1", "DaemonSet") => workload!(DaemonSet, DaemonSetSpec),
        ("apps/v1", "StatefulSet") => workload!(StatefulSet, StatefulSetSpec),
        ("batch/v1", "Job") => {
            let spec = JobSpec {
                template: template(name, Some("Never")),
                ..JobSpec::default()
            };
            object!(Job, meta(name), spec)
        }
        ("batch/v1", "CronJob") => {
            let job = JobSpec {
                template: template(name, Some("OnFailure")),
                ..JobSpec::default()
            };
            let spec = CronJobSpec {
                schedule: Some("*/5 * * * *".into()),
                jobTemplate: MessageField::some(JobTemplateSpec {
                    spec: MessageField::some(job),
                    ..JobTemplateSpec::default()
                }),
                ..CronJobSpec::default()
            };
            object!(CronJob, meta(name), spec)
        }
        ("apiextensions.k8s.io/v1", "CustomResourceDefinition") => {
            let version = CustomResourceDefinitionVersion {
                name: Some("v1".into()),
                served: Some(true),
                storage: Some(true),
                schema: MessageField::some(CustomResourceValidation {
                    openAPIV3Schema: MessageField::some(JSONSchemaProps {
                        type_: Some("object".into()),
                        ..<JSONSchemaProps as Default>::default()
                    }),
                    ..CustomResourceValidation::default()
                }),
                ..CustomResourceDefinitionVersion::default()
            };
            let spec = CustomResourceDefinitionSpec {
                group: Some("proto.example.com".into()),
                names: MessageField::some(CustomResourceDefinitionNames {
                    plural: Some("gizmos".into()),
                    kind: Some("Gizmo".into()),
                    ..CustomResourceDefinitionNames::default()
                }),
                scope: Some("Namespaced".into()),
                versions: vec![version],
                ..CustomResourceDefinitionSpec::default()
            };
            object!(CustomResourceDefinition, meta(GIZMOS), spec)
        }
        ("apiregistration.k8s.io/v1", "APIService") => {
            let spec = APIServiceSpec {
                group: Some("proto.example.com".into()),
                version: Some("v1".into()),
                groupPriorityMinimum: Some(100),
                versionPriority: Some(10),
                ..APIServiceSpec::default()
            };
            object!(APIService, meta(name), spec)
        }
        ("authorization.k8s.io/v1", review) if review.ends_with("SubjectAccessReview") => {
            let attributes = MessageField::some(ResourceAttributes {
                namespace: Some("default".into()),
                verb: Some("get".into()),
                resource: Some("pods".into()),
                ..ResourceAttributes::default()
            });
            let spec = SubjectAccessReviewSpec {
                resourceAttributes: attributes.clone(),
                user: Some("jane".into()),
                ..SubjectAccessReviewSpec::default()
            };
            match review {
                "SelfSubjectAccessReview" => {
                    let spec = SelfSubjectAccessReviewSpec {
                        resourceAttributes: attributes,
                        ..SelfSubjectAccessReviewSpec::default()
                    };
                    object!(SelfSubjectAccessReview, MessageField::none(), spec)
                }
                "LocalSubjectAccessReview" => {
                    object!(LocalSubjectAccessReview, MessageField::none(), spec)
                }
                _ => object!(SubjectAccessReview, MessageField::none(), spec),
            }
        }
        _ => return None,
    };
    Some(body)
}

/// A body of `kind` holding only `metadata.name`: field 1 of every kind's message is its
/// `ObjectMeta`, so one encoding serves them all.
fn named(api_version: &str, kind: &str, name: &str) -> Vec<u8> {
    let mut metadata = ObjectMeta::new();
    metadata.set_name(name.into());
    metadata.set_namespace(String::new());
    let meta = metadata.write_to_bytes().unwrap();
    let mut raw = vec![0x0a];
    let mut length = meta.len();
    while length >= 0x80 {
        raw.push(u8::try_from(length & 0x7f).unwrap() | 0x80);
        length >>= 7;
    }
    raw.push(u8::try_from(length).unwrap());
    raw.extend(meta);
    wrap(api_version, kind, raw, false)
}

#[tokio::test]
async fn every_builtin_kind_is_read_from_protobuf_and_watched_in_protobuf() {
    let sim = krt_sim::Sim::start().await.unwrap();
    let proto = [("content-type", PROTOBUF), ("accept", CLIENT_GO)];
    let mut created = Vec::new();
    let mut refused = Vec::new();
    let mut json_only = Vec::new();
    for resource in krt_sim::api::builtin_resources() {
        let (prefix, api_version) = match resource.group {
            "" => ("/api/v1".to_string(), "v1".to_string()),
            group => (
                format!("/apis/{group}/{}", resource.version),
                format!("{group}/{}", resource.version),
            ),
        };
        let collection = if resource.namespaced {
            format!("{prefix}/namespaces/default/{}", resource.plural)
        } else {
            format!("{prefix}/{}", resource.plural)
        };
        // Versions of a kind (and the two Event APIs) share their objects: a name per group
        // and version.
        let group = match resource.group {
            "" => "core".to_string(),
            group => group.replace('.', "-"),
        };
        // An IPAddress is named by its address, an APIService by what it serves, a
        // StorageVersion by the group and resource it is about.
        let mut name = match (resource.kind, resource.version) {
            ("IPAddress", "v1") => "10.96.200.1".to_string(),
            ("IPAddress", _) => "10.96.200.2".to_string(),
            ("APIService", version) => format!("{version}.proto.example.com"),
            ("StorageVersion", version) => format!("proto.example.com.widgets{version}"),
            (_, version) => format!("proto-{group}-{version}"),
        };
        let body = named(&api_version, resource.kind, &name);
        let (mut code, mut media, mut answer) = call(&sim, "POST", &collection, &proto, body).await;
        if code == 400
            && open::<Status>(&answer)
                .1
                .message()
                .contains(&format!("no kind \"{}\" is registered", resource.kind))
        {
            // A kind newer than krt-sim's protobuf messages (Kubernetes 1.35's) is read and
            // written in JSON only, as a custom resource is.
            let json_body = serde_json::to_vec(&serde_json::json!({
                "apiVersion": api_version, "kind": resource.kind, "metadata": {"name": name},
            }))
            .unwrap();
            let headers = [("content-type", "application/json"), ("accept", CLIENT_GO)];
            let (code, media, _) = call(&sim, "POST", &collection, &headers, json_body).await;
            assert!(
                matches!(code, 201 | 422),
                "{api_version} {}: {code}",
                resource.kind
            );
            assert_eq!(media, "application/json", "{api_version} {}", resource.kind);
            json_only.push(format!("{api_version} {}", resource.kind));
            continue;
        }
        let full_body = full(&api_version, resource.kind, &name);
        if code == 422
            && let Some(body) = full_body
        {
            // A spec is required: the same kind again, whole.
            (code, media, answer) = call(&sim, "POST", &collection, &proto, body).await;
            assert_eq!(code, 201, "{api_version} {} in full", resource.kind);
            if resource.kind == "CustomResourceDefinition" {
                name = GIZMOS.to_string();
            }
        }
        assert_eq!(media, PROTOBUF, "{api_version} {}", resource.kind);
        let (kind, status) = if code == 201 {
            (kind_of(&answer), Status::new())
        } else {
            open::<Status>(&answer)
        };
        // Read, and judged by the API: made (a review is answered, not stored), refused by
        // validation (a required field), or not creatable at all; never a body that could not
        // be read.
        match code {
            201 => {
                assert_eq!(kind, resource.kind);
                created.push((collection, api_version, resource.kind, name));
            }
            // Read-only: ComponentStatus.
            405 => assert_eq!(kind, "Status"),
            422 => refused.push(format!(
                "{api_version} {}: {}",
                resource.kind,
                status.message()
            )),
            // A SelfSubjectRulesReview must name a namespace (kube's REST storage says so).
            400 if status.message() == "no namespace on request" => {}
            other => panic!(
                "{api_version} {}: {other} {}",
                resource.kind,
                status.message()
            ),
        }
    }
    assert!(refused.is_empty(), "not created: {refused:#?}");
    // The kinds Kubernetes 1.36 added to what krt-sim serves.
    assert_eq!(
        json_only,
        [
            "admissionregistration.k8s.io/v1 MutatingAdmissionPolicy",
            "admissionregistration.k8s.io/v1 MutatingAdmissionPolicyBinding",
            "scheduling.k8s.io/v1alpha2 PodGroup",
            "scheduling.k8s.io/v1alpha2 Workload",
            "resource.k8s.io/v1beta2 DeviceTaintRule",
            "resource.k8s.io/v1alpha3 ResourcePoolStatusRequest",
        ]
    );
    assert!(
        created.len() > 70,
        "only {} kinds were created",
        created.len()
    );
    for (collection, api_version, kind, name) in &created {
        let path =
            format!("{collection}?watch=1&resourceVersion=0&fieldSelector=metadata.name%3D{name}");
        let watch = watch(&sim, &path).await;
        if watch.status() == 405 {
            // A review is answered, never stored: nothing to list or watch.
            let (code, _, _) = get(&sim, collection).await;
            assert_eq!(code, 405, "{api_version} {kind} is create-only");
            assert!(kind.ends_with("Review"), "{api_version} {kind}");
            continue;
        }
        assert_eq!(watch.status(), 200, "{api_version} {kind}");
        let event = frames(watch, 1).await.remove(0);
        let event_kind = kind_of(event.object.raw());
        assert_eq!(
            (event.type_(), event_kind.as_str()),
            ("ADDED", *kind),
            "{api_version}"
        );
        let (code, media, body) = get(&sim, collection).await;
        let why = || match code {
            200 => String::new(),
            _ => open::<Status>(&body).1.message().to_string(),
        };
        assert_eq!(
            (code, media.as_str()),
            (200, PROTOBUF),
            "{api_version} {kind} list: {}",
            why()
        );
    }
    sim.shutdown().await;
}
