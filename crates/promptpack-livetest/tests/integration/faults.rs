//! The store goes away and comes back: a handle started while PostgreSQL
//! is down serves the embedded text and connects when it returns; a
//! handle that loses it keeps serving what it loaded, no render fails,
//! and the next change after the restart is seen.

use crate::support;

use promptpack::live::LiveEvent;
use promptpack::{ErrorCode, Provenance};
use promptpack_livetest::after::{GreeterVars, PromptId, Prompts};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use support::{own_cluster_with_greeter, publish_labelled, serves, version_of, wait_for};

fn greet(prompts: &Prompts) -> promptpack::Result<promptpack::Prompt<PromptId>> {
    prompts.build_prompt(
        PromptId::Greeter,
        GreeterVars {
            name: "Ada",
            tone: "calm",
        },
    )
}

#[test]
fn the_store_goes_away_and_comes_back() {
    let (cluster, url, v1) = own_cluster_with_greeter("live_faults");

    // Down at start: the handle starts anyway, on the embedded text.
    cluster.stop().expect("stops");
    let mut builder = Prompts::connect(&url);
    let events = builder.subscribe();
    let prompts = builder.start().expect("starts with the store down");
    assert!(!prompts.is_connected());
    let Ok(LiveEvent::StoreDown { error }) = events.try_recv() else {
        panic!("the start did not say the store is down");
    };
    assert_eq!(error.code(), ErrorCode::Unavailable, "{error}");
    let embedded = greet(&prompts).expect("renders the embedded text");
    // What the binary renders with no catalog: `embedded`, or the dev
    // reload's `loaded` when promptpack has `hot-reload` in a debug build.
    let free = GreeterVars {
        name: "Ada",
        tone: "calm",
    }
    .build()
    .expect("renders without a catalog");
    assert_eq!(embedded, free);
    assert!(matches!(
        embedded.provenance,
        Provenance::Embedded | Provenance::Loaded
    ));
    assert_eq!(
        embedded.system,
        "You greet Ada at the door, in a calm tone."
    );

    // Up: connects, says so (not "again": it was never reached), serves
    // the label.
    cluster.restart().expect("restarts");
    // `StoreUp` comes once every label has been read.
    let back = wait_for(&events, "the store up", |e| *e == LiveEvent::StoreUp);
    assert!(
        !back.contains(&LiveEvent::StoreBack),
        "a store never reached was said to be back: {back:#?}"
    );
    assert!(back.iter().any(|e| serves(e, "greeter", v1)), "{back:#?}");
    assert!(prompts.is_connected());
    let down_again = back
        .iter()
        .filter(|e| matches!(e, LiveEvent::StoreDown { .. }))
        .count();
    assert_eq!(
        down_again, 0,
        "the outage was said more than once: {back:#?}"
    );
    assert_eq!(greet(&prompts).expect("renders").system, "v1 Ada, calm.");

    // Lost while running, with renders going on all along.
    let stop = Arc::new(AtomicBool::new(false));
    let failures = Arc::new(AtomicU64::new(0));
    let renderers: Vec<_> = (0..4)
        .map(|_| {
            let (prompts, stop, failures) =
                (prompts.clone(), Arc::clone(&stop), Arc::clone(&failures));
            std::thread::spawn(move || {
                let mut versions = std::collections::BTreeSet::new();
                while !stop.load(Ordering::Acquire) {
                    match greet(&prompts) {
                        Ok(prompt) => {
                            versions.insert(version_of(&prompt.provenance));
                        }
                        Err(_) => {
                            failures.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    std::thread::sleep(std::time::Duration::from_micros(200));
                }
                versions
            })
        })
        .collect();
    cluster.stop().expect("stops");
    // The poll finds the loss (the listener's connection ends first).
    wait_for(&events, "the store lost", |e| {
        matches!(e, LiveEvent::StoreDown { .. })
    });
    let during = greet(&prompts).expect("renders while the store is down");
    assert_eq!(during.system, "v1 Ada, calm.");
    assert_eq!(version_of(&during.provenance), v1);

    cluster.restart().expect("restarts");
    wait_for(&events, "the store back", |e| *e == LiveEvent::StoreBack);
    let mut catalog = promptpack_catalog::Catalog::open(&url).expect("opens again");
    let v2 = publish_labelled(
        &mut catalog,
        "greeter",
        "production",
        "v2 {{name}}, {{tone}}.",
        None,
    );
    wait_for(&events, "v2 after the restart", |e| {
        serves(e, "greeter", v2)
    });
    assert_eq!(greet(&prompts).expect("renders").system, "v2 Ada, calm.");

    stop.store(true, Ordering::Release);
    for renderer in renderers {
        let versions = renderer.join().expect("a renderer never panics");
        assert!(
            versions.iter().all(|v| [v1, v2].contains(v)),
            "{versions:?}"
        );
    }
    assert_eq!(failures.load(Ordering::Relaxed), 0, "a render failed");
}
