//! How long `promptpack catalog` waits for its store: `--db-timeout` or
//! `$PROMPTPACK_DB_TIMEOUT`, in seconds, bounds connecting and each answer
//! of the server, so that a server that does not answer ends the command
//! with `unavailable` instead of a hang.

use promptpack_catalog::Timeouts;
use std::time::Duration;

/// The variable that sets `--db-timeout`.
pub(crate) const TIMEOUT_ENV: &str = "PROMPTPACK_DB_TIMEOUT";

/// A number of seconds above 0, such as `10` or `0.5`.
pub(crate) fn parse_seconds(text: &str) -> Result<Duration, String> {
    let refused = || format!("`{text}` is not a number of seconds above 0 (such as 10 or 0.5)");
    let seconds: f64 = text.trim().parse().map_err(|_| refused())?;
    if seconds.is_nan() || seconds <= 0.0 {
        return Err(refused());
    }
    Duration::try_from_secs_f64(seconds).map_err(|_| refused())
}

/// The bounds on the store's waits: `bound` for connecting and for each
/// answer when given, else the catalog's defaults (10 s each). A
/// PostgreSQL URL's own `connect_timeout` still wins for connecting.
pub(crate) fn timeouts(bound: Option<Duration>) -> Timeouts {
    match bound {
        Some(bound) => Timeouts::DEFAULT.with_connect(bound).with_io(bound),
        None => Timeouts::DEFAULT,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_are_positive_numbers() {
        let cases = [
            ("10", Some(Duration::from_secs(10))),
            ("0.5", Some(Duration::from_millis(500))),
            (" 3 ", Some(Duration::from_secs(3))),
            ("0", None),
            ("-1", None),
            ("NaN", None),
            ("inf", None),
            ("1e300", None),
            ("soon", None),
            ("", None),
        ];
        for (text, seconds) in cases {
            assert_eq!(parse_seconds(text).ok(), seconds, "{text:?}");
        }
    }

    #[test]
    fn one_bound_for_connecting_and_answers() {
        let bounds = timeouts(Some(Duration::from_secs(2)));
        assert_eq!(bounds.connect, Duration::from_secs(2));
        assert_eq!(bounds.io, Duration::from_secs(2));
        assert_eq!(timeouts(None), Timeouts::DEFAULT);
    }
}
