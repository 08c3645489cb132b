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

/// The sections of `cargo bench -p krt-cli --bench krt`, read off its
/// `SECTIONS` table.
fn bench_sections() -> Vec<String> {
    let bench = std::fs::read_to_string(workspace().join("cli/benches/krt/main.rs"))
        .expect("the bench's source");
    let table = bench
        .split_once("const SECTIONS")
        .and_then(|(_, rest)| rest.split_once("= ["))
        .and_then(|(_, rest)| rest.split_once("];"))
        .map(|(table, _)| table)
        .expect("the bench has a SECTIONS table");
    table
        .split('"')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

/// A page split into what the bench wrote (its blocks, by section name) and
/// the prose around them, as `(line number, line)`; code blocks and code
/// spans are left out of the prose (they show settings, transcripts and
/// flags, not measurements).
struct Split {
    blocks: Vec<(String, usize, String)>,
    prose: Vec<(usize, String)>,
}

fn split(text: &str) -> Split {
    let mut blocks = Vec::new();
    let mut prose = Vec::new();
    let mut fenced = false;
    let mut open: Option<(String, usize, String)> = None;
    for (n, line) in text.lines().enumerate() {
        let trimmed = line.trim();
        if let Some(name) = trimmed
            .strip_prefix("<!-- bench:")
            .and_then(|rest| rest.strip_suffix(" -->"))
        {
            assert!(
                open.is_none(),
                "line {}: a block opens inside a block",
                n + 1
            );
            open = Some((name.to_owned(), n + 1, String::new()));
            continue;
        }
        if let Some(name) = trimmed
            .strip_prefix("<!-- /bench:")
            .and_then(|rest| rest.strip_suffix(" -->"))
        {
            let block = open
                .take()
                .unwrap_or_else(|| panic!("line {}: a block closes that did not open", n + 1));
            assert_eq!(
                block.0,
                name,
                "line {}: the block closes under another name",
                n + 1
            );
            blocks.push(block);
            continue;
        }
        if let Some((_, _, body)) = &mut open {
            body.push_str(line);
            body.push('\n');
            continue;
        }
        if trimmed.starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            let outside_code: String = line.split('`').step_by(2).collect::<Vec<_>>().join(" ");
            prose.push((n + 1, outside_code));
        }
    }
    assert!(open.is_none(), "a bench block is never closed");
    Split { blocks, prose }
}

/// The units a measured figure carries.
const UNITS: [&str; 10] = [
    "µs",
    "ms",
    "s",
    "MiB",
    "KiB",
    "MB",
    "GB",
    "×",
    "%",
    "objects/s",
];

/// The measured figures of a line of prose: a decimal number with a unit
/// (`44.8 µs`, `0.69 s`, `12.3 MB`), any number with `×`, and durations such
/// as `5m07s`; each as its number. Settings and sizes are whole numbers
/// (`64 MiB`, `5 s`), so they are not taken for measurements, and neither is
/// a goal (`≤ 1.10`, `goal 25 µs`).
fn figures(line: &str) -> Vec<String> {
    let chars: Vec<char> = line.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let starts = chars[i].is_ascii_digit()
            && (i == 0
                || !(chars[i - 1].is_alphanumeric()
                    || matches!(chars[i - 1], '.' | '_' | '-' | ':')));
        if !starts {
            i += 1;
            continue;
        }
        let begin = i;
        while i < chars.len()
            && (chars[i].is_ascii_digit()
                || (matches!(chars[i], '.' | ',')
                    && chars.get(i + 1).is_some_and(char::is_ascii_digit)))
        {
            i += 1;
        }
        let number: String = chars[begin..i].iter().collect();
        let rest: String = chars[i..].iter().collect();
        let before: String = chars[begin.saturating_sub(8)..begin].iter().collect();
        let goal = ["≤", "≥", "<", ">", "goal"]
            .iter()
            .any(|g| before.contains(g));
        // A duration written as minutes and seconds: 5m07s.
        if let Some(seconds) = rest.strip_prefix('m') {
            let digits: String = seconds.chars().take_while(char::is_ascii_digit).collect();
            if !digits.is_empty() && seconds[digits.len()..].starts_with('s') {
                if !goal {
                    out.push(format!("{number}m{digits}s"));
                }
                i += 1 + digits.len() + 1;
                continue;
            }
        }
        let unit = UNITS.iter().find(|u| {
            let after = rest.trim_start_matches(' ');
            after.starts_with(**u)
                && !after[u.len()..]
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_alphanumeric())
        });
        let measured = match unit {
            Some(&"×") => true,
            Some(_) => number.contains('.') && !rest.starts_with('.'),
            None => false,
        };
        if measured && !goal {
            out.push(number);
        }
    }
    out
}

/// Every number in `text`, as written (`1,154`, `44.8`, `5m07s`).
fn numbers(text: &str) -> std::collections::HashSet<String> {
    let mut out = std::collections::HashSet::new();
    for word in text.split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '.' | ','))) {
        let word = word.trim_matches(['.', ',']);
        let is_duration = word.split_once('m').is_some_and(|(m, s)| {
            !m.is_empty()
                && m.chars().all(|c| c.is_ascii_digit())
                && s.strip_suffix('s')
                    .is_some_and(|s| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit()))
        });
        if is_duration {
            out.insert(word.to_owned());
            continue;
        }
        let lead: String = word
            .chars()
            .take_while(|c| c.is_ascii_digit() || matches!(c, '.' | ','))
            .collect();
        let lead = lead.trim_end_matches(['.', ',']);
        if !lead.is_empty() {
            out.insert(lead.to_owned());
        }
    }
    out
}

#[test]
fn every_figure_in_the_docs_comes_from_the_bench() {
    let root = workspace();
    let sections = bench_sections();
    assert!(sections.len() >= 10, "the bench's sections: {sections:?}");
    let pages: Vec<(String, Split)> = pages()
        .into_iter()
        .map(|(page, text)| {
            let name = page.strip_prefix(&root).unwrap().display().to_string();
            let split = split(&text);
            (name, split)
        })
        .collect();
    let mut wrong = Vec::new();
    let mut written = String::new();
    let mut blocks = 0;
    for (name, split) in &pages {
        for (section, line, body) in &split.blocks {
            blocks += 1;
            if name != "docs/performance.md" {
                wrong.push(format!(
                    "{name}:{line}: a bench block outside docs/performance.md"
                ));
            }
            if !sections.contains(section) {
                wrong.push(format!(
                    "{name}:{line}: the bench has no section {section:?}"
                ));
            }
            let stamp = format!(
                "_Written by `cargo bench -p krt-cli --bench krt -- {section} --write-docs` on "
            );
            if !body.contains(&stamp) {
                wrong.push(format!(
                    "{name}:{line}: the {section} block lacks the line {stamp}…"
                ));
            }
            written.push_str(body);
        }
    }
    assert!(blocks >= 8, "only {blocks} bench blocks in the docs");
    let known = numbers(&written);
    let mut checked = 0;
    for (name, split) in &pages {
        for (line, text) in &split.prose {
            for figure in figures(text) {
                checked += 1;
                if !known.contains(&figure) {
                    wrong.push(format!(
                        "{name}:{line}: {figure} is in no block the bench wrote: {}",
                        text.trim()
                    ));
                }
            }
        }
    }
    assert!(
        checked >= 3,
        "only {checked} figures found in the docs' prose"
    );
    assert!(
        wrong.is_empty(),
        "figures the bench did not write (run the bench with --write-docs, or quote its blocks):\n{}",
        wrong.join("\n")
    );
}

#[test]
fn figures_are_told_from_settings_and_goals() {
    assert_eq!(figures("instantiate + call took 44.8 µs"), ["44.8"]);
    assert_eq!(
        figures("a link adds 0.14 ms, 1.07–1.25× faster"),
        ["0.14", "1.25"]
    );
    assert_eq!(figures("the first command takes 5m07s"), ["5m07s"]);
    assert_eq!(
        figures("a memory limit of 64 MiB and a 5 s timeout"),
        Vec::<String>::new()
    );
    assert_eq!(figures("goal ≤ 1.10×, ≤ 25.0 µs"), Vec::<String>::new());
    assert_eq!(
        figures("kubectl v1.32.4, Kubernetes 1.36, 12.3 MB"),
        ["12.3"]
    );
    assert!(numbers("| 1,154 | 44.8 | 5m07s |").contains("5m07s"));
    assert!(numbers("| 1,154 | 44.8 | 5m07s |").contains("1,154"));
}
