//! What the live tests share: catalogs on real stores, publishing the
//! service's prompts, and waiting for events with a hang guard.

use promptpack::live::LiveEvent;
use promptpack_catalog::{Catalog, Draft, RegisteredBuild};
use std::sync::mpsc::Receiver;
use std::time::Duration;

/// A fresh catalog store and its URL; a SQLite file's folder goes with it.
pub struct Store {
    pub url: String,
    _dir: Option<tempfile::TempDir>,
}

impl Store {
    pub fn sqlite() -> Store {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let url = format!("sqlite:{}", dir.path().join("catalog.db").display());
        Store {
            url,
            _dir: Some(dir),
        }
    }

    /// A new database on the PostgreSQL server the tests share.
    pub fn postgres(name: &str) -> Store {
        let shared = promptpack_pgtest::shared().unwrap_or_else(|e| panic!("PostgreSQL: {e}"));
        let url = shared
            .unique_database(&name[..name.len().min(24)])
            .unwrap_or_else(|e| panic!("PostgreSQL database: {e}"));
        Store { url, _dir: None }
    }

    /// The catalog, created on first use.
    pub fn open(&self) -> Catalog {
        Catalog::open(&self.url)
            .unwrap_or_else(|e| panic!("open {}: {e}", self.url))
            .with_author("live-test")
    }
}

/// Publishes `system` (and `user`) as the next version of `id`, creating
/// the prompt on first use; the new version's number.
pub fn publish(catalog: &mut Catalog, id: &str, system: &str, user: Option<&str>) -> u32 {
    let draft = Draft {
        system: system.to_string(),
        user: user.map(str::to_string),
        message: format!("test: {id}"),
        ..Draft::default()
    };
    let (version, _) = catalog
        .publish_or_create(id, &draft, None)
        .unwrap_or_else(|e| panic!("publish {id}: {e}"));
    version.version
}

/// Publishes and points `label` at the new version.
pub fn publish_labelled(
    catalog: &mut Catalog,
    id: &str,
    label: &str,
    system: &str,
    user: Option<&str>,
) -> u32 {
    let version = publish(catalog, id, system, user);
    catalog
        .set_label(id, label, version)
        .unwrap_or_else(|e| panic!("label {id} {label} {version}: {e}"));
    version
}

/// Takes events until one matches `wanted`; every event taken, the match
/// last. How fast a change shows is the bench's to measure: the wait fails
/// when the handle is gone, or (the hang guard of `promptpack_testkit::wait`)
/// when no event comes for many minutes, naming `what`.
pub fn wait_for(
    events: &Receiver<LiveEvent>,
    what: &str,
    wanted: impl Fn(&LiveEvent) -> bool,
) -> Vec<LiveEvent> {
    promptpack_testkit::wait::recv_until(events, &format!("an event: {what}"), wanted)
}

/// Whether `event` says prompt `id` now serves `version` (alone).
pub fn serves(event: &LiveEvent, id: &str, version: u32) -> bool {
    matches!(event, LiveEvent::Updated { prompt, versions }
        if prompt == id && versions.len() == 1 && versions[0].version == version)
}

/// The catalog version a provenance names, 0 for embedded text.
pub fn version_of(provenance: &promptpack::Provenance) -> u32 {
    match provenance {
        promptpack::Provenance::Catalog(version) => version.version,
        _ => 0,
    }
}

/// Runs a case, a `fn(Store)`, against both stores: `mod case { fn sqlite()
/// fn postgres() }`.
#[macro_export]
macro_rules! every_store {
    ($case:ident) => {
        mod $case {
            #[test]
            fn sqlite() {
                super::$case($crate::support::Store::sqlite());
            }
            #[test]
            fn postgres() {
                super::$case($crate::support::Store::postgres(stringify!($case)));
            }
        }
    };
}

/// The builds registered in the last day, once there are at least `count`.
/// A handle registers on a thread of its own, with no event to wait for:
/// the catalog is read again until they are there (with the hang guard of
/// `promptpack_testkit::wait::until`).
pub fn registered(catalog: &mut Catalog, count: usize) -> Vec<RegisteredBuild> {
    let day = Duration::from_secs(24 * 60 * 60);
    let mut builds = Vec::new();
    promptpack_testkit::wait::until(&format!("{count} builds registered"), || {
        builds = catalog.builds(day).expect("reads the builds");
        builds.len() >= count
    });
    builds
}

/// Runs `update` (a statement on `prompt_versions`) past the append-only
/// guard, as an operator with the database's password could.
pub fn rewrite_by_hand(url: &str, update: &str) {
    match url.strip_prefix("sqlite:") {
        Some(path) => {
            let guard = "prompt_versions_append_only_update";
            let restore = format!(
                "CREATE TRIGGER {guard} BEFORE UPDATE ON prompt_versions \
                 BEGIN SELECT RAISE(ABORT, 'prompt versions are append-only'); END;"
            );
            rusqlite::Connection::open(path)
                .and_then(|db| {
                    db.execute_batch(&format!("DROP TRIGGER {guard}; {update}; {restore}"))
                })
                .expect("rewrites by hand");
        }
        None => {
            let sql = format!("SET session_replication_role = replica; {update};");
            postgres::Client::connect(url, postgres::NoTls)
                .and_then(|mut db| db.batch_execute(&sql))
                .expect("rewrites by hand");
        }
    }
}

/// Publishes `greeter` v1 (`v1 greets {{name}}.`) and points `production`
/// at it: where most live tests start.
pub fn greeter_v1_in_production(catalog: &mut Catalog) -> u32 {
    publish_labelled(
        catalog,
        "greeter",
        "production",
        "v1 greets {{name}}.",
        None,
    )
}

/// `greeter` rendered for Ada by the `before` build's handle: what a
/// service sends, whichever version serves.
pub fn greet_ada(
    prompts: &promptpack_livetest::before::Prompts,
) -> promptpack::Prompt<promptpack_livetest::before::PromptId> {
    prompts
        .build_prompt(
            promptpack_livetest::before::PromptId::Greeter,
            promptpack_livetest::before::GreeterVars { name: "Ada" },
        )
        .expect("a render never fails")
}

/// `greeter` rendered for Ada by the `before` build's handle as the user
/// `key` (`user-{key}`), whose split arm it picks.
pub fn greet_ada_as(
    prompts: &promptpack_livetest::before::Prompts,
    key: usize,
) -> promptpack::Prompt<promptpack_livetest::before::PromptId> {
    prompts
        .build_prompt_for(
            &format!("user-{key}"),
            promptpack_livetest::before::PromptId::Greeter,
            promptpack_livetest::before::GreeterVars { name: "Ada" },
        )
        .expect("a render never fails")
}

/// A cluster of its own (for tests that stop or stall it) with a database
/// `name` where `greeter` v1 (`v1 {{name}}, {{tone}}.`) is in `production`:
/// the cluster, the database's URL and the version.
pub fn own_cluster_with_greeter(name: &str) -> (promptpack_pgtest::Cluster, String, u32) {
    let cluster = promptpack_pgtest::Cluster::start().expect("a PostgreSQL cluster");
    let url = cluster.create_database(name).expect("a database");
    let mut catalog = Catalog::open(&url).expect("opens");
    let v1 = publish_labelled(
        &mut catalog,
        "greeter",
        "production",
        "v1 {{name}}, {{tone}}.",
        None,
    );
    (cluster, url, v1)
}
