//! One node of a CRD's structural schema (`openAPIV3Schema`): pruning and defaulting
//! (apiextensions-apiserver's `pruning` and `structural/defaulting`), and validation with
//! kube-openapi's messages (type, required, enum, bounds, lengths, item counts).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::StatusCause;
use serde_json::Value;

use crate::kinds::Step;
use crate::status::cause;

/// A schema node.
#[derive(Clone, Copy)]
pub struct Node<'a>(pub &'a Value);

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn join(path: &str, field: &str) -> String {
    if path.is_empty() {
        field.to_string()
    } else {
        format!("{path}.{field}")
    }
}

/// A value as a field error prints it.
fn shown(value: &Value) -> String {
    match value {
        Value::String(s) => format!("{s:?}"),
        other => other.to_string(),
    }
}

impl<'a> Node<'a> {
    fn flag(&self, name: &str) -> bool {
        self.0[name] == true
    }

    /// The schema of property `name`, or of every value of a map (`additionalProperties`).
    pub fn child(&self, name: &str) -> Option<Node<'a>> {
        self.0["properties"]
            .get(name)
            .or_else(|| self.0.get("additionalProperties").filter(|a| a.is_object()))
            .map(Node)
    }

    /// The schema of a list's items.
    pub fn items(&self) -> Option<Node<'a>> {
        self.0.get("items").filter(|i| i.is_object()).map(Node)
    }

    /// Whether the object keeps fields its schema does not declare.
    fn keeps_unknown(&self) -> bool {
        self.flag("x-kubernetes-preserve-unknown-fields") || self.0["additionalProperties"] == true
    }

    /// Whether this node declares its fields (a struct) rather than being a map.
    pub fn declares_fields(&self) -> bool {
        self.0["properties"].is_object() && !self.0["additionalProperties"].is_object()
    }

    /// `x-kubernetes-list-type` and `x-kubernetes-list-map-keys`.
    pub fn list_type(&self) -> (Option<&'a str>, Vec<&'a str>) {
        let keys = self.0["x-kubernetes-list-map-keys"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        (self.0["x-kubernetes-list-type"].as_str(), keys)
    }

    /// Whether the map is `x-kubernetes-map-type: atomic`.
    pub fn atomic_map(&self) -> bool {
        self.0["x-kubernetes-map-type"] == "atomic"
    }

    /// Removes what the schema does not declare and fills in `default`s, below `value`
    /// (`root`: the object itself, whose `apiVersion`, `kind` and `metadata` always stay).
    pub fn prune_and_default(&self, value: &mut Value, root: bool) {
        match value {
            Value::Object(map) => {
                let keeps_meta = root || self.flag("x-kubernetes-embedded-resource");
                let nullable = |n: Option<Node<'_>>| n.is_some_and(|n| n.flag("nullable"));
                map.retain(|k, v| {
                    let declared = self.child(k);
                    (keeps_meta && matches!(k.as_str(), "apiVersion" | "kind" | "metadata"))
                        || (!v.is_null() || nullable(declared) || self.keeps_unknown())
                            && (declared.is_some() || self.keeps_unknown())
                });
                if let Some(props) = self.0["properties"].as_object() {
                    for (name, prop) in props {
                        if let Some(default) = prop.get("default")
                            && !map.contains_key(name)
                        {
                            map.insert(name.clone(), default.clone());
                        }
                    }
                }
                for (k, v) in map.iter_mut() {
                    if keeps_meta && matches!(k.as_str(), "apiVersion" | "kind" | "metadata") {
                        continue;
                    }
                    if let Some(child) = self.child(k) {
                        child.prune_and_default(v, false);
                    }
                }
            }
            Value::Array(items) => {
                if let Some(item) = self.items() {
                    for v in items {
                        item.prune_and_default(v, false);
                    }
                }
            }
            _ => {}
        }
    }

    /// The fields below `value` the schema neither declares nor preserves, as paths, in
    /// document order: what pruning drops and kube-apiserver's decoder reports as unknown
    /// (`root`: the object itself, whose `apiVersion`, `kind` and `metadata` are always known).
    pub fn unknown_fields(&self, value: &Value, root: bool) -> Vec<Vec<Step>> {
        let mut out = Vec::new();
        self.collect_unknown(value, root, &mut Vec::new(), &mut out);
        out
    }

    fn collect_unknown(
        &self,
        value: &Value,
        root: bool,
        at: &mut Vec<Step>,
        out: &mut Vec<Vec<Step>>,
    ) {
        match value {
            Value::Object(map) => {
                let keeps_meta = root || self.flag("x-kubernetes-embedded-resource");
                for (k, v) in map {
                    if keeps_meta && matches!(k.as_str(), "apiVersion" | "kind" | "metadata") {
                        continue;
                    }
                    at.push(Step::Key(k.clone()));
                    match self.child(k) {
                        Some(child) => child.collect_unknown(v, false, at, out),
                        None if !self.keeps_unknown() => out.push(at.clone()),
                        None => {}
                    }
                    at.pop();
                }
            }
            Value::Array(items) => {
                if let Some(item) = self.items() {
                    for (i, v) in items.iter().enumerate() {
                        at.push(Step::Index(i));
                        item.collect_unknown(v, false, at, out);
                        at.pop();
                    }
                }
            }
            _ => {}
        }
    }

    /// The violations of `value` against the schema (from the object's root).
    pub fn validate(&self, value: &Value) -> Vec<StatusCause> {
        let mut out = Vec::new();
        self.check(value, "", &mut out);
        out
    }

    fn check(&self, value: &Value, path: &str, out: &mut Vec<StatusCause>) {
        if !self.type_matches(value, path, out) {
            return;
        }
        self.check_scalar(value, path, out);
        match value {
            Value::Object(map) => {
                for name in self.0["required"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                {
                    if !map.contains_key(name) {
                        out.push(cause(
                            "FieldValueRequired",
                            &join(path, name),
                            "Required value",
                        ));
                    }
                }
                for (k, v) in map {
                    if path.is_empty() && matches!(k.as_str(), "apiVersion" | "kind" | "metadata") {
                        continue;
                    }
                    if let Some(child) = self.child(k) {
                        child.check(v, &join(path, k), out);
                    }
                }
            }
            Value::Array(items) => {
                let count = items.len();
                if let Some(max) = self.0["maxItems"].as_u64()
                    && count as u64 > max
                {
                    out.push(cause(
                        "FieldValueTooMany",
                        path,
                        format!("Too many: {count}: must have at most {max} items"),
                    ));
                }
                if let Some(min) = self.0["minItems"].as_u64()
                    && (count as u64) < min
                {
                    out.push(cause(
                        "FieldValueInvalid",
                        path,
                        format!(
                            "Invalid value: {count}: {path} in body should have at least {min} items"
                        ),
                    ));
                }
                if let Some(item) = self.items() {
                    for (i, v) in items.iter().enumerate() {
                        item.check(v, &format!("{path}[{i}]"), out);
                    }
                }
            }
            _ => {}
        }
    }

    /// Checks the declared `type` (and `x-kubernetes-int-or-string`); false when it does not
    /// match (nothing below is then checked).
    fn type_matches(&self, value: &Value, path: &str, out: &mut Vec<StatusCause>) -> bool {
        let got = json_type(value);
        if value.is_null() && self.flag("nullable") {
            return false;
        }
        let ok = if self.flag("x-kubernetes-int-or-string") {
            matches!(got, "integer" | "string")
        } else {
            match self.0["type"].as_str() {
                None | Some("") => true,
                Some("number") => matches!(got, "integer" | "number"),
                Some("integer") => {
                    got == "integer" || value.as_f64().is_some_and(|f| f.fract() == 0.0)
                }
                Some(want) => got == want,
            }
        };
        if !ok {
            let want = self.0["type"].as_str().unwrap_or("integer or string");
            out.push(cause(
                "FieldValueTypeInvalid",
                path,
                format!("Invalid value: {got:?}: {path} in body must be of type {want}: {got:?}"),
            ));
        }
        ok
    }

    fn check_scalar(&self, value: &Value, path: &str, out: &mut Vec<StatusCause>) {
        if let Some(options) = self.0["enum"].as_array()
            && !options.contains(value)
        {
            let listed: Vec<String> = options.iter().map(shown).collect();
            out.push(cause(
                "FieldValueNotSupported",
                path,
                format!(
                    "Unsupported value: {}: supported values: {}",
                    shown(value),
                    listed.join(", ")
                ),
            ));
        }
        if let Some(n) = value.as_f64() {
            let bound = |name: &str| self.0[name].as_f64();
            if let Some(max) = bound("maximum") {
                let exclusive = self.flag("exclusiveMaximum");
                if n > max || exclusive && n >= max {
                    let how = if exclusive {
                        "less than"
                    } else {
                        "less than or equal to"
                    };
                    out.push(cause(
                        "FieldValueInvalid",
                        path,
                        format!(
                            "Invalid value: {value}: {path} in body should be {how} {}",
                            self.0["maximum"]
                        ),
                    ));
                }
            }
            if let Some(min) = bound("minimum") {
                let exclusive = self.flag("exclusiveMinimum");
                if n < min || exclusive && n <= min {
                    let how = if exclusive {
                        "greater than"
                    } else {
                        "greater than or equal to"
                    };
                    out.push(cause(
                        "FieldValueInvalid",
                        path,
                        format!(
                            "Invalid value: {value}: {path} in body should be {how} {}",
                            self.0["minimum"]
                        ),
                    ));
                }
            }
        }
        if let Some(s) = value.as_str() {
            if let Some(pattern) = self.0["pattern"].as_str()
                && compiled(pattern).is_some_and(|re| !re.is_match(s))
            {
                out.push(cause(
                    "FieldValueInvalid",
                    path,
                    format!("Invalid value: {s:?}: {path} in body should match '{pattern}'"),
                ));
            }
            let chars = s.chars().count() as u64;
            if let Some(max) = self.0["maxLength"].as_u64()
                && chars > max
            {
                out.push(cause(
                    "FieldValueTooLong",
                    path,
                    format!("Too long: may not be more than {max} bytes"),
                ));
            }
            if let Some(min) = self.0["minLength"].as_u64()
                && chars < min
            {
                out.push(cause(
                    "FieldValueInvalid",
                    path,
                    format!(
                        "Invalid value: {s:?}: {path} in body should be at least {min} chars long"
                    ),
                ));
            }
        }
    }
}

/// `pattern` compiled, once per pattern for the process (every write of a custom resource
/// checks its schema's patterns); `None` when it does not compile.
fn compiled(pattern: &str) -> Option<regex::Regex> {
    type Cache = std::collections::HashMap<String, Option<regex::Regex>>;
    static PATTERNS: std::sync::LazyLock<std::sync::Mutex<Cache>> =
        std::sync::LazyLock::new(Default::default);
    PATTERNS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .entry(pattern.to_string())
        .or_insert_with(|| regex::Regex::new(pattern).ok())
        .clone()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({"type": "object", "properties": {
            "spec": {"type": "object", "required": ["title"], "properties": {
                "title": {"type": "string", "maxLength": 20},
                "replicas": {"type": "integer", "minimum": 1, "maximum": 10, "default": 1},
                "size": {"type": "string", "enum": ["small", "large"]},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                "items": {"type": "array", "maxItems": 2, "items": {"type": "object",
                    "properties": {"name": {"type": "string"}}}}}},
            "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}}}})
    }

    #[test]
    fn undeclared_fields_are_pruned_and_defaults_filled() {
        let s = schema();
        let mut cr = json!({"apiVersion": "x/v1", "kind": "W", "metadata": {"name": "a"},
            "spec": {"title": "t", "bogus": 1, "labels": {"a": "b"}, "extra": {"anything": [1]},
                "items": [{"name": "i", "junk": true}]},
            "top": "level"});
        Node(&s).prune_and_default(&mut cr, true);
        assert_eq!(
            cr,
            json!({"apiVersion": "x/v1", "kind": "W", "metadata": {"name": "a"},
                "spec": {"title": "t", "labels": {"a": "b"}, "extra": {"anything": [1]},
                    "items": [{"name": "i"}], "replicas": 1}})
        );
        assert!(Node(&s).validate(&cr).is_empty());
    }

    #[test]
    fn violations_name_their_field_as_kube_openapi_words_them() {
        let s = schema();
        let cr = json!({"spec": {"title": 5, "replicas": 20, "size": "huge",
            "items": [{}, {}, {}]}});
        let found: Vec<(String, String)> = Node(&s)
            .validate(&cr)
            .into_iter()
            .map(|c| (c.field.unwrap(), c.message.unwrap()))
            .collect();
        assert_eq!(
            found,
            [
                (
                    "spec.title".into(),
                    "Invalid value: \"integer\": spec.title in body must be of type string: \"integer\""
                        .into()
                ),
                (
                    "spec.replicas".into(),
                    "Invalid value: 20: spec.replicas in body should be less than or equal to 10"
                        .into()
                ),
                (
                    "spec.size".into(),
                    "Unsupported value: \"huge\": supported values: \"small\", \"large\"".into()
                ),
                ("spec.items".into(), "Too many: 3: must have at most 2 items".into()),
            ]
        );
        let missing = Node(&s).validate(&json!({"spec": {}}));
        assert_eq!(missing[0].field.as_deref(), Some("spec.title"));
        assert_eq!(missing[0].message.as_deref(), Some("Required value"));
    }
}
