//! Decoding a written object through its k8s-openapi type, as kube-apiserver decodes a request
//! into its Go type: a wrongly typed field fails the write, and a field the type does not have is
//! dropped and, per `fieldValidation`, fails it (`Strict`), is named in a `Warning` header
//! (`Warn`, the default) or goes silently (`Ignore`). Server-side apply checks its configuration
//! against the schema instead and refuses both, whatever `fieldValidation` says.
//!
//! The Rust type decides what is accepted; its schema only names things in messages the way Go's
//! decoder does (`Go struct field DeploymentSpec.spec.replicas of type int32`). A number where a
//! `Quantity` goes (as the type accepts) and a `null` map or list item (as Go's decoder does) are
//! accepted.

use std::cell::RefCell;

use serde_json::{Map, Value};

use crate::kinds::{self, Builtin, Step};
use crate::registry::ResourceType;
use crate::ssa::{ListType, Schema as SsaSchema};
use crate::status::{ApiError, cause};

/// Whether `kind`'s type has every field of `fields` (a partial object), with those types.
pub fn has_fields(kind: &Builtin, fields: Value) -> bool {
    let probe = (kind.probe)(&fields);
    probe.error.is_none() && probe.unknown.is_empty()
}

/// `fieldValidation`: what a write does with fields the kind's type does not have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldValidation {
    /// Dropped silently.
    Ignore,
    /// Dropped, each named in a `Warning` header (the default).
    Warn,
    /// The write fails.
    Strict,
}

/// How the object reached the server, which decides the shape of a decoding error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// A POST body.
    Create,
    /// A PUT body.
    Update,
    /// The object a JSON, merge or strategic merge patch produced.
    Patch,
    /// A server-side apply configuration.
    Apply,
}

impl Source {
    fn options(self) -> &'static str {
        match self {
            Source::Create => "CreateOptions",
            Source::Update => "UpdateOptions",
            Source::Patch | Source::Apply => "PatchOptions",
        }
    }
}

impl FieldValidation {
    /// Reads a write's `fieldValidation` parameter (`Warn` when absent).
    ///
    /// # Errors
    /// 422 Invalid for any other value, as kube-apiserver validates the write's options.
    pub fn parse(value: Option<&str>, source: Source) -> Result<Self, ApiError> {
        match value {
            None | Some("" | "Warn") => Ok(Self::Warn),
            Some("Ignore") => Ok(Self::Ignore),
            Some("Strict") => Ok(Self::Strict),
            Some(other) => {
                let message = format!(
                    "Unsupported value: {other:?}: supported values: \"Ignore\", \"Warn\", \"Strict\""
                );
                let subject = crate::status::Subject {
                    group: "meta.k8s.io",
                    ..Default::default()
                };
                Err(ApiError::invalid(
                    source.options(),
                    &subject,
                    vec![cause("FieldValueNotSupported", "fieldValidation", message)],
                ))
            }
        }
    }
}

/// The decoding of one write request: its `fieldValidation` parameter and the warnings its
/// decoding collected (sent as `Warning` headers, as kube-apiserver adds them to the request's
/// context).
#[derive(Debug, Default)]
pub struct Decoding {
    field_validation: Option<String>,
    warnings: RefCell<Vec<String>>,
}

impl Decoding {
    /// The decoding of a request with `fieldValidation` (if given).
    pub fn new(field_validation: Option<&str>) -> Self {
        Self {
            field_validation: field_validation.map(str::to_string),
            warnings: RefCell::default(),
        }
    }

    /// Adds a warning of the request's own (sent with the decoding's).
    pub fn warn(&self, warning: &str) {
        self.warnings.borrow_mut().push(warning.to_owned());
    }

    /// Reports the fields of the custom resource `object` of `rt` that its CRD's schema does
    /// not declare (`unknown`), as the decoder of a built-in kind reports its unknown fields:
    /// the write fails under `Strict`, they are named in warnings under `Warn`; they are
    /// dropped, as pruning would.
    ///
    /// # Errors
    /// 400 under `Strict`; 422 for a bad `fieldValidation` value.
    pub fn custom_unknown(
        &self,
        rt: &ResourceType,
        object: &mut Value,
        source: Source,
        unknown: Vec<Vec<Step>>,
    ) -> Result<(), ApiError> {
        let validation = FieldValidation::parse(self.field_validation.as_deref(), source)?;
        let decoder = Decoder::custom(rt);
        let warnings = decoder.report_unknown(object, source, validation, unknown)?;
        self.warnings.borrow_mut().extend(warnings);
        Ok(())
    }

    /// Decodes `object` (see [`decode`]), keeping its warnings.
    ///
    /// # Errors
    /// As [`decode`].
    pub fn decode(
        &self,
        rt: &ResourceType,
        object: &mut Value,
        source: Source,
    ) -> Result<(), ApiError> {
        let warnings = decode(rt, object, source, self.field_validation.as_deref())?;
        self.warnings.borrow_mut().extend(warnings);
        Ok(())
    }

    /// Decodes `object` as `typed` (see [`decode_as`]), keeping its warnings.
    ///
    /// # Errors
    /// As [`decode`].
    pub fn decode_as(
        &self,
        rt: &ResourceType,
        typed: &'static Builtin,
        object: &mut Value,
        source: Source,
    ) -> Result<(), ApiError> {
        let warnings = decode_as(rt, typed, object, source, self.field_validation.as_deref())?;
        self.warnings.borrow_mut().extend(warnings);
        Ok(())
    }

    /// The warnings collected so far.
    pub fn take_warnings(&self) -> Vec<String> {
        std::mem::take(&mut self.warnings.borrow_mut())
    }
}

/// Decodes `object`, a write of `rt` that reached the server as `source`, under the write's
/// `fieldValidation` value: drops the fields its type does not have and returns the warnings
/// to send. Custom resources have their `metadata` decoded.
///
/// # Errors
/// The API server's error for a wrongly typed field or, under `Strict` (always, for apply), an
/// unknown one; 422 for a bad `fieldValidation` value.
pub fn decode(
    rt: &ResourceType,
    object: &mut Value,
    source: Source,
    field_validation: Option<&str>,
) -> Result<Vec<String>, ApiError> {
    let validation = FieldValidation::parse(field_validation, source)?;
    let decoder = if rt.custom {
        Decoder::custom(rt)
    } else {
        let Some(typed) = kinds::find(&rt.group, &rt.version, &rt.kind) else {
            return Ok(Vec::new());
        };
        Decoder::whole(rt, typed)
    };
    decoder.run(object, source, validation)
}

/// Decodes `object` as `typed` (a subresource's kind, like `Scale`), written to `rt`.
///
/// # Errors
/// As [`decode`].
pub fn decode_as(
    rt: &ResourceType,
    typed: &'static Builtin,
    object: &mut Value,
    source: Source,
    field_validation: Option<&str>,
) -> Result<Vec<String>, ApiError> {
    let validation = FieldValidation::parse(field_validation, source)?;
    let decoder = Decoder::whole(rt, typed);
    decoder.run(object, source, validation)
}

/// Drops what Go's encoder leaves out of a built-in kind's object: an optional (`omitempty`)
/// map or list that is empty, such as `labels: {}` or `ports: []` (an empty struct stays, as a
/// non-nil pointer does). kube-apiserver stores and answers the decoded object, and its
/// managedFields of a write are computed from it, so an empty map sent is neither stored nor
/// owned. Custom resources keep what was sent.
pub fn omit_empty(rt: &ResourceType, object: &mut Value) {
    if rt.custom {
        return;
    }
    let Some(typed) = kinds::find(&rt.group, &rt.version, &rt.kind) else {
        return;
    };
    let schema = cached_schema(typed);
    schema.omit_empty(&schema.root, object);
}

/// The schema of `typed`, generated once per kind and kept (for decoding messages and
/// [`omit_empty`]).
fn cached_schema(typed: &'static Builtin) -> std::sync::Arc<TypeSchema> {
    type Cache = std::collections::HashMap<usize, std::sync::Arc<TypeSchema>>;
    static SCHEMAS: std::sync::LazyLock<std::sync::Mutex<Cache>> =
        std::sync::LazyLock::new(Default::default);
    let mut schemas = SCHEMAS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    schemas
        .entry(std::ptr::from_ref(typed) as usize)
        .or_insert_with(|| std::sync::Arc::new(TypeSchema::of(typed)))
        .clone()
}

struct Decoder<'a> {
    rt: &'a ResourceType,
    typed: &'static Builtin,
    /// Where in the object the typed part starts (`metadata` of a custom resource).
    at: Vec<Step>,
    /// The kind and version named in errors.
    kind: &'a str,
    version: &'a str,
}

impl<'a> Decoder<'a> {
    /// A decoder of a whole object of `rt` as `typed`, errors naming `typed`'s kind and version.
    fn whole(rt: &'a ResourceType, typed: &'static Builtin) -> Self {
        Decoder {
            rt,
            typed,
            at: Vec::new(),
            kind: typed.kind,
            version: typed.version,
        }
    }

    /// A decoder of a custom resource of `rt`: its `metadata`, whose type is known.
    fn custom(rt: &'a ResourceType) -> Self {
        Decoder {
            rt,
            typed: &kinds::OBJECT_META,
            at: vec![Step::Key("metadata".into())],
            kind: &rt.kind,
            version: &rt.version,
        }
    }

    fn run(
        &self,
        object: &mut Value,
        source: Source,
        validation: FieldValidation,
    ) -> Result<Vec<String>, ApiError> {
        let mut schema: Option<std::sync::Arc<TypeSchema>> = None;
        let (unknown, error) = loop {
            let mut part = value_at(object, &self.at).cloned().unwrap_or(Value::Null);
            if let Some(m) = part.as_object_mut().filter(|_| self.at.is_empty()) {
                // The type and version were checked against the request; an object stored
                // through another version of the kind keeps that version's apiVersion.
                m.remove("apiVersion");
                m.remove("kind");
            }
            let probe = (self.typed.probe)(&part);
            let Some((path, message)) = probe.error else {
                break (probe.unknown, None);
            };
            let schema = schema.get_or_insert_with(|| cached_schema(self.typed));
            let full = [self.at.clone(), path.clone()].concat();
            match value_at_mut(object, &full).and_then(|v| fix(schema, &path, v)) {
                Some(()) => {}
                None => break (probe.unknown, Some((path, message))),
            }
        };
        let unknown: Vec<Vec<Step>> = unknown
            .into_iter()
            .map(|p| [self.at.clone(), p].concat())
            .collect();
        if let Some((path, message)) = error {
            let schema = schema.get_or_insert_with(|| cached_schema(self.typed));
            let full = [self.at.clone(), path.clone()].concat();
            let value = value_at(object, &full).cloned().unwrap_or(Value::Null);
            return Err(match source {
                Source::Apply => {
                    let error = self.smd_type_error(schema, &path, &value, object);
                    self.apply_error(object, &[error])
                }
                _ => {
                    let detail = self.go_type_error(schema, &path, &value, &message);
                    self.decode_error(object, source, &detail)
                }
            });
        }
        self.report_unknown(object, source, validation, unknown)
    }

    /// What `fieldValidation` makes of the `unknown` fields of `object`: an error, warnings, or
    /// nothing; the fields are removed.
    fn report_unknown(
        &self,
        object: &mut Value,
        source: Source,
        validation: FieldValidation,
        unknown: Vec<Vec<Step>>,
    ) -> Result<Vec<String>, ApiError> {
        if unknown.is_empty() {
            return Ok(Vec::new());
        }
        if source == Source::Apply {
            let errors: Vec<String> = unknown
                .iter()
                .map(|p| format!("{}: field not declared in schema", self.smd_path(object, p)))
                .collect();
            return Err(self.apply_error(object, &errors));
        }
        let messages: Vec<String> = unknown
            .iter()
            .map(|p| format!("unknown field \"{}\"", kube_path(p)))
            .collect();
        if validation == FieldValidation::Strict {
            let strict = format!("strict decoding error: {}", messages.join(", "));
            return Err(self.decode_error(object, source, &strict));
        }
        for path in unknown.iter().rev() {
            remove_at(object, path);
        }
        Ok(match validation {
            FieldValidation::Warn => messages,
            _ => Vec::new(),
        })
    }

    /// The error of a body or patch the type cannot hold.
    fn decode_error(&self, object: &Value, source: Source, detail: &str) -> ApiError {
        let kind = self.kind;
        match source {
            Source::Patch => {
                let shown = serde_json::to_string(object).unwrap_or_default();
                ApiError::invalid(
                    "",
                    &crate::status::Subject::default(),
                    vec![cause(
                        "FieldValueInvalid",
                        "patch",
                        format!("Invalid value: {shown:?}: {detail}"),
                    )],
                )
            }
            _ => ApiError::bad_request(format!(
                "{kind} in version {:?} cannot be handled as a {kind}: {detail}",
                self.version
            )),
        }
    }

    /// Server-side apply's error for a configuration that does not fit the schema (a 500, as
    /// kube-apiserver answers an error that is not a Status).
    fn apply_error(&self, object: &Value, errors: &[String]) -> ApiError {
        let meta = &object["metadata"];
        let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
        let joined = match errors {
            [one] => one.clone(),
            many => format!("errors:\n  {}", many.join("\n  ")),
        };
        ApiError::new(
            500,
            "",
            format!(
                "failed to create typed patch object ({}/{}; {}/{}, Kind={}): {joined}",
                text(&meta["namespace"]),
                text(&meta["name"]),
                self.rt.group,
                self.rt.version,
                self.rt.kind
            ),
        )
    }

    /// Go's `json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of
    /// type int32` for a value the type cannot hold (serde's message for anything else).
    fn go_type_error(
        &self,
        schema: &TypeSchema,
        path: &[Step],
        value: &Value,
        serde: &str,
    ) -> String {
        let Some(walk) = schema.walk(path) else {
            return serde.to_string();
        };
        if let (Some(text), Some("byte")) = (
            value.as_str(),
            schema.resolve(&walk.target).1["format"].as_str(),
        ) && let Some(at) = base64_error_at(text)
        {
            return format!("illegal base64 data at input byte {at}");
        }
        if !serde.starts_with("invalid type") && !serde.starts_with("invalid value: integer") {
            return serde.to_string();
        }
        let go = schema.go_type(&walk.target);
        let got = match value {
            Value::Number(n) if go.starts_with("int") || go.starts_with("uint") => {
                format!("number {n}")
            }
            other => json_type(other).to_string(),
        };
        // A custom resource's metadata is decoded on its own: its fields are named from there
        // (`ObjectMeta.labels`), a built-in kind's from the object (`ObjectMeta.metadata.labels`).
        let fields: Vec<&str> = walk.fields.iter().map(String::as_str).collect();
        format!(
            "json: cannot unmarshal {got} into Go struct field {}.{} of type {go}",
            walk.strukt,
            fields.join(".")
        )
    }

    /// Structured-merge-diff's message for a value of the wrong type in an apply configuration.
    fn smd_type_error(
        &self,
        schema: &TypeSchema,
        path: &[Step],
        value: &Value,
        object: &Value,
    ) -> String {
        let at = self.smd_path(object, &[self.at.clone(), path.to_vec()].concat());
        let expected = schema
            .walk(path)
            .and_then(|w| {
                schema.resolve(&w.target).1["type"]
                    .as_str()
                    .map(str::to_string)
            })
            .unwrap_or_default();
        let detail = match expected.as_str() {
            "integer" | "number" => format!(
                "expected numeric (int or float), got {}",
                go_dynamic_type(value)
            ),
            "string" => format!(
                "expected string, got &value.valueUnstructured{{Value:{}}}",
                go_sharp(value)
            ),
            "boolean" => format!("expected boolean, got &{{{}}}", go_plain(value)),
            "array" => format!("expected list, got &{{{}}}", go_plain(value)),
            _ => format!("expected map, got &{{{}}}", go_plain(value)),
        };
        format!("{at}: {detail}")
    }

    /// A path as structured-merge-diff prints it: `.spec.containers[name="app"].image`.
    fn smd_path(&self, object: &Value, path: &[Step]) -> String {
        let ssa = SsaSchema::new(&self.rt.api_version(), &self.rt.kind, self.rt.custom);
        let mut out = String::new();
        let mut names: Vec<&str> = Vec::new();
        let mut node = object;
        for step in path {
            match step {
                Step::Key(k) => {
                    out.push('.');
                    out.push_str(k);
                    names.push(k);
                    node = &node[k.as_str()];
                }
                Step::Index(i) => {
                    let item = &node[*i];
                    match ssa.list_type(&names) {
                        ListType::Map(keys) => {
                            let parts: Vec<String> = keys
                                .iter()
                                .filter(|k| !item[k.as_str()].is_null())
                                .map(|k| format!("{k}={}", item[k.as_str()]))
                                .collect();
                            out.push_str(&format!("[{}]", parts.join(",")));
                        }
                        ListType::Set => out.push_str(&format!("[={item}]")),
                        ListType::Atomic => out.push_str(&format!("[{i}]")),
                    }
                    node = item;
                }
            }
        }
        out
    }
}

/// A path as kube's strict decoder prints it: `spec.rules[0].host`.
fn kube_path(path: &[Step]) -> String {
    let mut out = String::new();
    for step in path {
        match step {
            Step::Key(k) if out.is_empty() => out.push_str(k),
            Step::Key(k) => {
                out.push('.');
                out.push_str(k);
            }
            Step::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

fn value_at<'a>(mut node: &'a Value, path: &[Step]) -> Option<&'a Value> {
    for step in path {
        node = match step {
            Step::Key(k) => node.get(k)?,
            Step::Index(i) => node.get(i)?,
        };
    }
    Some(node)
}

fn value_at_mut<'a>(mut node: &'a mut Value, path: &[Step]) -> Option<&'a mut Value> {
    for step in path {
        node = match step {
            Step::Key(k) => node.get_mut(k)?,
            Step::Index(i) => node.get_mut(i)?,
        };
    }
    Some(node)
}

fn remove_at(object: &mut Value, path: &[Step]) {
    let Some((Step::Key(last), parent)) = path.split_last() else {
        return;
    };
    if let Some(Value::Object(m)) = value_at_mut(object, parent) {
        m.remove(last);
    }
}

/// A kind's schema, generated when a message needs it.
struct TypeSchema {
    root: Value,
    name: String,
    definitions: Map<String, Value>,
}

/// Where a path leads in a schema: the innermost struct holding the last field, the field names
/// on the way (as Go's decoder joins them), and the schema of the value there.
struct Walk {
    strukt: String,
    fields: Vec<String>,
    target: Value,
}

impl TypeSchema {
    fn of(typed: &Builtin) -> Self {
        let mut generator = schemars::generate::SchemaSettings::openapi3().into_generator();
        (typed.define)(&mut generator);
        let definitions = generator.take_definitions(true);
        let name = (typed.schema_name)().into_owned();
        Self {
            root: definitions.get(&name).cloned().unwrap_or_default(),
            name,
            definitions,
        }
    }

    /// `node` with a `$ref` (bare or as the single `allOf`) followed: (definition name, schema).
    fn resolve<'a>(&'a self, node: &'a Value) -> (Option<&'a str>, &'a Value) {
        match reference(node) {
            Some(name) => (Some(name), self.definitions.get(name).unwrap_or(node)),
            None => (None, node),
        }
    }

    fn walk(&self, path: &[Step]) -> Option<Walk> {
        let mut name: &str = &self.name;
        let mut node = &self.root;
        let mut strukt = short(name).to_string();
        let mut fields = Vec::new();
        let mut target = &self.root;
        for step in path {
            let child = match step {
                Step::Key(k) => match node["properties"].get(k) {
                    Some(p) => {
                        strukt = short(name).to_string();
                        fields.push(k.clone());
                        p
                    }
                    None => node.get("additionalProperties").filter(|a| a.is_object())?,
                },
                Step::Index(_) => node.get("items")?,
            };
            target = child;
            let (child_name, resolved) = self.resolve(child);
            if let Some(n) = child_name {
                name = n;
            }
            node = resolved;
        }
        Some(Walk {
            strukt,
            fields,
            target: target.clone(),
        })
    }

    /// Removes, below `value` (whose schema is `node`), every empty map or list of an optional field.
    fn omit_empty(&self, node: &Value, value: &mut Value) {
        let (_, node) = self.resolve(node);
        match value {
            Value::Object(map) => {
                if let Some(properties) = node["properties"].as_object() {
                    let required = |name: &str| {
                        node["required"]
                            .as_array()
                            .is_some_and(|r| r.iter().any(|f| f == name))
                    };
                    map.retain(|name, field| {
                        let Some(schema) = properties.get(name) else {
                            return true;
                        };
                        let (_, schema) = self.resolve(schema);
                        let collection = schema["type"] == "array"
                            || (schema["type"] == "object"
                                && schema["additionalProperties"].is_object());
                        let empty = match field {
                            Value::Object(m) => m.is_empty(),
                            Value::Array(a) => a.is_empty(),
                            _ => false,
                        };
                        !(collection && empty && !required(name))
                    });
                    for (name, field) in map.iter_mut() {
                        if let Some(schema) = properties.get(name) {
                            self.omit_empty(schema, field);
                        }
                    }
                } else if node["additionalProperties"].is_object() {
                    for field in map.values_mut() {
                        self.omit_empty(&node["additionalProperties"], field);
                    }
                }
            }
            Value::Array(items) if node["items"].is_object() => {
                for item in items {
                    self.omit_empty(&node["items"], item);
                }
            }
            _ => {}
        }
    }

    /// The Go type a schema node decodes into (`int32`, `v1.PodSpec`, `map[string]string`).
    fn go_type(&self, node: &Value) -> String {
        if let Some(name) = reference(node) {
            return short_package(name);
        }
        match (node["type"].as_str(), node["format"].as_str()) {
            (Some("integer"), Some("int32")) => "int32".into(),
            (Some("integer"), _) => "int64".into(),
            (Some("number"), _) => "float64".into(),
            (Some("boolean"), _) => "bool".into(),
            (Some("string"), Some("byte")) => "[]uint8".into(),
            (Some("string"), _) => "string".into(),
            (Some("array"), _) => format!("[]{}", self.go_type(&node["items"])),
            (Some("object"), _) if node["additionalProperties"].is_object() => {
                format!("map[string]{}", self.go_type(&node["additionalProperties"]))
            }
            _ => "interface {}".into(),
        }
    }
}

fn reference(node: &Value) -> Option<&str> {
    let r = node["$ref"]
        .as_str()
        .or_else(|| match node["allOf"].as_array() {
            Some(all) if all.len() == 1 => all[0]["$ref"].as_str(),
            _ => None,
        })?;
    r.rsplit('/').next()
}

/// `DeploymentSpec` of `io.k8s.api.apps.v1.DeploymentSpec`.
fn short(definition: &str) -> &str {
    definition.rsplit('.').next().unwrap_or(definition)
}

/// `v1.DeploymentSpec` of `io.k8s.api.apps.v1.DeploymentSpec`, as Go names a type.
fn short_package(definition: &str) -> String {
    let mut parts = definition.rsplit('.');
    let ty = parts.next().unwrap_or_default();
    match parts.next() {
        Some(package) => format!("{package}.{ty}"),
        None => ty.to_string(),
    }
}

/// Rewrites a value Go's decoder accepts but the Rust type does not: a `null` map or list item
/// becomes the item type's zero value, as Go leaves it.
fn fix(schema: &TypeSchema, path: &[Step], value: &mut Value) -> Option<()> {
    match value {
        Value::Null => {
            let walk = schema.walk(path)?;
            let (_, target) = schema.resolve(&walk.target);
            *value = match target["type"].as_str() {
                Some("string") => Value::String(String::new()),
                Some("integer" | "number") => Value::from(0),
                Some("boolean") => Value::Bool(false),
                Some("array") => Value::Array(Vec::new()),
                _ => Value::Object(Map::new()),
            };
            Some(())
        }
        _ => None,
    }
}

/// Where Go's `encoding/base64` stops decoding `text` (standard alphabet, padded), if it does.
fn base64_error_at(text: &str) -> Option<usize> {
    use base64::Engine as _;
    match base64::engine::general_purpose::STANDARD
        .decode(text)
        .err()?
    {
        base64::DecodeError::InvalidByte(at, _) | base64::DecodeError::InvalidLastSymbol(at, _) => {
            Some(at)
        }
        base64::DecodeError::InvalidLength(len) => Some(len),
        base64::DecodeError::InvalidPadding => Some(text.len()),
    }
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Go's `%T` of a decoded JSON value.
fn go_dynamic_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float64",
        Value::Number(_) => "int64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

/// Go's `%#v` of a decoded JSON value.
fn go_sharp(value: &Value) -> String {
    go_format(value, true)
}

/// Go's `%v` of a decoded JSON value.
fn go_plain(value: &Value) -> String {
    go_format(value, false)
}

/// Go's `%#v` (`sharp`) or `%v` of a decoded JSON value: maps with their keys sorted.
fn go_format(value: &Value, sharp: bool) -> String {
    let join = |parts: Vec<String>| parts.join(if sharp { ", " } else { " " });
    match value {
        Value::Null if sharp => "interface {}(nil)".into(),
        Value::Null => "<nil>".into(),
        Value::String(s) if sharp => format!("{s:?}"),
        Value::String(s) => s.clone(),
        Value::Array(items) => {
            let items = join(items.iter().map(|v| go_format(v, sharp)).collect());
            if sharp {
                format!("[]interface {{}}{{{items}}}")
            } else {
                format!("[{items}]")
            }
        }
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let fields = keys.iter().map(|k| {
                let v = go_format(&m[*k], sharp);
                if sharp {
                    format!("{k:?}:{v}")
                } else {
                    format!("{k}:{v}")
                }
            });
            let fields = join(fields.collect());
            if sharp {
                format!("map[string]interface {{}}{{{fields}}}")
            } else {
                format!("map[{fields}]")
            }
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::builtin;
    use serde_json::json;

    #[test]
    fn wrong_types_are_named_as_go_names_them() {
        let mut d = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "a"},
            "spec": {"replicas": "3"}});
        let err = decode(&builtin("apps", "Deployment"), &mut d, Source::Create, None).unwrap_err();
        assert_eq!(err.code, 400);
        assert_eq!(
            err.message,
            "Deployment in version \"v1\" cannot be handled as a Deployment: json: cannot unmarshal \
             string into Go struct field DeploymentSpec.spec.replicas of type int32"
        );
        let mut bad = json!({"data": {"a": "not base64!"}});
        let err = decode(&builtin("", "Secret"), &mut bad, Source::Create, None).unwrap_err();
        assert_eq!(
            (err.code, err.message.as_str()),
            (
                400,
                "Secret in version \"v1\" cannot be handled as a Secret: illegal base64 data at \
                 input byte 3"
            )
        );
        let mut cm = json!({"metadata": {"name": "a", "labels": {"x": 1}}});
        let err = decode(&builtin("", "ConfigMap"), &mut cm, Source::Update, None).unwrap_err();
        assert!(
            err.message.ends_with(
                "cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string"
            ),
            "{}",
            err.message
        );
        let mut pod =
            json!({"spec": {"containers": [{"name": "a", "ports": [{"containerPort": 3.5}]}]}});
        let err = decode(&builtin("", "Pod"), &mut pod, Source::Create, None).unwrap_err();
        assert!(
            err.message.ends_with(
                "cannot unmarshal number 3.5 into Go struct field \
                 ContainerPort.spec.containers.ports.containerPort of type int32"
            ),
            "{}",
            err.message
        );
    }

    #[test]
    fn unknown_fields_follow_field_validation() {
        let role = || {
            json!({"metadata": {"name": "r"}, "rules": [{"verbs": ["get"], "colour": "red"}],
                "spec": {"foo": 1}})
        };
        let rt = builtin("rbac.authorization.k8s.io", "Role");
        let mut warned = role();
        let warnings = decode(&rt, &mut warned, Source::Create, None).unwrap();
        assert_eq!(
            warnings,
            [
                "unknown field \"rules[0].colour\"",
                "unknown field \"spec\""
            ]
        );
        assert_eq!(
            warned,
            json!({"metadata": {"name": "r"}, "rules": [{"verbs": ["get"]}]})
        );
        let mut ignored = role();
        assert!(
            decode(&rt, &mut ignored, Source::Create, Some("Ignore"))
                .unwrap()
                .is_empty()
        );
        assert_eq!(ignored, warned);
        let err = decode(&rt, &mut role(), Source::Create, Some("Strict")).unwrap_err();
        assert_eq!(
            err.message,
            "Role in version \"v1\" cannot be handled as a Role: strict decoding error: unknown \
             field \"rules[0].colour\", unknown field \"spec\""
        );
        let err = decode(&rt, &mut role(), Source::Create, Some("Loud")).unwrap_err();
        assert_eq!(err.code, 422);
    }

    #[test]
    fn apply_refuses_what_the_schema_does_not_declare() {
        let mut d = json!({"metadata": {"name": "web", "namespace": "ns"},
            "spec": {"template": {"spec": {"containers": [{"name": "app", "colour": "red"}]}}}});
        let err = decode(
            &builtin("apps", "Deployment"),
            &mut d,
            Source::Apply,
            Some("Ignore"),
        )
        .unwrap_err();
        assert_eq!(err.code, 500);
        assert_eq!(
            err.message,
            "failed to create typed patch object (ns/web; apps/v1, Kind=Deployment): \
             .spec.template.spec.containers[name=\"app\"].colour: field not declared in schema"
        );
        let mut d = json!({"metadata": {"name": "web"}, "spec": {"replicas": "x"}});
        let err = decode(&builtin("apps", "Deployment"), &mut d, Source::Apply, None).unwrap_err();
        assert!(
            err.message
                .ends_with(".spec.replicas: expected numeric (int or float), got string"),
            "{}",
            err.message
        );
    }

    #[test]
    fn quantities_may_be_numbers_and_null_items_are_zero_values() {
        // A number is a Quantity; a null label value is Go's zero value.
        let mut pod = json!({"metadata": {"annotations": {"a": null}},
            "spec": {"containers": [{"name": "a", "resources": {"limits": {"cpu": 1}}}]}});
        assert!(
            decode(&builtin("", "Pod"), &mut pod, Source::Create, None)
                .unwrap()
                .is_empty()
        );
        assert_eq!(
            pod["spec"]["containers"][0]["resources"]["limits"]["cpu"],
            1
        );
        assert_eq!(pod["metadata"]["annotations"]["a"], "");
    }

    #[test]
    fn custom_resources_decode_their_metadata() {
        let crd = json!({"spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"kind": "Widget", "plural": "widgets"}, "versions": [{"name": "v1"}]}});
        let rt = crate::registry::from_crd(&crd).remove(0);
        let mut w = json!({"metadata": {"name": "w", "colour": "red"}, "spec": {"anything": 1}});
        let warnings = decode(&rt, &mut w, Source::Create, None).unwrap();
        assert_eq!(warnings, ["unknown field \"metadata.colour\""]);
        assert_eq!(
            w,
            json!({"metadata": {"name": "w"}, "spec": {"anything": 1}})
        );
    }
}
