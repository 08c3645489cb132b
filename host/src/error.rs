//! The host library's error type.

/// What can go wrong while setting up krt (running an operation never fails
/// this way: its failures are [`guest::model::Status`] values).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// wasmtime rejected the engine configuration.
    #[error("wasmtime engine setup failed: {0}")]
    Engine(String),
    /// The component could not be read, compiled or linked.
    #[error("{0}")]
    Component(String),
    /// No usable cluster configuration.
    #[error("{0}")]
    Cluster(String),
}

impl Error {
    /// Wraps a wasmtime error with its whole chain.
    pub(crate) fn engine(err: wasmtime::Error) -> Self {
        Error::Engine(format!("{err:#}"))
    }
}
