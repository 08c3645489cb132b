//! The `krt` binary's tests, one binary: its commands, the controller as `krt` processes, and the
//! docs' paths, commands and figures.

mod cli;
mod controller;
mod docs;
