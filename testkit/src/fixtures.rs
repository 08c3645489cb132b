//! Builders for the objects tests apply: `configmap("a").namespace("ns").data(..)`.

use krt_guest::model::Resource;
use serde_json::{Value, json};

/// A Kubernetes object under construction.
#[derive(Debug, Clone, PartialEq)]
pub struct Object(pub Value);

impl Object {
    /// Puts the object in `namespace`.
    pub fn namespace(mut self, namespace: &str) -> Self {
        self.0["metadata"]["namespace"] = json!(namespace);
        self
    }

    /// Sets `data` (ConfigMaps, Secrets).
    pub fn data(mut self, data: Value) -> Self {
        self.0["data"] = data;
        self
    }

    /// Sets `metadata.labels`.
    pub fn labels(mut self, labels: Value) -> Self {
        self.0["metadata"]["labels"] = labels;
        self
    }

    /// Sets `metadata.annotations`.
    pub fn annotations(mut self, annotations: Value) -> Self {
        self.0["metadata"]["annotations"] = annotations;
        self
    }

    /// Sets `spec.replicas` (Deployments).
    pub fn replicas(mut self, replicas: u32) -> Self {
        self.0["spec"]["replicas"] = json!(replicas);
        self
    }

    /// Sets the containers of a Deployment's pod template.
    pub fn containers(mut self, containers: Value) -> Self {
        self.0["spec"]["template"]["spec"]["containers"] = containers;
        self
    }

    /// Sets the image of a Deployment's first container.
    pub fn image(mut self, image: &str) -> Self {
        self.0["spec"]["template"]["spec"]["containers"][0]["image"] = json!(image);
        self
    }

    /// Sets the field at the `/`-separated JSON pointer `pointer` (parents are created).
    pub fn set(mut self, pointer: &str, value: Value) -> Self {
        let mut at = &mut self.0;
        for key in pointer.trim_start_matches('/').split('/') {
            at = &mut at[key];
        }
        *at = value;
        self
    }

    /// Removes the field at the `/`-separated JSON pointer `pointer`, if present.
    pub fn without(mut self, pointer: &str) -> Self {
        if let Some((parent, key)) = pointer.rsplit_once('/')
            && let Some(Value::Object(map)) = self.0.pointer_mut(parent)
        {
            map.remove(key);
        }
        self
    }

    /// The object.
    pub fn value(self) -> Value {
        self.0
    }

    /// The object as a Kusion resource.
    pub fn resource(self) -> Resource {
        resource(self.0)
    }
}

impl From<Object> for Value {
    fn from(o: Object) -> Value {
        o.0
    }
}

/// A ConfigMap named `name`, without namespace or data.
pub fn configmap(name: &str) -> Object {
    Object(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}))
}

/// A Namespace named `name`.
pub fn namespace(name: &str) -> Object {
    Object(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}))
}

/// A Deployment named `name` with one replica of one `nginx:1.27` container
/// `web`, selecting and labelling its pods `app: NAME`.
pub fn deployment(name: &str) -> Object {
    Object(json!({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}}
    }))
}

/// A Pod named `name` running one `nginx:1.27` container `web`.
pub fn pod(name: &str) -> Object {
    Object(json!({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
        "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}
    }))
}

/// A Kubernetes object as a Kusion resource, its ID derived as krt does
/// (`apiVersion:kind[:namespace]:name`).
pub fn resource(attributes: impl Into<Value>) -> Resource {
    let attributes = attributes.into();
    let text = |v: &Value| v.as_str().expect("fixture fields are strings").to_owned();
    let (api_version, kind) = (text(&attributes["apiVersion"]), text(&attributes["kind"]));
    let name = text(&attributes["metadata"]["name"]);
    let id = match attributes["metadata"]["namespace"].as_str() {
        Some(ns) => format!("{api_version}:{kind}:{ns}:{name}"),
        None => format!("{api_version}:{kind}:{name}"),
    };
    Resource {
        id,
        type_: "Kubernetes".into(),
        attributes,
        depends_on: vec![],
        extensions: json!({}),
    }
}
