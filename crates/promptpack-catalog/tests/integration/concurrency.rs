//! Concurrent writers on both stores: version numbers are handed out once
//! each with no gaps, and no label move is lost from the audit history.
//! Each writer has a connection of its own, as separate instances would.

use crate::support;

use std::collections::BTreeSet;
use std::sync::{Arc, Barrier};
use support::{Kind, TestStore, draft};

const WRITERS: u32 = 16;
const PUBLISHES: u32 = 50;

fn writers_share_out_versions_exactly_once(kind: Kind) {
    let store = TestStore::of(kind, "versions_once");
    let mut catalog = store.open();
    catalog.create("hot", None, None).expect("create");
    let barrier = Arc::new(Barrier::new(WRITERS as usize));
    let workers: Vec<_> = (0..WRITERS)
        .map(|writer| {
            let url = store.url.clone();
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                let mut catalog = promptpack_catalog::Catalog::open(&url)
                    .expect("open")
                    .with_author(format!("writer-{writer}"));
                barrier.wait();
                (0..PUBLISHES)
                    .map(|n| {
                        let text = format!("writer {writer} publish {n} {{{{x}}}}");
                        catalog
                            .publish("hot", &draft(&text), None)
                            .expect("publish")
                            .version
                    })
                    .collect::<Vec<u32>>()
            })
        })
        .collect();
    let mut numbers = Vec::new();
    for worker in workers {
        numbers.extend(worker.join().expect("a writer"));
    }
    let total = WRITERS * PUBLISHES;
    let distinct: BTreeSet<u32> = numbers.iter().copied().collect();
    assert_eq!(numbers.len(), total as usize);
    assert_eq!(distinct, (1..=total).collect::<BTreeSet<u32>>());

    // What the store holds agrees: each number once, each with its text.
    let history = catalog.history("hot").expect("history");
    let stored: Vec<u32> = history.versions.iter().rev().map(|v| v.version).collect();
    assert_eq!(stored, (1..=total).collect::<Vec<u32>>());
    assert_eq!(history.prompt.latest_version, total);
    assert_eq!(
        store.count("SELECT COUNT(DISTINCT system_text) FROM prompt_versions"),
        i64::from(total)
    );
}

fn no_label_move_is_lost(kind: Kind) {
    let store = TestStore::of(kind, "label_moves");
    let mut catalog = store.open();
    catalog.create("p", None, None).expect("create");
    for text in ["a", "b", "c"] {
        catalog.publish("p", &draft(text), None).expect("publish");
    }
    const MOVES: u32 = 100;
    let barrier = Arc::new(Barrier::new(2));
    let movers: Vec<_> = [1u32, 2]
        .into_iter()
        .map(|mover| {
            let url = store.url.clone();
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                let mut catalog = promptpack_catalog::Catalog::open(&url)
                    .expect("open")
                    .with_author(format!("mover-{mover}"));
                barrier.wait();
                for n in 0..MOVES {
                    let version = 1 + (n + mover) % 3;
                    catalog.set_label("p", "production", version).expect("move");
                }
            })
        })
        .collect();
    for mover in movers {
        mover.join().expect("a mover");
    }
    let history = catalog.history("p").expect("history");
    let moves: Vec<_> = history
        .audit
        .iter()
        .filter(|e| e.label.as_deref() == Some("production"))
        .collect();
    assert_eq!(moves.len(), 2 * MOVES as usize);
    // Each move starts where the one before it left the label: none was
    // applied on a stale reading, none is missing.
    assert_eq!(moves[0].from_version, None);
    for pair in moves.windows(2) {
        assert_eq!(pair[1].from_version, pair[0].to_version, "{pair:?}");
    }
    let last = moves.last().and_then(|m| m.to_version);
    let label = history
        .labels
        .iter()
        .find(|(name, _)| name == "production")
        .map(|(_, v)| *v);
    assert_eq!(label, last);
}

#[test]
fn sqlite_writers_share_out_versions_exactly_once() {
    writers_share_out_versions_exactly_once(Kind::Sqlite);
}

#[test]
fn postgres_writers_share_out_versions_exactly_once() {
    writers_share_out_versions_exactly_once(Kind::Postgres);
}

#[test]
fn sqlite_no_label_move_is_lost() {
    no_label_move_is_lost(Kind::Sqlite);
}

#[test]
fn postgres_no_label_move_is_lost() {
    no_label_move_is_lost(Kind::Postgres);
}

fn concurrent_imports_of_one_tree_write_it_once(kind: Kind) {
    let store = TestStore::of(kind, "imports");
    let tree = tempfile::tempdir().expect("tree");
    support::write_tree(
        tree.path(),
        &[
            ("templates/a/system.md", "A {{snippet:tone}}"),
            ("templates/b/system.md", "B {{x}}"),
            ("snippets/tone.md", "Be brief."),
        ],
    );
    store.open();
    const IMPORTERS: usize = 4;
    let barrier = Arc::new(Barrier::new(IMPORTERS));
    let importers: Vec<_> = (0..IMPORTERS)
        .map(|_| {
            let url = store.url.clone();
            let root = tree.path().to_path_buf();
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                let mut catalog = promptpack_catalog::Catalog::open(&url).expect("open");
                barrier.wait();
                catalog.import(&root, "import", None).expect("import")
            })
        })
        .collect();
    let mut writes = 0;
    for importer in importers {
        let report = importer.join().expect("an importer");
        writes += report
            .prompts
            .iter()
            .chain(&report.snippets)
            .filter(|i| i.written)
            .count();
    }
    // One importer wrote each prompt and the snippet; the others found them.
    assert_eq!(writes, 3);
    assert_eq!(store.footprint(), [2, 2, 1, 1, 1, 0, 2, 0, 0, 0, 0]);
}

#[test]
fn sqlite_concurrent_imports_of_one_tree_write_it_once() {
    concurrent_imports_of_one_tree_write_it_once(Kind::Sqlite);
}

#[test]
fn postgres_concurrent_imports_of_one_tree_write_it_once() {
    concurrent_imports_of_one_tree_write_it_once(Kind::Postgres);
}

/// How many sessions the concurrent sign-ins may keep.
const SESSION_CAP: u32 = 3;

fn concurrent_sign_ins_keep_the_session_cap(kind: Kind) {
    let store = TestStore::of(kind, "sessions_cap");
    let token = promptpack_catalog::token_hash("ada's token");
    store
        .open()
        .add_user("ada", promptpack_catalog::Role::Admin, &token)
        .expect("ada");
    let signers = 8;
    let barrier = Arc::new(Barrier::new(signers));
    let workers: Vec<_> = (0..signers)
        .map(|signer| {
            let (url, token, barrier) = (store.url.clone(), token.clone(), Arc::clone(&barrier));
            std::thread::spawn(move || {
                let mut catalog = promptpack_catalog::Catalog::open(&url).expect("open");
                barrier.wait();
                for n in 0..10 {
                    let id = promptpack_catalog::token_hash(&format!("{signer} {n}"));
                    let hour = std::time::Duration::from_secs(3600);
                    catalog
                        .open_session(&token, &id, hour, SESSION_CAP)
                        .expect("sign in")
                        .expect("ada");
                }
            })
        })
        .collect();
    for worker in workers {
        worker.join().expect("a signer");
    }
    // Each sign-in locked its user: no two kept the cap's last place.
    assert_eq!(
        store.count("SELECT COUNT(*) FROM console_sessions"),
        i64::from(SESSION_CAP)
    );
}

#[test]
fn sqlite_concurrent_sign_ins_keep_the_session_cap() {
    concurrent_sign_ins_keep_the_session_cap(Kind::Sqlite);
}

#[test]
fn postgres_concurrent_sign_ins_keep_the_session_cap() {
    concurrent_sign_ins_keep_the_session_cap(Kind::Postgres);
}
