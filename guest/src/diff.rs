//! Diff of two normalized objects for previews, with Secret values masked.
