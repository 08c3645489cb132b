//! `krt component push|pull|inspect`: components in OCI registries.

use crate::args::{ExitCode, GlobalArgs};
use crate::output::Printer;
use crate::session::Registries;
use anyhow::Context;
use krt_host::oci::OciReference;
use serde::Serialize;
use std::path::PathBuf;

/// `krt component`: components in OCI registries, as CNCF Wasm OCI artifacts.
#[derive(Debug, clap::Subcommand)]
pub enum ComponentCommand {
    /// Push a component file to a registry tag; prints the digest it got.
    Push {
        /// The component file.
        file: PathBuf,
        /// Where: oci://REGISTRY/REPOSITORY:TAG.
        reference: OciReference,
    },
    /// Pull a component (checked against its digest) into a file.
    Pull {
        /// oci://REGISTRY/REPOSITORY:TAG or …@sha256:DIGEST.
        reference: OciReference,
        /// The file to write (default: the repository's last segment and
        /// `.wasm`, in the current directory). `-o` is krt's output format.
        #[arg(short = 'O', long = "out", value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Show a component's digest, size, the kusion:runtime world it targets,
    /// and its imports and exports.
    Inspect {
        /// oci://REGISTRY/REPOSITORY:TAG or …@sha256:DIGEST.
        reference: OciReference,
    },
}

/// What `push` and `pull` print as a document.
#[derive(Serialize)]
struct Moved {
    reference: String,
    digest: String,
    size: usize,
    file: String,
}

/// What `inspect` prints as a document.
#[derive(Serialize)]
struct Described {
    reference: String,
    digest: String,
    size: usize,
    world: Option<String>,
    imports: Vec<String>,
    exports: Vec<String>,
}

impl ComponentCommand {
    /// Runs the component command.
    ///
    /// # Errors
    /// An unreadable or unwritable file, or a registry failure (named by
    /// [`OciError`](krt_host::oci::OciError)).
    pub async fn execute(self, global: &GlobalArgs, printer: &Printer) -> anyhow::Result<ExitCode> {
        let mut registries = Registries::new(global);
        let store = registries.store()?;
        match self {
            ComponentCommand::Push { file, reference } => {
                let bytes = std::fs::read(&file)
                    .with_context(|| format!("cannot read component '{}'", file.display()))?;
                let pushed = store
                    .push(&file.display().to_string(), bytes, &reference)
                    .await?;
                printer.out(format!(
                    "pushed '{}' to {reference}: {} ({} bytes)",
                    file.display(),
                    pushed.digest,
                    pushed.size
                ));
                printer.document(&Moved {
                    reference: pushed.pinned.to_string(),
                    digest: pushed.digest,
                    size: pushed.size,
                    file: file.display().to_string(),
                });
            }
            ComponentCommand::Pull { reference, out } => {
                let fetched = store.fetch(&reference).await?;
                let file =
                    out.unwrap_or_else(|| PathBuf::from(format!("{}.wasm", reference.name())));
                std::fs::write(&file, &*fetched.component)
                    .with_context(|| format!("cannot write '{}'", file.display()))?;
                printer.out(format!(
                    "pulled {reference}: {} ({} bytes, {}) to '{}'",
                    fetched.digest,
                    fetched.component.len(),
                    if fetched.cached {
                        "from the cache"
                    } else {
                        "downloaded"
                    },
                    file.display()
                ));
                printer.document(&Moved {
                    reference: fetched.pinned.to_string(),
                    digest: fetched.digest,
                    size: fetched.component.len(),
                    file: file.display().to_string(),
                });
            }
            ComponentCommand::Inspect { reference } => {
                let seen = store.inspect(&reference).await?;
                if printer.is_table() {
                    printer.out(format!("reference  {}", seen.pinned));
                    printer.out(format!("digest     {}", seen.digest));
                    printer.out(format!("size       {} bytes", seen.size));
                    printer.out(format!(
                        "world      {}",
                        seen.world
                            .as_deref()
                            .unwrap_or("none: it exports no kusion:runtime/runtime")
                    ));
                    printer.out("imports");
                    for import in &seen.imports {
                        printer.out(format!("  {import}"));
                    }
                    printer.out("exports");
                    for export in &seen.exports {
                        printer.out(format!("  {export}"));
                    }
                }
                printer.document(&Described {
                    reference: seen.pinned.to_string(),
                    digest: seen.digest,
                    size: seen.size,
                    world: seen.world,
                    imports: seen.imports,
                    exports: seen.exports,
                });
            }
        }
        Ok(ExitCode::Success)
    }
}
