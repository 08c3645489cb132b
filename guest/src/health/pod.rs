//! H5 rule of Pods: phase, readiness, container waiting errors and scheduling.

use serde_json::Value;

use super::fields::{at, condition, str_at, with_detail};
use super::{current, failed, in_progress};
use crate::model::{Health, HealthState};

/// How long an unschedulable Pod may wait before it counts as failed.
const UNSCHEDULABLE_GRACE_SECS: i64 = 15;

/// Pod: phase first; a running or pending Pod fails on container errors (§8.3 H5).
pub(super) fn pod(object: &Value, now: Option<i64>) -> Health {
    let restart_always = matches!(
        str_at(object, &["spec", "restartPolicy"]),
        None | Some("Always")
    );
    let status_message = str_at(object, &["status", "message"]).unwrap_or("");
    match str_at(object, &["status", "phase"]) {
        Some("Succeeded") => current("Pod has completed successfully"),
        Some("Failed") => {
            let message = with_detail("Pod has completed, but not successfully", status_message);
            if restart_always {
                failed("PodFailed", message)
            } else {
                current(message)
            }
        }
        Some("Running") => {
            if condition(object, "Ready").is_some_and(|c| c.is_true()) {
                return current("Pod is Ready");
            }
            container_errors(object, restart_always).unwrap_or_else(|| {
                in_progress("PodRunningNotReady", "Pod is running but is not Ready")
            })
        }
        Some("Pending") => {
            if let Some(health) = container_errors(object, restart_always) {
                return health;
            }
            match condition(object, "PodScheduled") {
                Some(c) if c.status == "False" && c.reason == "Unschedulable" => {
                    if created_within(object, now, UNSCHEDULABLE_GRACE_SECS) {
                        in_progress("PodNotScheduled", "Pod has not been scheduled")
                    } else {
                        failed(
                            "PodUnschedulable",
                            with_detail("Pod could not be scheduled", c.message),
                        )
                    }
                }
                _ => in_progress("PodPending", "Pod is in the Pending phase"),
            }
        }
        None => in_progress("PodNotObserved", "Pod phase not available"),
        Some(phase) => Health::new(
            HealthState::Unknown,
            "UnknownPodPhase",
            format!("Pod phase is {phase}"),
        ),
    }
}

/// `Failed` when a container (init containers first) waits with `CrashLoopBackOff`, or, with
/// restartPolicy Always, with a reason starting with `Err` or ending with `Error`/`BackOff`.
fn container_errors(object: &Value, restart_always: bool) -> Option<Health> {
    let mut crash_looping = Vec::new();
    let mut details = Vec::new();
    let mut first_reason = None;
    let statuses = ["initContainerStatuses", "containerStatuses"]
        .into_iter()
        .filter_map(|key| at(object, &["status", key]).and_then(Value::as_array))
        .flatten();
    for status in statuses {
        let name = str_at(status, &["name"]).unwrap_or("");
        let Some(reason) = str_at(status, &["state", "waiting", "reason"]) else {
            continue;
        };
        let message = str_at(status, &["state", "waiting", "message"]).unwrap_or("");
        let crash = reason == "CrashLoopBackOff";
        let error = restart_always
            && (reason.starts_with("Err")
                || reason.ends_with("Error")
                || reason.ends_with("BackOff"));
        if !crash && !error {
            continue;
        }
        first_reason.get_or_insert(reason);
        if crash {
            crash_looping.push(name);
        }
        if !crash || !message.is_empty() {
            details.push(with_detail(&format!("{name}: {reason}"), message));
        }
    }
    let first_reason = first_reason?;
    Some(if crash_looping.is_empty() {
        failed(first_reason, details.join("; "))
    } else {
        let mut message = format!("Containers in CrashLoop state: {}", crash_looping.join(","));
        for detail in details {
            message.push_str("; ");
            message.push_str(&detail);
        }
        failed("ContainerCrashLooping", message)
    })
}

/// Whether `metadata.creationTimestamp` is less than `secs` before `now`; a missing clock or
/// timestamp counts as long ago.
fn created_within(object: &Value, now: Option<i64>, secs: i64) -> bool {
    let created = str_at(object, &["metadata", "creationTimestamp"]).and_then(parse_rfc3339);
    match (now, created) {
        (Some(now), Some(created)) => now.saturating_sub(created) < secs,
        _ => false,
    }
}

/// Seconds since the Unix epoch of an RFC 3339 time (`2024-05-01T12:00:00Z`, optional
/// fraction and `±hh:mm` offset); `None` when malformed.
fn parse_rfc3339(text: &str) -> Option<i64> {
    let num = |range: std::ops::Range<usize>| -> Option<i64> {
        let part = text.get(range)?;
        part.bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| part.parse().ok())?
    };
    let bytes = text.as_bytes();
    if bytes.len() < 20
        || bytes[4] != b'-'
        || bytes[7] != b'-'
        || !matches!(bytes[10], b'T' | b't' | b' ')
        || bytes[13] != b':'
        || bytes[16] != b':'
    {
        return None;
    }
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hour, minute, second) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let mut rest = text.get(19..)?;
    if let Some(fraction) = rest.strip_prefix('.') {
        let digits = fraction.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        rest = fraction.get(digits..)?;
    }
    let offset = match rest {
        "Z" | "z" => 0,
        _ => {
            let sign = match rest.as_bytes().first()? {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            let (h, m) = rest.get(1..)?.split_once(':')?;
            if h.len() != 2
                || m.len() != 2
                || !(h.bytes().chain(m.bytes())).all(|b| b.is_ascii_digit())
            {
                return None;
            }
            sign * (h.parse::<i64>().ok()? * 3600 + m.parse::<i64>().ok()? * 60)
        }
    };
    let days = days_from_civil(year, month, day);
    Some(days * 86_400 + hour * 3600 + minute * 60 + second - offset)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let day_of_year = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_timestamps() {
        assert_eq!(parse_rfc3339("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(parse_rfc3339("2024-05-01T12:00:00Z"), Some(1_714_564_800));
        assert_eq!(
            parse_rfc3339("2024-05-01T14:00:00.123456+02:00"),
            Some(1_714_564_800)
        );
        assert_eq!(parse_rfc3339("2000-03-01T00:00:00Z"), Some(951_868_800));
        for bad in [
            "",
            "2024-05-01",
            "2024-13-01T00:00:00Z",
            "2024-05-01T00:00:00",
            "2024-05-01T00:00:00.Z",
            "2024-05-01T00:00:00+0200",
            "2024-05-01T00:00:00+é:00",
            "２０２４-05-01T00:00:00Z",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
    }

    #[test]
    fn image_pull_errors_fail_with_container_details() {
        let pod_json = json!({"status": {"phase": "Pending", "containerStatuses": [
            {"name": "app", "state": {"waiting": {"reason": "ImagePullBackOff", "message": "Back-off pulling image \"nope\""}}},
            {"name": "sidecar", "state": {"waiting": {"reason": "ContainerCreating"}}}]}});
        assert_eq!(
            pod(&pod_json, None),
            failed(
                "ImagePullBackOff",
                "app: ImagePullBackOff: Back-off pulling image \"nope\""
            )
        );
        let never =
            json!({"spec": {"restartPolicy": "Never"}, "status": pod_json["status"].clone()});
        assert_eq!(pod(&never, None).reason, "PodPending");
    }

    #[test]
    fn crash_loop_lists_containers_and_messages() {
        let pod_json = json!({"status": {"phase": "Running",
            "initContainerStatuses": [{"name": "init", "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 10s"}}}],
            "containerStatuses": [{"name": "app", "state": {"waiting": {"reason": "CreateContainerConfigError", "message": "secret \"s\" not found"}}}]}});
        assert_eq!(
            pod(&pod_json, None),
            failed(
                "ContainerCrashLooping",
                "Containers in CrashLoop state: init; init: CrashLoopBackOff: back-off 10s; app: CreateContainerConfigError: secret \"s\" not found"
            )
        );
    }

    #[test]
    fn failed_pod_depends_on_restart_policy() {
        let on_failure = json!({"spec": {"restartPolicy": "OnFailure"}, "status": {"phase": "Failed", "message": "evicted"}});
        assert_eq!(
            pod(&on_failure, None),
            current("Pod has completed, but not successfully: evicted")
        );
        assert_eq!(
            pod(&json!({"status": {"phase": "Weird"}}), None).state,
            HealthState::Unknown
        );
    }

    #[test]
    fn unschedulable_window() {
        let pod_json = json!({"metadata": {"creationTimestamp": "2024-05-01T12:00:00Z"},
            "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False",
            "reason": "Unschedulable", "message": "0/3 nodes are available"}]}});
        assert_eq!(
            pod(&pod_json, Some(1_714_564_814)).reason,
            "PodNotScheduled"
        );
        assert_eq!(
            pod(&pod_json, Some(1_714_564_815)),
            failed(
                "PodUnschedulable",
                "Pod could not be scheduled: 0/3 nodes are available"
            )
        );
        assert_eq!(pod(&pod_json, None).reason, "PodUnschedulable");
    }
}
