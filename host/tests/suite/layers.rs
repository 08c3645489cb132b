//! The layers hold: the sandbox library does not drag a command line, a
//! progress display or an HTTP server into an embedder's build, and the
//! stack engine knows nothing of wasmtime, kube-rs or clap.

use krt_testkit::run_ok;
use std::process::Command;

/// The names of the crates in the normal dependency tree of `package`.
fn tree(package: &str, args: &[&str]) -> Vec<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut command = Command::new(cargo);
    command
        .args(["tree", "--offline", "-p", package, "-e", "normal"])
        .args(["--prefix", "none", "--format", "{p}"])
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    let out = run_ok(&mut command, "cargo tree");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_owned)
        .collect()
}

fn holds(tree: &[String], name: &str) -> bool {
    tree.iter().any(|c| c == name)
}

#[test]
fn the_sandbox_library_has_no_cli_display_or_server_in_its_tree() {
    for lean in [
        tree("krt-host", &["--no-default-features"]),
        tree("krt-host", &[]),
    ] {
        assert!(holds(&lean, "wasmtime") && holds(&lean, "kube"), "{lean:?}");
        for banned in ["clap", "indicatif", "axum", "anstream", "krt-sim"] {
            assert!(!holds(&lean, banned), "krt-host pulls in {banned}");
        }
    }
    // The `sim` feature embeds the simulator's server, but not its command line.
    let full = tree("krt-host", &["--features", "sim"]);
    assert!(holds(&full, "krt-sim") && holds(&full, "axum"), "{full:?}");
    for banned in ["clap", "indicatif", "anstream", "tracing-subscriber"] {
        assert!(
            !holds(&full, banned),
            "krt-host with `sim` pulls in {banned}"
        );
    }
}

#[test]
fn the_controller_reaches_wasmtime_only_through_the_host() {
    let direct = tree("krt-controller", &["--depth", "1"]);
    assert!(holds(&direct, "krt-host"), "{direct:?}");
    assert!(
        !holds(&direct, "wasmtime"),
        "krt-controller depends on wasmtime itself: {direct:?}"
    );
}

#[test]
fn the_stack_engine_has_no_wasmtime_kube_or_clap_in_its_tree() {
    let stack = tree("krt-stack", &[]);
    assert!(holds(&stack, "krt-guest"), "{stack:?}");
    for banned in ["wasmtime", "kube", "kube-client", "clap", "axum", "anyhow"] {
        assert!(!holds(&stack, banned), "krt-stack pulls in {banned}");
    }
}

/// The modules of the crate whose sources are in `src`, each with the
/// modules its `use crate::…` and `use super::…` declarations name (test
/// modules left out).
fn module_graph(
    src: &std::path::Path,
) -> std::collections::BTreeMap<Vec<String>, Vec<Vec<String>>> {
    fn files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("a source directory") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                files(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    /// `a::{b, c::{d, e}}` as the paths `a::b`, `a::c::d`, `a::c::e`.
    fn expand(tree: &str) -> Vec<Vec<String>> {
        let Some(open) = tree.find('{') else {
            return vec![tree.split("::").map(str::to_owned).collect()];
        };
        let prefix = tree[..open].trim_end_matches("::");
        let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
        let (mut depth, mut start, mut parts) = (0, 0, Vec::new());
        for (i, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    parts.push(&inner[start..i]);
                    start = i + 1;
                }
                _ => {}
            }
        }
        parts.push(&inner[start..]);
        parts
            .into_iter()
            .filter(|p| !p.is_empty())
            .flat_map(expand)
            .map(|rest| {
                let mut path: Vec<String> = prefix
                    .split("::")
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned)
                    .collect();
                path.extend(rest);
                path
            })
            .collect()
    }
    let mut sources = Vec::new();
    files(src, &mut sources);
    let module = |path: &std::path::Path| -> Vec<String> {
        let relative = path
            .strip_prefix(src)
            .expect("under src")
            .with_extension("");
        let mut parts: Vec<String> = relative
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if matches!(
            parts.last().map(String::as_str),
            Some("mod" | "lib" | "main")
        ) {
            parts.pop();
        }
        parts
    };
    let modules: Vec<Vec<String>> = sources.iter().map(|p| module(p)).collect();
    let mut graph = std::collections::BTreeMap::new();
    for (path, this) in sources.iter().zip(&modules) {
        let text = std::fs::read_to_string(path).expect("readable");
        let text = text
            .split("#[cfg(test)]\nmod tests")
            .next()
            .unwrap_or_default();
        let mut names = Vec::new();
        for (at, _) in text.match_indices("use ") {
            let rest = &text[at + 4..];
            let Some(end) = rest.find(';') else { continue };
            let tree: String = rest[..end].split_whitespace().collect();
            let (base, tree) = if let Some(t) = tree.strip_prefix("crate::") {
                (Vec::new(), t.to_owned())
            } else if let Some(t) = tree.strip_prefix("super::") {
                (this[..this.len().saturating_sub(1)].to_vec(), t.to_owned())
            } else {
                continue;
            };
            for mut named in expand(&tree) {
                named.retain(|s| s != "self" && s != "*");
                let full: Vec<String> = base.iter().cloned().chain(named).collect();
                let target = (1..=full.len())
                    .rev()
                    .map(|n| full[..n].to_vec())
                    .find(|prefix| modules.contains(prefix));
                if let Some(target) = target.filter(|t| t != this && !t.is_empty()) {
                    names.push(target);
                }
            }
        }
        names.sort();
        names.dedup();
        graph.insert(this.clone(), names);
    }
    graph
}

/// The strongly connected parts of `graph` of more than one module (Tarjan).
fn loops(graph: &std::collections::BTreeMap<Vec<String>, Vec<Vec<String>>>) -> Vec<Vec<String>> {
    struct Search<'a> {
        graph: &'a std::collections::BTreeMap<Vec<String>, Vec<Vec<String>>>,
        index: std::collections::HashMap<&'a [String], (usize, usize)>,
        stack: Vec<&'a [String]>,
        found: Vec<Vec<String>>,
    }
    impl<'a> Search<'a> {
        fn visit(&mut self, v: &'a [String]) {
            let n = self.index.len();
            self.index.insert(v, (n, n));
            self.stack.push(v);
            for w in self.graph.get(v).into_iter().flatten() {
                if !self.index.contains_key(w.as_slice()) {
                    self.visit(w);
                    let low = self.index[w.as_slice()].1.min(self.index[v].1);
                    self.index.get_mut(v).expect("visited").1 = low;
                } else if self.stack.contains(&w.as_slice()) {
                    let low = self.index[w.as_slice()].0.min(self.index[v].1);
                    self.index.get_mut(v).expect("visited").1 = low;
                }
            }
            if self.index[v].0 == self.index[v].1 {
                let mut part = Vec::new();
                while let Some(w) = self.stack.pop() {
                    part.push(w.join("/"));
                    if w == v {
                        break;
                    }
                }
                if part.len() > 1 {
                    part.sort();
                    self.found.push(part);
                }
            }
        }
    }
    let mut search = Search {
        graph,
        index: std::collections::HashMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !search.index.contains_key(v.as_slice()) {
            search.visit(v);
        }
    }
    search.found
}

#[test]
fn no_import_loop_spans_more_than_three_files_in_host_sim_or_cli() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace");
    for crate_dir in ["host", "sim", "cli"] {
        let graph = module_graph(&root.join(crate_dir).join("src"));
        assert!(graph.len() > 5, "{crate_dir}: {} modules read", graph.len());
        let wide: Vec<Vec<String>> = loops(&graph)
            .into_iter()
            .filter(|part| part.len() > 3)
            .collect();
        assert!(
            wide.is_empty(),
            "{crate_dir}/src has import loops of more than three files: {wide:?}"
        );
    }
}
