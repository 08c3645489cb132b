//! What krt may delete: only objects it owns. Every object a stack writes
//! carries the stack's mark, the label [`STACK_LABEL`]; the state records
//! each object's UID. Before a delete (a prune or a destroy) the live object
//! must carry the mark and have the recorded UID, and the DELETE carries that
//! UID as a precondition, so that an object replaced in between is not hit.
//! Anything else is `not ours`: left alone, forgotten by the state, reported
//! with the reason.

use crate::graph::Stack;
use crate::runtime::Runtime;
use futures::StreamExt;
use krt_guest::model::{ReadOptions, Resource, Status, StatusCode};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// The label that marks an object as a stack's: its value names the stack.
pub const STACK_LABEL: &str = "krt.dev/stack";

/// The error reason of an object left alone because krt does not own it.
pub const NOT_OURS: &str = "NotOurs";

/// Label values are at most this long.
const MAX_LABEL_VALUE: usize = 63;

/// The stack that owns what a run writes: the value of its [`STACK_LABEL`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    mark: String,
}

impl Owner {
    /// The owner of a CLI stack: its name (a valid stack name is a valid label value).
    pub fn stack(name: &str) -> Self {
        Owner {
            mark: name.to_owned(),
        }
    }

    /// The owner of the Stack object `namespace/name` (the controller's):
    /// `namespace.name`, or, when that is longer than a label value may be,
    /// `namespace.` and a digest of the name.
    pub fn object(namespace: &str, name: &str) -> Self {
        let mark = format!("{namespace}.{name}");
        if mark.len() <= MAX_LABEL_VALUE && mark.ends_with(|c: char| c.is_ascii_alphanumeric()) {
            return Owner { mark };
        }
        let digest = Sha256::digest(name.as_bytes());
        let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
        let keep = MAX_LABEL_VALUE.saturating_sub(hex.len() + 1);
        let prefix: String = format!("{namespace}.").chars().take(keep).collect();
        Owner {
            mark: format!("{prefix}{hex}"),
        }
    }

    /// The label value.
    pub fn mark(&self) -> &str {
        &self.mark
    }

    /// Puts the mark on every resource of `stack`, so that it is part of each
    /// object's first write. A resource that sets [`STACK_LABEL`] itself to
    /// another value is an input error.
    ///
    /// # Errors
    /// One message per resource whose label names another stack.
    pub fn mark_all(&self, stack: &mut Stack) -> Result<(), Vec<String>> {
        let mut problems = Vec::new();
        for r in &mut stack.resources {
            let Some(metadata) = r
                .attributes
                .get_mut("metadata")
                .and_then(Value::as_object_mut)
            else {
                continue;
            };
            let labels = metadata
                .entry("labels")
                .or_insert_with(|| Value::Object(Default::default()));
            if labels.is_null() {
                *labels = Value::Object(Default::default());
            }
            let Some(labels) = labels.as_object_mut() else {
                continue;
            };
            match labels.get(STACK_LABEL) {
                Some(v) if v.as_str() != Some(self.mark.as_str()) => problems.push(format!(
                    "{}: the label {STACK_LABEL} is krt's mark of the stack that owns the object; \
                     it is {v} here, but this stack's is \"{}\" (remove the label)",
                    r.id, self.mark
                )),
                _ => {
                    labels.insert(STACK_LABEL.into(), self.mark.clone().into());
                }
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems)
        }
    }
}

/// Why an object is not ours.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotOurs {
    /// It carries no [`STACK_LABEL`].
    NoMark,
    /// It carries another stack's mark.
    OtherStack(String),
    /// It is another object than the one recorded (another UID).
    OtherUid {
        /// The UID the state recorded.
        recorded: String,
        /// The live object's.
        live: String,
    },
    /// It was replaced by another object between the check and the DELETE.
    Replaced(String),
}

impl std::fmt::Display for NotOurs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotOurs::NoMark => write!(f, "it has no {STACK_LABEL} label"),
            NotOurs::OtherStack(other) => {
                write!(
                    f,
                    "its {STACK_LABEL} label names another stack: \"{other}\""
                )
            }
            NotOurs::OtherUid { recorded, live } => write!(
                f,
                "it is another object than the one this stack wrote (UID {live}; the state recorded {recorded})"
            ),
            NotOurs::Replaced(message) => {
                write!(f, "it was replaced by another object just now: {message}")
            }
        }
    }
}

/// What the check before a delete found.
#[derive(Debug, Clone, PartialEq)]
pub enum Ownership {
    /// Ours: delete it, as the object with this UID (when the runtime told it).
    Owned(Option<String>),
    /// Already gone: nothing to delete.
    Absent,
    /// Not ours: leave it alone. The UID is the live object's, for
    /// `--force-delete-unowned`.
    NotOurs(NotOurs, Option<String>),
    /// The object could not be read.
    Unknown(Status),
}

impl Ownership {
    /// The status of an object left alone for `why`: an error of reason
    /// [`NOT_OURS`] that says how to delete it anyway.
    pub fn not_ours_status(id: &str, why: &NotOurs) -> Status {
        Status::error(
            StatusCode::PermissionDenied,
            NOT_OURS,
            format!(
                "not ours: {id} was not deleted because {why}; krt deletes only what its stack \
                 wrote. It is forgotten by the state; --force-delete-unowned deletes such objects"
            ),
        )
    }
}

/// Checks whether the live object of `recorded` is ours: it carries the mark
/// of `owner` and, when the state recorded one, its UID is `uid`.
pub async fn check<R: Runtime>(
    runtime: &R,
    recorded: &Resource,
    uid: Option<&str>,
    owner: &Owner,
    options: &ReadOptions,
) -> Ownership {
    let read = runtime.read(Some(recorded), None, options).await;
    if let Some(status) = read.status.filter(Status::is_error) {
        return Ownership::Unknown(status);
    }
    let Some(live) = read.resource else {
        return Ownership::Absent;
    };
    of_live(&live.attributes, uid, owner)
}

/// Whether the live object `live` is ours (see [`check`]).
pub fn of_live(live: &Value, uid: Option<&str>, owner: &Owner) -> Ownership {
    let live_uid = live["metadata"]["uid"].as_str().map(str::to_owned);
    let why = match live["metadata"]["labels"][STACK_LABEL].as_str() {
        None => Some(NotOurs::NoMark),
        Some(mark) if mark != owner.mark() => Some(NotOurs::OtherStack(mark.to_owned())),
        Some(_) => match (uid, live_uid.as_deref()) {
            (Some(recorded), Some(live)) if recorded != live => Some(NotOurs::OtherUid {
                recorded: recorded.to_owned(),
                live: live.to_owned(),
            }),
            _ => None,
        },
    };
    match why {
        Some(why) => Ownership::NotOurs(why, live_uid),
        None => Ownership::Owned(live_uid),
    }
}

/// [`check`] of each of `resources` (with the UID `uid_of` gives), `concurrency`
/// at a time, in their order.
pub async fn check_all<R: Runtime>(
    runtime: &R,
    resources: &[Resource],
    uid_of: &(dyn Fn(&str) -> Option<String> + Sync),
    owner: &Owner,
    options: &ReadOptions,
    concurrency: usize,
) -> Vec<Ownership> {
    // By index: a closure over `&Resource` would not be general enough for a
    // future that must be `Send` (the controller's).
    futures::stream::iter(0..resources.len())
        .map(|i| async move {
            let r = &resources[i];
            let uid = uid_of(&r.id);
            check(runtime, r, uid.as_deref(), owner, options).await
        })
        .buffered(concurrency.max(1))
        .collect()
        .await
}

/// `resource` as the object with `uid`: a delete of it carries the UID as a
/// precondition.
pub fn pinned(resource: &Resource, uid: Option<&str>) -> Resource {
    let mut pinned = resource.clone();
    if let (Some(uid), Some(metadata)) = (uid, pinned.attributes["metadata"].as_object_mut()) {
        metadata.insert("uid".into(), uid.into());
    }
    pinned
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn live(mark: Option<&str>, uid: &str) -> Value {
        let mut o = json!({"metadata": {"name": "x", "uid": uid, "labels": {}}});
        if let Some(mark) = mark {
            o["metadata"]["labels"][STACK_LABEL] = mark.into();
        }
        o
    }

    #[test]
    fn ours_needs_the_mark_and_the_recorded_uid() {
        let owner = Owner::stack("dev");
        assert_eq!(
            of_live(&live(Some("dev"), "u1"), Some("u1"), &owner),
            Ownership::Owned(Some("u1".into()))
        );
        assert_eq!(
            of_live(&live(Some("dev"), "u1"), None, &owner),
            Ownership::Owned(Some("u1".into())),
            "a state from before UIDs: the mark decides"
        );
        assert_eq!(
            of_live(&live(None, "u1"), Some("u1"), &owner),
            Ownership::NotOurs(NotOurs::NoMark, Some("u1".into()))
        );
        assert_eq!(
            of_live(&live(Some("prod"), "u1"), Some("u1"), &owner),
            Ownership::NotOurs(NotOurs::OtherStack("prod".into()), Some("u1".into()))
        );
        assert_eq!(
            of_live(&live(Some("dev"), "u2"), Some("u1"), &owner),
            Ownership::NotOurs(
                NotOurs::OtherUid {
                    recorded: "u1".into(),
                    live: "u2".into()
                },
                Some("u2".into())
            )
        );
    }

    #[test]
    fn an_object_owner_fits_a_label_value() {
        assert_eq!(Owner::object("team-a", "web").mark(), "team-a.web");
        let long = Owner::object("team-a", &"n".repeat(100));
        assert!(long.mark().len() <= 63, "{}", long.mark());
        assert!(long.mark().starts_with("team-a."), "{}", long.mark());
        assert_ne!(long, Owner::object("team-a", &"m".repeat(100)));
    }

    #[test]
    fn marking_refuses_a_label_naming_another_stack() {
        let text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n\
                    apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b, labels: {krt.dev/stack: other}}\n";
        let mut stack = Stack::new(crate::manifest::parse("s.yaml", text).unwrap()).unwrap();
        let problems = Owner::stack("dev").mark_all(&mut stack).unwrap_err();
        assert_eq!(problems.len(), 1);
        assert!(
            problems[0].starts_with("v1:ConfigMap:b: the label krt.dev/stack"),
            "{problems:?}"
        );
        assert_eq!(
            stack.resources[0].attributes["metadata"]["labels"][STACK_LABEL],
            "dev"
        );
    }
}
