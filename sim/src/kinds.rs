//! The built-in kinds, from krt-sim-kinds: a crate of its own, so that the typed decoding and the
//! schema of every kind are built once.

pub use krt_sim_kinds::{
    BUILTINS, Builtin, BuiltinResource, OBJECT_META, SCALE, Step, builtin_resources, find,
};
