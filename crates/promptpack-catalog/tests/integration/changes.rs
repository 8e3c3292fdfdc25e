//! Following the catalog: the change marker moves on every write a label
//! follower cares about (both stores), and PostgreSQL announces each
//! committed change to listeners, never a rolled-back one.

use crate::support;

use promptpack_catalog::{Arm, Change, Listener};
use support::{Kind, TestStore, draft};

fn the_marker_moves_on_every_followed_write(kind: Kind) {
    let store = TestStore::of(kind, "marker");
    let mut catalog = store.open();
    let mut last = catalog.change_marker().expect("marker");
    let mut moved = |catalog: &mut promptpack_catalog::Catalog, what: &str| {
        let now = catalog.change_marker().expect("marker");
        assert_ne!(now, last, "{what} did not move the marker");
        last = now;
    };
    catalog.create("p", None, None).expect("create");
    moved(&mut catalog, "create");
    catalog.publish("p", &draft("one"), None).expect("publish");
    moved(&mut catalog, "publish");
    catalog.publish("p", &draft("two"), None).expect("publish");
    moved(&mut catalog, "publish");
    catalog.set_label("p", "production", 1).expect("label");
    moved(&mut catalog, "label");
    let arms = [
        Arm {
            version: 1,
            weight: 9,
        },
        Arm {
            version: 2,
            weight: 1,
        },
    ];
    catalog
        .split_label("p", "production", &arms)
        .expect("split");
    moved(&mut catalog, "split");
    catalog.delete("p").expect("delete");
    moved(&mut catalog, "delete");
    catalog.restore("p").expect("restore");
    moved(&mut catalog, "restore");
    // A read, or a refused write, does not.
    catalog.history("p").expect("history");
    catalog
        .publish("p", &draft("{{#if x}}"), None)
        .expect_err("unclosed");
    assert_eq!(catalog.change_marker().expect("marker"), last);
}

#[test]
fn sqlite_the_marker_moves_on_every_followed_write() {
    the_marker_moves_on_every_followed_write(Kind::Sqlite);
}

#[test]
fn postgres_the_marker_moves_on_every_followed_write() {
    the_marker_moves_on_every_followed_write(Kind::Postgres);
}

#[test]
fn postgres_announces_committed_changes() {
    let store = TestStore::postgres("announces");
    let mut catalog = store.open();
    catalog.create("p", None, None).expect("create");
    let mut listener = Listener::connect(&store.url).expect("listen");
    let change = |version| Change {
        prompt_id: "p".into(),
        version,
    };
    catalog.publish("p", &draft("one"), None).expect("publish");
    catalog.set_label("p", "production", 1).expect("label");
    // Refused: rolled back, never announced.
    catalog
        .publish("p", &draft("{{/if}}"), None)
        .expect_err("stray close");
    catalog.delete("p").expect("delete");
    // Notifications arrive in commit order: everything before the delete's
    // has arrived once it has, so no deadline decides what was sent (the
    // wait's hang guard only fails a notification that never comes).
    let mut seen = Vec::new();
    promptpack_testkit::wait::until("the delete's notification", || {
        if let Some(next) = listener
            .wait(promptpack_testkit::wait::PAUSE)
            .expect("wait")
        {
            seen.push(next);
        }
        seen.last() == Some(&change(None))
    });
    assert_eq!(seen, [change(Some(1)), change(Some(1)), change(None)]);
}
