//! The API semantics as plain function calls, with no HTTP server: a [`Request`] (method, path,
//! query, content type, body) in, a [`Response`] (HTTP code and JSON body) out. The HTTP server
//! calls exactly this; an in-process caller (such as a wasm component) calls it directly through
//! [`Cluster::handle`] and [`Cluster::watch`], or through [`crate::GuestCluster`], which speaks
//! krt's `Cluster` trait.
//!
//! ```
//! use krt_sim::api::{Cluster, Request};
//! let cluster = Cluster::new(1000);
//! let created = cluster.handle(&Request::post(
//!     "/api/v1/namespaces/default/configmaps",
//!     br#"{"metadata": {"name": "a"}, "data": {"k": "v"}}"#.to_vec(),
//! ));
//! assert_eq!(created.code, 201);
//! let got = cluster.handle(&Request::get("/api/v1/namespaces/default/configmaps/a"));
//! assert_eq!(got.body["data"]["k"], "v");
//! ```

pub use crate::auth::UserInfo;
pub use crate::cluster::Cluster;
pub use crate::kinds::{BuiltinResource, builtin_resources};
pub use crate::request::{Params, Request, Response};
pub use crate::watch::Watch;
