//! Label and field selectors for LIST and WATCH (`app=web,tier!=db`, `env in (a,b)`, `!x`,
//! `metadata.name=foo`).

use serde_json::Value;

use crate::status::ApiError;

#[derive(Debug, Clone, PartialEq)]
enum Requirement {
    Equals(String, String),
    NotEquals(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    NotExists(String),
}

/// A parsed selector: every requirement must hold.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Selector(Vec<Requirement>);

/// Splits on commas outside parentheses.
fn split_terms(s: &str) -> Vec<&str> {
    let mut terms = Vec::new();
    let (mut depth, mut start) = (0i32, 0usize);
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                terms.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    terms.push(&s[start..]);
    terms
        .into_iter()
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .collect()
}

fn set_values(s: &str) -> Option<Vec<String>> {
    let inner = s.trim().strip_prefix('(')?.strip_suffix(')')?;
    Some(
        inner
            .split(',')
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
            .collect(),
    )
}

impl Selector {
    /// Parses a label or field selector; an empty string selects everything.
    ///
    /// # Errors
    /// 400 BadRequest for a malformed selector.
    pub fn parse(s: &str) -> Result<Self, ApiError> {
        let bad = || {
            ApiError::bad_request(format!(
                "unable to parse requirement: invalid selector: '{s}'"
            ))
        };
        let mut reqs = Vec::new();
        for term in split_terms(s) {
            let req = if let Some((k, v)) = term.split_once("!=") {
                Requirement::NotEquals(k.trim().into(), v.trim().into())
            } else if let Some((k, v)) = term.split_once("==") {
                Requirement::Equals(k.trim().into(), v.trim().into())
            } else if let Some((k, v)) = term.split_once('=') {
                Requirement::Equals(k.trim().into(), v.trim().into())
            } else if let Some((k, v)) = term.split_once(" notin ") {
                Requirement::NotIn(k.trim().into(), set_values(v).ok_or_else(bad)?)
            } else if let Some((k, v)) = term.split_once(" in ") {
                Requirement::In(k.trim().into(), set_values(v).ok_or_else(bad)?)
            } else if let Some(k) = term.strip_prefix('!') {
                Requirement::NotExists(k.trim().into())
            } else if term.contains(char::is_whitespace) || term.contains('(') {
                return Err(bad());
            } else {
                Requirement::Exists(term.into())
            };
            reqs.push(req);
        }
        Ok(Self(reqs))
    }

    /// Whether `lookup` (label or field value by key) satisfies every requirement.
    fn matches_with(&self, lookup: impl Fn(&str) -> Option<String>) -> bool {
        self.0.iter().all(|r| match r {
            Requirement::Equals(k, v) => lookup(k).as_deref() == Some(v.as_str()),
            Requirement::NotEquals(k, v) => lookup(k).as_deref() != Some(v.as_str()),
            Requirement::In(k, vs) => lookup(k).is_some_and(|x| vs.contains(&x)),
            Requirement::NotIn(k, vs) => lookup(k).is_none_or(|x| !vs.contains(&x)),
            Requirement::Exists(k) => lookup(k).is_some(),
            Requirement::NotExists(k) => lookup(k).is_none(),
        })
    }

    /// Matches `object`'s labels.
    pub fn matches_labels(&self, object: &Value) -> bool {
        let labels = &object["metadata"]["labels"];
        self.matches_with(|k| labels.get(k).and_then(Value::as_str).map(str::to_string))
    }

    /// Matches `object`'s fields by dotted path (`metadata.name`, `status.phase`).
    pub fn matches_fields(&self, object: &Value) -> bool {
        self.matches_with(|path| {
            let v = path
                .split('.')
                .try_fold(object, |node, part| node.get(part))?;
            match v {
                Value::String(s) => Some(s.clone()),
                Value::Null => None,
                other => Some(other.to_string()),
            }
        })
    }
}

/// The label and field selectors of one request.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// `labelSelector`.
    pub labels: Selector,
    /// `fieldSelector`.
    pub fields: Selector,
}

impl Filter {
    /// Whether `object` passes both selectors.
    pub fn matches(&self, object: &Value) -> bool {
        self.labels.matches_labels(object) && self.fields.matches_fields(object)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn label_selectors() {
        let obj = json!({"metadata": {"name": "a", "labels": {"app": "web", "tier": "fe"}}});
        for (sel, want) in [
            ("app=web", true),
            ("app==web,tier=fe", true),
            ("app!=web", false),
            ("tier in (fe, be)", true),
            ("tier notin (fe)", false),
            ("app", true),
            ("!app", false),
            ("!missing", true),
            ("", true),
        ] {
            assert_eq!(
                Selector::parse(sel).unwrap().matches_labels(&obj),
                want,
                "{sel}"
            );
        }
        assert!(Selector::parse("a in b").is_err());
    }

    #[test]
    fn field_selectors() {
        let obj =
            json!({"metadata": {"name": "a", "namespace": "ns"}, "status": {"phase": "Running"}});
        assert!(
            Selector::parse("metadata.name=a,metadata.namespace=ns")
                .unwrap()
                .matches_fields(&obj)
        );
        assert!(
            !Selector::parse("metadata.name!=a")
                .unwrap()
                .matches_fields(&obj)
        );
        assert!(
            Selector::parse("status.phase=Running")
                .unwrap()
                .matches_fields(&obj)
        );
    }
}
