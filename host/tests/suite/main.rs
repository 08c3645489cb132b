//! krt-host's integration tests, one binary: the compile cache, the embedding example,
//! impersonation and the layers' dependency rules.

mod compile_cache;
mod example;
mod impersonation;
mod layers;
