//! krt-sim's integration tests, one binary: the HTTP API, authentication and RBAC, protobuf, the
//! in-process guest cluster, the semantics and surface tables, and real kubectl against it.

mod api;
mod authn;
mod common;
mod descriptors;
mod guest_cluster;
mod kubectl;
mod kubectl_auth;
mod kubectl_create;
mod kubectl_show;
mod protobuf;
mod rbac;
mod semantics;
mod surface;
