//! A logger for the program that runs the console and has none of its own
//! (the CLI): the console's lines on standard error, one a line, with the
//! time, the level and what logged them.

use log::{LevelFilter, Log, Metadata, Record};
use std::io::Write;

/// Writes the console's log (the request log, refused sign-ins, catalog
/// failures) at `level` and above to standard error. Lines of other crates
/// are left out: the HTTP server's own are noise to an operator.
///
/// Does nothing when the process has a logger already.
pub fn log_to_stderr(level: LevelFilter) {
    static LOGGER: StderrLog = StderrLog;
    if log::set_logger(&LOGGER).is_ok() {
        log::set_max_level(level);
    }
}

struct StderrLog;

impl Log for StderrLog {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        metadata.target().starts_with("promptpack_console")
    }

    fn log(&self, record: &Record<'_>) {
        if !self.enabled(record.metadata()) {
            return;
        }
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        let target = record
            .target()
            .strip_prefix("promptpack_console::")
            .unwrap_or(record.target());
        // A closed standard error is no reason to stop serving.
        let _ = writeln!(
            std::io::stderr().lock(),
            "{} {:<5} {target}: {}",
            utc(now),
            record.level(),
            record.args()
        );
    }

    fn flush(&self) {}
}

/// `since_epoch` as `2026-12-04T23:30:00.123Z` (the civil-from-days
/// algorithm of Howard Hinnant, for the proleptic Gregorian calendar).
fn utc(since_epoch: std::time::Duration) -> String {
    let seconds = since_epoch.as_secs();
    let (days, of_day) = (seconds / 86_400, seconds % 86_400);
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        of_day / 3_600,
        of_day / 60 % 60,
        of_day % 60,
        since_epoch.subsec_millis()
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn times_are_utc_dates() {
        let at = |seconds: u64| super::utc(std::time::Duration::from_secs(seconds));
        assert_eq!(at(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(at(951_782_400), "2000-02-29T00:00:00.000Z");
        assert_eq!(at(1_796_429_400), "2026-12-05T00:10:00.000Z");
    }
}
