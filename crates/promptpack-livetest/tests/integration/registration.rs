//! A running live handle registers its build in the catalog: its process
//! name, the label it follows and the contract of the binary, which a
//! console reads with `Catalog::builds`. (A handle on a catalog it may only
//! read serves without registering: `sqlite_files.rs`.)

use crate::support;

use promptpack::ErrorCode;
use promptpack_catalog::{RegisteredBuild, contract_hash};
use promptpack_livetest::{after, before};
use std::time::Duration;
use support::{
    Store, greet_ada, greeter_v1_in_production, publish_labelled, registered, serves, wait_for,
};

const DAY: Duration = Duration::from_secs(24 * 60 * 60);

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
    let v1 = greeter_v1_in_production(&mut catalog);
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
        assert_eq!(
            prompts,
            ["greeter", "reviewer", "triage"],
            "{}",
            build.process
        );
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
    let greeting = greet_ada(&old);
    assert_eq!(greeting.system, "v1 greets Ada.");
    drop((old, new));
}

// A handle that stops (a `--once` run ending, a service shutting down)
// says so: its registration goes, and a console no longer counts it among
// the builds that serve its label.
every_store!(a_dropped_handle_takes_its_registration_away);
fn a_dropped_handle_takes_its_registration_away(store: Store) {
    let mut catalog = store.open();
    let v1 = publish_labelled(&mut catalog, "greeter", "production", "v1 {{name}}.", None);
    let mut builder = before::Prompts::connect(&store.url)
        .label("production")
        .process_name("once")
        .poll_every(Duration::from_millis(50));
    let events = builder.subscribe();
    let prompts = builder.start().expect("starts");
    wait_for(&events, "greeter v1", |e| serves(e, "greeter", v1));
    assert_eq!(registered(&mut catalog, 1).len(), 1);
    drop(prompts);
    // Bounded by the handle's own drop and its store's timeouts; no
    // deadline here (a hang is the test runner's to report).
    promptpack_testkit::wait::until("no build registered", || {
        catalog.builds(DAY).expect("reads the builds").is_empty()
    });
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

/// A handle whose PostgreSQL role may only read serves and follows its
/// label, and registers nothing: no event says it tried.
#[test]
fn a_handle_that_may_only_read_serves_unregistered() {
    let store = Store::postgres("live_read_only_role");
    let mut catalog = store.open();
    let v1 = publish_labelled(&mut catalog, "greeter", "production", "v1 {{name}}.", None);
    // Roles are the server's, databases' names unique: named after it.
    let database = store.url.rsplit('/').next().expect("a database name");
    let role = format!("{database}_r");
    let mut admin = postgres::Client::connect(&store.url, postgres::NoTls).expect("connects");
    admin
        .batch_execute(&format!(
            "CREATE ROLE \"{role}\" LOGIN PASSWORD 'pw'; \
             GRANT SELECT ON ALL TABLES IN SCHEMA public TO \"{role}\";"
        ))
        .expect("a role that may only read");
    let (_, rest) = store.url.split_once("://").expect("a URL");
    let host = rest.split_once('@').map_or(rest, |(_, host)| host);
    let url = format!("postgres://{role}:pw@{host}");

    let mut builder = before::Prompts::connect(&url)
        .label("production")
        .poll_every(Duration::from_millis(50));
    let events = builder.subscribe();
    let prompts = builder.start().expect("starts");
    let mut seen = wait_for(&events, "greeter v1", |e| serves(e, "greeter", v1));
    // Its thread tried to register before it waited for this change.
    let v2 = publish_labelled(&mut catalog, "greeter", "production", "v2 {{name}}.", None);
    seen.extend(wait_for(&events, "greeter v2", |e| {
        serves(e, "greeter", v2)
    }));
    assert!(
        seen.iter()
            .all(|e| matches!(e, promptpack::live::LiveEvent::Updated { .. })),
        "{seen:#?}"
    );
    assert!(prompts.is_connected());
    assert_eq!(catalog.builds(DAY).expect("builds"), []);
    drop(prompts);
    admin
        .batch_execute(&format!("DROP OWNED BY \"{role}\"; DROP ROLE \"{role}\";"))
        .expect("role dropped");
}
