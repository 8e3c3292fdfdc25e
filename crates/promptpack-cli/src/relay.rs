//! `promptpack relay`: one process that holds the catalog connection of a
//! fleet and serves its live prompt handles over HTTP (docs/relay.md;
//! promptpack-console's `relay`).

use crate::store_args::StoreArgs;
use clap::Args;
use promptpack::{Error, Style};
use promptpack_console::relay::{Relay, RelaySettings, Upstream};
use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

/// Options of `promptpack relay`.
#[derive(Debug, Args)]
pub(crate) struct RelayArgs {
    #[command(flatten)]
    store: StoreArgs,
    /// Where to listen (`127.0.0.1:0`: a port the system picks, printed).
    /// Beyond loopback only once the catalog has an admin.
    #[arg(long, default_value = "127.0.0.1:7879", value_name = "ADDR")]
    listen: SocketAddr,
    /// No LISTEN (PostgreSQL behind pgbouncer in transaction mode): one
    /// connection, and changes seen by polling alone.
    #[arg(long)]
    poll_only: bool,
    /// How often the catalog's change marker is polled, such as `250ms` or
    /// `1s` [default: 1s, or 250ms with --poll-only].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    poll: Option<Duration>,
    /// How often each stream says `: ping`, such as `5s` [default: 5s].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    heartbeat: Option<Duration>,
    /// How many connections are served at once (each follower holds one)
    /// [default: 20000].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    max_connections: Option<u32>,
    /// What the relay logs on standard error: off, error, warn, info (also
    /// a line per request), debug.
    #[arg(long, value_name = "LEVEL", default_value = "info", value_parser = parse_log_level)]
    log: promptpack_console::LevelFilter,
}

/// A duration above 0: a number and `ms` or `s` (`250ms`, `1.5s`); a bare
/// number is seconds.
fn parse_duration(text: &str) -> Result<Duration, String> {
    let refused = || format!("`{text}` is not a duration above 0 (such as 250ms or 5s)");
    let trimmed = text.trim();
    let (number, scale) = if let Some(ms) = trimmed.strip_suffix("ms") {
        (ms, 0.001)
    } else if let Some(s) = trimmed.strip_suffix('s') {
        (s, 1.0)
    } else {
        (trimmed, 1.0)
    };
    let value: f64 = number.trim().parse().map_err(|_| refused())?;
    if value.is_nan() || value <= 0.0 {
        return Err(refused());
    }
    Duration::try_from_secs_f64(value * scale).map_err(|_| refused())
}

fn parse_log_level(text: &str) -> Result<promptpack_console::LevelFilter, String> {
    text.parse()
        .map_err(|_| format!("`{text}` is not a log level: off, error, warn, info or debug"))
}

pub(crate) fn run(args: &RelayArgs, style: Style) -> ExitCode {
    match serve(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => crate::fail(&e, style),
    }
}

fn serve(args: &RelayArgs) -> Result<(), Error> {
    let url = args.store.url();
    let mut settings = RelaySettings::new(Upstream::Catalog(url.clone()))
        .listen(args.listen)
        .poll_only(args.poll_only);
    if let Some(poll) = args.poll {
        settings = settings.poll(poll);
    }
    if let Some(heartbeat) = args.heartbeat {
        settings = settings.heartbeat(heartbeat);
    }
    if let Some(count) = args.max_connections {
        settings = settings.max_connections(count as usize);
    }
    promptpack_console::log_to_stderr(args.log);
    let relay = Relay::bind(settings)?;
    eprintln!(
        "relay listening on http://{} (catalog {})",
        relay.local_addr(),
        promptpack_catalog::redact_url(&url)
    );
    relay.run()
}

#[cfg(test)]
mod tests {
    use super::parse_duration;
    use std::time::Duration;

    #[test]
    fn durations() {
        let cases = [
            ("250ms", Some(Duration::from_millis(250))),
            ("5s", Some(Duration::from_secs(5))),
            ("1.5s", Some(Duration::from_millis(1500))),
            ("2", Some(Duration::from_secs(2))),
            ("0s", None),
            ("-1s", None),
            ("fast", None),
            ("", None),
        ];
        for (text, expected) in cases {
            assert_eq!(parse_duration(text).ok(), expected, "{text}");
        }
    }
}
