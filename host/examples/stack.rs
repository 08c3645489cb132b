//! Embedding a whole stack: examples/quickstart.yaml applied through the sandboxed runtime
//! in dependency order, with progress (`cargo run -p krt-host --example stack`, on krt-sim).

use krt_host::{ClusterChoice, ComponentRuntime, ComponentSource, ConnectOptions, EngineOptions};
use krt_stack::{ApplySettings, Event, LocalBackend, Owner, Verdict};
use std::sync::Arc;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let print = |event: &Event<'_>| {
        if let Event::Finished(r) = event {
            println!("{:<9} {}", r.result.word(), r.id);
        }
    };
    let sim = ConnectOptions {
        choice: ClusterChoice::Sim,
        ..ConnectOptions::default()
    };
    let connected = krt_host::connect(&sim).await?;
    let (source, engine) = (ComponentSource::Default, EngineOptions::default());
    let runtime = ComponentRuntime::new(&source, connected.cluster.clone(), &engine).await?;
    let runtime = runtime.with_events(Arc::new(print));
    let input = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/quickstart.yaml");
    let stack = krt_stack::graph::load(&[input])?;
    let dir = tempfile::tempdir()?;
    let state = LocalBackend::new(dir.path());
    let settings = ApplySettings {
        owner: Owner::stack("demo"),
        cluster: Some(connected.identity().await?),
        ..ApplySettings::default()
    };
    let run = krt_stack::plan_and_apply(&runtime, &stack, &state, "demo", &settings, &print);
    let reports = run.await?.reports;
    println!("{:?}: {} resources", Verdict::of(&reports), reports.len());
    Ok(())
}
