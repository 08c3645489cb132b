//! Patch metadata: which maps and lists of a kind merge, and by which key.
//!
//! A [`Schema`] is a set of named object types, each listing only the fields
//! that carry a patch strategy, plus the name of the root type. A field not
//! listed (or of an unknown type) has the default strategy: maps merge key by
//! key, lists are atomic.

use std::borrow::Cow;

/// The patch metadata of one field (`x-kubernetes-patch-strategy` and
/// `x-kubernetes-patch-merge-key`), plus the type of its value or of its list
/// elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PatchMeta {
    strategy: Strategy,
    retain_keys: bool,
    merge_key: Option<&'static str>,
    ty: Option<&'static str>,
}

/// The merge behaviour of a field, without `retainKeys`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Strategy {
    /// No strategy: maps merge per key, lists are atomic.
    Default,
    /// `merge`: a list merged by merge key (maps) or as a set (scalars).
    Merge,
    /// `replace`: the value is replaced wholesale.
    Replace,
}

impl PatchMeta {
    /// The default strategy; used for every field a schema does not list.
    pub const DEFAULT: Self = Self {
        strategy: Strategy::Default,
        retain_keys: false,
        merge_key: None,
        ty: None,
    };

    /// A map of type `ty`, merged key by key.
    pub const fn object(ty: &'static str) -> Self {
        Self {
            ty: Some(ty),
            ..Self::DEFAULT
        }
    }

    /// A list of `ty` objects merged by `merge_key` (`patchStrategy: merge`).
    pub const fn merge_list(merge_key: &'static str, ty: &'static str) -> Self {
        Self {
            strategy: Strategy::Merge,
            merge_key: Some(merge_key),
            ty: Some(ty),
            retain_keys: false,
        }
    }

    /// A list of scalars merged as a set (`patchStrategy: merge`, no merge key).
    pub const fn merge_scalars() -> Self {
        Self {
            strategy: Strategy::Merge,
            ..Self::DEFAULT
        }
    }

    /// A map or list replaced wholesale (`patchStrategy: replace`).
    pub const fn replace() -> Self {
        Self {
            strategy: Strategy::Replace,
            ..Self::DEFAULT
        }
    }

    /// Adds `retainKeys`: the map (or each element of the merge list) keeps
    /// only the keys the patch lists in `$retainKeys`.
    pub const fn retain_keys(self) -> Self {
        Self {
            retain_keys: true,
            ..self
        }
    }

    pub(super) fn strategy(&self) -> Strategy {
        self.strategy
    }

    pub(super) fn has_retain_keys(&self) -> bool {
        self.retain_keys
    }

    pub(super) fn merge_key(&self) -> Option<&'static str> {
        self.merge_key
    }

    pub(super) fn ty(&self) -> Option<&'static str> {
        self.ty
    }
}

/// One named object type and its fields that carry patch metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct TypeDef {
    pub(super) name: &'static str,
    pub(super) fields: Cow<'static, [(&'static str, PatchMeta)]>,
}

/// The patch metadata of one kind (or of a test type): a root type and the
/// object types reachable from it.
///
/// Built-in kinds come from [`super::schema_for`]; other schemas are built with
/// [`Schema::new`] and [`Schema::with_field`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schema {
    root: &'static str,
    types: Cow<'static, [TypeDef]>,
}

impl Schema {
    /// A schema whose root type is `root` and which has no patch metadata yet:
    /// every map merges per key, every list is atomic.
    pub fn new(root: &'static str) -> Self {
        Self {
            root,
            types: Cow::Owned(Vec::new()),
        }
    }

    pub(super) const fn from_static(root: &'static str, types: &'static [TypeDef]) -> Self {
        Self {
            root,
            types: Cow::Borrowed(types),
        }
    }

    /// Declares field `name` of type `ty` with patch metadata `meta`
    /// (replacing an earlier declaration of the same field).
    #[must_use]
    pub fn with_field(mut self, ty: &'static str, name: &'static str, meta: PatchMeta) -> Self {
        let types = self.types.to_mut();
        let index = match types.iter().position(|t| t.name == ty) {
            Some(index) => index,
            None => {
                types.push(TypeDef {
                    name: ty,
                    fields: Cow::Owned(Vec::new()),
                });
                types.len() - 1
            }
        };
        let fields = types[index].fields.to_mut();
        fields.retain(|(field, _)| *field != name);
        fields.push((name, meta));
        self
    }

    /// The root type's name.
    pub(super) fn root(&self) -> &'static str {
        self.root
    }

    /// The metadata of field `name` of type `ty` (default when unknown).
    pub(super) fn field(&self, ty: Option<&str>, name: &str) -> PatchMeta {
        ty.and_then(|ty| self.types.iter().find(|t| t.name == ty))
            .and_then(|t| t.fields.iter().find(|(field, _)| *field == name))
            .map_or(PatchMeta::DEFAULT, |(_, meta)| *meta)
    }

    /// The metadata of the field at `path` (field names from the root, list
    /// elements implied), or `None` for an empty path.
    pub(super) fn lookup(&self, path: &[&str]) -> Option<PatchMeta> {
        let mut ty = Some(self.root);
        let mut meta = None;
        for name in path {
            let field = self.field(ty, name);
            ty = field.ty();
            meta = Some(field);
        }
        meta
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_fields_and_types_get_the_default() {
        let schema = Schema::new("Root").with_field("Root", "items", PatchMeta::object("Item"));
        assert_eq!(schema.field(Some("Root"), "other"), PatchMeta::DEFAULT);
        assert_eq!(schema.field(Some("Item"), "x"), PatchMeta::DEFAULT);
        assert_eq!(schema.field(None, "items"), PatchMeta::DEFAULT);
    }

    #[test]
    fn with_field_replaces_an_earlier_declaration() {
        let schema = Schema::new("Root")
            .with_field("Root", "a", PatchMeta::replace())
            .with_field("Root", "a", PatchMeta::merge_scalars());
        assert_eq!(schema.lookup(&["a"]), Some(PatchMeta::merge_scalars()));
    }
}
