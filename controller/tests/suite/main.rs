//! The controller's integration tests, one binary: reconciling Stacks in-process and tenancy
//! with the manifests of `krt controller install`.

mod reconcile;
mod support;
mod tenancy;
