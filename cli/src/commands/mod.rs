//! One module per subcommand: each parses its own flags, opens a session,
//! runs krt-stack's walk and prints the result.

mod apply;
mod component;
mod controller;
mod destroy;
mod drift;
mod import;
mod preview;
mod read;
mod state;
mod watch;

pub use apply::ApplyCommand;
pub use component::ComponentCommand;
pub use controller::ControllerCommand;
pub use destroy::DestroyCommand;
pub use drift::DriftCommand;
pub use import::ImportCommand;
pub use preview::PreviewCommand;
pub use read::ReadCommand;
pub use state::StateCommand;
pub use watch::WatchCommand;

use crate::args::ExitCode;
use crate::output::Printer;
use krt_stack::StateError;

/// `exit`, unless the run's last save of the state failed: that is
/// reported, and fails the run.
fn saved(save: Result<(), StateError>, printer: &Printer, exit: ExitCode) -> ExitCode {
    match save {
        Ok(()) => exit,
        Err(e) => {
            printer.error(format!(
                "the state was not saved: {:#}",
                anyhow::Error::from(e)
            ));
            ExitCode::Failure
        }
    }
}
