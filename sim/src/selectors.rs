//! Label and field selectors for LIST and WATCH (`app=web,tier!=db`, `env in (a,b)`, `!x`,
//! `replicas>2`, `metadata.name=foo`), parsed by the grammar and with the messages of
//! apimachinery's `labels.Parse` and `fields.ParseSelector`, and a `LabelSelector` rendered as
//! `labels.Selector.String()` renders it.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::status::ApiError;
use crate::validation::rules;

#[derive(Debug, Clone, PartialEq)]
enum Requirement {
    Equals(String, String),
    NotEquals(String, String),
    In(String, BTreeSet<String>),
    NotIn(String, BTreeSet<String>),
    Exists(String),
    NotExists(String),
    GreaterThan(String, i64),
    LessThan(String, i64),
}

/// A parsed selector: every requirement must hold.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Selector(Vec<Requirement>);

#[derive(Debug, Clone, Copy, PartialEq)]
enum Token {
    End,
    ClosedPar,
    Comma,
    DoesNotExist,
    DoubleEquals,
    Equals,
    GreaterThan,
    Identifier,
    In,
    LessThan,
    NotEquals,
    NotIn,
    OpenPar,
}

fn keyword(s: &str) -> Option<Token> {
    Some(match s {
        ")" => Token::ClosedPar,
        "," => Token::Comma,
        "!" => Token::DoesNotExist,
        "==" => Token::DoubleEquals,
        "=" => Token::Equals,
        ">" => Token::GreaterThan,
        "in" => Token::In,
        "<" => Token::LessThan,
        "!=" => Token::NotEquals,
        "notin" => Token::NotIn,
        "(" => Token::OpenPar,
        _ => return None,
    })
}

fn is_special(c: u8) -> bool {
    matches!(c, b'=' | b'!' | b'(' | b')' | b',' | b'>' | b'<')
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | b'\n')
}

/// The tokens of a label selector, as apimachinery's lexer scans them.
fn lex(s: &str) -> Vec<(Token, String)> {
    let bytes = s.as_bytes();
    let mut pos = 0;
    let mut out = Vec::new();
    loop {
        while pos < bytes.len() && is_space(bytes[pos]) {
            pos += 1;
        }
        if pos >= bytes.len() {
            out.push((Token::End, String::new()));
            return out;
        }
        let start = pos;
        if is_special(bytes[pos]) {
            // Every special character is an operator on its own: take the longest one.
            let mut end = start + 1;
            if end < bytes.len() && keyword(&s[start..=end]).is_some() {
                end += 1;
            }
            pos = end;
            let op = &s[start..end];
            out.push((keyword(op).unwrap_or(Token::Identifier), op.to_string()));
        } else {
            while pos < bytes.len() && !is_special(bytes[pos]) && !is_space(bytes[pos]) {
                pos += 1;
            }
            let word = &s[start..pos];
            out.push((keyword(word).unwrap_or(Token::Identifier), word.to_string()));
        }
    }
}

/// apimachinery's recursive-descent label selector parser.
struct Parser {
    items: Vec<(Token, String)>,
    position: usize,
}

impl Parser {
    /// The current token; `in`/`notin` are identifiers where values are expected.
    fn lookahead(&self, values: bool) -> (Token, String) {
        let (t, l) = self.items[self.position.min(self.items.len() - 1)].clone();
        match t {
            Token::In | Token::NotIn if values => (Token::Identifier, l),
            _ => (t, l),
        }
    }

    fn consume(&mut self, values: bool) -> (Token, String) {
        let item = self.lookahead(values);
        self.position += 1;
        item
    }

    fn parse(&mut self) -> Result<Vec<Requirement>, String> {
        let mut requirements = Vec::new();
        loop {
            let (t, lit) = self.lookahead(true);
            match t {
                Token::Identifier | Token::DoesNotExist => {
                    let r = self
                        .requirement()
                        .map_err(|e| format!("unable to parse requirement: {e}"))?;
                    requirements.push(r);
                    let (t, lit) = self.consume(true);
                    match t {
                        Token::End => return Ok(requirements),
                        Token::Comma => {
                            let (t2, l2) = self.lookahead(true);
                            if t2 != Token::Identifier && t2 != Token::DoesNotExist {
                                return Err(format!(
                                    "found '{l2}', expected: identifier after ','"
                                ));
                            }
                        }
                        _ => {
                            return Err(format!("found '{lit}', expected: ',' or 'end of string'"));
                        }
                    }
                }
                Token::End => return Ok(requirements),
                _ => {
                    return Err(format!(
                        "found '{lit}', expected: !, identifier, or 'end of string'"
                    ));
                }
            }
        }
    }

    fn requirement(&mut self) -> Result<Requirement, String> {
        let (mut t, mut key) = self.consume(true);
        let negated = t == Token::DoesNotExist;
        if negated {
            (t, key) = self.consume(true);
        }
        if t != Token::Identifier {
            return Err(format!("found '{key}', expected: identifier"));
        }
        check_key(&key)?;
        let (next, _) = self.lookahead(true);
        if negated {
            return Ok(Requirement::NotExists(key));
        }
        if matches!(next, Token::End | Token::Comma) {
            return Ok(Requirement::Exists(key));
        }
        let (op, lit) = self.consume(false);
        match op {
            Token::In | Token::NotIn => {
                let values = self.values()?;
                for v in &values {
                    check_value(v)?;
                }
                Ok(if op == Token::In {
                    Requirement::In(key, values)
                } else {
                    Requirement::NotIn(key, values)
                })
            }
            Token::Equals | Token::DoubleEquals | Token::NotEquals => {
                let value = self.exact_value()?;
                check_value(&value)?;
                Ok(if op == Token::NotEquals {
                    Requirement::NotEquals(key, value)
                } else {
                    Requirement::Equals(key, value)
                })
            }
            Token::GreaterThan | Token::LessThan => {
                let value = self.exact_value()?;
                let n: i64 = value.parse().map_err(|_| {
                    format!(
                        "values[0]: Invalid value: {value:?}: for 'Gt', 'Lt' operators, the value must be an integer"
                    )
                })?;
                Ok(if op == Token::GreaterThan {
                    Requirement::GreaterThan(key, n)
                } else {
                    Requirement::LessThan(key, n)
                })
            }
            _ => Err(format!(
                "found '{lit}', expected: '=', '!=', '==', 'in', notin'"
            )),
        }
    }

    fn values(&mut self) -> Result<BTreeSet<String>, String> {
        let (t, lit) = self.consume(true);
        if t != Token::OpenPar {
            return Err(format!("found '{lit}' expected: '('"));
        }
        let (t, lit) = self.lookahead(true);
        match t {
            Token::Identifier | Token::Comma => {
                let s = self.identifiers()?;
                if self.consume(true).0 != Token::ClosedPar {
                    return Err(format!("found '{lit}', expected: ')'"));
                }
                Ok(s)
            }
            Token::ClosedPar => {
                self.consume(true);
                Ok(BTreeSet::from([String::new()]))
            }
            _ => Err(format!("found '{lit}', expected: ',', ')' or identifier")),
        }
    }

    fn identifiers(&mut self) -> Result<BTreeSet<String>, String> {
        let mut s = BTreeSet::new();
        loop {
            let (t, lit) = self.consume(true);
            match t {
                Token::Identifier => {
                    s.insert(lit);
                    let (t2, l2) = self.lookahead(true);
                    match t2 {
                        Token::Comma => continue,
                        Token::ClosedPar => return Ok(s),
                        _ => return Err(format!("found '{l2}', expected: ',' or ')'")),
                    }
                }
                Token::Comma => {
                    if s.is_empty() {
                        s.insert(String::new());
                    }
                    match self.lookahead(true).0 {
                        Token::ClosedPar => {
                            s.insert(String::new());
                            return Ok(s);
                        }
                        Token::Comma => {
                            self.consume(true);
                            s.insert(String::new());
                        }
                        _ => {}
                    }
                }
                _ => return Err(format!("found '{lit}', expected: ',', or identifier")),
            }
        }
    }

    fn exact_value(&mut self) -> Result<String, String> {
        let (t, _) = self.lookahead(true);
        if matches!(t, Token::End | Token::Comma) {
            return Ok(String::new());
        }
        let (t, lit) = self.consume(true);
        if t == Token::Identifier {
            Ok(lit)
        } else {
            Err(format!("found '{lit}', expected: identifier"))
        }
    }
}

/// A non-empty label key name part or label value: at most 63 alphanumerics, `-`, `_` and `.`,
/// starting and ending with an alphanumeric.
fn is_label_text(text: &str) -> bool {
    text.len() <= 63 && rules::qualified_name_part(text)
}

/// A label key: an optional DNS subdomain prefix and `/`, then a name of at most 63 characters.
fn check_key(key: &str) -> Result<(), String> {
    let name = key.rsplit_once('/').map_or(key, |(_, n)| n);
    if is_label_text(name) {
        Ok(())
    } else {
        Err(format!(
            "key: Invalid value: {key:?}: name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
        ))
    }
}

/// A label value: empty, or at most 63 alphanumerics, `-`, `_` and `.` starting and ending
/// with an alphanumeric.
fn check_value(value: &str) -> Result<(), String> {
    if value.is_empty() || is_label_text(value) {
        Ok(())
    } else {
        Err(format!(
            "values[0]: Invalid value: {value:?}: a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
        ))
    }
}

/// Splits a field selector on the commas that are not escaped with `\`.
fn split_unescaped(s: &str) -> Vec<String> {
    let mut terms = Vec::new();
    let mut current = String::new();
    let mut escaped = false;
    for c in s.chars() {
        match c {
            _ if escaped => {
                current.push('\\');
                current.push(c);
                escaped = false;
            }
            '\\' => escaped = true,
            ',' => terms.push(std::mem::take(&mut current)),
            _ => current.push(c),
        }
    }
    terms.push(current);
    terms
}

fn unescape(s: &str) -> String {
    let mut out = String::new();
    let mut escaped = false;
    for c in s.chars() {
        if escaped || c != '\\' {
            out.push(c);
            escaped = false;
        } else {
            escaped = true;
        }
    }
    out
}

impl Selector {
    /// Parses a label selector; an empty string selects everything.
    ///
    /// # Errors
    /// 400 BadRequest with `labels.Parse`'s message for a malformed selector.
    pub fn parse_labels(s: &str) -> Result<Self, ApiError> {
        let mut parser = Parser {
            items: lex(s),
            position: 0,
        };
        parser.parse().map(Self).map_err(ApiError::bad_request)
    }

    /// Parses a field selector (`key=value`, `key==value`, `key!=value`, comma-separated, `\`
    /// escaping); an empty string selects everything.
    ///
    /// # Errors
    /// 400 BadRequest with `fields.ParseSelector`'s message for a malformed selector.
    pub fn parse_fields(s: &str) -> Result<Self, ApiError> {
        let mut reqs = Vec::new();
        if s.is_empty() {
            return Ok(Self(reqs));
        }
        for term in split_unescaped(s) {
            let found = ["!=", "==", "="].iter().find_map(|op| {
                term.find(op)
                    .map(|i| (op, &term[..i], &term[i + op.len()..]))
            });
            let Some((op, key, value)) = found else {
                return Err(ApiError::bad_request(format!(
                    "invalid selector: '{s}'; can't understand '{term}'"
                )));
            };
            let (key, value) = (unescape(key), unescape(value));
            reqs.push(if *op == "!=" {
                Requirement::NotEquals(key, value)
            } else {
                Requirement::Equals(key, value)
            });
        }
        Ok(Self(reqs))
    }

    /// Whether `lookup` (label or field value by key) satisfies every requirement.
    fn matches_with(&self, lookup: impl Fn(&str) -> Option<String>) -> bool {
        let number = |k: &str| lookup(k).and_then(|v| v.parse::<i64>().ok());
        self.0.iter().all(|r| match r {
            Requirement::Equals(k, v) => lookup(k).as_deref() == Some(v.as_str()),
            Requirement::NotEquals(k, v) => lookup(k).as_deref() != Some(v.as_str()),
            Requirement::In(k, vs) => lookup(k).is_some_and(|x| vs.contains(&x)),
            Requirement::NotIn(k, vs) => lookup(k).is_none_or(|x| !vs.contains(&x)),
            Requirement::Exists(k) => lookup(k).is_some(),
            Requirement::NotExists(k) => lookup(k).is_none(),
            Requirement::GreaterThan(k, n) => number(k).is_some_and(|x| x > *n),
            Requirement::LessThan(k, n) => number(k).is_some_and(|x| x < *n),
        })
    }

    /// The value an `=` (or `==`) requirement demands of `key`, as apimachinery's
    /// `RequiresExactMatch` (RBAC reads `metadata.name` of a list off it).
    pub fn exact_match(&self, key: &str) -> Option<&str> {
        self.0.iter().find_map(|r| match r {
            Requirement::Equals(k, v) if k == key => Some(v.as_str()),
            _ => None,
        })
    }

    /// Matches `object`'s labels.
    pub fn matches_labels(&self, object: &Value) -> bool {
        let labels = &object["metadata"]["labels"];
        self.matches_with(|k| labels.get(k).and_then(Value::as_str).map(str::to_string))
    }

    /// Matches `object`'s fields as `labels` reads them.
    fn matches_fields_of(&self, labels: FieldLabels, object: &Value) -> bool {
        self.matches_with(|label| labels.value(object, label))
    }

    /// Checks every key against the field labels `labels` supports.
    ///
    /// # Errors
    /// 400 BadRequest `field label not supported: <key>`, as the kind's field label conversion
    /// answers.
    fn check_field_labels(&self, labels: FieldLabels) -> Result<(), ApiError> {
        let Some(supported) = labels.supported() else {
            return Ok(());
        };
        for requirement in &self.0 {
            let (Requirement::Equals(key, _) | Requirement::NotEquals(key, _)) = requirement else {
                continue;
            };
            if !supported.contains(&key.as_str()) {
                return Err(ApiError::bad_request(format!(
                    "field label not supported: {key}"
                )));
            }
        }
        Ok(())
    }
}

/// The fields a kind's objects can be selected by (its registry's `GetAttrs`) and how each is
/// read off an object.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum FieldLabels {
    /// Any dotted path of the object (kinds whose field labels the simulator does not restrict).
    #[default]
    Paths,
    /// An Event's (`pkg/registry/core/event`'s `ToSelectableFields`, the same for
    /// `events.k8s.io`): [`EVENT_FIELD_LABELS`], an unset one reading as empty.
    Event,
}

/// The field labels Events are selectable by, in `v1` and `events.k8s.io/v1` alike.
pub const EVENT_FIELD_LABELS: &[&str] = &[
    "involvedObject.kind",
    "involvedObject.namespace",
    "involvedObject.name",
    "involvedObject.uid",
    "involvedObject.apiVersion",
    "involvedObject.resourceVersion",
    "involvedObject.fieldPath",
    "reason",
    "reportingComponent",
    "source",
    "type",
    "metadata.namespace",
    "metadata.name",
];

impl FieldLabels {
    /// The field labels of `group`/`kind`.
    pub fn of(group: &str, kind: &str) -> Self {
        match (group, kind) {
            ("" | "events.k8s.io", "Event") => Self::Event,
            _ => Self::Paths,
        }
    }

    /// The labels a selector may use, `None` when any path is allowed.
    fn supported(self) -> Option<&'static [&'static str]> {
        match self {
            Self::Paths => None,
            Self::Event => Some(EVENT_FIELD_LABELS),
        }
    }

    /// The value of field label `label` of `object` (a stored, core-shaped object).
    fn value(self, object: &Value, label: &str) -> Option<String> {
        let at = |path: &str| {
            let v = path
                .split('.')
                .try_fold(object, |node, part| node.get(part))?;
            match v {
                Value::String(s) => Some(s.clone()),
                Value::Null => None,
                other => Some(other.to_string()),
            }
        };
        match self {
            Self::Paths => at(label),
            Self::Event => Some(match label {
                "source" => at("source.component")
                    .filter(|c| !c.is_empty())
                    .or_else(|| at("reportingComponent"))
                    .unwrap_or_default(),
                label => at(label).unwrap_or_default(),
            }),
        }
    }
}

/// A `LabelSelector` (`matchLabels`, `matchExpressions`) as `labels.Selector.String()` prints
/// it: requirements sorted by key, set values sorted (`app=web,env in (a,b),!legacy`).
pub fn label_selector_string(selector: &Value) -> String {
    let mut parts: Vec<(String, String)> = Vec::new();
    for (k, v) in selector["matchLabels"].as_object().into_iter().flatten() {
        parts.push((k.clone(), format!("{k}={}", v.as_str().unwrap_or_default())));
    }
    for e in selector["matchExpressions"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let key = e["key"].as_str().unwrap_or_default().to_string();
        let values: BTreeSet<&str> = e["values"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let values = values.into_iter().collect::<Vec<_>>().join(",");
        let text = match e["operator"].as_str().unwrap_or_default() {
            "In" => format!("{key} in ({values})"),
            "NotIn" => format!("{key} notin ({values})"),
            "Exists" => key.clone(),
            _ => format!("!{key}"),
        };
        parts.push((key, text));
    }
    parts.sort_by(|a, b| a.0.cmp(&b.0));
    parts
        .into_iter()
        .map(|(_, t)| t)
        .collect::<Vec<_>>()
        .join(",")
}

/// The label and field selectors of one request.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// `labelSelector`.
    pub labels: Selector,
    /// `fieldSelector`.
    pub fields: Selector,
    /// How the field selector reads the selected kind's fields.
    pub field_labels: FieldLabels,
}

impl Filter {
    /// The filter of a `labelSelector` and a `fieldSelector` on a kind with `field_labels`.
    ///
    /// # Errors
    /// 400 BadRequest for a malformed selector or a field label the kind does not support.
    pub fn parse(labels: &str, fields: &str, field_labels: FieldLabels) -> Result<Self, ApiError> {
        let fields = Selector::parse_fields(fields)?;
        fields.check_field_labels(field_labels)?;
        Ok(Self {
            labels: Selector::parse_labels(labels)?,
            fields,
            field_labels,
        })
    }

    /// Whether `object` passes both selectors.
    pub fn matches(&self, object: &Value) -> bool {
        self.labels.matches_labels(object)
            && self.fields.matches_fields_of(self.field_labels, object)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn label_selectors() {
        let obj =
            json!({"metadata": {"name": "a", "labels": {"app": "web", "tier": "fe", "n": "5"}}});
        for (sel, want) in [
            ("app=web", true),
            ("app==web,tier=fe", true),
            ("app!=web", false),
            ("tier in (fe, be)", true),
            ("tier notin (fe)", false),
            ("app", true),
            ("!app", false),
            ("!missing", true),
            ("n>4,n<6", true),
            ("n>5", false),
            ("x in (in,notin)", false),
            ("", true),
        ] {
            assert_eq!(
                Selector::parse_labels(sel).unwrap().matches_labels(&obj),
                want,
                "{sel}"
            );
        }
    }

    #[test]
    fn malformed_label_selectors_have_apimachinery_messages() {
        for (sel, message) in [
            (
                "app in (a",
                "unable to parse requirement: found '', expected: ',' or ')'",
            ),
            (
                "a in b",
                "unable to parse requirement: found 'b' expected: '('",
            ),
            ("app=web,", "found '', expected: identifier after ','"),
            (
                "app web",
                "unable to parse requirement: found 'web', expected: '=', '!=', '==', 'in', notin'",
            ),
            (
                "=x",
                "found '=', expected: !, identifier, or 'end of string'",
            ),
            ("a=b=c", "found '=', expected: ',' or 'end of string'"),
        ] {
            let err = Selector::parse_labels(sel).unwrap_err();
            assert_eq!((err.code, err.message.as_str()), (400, message), "{sel}");
        }
        assert!(Selector::parse_labels("bad key!=x y").is_err());
        assert!(Selector::parse_labels("n>x").is_err());
    }

    #[test]
    fn field_selectors() {
        let obj =
            json!({"metadata": {"name": "a,b", "namespace": "ns"}, "status": {"phase": "Running"}});
        let sel = |s: &str| {
            Selector::parse_fields(s)
                .unwrap()
                .matches_fields_of(FieldLabels::Paths, &obj)
        };
        assert!(sel("metadata.name=a\\,b,metadata.namespace==ns"));
        assert!(!sel("metadata.name!=a\\,b"));
        assert!(sel("status.phase=Running"));
        let err = Selector::parse_fields("status.phase").unwrap_err();
        assert_eq!(
            err.message,
            "invalid selector: 'status.phase'; can't understand 'status.phase'"
        );
    }

    #[test]
    fn event_field_labels_are_checked_and_read_as_kube_reads_them() {
        let event = json!({"metadata": {"name": "e", "namespace": "d"}, "reason": "Scheduled",
            "involvedObject": {"kind": "Pod", "name": "p"}, "source": {},
            "reportingComponent": "default-scheduler"});
        let select = |s: &str| {
            Filter::parse("", s, FieldLabels::of("", "Event"))
                .unwrap()
                .matches(&event)
        };
        assert!(select("source=default-scheduler,involvedObject.kind=Pod"));
        assert!(select("reportingComponent=default-scheduler,type="));
        assert!(!select("reason!=Scheduled"));
        let err =
            Filter::parse("", "spec.x=1", FieldLabels::of("events.k8s.io", "Event")).unwrap_err();
        assert_eq!(
            (err.code, err.message.as_str()),
            (400, "field label not supported: spec.x")
        );
        assert!(Filter::parse("", "spec.x=1", FieldLabels::of("", "Pod")).is_ok());
    }

    #[test]
    fn label_selectors_print_sorted() {
        let selector = json!({"matchLabels": {"b": "2", "a": "1"},
            "matchExpressions": [{"key": "c", "operator": "NotIn", "values": ["y", "x"]},
                                 {"key": "d", "operator": "DoesNotExist"}]});
        assert_eq!(label_selector_string(&selector), "a=1,b=2,c notin (x,y),!d");
    }
}
