//! Split weights as a store may hold them, past what the catalog writes
//! (a row edited by hand): two arms of 2^31 each add up past `u32`. The
//! handle serves both arms with their true shares instead of overflowing
//! (a debug build panicked; a release build said `2147483648/0`). On both
//! stores.

use crate::support;

use promptpack::live::LiveEvent;
use promptpack_catalog::Arm;
use promptpack_livetest::before;
use support::{Store, greet_ada_as, publish, wait_for};

/// Sets every arm's weight of `label` of `id` to `weight`, by hand.
fn set_weights_by_hand(url: &str, id: &str, label: &str, weight: i64) {
    let update = "UPDATE label_arms SET weight = $3 WHERE prompt_id = $1 AND label = $2";
    if let Some(path) = url.strip_prefix("sqlite:") {
        let db = rusqlite::Connection::open(path).expect("opens the file");
        db.execute(
            &update.replace('$', "?"),
            rusqlite::params![id, label, weight],
        )
        .expect("updates by hand");
    } else {
        let mut client = postgres::Client::connect(url, postgres::NoTls).expect("connects");
        client
            .execute(update, &[&id, &label, &weight])
            .expect("updates by hand");
    }
}

every_store!(weights_past_u32_keep_their_shares);
fn weights_past_u32_keep_their_shares(store: Store) {
    let mut catalog = store.open();
    let v1 = publish(&mut catalog, "greeter", "v1 greets {{name}}.", None);
    let v2 = publish(&mut catalog, "greeter", "v2 greets {{name}}.", None);
    let arms = [v1, v2].map(|version| Arm { version, weight: 1 });
    catalog
        .split_label("greeter", "production", &arms)
        .expect("splits");
    set_weights_by_hand(&store.url, "greeter", "production", 1 << 31);

    let mut builder = before::Prompts::connect(&store.url).label("production");
    let events = builder.subscribe();
    let prompts = builder.start().expect("starts");
    let seen = wait_for(
        &events,
        "greeter split",
        |e| matches!(e, LiveEvent::Updated { prompt, versions } if prompt == "greeter" && versions.len() == 2),
    );
    let Some(LiveEvent::Updated { versions, .. }) = seen.last() else {
        unreachable!()
    };
    let half = 1u32 << 30;
    for version in versions {
        assert_eq!(version.arm, Some((half, 2 * half)), "{version:?}");
    }
    let said = seen.last().map(ToString::to_string).unwrap_or_default();
    assert_eq!(
        said,
        format!(
            "greeter: serving v{v1} ({half}/{}), v{v2} ({half}/{})",
            2 * half,
            2 * half
        )
    );
    // Both arms serve, each key on one.
    let mut served = std::collections::BTreeSet::new();
    for user in 0..64 {
        served.insert(greet_ada_as(&prompts, user).system);
    }
    assert_eq!(
        served.into_iter().collect::<Vec<_>>(),
        ["v1 greets Ada.", "v2 greets Ada."]
    );
}
