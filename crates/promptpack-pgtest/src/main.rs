//! `promptpack-pgtest`: starts a PostgreSQL cluster that outlives the
//! command, for CI to share one server among all the tests of a run.
//!
//! - `promptpack-pgtest start DIR`: initdb and start a cluster in `DIR`
//!   (kept), print its `postgres://` URL on stdout, and exit with the server
//!   running;
//! - `promptpack-pgtest stop DIR`: stop that server (`DIR` stays).
//!
//! Exit codes: 0 when all is well, 1 when PostgreSQL fails, 2 on a usage
//! error.

use promptpack_pgtest::Cluster;
use std::ffi::OsString;
use std::path::Path;
use std::process::ExitCode;

const USAGE: &str = "usage: promptpack-pgtest start DIR | promptpack-pgtest stop DIR";

fn main() -> ExitCode {
    // args_os: a folder name need not be UTF-8.
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    let result = match args.as_slice() {
        [command, dir] if command == "start" => Cluster::start_in(Path::new(dir)).map(|cluster| {
            println!("{}", cluster.url());
        }),
        [command, dir] if command == "stop" => Cluster::stop_dir(Path::new(dir)),
        _ => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("promptpack-pgtest: {e}");
            ExitCode::FAILURE
        }
    }
}
