//! What krt's test crates share, so no test file builds its own:
//!
//! - fixture builders for the objects tests apply ([`configmap`], [`deployment`],
//!   [`namespace`], [`pod`]) and [`resource`] to make a Kusion resource of one;
//! - [`TestCluster`]: a krt-sim server, or on the real tier (`KRT_E2E_KUBECONFIG`, see
//!   [`real_tier`]) a real cluster, with a kube client and a kubeconfig file;
//! - [`StandIn`]: the stand-in node, ingress controller and load balancer that let rollouts
//!   and health waits finish on a control plane without nodes;
//! - [`krt_bin`], [`krt`] and [`krt_at`] to run the CLI built by this `cargo test` run, and
//!   [`show`] to print a run in an assertion;
//! - [`assert_contains`] to check a text and [`run_ok`] to run a tool, each showing what
//!   failed;
//! - [`cache_dir`]: the compiled-component cache the tests share;
//! - [`kinds`]: one manifest of every kind krt-sim serves for writing;
//! - [`TestRegistry`]: a real OCI registry (docker-registry) on loopback, with basic auth and
//!   TLS when asked.

mod assert;
mod cluster;
mod fixtures;
pub mod kinds;
mod krt;
mod proxy;
mod real;
mod registry;
mod standin;

pub use assert::{assert_contains, run_ok};
pub use cluster::{TestCluster, client_as, client_for};
pub use fixtures::{Object, configmap, deployment, namespace, pod, resource};
pub use krt::{
    Run, cache_dir, krt, krt_at, krt_bin, krt_env, krt_in, krt_spawn, local_state, show, state_ids,
    temp_dir, workspace,
};
pub use real::{KUBECONFIG_VAR, real_tier};
pub use registry::{RegistrySetup, TestRegistry};
pub use standin::StandIn;
