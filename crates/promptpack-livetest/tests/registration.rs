//! A running live handle registers its build in the catalog: its process
//! name, the label it follows and the contract of the binary, which a
//! console reads with `Catalog::builds`. (A handle on a catalog it may only
//! read serves without registering: `sqlite_files.rs`.)

mod support;

use promptpack::ErrorCode;
use promptpack_catalog::{Catalog, RegisteredBuild, contract_hash};
use promptpack_livetest::{after, before};
use std::time::{Duration, Instant};
use support::{HANG_GUARD, Store, publish_labelled, serves, wait_for};

const DAY: Duration = Duration::from_secs(24 * 60 * 60);

/// The registered builds once there are `count`; fails on a hang.
fn registered(catalog: &mut Catalog, count: usize) -> Vec<RegisteredBuild> {
    let started = Instant::now();
    loop {
        let builds = catalog.builds(DAY).expect("builds");
        if builds.len() >= count {
            return builds;
        }
        assert!(
            started.elapsed() < HANG_GUARD,
            "{count} builds never registered: a hang; found {builds:#?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The variables of `prompt` in a registered contract, in order.
fn variables(build: &RegisteredBuild, prompt: &str) -> Vec<String> {
    build
        .contract
        .prompts
        .get(prompt)
        .unwrap_or_else(|| panic!("{} has no {prompt}", build.process))
        .variables
        .iter()
        .map(|var| var.name.clone())
        .collect()
}

every_store!(a_running_handle_registers_its_build);
fn a_running_handle_registers_its_build(store: Store) {
    let mut catalog = store.open();
    let v1 = publish_labelled(
        &mut catalog,
        "greeter",
        "production",
        "v1 greets {{name}}.",
        None,
    );
    let mut old = before::Prompts::connect(&store.url)
        .label("production")
        .process_name("agent-service old")
        .poll_every(Duration::from_millis(50));
    let events = old.subscribe();
    let old = old.start().expect("starts");
    wait_for(&events, "greeter v1", |e| serves(e, "greeter", v1));
    // A label the catalog does not have yet: registered all the same.
    let new = after::Prompts::connect(&store.url)
        .label("staging")
        .poll_every(Duration::from_millis(50))
        .start()
        .expect("starts");

    let builds = registered(&mut catalog, 2);
    assert_eq!(builds.len(), 2, "{builds:#?}");
    // By process: the default name is the executable's and the pid.
    let executable = std::env::current_exe().expect("the test's executable");
    let executable = executable
        .file_name()
        .expect("a file name")
        .to_string_lossy()
        .into_owned();
    let default_name = format!("{executable}#{}", std::process::id());
    let mut expected = [
        ("agent-service old".to_string(), "production"),
        (default_name, "staging"),
    ];
    expected.sort();
    let found: Vec<(String, &str)> = builds
        .iter()
        .map(|b| (b.process.clone(), b.label.as_str()))
        .collect();
    assert_eq!(found, expected);
    for build in &builds {
        let prompts: Vec<&String> = build.contract.prompts.keys().collect();
        assert_eq!(prompts, ["greeter", "reviewer"], "{}", build.process);
        assert_eq!(build.contract_hash, contract_hash(&build.contract));
        assert!(build.first_seen <= build.last_seen);
        let wanted = if build.label == "production" {
            vec!["name"]
        } else {
            vec!["name", "tone"]
        };
        assert_eq!(variables(build, "greeter"), wanted, "{}", build.process);
        assert_eq!(variables(build, "reviewer"), ["language", "strict"]);
    }
    assert_ne!(builds[0].contract_hash, builds[1].contract_hash);

    // Registering changed nothing of what the handles serve.
    let greeting = old
        .build_prompt(
            before::PromptId::Greeter,
            before::GreeterVars { name: "Ada" },
        )
        .expect("renders");
    assert_eq!(greeting.system, "v1 greets Ada.");
    drop((old, new));
}

#[test]
fn a_process_name_that_is_not_one_is_refused_at_start() {
    let store = Store::sqlite();
    drop(store.open());
    for name in ["", "two\nlines", &"x".repeat(201)] {
        let refused = before::Prompts::connect(&store.url)
            .process_name(name)
            .start()
            .expect_err("not a process name");
        assert_eq!(refused.code(), ErrorCode::InvalidRequest, "{name:?}");
    }
}
