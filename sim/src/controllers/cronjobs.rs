//! The CronJob controller: at each scheduled time (UTC) a Job from the CronJob's template, as
//! kube's `cronjob_controllerv2` makes it (named `<cronjob>-<scheduled minutes since the
//! epoch>`), honouring `suspend` and `concurrencyPolicy`; `status.active`, `lastScheduleTime`
//! and `lastSuccessfulTime` kept; finished Jobs past the history limits deleted; and that
//! controller's Events (`SuccessfulCreate`, `SawCompletedJob`, `SuccessfulDelete`). Time zones
//! other than UTC (`spec.timeZone`) are not simulated: schedules are read in UTC.

use std::str::FromStr;

use croner::Cron;
use jiff::Timestamp;
use jiff::tz::TimeZone;
use serde_json::{Value, json};

use super::workloads::{objects, save};
use crate::events::{self, Reporter, Type};
use crate::meta;
use crate::store::{Key, State};

/// The CronJob controller, as its Events name it.
const CRONJOB: Reporter = Reporter {
    component: "cronjob-controller",
    host: "",
};

/// The annotation a Job made for a schedule carries its scheduled time in.
const SCHEDULED_AT: &str = "batch.kubernetes.io/cronjob-scheduled-timestamp";

/// The most recent time `schedule` fires at after `after` and at or before `now` (Unix seconds).
fn last_due(schedule: &str, after: i64, now: i64) -> Option<i64> {
    let cron = Cron::from_str(schedule).ok()?;
    let at = |secs: i64| {
        Timestamp::from_second(secs)
            .ok()
            .map(|t| t.to_zoned(TimeZone::UTC))
    };
    let last = cron.find_previous_occurrence(&at(now + 1)?, false).ok()?;
    let last = last.timestamp().as_second();
    (last > after).then_some(last)
}

/// A Job's terminal condition (`Complete` or `Failed`), if it has one.
fn finished(job: &Value) -> Option<&str> {
    job["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| (c["type"] == "Complete" || c["type"] == "Failed") && c["status"] == "True")
        .and_then(|c| c["type"].as_str())
}

fn job_ref(job: &Value) -> Value {
    json!({"kind": "Job", "namespace": job["metadata"]["namespace"], "name": job["metadata"]["name"],
        "uid": job["metadata"]["uid"], "apiVersion": "batch/v1",
        "resourceVersion": job["metadata"]["resourceVersion"]})
}

/// One pass over every CronJob (time-driven, so whatever changed).
pub fn reconcile(state: &mut State) {
    for (key, cronjob) in objects(state, "batch", "cronjobs", |_| true) {
        sync(state, &key, &cronjob);
    }
}

fn sync(state: &mut State, key: &Key, cronjob: &Value) {
    let uid = cronjob["metadata"]["uid"].as_str().unwrap_or_default();
    let mut jobs: Vec<(Key, Value)> = state
        .dependents(uid)
        .into_iter()
        .filter(|k| k.group == "batch" && k.resource == "jobs")
        .filter_map(|k| state.get(&k).cloned().map(|j| (k, j)))
        .collect();
    jobs.sort_by(|a, b| {
        let at = |j: &Value| {
            j["metadata"]["creationTimestamp"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        };
        at(&a.1).cmp(&at(&b.1)).then(a.0.cmp(&b.0))
    });
    let regarding = events::reference(cronjob, None);
    let was_active: Vec<&Value> = cronjob["status"]["active"]
        .as_array()
        .map(|a| a.iter().collect())
        .unwrap_or_default();
    let mut status = cronjob["status"].clone();
    if !status.is_object() {
        status = json!({});
    }
    for (_, job) in &jobs {
        let Some(condition) = finished(job) else {
            continue;
        };
        let name = job["metadata"]["name"].as_str().unwrap_or_default();
        if was_active
            .iter()
            .any(|r| r["uid"] == job["metadata"]["uid"])
        {
            let message = format!("Saw completed job: {name}, condition: {condition}");
            events::record(
                state,
                CRONJOB,
                &regarding,
                Type::Normal,
                "SawCompletedJob",
                &message,
            );
        }
        if condition == "Complete" {
            let done = job["status"]["completionTime"].clone();
            if done.as_str() > status["lastSuccessfulTime"].as_str() {
                status["lastSuccessfulTime"] = done;
            }
        }
    }
    let mut active: Vec<(Key, Value)> = jobs
        .iter()
        .filter(|(_, j)| finished(j).is_none() && j["metadata"]["deletionTimestamp"].is_null())
        .cloned()
        .collect();
    let since = status["lastScheduleTime"]
        .as_str()
        .or_else(|| cronjob["metadata"]["creationTimestamp"].as_str())
        .and_then(meta::parse_rfc3339)
        .unwrap_or_else(meta::now_secs);
    let schedule = cronjob["spec"]["schedule"].as_str().unwrap_or_default();
    let due = last_due(schedule, since, meta::now_secs());
    if let Some(at) = due.filter(|_| cronjob["spec"]["suspend"] != true) {
        let policy = cronjob["spec"]["concurrencyPolicy"]
            .as_str()
            .unwrap_or("Allow");
        if policy == "Replace" {
            for (k, job) in active.drain(..) {
                delete_job(state, &regarding, &k, &job);
            }
        }
        if policy != "Forbid" || active.is_empty() {
            let (k, job) = new_job(cronjob, &key.namespace, at);
            let stored = state.put(k.clone(), job);
            let message = format!("Created job {}", k.name);
            events::record(
                state,
                CRONJOB,
                &regarding,
                Type::Normal,
                "SuccessfulCreate",
                &message,
            );
            active.push((k, stored));
        }
        status["lastScheduleTime"] = json!(meta::format_unix(u64::try_from(at).unwrap_or(0)));
    }
    // A Job already listed keeps its reference (taken when it was made), as the real controller's.
    let refs: Vec<Value> = active
        .iter()
        .map(|(_, j)| {
            was_active
                .iter()
                .find(|r| r["uid"] == j["metadata"]["uid"])
                .map_or_else(|| job_ref(j), |r| (*r).clone())
        })
        .collect();
    if refs.is_empty() {
        if let Some(fields) = status.as_object_mut() {
            fields.remove("active");
        }
    } else {
        status["active"] = Value::Array(refs);
    }
    prune(state, cronjob, &regarding, &jobs);
    let mut next = cronjob.clone();
    next["status"] = status;
    save(state, key, next);
}

/// The Job of `cronjob` for the time `at`.
fn new_job(cronjob: &Value, namespace: &str, at: i64) -> (Key, Value) {
    let name = format!(
        "{}-{}",
        cronjob["metadata"]["name"].as_str().unwrap_or_default(),
        at / 60
    );
    let template = &cronjob["spec"]["jobTemplate"];
    let mut annotations = template["metadata"]["annotations"].clone();
    if !annotations.is_object() {
        annotations = json!({});
    }
    annotations[SCHEDULED_AT] = json!(meta::format_unix(u64::try_from(at).unwrap_or(0)));
    let mut metadata = json!({"name": name, "namespace": namespace, "uid": meta::uid(),
        "creationTimestamp": meta::now(), "generation": 1, "annotations": annotations,
        "ownerReferences": [{"apiVersion": "batch/v1", "kind": "CronJob",
            "name": cronjob["metadata"]["name"], "uid": cronjob["metadata"]["uid"],
            "controller": true, "blockOwnerDeletion": true}]});
    if template["metadata"]["labels"].is_object() {
        metadata["labels"] = template["metadata"]["labels"].clone();
    }
    let job = json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": metadata,
        "spec": template["spec"]});
    (Key::of("batch", "jobs", namespace, name), job)
}

/// Deletes the Job `job` stored at `key` and records it on the CronJob `regarding`.
fn delete_job(state: &mut State, regarding: &Value, key: &Key, job: &Value) {
    state.remove(key);
    let message = format!(
        "Deleted job {}",
        job["metadata"]["name"].as_str().unwrap_or_default()
    );
    events::record(
        state,
        CRONJOB,
        regarding,
        Type::Normal,
        "SuccessfulDelete",
        &message,
    );
}

/// Deletes the oldest finished Jobs past `successfulJobsHistoryLimit` (3) and
/// `failedJobsHistoryLimit` (1).
fn prune(state: &mut State, cronjob: &Value, regarding: &Value, jobs: &[(Key, Value)]) {
    for (condition, field, default) in [
        ("Complete", "successfulJobsHistoryLimit", 3),
        ("Failed", "failedJobsHistoryLimit", 1),
    ] {
        let limit = cronjob["spec"][field].as_u64().unwrap_or(default) as usize;
        let done: Vec<&(Key, Value)> = jobs
            .iter()
            .filter(|(_, j)| finished(j) == Some(condition))
            .collect();
        for (k, job) in done.iter().take(done.len().saturating_sub(limit)) {
            delete_job(state, regarding, k, job);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;

    fn key(resource: &str, name: &str) -> Key {
        Key::of("batch", resource, "d", name)
    }

    fn reasons(state: &State) -> Vec<(String, String)> {
        let mut all: Vec<(String, String)> = state
            .list("", "events", Some("d"))
            .into_iter()
            .filter(|(_, e)| e["source"]["component"] == "cronjob-controller")
            .map(|(_, e)| {
                (
                    e["reason"].as_str().unwrap().to_string(),
                    e["message"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        all.sort();
        all
    }

    #[test]
    fn the_last_missed_time_makes_one_job_whose_completion_is_seen() {
        let store = Store::new(1000);
        let mut s = store.lock();
        let created = meta::now_secs() - 150;
        s.put(
            key("cronjobs", "tick"),
            json!({"apiVersion": "batch/v1", "kind": "CronJob",
                "metadata": {"name": "tick", "namespace": "d", "uid": "c1",
                    "creationTimestamp": meta::format_unix(u64::try_from(created).unwrap())},
                "spec": {"schedule": "* * * * *", "jobTemplate": {"metadata": {"labels": {"app": "tick"}},
                    "spec": {"template": {"spec": {"containers": [{"name": "a", "image": "x"}],
                        "restartPolicy": "Never"}}}}}}),
        );
        reconcile(&mut s);
        let cronjob = s.get(&key("cronjobs", "tick")).unwrap().clone();
        let scheduled = cronjob["status"]["lastScheduleTime"].as_str().unwrap();
        let scheduled = meta::parse_rfc3339(scheduled).unwrap();
        assert_eq!(scheduled % 60, 0);
        assert!(meta::now_secs() - scheduled <= 60, "the last minute's time");
        let name = format!("tick-{}", scheduled / 60);
        let job = s
            .get(&key("jobs", &name))
            .expect("the job of the last minute")
            .clone();
        assert_eq!(job["metadata"]["labels"]["app"], "tick");
        assert_eq!(job["metadata"]["ownerReferences"][0]["uid"], "c1");
        assert_eq!(cronjob["status"]["active"][0]["name"], name.as_str());
        reconcile(&mut s);
        assert_eq!(
            s.list("batch", "jobs", Some("d")).len(),
            1,
            "one job a schedule"
        );
        let mut done = job.clone();
        done["status"] = json!({"completionTime": meta::now(),
            "conditions": [{"type": "Complete", "status": "True"}]});
        s.put(key("jobs", &name), done);
        reconcile(&mut s);
        let cronjob = s.get(&key("cronjobs", "tick")).unwrap();
        assert!(cronjob["status"]["active"].is_null());
        assert!(cronjob["status"]["lastSuccessfulTime"].is_string());
        assert_eq!(
            reasons(&s),
            [
                (
                    "SawCompletedJob".to_string(),
                    format!("Saw completed job: {name}, condition: Complete")
                ),
                (
                    "SuccessfulCreate".to_string(),
                    format!("Created job {name}")
                ),
            ]
        );
    }

    #[test]
    fn schedules_fire_only_after_the_last_time() {
        assert_eq!(last_due("0 * * * *", 7_200, 7_199 + 3_600), None);
        assert_eq!(last_due("0 * * * *", 7_200, 7_200 + 3_600), Some(10_800));
        assert_eq!(last_due("@hourly", 0, 7_300), Some(7_200));
        assert_eq!(last_due("not a schedule", 0, 7_300), None);
    }
}
