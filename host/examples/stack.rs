//! Embedding a whole stack: examples/quickstart.yaml applied from Rust through
//! the sandboxed runtime, in dependency order, with progress on stdout.
//! `cargo run -p krt-host --example stack` (against an embedded krt-sim).

use krt_host::{ClusterChoice, ComponentRuntime, ComponentSource, ConnectOptions, EngineOptions};
use krt_stack::model::WatchRequest;
use krt_stack::{ApplySettings, Event, EventSink, LocalBackend, Recorder, StateBackend};
use std::sync::Arc;

/// Prints each resource as it finishes.
struct Print;

impl EventSink for Print {
    fn event(&self, event: &Event<'_>) {
        if let Event::Finished(r) = event {
            println!("{:<9} {}", r.result.word(), r.id);
        }
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let sim = ConnectOptions {
        choice: ClusterChoice::Sim,
        ..ConnectOptions::default()
    };
    let connected = krt_host::connect(&sim).await?;
    let options = EngineOptions::default();
    let runtime = ComponentRuntime::new(
        &ComponentSource::Default,
        connected.cluster.clone(),
        &options,
    )
    .await?
    .with_events(Arc::new(Print));
    let stack = krt_stack::graph::load(&[concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/quickstart.yaml"
    )])?;
    let dir = tempfile::tempdir()?;
    let backend = LocalBackend::new(dir.path());
    let state = backend.load("quickstart").await?;
    let wait = Some(WatchRequest {
        timeout_ms: 60_000,
        ..WatchRequest::default()
    });
    let settings = ApplySettings {
        concurrency: 8,
        wait,
        ..ApplySettings::default()
    };
    let plan = krt_stack::plan(&runtime, &stack, &state, &settings.options, 8).await;
    let recorder = Recorder::new(&backend, state);
    let reports = krt_stack::apply(&runtime, &stack, &plan, &recorder, &settings, &Print).await;
    recorder.flush().await?;
    println!(
        "{:?}: {} resources",
        krt_stack::Verdict::of(&reports),
        reports.len()
    );
    Ok(())
}
