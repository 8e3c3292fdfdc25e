//! A service that follows a catalog label: renders `greeter` in a loop and
//! prints a line each time the text it renders changes version, so that a
//! test can watch many processes at once.
//!
//! Usage: `live-serve URL LABEL before|after`. Exits when its standard
//! input closes (the test that started it is gone). The handle's events
//! go to standard error, one a line (`event: …`).

use promptpack::Provenance;
use std::io::{Read, Write};
use std::time::Duration;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [url, label, build] = args.as_slice() else {
        eprintln!("usage: live-serve URL LABEL before|after");
        std::process::exit(2);
    };
    std::thread::spawn(|| {
        let _ = std::io::stdin().read_to_end(&mut Vec::new());
        std::process::exit(0);
    });
    let render = match build.as_str() {
        "before" => serve_before(url, label),
        "after" => serve_after(url, label),
        other => {
            eprintln!("unknown build `{other}`");
            std::process::exit(2);
        }
    };
    if let Err(error) = render {
        eprintln!("{error}");
        std::process::exit(1);
    }
}

/// Prints `serving <provenance>` when it differs from the last render's.
fn watch(mut render: impl FnMut() -> promptpack::Result<Provenance>) -> promptpack::Result<()> {
    let mut last = None;
    loop {
        let provenance = render()?;
        if last.as_ref() != Some(&provenance) {
            let mut out = std::io::stdout().lock();
            // A closed pipe means the test is gone; stdin's EOF ends us.
            let _ = writeln!(out, "serving {provenance}");
            let _ = out.flush();
            last = Some(provenance);
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

fn serve_before(url: &str, label: &str) -> promptpack::Result<()> {
    use promptpack_livetest::before::{GreeterVars, PromptId, Prompts};
    let mut builder = Prompts::connect(url).label(label);
    print_events(builder.subscribe());
    let prompts = builder.start()?;
    watch(|| {
        let vars = GreeterVars { name: "Ada" };
        Ok(prompts.build_prompt(PromptId::Greeter, vars)?.provenance)
    })
}

fn serve_after(url: &str, label: &str) -> promptpack::Result<()> {
    use promptpack_livetest::after::{GreeterVars, PromptId, Prompts};
    let mut builder = Prompts::connect(url).label(label);
    print_events(builder.subscribe());
    let prompts = builder.start()?;
    watch(|| {
        let vars = GreeterVars {
            name: "Ada",
            tone: "warm",
        };
        Ok(prompts.build_prompt(PromptId::Greeter, vars)?.provenance)
    })
}

/// Prints each event of the handle on standard error.
fn print_events(events: std::sync::mpsc::Receiver<promptpack::live::LiveEvent>) {
    std::thread::spawn(move || {
        for event in events {
            eprintln!("event: {event}");
        }
    });
}
