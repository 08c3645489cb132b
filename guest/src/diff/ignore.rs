//! User ignore paths (D5): removed from both sides before comparing.
//!
//! Syntax: dotted (`metadata.annotations.build-id`, `spec.template.spec.containers.*.image`),
//! with `*` for every list item or map key, a number or `[n]` for one list item, `[key=value]`
//! for the merge-list item whose `key` is `value` (the form diff paths use), or a JSON pointer
//! (`/metadata/labels/app.kubernetes.io~1name`). In dotted form a map key that itself contains
//! dots (`app.kubernetes.io/name`) matches too.

use serde_json::Value;

/// One step of an ignore path.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    /// A map key (or a list index when it is a number). `joins` = the next step is a key that
    /// a dot separated from this one, so `a.b` may also name the key `"a.b"`.
    Key { name: String, joins: bool },
    /// `*`: every map value or list item.
    Any,
    /// `[n]`: one list item.
    Index(usize),
    /// `[key=value]`: the list items whose `key` field renders as `value`.
    Item { key: String, value: String },
}

/// Removes every field matching `path` from `value`; an unparsable path matches nothing.
pub(super) fn remove(value: &mut Value, path: &str) {
    if let Some(steps) = parse(path) {
        remove_steps(value, &steps);
    }
}

/// Parses a dotted path or a JSON pointer; `None` when empty or malformed.
fn parse(path: &str) -> Option<Vec<Step>> {
    let steps = match path.strip_prefix('/') {
        Some(pointer) => pointer
            .split('/')
            .map(|token| match token {
                "*" => Step::Any,
                _ => Step::Key {
                    name: token.replace("~1", "/").replace("~0", "~"),
                    joins: false,
                },
            })
            .collect(),
        None => parse_dotted(path)?,
    };
    (!steps.is_empty()).then_some(steps)
}

/// Parses `a.b[k=v].*.c[0]`.
fn parse_dotted(path: &str) -> Option<Vec<Step>> {
    let mut steps = Vec::new();
    let mut rest = path;
    while !rest.is_empty() {
        let end = rest.find(['.', '[']).unwrap_or(rest.len());
        let (name, tail) = rest.split_at(end);
        match name {
            "" => {}
            "*" => steps.push(Step::Any),
            _ => steps.push(Step::Key {
                name: name.to_owned(),
                joins: false,
            }),
        }
        rest = tail;
        while let Some(inner) = rest.strip_prefix('[') {
            let close = inner.find(']')?;
            let selector = &inner[..close];
            steps.push(match selector.split_once('=') {
                _ if selector == "*" => Step::Any,
                Some((key, value)) => Step::Item {
                    key: key.to_owned(),
                    value: value.to_owned(),
                },
                None => Step::Index(selector.parse().ok()?),
            });
            rest = &inner[close + 1..];
        }
        if let Some(next) = rest.strip_prefix('.') {
            if next.is_empty() || next.starts_with(['.', '[']) {
                return None;
            }
            if let (Some(Step::Key { joins, .. }), false) =
                (steps.last_mut(), tail.starts_with('['))
            {
                *joins = true;
            }
            rest = next;
        } else if !rest.is_empty() {
            return None;
        }
    }
    Some(steps)
}

/// Removes the fields `steps` lead to.
fn remove_steps(value: &mut Value, steps: &[Step]) {
    let Some((step, rest)) = steps.split_first() else {
        return;
    };
    match (value, step) {
        (Value::Object(map), Step::Any) => {
            if rest.is_empty() {
                map.clear();
            } else {
                map.values_mut().for_each(|v| remove_steps(v, rest));
            }
        }
        (Value::Object(map), Step::Key { name, .. }) => {
            // `a.b.c` may name the key `a`, `a.b` or `a.b.c`: try each.
            let mut key = name.clone();
            let mut index = 0;
            loop {
                let after = &steps[index + 1..];
                if after.is_empty() {
                    map.shift_remove(&key);
                } else if let Some(child) = map.get_mut(&key) {
                    remove_steps(child, after);
                }
                match (&steps[index], steps.get(index + 1)) {
                    (Step::Key { joins: true, .. }, Some(Step::Key { name: next, .. })) => {
                        key.push('.');
                        key.push_str(next);
                        index += 1;
                    }
                    _ => break,
                }
            }
        }
        (Value::Array(items), Step::Any) => {
            if rest.is_empty() {
                items.clear();
            } else {
                items.iter_mut().for_each(|v| remove_steps(v, rest));
            }
        }
        (Value::Array(items), Step::Index(_) | Step::Key { .. }) => {
            let index = match step {
                Step::Index(i) => Some(*i),
                Step::Key { name, .. } => name.parse().ok(),
                _ => None,
            };
            if let Some(i) = index.filter(|i| *i < items.len()) {
                if rest.is_empty() {
                    items.remove(i);
                } else {
                    remove_steps(&mut items[i], rest);
                }
            }
        }
        (Value::Array(items), Step::Item { key, value }) => {
            let matches = |item: &Value| item.get(key).is_some_and(|v| key_text(v) == *value);
            if rest.is_empty() {
                items.retain(|item| !matches(item));
            } else {
                items
                    .iter_mut()
                    .filter(|item| matches(item))
                    .for_each(|item| remove_steps(item, rest));
            }
        }
        _ => {}
    }
}

/// How a merge-key value is written in a path: strings bare, anything else as JSON.
pub(super) fn key_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn removed(mut value: Value, path: &str) -> Value {
        remove(&mut value, path);
        value
    }

    #[test]
    fn parses_dotted_paths() {
        let key = |name: &str, joins| Step::Key {
            name: name.into(),
            joins,
        };
        assert_eq!(
            parse("a.b[name=x].*[2]"),
            Some(vec![
                key("a", true),
                key("b", false),
                Step::Item {
                    key: "name".into(),
                    value: "x".into()
                },
                Step::Any,
                Step::Index(2)
            ])
        );
        assert_eq!(parse("a[*]"), Some(vec![key("a", false), Step::Any]));
        for bad in ["", "a..b", "a.", "a[", "a[x]", "a[1]b", "a.[1]"] {
            assert_eq!(parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn removes_keys_with_dots_and_wildcards() {
        let object = json!({"metadata": {"labels": {"app.kubernetes.io/name": "a", "app": "b"}}});
        assert_eq!(
            removed(object.clone(), "metadata.labels.app.kubernetes.io/name"),
            json!({"metadata": {"labels": {"app": "b"}}})
        );
        assert_eq!(
            removed(object.clone(), "/metadata/labels/app.kubernetes.io~1name"),
            json!({"metadata": {"labels": {"app": "b"}}})
        );
        assert_eq!(
            removed(object, "metadata.labels.*"),
            json!({"metadata": {"labels": {}}})
        );
    }

    #[test]
    fn removes_list_items() {
        let object =
            json!({"c": [{"name": "a", "image": "x", "n": 1}, {"name": "b", "image": "y"}]});
        assert_eq!(
            removed(object.clone(), "c.*.image"),
            json!({"c": [{"name": "a", "n": 1}, {"name": "b"}]})
        );
        assert_eq!(
            removed(object.clone(), "c[name=b]"),
            json!({"c": [{"name": "a", "image": "x", "n": 1}]})
        );
        assert_eq!(
            removed(object.clone(), "c.0.n"),
            json!({"c": [{"name": "a", "image": "x"}, {"name": "b", "image": "y"}]})
        );
        assert_eq!(removed(object.clone(), "c[5].n"), object);
        assert_eq!(
            removed(object.clone(), "c[n=1].image")["c"][0],
            json!({"name": "a", "n": 1})
        );
        assert_eq!(removed(object.clone(), "c.*"), json!({"c": []}));
    }
}
