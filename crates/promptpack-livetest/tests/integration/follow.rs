//! A live handle serves its label, follows it as it moves, refuses what
//! the binary cannot render, and keeps rendering while versions change.
//! Each case runs on a SQLite file (polled) and on a real PostgreSQL
//! database (notified).

use crate::support;

use promptpack::live::LiveEvent;
use promptpack::{ErrorCode, Provenance};
use promptpack_livetest::{after, before};
use std::time::Duration;
use support::{
    Store, greet_ada, greet_ada_as, publish, publish_labelled, serves, version_of, wait_for,
};

const POLL: Duration = Duration::from_millis(50);

every_store!(serves_the_label_and_follows_it);
fn serves_the_label_and_follows_it(store: Store) {
    let mut catalog = store.open();
    let v1 = publish_labelled(
        &mut catalog,
        "greeter",
        "production",
        "Catalog v1 greets {{name}}.",
        Some("Hello {{name}}."),
    );
    // Only `latest` moves: production stays on v1.
    publish(&mut catalog, "greeter", "Draft greets {{name}}.", None);

    let mut builder = before::Prompts::connect(&store.url)
        .label("production")
        .poll_every(POLL);
    let events = builder.subscribe();
    let prompts = builder.start().expect("starts");
    assert!(prompts.is_connected());
    let prompt = greet_ada(&prompts);
    assert_eq!(prompt.system, "Catalog v1 greets Ada.");
    assert_eq!(prompt.user.as_deref(), Some("Hello Ada."));
    let Provenance::Catalog(served) = &prompt.provenance else {
        panic!("served from {}", prompt.provenance);
    };
    assert_eq!((&*served.prompt, served.version), ("greeter", v1));
    assert_eq!(served.label.as_deref(), Some("production"));
    assert_eq!(served.content_hash.len(), 64);
    assert!(
        prompt
            .provenance
            .to_string()
            .starts_with("catalog greeter v1 label=production sha256:")
    );
    // The start said what it serves: greeter from the catalog; reviewer,
    // which the catalog lacks, stays embedded and is not mentioned.
    let start = wait_for(&events, "greeter v1 at start", |e| serves(e, "greeter", v1));
    assert_eq!(start.len(), 1, "{start:#?}");
    let reviewer_vars = before::ReviewerVars {
        language: "Rust",
        strict: true,
    };
    let reviewer = prompts
        .build_prompt(before::PromptId::Reviewer, reviewer_vars)
        .expect("renders");
    assert_eq!(reviewer, without_catalog(reviewer_vars));
    assert_eq!(
        reviewer.system,
        "You review Rust code.\n\nBlock on any failing test.\n"
    );
    assert_eq!(
        prompts.serving(before::PromptId::Reviewer),
        Provenance::Embedded
    );

    // A publish plus a label move reaches the handle, and a subscriber
    // that came after the start.
    let later = prompts.subscribe();
    let v3 = publish_labelled(
        &mut catalog,
        "greeter",
        "production",
        "Catalog v3 greets {{name}}.",
        None,
    );
    wait_for(&events, "greeter v3", |e| serves(e, "greeter", v3));
    wait_for(&later, "greeter v3, subscribed late", |e| {
        serves(e, "greeter", v3)
    });
    let prompt = greet_ada(&prompts);
    assert_eq!(prompt.system, "Catalog v3 greets Ada.");
    assert_eq!(prompt.user, None);
    assert_eq!(version_of(&prompts.serving(before::PromptId::Greeter)), v3);

    // Rolling back is moving the label.
    catalog
        .set_label("greeter", "production", v1)
        .expect("rolls back");
    wait_for(&events, "greeter back on v1", |e| serves(e, "greeter", v1));
    assert_eq!(greet_ada(&prompts).system, "Catalog v1 greets Ada.");

    // A prompt gone from the catalog serves its embedded text again.
    catalog.delete("greeter").expect("deletes");
    wait_for(
        &events,
        "greeter embedded",
        |e| matches!(e, LiveEvent::Updated { prompt, versions } if prompt == "greeter" && versions.is_empty()),
    );
    let prompt = greet_ada(&prompts);
    assert_eq!(prompt.system, "You greet Ada at the door.");
    assert_eq!(prompt, without_catalog(before::GreeterVars { name: "Ada" }));
}

/// What the binary renders with no catalog attached: the free
/// `build_prompt`'s prompt, which a handle falls back on. Its provenance is
/// `embedded`, or `loaded` in a debug build whose promptpack has
/// `hot-reload` (as `cargo test --all-features` builds it): the dev reload
/// of the same files.
fn without_catalog<V: promptpack::TypedVars>(vars: V) -> promptpack::Prompt<V::Id> {
    let prompt = vars.build().expect("renders without a catalog");
    assert!(
        matches!(prompt.provenance, Provenance::Embedded | Provenance::Loaded),
        "{}",
        prompt.provenance
    );
    prompt
}

every_store!(each_binary_serves_what_its_contract_can_render);
/// One catalog, two builds of the service: the build without `tone`
/// keeps its last good version and reports the new one refused, once; the
/// build with `tone` serves it.
fn each_binary_serves_what_its_contract_can_render(store: Store) {
    let mut catalog = store.open();
    let v1 = publish_labelled(
        &mut catalog,
        "greeter",
        "production",
        "v1: greet {{name}}.",
        None,
    );
    let mut old_builder = before::Prompts::connect(&store.url).poll_every(POLL);
    let old_events = old_builder.subscribe();
    let old = old_builder.start().expect("starts");
    let mut new_builder = after::Prompts::connect(&store.url).poll_every(POLL);
    let new_events = new_builder.subscribe();
    let new = new_builder.start().expect("starts");
    wait_for(&old_events, "old build on v1", |e| serves(e, "greeter", v1));
    wait_for(&new_events, "new build on v1", |e| serves(e, "greeter", v1));

    let v2 = publish_labelled(
        &mut catalog,
        "greeter",
        "production",
        "v2: greet {{name}}\nin a {{tone}} tone.",
        None,
    );
    wait_for(&new_events, "new build on v2", |e| serves(e, "greeter", v2));
    let rendered = new
        .build_prompt(
            after::PromptId::Greeter,
            after::GreeterVars {
                name: "Ada",
                tone: "warm",
            },
        )
        .expect("renders");
    assert_eq!(rendered.system, "v2: greet Ada\nin a warm tone.");
    assert_eq!(version_of(&rendered.provenance), v2);

    let refused = wait_for(&old_events, "old build refusing v2", |e| {
        matches!(e, LiveEvent::Refused { .. })
    });
    let Some(LiveEvent::Refused {
        prompt,
        version,
        error,
    }) = refused.last()
    else {
        unreachable!()
    };
    assert_eq!((prompt.as_str(), *version), ("greeter", v2));
    assert_eq!(error.code(), ErrorCode::ContractViolation);
    let message = error.to_string();
    assert!(message.contains("tone"), "{message}");
    let location = error.diagnostics()[0]
        .location
        .as_ref()
        .expect("a location");
    assert_eq!(
        (location.path(), location.line()),
        ("templates/greeter/system.md", 2),
        "{message}"
    );
    assert_eq!(greet_ada(&old).system, "v1: greet Ada.");

    // More changes: the refusal is not said again, v1 keeps serving.
    let other = publish_labelled(
        &mut catalog,
        "reviewer",
        "production",
        "Review {{language}}.",
        None,
    );
    wait_for(&old_events, "reviewer from the catalog", |e| {
        serves(e, "reviewer", other)
    });
    catalog
        .set_label("greeter", "production", v1)
        .expect("moves");
    catalog
        .set_label("greeter", "production", v2)
        .expect("moves");
    let reviewer = publish_labelled(
        &mut catalog,
        "reviewer",
        "production",
        "Review {{language}} again.",
        None,
    );
    let later = wait_for(&old_events, "reviewer again", |e| {
        serves(e, "reviewer", reviewer)
    });
    assert!(
        !later.iter().any(|e| matches!(e, LiveEvent::Refused { .. })),
        "{later:#?}"
    );
    assert_eq!(greet_ada(&old).system, "v1: greet Ada.");
    assert_eq!(version_of(&old.serving(before::PromptId::Greeter)), v1);

    // The old build restarted: it refuses what the label points at and
    // serves the newest version the label pointed at before that it can
    // render, as the process running all along does, not its embedded text.
    drop(old);
    let mut restarted = before::Prompts::connect(&store.url).poll_every(POLL);
    let restart_events = restarted.subscribe();
    let restarted = restarted.start().expect("starts");
    assert_eq!(greet_ada(&restarted).system, "v1: greet Ada.");
    let said: Vec<_> = restart_events.try_iter().collect();
    assert!(
        said.iter()
            .any(|e| matches!(e, LiveEvent::Refused { version, .. } if *version == v2)),
        "{said:#?}"
    );
    assert!(said.iter().any(|e| serves(e, "greeter", v1)), "{said:#?}");
}

every_store!(a_row_edited_by_hand_is_refused);
/// A version written into the catalog's tables by hand, past the checks
/// of `publish`, is judged like any other: text that does not compile is
/// refused with its own code and location.
fn a_row_edited_by_hand_is_refused(store: Store) {
    let mut catalog = store.open();
    let v1 = publish_labelled(&mut catalog, "greeter", "production", "Hi {{name}}.", None);
    let mut builder = before::Prompts::connect(&store.url).poll_every(POLL);
    let events = builder.subscribe();
    let prompts = builder.start().expect("starts");
    wait_for(&events, "v1", |e| serves(e, "greeter", v1));

    let broken = "Hi {{name}}.\n{{#if name}}never closed";
    insert_version_by_hand(&store.url, "greeter", v1 + 1, broken);
    catalog
        .set_label("greeter", "production", v1 + 1)
        .expect("labels the hand-made row");
    let seen = wait_for(&events, "refusal", |e| {
        matches!(e, LiveEvent::Refused { .. })
    });
    let Some(LiveEvent::Refused { version, error, .. }) = seen.last() else {
        unreachable!()
    };
    assert_eq!(*version, v1 + 1);
    assert_eq!(error.code(), ErrorCode::UnclosedBlock, "{error}");
    let location = error.diagnostics()[0]
        .location
        .as_ref()
        .expect("a location");
    assert_eq!(
        (location.path(), location.line()),
        ("templates/greeter/system.md", 2)
    );
    assert_eq!(greet_ada(&prompts).system, "Hi Ada.");
}

/// Appends version `version` of `id` with `system` straight into the
/// tables, as a hand-written statement would (with its true content hash:
/// what is refused is the text, not a damaged row).
fn insert_version_by_hand(url: &str, id: &str, version: u32, system: &str) {
    let hash = promptpack_catalog::content_hash(system, None);
    let insert = "INSERT INTO prompt_versions (prompt_id, version, system_text, user_text, \
        front_matter, resolved_system, resolved_user, content_hash, author, message, \
        created_at, delimiter_open, delimiter_close, standalone_tags) \
        VALUES ($1, $2, $3, NULL, '{}', $3, NULL, $4, 'hand', 'by hand', 0, '{{', '}}', 0)";
    let bump = "UPDATE prompts SET latest_version = $2 WHERE id = $1";
    if let Some(path) = url.strip_prefix("sqlite:") {
        let db = rusqlite::Connection::open(path).expect("opens the file");
        let (insert, bump) = (insert.replace('$', "?"), bump.replace('$', "?"));
        db.execute(&insert, rusqlite::params![id, version, system, hash])
            .expect("inserts by hand");
        db.execute(&bump, rusqlite::params![id, version])
            .expect("bumps by hand");
    } else {
        let mut client = postgres::Client::connect(url, postgres::NoTls).expect("connects");
        let version = i64::from(version);
        client
            .execute(insert, &[&id, &version, &system, &hash])
            .expect("inserts by hand");
        client
            .execute(bump, &[&id, &version])
            .expect("bumps by hand");
    }
}

every_store!(renders_are_never_torn_while_versions_change);
/// Eight threads render while the label moves through 30 versions: every
/// render is one version's text, system and user alike, and its
/// provenance names that version.
fn renders_are_never_torn_while_versions_change(store: Store) {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    const VERSIONS: u32 = 30;
    let text = |n: u32| {
        (
            format!("v{n} system {{{{name}}}} v{n}"),
            format!("v{n} user"),
        )
    };
    let mut catalog = store.open();
    let (system, user) = text(1);
    publish_labelled(&mut catalog, "greeter", "production", &system, Some(&user));
    let prompts = before::Prompts::connect(&store.url)
        .poll_every(Duration::from_millis(5))
        .start()
        .expect("starts");
    let done = Arc::new(AtomicBool::new(false));
    let renderers: Vec<_> = (0..8)
        .map(|_| {
            let (prompts, done) = (prompts.clone(), Arc::clone(&done));
            std::thread::spawn(move || {
                let mut seen = std::collections::BTreeSet::new();
                let mut renders = 0u64;
                // Until the last version is served, and at least once after.
                loop {
                    let finished = done.load(Ordering::Acquire);
                    let prompt = greet_ada(&prompts);
                    let n = version_of(&prompt.provenance);
                    assert_eq!(
                        prompt.system,
                        format!("v{n} system Ada v{n}"),
                        "torn render"
                    );
                    assert_eq!(prompt.user, Some(format!("v{n} user")), "mixed render");
                    seen.insert(n);
                    renders += 1;
                    if finished {
                        return (seen, renders);
                    }
                }
            })
        })
        .collect();
    for n in 2..=VERSIONS {
        let (system, user) = text(n);
        let version = publish_labelled(&mut catalog, "greeter", "production", &system, Some(&user));
        assert_eq!(version, n);
        std::thread::sleep(Duration::from_millis(3));
    }
    promptpack_testkit::wait::until("the greeter serves the last version", || {
        version_of(&prompts.serving(before::PromptId::Greeter)) == VERSIONS
    });
    done.store(true, Ordering::Release);
    for renderer in renderers {
        let (seen, renders) = renderer.join().expect("a renderer never panics");
        assert!(seen.contains(&VERSIONS), "{seen:?}");
        eprintln!("one renderer: {renders} renders over versions {seen:?}");
    }
}

every_store!(a_split_label_keeps_each_key_on_its_arm);
/// 90/10 between v1 and v2: over 10,000 keys v2 takes 10% ± 2 points,
/// the same keys land on the same arm after a restart, and a key on v2
/// stays there when v2's weight grows.
fn a_split_label_keeps_each_key_on_its_arm(store: Store) {
    use promptpack_catalog::Arm;
    let mut catalog = store.open();
    let v1 = publish(&mut catalog, "greeter", "Arm one greets {{name}}.", None);
    let v2 = publish(&mut catalog, "greeter", "Arm two greets {{name}}.", None);
    let split = |catalog: &mut promptpack_catalog::Catalog, first: u32, second: u32| {
        catalog
            .split_label(
                "greeter",
                "production",
                &[
                    Arm {
                        version: v1,
                        weight: first,
                    },
                    Arm {
                        version: v2,
                        weight: second,
                    },
                ],
            )
            .expect("splits");
    };
    split(&mut catalog, 90, 10);
    let arms = |prompts: &before::Prompts| -> Vec<u32> {
        (0..10_000)
            .map(|user| {
                let prompt = greet_ada_as(prompts, user);
                let n = version_of(&prompt.provenance);
                let expected = if n == v1 { "Arm one" } else { "Arm two" };
                assert!(prompt.system.starts_with(expected), "{}", prompt.system);
                n
            })
            .collect()
    };
    let mut builder = before::Prompts::connect(&store.url).poll_every(POLL);
    let events = builder.subscribe();
    let prompts = builder.start().expect("starts");
    let started = wait_for(&events, "the split", |e| {
        matches!(e, LiveEvent::Updated { .. })
    });
    let Some(LiveEvent::Updated { versions, .. }) = started.last() else {
        unreachable!()
    };
    let shares: Vec<_> = versions.iter().map(|v| (v.version, v.arm)).collect();
    assert_eq!(shares, [(v1, Some((90, 100))), (v2, Some((10, 100)))]);
    let first = arms(&prompts);
    let on_v2 = first.iter().filter(|&&n| n == v2).count();
    let share = on_v2 as f64 / first.len() as f64;
    eprintln!(
        "90/10 split over 10,000 keys: v2 took {:.2}%",
        share * 100.0
    );
    assert!((0.08..=0.12).contains(&share), "v2 took {share}");
    let sample = prompts
        .build_prompt_for(
            "user-7",
            before::PromptId::Greeter,
            before::GreeterVars { name: "Ada" },
        )
        .expect("renders");
    assert!(
        sample
            .provenance
            .to_string()
            .contains(" label=production arm="),
        "{}",
        sample.provenance
    );
    // A render without a key takes the heaviest arm.
    assert_eq!(version_of(&greet_ada(&prompts).provenance), v1);

    // A restart: a new handle, the same arm for every key.
    drop(prompts);
    let restarted = before::Prompts::connect(&store.url).poll_every(POLL);
    let restarted = restarted.start().expect("starts again");
    assert_eq!(
        arms(&restarted),
        first,
        "a key changed arm across a restart"
    );

    // Growing v2 to 30% keeps its keys and adds others.
    let mut builder = before::Prompts::connect(&store.url).poll_every(POLL);
    let events = builder.subscribe();
    let prompts = builder.start().expect("starts");
    split(&mut catalog, 70, 30);
    wait_for(
        &events,
        "the new weights",
        |e| matches!(e, LiveEvent::Updated { versions, .. } if versions.iter().any(|v| v.arm == Some((30, 100)))),
    );
    let grown = arms(&prompts);
    for (before, after) in first.iter().zip(&grown) {
        if *before == v2 {
            assert_eq!(*after, v2, "a key left the growing arm");
        }
    }
    let grown_share = grown.iter().filter(|&&n| n == v2).count() as f64 / 10_000.0;
    assert!(
        (0.28..=0.32).contains(&grown_share),
        "v2 took {grown_share}"
    );
}
