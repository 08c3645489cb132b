//! CronJob schedules as kube-apiserver parses them (robfig/cron v3's `ParseStandard`: five
//! fields or an `@` descriptor), with that parser's error messages.

/// One field's bounds and names.
struct Bounds {
    min: u32,
    max: u32,
    names: &'static [&'static str],
}

const MONTHS: &[&str] = &[
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];
const DAYS: &[&str] = &["sun", "mon", "tue", "wed", "thu", "fri", "sat"];

const FIELDS: [Bounds; 5] = [
    Bounds {
        min: 0,
        max: 59,
        names: &[],
    },
    Bounds {
        min: 0,
        max: 23,
        names: &[],
    },
    Bounds {
        min: 1,
        max: 31,
        names: &[],
    },
    Bounds {
        min: 1,
        max: 12,
        names: MONTHS,
    },
    Bounds {
        min: 0,
        max: 6,
        names: DAYS,
    },
];

fn parse_int(expr: &str) -> Result<u32, String> {
    let n: i64 = expr.parse().map_err(|_| {
        format!("failed to parse int from {expr}: strconv.Atoi: parsing {expr:?}: invalid syntax")
    })?;
    if n < 0 {
        return Err(format!("negative number ({n}) not allowed: {expr}"));
    }
    u32::try_from(n).map_err(|_| {
        format!(
            "failed to parse int from {expr}: strconv.Atoi: parsing {expr:?}: value out of range"
        )
    })
}

fn int_or_name(expr: &str, bounds: &Bounds) -> Result<u32, String> {
    let lower = expr.to_lowercase();
    if let Some(i) = bounds.names.iter().position(|n| *n == lower) {
        let offset = if bounds.names.len() == 12 { 1 } else { 0 };
        return Ok(u32::try_from(i).unwrap_or_default() + offset);
    }
    parse_int(expr)
}

/// One comma-separated part of a field: `*`, `?`, `N`, `N-M`, each with an optional `/step`.
fn range(expr: &str, bounds: &Bounds) -> Result<(), String> {
    let range_and_step: Vec<&str> = expr.split('/').collect();
    let low_high: Vec<&str> = range_and_step[0].split('-').collect();
    let (start, mut end) = if matches!(low_high[0], "*" | "?") {
        (bounds.min, bounds.max)
    } else {
        let start = int_or_name(low_high[0], bounds)?;
        match low_high.len() {
            1 => (start, start),
            2 => (start, int_or_name(low_high[1], bounds)?),
            _ => return Err(format!("too many hyphens: {expr}")),
        }
    };
    let step = match range_and_step.len() {
        1 => 1,
        2 => {
            if low_high.len() == 1 {
                end = bounds.max;
            }
            parse_int(range_and_step[1])?
        }
        _ => return Err(format!("too many slashes: {expr}")),
    };
    if start < bounds.min {
        return Err(format!(
            "beginning of range ({start}) below minimum ({}): {expr}",
            bounds.min
        ));
    }
    if end > bounds.max {
        return Err(format!(
            "end of range ({end}) above maximum ({}): {expr}",
            bounds.max
        ));
    }
    if start > end {
        return Err(format!(
            "beginning of range ({start}) beyond end of range ({end}): {expr}"
        ));
    }
    if step == 0 {
        return Err(format!("step of range should be a positive number: {expr}"));
    }
    Ok(())
}

/// Whether `text` is a Go duration (`1h30m`, `90s`, `1.5h`).
fn go_duration(text: &str) -> bool {
    let mut rest = text.strip_prefix(['+', '-']).unwrap_or(text);
    if rest == "0" {
        return true;
    }
    if rest.is_empty() {
        return false;
    }
    while !rest.is_empty() {
        let number = rest
            .find(|c: char| !c.is_ascii_digit() && c != '.')
            .unwrap_or(rest.len());
        if number == 0 || rest[..number].matches('.').count() > 1 {
            return false;
        }
        rest = &rest[number..];
        let Some(unit) = ["ns", "us", "µs", "μs", "ms", "s", "m", "h"]
            .iter()
            .find(|u| rest.starts_with(*u))
        else {
            return false;
        };
        rest = &rest[unit.len()..];
    }
    true
}

/// Checks a schedule.
///
/// # Errors
/// The parser's message for why it does not parse.
pub fn parse(schedule: &str) -> Result<(), String> {
    if schedule.is_empty() {
        return Err("empty spec string".into());
    }
    if let Some(descriptor) = schedule.strip_prefix('@') {
        return match descriptor {
            "yearly" | "annually" | "monthly" | "weekly" | "daily" | "midnight" | "hourly" => {
                Ok(())
            }
            _ => match descriptor.strip_prefix("every ") {
                Some(d) if go_duration(d) => Ok(()),
                Some(d) => Err(format!(
                    "failed to parse duration {schedule}: time: invalid duration {d:?}"
                )),
                None => Err(format!("unrecognized descriptor: {schedule}")),
            },
        };
    }
    let fields: Vec<&str> = schedule.split_whitespace().collect();
    if fields.len() != 5 {
        return Err(format!(
            "expected exactly 5 fields, found {}: [{}]",
            fields.len(),
            fields.join(" ")
        ));
    }
    for (field, bounds) in fields.iter().zip(FIELDS.iter()) {
        for part in field.split(',') {
            range(part, bounds)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedules_parse_as_robfig_cron_parses_them() {
        for ok in [
            "*/5 * * * *",
            "0 3 * * 1-5",
            "15,45 9-17 1 jan-jun MON",
            "@daily",
            "@every 1h30m",
            "0 0 ? * *",
        ] {
            assert_eq!(parse(ok), Ok(()), "{ok}");
        }
        for (bad, error) in [
            (
                "every day",
                "expected exactly 5 fields, found 2: [every day]",
            ),
            ("61 * * * *", "end of range (61) above maximum (59): 61"),
            ("* * 0 * *", "beginning of range (0) below minimum (1): 0"),
            ("@often", "unrecognized descriptor: @often"),
        ] {
            assert_eq!(parse(bad), Err(error.into()), "{bad}");
        }
        assert!(
            parse("x * * * *")
                .unwrap_err()
                .starts_with("failed to parse int from x")
        );
    }
}
