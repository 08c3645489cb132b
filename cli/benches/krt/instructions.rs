//! `instructions`: the instructions `krt apply` executes per object, counted by
//! `valgrind --tool=callgrind` and split by where they run. Unlike a time, the
//! count does not move with the machine's noise (the simulator runs in the
//! bench's own process, outside valgrind), so it is the figure a change to
//! krt's hot path is judged by.

use crate::{Bench, in_new_namespace, manifests, start_cluster, table};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;

/// Where an instruction ran, in the order the table lists them.
const BUCKETS: [&str; 8] = [
    "guest code, compiled from wasm (krt's guest, its serde_json, WASI glue)",
    "wasmtime and Cranelift (instantiation, calls across the boundary)",
    "krt's host crates (krt-host, krt-stack, krt-cli, native krt-guest)",
    "kube, hyper, tokio, rustls (requests and the async runtime)",
    "serde, serde_json, serde_yaml (the host's JSON and YAML)",
    "Rust's core, alloc and std (collections, formatting, hashing)",
    "allocators, libc and the loader (mimalloc, memcpy, system calls)",
    "everything else",
];

/// The crates (first path segment of a function's name) of each bucket but
/// the first and the last two.
const CRATES: [(usize, &[&str]); 5] = [
    (
        1,
        &[
            "wasmtime",
            "cranelift",
            "regalloc2",
            "wasmparser",
            "wasm_encoder",
            "wit_parser",
            "cap_std",
            "cap_primitives",
            "rustix",
            "object",
            "gimli",
        ],
    ),
    (2, &["krt"]),
    (
        3,
        &[
            "kube", "hyper", "http", "h2", "tokio", "tower", "rustls", "ring", "aws_lc", "webpki",
            "mio", "futures", "bytes", "socket2", "pem", "base64", "tracing",
        ],
    ),
    (4, &["serde"]),
    (
        5,
        &[
            "core",
            "alloc",
            "std",
            "hashbrown",
            "<core",
            "<alloc",
            "<std",
        ],
    ),
];

/// Self cost (instructions executed in the function itself) per bucket, and
/// the total; the guest's code, by the function wasmtime compiled it from.
#[derive(Default)]
struct Profile {
    buckets: [u64; BUCKETS.len()],
    total: u64,
    guest: HashMap<String, u64>,
}

/// The functions of a perf map (`START SIZE NAME`, hexadecimal with `0x`), by start.
struct PerfMap(Vec<(u64, u64, String)>);

/// Reads the perf map wasmtime wrote; empty when there is none.
fn perf_map(path: &Path) -> PerfMap {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut entries: Vec<(u64, u64, String)> = text
        .lines()
        .filter_map(|line| {
            let mut parts = line.splitn(3, ' ');
            let hex = |part: &str| u64::from_str_radix(part.trim_start_matches("0x"), 16).ok();
            let start = hex(parts.next()?)?;
            let size = hex(parts.next()?)?;
            Some((start, start + size, parts.next()?.to_string()))
        })
        .collect();
    entries.sort();
    PerfMap(entries)
}

impl PerfMap {
    /// The name of the function whose code holds `address`.
    fn name(&self, address: u64) -> Option<&str> {
        let i = self.0.partition_point(|(start, _, _)| *start <= address);
        let (_, end, name) = self.0.get(i.checked_sub(1)?)?;
        (address < *end).then_some(name.as_str())
    }
}

/// The crate a demangled Rust name belongs to: the first segment of its path,
/// looking through `<`, `&`, `dyn ` and `impl ` (`<serde_json::Value as …>::fmt`
/// is serde_json's).
fn crate_of(name: &str) -> &str {
    let mut rest = name;
    loop {
        let trimmed = rest
            .trim_start_matches(['<', '&', '*', '('])
            .trim_start_matches("mut ")
            .trim_start_matches("const ")
            .trim_start_matches("dyn ")
            .trim_start_matches("impl ");
        if trimmed.len() == rest.len() {
            break;
        }
        rest = trimmed;
    }
    rest.split("::").next().unwrap_or(rest)
}

/// The bucket of function `name` in object file `object`.
fn bucket(object: &str, name: &str) -> usize {
    if object == "???" || name.starts_with("0x") {
        return 0;
    }
    if object.contains("/libc.so")
        || object.contains("/ld-linux")
        || object.contains("libm.so")
        || name.starts_with("mi_")
        || name.starts_with("_mi_")
    {
        return 6;
    }
    let krate = crate_of(name);
    for (index, prefixes) in CRATES {
        if prefixes
            .iter()
            .any(|p| krate == *p || krate.starts_with(&format!("{p}_")))
        {
            return index;
        }
    }
    // Cranelift's and wasmtime's crates are named wasmtime_internal_*, cranelift_*.
    if krate.starts_with("wasmtime") || krate.starts_with("cranelift") {
        return 1;
    }
    7
}

/// Reads a callgrind output file written with `--compress-strings=no
/// --compress-pos=no` and adds each function's self cost to its bucket, and a
/// guest function's to its name in `map`. A cost line right after `calls=` is
/// the inclusive cost of that call, which belongs to the callee, and is skipped.
fn profile(path: &Path, map: &PerfMap) -> Profile {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    let mut profile = Profile::default();
    let mut object = "???".to_string();
    let mut current: (usize, Option<String>) = (7, None);
    let mut call_cost_next = false;
    for line in text.lines() {
        if let Some(ob) = line.strip_prefix("ob=") {
            object = ob.to_string();
        } else if let Some(name) = line.strip_prefix("fn=") {
            let index = bucket(&object, name);
            let guest = (index == 0).then(|| {
                name.strip_prefix("0x")
                    .and_then(|hex| u64::from_str_radix(hex, 16).ok())
                    .and_then(|address| map.name(address))
                    .unwrap_or("(no name in the perf map)")
                    .to_string()
            });
            current = (index, guest);
        } else if line.starts_with("calls=") {
            call_cost_next = true;
        } else if line.starts_with(|c: char| c.is_ascii_digit()) {
            if std::mem::take(&mut call_cost_next) {
                continue;
            }
            let cost: u64 = line
                .split_whitespace()
                .nth(1)
                .and_then(|c| c.parse().ok())
                .unwrap_or_else(|| panic!("a cost line callgrind wrote: {line:?}"));
            profile.buckets[current.0] += cost;
            profile.total += cost;
            if let Some(name) = &current.1 {
                *profile.guest.entry(name.clone()).or_default() += cost;
            }
        } else if let Some(total) = line.strip_prefix("totals: ") {
            let total: u64 = total.trim().parse().expect("callgrind's total");
            assert_eq!(
                total, profile.total,
                "the self costs add up to callgrind's total"
            );
        }
    }
    profile
}

/// How many of the guest's crates the table names; the rest share a row.
const GUEST_CRATES: usize = 10;

/// The guest's instructions by crate, most first: the first path segment of
/// each demangled function name (`krt_guest`, `serde_json`, `alloc`), or what
/// wasi-libc's C functions are for (`dlmalloc`, `memcpy`).
fn guest_crates(functions: &HashMap<String, u64>) -> Vec<(String, u64)> {
    let mut crates: HashMap<String, u64> = HashMap::new();
    for (name, count) in functions {
        *crates.entry(guest_crate(name)).or_default() += count;
    }
    let mut crates: Vec<(String, u64)> = crates.into_iter().collect();
    crates.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    crates
}

/// The crate of guest function `name` (wasmtime names one
/// `wasm[0]::function[123]::<its symbol>`), for [`guest_crates`].
fn guest_crate(name: &str) -> String {
    if name.starts_with('(') {
        return name.to_string();
    }
    let symbol = name.rsplit_once("]::").map_or(name, |(_, s)| s);
    let demangled = match rustc_demangle::try_demangle(symbol) {
        Ok(demangled) => demangled.to_string(),
        // A legacy symbol cut short: `_ZN<length><segment>…`, `..` for `::`
        // and `_` before a segment that starts with an escape.
        Err(_) => symbol
            .strip_prefix("_ZN")
            .map(|rest| {
                rest.trim_start_matches(|c: char| c.is_ascii_digit())
                    .trim_start_matches('_')
                    .replace("$LT$", "<")
                    .replace("..", "::")
            })
            .unwrap_or_else(|| symbol.to_string()),
    };
    let krate = crate_of(&demangled);
    // v0 symbols carry the crate's hash: `alloc[8f2c…]`.
    let krate = krate.split('[').next().unwrap_or(krate);
    match krate {
        // The global allocator's shims (`__rust_alloc`).
        "__rustc" => "alloc".into(),
        _ if krate != demangled => krate.into(),
        _ if krate.starts_with("dl")
            || ["malloc", "free", "realloc", "calloc", "aligned_alloc"].contains(&krate) =>
        {
            "dlmalloc (wasi-libc's malloc and free)".into()
        }
        _ if krate.starts_with("mem") => "wasi-libc's memcpy, memset, memcmp".into(),
        _ => format!("{krate} (C)"),
    }
}

/// Whether valgrind can be run.
fn valgrind_found() -> bool {
    std::process::Command::new("valgrind")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

impl Bench {
    /// `krt apply` of a Namespace and 1,000 ConfigMaps (every object a create),
    /// then of the same files again (every object unchanged), then again
    /// through one pass-through middleware, each under callgrind with the warm
    /// compile cache; instructions per object by bucket.
    pub async fn instructions(&self) {
        if !valgrind_found() {
            say!("valgrind not found: the instruction counts need it (Debian's package valgrind)");
            return;
        }
        // `KRT_BENCH_GUEST=path` counts another runtime component in place of the built-in one.
        let guest = crate::bench_guest();
        let component: Vec<&str> = match &guest {
            Some((path, _)) => vec!["--component", path.to_str().expect("a UTF-8 path")],
            None => Vec::new(),
        };
        if let Some((path, label)) = &guest {
            say!("runtime component: {} ({label})", path.display());
        }
        // The third run goes through one pass-through middleware: what a link
        // adds, by where it runs.
        let passthrough = crate::passthrough_component();
        let middleware = ["--middleware", passthrough.to_str().expect("a UTF-8 path")];
        let cluster = start_cluster().await;
        // The runtime and the middleware are compiled first, under callgrind
        // too: wasmtime's compile cache is keyed by the CPU features the
        // engine finds, and valgrind's CPU has other features than the
        // machine's, so a cache warmed outside it would not serve the runs.
        let warm = manifests(self.path(), "warm-instructions", &in_new_namespace(1));
        let args = [
            &["apply", "-f", warm.to_str().unwrap(), "--yes"],
            &component[..],
            &middleware[..],
        ]
        .concat();
        let warm_work = tempfile::tempdir_in(self.path()).unwrap();
        let out = self.path().join("callgrind-warm.out");
        self.callgrind(
            &cluster.kubeconfig,
            &args,
            warm_work.path(),
            &out,
            "warming the cache",
        )
        .await;
        let objects = in_new_namespace(1000);
        let n = objects.len() as f64;
        let dir = manifests(self.path(), "instructions", &objects);
        let work = tempfile::tempdir_in(self.path()).unwrap();
        let mut profiles = Vec::new();
        let mut bounds_checked = false;
        for (run, links) in [
            ("create", &[][..]),
            ("unchanged", &[][..]),
            ("unchanged-middleware", &middleware[..]),
        ] {
            let out = self.path().join(format!("callgrind-{run}.out"));
            let args = [
                &["apply", "-f", dir.to_str().unwrap(), "--yes"],
                &component[..],
                links,
            ]
            .concat();
            let (names, checked) = self
                .callgrind(&cluster.kubeconfig, &args, work.path(), &out, run)
                .await;
            bounds_checked |= checked;
            profiles.push(profile(&out, &names));
        }
        let per_object = |count: u64| format!("{:.0}", count as f64 / n);
        let share = |count: u64, total: u64| format!("{:.1}%", 100.0 * count as f64 / total as f64);
        let mut rows: Vec<Vec<String>> = BUCKETS
            .iter()
            .enumerate()
            .map(|(i, name)| {
                let mut row = vec![name.to_string()];
                for p in &profiles[..2] {
                    row.push(per_object(p.buckets[i]));
                    row.push(share(p.buckets[i], p.total));
                }
                row
            })
            .collect();
        let mut total = vec!["all of krt's process".to_string()];
        for p in &profiles[..2] {
            total.push(per_object(p.total));
            total.push("100%".into());
        }
        rows.push(total);
        table(
            "Instructions per object: krt apply of a Namespace and 1,000 ConfigMaps under \
             callgrind (self cost of each function, by where it runs; warm compile cache)",
            &[
                "where",
                "create: per object",
                "share",
                "unchanged: per object",
                "share",
            ],
            &rows,
        );
        let mut crates = guest_crates(&profiles[1].guest);
        let rest: u64 = crates.iter().skip(GUEST_CRATES).map(|(_, c)| c).sum();
        crates.truncate(GUEST_CRATES);
        crates.push(("the other crates".into(), rest));
        let mut rows: Vec<Vec<String>> = crates
            .into_iter()
            .map(|(krate, count)| {
                vec![
                    krate,
                    per_object(count),
                    share(count, profiles[1].buckets[0]),
                ]
            })
            .collect();
        rows.push(vec![
            "all of the guest's code".into(),
            per_object(profiles[1].buckets[0]),
            "100%".into(),
        ]);
        table(
            "Inside the guest: its instructions per unchanged object, by the crate of each \
             function (named through wasmtime's perf map)",
            &["crate", "per object", "share"],
            &rows,
        );
        let (plain, linked) = (&profiles[1], &profiles[2]);
        let added = |i: usize| linked.buckets[i] as i64 - plain.buckets[i] as i64;
        let total_added = linked.total as i64 - plain.total as i64;
        let mut rows: Vec<Vec<String>> = BUCKETS
            .iter()
            .enumerate()
            .map(|(i, name)| {
                vec![
                    name.to_string(),
                    format!("{:+.0}", added(i) as f64 / n),
                    format!("{:.1}%", 100.0 * added(i) as f64 / total_added as f64),
                ]
            })
            .collect();
        rows.push(vec![
            "all of krt's process".into(),
            format!("{:+.0}", total_added as f64 / n),
            "100%".into(),
        ]);
        table(
            "One pass-through middleware link: the instructions it adds per unchanged object \
             (the same run again with `--middleware passthrough.wasm`), by where they run",
            &["where", "added per object", "share"],
            &rows,
        );
        say!(
            "\ninstructions per object: create {}, unchanged {} (the guest's share of unchanged: {:.0} per object), one pass-through link {:+.0}",
            per_object(profiles[0].total),
            per_object(profiles[1].total),
            profiles[1].buckets[0] as f64 / n,
            total_added as f64 / n
        );
        if bounds_checked {
            say!(
                "(valgrind's address space cannot hold 4 GiB for each memory of krt's instance \
                 pool: under it, krt reserves each memory's limit and the compiled guest checks \
                 the bounds of every access, which the boundary levers time)"
            );
        }
    }

    /// Runs `krt` with `args` in `work` under callgrind, its counts written to
    /// `out`, with wasmtime's perf map on; the names the perf map gave the
    /// compiled guest code, and whether krt warned that its memories are
    /// bounds-checked. `what` names the run when it fails.
    async fn callgrind(
        &self,
        kubeconfig: &Path,
        args: &[&str],
        work: &Path,
        out: &Path,
        what: &str,
    ) -> (PerfMap, bool) {
        let valgrind = [
            "valgrind",
            "--tool=callgrind",
            "--compress-strings=no",
            "--compress-pos=no",
            // wasmtime writes the compiled guest into memory it then runs.
            "--smc-check=all-non-file",
        ]
        .map(String::from);
        let valgrind = [
            &valgrind[..],
            &[format!("--callgrind-out-file={}", out.display())],
        ]
        .concat();
        let mut cmd = crate::krt_command(
            Some(&valgrind),
            &crate::this_krt(),
            kubeconfig,
            args,
            work,
            &self.cache,
        );
        cmd.env("KRT_PERF_MAP", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let child = cmd.spawn().expect("valgrind starts");
        let pid = child.id().expect("a running child");
        let done = child.wait_with_output().await.expect("valgrind runs");
        assert!(
            done.status.success(),
            "krt apply ({what}) under callgrind failed:\n{}",
            String::from_utf8_lossy(&done.stderr)
        );
        let map = PathBuf::from(format!("/tmp/perf-{pid}.map"));
        let names = perf_map(&map);
        let _ = std::fs::remove_file(&map);
        let stderr = String::from_utf8_lossy(&done.stderr);
        (
            names,
            stderr.contains("with a bounds check on every memory access"),
        )
    }
}
