//! A service whose prompts follow a label of a prompt catalog: it renders
//! the sample prompt `code-review` (the typed call, `CodeReviewVars`) in a
//! loop and prints one line per render, the prompt's provenance and the
//! first line of its system text, and every event of the live handle on a
//! line of its own as it happens.
//!
//! ```text
//! cargo run --example live_service --features live,samples -- [URL] [LABEL] [OPTIONS]
//!
//!   URL           the catalog: sqlite:PATH (default sqlite:.promptpack/catalog.db),
//!                 or postgres://… with --features live-postgres,samples
//!   LABEL         the label to follow (default production)
//!   --every MS    milliseconds between two renders (default 1000)
//!   --count N     stop after N renders (default: run until killed);
//!                 also LIVE_SERVICE_COUNT=N
//!   --once        the same as --count 1
//!   --key KEY     render with build_prompt_for(KEY, …): the arm of a split
//!                 label that KEY lands in, the same one every time
//! ```
//!
//! Make a catalog first (README, "The catalog" and "Live prompts"):
//!
//! ```text
//! mkdir demo && cp -r templates snippets promptpack.toml demo/
//! (cd demo && promptpack catalog import -m "sample prompts" && promptpack catalog label code-review production 1)
//! cargo run --example live_service --features live,samples -- sqlite:demo/.promptpack/catalog.db
//! ```
//!
//! then publish, label, split or roll back `code-review` with the CLI in
//! another terminal and watch the lines change. A version that needs a
//! variable `CodeReviewVars` lacks is refused (an `event:` line) and the
//! version before keeps serving. Without a catalog (a wrong path, a store
//! that is down) the service still renders: the embedded text, which it
//! says as `embedded`, until the catalog is reachable.

use promptpack::live::LiveEvent;
use std::process::ExitCode;
use std::sync::mpsc::{self, Receiver};
use std::thread::JoinHandle;
use std::time::Duration;

promptpack::include_prompts!();

const USAGE: &str =
    "usage: live_service [URL] [LABEL] [--every MS] [--count N | --once] [--key KEY]";

struct Options {
    url: String,
    label: String,
    every: Duration,
    count: Option<u64>,
    key: Option<String>,
}

fn main() -> ExitCode {
    let options = match options() {
        Ok(Some(options)) => options,
        Ok(None) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("live_service: {message}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match serve(&options) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("live_service: {error}");
            ExitCode::FAILURE
        }
    }
}

fn serve(options: &Options) -> promptpack::Result<()> {
    let mut builder = Prompts::connect(options.url.as_str()).label(options.label.as_str());
    // Subscribed before the start: the versions first served, or a store
    // that is down, are events too.
    let events = builder.subscribe();
    println!(
        "live_service: following label {} of {}",
        options.label, options.url
    );
    let prompts = builder.start()?;
    let printer = print_events(events);

    let mut rendered = 0;
    while options.count.is_none_or(|count| rendered < count) {
        if rendered > 0 {
            std::thread::sleep(options.every);
        }
        rendered += 1;
        let vars = CodeReviewVars {
            repository: "promptpack",
            language: "Rust",
            strict_mode: false,
        };
        // The same typed call as the free `build_prompt`; it never waits
        // for the catalog and never fails because the catalog is away.
        let prompt = match &options.key {
            Some(key) => prompts.build_prompt_for(key, PromptId::CodeReview, vars)?,
            None => prompts.build_prompt(PromptId::CodeReview, vars)?,
        };
        let first_line = prompt.system.lines().next().unwrap_or_default();
        println!("render: {} | {first_line}", prompt.provenance);
    }

    // Dropping the last handle stops its thread; with it go the event
    // senders, which ends the printer once every event is out.
    drop(prompts);
    let _ = printer.join();
    Ok(())
}

/// Prints each event on a line of its own, on a thread of its own, until
/// the handle is gone. Returns once the events of the start are printed,
/// so that they come before the first render.
fn print_events(events: Receiver<LiveEvent>) -> JoinHandle<()> {
    let (caught_up, wait) = mpsc::channel();
    let printer = std::thread::spawn(move || {
        while let Ok(event) = events.try_recv() {
            println!("event: {event}");
        }
        let _ = caught_up.send(());
        for event in events {
            println!("event: {event}");
        }
    });
    let _ = wait.recv();
    printer
}

/// The command line; `None` for `--help`.
fn options() -> Result<Option<Options>, String> {
    let mut positional = Vec::new();
    let mut every = Duration::from_secs(1);
    let mut count = match std::env::var("LIVE_SERVICE_COUNT") {
        Ok(count) => Some(number("LIVE_SERVICE_COUNT", &count)?),
        Err(_) => None,
    };
    let mut key = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or_else(|| format!("{name} needs a value"));
        match arg.as_str() {
            "-h" | "--help" => return Ok(None),
            "--once" => count = Some(1),
            "--count" => count = Some(number("--count", &value("--count")?)?),
            "--every" => every = Duration::from_millis(number("--every", &value("--every")?)?),
            "--key" => key = Some(value("--key")?),
            flag if flag.starts_with("--") => return Err(format!("unknown option {flag}")),
            _ => positional.push(arg),
        }
    }
    if positional.len() > 2 {
        return Err(format!("unexpected argument {}", positional[2]));
    }
    let mut positional = positional.into_iter();
    Ok(Some(Options {
        url: positional
            .next()
            .unwrap_or_else(|| "sqlite:.promptpack/catalog.db".to_string()),
        label: positional
            .next()
            .unwrap_or_else(|| "production".to_string()),
        every,
        count,
        key,
    }))
}

fn number(name: &str, text: &str) -> Result<u64, String> {
    text.parse()
        .map_err(|_| format!("{name} takes a whole number, not `{text}`"))
}
