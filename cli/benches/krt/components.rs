//! `components`: the size of each component krt ships or tests with, as
//! built from this checkout.

use crate::Bench;
use std::path::PathBuf;

/// A size in decimal megabytes and in bytes: `12.3 MB (12,253,853 bytes)`.
fn size(bytes: u64) -> String {
    let digits = bytes.to_string();
    let mut grouped = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(c);
    }
    format!("{:.1} MB ({grouped} bytes)", bytes as f64 / 1e6)
}

impl Bench {
    /// krt's prebuilt guest, the org-rules and pass-through middleware (built
    /// as the tests build them) and the JavaScript middleware
    /// (`examples/js-labels/build.sh`, which needs npm).
    pub async fn components(&self) {
        let workspace = krt_testkit::workspace();
        let mut rows = vec![vec![
            "krt's guest (`guest-component/krt_guest.wasm`)".to_string(),
            size(krt_guest_component::COMPONENT.len() as u64),
        ]];
        let org_rules = krt_wasm_build::Build::new(
            &workspace,
            krt_wasm_build::test_guests_dir(&workspace),
            "release",
            &["-p", "org-rules", "--lib"],
        )
        .outputs(true, &["org_rules.wasm"])
        .unwrap_or_else(|e| panic!("building org-rules failed: {e}"));
        let passthrough = crate::passthrough_component();
        let js = std::process::Command::new(workspace.join("examples/js-labels/build.sh"))
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()));
        let built = [
            (
                "the org-rules middleware (Rust, `examples/org-rules`)",
                Some(&org_rules[0]),
            ),
            (
                "a pass-through middleware (Rust, `tests/middleware`)",
                Some(&passthrough),
            ),
            (
                "the js-labels middleware (JavaScript, `examples/js-labels`)",
                js.as_ref(),
            ),
        ];
        for (what, path) in built {
            let cell = match path {
                Some(path) => size(std::fs::metadata(path).expect("the component").len()),
                None => "not built (its build script failed: npm missing?)".into(),
            };
            rows.push(vec![what.to_string(), cell]);
        }
        crate::table(
            "Components: size on disk, as built from this checkout (wasm32-wasip2, release)",
            &["component", "size"],
            &rows,
        );
    }
}
