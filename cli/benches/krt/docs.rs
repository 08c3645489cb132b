//! `--write-docs`: each section's output replaces its block in
//! `docs/performance.md`, between `<!-- bench:NAME -->` and
//! `<!-- /bench:NAME -->`, with a line saying which run wrote it.

use std::path::PathBuf;

/// The page whose blocks the bench writes.
fn page() -> PathBuf {
    krt_testkit::workspace().join("docs").join("performance.md")
}

/// The markers around section `name`'s block.
fn markers(name: &str) -> (String, String) {
    (
        format!("<!-- bench:{name} -->"),
        format!("<!-- /bench:{name} -->"),
    )
}

/// Replaces the block of section `name` with its `output`, stamped with the
/// command, today's date and `machine`. A section without a block is an
/// error: every figure the bench writes has its place in the docs.
pub fn write(name: &str, output: &str, machine: &str) {
    let path = page();
    let mut text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    let today = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let today = &today[..10];
    let (open, close) = markers(name);
    let missing = || panic!("{} has no block {open} … {close}", path.display());
    let start = text.find(&open).unwrap_or_else(missing) + open.len();
    let end = start + text[start..].find(&close).unwrap_or_else(missing);
    let block = format!(
        "\n{}\n\n_Written by `cargo bench -p krt-cli --bench krt -- {name} --write-docs` on \
         {today} ({machine})._\n",
        output.trim()
    );
    text.replace_range(start..end, &block);
    std::fs::write(&path, text).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
    println!("wrote the {name} block of {}", path.display());
}
