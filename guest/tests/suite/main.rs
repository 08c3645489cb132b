//! krt's core through its public API, one binary: the merge, diff and health tables, properties
//! and their regressions, and the runtime's apply, read, delete and watch against krt-sim's
//! in-process cluster.

mod diff_cases;
mod health_table;
mod merge_properties;
mod merge_table;
mod properties;
mod regressions;
mod runtime_apply;
mod runtime_read_delete;
mod runtime_watch;
mod support;
mod unchanged_properties;
