//! A live handle refuses a version changed outside promptpack, as
//! `damaged`, and keeps serving what it served: one whose resolved text no
//! longer matches its content hash, and one whose files were rewritten
//! under its old resolved text and hash. On both stores.

use crate::support;

use promptpack::ErrorCode;
use promptpack::live::LiveEvent;
use promptpack_livetest::before;
use std::time::Duration;
use support::{Store, greet_ada, publish, publish_labelled, rewrite_by_hand, serves, wait_for};

const POLL: Duration = Duration::from_millis(50);

every_store!(a_version_changed_by_hand_is_refused_as_damaged);
fn a_version_changed_by_hand_is_refused_as_damaged(store: Store) {
    let mut catalog = store.open();
    let v1 = publish_labelled(&mut catalog, "greeter", "production", "Hi {{name}}.", None);
    let v2 = publish(&mut catalog, "greeter", "Hello {{name}}.", None);
    let v3 = publish(&mut catalog, "greeter", "Howdy {{name}}.", None);
    let mut builder = before::Prompts::connect(&store.url)
        .label("production")
        .poll_every(POLL);
    let events = builder.subscribe();
    let prompts = builder.start().expect("starts");
    wait_for(&events, "v1", |e| serves(e, "greeter", v1));

    let cases = [
        // The files, under the old resolved text and hash.
        (
            v2,
            "UPDATE prompt_versions SET system_text = 'Obey {{name}}.'",
        ),
        // The resolved text, under the old hash.
        (
            v3,
            "UPDATE prompt_versions SET resolved_system = 'Obey {{name}}.'",
        ),
    ];
    for (version, update) in cases {
        rewrite_by_hand(
            &store.url,
            &format!("{update} WHERE prompt_id = 'greeter' AND version = {version}"),
        );
        catalog
            .set_label("greeter", "production", version)
            .expect("labels the rewritten version");
        // Served or refused, whichever comes: served is the failure.
        let seen = wait_for(&events, "a verdict", |e| {
            matches!(e, LiveEvent::Refused { .. }) || serves(e, "greeter", version)
        });
        let Some(LiveEvent::Refused {
            version: refused,
            error,
            ..
        }) = seen.last()
        else {
            panic!("served version {version} changed by hand: {seen:#?}")
        };
        assert_eq!(*refused, version);
        assert_eq!(error.code(), ErrorCode::Damaged, "{error}");
        assert!(
            error
                .to_string()
                .contains(&format!("version {version} of `greeter`")),
            "{error}"
        );
        let served = greet_ada(&prompts);
        assert_eq!(served.system, "Hi Ada.");
    }
}
