//! `krt component push|pull|inspect|generate-key-pair|sign`: components in OCI
//! registries, and their cosign signatures.

use crate::args::{ExitCode, GlobalArgs};
use crate::output::Printer;
use crate::session::Registries;
use anyhow::Context;
use krt_host::oci::OciReference;
use krt_host::{ComponentSource, EngineOptions, Precompiled, SharedEngine};
use serde::Serialize;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

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
    /// Pull a component (checked against its digest) into a file, and compile
    /// it into krt's compile cache so that its first use starts cached.
    Pull {
        /// oci://REGISTRY/REPOSITORY:TAG or …@sha256:DIGEST.
        reference: OciReference,
        /// The file to write (default: the repository's last segment and
        /// `.wasm`, in the current directory). `-o` is krt's output format.
        #[arg(short = 'O', long = "out", value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Show a component's digest, size, the kusion:runtime world it targets,
    /// its imports and exports, and its signatures (checked with --verify-key).
    Inspect {
        /// oci://REGISTRY/REPOSITORY:TAG or …@sha256:DIGEST.
        reference: OciReference,
    },
    /// Write a new signing key pair as cosign names it: cosign.key (encrypted
    /// with $COSIGN_PASSWORD, empty when unset) and cosign.pub.
    GenerateKeyPair {
        /// The file names' prefix: PREFIX.key and PREFIX.pub.
        #[arg(long, default_value = "cosign")]
        output_key_prefix: String,
    },
    /// Sign a component in its registry as cosign does (the signature goes
    /// under the sha256-<hex>.sig tag beside it); a tag is signed by the
    /// digest it resolves to now.
    Sign {
        /// The private key (cosign.key; its password from $COSIGN_PASSWORD).
        #[arg(long, value_name = "FILE")]
        key: PathBuf,
        /// oci://REGISTRY/REPOSITORY:TAG or …@sha256:DIGEST.
        reference: OciReference,
    },
}

/// Compiles a pulled component into krt's compile cache, checked as a run
/// would load it, so that its first use is a cached start; a component krt
/// cannot load is pulled all the same, and the note says why. Returns whether
/// the cache holds it.
async fn precompile(component: &Arc<[u8]>, printer: &Printer) -> bool {
    let started = Instant::now();
    let source = ComponentSource::Bytes(component.clone());
    let precompiled = match SharedEngine::new(&EngineOptions::default()) {
        Ok(engine) => engine.precompile(&source).await,
        Err(e) => Err(e),
    };
    match precompiled {
        Ok(Precompiled { compiled: true, .. }) => {
            printer.out(format!(
                "compiled into krt's cache in {:.1} s: its first use starts cached",
                started.elapsed().as_secs_f64()
            ));
            true
        }
        Ok(Precompiled {
            compiled: false, ..
        }) => {
            printer.out("already compiled in krt's cache");
            true
        }
        Err(e) => {
            printer.note(format!("not compiled into krt's cache: {e}"));
            false
        }
    }
}

/// The password of cosign keys, as cosign reads it: `$COSIGN_PASSWORD`,
/// empty when unset.
fn cosign_password() -> zeroize::Zeroizing<Vec<u8>> {
    zeroize::Zeroizing::new(
        std::env::var("COSIGN_PASSWORD")
            .unwrap_or_default()
            .into_bytes(),
    )
}

/// What `push` and `pull` print as a document.
#[derive(Serialize)]
struct Moved {
    reference: String,
    digest: String,
    size: usize,
    file: String,
    /// After a pull: whether krt's compile cache holds the component.
    #[serde(skip_serializing_if = "Option::is_none")]
    compiled: Option<bool>,
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
    signatures: usize,
    verified_by: Vec<String>,
}

impl ComponentCommand {
    /// Runs the component command.
    ///
    /// # Errors
    /// An unreadable or unwritable file, or a registry failure (named by
    /// [`OciError`](krt_host::oci::OciError)).
    pub async fn execute(self, global: &GlobalArgs, printer: &Printer) -> anyhow::Result<ExitCode> {
        if let ComponentCommand::GenerateKeyPair { output_key_prefix } = &self {
            return generate_key_pair(output_key_prefix, printer);
        }
        let mut registries = Registries::new(global);
        let store = registries.store()?;
        match self {
            ComponentCommand::GenerateKeyPair { .. } => unreachable!("handled above"),
            ComponentCommand::Sign { key, reference } => {
                let pem = std::fs::read(&key)
                    .with_context(|| format!("cannot read the key '{}'", key.display()))?;
                let name = format!("'{}'", key.display());
                let signed = store
                    .sign(&reference, &name, &pem, &cosign_password())
                    .await?;
                printer.out(format!(
                    "signed {reference} ({}) with {name}: {}",
                    signed.digest, signed.signature
                ));
            }
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
                    compiled: None,
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
                let compiled = precompile(&fetched.component, printer).await;
                printer.document(&Moved {
                    reference: fetched.pinned.to_string(),
                    digest: fetched.digest,
                    size: fetched.component.len(),
                    file: file.display().to_string(),
                    compiled: Some(compiled),
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
                    let verified =
                        match (seen.verified_by.is_empty(), global.verify_keys.is_empty()) {
                            (_, true) => String::new(),
                            (true, false) => ", none verified by --verify-key".to_owned(),
                            (false, false) => {
                                format!(", verified by {}", seen.verified_by.join(", "))
                            }
                        };
                    printer.out(format!("signatures {}{verified}", seen.signatures));
                }
                printer.document(&Described {
                    reference: seen.pinned.to_string(),
                    digest: seen.digest,
                    size: seen.size,
                    world: seen.world,
                    imports: seen.imports,
                    exports: seen.exports,
                    signatures: seen.signatures,
                    verified_by: seen.verified_by,
                });
            }
        }
        Ok(ExitCode::Success)
    }
}

/// Writes `PREFIX.key` and `PREFIX.pub`, refusing to overwrite either.
fn generate_key_pair(prefix: &str, printer: &Printer) -> anyhow::Result<ExitCode> {
    let (private_file, public_file) = (
        PathBuf::from(format!("{prefix}.key")),
        PathBuf::from(format!("{prefix}.pub")),
    );
    for file in [&private_file, &public_file] {
        anyhow::ensure!(
            !file.exists(),
            "'{}' exists: not overwritten",
            file.display()
        );
    }
    let (private, public) = krt_host::oci::generate_key_pair(&cosign_password())?;
    write_private(&private_file, private.as_bytes())?;
    std::fs::write(&public_file, public)
        .with_context(|| format!("cannot write '{}'", public_file.display()))?;
    printer.out(format!(
        "wrote '{}' (private, encrypted with $COSIGN_PASSWORD) and '{}' (public)",
        private_file.display(),
        public_file.display()
    ));
    Ok(ExitCode::Success)
}

/// Writes a private key readable by its owner only.
fn write_private(path: &std::path::Path, bytes: &[u8]) -> anyhow::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("cannot write '{}'", path.display()))?;
    file.write_all(bytes)
        .with_context(|| format!("cannot write '{}'", path.display()))
}
