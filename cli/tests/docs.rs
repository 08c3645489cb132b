//! The docs cannot go stale unnoticed: every repository path that README.md
//! and docs/ name exists (or is an output location git ignores), and every
//! `krt …` command line they show parses under the current command line.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The folders at the top of the repository: a path that starts with one of
/// them is a repository path.
const TOP: [&str; 17] = [
    "cli/",
    "controller/",
    "docs/",
    "examples/",
    "fuzz/",
    "guest/",
    "guest-component/",
    "host/",
    "memcluster/",
    "sim/",
    "sim-kinds/",
    "stack/",
    "testkit/",
    "tests/",
    "wasm-build/",
    "wit/",
    ".ci/",
];

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace")
        .to_path_buf()
}

/// README.md and every page under docs/, with their text.
fn pages() -> Vec<(PathBuf, String)> {
    let root = workspace();
    let mut files = vec![root.join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).expect("readable");
            (p, text)
        })
        .collect()
}

/// The spans between backticks on one line.
fn code_spans(line: &str) -> impl Iterator<Item = &str> {
    line.split('`').skip(1).step_by(2)
}

/// A repository path named in `span`, without a line number, an anchor, a
/// glob or trailing punctuation; `None` when it names none.
fn repo_path(span: &str) -> Option<String> {
    let word = span.split_whitespace().next()?;
    if !TOP.iter().any(|t| word.starts_with(t)) {
        return None;
    }
    let word = word
        .split(['#', '*', '<', '{'])
        .next()?
        .trim_end_matches([',', '.', ')', ';', ':']);
    let word = match word.rsplit_once(':') {
        Some((path, line)) if line.chars().all(|c| c.is_ascii_digit() || c == '-') => path,
        _ => word,
    };
    Some(word.to_owned())
}

/// Whether git ignores `path`: an output location (`fuzz/artifacts/`, …),
/// which a fresh clone does not have until something writes it.
fn ignored(root: &Path, path: &str) -> bool {
    Command::new("git")
        .args(["check-ignore", "-q", "--no-index", path])
        .current_dir(root)
        .status()
        .is_ok_and(|s| s.success())
}

/// The relative link targets of a line (`](target)`), without anchors.
fn links(line: &str) -> Vec<String> {
    line.match_indices("](")
        .filter_map(|(at, _)| {
            let rest = &line[at + 2..];
            let target = &rest[..rest.find(')')?];
            let target = target.split('#').next()?;
            (!target.is_empty() && !target.contains("://")).then(|| target.to_owned())
        })
        .collect()
}

#[test]
fn every_path_the_docs_name_exists() {
    let root = workspace();
    let mut missing = Vec::new();
    let mut checked = 0;
    for (page, text) in pages() {
        let name = page.strip_prefix(&root).unwrap().display().to_string();
        for (n, line) in text.lines().enumerate() {
            for path in code_spans(line).filter_map(repo_path) {
                checked += 1;
                if !root.join(&path).exists() && !ignored(&root, &path) {
                    missing.push(format!("{name}:{}: `{path}`", n + 1));
                }
            }
            for link in links(line) {
                let target = page.parent().unwrap().join(&link);
                if !target.exists() {
                    missing.push(format!("{name}:{}: link ({link})", n + 1));
                }
            }
        }
    }
    assert!(checked >= 50, "only {checked} repository paths found");
    assert!(
        missing.is_empty(),
        "paths the docs name that do not exist:\n{}",
        missing.join("\n")
    );
}

/// The `krt …` command lines of the docs' code blocks (`$ krt …`, or in a
/// shell block a line that starts with `krt `), as words, without comments,
/// redirections, pipes or what follows `&&`.
fn command_lines(text: &str) -> Vec<(usize, Vec<String>)> {
    let mut out = Vec::new();
    // The language of the code block the line is in, if it is in one.
    let mut block: Option<&str> = None;
    for (n, line) in text.lines().enumerate() {
        if let Some(fence) = line.trim_start().strip_prefix("```") {
            block = match block {
                Some(_) => None,
                None => Some(fence.trim()),
            };
            continue;
        }
        let Some(language) = block else { continue };
        let line = line.trim_start();
        let line = match line.strip_prefix("$ ") {
            Some(prompted) => prompted,
            None if matches!(language, "sh" | "bash" | "console" | "shell") => line,
            None => continue,
        };
        if !line.starts_with("krt ") {
            continue;
        }
        let line = line.split(" #").next().unwrap_or(line);
        let line = line.split(['|', '>', ';']).next().unwrap_or(line);
        let line = line.split("&&").next().unwrap_or(line);
        let Some(words) = shlex::split(line) else {
            out.push((n + 1, vec![line.to_owned()]));
            continue;
        };
        out.push((n + 1, words[1..].to_vec()));
    }
    out
}

#[test]
fn every_krt_command_line_in_the_docs_parses() {
    let root = workspace();
    let mut checked = 0;
    let mut refused = Vec::new();
    for (page, text) in pages() {
        let name = page.strip_prefix(&root).unwrap().display().to_string();
        for (n, args) in command_lines(&text) {
            // With `--help` at the end, clap parses every argument before it
            // (unknown flags and bad values are errors) and then prints help
            // instead of running the command.
            let run = Command::new(env!("CARGO_BIN_EXE_krt"))
                .args(&args)
                .arg("--help")
                .env_remove("KUBECONFIG")
                .output()
                .expect("krt runs");
            checked += 1;
            if !run.status.success() {
                refused.push(format!(
                    "{name}:{n}: krt {}\n{}",
                    args.join(" "),
                    String::from_utf8_lossy(&run.stderr).trim()
                ));
            }
        }
    }
    assert!(checked >= 10, "only {checked} command lines found");
    assert!(
        refused.is_empty(),
        "command lines in the docs that the CLI refuses:\n{}",
        refused.join("\n\n")
    );
}
