//! A live handle reads a label and the versions it points at in one
//! snapshot, and refuses a version only for what the version itself holds:
//! a prompt deleted and restored under it, however the writes interleave
//! with its reads, serves its label again once restored. Each case runs on
//! a SQLite file (polled) and on a real PostgreSQL database (notified).

use crate::support;

use promptpack_livetest::before;
use std::time::Duration;
use support::{
    Store, greet_ada, greeter_v1_in_production, publish_labelled, serves, version_of, wait_for,
};

/// Delete/restore cycles raced against the handle: enough that a handle
/// reading the label and the version in two reads sees a delete land in
/// between (the issue saw it within 6 on PostgreSQL).
const CYCLES: usize = 150;

every_store!(a_prompt_deleted_and_restored_under_the_handle_serves_its_label_again);
fn a_prompt_deleted_and_restored_under_the_handle_serves_its_label_again(store: Store) {
    let mut catalog = store.open();
    let v1 = greeter_v1_in_production(&mut catalog);
    let mut builder = before::Prompts::connect(&store.url)
        .label("production")
        .poll_every(Duration::from_millis(1));
    let events = builder.subscribe();
    let prompts = builder.start().expect("starts");
    wait_for(&events, "greeter v1 at start", |e| serves(e, "greeter", v1));

    for cycle in 0..CYCLES {
        catalog
            .delete("greeter")
            .unwrap_or_else(|e| panic!("delete {cycle}: {e}"));
        catalog
            .restore("greeter")
            .unwrap_or_else(|e| panic!("restore {cycle}: {e}"));
    }
    // A change the handle can only see after the last restore: once it
    // serves it, it has read greeter's label as it is now.
    let reviewer = publish_labelled(
        &mut catalog,
        "reviewer",
        "production",
        "Review {{language}}.",
        None,
    );
    let seen = wait_for(&events, "the reviewer after the cycles", |e| {
        serves(e, "reviewer", reviewer)
    });
    let refused: Vec<_> = seen
        .iter()
        .filter(|e| matches!(e, promptpack::live::LiveEvent::Refused { .. }))
        .collect();
    assert!(
        refused.is_empty(),
        "a good version was refused: {refused:#?}"
    );
    let greeting = greet_ada(&prompts);
    assert_eq!(
        (greeting.system.as_str(), version_of(&greeting.provenance)),
        ("v1 greets Ada.", v1),
        "the label is on v1 and the prompt restored"
    );
}
