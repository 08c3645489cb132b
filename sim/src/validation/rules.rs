//! The building blocks of kube-apiserver's validation: the name formats of apimachinery's
//! `util/validation` (RFC 1123 labels and subdomains, RFC 1035 labels, qualified names, label
//! values, config keys) with their messages, and the `field.Error` kinds a 422 lists.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::StatusCause;
use serde_json::Value;

use crate::status::cause;

/// The problems found so far, each a 422 cause (`field`, `FieldValue*` reason, message).
#[derive(Default)]
pub struct Errors(pub Vec<StatusCause>);

/// A value as `field.Invalid` prints it: strings quoted, anything else as JSON.
fn shown(value: &Value) -> String {
    match value {
        Value::String(s) => format!("{s:?}"),
        other => other.to_string(),
    }
}

impl Errors {
    /// `field.Invalid`.
    pub fn invalid(&mut self, field: &str, value: &Value, detail: &str) {
        self.0.push(cause(
            "FieldValueInvalid",
            field,
            format!("Invalid value: {}: {detail}", shown(value)),
        ));
    }

    /// `field.Required`.
    pub fn required(&mut self, field: &str, detail: &str) {
        let message = if detail.is_empty() {
            "Required value".to_string()
        } else {
            format!("Required value: {detail}")
        };
        self.0.push(cause("FieldValueRequired", field, message));
    }

    /// `field.Forbidden`.
    pub fn forbidden(&mut self, field: &str, detail: &str) {
        self.0.push(cause(
            "FieldValueForbidden",
            field,
            format!("Forbidden: {detail}"),
        ));
    }

    /// `field.NotSupported`.
    pub fn unsupported(&mut self, field: &str, value: &Value, supported: &[&str]) {
        let list: Vec<String> = supported.iter().map(|s| format!("{s:?}")).collect();
        self.0.push(cause(
            "FieldValueNotSupported",
            field,
            format!(
                "Unsupported value: {}: supported values: {}",
                shown(value),
                list.join(", ")
            ),
        ));
    }

    /// `field.Duplicate`.
    pub fn duplicate(&mut self, field: &str, value: &Value) {
        self.0.push(cause(
            "FieldValueDuplicate",
            field,
            format!("Duplicate value: {}", shown(value)),
        ));
    }

    /// `field.TooLong` for a total size; an empty `field` is the whole object, which kube's
    /// field path prints as `[]`.
    pub fn too_long(&mut self, field: &str, max: usize) {
        let unit = if max == 1 { "byte" } else { "bytes" };
        self.0.push(cause(
            "FieldValueTooLong",
            if field.is_empty() { "[]" } else { field },
            format!("Too long: may not be more than {max} {unit}"),
        ));
    }

    /// Checks `value` is a string one of `supported` (when present).
    pub fn one_of(&mut self, field: &str, value: &Value, supported: &[&str]) {
        if !value.is_null() && !value.as_str().is_some_and(|v| supported.contains(&v)) {
            self.unsupported(field, value, supported);
        }
    }

    /// Checks an integer field lies in `min..=max` (when present).
    pub fn port_range(&mut self, field: &str, value: &Value) {
        if let Some(n) = value.as_i64()
            && !(1..=65535).contains(&n)
        {
            self.invalid(field, value, "must be between 1 and 65535, inclusive");
        }
    }
}

/// `a lowercase RFC 1123 label …`: the message of [`dns1123_label`].
pub const DNS1123_LABEL: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

/// `a lowercase RFC 1123 subdomain …`: the message of [`dns1123_subdomain`].
pub const DNS1123_SUBDOMAIN: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

/// `a DNS-1035 label …`: the message of [`dns1035_label`].
pub const DNS1035_LABEL: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";

fn label_chars(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

/// The problems of `s`, at most `max` bytes long, that must match a pattern (`matches` says
/// whether it does; `message` when it does not).
fn problems(s: &str, max: usize, matches: bool, message: &str) -> Vec<String> {
    let mut out = Vec::new();
    if s.len() > max {
        out.push(format!("must be no more than {max} characters"));
    }
    if !matches {
        out.push(message.to_string());
    }
    out
}

/// The problems of `s` as a path segment (`IsValidPathSegmentName`), the only rule every name
/// obeys: not `.` or `..`, and no `/` or `%`.
pub fn path_segment(s: &str) -> Vec<String> {
    if s == "." || s == ".." {
        return vec![format!("may not be '{s}'")];
    }
    ["/", "%"]
        .iter()
        .filter(|c| s.contains(*c))
        .map(|c| format!("may not contain '{c}'"))
        .collect()
}

/// The problems of `s` as an IP address (`IsValidIP`).
pub fn ip_address(s: &str) -> Vec<String> {
    match s.parse::<std::net::IpAddr>() {
        Ok(_) => Vec::new(),
        Err(_) => vec!["must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)".into()],
    }
}

/// The problems of `s` as an RFC 1123 label (`IsDNS1123Label`).
pub fn dns1123_label(s: &str) -> Vec<String> {
    problems(s, 63, label_chars(s), DNS1123_LABEL)
}

/// The problems of `s` as an RFC 1123 subdomain (`IsDNS1123Subdomain`).
pub fn dns1123_subdomain(s: &str) -> Vec<String> {
    problems(s, 253, s.split('.').all(label_chars), DNS1123_SUBDOMAIN)
}

/// The problems of `s` as a DNS-1035 label (`IsDNS1035Label`): an RFC 1123 label that starts
/// with a letter.
pub fn dns1035_label(s: &str) -> Vec<String> {
    let matches = label_chars(s) && s.starts_with(|c: char| c.is_ascii_lowercase());
    problems(s, 63, matches, DNS1035_LABEL)
}

/// Whether `s` matches `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`.
pub(crate) fn qualified_name_part(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
        && s.starts_with(|c: char| c.is_ascii_alphanumeric())
        && s.ends_with(|c: char| c.is_ascii_alphanumeric())
}

const QUALIFIED_NAME: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

/// The problems of `s` as a qualified name (`IsQualifiedName`): `[prefix/]name`.
pub fn qualified_name(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let parts: Vec<&str> = s.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                out.push("prefix part must be non-empty".to_string());
            } else {
                out.extend(
                    dns1123_subdomain(prefix)
                        .into_iter()
                        .map(|m| format!("prefix part {m}")),
                );
            }
            name
        }
        _ => {
            out.push("a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')".to_string());
            return out;
        }
    };
    if name.is_empty() {
        out.push("name part must be non-empty".to_string());
    } else {
        if name.len() > 63 {
            out.push("name part must be no more than 63 characters".to_string());
        }
        if !qualified_name_part(name) {
            out.push(QUALIFIED_NAME.to_string());
        }
    }
    out
}

/// The problems of `s` as a label value (`IsValidLabelValue`).
pub fn label_value(s: &str) -> Vec<String> {
    problems(
        s,
        63,
        s.is_empty() || qualified_name_part(s),
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
    )
}

/// The problems of `s` as a ConfigMap or Secret key (`IsConfigMapKey`).
pub fn config_key(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    if s.len() > 253 {
        out.push("must be no more than 253 characters".to_string());
    }
    if s.is_empty()
        || !s
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
    {
        out.push("a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')".to_string());
    }
    if s == "." {
        out.push("must not be '.'".to_string());
    } else if s == ".." {
        out.push("must not be '..'".to_string());
    } else if s.starts_with("..") {
        out.push("must not start with '..'".to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_formats_follow_apimachinery() {
        assert!(dns1123_label("web-1").is_empty());
        assert_eq!(dns1123_label("Web"), [DNS1123_LABEL]);
        assert!(dns1123_subdomain("a.b-c").is_empty());
        assert!(path_segment("Web_Not.Valid").is_empty());
        assert_eq!(path_segment(".."), ["may not be '..'"]);
        assert_eq!(
            path_segment("a/b%"),
            ["may not contain '/'", "may not contain '%'"]
        );
        assert!(ip_address("10.0.0.1").is_empty() && ip_address("2001:db8::1").is_empty());
        assert!(!ip_address("10.0.0.1-dry").is_empty());
        assert!(!dns1123_subdomain("a..b").is_empty());
        assert!(qualified_name("app.kubernetes.io/name").is_empty());
        assert!(qualified_name("Name_1").is_empty());
        assert_eq!(qualified_name("a/b/c").len(), 1);
        assert_eq!(
            qualified_name("Bad.Prefix/x")[0].split(' ').next(),
            Some("prefix")
        );
        assert!(label_value("").is_empty());
        assert_eq!(
            label_value(&"a".repeat(64)),
            ["must be no more than 63 characters"]
        );
        assert!(config_key("key.name").is_empty());
        assert_eq!(config_key("bad key!").len(), 1);
        assert_eq!(config_key(".."), ["must not be '..'"]);
    }
}
