//! `kusion:runtime/host`: structured logs and progress events forwarded to the
//! embedder's [`EventSink`](krt_stack::EventSink), and a sleep clamped to
//! the call's deadline. Each call counts against the host-call limit; output
//! past the per-operation byte cap stops the guest (a log flood is a limit hit,
//! not silently truncated output). Sleeping is host time, not guest CPU time;
//! a sleep past the call's wall-clock deadline ends the call at the deadline.

use crate::bindings::host_services::{Host, LogLevel, ProgressEvent};
use crate::convert::{health_from_wit, log_level_from_wit};
use crate::state::{KrtView, LimitHit};
use krt_guest::model as m;
use std::time::{Duration, Instant};

/// The longest single sleep a guest may ask for.
const MAX_SLEEP: Duration = Duration::from_secs(30);

impl KrtView<'_> {
    /// Counts the call and charges `bytes` of output; traps past the cap.
    fn charge_output(&mut self, bytes: usize) -> wasmtime::Result<()> {
        self.ctx.enter()?;
        self.ctx.output_bytes = self.ctx.output_bytes.saturating_add(bytes);
        let cap = self.ctx.link.limits.max_output_bytes;
        if self.ctx.output_bytes > cap {
            return Err(self.ctx.trip(LimitHit::Output(cap)));
        }
        Ok(())
    }
}

impl Host for KrtView<'_> {
    async fn log(
        &mut self,
        level: LogLevel,
        message: String,
        fields: Vec<(String, String)>,
    ) -> wasmtime::Result<()> {
        let size = message.len() + fields.iter().map(|(k, v)| k.len() + v.len()).sum::<usize>();
        self.charge_output(size)?;
        self.ctx
            .events
            .log(log_level_from_wit(level), &message, &fields);
        Ok(())
    }

    async fn progress(&mut self, event: ProgressEvent) -> wasmtime::Result<()> {
        let size = event.id.len() + event.phase.len() + event.message.len();
        self.charge_output(size)?;
        let progress = m::Progress {
            id: event.id,
            phase: event.phase,
            message: event.message,
            health: event.health.map(health_from_wit),
        };
        self.ctx
            .events
            .event(&krt_stack::Event::Progress(&progress));
        Ok(())
    }

    async fn sleep(&mut self, ms: u32) -> wasmtime::Result<()> {
        self.ctx.enter()?;
        let started = Instant::now();
        let left = self.ctx.deadline.saturating_duration_since(started);
        let asked = Duration::from_millis(ms.into()).min(MAX_SLEEP);
        tokio::time::sleep(asked.min(left)).await;
        self.ctx.host_time += started.elapsed();
        if asked > left {
            // The call cannot finish in time: stop it at the deadline.
            let limit = self.ctx.link.limits.call_timeout;
            return Err(self.ctx.trip(LimitHit::Deadline(limit)));
        }
        Ok(())
    }
}
