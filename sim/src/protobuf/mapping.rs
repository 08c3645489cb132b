//! The one mapping between Kubernetes protobuf messages and the JSON objects krt-sim stores,
//! driven by the message descriptors: a field's JSON name is its proto name (but for the few
//! [`renamed`] ones, read off k8s-openapi's schemas), scalars map to JSON scalars (int64 as
//! numbers, bytes as base64), messages to objects, repeated fields to arrays, maps to objects —
//! except for the types Go gives their own JSON encoding (see [`Special`]).
//!
//! Go's marshaller writes every non-pointer field, so a Go client's body carries
//! `metadata.uid: ""`, `generation: 0`, `hostPort: 0` or an empty `creationTimestamp`. Reading
//! protobuf, an empty singular string, an empty `Time`, and a zero number are therefore absent,
//! as a Go server reads them (a non-pointer zero is unset there) — except the numbers
//! documented with a default (`spec.replicas: 0`, `backoffLimit: 0`, `runAsUser: 0`), Go
//! pointers whose zero means what it says. Booleans are kept as sent: a pointer's `false`
//! (`automountServiceAccountToken`, `enableServiceLinks`) overrides a `true` default, and a
//! non-pointer's `false` is its default anyway. Map values and list items are kept whatever
//! they hold.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use protobuf::MessageDyn;
use protobuf::reflect::{
    FieldDescriptor, MessageDescriptor, ReflectFieldRef, ReflectValueBox, ReflectValueRef,
    RuntimeFieldType, RuntimeType,
};
use schemars::generate::SchemaSettings;
use serde_json::{Map, Number, Value};

use crate::meta;

/// A message type whose JSON form is not an object of its fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Special {
    /// `metav1.Time`: `{seconds, nanos}` as RFC 3339 with second precision; empty when zero.
    Time,
    /// `metav1.MicroTime`: `{seconds, nanos}` as RFC 3339 with microseconds.
    MicroTime,
    /// `resource.Quantity`: `{string}` as that string.
    Quantity,
    /// `intstr.IntOrString`: `{type, intVal, strVal}` as a number or a string.
    IntOrString,
    /// `runtime.RawExtension`, `metav1.FieldsV1`, apiextensions' `JSON`: one bytes field holding
    /// JSON text, as that JSON value.
    RawJson,
    /// `JSONSchemaPropsOrArray`: `{schema}` as the schema, `{jSONSchemas}` as an array.
    SchemaOrArray,
    /// `JSONSchemaPropsOrBool`: `{schema}` as the schema, else `{allows}` as a boolean.
    SchemaOrBool,
    /// `JSONSchemaPropsOrStringArray`: `{schema}` as the schema, `{property}` as an array.
    SchemaOrStringArray,
    /// A Go named string slice (`metav1.Verbs`, `ExtraValue`): `{items}` as a JSON array.
    StringList,
}

/// How a field appears in JSON when its proto name is not its JSON name.
enum Renamed {
    /// Under another name: `aPIGroup` is `apiGroup`, `ref` is `$ref`, `xKubernetesListType` is
    /// `x-kubernetes-list-type`.
    To(String),
    /// Embedded with `json:",inline"` (`Volume.volumeSource`, `Probe.handler`): its fields
    /// are the parent's.
    Inline,
}

/// What the kinds' OpenAPI schemas (k8s-openapi's) tell about their fields, keyed
/// `Message.field`.
struct Facts {
    /// The fields whose JSON name is not their proto name: the property equal to the proto
    /// name but for case and punctuation, or none for a message embedded inline.
    renamed: HashMap<String, Renamed>,
    /// The number fields whose zero means something: those documented with a default
    /// (`replicas`: "Defaults to 1", `runAsUser`, `backoffLimit`), which Go makes pointers to
    /// tell an explicit zero from unset.
    zero_kept: HashSet<String>,
}

fn facts() -> &'static Facts {
    static FACTS: OnceLock<Facts> = OnceLock::new();
    FACTS.get_or_init(|| {
        let mut generator = SchemaSettings::draft07().into_generator();
        for builtin in crate::kinds::BUILTINS.iter().chain([&crate::kinds::SCALE]) {
            (builtin.define)(&mut generator);
        }
        let squash = |name: &str| -> String {
            name.chars()
                .filter(char::is_ascii_alphanumeric)
                .map(|c| c.to_ascii_lowercase())
                .collect()
        };
        let mut renamed = HashMap::new();
        let mut zero_kept = HashSet::new();
        for (name, schema) in generator.take_definitions(true) {
            let Some(properties) = schema["properties"].as_object() else {
                continue;
            };
            let proto_name = name.trim_start_matches("io.k8s.").replace('-', "_");
            let Some(message) = super::messages::by_full_name(&proto_name) else {
                continue;
            };
            for field in message.fields() {
                let key = format!("{}.{}", message.full_name(), field.name());
                if let Some(property) = properties.get(field.name()) {
                    let documented = property["description"].as_str().unwrap_or_default();
                    if documented.to_ascii_lowercase().contains("default") {
                        zero_kept.insert(key);
                    }
                    continue;
                }
                let wanted = squash(field.name());
                if let Some(property) = properties.keys().find(|p| squash(p) == wanted) {
                    renamed.insert(key, Renamed::To(property.clone()));
                } else if matches!(
                    field.runtime_field_type(),
                    RuntimeFieldType::Singular(RuntimeType::Message(_))
                ) {
                    renamed.insert(key, Renamed::Inline);
                }
            }
        }
        Facts { renamed, zero_kept }
    })
}

fn renamed() -> &'static HashMap<String, Renamed> {
    &facts().renamed
}

/// Whether a zero number read from protobuf is kept: only for the fields documented with a
/// default, as a Go non-pointer field's zero is unset.
fn keeps_zero(message: &MessageDescriptor, field: &FieldDescriptor) -> bool {
    facts()
        .zero_kept
        .contains(&format!("{}.{}", message.full_name(), field.name()))
}

fn is_inlined(message: &MessageDescriptor, field: &FieldDescriptor) -> bool {
    let key = format!("{}.{}", message.full_name(), field.name());
    matches!(renamed().get(&key), Some(Renamed::Inline))
}

/// The package of apiextensions' `JSONSchemaProps` and its companions (`v1` or `v1beta1`).
const APIEXTENSIONS: &str = "apiextensions_apiserver.pkg.apis.apiextensions.";

fn special(message: &MessageDescriptor) -> Option<Special> {
    let full_name = message.full_name();
    let in_apiextensions = full_name.starts_with(APIEXTENSIONS);
    let found = match (full_name, message.name()) {
        ("apimachinery.pkg.apis.meta.v1.Time", _) => Some(Special::Time),
        ("apimachinery.pkg.apis.meta.v1.MicroTime", _) => Some(Special::MicroTime),
        ("apimachinery.pkg.api.resource.Quantity", _) => Some(Special::Quantity),
        ("apimachinery.pkg.util.intstr.IntOrString", _) => Some(Special::IntOrString),
        ("apimachinery.pkg.runtime.RawExtension" | "apimachinery.pkg.apis.meta.v1.FieldsV1", _) => {
            Some(Special::RawJson)
        }
        (_, "JSON") if in_apiextensions => Some(Special::RawJson),
        (_, "JSONSchemaPropsOrArray") if in_apiextensions => Some(Special::SchemaOrArray),
        (_, "JSONSchemaPropsOrBool") if in_apiextensions => Some(Special::SchemaOrBool),
        (_, "JSONSchemaPropsOrStringArray") if in_apiextensions => {
            Some(Special::SchemaOrStringArray)
        }
        _ => None,
    };
    if found.is_some() {
        return found;
    }
    let mut fields = message.fields();
    match (fields.next(), fields.next()) {
        (Some(only), None)
            if only.name() == "items"
                && matches!(
                    only.runtime_field_type(),
                    RuntimeFieldType::Repeated(RuntimeType::String)
                ) =>
        {
            Some(Special::StringList)
        }
        _ => None,
    }
}

/// A field's JSON name: its proto name, unless [`renamed`].
fn json_name(message: &MessageDescriptor, field: &FieldDescriptor) -> String {
    let key = format!("{}.{}", message.full_name(), field.name());
    match renamed().get(&key) {
        Some(Renamed::To(name)) => name.clone(),
        _ => field.name().to_string(),
    }
}

fn field<'a>(message: &'a dyn MessageDyn, name: &str) -> Option<ReflectValueRef<'a>> {
    message
        .descriptor_dyn()
        .field_by_name(name)?
        .get_singular(message)
}

/// The JSON value of `message`, or `None` for a `Time` or `RawExtension` that holds nothing.
///
/// # Errors
/// The raw bytes of a `RawExtension`-like field are neither JSON nor an enveloped protobuf
/// object.
pub fn to_json(message: &dyn MessageDyn) -> Result<Option<Value>, String> {
    let descriptor = message.descriptor_dyn();
    let number = |name: &str| {
        field(message, name).and_then(|v| match v {
            ReflectValueRef::I32(n) => Some(i64::from(n)),
            other => other.to_i64(),
        })
    };
    let text = |name: &str| field(message, name).and_then(|v| v.to_str().map(str::to_string));
    let nested = |name: &str| match field(message, name) {
        Some(ReflectValueRef::Message(m)) => to_json(&*m),
        _ => Ok(None),
    };
    let strings = |name: &str| -> Result<Value, String> {
        let field = descriptor.field_by_name(name).ok_or("no such field")?;
        repeated_to_json(&field, message)
    };
    let Some(special) = special(&descriptor) else {
        return object_to_json(message).map(Some);
    };
    Ok(match special {
        Special::Time | Special::MicroTime => {
            let Some(seconds) = number("seconds") else {
                return Ok(None);
            };
            let nanos = number("nanos").unwrap_or(0);
            Some(Value::String(format_time(
                seconds,
                (special == Special::MicroTime).then_some(nanos),
            )))
        }
        Special::Quantity => text("string").map(Value::String),
        Special::IntOrString => match number("type") {
            Some(1) => Some(Value::String(text("strVal").unwrap_or_default())),
            _ => Some(Value::from(number("intVal").unwrap_or(0))),
        },
        Special::RawJson => {
            let raw = descriptor
                .fields()
                .next()
                .and_then(|f| f.get_singular(message))
                .and_then(|v| match v {
                    ReflectValueRef::Bytes(b) => Some(b.to_vec()),
                    _ => None,
                });
            match raw {
                None => None,
                Some(raw) => Some(raw_to_json(&raw)?),
            }
        }
        Special::SchemaOrArray => match nested("schema")? {
            Some(schema) => Some(schema),
            None => Some(strings("jSONSchemas")?),
        },
        Special::SchemaOrBool => match nested("schema")? {
            Some(schema) => Some(schema),
            None => Some(Value::Bool(
                field(message, "allows").and_then(|v| v.to_bool()) == Some(true),
            )),
        },
        Special::SchemaOrStringArray => match nested("schema")? {
            Some(schema) => Some(schema),
            None => Some(strings("property")?),
        },
        Special::StringList => Some(strings("items")?),
    })
}

/// JSON text (or an enveloped protobuf object) held in a bytes field.
fn raw_to_json(raw: &[u8]) -> Result<Value, String> {
    if raw.starts_with(&super::envelope::MAGIC) {
        return super::decode_object(raw);
    }
    serde_json::from_slice(raw).map_err(|e| format!("embedded object is not JSON: {e}"))
}

fn object_to_json(message: &dyn MessageDyn) -> Result<Value, String> {
    let descriptor = message.descriptor_dyn();
    let mut object = Map::new();
    for field in descriptor.fields() {
        let value = match field.get_reflect(message) {
            ReflectFieldRef::Optional(optional) => match optional.value() {
                None | Some(ReflectValueRef::String("")) => None,
                Some(
                    ReflectValueRef::I32(0)
                    | ReflectValueRef::I64(0)
                    | ReflectValueRef::U32(0)
                    | ReflectValueRef::U64(0),
                ) if !keeps_zero(&descriptor, &field) => None,
                Some(value) => value_to_json(value)?,
            },
            ReflectFieldRef::Repeated(items) if items.is_empty() => None,
            ReflectFieldRef::Repeated(_) => Some(repeated_to_json(&field, message)?),
            ReflectFieldRef::Map(map) if map.is_empty() => None,
            ReflectFieldRef::Map(map) => {
                let mut entries = Map::new();
                for (key, value) in &map {
                    let key = key.to_str().ok_or("a map key is not a string")?.to_string();
                    entries.insert(key, value_to_json(value)?.unwrap_or(Value::Null));
                }
                Some(Value::Object(entries))
            }
        };
        match value {
            Some(Value::Object(fields)) if is_inlined(&descriptor, &field) => object.extend(fields),
            Some(value) => {
                object.insert(json_name(&descriptor, &field), value);
            }
            None => {}
        }
    }
    Ok(Value::Object(object))
}

fn repeated_to_json(field: &FieldDescriptor, message: &dyn MessageDyn) -> Result<Value, String> {
    let items = field.get_repeated(message);
    let mut out = Vec::with_capacity(items.len());
    for item in &items {
        out.push(value_to_json(item)?.unwrap_or(Value::Null));
    }
    Ok(Value::Array(out))
}

fn value_to_json(value: ReflectValueRef) -> Result<Option<Value>, String> {
    Ok(Some(match value {
        ReflectValueRef::U32(n) => Value::from(n),
        ReflectValueRef::U64(n) => Value::from(n),
        ReflectValueRef::I32(n) => Value::from(n),
        ReflectValueRef::I64(n) => Value::from(n),
        ReflectValueRef::F32(n) => {
            Number::from_f64(f64::from(n)).map_or(Value::Null, Value::Number)
        }
        ReflectValueRef::F64(n) => Number::from_f64(n).map_or(Value::Null, Value::Number),
        ReflectValueRef::Bool(b) => Value::Bool(b),
        ReflectValueRef::String(s) => Value::String(s.to_string()),
        ReflectValueRef::Bytes(b) => Value::String(STANDARD.encode(b)),
        ReflectValueRef::Enum(_, n) => Value::from(n),
        ReflectValueRef::Message(m) => return to_json(&*m),
    }))
}

/// `2006-01-02T15:04:05Z`, or with `nanos` given `2006-01-02T15:04:05.000000Z` (microseconds).
fn format_time(seconds: i64, nanos: Option<i64>) -> String {
    let text = meta::format_unix(u64::try_from(seconds).unwrap_or(0));
    match nanos {
        None => text,
        Some(nanos) => format!("{}.{:06}Z", text.trim_end_matches('Z'), nanos / 1_000),
    }
}

/// Seconds and nanoseconds of an RFC 3339 UTC time with optional fraction.
fn parse_time(text: &str) -> Option<(i64, i32)> {
    let seconds = meta::parse_rfc3339(text)?;
    let fraction = text.get(19..)?.trim_end_matches('Z');
    let nanos = match fraction.strip_prefix('.') {
        None if fraction.is_empty() => 0,
        None => return None,
        Some(digits) => {
            let padded = format!("{digits:0<9}");
            padded.get(..9)?.parse().ok()?
        }
    };
    Some((seconds, nanos))
}

/// Why an object with a field its message lacks is not encoded: k8s-rs-pb's descriptors are
/// Kubernetes 1.35's, and the fields 1.36 added have no number to be written under.
pub const NO_FIELD: &str = "no such field in the protobuf messages krt-sim has (Kubernetes 1.35's, older than its 1.36 kinds)";

/// The JSON keys an object of message `descriptor` may have: its fields', an inlined
/// message's, and the type meta every object carries; worked out once per message.
fn json_fields(descriptor: &MessageDescriptor) -> Arc<HashSet<String>> {
    static BY_MESSAGE: OnceLock<Mutex<HashMap<String, Arc<HashSet<String>>>>> = OnceLock::new();
    let cache = BY_MESSAGE.get_or_init(Default::default);
    let full_name = descriptor.full_name();
    if let Some(known) = cache
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(full_name)
    {
        return known.clone();
    }
    let mut keys: HashSet<String> = ["apiVersion", "kind"].map(String::from).into();
    for field in descriptor.fields() {
        match field.runtime_field_type() {
            RuntimeFieldType::Singular(RuntimeType::Message(inner))
                if is_inlined(descriptor, &field) =>
            {
                keys.extend(json_fields(&inner).iter().cloned());
            }
            _ => {
                keys.insert(json_name(descriptor, &field));
            }
        }
    }
    let keys = Arc::new(keys);
    cache
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(full_name.to_string(), keys.clone());
    keys
}

/// The message of type `descriptor` that `value` is the JSON form of. `apiVersion`, `kind`
/// (the envelope's) and `null`s are left out.
///
/// # Errors
/// A value of the wrong JSON type for its field, or a field the message does not have
/// ([`NO_FIELD`]), with the field's path.
pub fn from_json(
    value: &Value,
    descriptor: &MessageDescriptor,
) -> Result<Box<dyn MessageDyn>, String> {
    message_from_json(value, descriptor, true)
}

/// [`from_json`]; `own_keys`: whether `value`'s keys are all the message's (not for a message
/// inlined in its parent's object, which holds the parent's keys too).
fn message_from_json(
    value: &Value,
    descriptor: &MessageDescriptor,
    own_keys: bool,
) -> Result<Box<dyn MessageDyn>, String> {
    let mut message = descriptor.new_instance();
    let set = |message: &mut Box<dyn MessageDyn>, name: &str, value: ReflectValueBox| {
        if let Some(field) = descriptor.field_by_name(name) {
            field.set_singular_field(&mut **message, value);
        }
    };
    let schema = |value: &Value| -> Result<ReflectValueBox, String> {
        let field = descriptor
            .field_by_name("schema")
            .ok_or("no schema field")?;
        convert(value, &field.singular_runtime_type(), "schema")
    };
    let push_all = |message: &mut Box<dyn MessageDyn>, name: &str, items: &[Value]| {
        let field = descriptor.field_by_name(name).ok_or("no such field")?;
        fill_repeated(&mut **message, &field, items, name)
    };
    match special(descriptor) {
        None => {
            let object = value
                .as_object()
                .ok_or_else(|| format!("expected an object, got {value}"))?;
            if own_keys {
                let known = json_fields(descriptor);
                if let Some((key, _)) = object
                    .iter()
                    .find(|(key, value)| !value.is_null() && !known.contains(key.as_str()))
                {
                    return Err(format!("{key}: {NO_FIELD}"));
                }
            }
            for field in descriptor.fields() {
                if is_inlined(descriptor, &field) {
                    if let RuntimeFieldType::Singular(RuntimeType::Message(inner)) =
                        field.runtime_field_type()
                    {
                        let inlined = message_from_json(value, &inner, false)?;
                        field.set_singular_field(&mut *message, ReflectValueBox::Message(inlined));
                    }
                    continue;
                }
                let name = json_name(descriptor, &field);
                match object.get(&name) {
                    None | Some(Value::Null) => {}
                    Some(value) => fill(&mut *message, &field, value, &name)?,
                }
            }
        }
        Some(Special::Time | Special::MicroTime) => {
            let text = value.as_str().ok_or("expected a time string")?;
            let (seconds, nanos) =
                parse_time(text).ok_or_else(|| format!("{text:?} is not an RFC 3339 time"))?;
            let micro = special(descriptor) == Some(Special::MicroTime);
            set(&mut message, "seconds", ReflectValueBox::I64(seconds));
            let nanos = if micro { nanos / 1_000 * 1_000 } else { 0 };
            set(&mut message, "nanos", ReflectValueBox::I32(nanos));
        }
        Some(Special::Quantity) => {
            let text = match value {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                other => return Err(format!("expected a quantity, got {other}")),
            };
            set(&mut message, "string", ReflectValueBox::String(text));
        }
        Some(Special::IntOrString) => match value {
            Value::String(s) => {
                set(&mut message, "type", ReflectValueBox::I64(1));
                set(&mut message, "strVal", ReflectValueBox::String(s.clone()));
            }
            other => {
                let n = other.as_i64().and_then(|n| i32::try_from(n).ok());
                let n = n.ok_or_else(|| format!("expected an int or a string, got {other}"))?;
                set(&mut message, "type", ReflectValueBox::I64(0));
                set(&mut message, "intVal", ReflectValueBox::I32(n));
            }
        },
        Some(Special::RawJson) => {
            let field = descriptor.fields().next().ok_or("no raw field")?;
            let raw = serde_json::to_vec(value).map_err(|e| e.to_string())?;
            field.set_singular_field(&mut *message, ReflectValueBox::Bytes(raw));
        }
        Some(special @ (Special::SchemaOrArray | Special::SchemaOrStringArray)) => match value {
            Value::Array(items) => {
                let name = if special == Special::SchemaOrArray {
                    "jSONSchemas"
                } else {
                    "property"
                };
                push_all(&mut message, name, items)?;
            }
            other => set(&mut message, "schema", schema(other)?),
        },
        Some(Special::SchemaOrBool) => match value {
            Value::Bool(b) => set(&mut message, "allows", ReflectValueBox::Bool(*b)),
            other => {
                set(&mut message, "allows", ReflectValueBox::Bool(true));
                set(&mut message, "schema", schema(other)?);
            }
        },
        Some(Special::StringList) => {
            let items = value.as_array().ok_or("expected an array")?;
            push_all(&mut message, "items", items)?;
        }
    }
    Ok(message)
}

fn fill(
    message: &mut dyn MessageDyn,
    field: &FieldDescriptor,
    value: &Value,
    path: &str,
) -> Result<(), String> {
    match field.runtime_field_type() {
        RuntimeFieldType::Singular(ty) => {
            field.set_singular_field(message, convert(value, &ty, path)?);
        }
        RuntimeFieldType::Repeated(_) => {
            let items = value
                .as_array()
                .ok_or_else(|| format!("{path}: expected an array, got {value}"))?;
            fill_repeated(message, field, items, path)?;
        }
        RuntimeFieldType::Map(key, ty) => {
            if key != RuntimeType::String {
                return Err(format!("{path}: map keys are not strings"));
            }
            let entries = value
                .as_object()
                .ok_or_else(|| format!("{path}: expected an object, got {value}"))?;
            let mut map = field.mut_map(message);
            for (k, v) in entries {
                let v = convert(v, &ty, &format!("{path}.{k}"))?;
                map.insert(ReflectValueBox::String(k.clone()), v);
            }
        }
    }
    Ok(())
}

fn fill_repeated(
    message: &mut dyn MessageDyn,
    field: &FieldDescriptor,
    items: &[Value],
    path: &str,
) -> Result<(), String> {
    let RuntimeFieldType::Repeated(ty) = field.runtime_field_type() else {
        return Err(format!("{path}: not a list"));
    };
    let mut repeated = field.mut_repeated(message);
    for (i, item) in items.iter().enumerate() {
        repeated.push(convert(item, &ty, &format!("{path}[{i}]"))?);
    }
    Ok(())
}

fn convert(value: &Value, ty: &RuntimeType, path: &str) -> Result<ReflectValueBox, String> {
    let wrong = || format!("{path}: expected {ty}, got {value}");
    let int = || value.as_i64().ok_or_else(wrong);
    Ok(match ty {
        RuntimeType::I32 => ReflectValueBox::I32(i32::try_from(int()?).map_err(|_| wrong())?),
        RuntimeType::I64 => ReflectValueBox::I64(int()?),
        RuntimeType::U32 => ReflectValueBox::U32(u32::try_from(int()?).map_err(|_| wrong())?),
        RuntimeType::U64 => ReflectValueBox::U64(value.as_u64().ok_or_else(wrong)?),
        #[expect(
            clippy::cast_possible_truncation,
            reason = "a float field holds an f32"
        )]
        RuntimeType::F32 => ReflectValueBox::F32(value.as_f64().ok_or_else(wrong)? as f32),
        RuntimeType::F64 => ReflectValueBox::F64(value.as_f64().ok_or_else(wrong)?),
        RuntimeType::Bool => ReflectValueBox::Bool(value.as_bool().ok_or_else(wrong)?),
        RuntimeType::String => ReflectValueBox::String(value.as_str().ok_or_else(wrong)?.into()),
        RuntimeType::VecU8 => {
            let text = value.as_str().ok_or_else(wrong)?;
            ReflectValueBox::Bytes(STANDARD.decode(text).map_err(|e| format!("{path}: {e}"))?)
        }
        RuntimeType::Enum(descriptor) => ReflectValueBox::Enum(
            descriptor.clone(),
            i32::try_from(int()?).map_err(|_| wrong())?,
        ),
        RuntimeType::Message(descriptor) => ReflectValueBox::Message(
            from_json(value, descriptor).map_err(|e| format!("{path}.{e}"))?,
        ),
    })
}
