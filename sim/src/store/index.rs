//! What the store keeps in step with every commit so the controllers look only at what changed:
//! the uids present, each owner's dependents, the terminating objects, the last change of each
//! resource, and the owned objects whose owners may have gone since the garbage collector last
//! looked.

use std::collections::{BTreeSet, HashMap};

use serde_json::Value;

use super::key::Key;
use crate::meta;

/// The facts about one object the index keeps.
#[derive(PartialEq)]
struct Facts<'a> {
    uid: &'a str,
    owners: Vec<&'a str>,
    terminating: bool,
}

impl<'a> Facts<'a> {
    fn of(object: &'a Value) -> Self {
        Self {
            uid: object["metadata"]["uid"].as_str().unwrap_or_default(),
            owners: meta::owner_uids(object),
            terminating: !object["metadata"]["deletionTimestamp"].is_null(),
        }
    }
}

/// The indices of one store.
#[derive(Default)]
pub(super) struct Index {
    /// How many objects carry each uid ("" for objects without one).
    uids: HashMap<String, usize>,
    /// The objects naming each uid among their owners.
    dependents: HashMap<String, BTreeSet<Key>>,
    /// The objects with a `deletionTimestamp`.
    terminating: BTreeSet<Key>,
    /// The resourceVersion of the last change of each resource, by group then plural.
    changed: HashMap<String, HashMap<String, u64>>,
    /// Owned objects written, or whose owner went, since [`Index::take_orphan_candidates`].
    orphan_candidates: BTreeSet<Key>,
}

impl Index {
    /// Records the change at `rv` of the object at `key` from `previous` to `current` (`None`:
    /// absent).
    pub(super) fn update(
        &mut self,
        rv: u64,
        key: &Key,
        previous: Option<&Value>,
        current: Option<&Value>,
    ) {
        let before = previous.map(Facts::of);
        let after = current.map(Facts::of);
        if before != after {
            if let Some(before) = &before {
                self.forget(key, before);
            }
            if let Some(after) = &after {
                self.note(key, after);
            }
            if let Some(before) = &before
                && !self.uids.contains_key(before.uid)
                && let Some(dependents) = self.dependents.get(before.uid)
            {
                self.orphan_candidates.extend(dependents.iter().cloned());
            }
        }
        match after {
            Some(after) if !after.owners.is_empty() => {
                self.orphan_candidates.insert(key.clone());
            }
            Some(_) => {}
            // Nothing is left to collect, and the set stays bounded by the stored objects.
            None => {
                self.orphan_candidates.remove(key);
            }
        }
        self.touch(rv, key);
    }

    fn touch(&mut self, rv: u64, key: &Key) {
        let resources = match self.changed.get_mut(&key.group) {
            Some(resources) => resources,
            None => self.changed.entry(key.group.clone()).or_default(),
        };
        match resources.get_mut(&key.resource) {
            Some(at) => *at = rv,
            None => {
                resources.insert(key.resource.clone(), rv);
            }
        }
    }

    fn note(&mut self, key: &Key, facts: &Facts<'_>) {
        *self.uids.entry(facts.uid.to_string()).or_default() += 1;
        for owner in &facts.owners {
            self.dependents
                .entry((*owner).to_string())
                .or_default()
                .insert(key.clone());
        }
        if facts.terminating {
            self.terminating.insert(key.clone());
        }
    }

    fn forget(&mut self, key: &Key, facts: &Facts<'_>) {
        if let Some(count) = self.uids.get_mut(facts.uid) {
            *count -= 1;
            if *count == 0 {
                self.uids.remove(facts.uid);
            }
        }
        for owner in &facts.owners {
            if let Some(dependents) = self.dependents.get_mut(*owner) {
                dependents.remove(key);
                if dependents.is_empty() {
                    self.dependents.remove(*owner);
                }
            }
        }
        self.terminating.remove(key);
    }

    /// Whether some object carries `uid`.
    pub(super) fn has_uid(&self, uid: &str) -> bool {
        self.uids.contains_key(uid)
    }

    /// The objects naming `uid` among their owners, in key order.
    pub(super) fn dependents(&self, uid: &str) -> impl Iterator<Item = &Key> {
        self.dependents.get(uid).into_iter().flatten()
    }

    /// The objects with a `deletionTimestamp`, in key order.
    pub(super) fn terminating(&self) -> impl Iterator<Item = &Key> {
        self.terminating.iter()
    }

    /// Every (group, resource) ever stored.
    pub(super) fn resources(&self) -> impl Iterator<Item = (&str, &str)> {
        self.changed.iter().flat_map(|(group, resources)| {
            resources
                .keys()
                .map(move |resource| (group.as_str(), resource.as_str()))
        })
    }

    /// Whether an object of `group`/`resource` changed after `rv`.
    pub(super) fn changed_since(&self, group: &str, resource: &str, rv: u64) -> bool {
        self.changed
            .get(group)
            .and_then(|resources| resources.get(resource))
            .is_some_and(|at| *at > rv)
    }

    /// The owned objects written, or whose owner went, since the last call.
    pub(super) fn take_orphan_candidates(&mut self) -> BTreeSet<Key> {
        std::mem::take(&mut self.orphan_candidates)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn key(name: &str) -> Key {
        Key::of("", "pods", "d", name)
    }

    #[test]
    fn a_gone_owner_makes_its_dependents_candidates() {
        let mut index = Index::default();
        let owner = json!({"metadata": {"uid": "o"}});
        let pod = json!({"metadata": {"uid": "p", "ownerReferences": [{"uid": "o"}]}});
        index.update(2, &key("owner"), None, Some(&owner));
        index.update(3, &key("pod"), None, Some(&pod));
        assert_eq!(
            index
                .take_orphan_candidates()
                .into_iter()
                .collect::<Vec<_>>(),
            [key("pod")]
        );
        assert!(index.take_orphan_candidates().is_empty());
        index.update(4, &key("owner"), Some(&owner), Some(&owner));
        assert!(
            index.take_orphan_candidates().is_empty(),
            "owner still there"
        );
        index.update(5, &key("owner"), Some(&owner), None);
        assert!(!index.has_uid("o"));
        assert_eq!(index.dependents("o").collect::<Vec<_>>(), [&key("pod")]);
        assert_eq!(index.take_orphan_candidates().len(), 1);
        assert!(index.changed_since("", "pods", 4));
        assert!(!index.changed_since("", "pods", 5));
        assert!(!index.changed_since("apps", "pods", 0));
        index.update(6, &key("pod"), None, Some(&pod));
        index.update(7, &key("pod"), Some(&pod), None);
        assert!(
            index.take_orphan_candidates().is_empty(),
            "a removed object is no candidate"
        );
    }

    #[test]
    fn terminating_objects_are_listed_until_they_go() {
        let mut index = Index::default();
        let live = json!({"metadata": {"uid": "a"}});
        let deleted = json!({"metadata": {"uid": "a", "deletionTimestamp": "t"}});
        index.update(2, &key("a"), None, Some(&live));
        index.update(3, &key("a"), Some(&live), Some(&deleted));
        assert_eq!(index.terminating().collect::<Vec<_>>(), [&key("a")]);
        index.update(4, &key("a"), Some(&deleted), None);
        assert!(index.terminating().next().is_none());
        assert!(!index.has_uid("a"));
    }
}
