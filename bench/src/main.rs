//! promptpack render benchmark.
//!
//! ```text
//! cargo run --release --manifest-path bench/Cargo.toml -- [--quick] [--only SECTIONS]
//! promptpack-bench --profile CONTENDER [RENDERS]     # for callgrind
//! ```
//!
//! Renders the workload in `PROMPTPACK_BENCH_WORKLOAD` (default
//! `../shared/bench-workload` beside the repository) with promptpack (the
//! dynamic `Library` and the typed code `build.rs` generates with
//! promptpack's build API) and its peers, checks every output against
//! `expected-output.md` byte for byte before timing anything, and prints
//! Markdown tables: median ns per render and the ratio to a lower bound
//! measured in the same run; the typed render of the bench's own prompt with
//! a three-way `{{#if role == "…"}}` choice, per role, against its own lower
//! bound; the bench's own conversation prompt (`messages.md`, a history) as messages,
//! against a hand-written lower bound, minijinja and Prompty; a model's answer read against its
//! response schema (`promptpack_core::answer`) against serde_json; the conversation converted
//! into async-openai's, genai's and rig's requests by the adapters, against building them by hand; loading and rendering the conformance corpus
//! (`PROMPTPACK_CONFORMANCE_DIR`, default `../shared/conformance/openmaic`);
//! the memory of loading 10,000 synthetic prompts; the build-script cost of
//! 10, 100 and 1,000 of them; the latency of hot reload; the catalog's
//! latency and growth on SQLite and PostgreSQL (`catalog.rs`); live
//! prompts served from a catalog label (`live.rs`); and the language
//! server's keystroke-to-diagnostics latency and memory (`lsp.rs`).
//!
//! `main.rs` reads the arguments and calls the sections; `harness/` is what they share
//! (contenders and their checks, timing, the counting allocator, the report's text);
//! `workload.rs` the inputs read in place; `synthetic.rs` the generated trees; every other
//! file is one section (or, for `translate.rs` and `live_tree.rs`, shared with `build.rs`).

mod adapters;
mod answer;
mod catalog;
mod choice;
mod codegen;
mod console;
mod conversation;
mod corpus;
mod fleet;
mod harness;
mod live;
mod live_tree;
mod lsp;
mod memory;
mod reload;
mod render;
mod synthetic;
mod translate;
mod workload;

use harness::{Mode, State, profile_batch};
use workload::Inputs;

const USAGE: &str = "\
usage: promptpack-bench [--quick] [--only SECTION[,SECTION…]]
       promptpack-bench --profile CONTENDER [RENDERS]

  --quick      10 rounds of ~2 ms batches instead of 100 of ~20 ms, fewer samples elsewhere
  --only       run only these sections: render, choice, conversation, answer, adapters, corpus,
               memory, codegen, reload, catalog, live, console, lsp, and fleet (only
               when named: 10,000 relay followers, needs a `promptpack` binary)
  --profile    render the first contender whose name contains CONTENDER RENDERS times
               (default 10000) inside `profile_batch`, untimed, and exit; for
               valgrind --tool=callgrind --toggle-collect='*profile_batch*'

Run it through cargo: cargo run --release --manifest-path bench/Cargo.toml -- [ARGS]";

/// The sections of the report, in order.
const SECTIONS: [&str; 14] = [
    "render",
    "choice",
    "conversation",
    "answer",
    "adapters",
    "corpus",
    "memory",
    "codegen",
    "reload",
    "catalog",
    "live",
    "console",
    "lsp",
    "fleet",
];

/// What the command line asked for.
enum Command {
    Run(Mode),
    /// Render one contender (the first whose name contains the text) that
    /// many times inside [`profile_batch`], untimed, for callgrind.
    Profile(String, u64),
}

fn parse_args() -> Command {
    let usage = |code| -> ! {
        eprintln!("{USAGE}");
        std::process::exit(code)
    };
    let mut quick = false;
    let mut only: Option<Vec<String>> = None;
    let mut profile: Option<(String, u64)> = None;
    let mut args = std::env::args().skip(1).peekable();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--quick" => quick = true,
            "--only" => {
                let Some(list) = args.next() else { usage(2) };
                let list: Vec<String> = list.split(',').map(str::to_owned).collect();
                if let Some(bad) = list.iter().find(|s| !SECTIONS.contains(&s.as_str())) {
                    eprintln!("unknown section {bad:?}");
                    usage(2);
                }
                only.get_or_insert_with(Vec::new).extend(list);
            }
            "--profile" => {
                let Some(name) = args.next() else { usage(2) };
                let n = match args.next_if(|a| !a.starts_with("--")) {
                    Some(n) => n.parse().unwrap_or_else(|_| usage(2)),
                    None => 10_000,
                };
                profile = Some((name, n));
            }
            // A process of the `fleet` section: one live handle, until killed.
            "--fleet-follower" => {
                let Some(url) = args.next() else { usage(2) };
                fleet::follower_main(&url);
            }
            "--help" | "-h" => usage(0),
            _ => usage(2),
        }
    }
    if let Some((name, n)) = profile {
        return Command::Profile(name, n);
    }
    Command::Run(Mode::new(quick, only))
}

fn main() {
    let command = parse_args();
    let inputs = match Inputs::read() {
        Ok(inputs) => inputs,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    let mode = match command {
        Command::Run(mode) => mode,
        Command::Profile(name, n) => return profile(&inputs, &name, n),
    };

    println!(
        "# promptpack benchmark{}\n",
        if mode.quick { " (--quick)" } else { "" }
    );
    println!("workload: `{}`\n", inputs.workload.dir.display());

    if mode.wants("render") {
        println!("{}", render::section(&mode, &inputs));
    }
    if mode.wants("choice") {
        println!("{}", choice::section(&mode));
    }
    if mode.wants("conversation") {
        println!("{}", conversation::section(&mode));
    }
    if mode.wants("answer") {
        println!("{}", answer::section(&mode));
    }
    if mode.wants("adapters") {
        println!("{}", adapters::section(&mode));
    }
    if mode.wants("corpus") {
        println!("{}", corpus::section(&mode));
    }
    if mode.wants("memory") {
        println!("{}", memory::section());
    }
    if mode.wants("codegen") {
        println!("{}", codegen::section(&mode));
    }
    if mode.wants("reload") {
        println!("{}", reload::section(&mode));
    }
    if mode.wants("catalog") {
        println!("{}", catalog::section(mode.quick));
    }
    if mode.wants("live") {
        println!(
            "{}",
            live::section(&mode, &inputs.workload, &inputs.expected, &inputs.values)
        );
    }
    if mode.wants("console") {
        println!("{}", console::section(mode.quick));
    }
    if mode.wants("lsp") {
        println!("{}", lsp::section(mode.quick));
    }
    // Minutes, 10,000 sockets and a `promptpack` binary: only when asked for.
    if mode.named("fleet") {
        println!("{}", fleet::section(mode.quick, &inputs.workload));
    }
}

/// `--profile`: renders the first contender (of the render, choice, conversation, answer and live
/// sections, in that order) whose name contains `name` `n` times inside [`profile_batch`], untimed, and exits.
fn profile(inputs: &Inputs, name: &str, n: u64) {
    let (workload, expected, values) = (&inputs.workload, &inputs.expected, &inputs.values);
    let json = values.json();
    let refs = values.value_refs();
    let mut list = render::contenders(workload, expected, values, &json, &refs);
    list.extend(choice::contenders());
    list.extend(conversation::contenders());
    list.extend(answer::contenders());
    list.extend(adapters::contenders());
    // The live rows (a catalog in a temporary folder, kept until the end).
    let _live = match live::profile_contenders(workload, expected, values) {
        Ok((dir, live)) => {
            list.extend(live);
            Some(dir)
        }
        Err(e) => {
            eprintln!("live rows not available: {e}");
            None
        }
    };
    let Some(c) = list.iter_mut().find(|c| c.name.contains(name)) else {
        eprintln!("no contender's name contains {name:?}");
        std::process::exit(2);
    };
    let State::Ready(run) = &mut c.state else {
        eprintln!("{} is not ready: failed or skipped", c.name);
        std::process::exit(1);
    };
    let bytes = profile_batch(run.as_mut(), n);
    println!("{}: {n} renders, {bytes} bytes", c.name);
}
