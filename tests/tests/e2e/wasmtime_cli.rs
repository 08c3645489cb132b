//! The components under the plain `wasmtime` CLI, as users' CI drives them: `tests/compose.sh`
//! plugs the in-memory cluster into krt's guest, and every test shells out to
//! `wasmtime run --invoke` (WAVE syntax) and asserts the printed value (`--invoke` exits 0 even
//! for an `err(..)`).
//!
//! Each `wasmtime run` instantiates the composition afresh, so every invocation starts from an
//! empty in-memory cluster (only the default namespaces): one call per run, and state never
//! carries over between runs.
//!
//! Needs `wasmtime` and `wac`, and `wasm-tools` for the imports check (`.ci/run` installs them).
//! Without them the tests print why and pass, except in CI (`CI=true`), where they fail.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::{Value, json};

use crate::support::{run_ok, workspace};

/// The built components.
pub(crate) struct Components {
    pub(crate) guest: PathBuf,
    pub(crate) memcluster: PathBuf,
    composed: PathBuf,
}

/// The composed components, built once per test run; `None` (after printing why) when the tools
/// are missing outside CI.
pub(crate) fn components() -> Option<&'static Components> {
    static BUILT: OnceLock<Option<Components>> = OnceLock::new();
    BUILT.get_or_init(build).as_ref()
}

fn build() -> Option<Components> {
    if !installed(&["wasmtime", "wac"]) {
        return None;
    }
    let target = target_dir();
    let out = target.join("components");
    run_ok(
        Command::new(workspace().join("tests/compose.sh"))
            .arg(&out)
            .env("CARGO", env!("CARGO"))
            .env("CARGO_TARGET_DIR", &target)
            .env("PATH", search_path()),
        "tests/compose.sh",
    );
    Some(Components {
        guest: out.join("guest.wasm"),
        memcluster: out.join("memcluster.wasm"),
        composed: out.join("composed.wasm"),
    })
}

/// Whether all of `tools` are installed; if not, prints why the test skips, or fails in CI
/// (`CI=true`), where `.ci/run` installs them.
pub(crate) fn installed(tools: &[&str]) -> bool {
    let missing: Vec<&str> = tools
        .iter()
        .copied()
        .filter(|tool| tool_path(tool).is_none())
        .collect();
    if missing.is_empty() {
        return true;
    }
    let why = format!(
        "{} not installed (.ci/run shows how to install them)",
        missing.join(", ")
    );
    assert!(
        std::env::var("CI").map_or(true, |ci| ci != "true"),
        "CI=true but {why}"
    );
    eprintln!("skipped: {why}");
    false
}

/// `<target>` from this test binary's path `<target>/<profile>/deps/e2e-<hash>`.
pub(crate) fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    exe.ancestors()
        .nth(3)
        .expect("<target>/<profile>/deps/<binary>")
        .to_path_buf()
}

/// `PATH` with cargo's install directory appended, where `cargo install` puts the tools.
fn search_path() -> std::ffi::OsString {
    let mut dirs: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cargo")));
    dirs.extend(cargo_home.map(|h| h.join("bin")));
    std::env::join_paths(dirs).expect("PATH entries")
}

fn tool_path(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&search_path())
        .map(|dir| dir.join(name))
        .find(|path| path.is_file())
}

pub(crate) fn tool(name: &str) -> Command {
    Command::new(tool_path(name).expect("checked by build()"))
}

/// Runs `wasmtime run --invoke call component` and returns its stdout, trimmed; fails the test
/// unless it exits 0.
pub(crate) fn invoke(component: &Path, call: &str) -> String {
    let run = run_ok(
        tool("wasmtime")
            .args(["run", "--invoke", call])
            .arg(component),
        &format!("wasmtime run --invoke {call:?}"),
    );
    String::from_utf8_lossy(&run.stdout).trim().to_string()
}

/// `text` as a WAVE string literal.
fn wave(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The first WAVE string literal after `label` in `printed` (inside `some(..)` too), unescaped.
fn string_after(printed: &str, label: &str) -> Option<String> {
    let rest = &printed[printed.find(label)? + label.len()..];
    let rest = rest.strip_prefix("some(").unwrap_or(rest);
    let mut chars = rest.strip_prefix('"')?.chars();
    let mut out = String::new();
    loop {
        match chars.next()? {
            '"' => return Some(out),
            '\\' => match chars.next()? {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                'r' => out.push('\r'),
                'u' => {
                    let hex: String = chars.by_ref().skip(1).take_while(|c| *c != '}').collect();
                    out.push(char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?);
                }
                other => out.push(other),
            },
            c => out.push(c),
        }
    }
}

/// The object printed as `label: "<json>"`.
fn json_after(printed: &str, label: &str) -> Value {
    let text = string_after(printed, label)
        .unwrap_or_else(|| panic!("no string after {label:?} in:\n{printed}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{label} is not JSON ({e}): {text}"))
}

/// A Kusion resource record in WAVE.
pub(crate) fn resource(id: &str, attributes: &Value) -> String {
    format!(
        "{{id: {}, type: \"Kubernetes\", attributes: {}, depends-on: [], extensions: \"{{}}\"}}",
        wave(id),
        wave(&attributes.to_string())
    )
}

fn deployment() -> Value {
    // No replicas: the server defaults them.
    krt_testkit::deployment("web")
        .namespace("default")
        .without("/spec/replicas")
        .value()
}

pub(crate) const APPLY_OPTIONS: &str = "{dry-run: false, mode: server-side, field-manager: none, force: false, \
    replace-on-immutable: false, default-namespace: none, offline: false, ignore-paths: []}";

#[test]
fn apply_creates_the_object_with_server_defaults() {
    let Some(c) = components() else { return };
    let plan = resource("apps/v1:Deployment:default:web", &deployment());
    let printed = invoke(
        &c.composed,
        &format!("kusion:runtime/runtime.apply@0.1.2(none, some({plan}), {APPLY_OPTIONS})"),
    );
    // WAVE leaves `none` fields out of a record: no `live` (it did not exist), no `status`.
    assert!(
        printed.starts_with("{resource: some({id: \"apps/v1:Deployment:default:web\""),
        "{printed}"
    );
    assert!(
        printed.ends_with("action: create, retries: 0}"),
        "{printed}"
    );
    let applied = json_after(&printed, "attributes: ");
    assert_eq!(applied["metadata"]["name"], "web");
    // Defaults the in-memory API server filled in.
    assert_eq!(applied["spec"]["replicas"], 1, "{applied}");
    assert_eq!(applied["spec"]["strategy"]["type"], "RollingUpdate");
    assert_eq!(
        applied["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"],
        "IfNotPresent"
    );
}

#[test]
fn apply_observed_says_what_the_dry_run_saw() {
    let Some(c) = components() else { return };
    let plan = resource("apps/v1:Deployment:default:web", &deployment());
    let dry_run = APPLY_OPTIONS.replace("dry-run: false", "dry-run: true");
    let printed = invoke(
        &c.composed,
        &format!("apply-observed(none, some({plan}), none, {dry_run})"),
    );
    assert!(
        printed.starts_with("{response: {resource: some({id: \"apps/v1:Deployment:default:web\""),
        "{printed}"
    );
    assert!(
        printed.ends_with("action: create, retries: 0}, observation: some(absent)}"),
        "{printed}"
    );
}

#[test]
fn apply_of_a_kind_the_cluster_does_not_serve_prints_the_error_status() {
    let Some(c) = components() else { return };
    let widget = json!({"apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": "w", "namespace": "default"}});
    let plan = resource("example.com/v1:Widget:default:w", &widget);
    let printed = invoke(
        &c.composed,
        &format!("apply(none, some({plan}), {APPLY_OPTIONS})"),
    );
    assert!(
        printed.contains("status: some({kind: error, code: kind-not-installed"),
        "{printed}"
    );
    assert!(printed.contains("example.com/v1/Widget"), "{printed}");
}

#[test]
fn read_of_a_missing_object_is_none() {
    let Some(c) = components() else { return };
    let plan = resource("apps/v1:Deployment:default:web", &deployment());
    let printed = invoke(
        &c.composed,
        &format!(
            "kusion:runtime/runtime.read@0.1.2(none, some({plan}), {{default-namespace: none}})"
        ),
    );
    // Both fields `none`: WAVE prints the empty record.
    assert_eq!(printed, "{:}");
}

#[test]
fn delete_of_a_missing_object_succeeds() {
    let Some(c) = components() else { return };
    let target = resource("apps/v1:Deployment:default:web", &deployment());
    let printed = invoke(
        &c.composed,
        &format!(
            "kusion:runtime/runtime.delete@0.1.2({target}, \
             {{dry-run: false, propagation-policy: some(foreground), default-namespace: none}})"
        ),
    );
    // A success with an `info` status saying nothing was deleted.
    assert!(
        printed.starts_with("{status: some({kind: info, code: not-found, reason: \"AlreadyGone\""),
        "{printed}"
    );
}

#[test]
fn health_of_objects() {
    let Some(c) = components() else { return };
    let mut ready = deployment();
    ready["metadata"]["generation"] = json!(1);
    ready["status"] = json!({"observedGeneration": 1, "replicas": 1, "updatedReplicas": 1,
        "readyReplicas": 1, "availableReplicas": 1,
        "conditions": [{"type": "Available", "status": "True"}]});
    let printed = invoke(
        &c.composed,
        &format!("health({})", wave(&ready.to_string())),
    );
    assert!(printed.starts_with("ok({state: current"), "{printed}");

    let mut rolling = ready.clone();
    rolling["spec"]["replicas"] = json!(3);
    let printed = invoke(
        &c.composed,
        &format!("health({})", wave(&rolling.to_string())),
    );
    assert!(printed.starts_with("ok({state: in-progress"), "{printed}");

    let printed = invoke(&c.composed, "health(\"not json\")");
    assert!(printed.starts_with("err({kind: error"), "{printed}");
}

#[test]
fn diff_and_three_way_patch() {
    let Some(c) = components() else { return };
    let mut before = deployment();
    before["spec"]["replicas"] = json!(1);
    let mut after = before.clone();
    after["spec"]["replicas"] = json!(3);
    after["spec"]["template"]["spec"]["containers"][0]["image"] = json!("nginx:1.28");
    let printed = invoke(
        &c.composed,
        &format!(
            "diff(some({}), some({}), [\"spec.replicas\"])",
            wave(&before.to_string()),
            wave(&after.to_string())
        ),
    );
    assert!(
        printed.starts_with(
            "ok({changes: [{path: \"spec.template.spec.containers[name=web].image\", \
             before: some(\"\\\"nginx:1.27\\\"\"), after: some(\"\\\"nginx:1.28\\\"\")}]"
        ),
        "{printed}"
    );
    let unified = string_after(&printed, "unified: ").expect("unified diff");
    assert!(
        unified.contains("\n-        image: nginx:1.27\n+        image: nginx:1.28\n"),
        "{unified}"
    );

    let printed = invoke(
        &c.composed,
        &format!(
            "three-way-patch(some({}), {}, some({}))",
            wave(&before.to_string()),
            wave(&after.to_string()),
            wave(&before.to_string())
        ),
    );
    assert!(
        printed.starts_with("ok({type: strategic-merge"),
        "{printed}"
    );
    let patch = json_after(&printed, "body: ");
    assert_eq!(patch["spec"]["replicas"], 3, "{patch}");
    assert_eq!(
        patch["spec"]["template"]["spec"]["containers"][0],
        json!({"name": "web", "image": "nginx:1.28"})
    );
}

/// The imports and exports of the world `wasm-tools component wit` prints for `component`;
/// WASI interfaces without their version (the toolchain's WASI 0.2 patch release).
pub(crate) fn world(component: &Path) -> (Vec<String>, Vec<String>) {
    let printed = run_ok(
        tool("wasm-tools").args(["component", "wit"]).arg(component),
        &format!("wasm-tools component wit {}", component.display()),
    );
    let (mut imports, mut exports) = (Vec::new(), Vec::new());
    for line in String::from_utf8_lossy(&printed.stdout).lines() {
        let line = line.trim().trim_end_matches(';');
        let (list, name) = if let Some(name) = line.strip_prefix("import ") {
            (&mut imports, name)
        } else if let Some(name) = line.strip_prefix("export ") {
            (&mut exports, name)
        } else {
            continue;
        };
        let name = match name.split_once('@') {
            Some((unversioned, _)) if name.starts_with("wasi:") => unversioned,
            _ => name,
        };
        list.push(name.to_string());
    }
    imports.sort();
    exports.sort();
    (imports, exports)
}

/// The WASI interfaces the Rust standard library makes every one of these components import
/// (clocks for `Instant`/`SystemTime`, the insecure seed for `HashMap`).
const WASI: &[&str] = &[
    "wasi:cli/environment",
    "wasi:cli/exit",
    "wasi:cli/stderr",
    "wasi:cli/stdin",
    "wasi:cli/stdout",
    "wasi:cli/terminal-input",
    "wasi:cli/terminal-output",
    "wasi:cli/terminal-stderr",
    "wasi:cli/terminal-stdin",
    "wasi:cli/terminal-stdout",
    "wasi:clocks/monotonic-clock",
    "wasi:clocks/wall-clock",
    "wasi:io/error",
    "wasi:io/poll",
    "wasi:io/streams",
    "wasi:random/insecure-seed",
];

fn sorted(names: &[&str]) -> Vec<String> {
    let mut names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    names.sort();
    names
}

#[test]
fn components_import_exactly_what_they_should() {
    let Some(c) = components().filter(|_| installed(&["wasm-tools"])) else {
        return;
    };
    let with_wasi = |extra: &[&str]| sorted(&[WASI, extra].concat());
    let types = "kusion:runtime/types@0.1.2";
    let guest_exports = sorted(&[
        "kusion:runtime/runtime@0.1.2",
        "kusion:runtime/logic@0.1.2",
        "kusion:runtime/observed-apply@0.1.2",
    ]);

    let (imports, exports) = world(&c.guest);
    assert_eq!(
        imports,
        with_wasi(&[
            types,
            "kusion:runtime/kubernetes@0.1.2",
            "kusion:runtime/host@0.1.2"
        ])
    );
    assert_eq!(exports, guest_exports);

    let (imports, exports) = world(&c.memcluster);
    assert_eq!(imports, with_wasi(&[]));
    assert_eq!(
        exports,
        sorted(&[
            types,
            "kusion:runtime/kubernetes@0.1.2",
            "kusion:runtime/host@0.1.2"
        ])
    );

    // The composition imports WASI only (no sockets, filesystem or HTTP), and exports `types`
    // again besides the guest's exports, since `runtime`, `logic` and `observed-apply` use its
    // types.
    let (imports, exports) = world(&c.composed);
    assert_eq!(imports, with_wasi(&[]));
    let mut composed_exports = guest_exports.clone();
    composed_exports.push(types.to_string());
    composed_exports.sort();
    assert_eq!(exports, composed_exports);
}
