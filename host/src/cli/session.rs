//! What every command needs: the input resources, a connected cluster and a
//! component runtime.

use super::output::Printer;
use super::{ClusterArg, FileArgs, GlobalArgs};
use crate::connect::{ClusterChoice, ConnectOptions, Connected, connect};
use crate::engine::{ComponentSource, EngineOptions};
use crate::manifest;
use crate::runtime::ComponentRuntime;
use guest::model::Resource;

/// A connected runtime plus the resources to work on.
pub struct Session {
    /// The runtime.
    pub runtime: ComponentRuntime,
    /// The resources, Namespaces and CRDs first, then in file order.
    pub resources: Vec<Resource>,
    /// Keeps an embedded simulator alive.
    _connected: Connected,
}

/// Loads every input file (all problems reported, nothing touched), then
/// connects and loads the component.
pub async fn open(global: &GlobalArgs, files: &FileArgs, printer: &Printer) -> Option<Session> {
    let mut resources = Vec::new();
    let mut problems = Vec::new();
    for file in &files.files {
        match manifest::load(file) {
            Ok(mut rs) => resources.append(&mut rs),
            Err(e) => problems.push(e.0),
        }
    }
    if !problems.is_empty() {
        printer.error(problems.join("\n"));
        printer.note("nothing was applied");
        return None;
    }
    resources.sort_by_key(kind_rank);
    let options = ConnectOptions {
        choice: match global.cluster {
            ClusterArg::Auto => ClusterChoice::Auto,
            ClusterArg::Sim => ClusterChoice::Sim,
            ClusterArg::Kubeconfig => ClusterChoice::Kubeconfig,
        },
        kubeconfig: global.kubeconfig.clone(),
        context: global.context.clone(),
        namespace: global.namespace.clone(),
        sim_state: Some(global.sim_state.clone()),
    };
    let connected = match connect(&options).await {
        Ok(c) => c,
        Err(e) => {
            printer.error(e.to_string());
            return None;
        }
    };
    printer.note(format!("using {}", connected.description));
    let source = match &global.component {
        Some(path) => ComponentSource::File(path.clone()),
        None => ComponentSource::Default,
    };
    let runtime = match ComponentRuntime::new(
        &source,
        connected.cluster.clone(),
        &EngineOptions::default(),
    )
    .await
    {
        Ok(rt) => rt,
        Err(e) => {
            printer.error(e.to_string());
            return None;
        }
    };
    Some(Session {
        runtime,
        resources,
        _connected: connected,
    })
}

/// Namespaces first, then CRDs, then everything else (stable).
fn kind_rank(r: &Resource) -> u8 {
    match r.attributes["kind"].as_str() {
        Some("Namespace") => 0,
        Some("CustomResourceDefinition") => 1,
        _ => 2,
    }
}
