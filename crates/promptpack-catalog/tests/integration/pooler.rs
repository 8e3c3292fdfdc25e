//! The PostgreSQL store through pgbouncer in transaction mode, the pooler
//! fleets put in front of PostgreSQL: each transaction may run on another
//! server connection, so nothing may outlive a transaction on the server's
//! side. Named prepared statements did (`prepared statement "s0" already
//! exists` for a second client, `… does not exist` for a client moved to
//! another server connection); the store now uses unnamed statements.
//!
//! Runs through the pgbouncer of `PROMPTPACK_TEST_PGBOUNCER_URL` (CI's and
//! scripts/test.sh's, from scripts/pgbouncer.sh, in front of the shared
//! server), and says so and passes without one.

use crate::support;

use std::collections::BTreeSet;
use std::sync::{Arc, Barrier};
use support::{TestStore, draft};

const WRITERS: u32 = 8;
const PUBLISHES: u32 = 20;

/// The URL of `store`'s database through the pooler, or `None` without one.
fn through_pooler(store: &TestStore) -> Option<String> {
    let Ok(pooler) = std::env::var("PROMPTPACK_TEST_PGBOUNCER_URL") else {
        // CI starts one (scripts/pgbouncer.sh): there, its absence is a
        // broken run, not a test to leave out.
        assert!(
            std::env::var_os("CI").is_none(),
            "PROMPTPACK_TEST_PGBOUNCER_URL is not set, and CI starts a pgbouncer"
        );
        eprintln!(
            "PROMPTPACK_TEST_PGBOUNCER_URL is not set: no pgbouncer to test through (scripts/test.sh starts one)"
        );
        return None;
    };
    let database = store.url.rsplit('/').next().expect("a database name");
    let server = pooler.rsplit_once('/').expect("a URL with a path").0;
    Some(format!("{server}/{database}"))
}

#[test]
fn clients_through_pgbouncer_share_its_server_connections() {
    let store = TestStore::postgres("pooler");
    let Some(url) = through_pooler(&store) else {
        return;
    };
    // Made through the pooler too: the migrations and the first writes.
    let mut catalog = promptpack_catalog::Catalog::open(&url)
        .expect("open through pgbouncer")
        .with_author("test");
    catalog.create("pooled", None, None).expect("create");

    // Clients of their own, at once: pgbouncer hands each transaction a
    // server connection another client used before.
    let barrier = Arc::new(Barrier::new(WRITERS as usize));
    let workers: Vec<_> = (0..WRITERS)
        .map(|writer| {
            let url = url.clone();
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                let mut catalog = promptpack_catalog::Catalog::open(&url)
                    .expect("open")
                    .with_author(format!("writer-{writer}"));
                barrier.wait();
                (0..PUBLISHES)
                    .map(|n| {
                        let text = format!("writer {writer} publish {n} {{{{x}}}}");
                        let version = catalog
                            .publish("pooled", &draft(&text), None)
                            .unwrap_or_else(|e| panic!("writer {writer}, publish {n}: {e}"))
                            .version;
                        catalog
                            .set_label("pooled", &format!("w{writer}"), version)
                            .unwrap_or_else(|e| panic!("writer {writer}, label {n}: {e}"));
                        catalog
                            .history("pooled")
                            .unwrap_or_else(|e| panic!("writer {writer}, history {n}: {e}"));
                        version
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
    assert_eq!(distinct, (1..=total).collect::<BTreeSet<u32>>());
    let history = catalog.history("pooled").expect("history");
    assert_eq!(history.prompt.latest_version, total);
}
