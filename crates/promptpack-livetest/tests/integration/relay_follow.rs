//! A live handle follows a relay (`http://…`, the `live-relay` feature):
//! the relay sends text, the handle judges each version against its own
//! contract, keeps what served when the relay is cut off or stalls, and
//! catches up when it comes back. The relay is the real one
//! ([`TestRelay`]: `promptpack_console::relay` over the test's catalog),
//! stopped and started again for a restart, and stalled by the loopback
//! proxy in front of it.

use crate::relay_fixture::TestRelay;
use crate::support::{Store, greet_ada, publish, publish_labelled, serves, version_of, wait_for};
use promptpack::live::LiveEvent;
use promptpack::{ErrorCode, Provenance};
use promptpack_livetest::before;
use std::time::Duration;

/// A handle of the `before` build on `relay`, its events from the start.
fn follow(
    relay: &TestRelay,
    stall: Duration,
) -> (before::Prompts, std::sync::mpsc::Receiver<LiveEvent>) {
    let mut builder = before::Prompts::connect(relay.url())
        .token(relay.token.clone())
        .label("production")
        .relay_stall(stall)
        .timeouts(Duration::from_secs(2), Duration::from_secs(2))
        .poll_every(Duration::from_millis(200));
    let events = builder.subscribe();
    (builder.start().expect("starts"), events)
}

#[test]
fn serves_what_the_relay_sends_and_refuses_what_it_cannot_render() {
    let store = Store::sqlite();
    let mut catalog = store.open();
    let v1 = publish_labelled(
        &mut catalog,
        "greeter",
        "production",
        "v1 greets {{name}}.",
        None,
    );
    let relay = TestRelay::start(&store.url);

    let (prompts, events) = follow(&relay, Duration::from_secs(15));
    assert!(prompts.is_connected());
    let prompt = greet_ada(&prompts);
    assert_eq!(prompt.system, "v1 greets Ada.");
    let Provenance::Catalog(served) = &prompt.provenance else {
        panic!("served from {}", prompt.provenance);
    };
    assert_eq!((&*served.prompt, served.version), ("greeter", v1));
    assert_eq!(served.label.as_deref(), Some("production"));
    wait_for(&events, "greeter v1 at start", |e| serves(e, "greeter", v1));

    // A new version reaches the handle on the stream.
    let v2 = publish(&mut catalog, "greeter", "v2 greets {{name}}.", None);
    catalog
        .set_label("greeter", "production", v2)
        .expect("moved");
    wait_for(&events, "greeter v2", |e| serves(e, "greeter", v2));
    assert_eq!(greet_ada(&prompts).system, "v2 greets Ada.");

    // A version this build cannot render is refused, once, and v2 keeps
    // serving.
    let v3 = publish(&mut catalog, "greeter", "v3 {{name}}, {{tone}}.", None);
    catalog
        .set_label("greeter", "production", v3)
        .expect("moved");
    let seen = wait_for(
        &events,
        "v3 refused",
        |e| matches!(e, LiveEvent::Refused { version, .. } if *version == v3),
    );
    let Some(LiveEvent::Refused { error, .. }) = seen.last() else {
        panic!("{seen:#?}");
    };
    assert_eq!(error.code(), ErrorCode::ContractViolation);
    assert_eq!(version_of(&greet_ada(&prompts).provenance), v2);

    // The prompt deleted, so the label with it: the embedded text.
    catalog.delete("greeter").expect("deleted");
    wait_for(
        &events,
        "greeter embedded",
        |e| matches!(e, LiveEvent::Updated { prompt, versions } if prompt == "greeter" && versions.is_empty()),
    );
    assert_eq!(
        prompts.serving(before::PromptId::Greeter),
        Provenance::Embedded
    );
    let refusals = std::iter::from_fn(|| events.try_recv().ok())
        .filter(|e| matches!(e, LiveEvent::Refused { .. }))
        .count();
    assert_eq!(refusals, 0, "v3 was said refused once");

    // The build registered in the catalog through the relay, and is
    // taken away on drop.
    let registered = |catalog: &mut promptpack_catalog::Catalog| {
        catalog
            .builds(Duration::from_secs(3600))
            .expect("builds")
            .iter()
            .any(|build| build.label == "production")
    };
    assert!(registered(&mut catalog), "registered through the relay");
    drop(prompts);
    promptpack_testkit::wait::until("the build unregistered", || !registered(&mut catalog));
}

#[test]
fn a_relay_cut_off_and_restarted_is_caught_up_with() {
    let store = Store::sqlite();
    let mut catalog = store.open();
    let v1 = publish_labelled(
        &mut catalog,
        "greeter",
        "production",
        "v1 greets {{name}}.",
        None,
    );
    let relay = TestRelay::start(&store.url);
    let (prompts, events) = follow(&relay, Duration::from_secs(15));
    wait_for(&events, "greeter v1", |e| serves(e, "greeter", v1));

    relay.go_down();
    wait_for(&events, "the relay down", |e| {
        matches!(e, LiveEvent::StoreDown { .. })
    });
    // Renders never fail meanwhile, and what served keeps serving.
    assert_eq!(greet_ada(&prompts).system, "v1 greets Ada.");
    assert!(!prompts.is_connected());

    // Published while the handle was cut off, and the relay restarted (a
    // new epoch: the handle's last event id is of no use).
    let v2 = publish(&mut catalog, "greeter", "v2 greets {{name}}.", None);
    catalog
        .set_label("greeter", "production", v2)
        .expect("moved");
    relay.come_back();
    let seen = wait_for(&events, "the relay back", |e| {
        matches!(e, LiveEvent::StoreBack)
    });
    assert!(
        seen.iter().any(|e| serves(e, "greeter", v2)),
        "v2 applied before StoreBack: {seen:#?}"
    );
    assert_eq!(greet_ada(&prompts).system, "v2 greets Ada.");
    assert!(prompts.is_connected());

    // And the stream follows again.
    let v3 = publish(&mut catalog, "greeter", "v3 greets {{name}}.", None);
    catalog
        .set_label("greeter", "production", v3)
        .expect("moved");
    wait_for(&events, "greeter v3", |e| serves(e, "greeter", v3));
}

#[test]
fn a_stalled_relay_is_reported_and_caught_up_with() {
    let store = Store::sqlite();
    let mut catalog = store.open();
    let v1 = publish_labelled(
        &mut catalog,
        "greeter",
        "production",
        "v1 greets {{name}}.",
        None,
    );
    let relay = TestRelay::start(&store.url);
    let (prompts, events) = follow(&relay, Duration::from_secs(1));
    wait_for(&events, "greeter v1", |e| serves(e, "greeter", v1));

    // No event and no ping: the handle takes the relay for stalled.
    relay.stall();
    let v2 = publish(&mut catalog, "greeter", "v2 greets {{name}}.", None);
    catalog
        .set_label("greeter", "production", v2)
        .expect("moved");
    wait_for(
        &events,
        "the relay stalled",
        |e| matches!(e, LiveEvent::StoreDown { error } if error.code() == ErrorCode::Unavailable),
    );
    assert_eq!(greet_ada(&prompts).system, "v1 greets Ada.");

    // Resumed: the change it missed arrives.
    relay.resume();
    let seen = wait_for(&events, "the relay back", |e| {
        matches!(e, LiveEvent::StoreBack)
    });
    wait_for_version(&prompts, &events, &seen, v2);
    assert_eq!(greet_ada(&prompts).system, "v2 greets Ada.");
}

/// Waits until `greeter` serves `version`, unless `seen` says so already.
fn wait_for_version(
    prompts: &before::Prompts,
    events: &std::sync::mpsc::Receiver<LiveEvent>,
    seen: &[LiveEvent],
    version: u32,
) {
    if seen.iter().any(|e| serves(e, "greeter", version))
        || version_of(&prompts.serving(before::PromptId::Greeter)) == version
    {
        return;
    }
    wait_for(events, "greeter's version", |e| {
        serves(e, "greeter", version)
    });
}

#[test]
fn a_start_on_a_refused_version_serves_the_earlier_one() {
    let store = Store::sqlite();
    let mut catalog = store.open();
    let v1 = publish_labelled(
        &mut catalog,
        "greeter",
        "production",
        "v1 greets {{name}}.",
        None,
    );
    let v2 = publish(&mut catalog, "greeter", "v2 {{name}}, {{tone}}.", None);
    catalog
        .set_label("greeter", "production", v2)
        .expect("moved");
    let relay = TestRelay::start(&store.url);
    let (prompts, events) = follow(&relay, Duration::from_secs(15));
    let seen = wait_for(&events, "v1 served", |e| serves(e, "greeter", v1));
    assert!(
        seen.iter()
            .any(|e| matches!(e, LiveEvent::Refused { version, .. } if *version == v2)),
        "{seen:#?}"
    );
    assert_eq!(greet_ada(&prompts).system, "v1 greets Ada.");
}

#[test]
fn a_relay_needs_the_feature_a_token_and_plain_http() {
    let store = Store::sqlite();
    let relay = TestRelay::start(&store.url);
    // SAFETY-free: the variable is read, never set, by these tests.
    if std::env::var_os(promptpack::live::RELAY_TOKEN_VAR).is_none() {
        let error = before::Prompts::connect(relay.url())
            .start()
            .expect_err("no token");
        assert_eq!(error.code(), ErrorCode::InvalidRequest);
        assert!(
            error.to_string().contains("PROMPTPACK_RELAY_TOKEN"),
            "{error}"
        );
    }
    let error = before::Prompts::connect("https://relay.internal:7879")
        .token(relay.token.clone())
        .start()
        .expect_err("https");
    assert_eq!(error.code(), ErrorCode::InvalidRequest);
    assert!(error.to_string().contains("TLS"), "{error}");

    // A token the relay does not know: the handle serves the embedded
    // text and says why, in words that name the token.
    let mut builder = before::Prompts::connect(relay.url()).token("not-the-token");
    let events = builder.subscribe();
    let prompts = builder.start().expect("starts");
    let seen = wait_for(&events, "refused", |e| {
        matches!(e, LiveEvent::StoreDown { .. })
    });
    let Some(LiveEvent::StoreDown { error }) = seen.last() else {
        panic!("{seen:#?}");
    };
    assert_eq!(error.code(), ErrorCode::NotConfigured);
    assert!(error.to_string().contains("token"), "{error}");
    assert_eq!(
        prompts.serving(before::PromptId::Greeter),
        Provenance::Embedded
    );
}
