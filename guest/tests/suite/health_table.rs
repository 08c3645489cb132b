//! Table H of k8s-semantics §9.1 (kstatus `Compute` cases H1–H57) with the §9.1 adjustments,
//! read from `fixtures/health_table.json`.

use krt_guest::health::compute;
use krt_guest::model::{Health, HealthState};
use serde::Deserialize;
use serde_json::Value;

/// One row of Table H.
#[derive(Deserialize)]
struct Row {
    id: String,
    test: String,
    object: Value,
    /// The clock, for the Pod scheduling window; absent = every timestamp is long ago.
    now: Option<i64>,
    state: HealthState,
    reason: String,
    message: String,
    /// Why the row differs from kstatus (§8.3), when it does.
    deviation: Option<String>,
    /// kstatus' own answer for a deviating row.
    kstatus: Option<String>,
}

#[test]
fn table_h() {
    let rows: Vec<Row> =
        serde_json::from_str(include_str!("../fixtures/health_table.json")).expect("valid fixture");
    assert_eq!(rows.len(), 57, "rows H1–H57");
    let mut failures = Vec::new();
    for row in &rows {
        let got = compute(&row.object, row.now);
        let want = Health::new(row.state, row.reason.clone(), row.message.clone());
        if got != want {
            failures.push(format!(
                "{} {}: got {got:?}, want {want:?}{}",
                row.id,
                row.test,
                row.deviation
                    .as_ref()
                    .map(|d| format!(" ({d}; kstatus: {})", row.kstatus.as_deref().unwrap_or("?")))
                    .unwrap_or_default()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(
        rows.iter().filter(|r| r.deviation.is_some()).count(),
        7,
        "the §9.1 adjustments: H4, H9, H21, H26, H31, H42, H48"
    );
}

#[test]
fn unschedulable_pod_without_clock_is_failed() {
    let rows: Vec<Row> =
        serde_json::from_str(include_str!("../fixtures/health_table.json")).expect("valid fixture");
    let h53 = rows.iter().find(|r| r.id == "H53").expect("row H53");
    assert_eq!(compute(&h53.object, None).state, HealthState::Failed);
    assert_eq!(
        compute(&h53.object, h53.now.map(|n| n + 60)).state,
        HealthState::Failed
    );
}
