//! The `catalog` section: promptpack-catalog on both of its stores in one run, SQLite (a file in a
//! temporary folder) and PostgreSQL (a throwaway cluster from promptpack-pgtest, started here).
//!
//! 1. **Latency.** `publish` (one new version, about 2 KB with one `{{snippet:…}}`, of a prompt
//!    that exists) and `get(id, Label("production"))`, median and p95 over N operations, each
//!    against its raw baseline on the same store, interleaved with it (the first of the pair
//!    alternates): a parameterized INSERT of one row of `prompt_versions`' shape into a table of
//!    its own, in its own transaction, and a primary-key SELECT of one such row.
//! 2. **Flatness.** Catalogs of 100, 1,000 and 10,000 prompts × 10 versions, each built by 10
//!    `import`s of a generated tree (every `system.md` rewritten before each), `production` on a
//!    few sampled prompts; at each size the median of `list` (first page and a page from the
//!    middle, through its cursor), `get` by label and `history`, over random prompts, as a
//!    ratio to the same operation on the same store at 100 prompts.

use crate::harness::{err, escape_cell, median, summary};
use crate::synthetic::{Rng, sentence};
use promptpack_catalog::{Catalog, Draft, Selector, Version};
use promptpack_pgtest::Cluster;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The snippet every prompt includes, and the label read.
const SNIPPET: &str = "tone";
const LABEL: &str = "production";
/// The prompt of the latency rows.
const LATENCY_ID: &str = "latency-bench";
/// Untimed operations of each kind before the timed ones.
const WARMUP: usize = 10;
/// Versions per prompt in the flatness catalogs (one per import).
const VERSIONS: usize = 10;
/// Prompts labeled `production` in each flatness catalog (at most all of them).
const LABELED: usize = 20;
/// The page size of the `list` rows.
const PAGE: u32 = 100;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Sqlite,
    Postgres,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Sqlite => "SQLite",
            Kind::Postgres => "PostgreSQL",
        }
    }
}

/// One empty store: its URL, and for SQLite the file.
struct Store {
    kind: Kind,
    url: String,
    file: Option<PathBuf>,
    /// The PostgreSQL database's name, dropped when done.
    database: Option<String>,
}

/// Where the section's stores live: a temporary folder for the SQLite files, one for the
/// generated trees, and the PostgreSQL cluster (or why it did not start).
struct Stores {
    dir: tempfile::TempDir,
    trees: tempfile::TempDir,
    cluster: Result<Cluster, String>,
}

impl Stores {
    fn store(&self, kind: Kind, name: &str) -> Result<Store, String> {
        match kind {
            Kind::Sqlite => {
                let file = self.dir.path().join(format!("{name}.db"));
                Ok(Store {
                    kind,
                    url: format!("sqlite:{}", file.display()),
                    file: Some(file),
                    database: None,
                })
            }
            Kind::Postgres => {
                let cluster = self.cluster.as_ref().map_err(Clone::clone)?;
                let url = cluster.create_database(name)?;
                Ok(Store {
                    kind,
                    url,
                    file: None,
                    database: Some(name.to_string()),
                })
            }
        }
    }

    /// Removes the store's data, so that the large catalogs do not pile up on disk.
    fn remove(&self, store: &Store) -> Result<(), String> {
        if let Some(file) = &store.file {
            for suffix in ["", "-wal", "-shm"] {
                let mut path = file.as_os_str().to_owned();
                path.push(suffix);
                let _ = std::fs::remove_file(PathBuf::from(path));
            }
        }
        if let (Some(database), Ok(cluster)) = (&store.database, &self.cluster) {
            let mut client =
                postgres::Client::connect(&cluster.url(), postgres::NoTls).map_err(err)?;
            client
                .batch_execute(&format!("DROP DATABASE {database} WITH (FORCE)"))
                .map_err(err)?;
        }
        Ok(())
    }
}

/// The bytes the store's data takes: the SQLite file after a checkpoint that empties the WAL;
/// `pg_database_size` for PostgreSQL.
fn size_on_disk(store: &Store) -> Result<u64, String> {
    match store.kind {
        Kind::Sqlite => {
            let file = store.file.as_deref().ok_or("no SQLite file")?;
            let connection = rusqlite::Connection::open(file).map_err(err)?;
            connection
                .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
                .map_err(err)?;
            drop(connection);
            Ok(std::fs::metadata(file).map_err(err)?.len())
        }
        Kind::Postgres => {
            let mut client = postgres::Client::connect(&store.url, postgres::NoTls).map_err(err)?;
            let row = client
                .query_one("SELECT pg_database_size(current_database())", &[])
                .map_err(err)?;
            Ok(u64::try_from(row.get::<_, i64>(0)).unwrap_or(0))
        }
    }
}

// ---------------------------------------------------------------------------
// The raw baselines: one table of `prompt_versions`' shape, written and read with the store's own
// client and prepared statements.

const RAW_TABLE: &str = "CREATE TABLE raw_versions (
    prompt_id TEXT NOT NULL,
    version BIGINT NOT NULL,
    system_text TEXT NOT NULL,
    user_text TEXT,
    front_matter TEXT NOT NULL,
    delimiter_open TEXT NOT NULL,
    delimiter_close TEXT NOT NULL,
    standalone_tags BIGINT NOT NULL,
    resolved_system TEXT NOT NULL,
    resolved_user TEXT,
    content_hash TEXT NOT NULL,
    author TEXT NOT NULL,
    message TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (prompt_id, version)
)";
const RAW_INSERT: &str = "INSERT INTO raw_versions (prompt_id, version, system_text, user_text, \
     front_matter, resolved_system, resolved_user, content_hash, author, message, created_at, \
     delimiter_open, delimiter_close, standalone_tags) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)";
const RAW_SELECT: &str = "SELECT system_text, user_text, front_matter, resolved_system, \
     resolved_user, content_hash, author, message, created_at, delimiter_open, \
     delimiter_close, standalone_tags FROM raw_versions WHERE prompt_id = $1 AND version = $2";

/// One of these lives for a whole section: the size of the PostgreSQL
/// variant costs nothing worth boxing it for.
#[allow(clippy::large_enum_variant)]
enum Raw {
    Sqlite(rusqlite::Connection),
    Postgres {
        client: postgres::Client,
        insert: postgres::Statement,
        select: postgres::Statement,
    },
}

impl Raw {
    /// Connects to `store` and creates the raw table.
    fn new(store: &Store) -> Result<Raw, String> {
        match store.kind {
            Kind::Sqlite => {
                let file = store.file.as_deref().ok_or("no SQLite file")?;
                let connection = rusqlite::Connection::open(file).map_err(err)?;
                connection
                    .busy_timeout(Duration::from_secs(60))
                    .map_err(err)?;
                connection.execute_batch(RAW_TABLE).map_err(err)?;
                Ok(Raw::Sqlite(connection))
            }
            Kind::Postgres => {
                let mut client =
                    postgres::Client::connect(&store.url, postgres::NoTls).map_err(err)?;
                client.batch_execute(RAW_TABLE).map_err(err)?;
                let insert = client.prepare(RAW_INSERT).map_err(err)?;
                let select = client.prepare(RAW_SELECT).map_err(err)?;
                Ok(Raw::Postgres {
                    client,
                    insert,
                    select,
                })
            }
        }
    }

    /// SQLite's `synchronous` and `journal_mode` on this connection, for the notes.
    fn sqlite_settings(&self) -> Option<String> {
        let Raw::Sqlite(connection) = self else {
            return None;
        };
        let pragma = |name: &str| -> String {
            connection
                .query_row(&format!("PRAGMA {name}"), [], |row| {
                    row.get::<_, rusqlite::types::Value>(0)
                })
                .map(|value| match value {
                    rusqlite::types::Value::Integer(n) => match n {
                        0 => "OFF".to_string(),
                        1 => "NORMAL".to_string(),
                        2 => "FULL".to_string(),
                        3 => "EXTRA".to_string(),
                        n => n.to_string(),
                    },
                    rusqlite::types::Value::Text(text) => text,
                    other => format!("{other:?}"),
                })
                .unwrap_or_else(|e| e.to_string())
        };
        Some(format!(
            "journal_mode {}, synchronous {}",
            pragma("journal_mode"),
            pragma("synchronous")
        ))
    }

    /// Inserts `row` as version `number` of `id`, in a transaction of its own.
    fn insert(&mut self, id: &str, number: i64, row: &Version) -> Result<(), String> {
        let front_matter = row.front_matter.to_string();
        let standalone_tags = i64::from(row.syntax.standalone_tags);
        match self {
            Raw::Sqlite(connection) => {
                let tx = connection
                    .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
                    .map_err(err)?;
                tx.prepare_cached(&RAW_INSERT.replace('$', "?"))
                    .map_err(err)?
                    .execute(rusqlite::params![
                        id,
                        number,
                        row.system,
                        row.user,
                        front_matter,
                        row.resolved_system,
                        row.resolved_user,
                        row.content_hash,
                        row.author,
                        row.message,
                        row.created_at.0,
                        row.syntax.open,
                        row.syntax.close,
                        standalone_tags,
                    ])
                    .map_err(err)?;
                tx.commit().map_err(err)
            }
            Raw::Postgres { client, insert, .. } => {
                let mut tx = client.transaction().map_err(err)?;
                tx.execute(
                    &*insert,
                    &[
                        &id,
                        &number,
                        &row.system,
                        &row.user,
                        &front_matter,
                        &row.resolved_system,
                        &row.resolved_user,
                        &row.content_hash,
                        &row.author,
                        &row.message,
                        &row.created_at.0,
                        &row.syntax.open,
                        &row.syntax.close,
                        &standalone_tags,
                    ],
                )
                .map_err(err)?;
                tx.commit().map_err(err)
            }
        }
    }

    /// Reads version `number` of `id`, every column into owned values; the bytes read.
    fn select(&mut self, id: &str, number: i64) -> Result<usize, String> {
        match self {
            Raw::Sqlite(connection) => connection
                .prepare_cached(&RAW_SELECT.replace('$', "?"))
                .map_err(err)?
                .query_row(rusqlite::params![id, number], |row| {
                    let mut bytes = 0;
                    for index in [0, 2, 3, 5, 6, 7, 9, 10] {
                        bytes += row.get::<_, String>(index)?.len();
                    }
                    for index in [1, 4] {
                        bytes += row.get::<_, Option<String>>(index)?.map_or(0, |s| s.len());
                    }
                    black_box((row.get::<_, i64>(8)?, row.get::<_, i64>(11)?));
                    Ok(bytes)
                })
                .map_err(err),
            Raw::Postgres { client, select, .. } => {
                let row = client.query_one(&*select, &[&id, &number]).map_err(err)?;
                let mut bytes = 0;
                for index in [0, 2, 3, 5, 6, 7, 9, 10] {
                    bytes += row.try_get::<_, String>(index).map_err(err)?.len();
                }
                for index in [1, 4] {
                    bytes += row
                        .try_get::<_, Option<String>>(index)
                        .map_err(err)?
                        .map_or(0, |s| s.len());
                }
                black_box(row.try_get::<_, i64>(8).map_err(err)?);
                black_box(row.try_get::<_, i64>(11).map_err(err)?);
                Ok(bytes)
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Texts.

/// The snippet every prompt includes.
fn snippet_text() -> String {
    "Be brief and precise. Say what you checked and what you did not; when you are unsure, \
     say so and name the test that would settle it. Never invent file names, commands or \
     results.\n"
        .to_string()
}

/// A prompt body of about 2 KB (with the snippet spliced in): variables, one snippet include.
fn prompt_body(rng: &mut Rng) -> String {
    let mut text =
        String::from("You are {{agentName}}, working with {{userName}}.\n\n{{snippet:tone}}\n\n");
    while text.len() < 1_780 {
        text.push_str(&sentence(rng, 14));
        text.push_str(if rng.below(4) == 0 { "\n\n" } else { " " });
    }
    text.push_str("\n\nAnswer in {{responseLanguage}}.\n");
    text
}

/// `body` as revision `revision` of prompt `id`: a first line that differs per revision.
fn revision_text(id: &str, revision: usize, body: &str) -> String {
    format!("# {id}, revision {revision}\n\n{body}")
}

fn prompt_id(index: usize) -> String {
    format!("p-{index:05}")
}

// ---------------------------------------------------------------------------
// Statistics.

/// Microseconds `f` took, and what it returned.
fn timed<T>(f: impl FnOnce() -> Result<T, String>) -> Result<(T, f64), String> {
    let start = Instant::now();
    let value = f()?;
    Ok((value, start.elapsed().as_secs_f64() * 1e6))
}

fn us(value: f64) -> String {
    if value >= 100.0 {
        format!("{value:.0}")
    } else {
        format!("{value:.1}")
    }
}

// ---------------------------------------------------------------------------
// 1. Latency.

struct Latency {
    publish: (f64, f64),
    insert: (f64, f64),
    get: (f64, f64),
    select: (f64, f64),
    settings: Option<String>,
}

fn latency(stores: &Stores, kind: Kind, ops: usize) -> Result<Latency, String> {
    let store = stores.store(kind, "bench_latency")?;
    let result = (|| {
        let mut catalog = Catalog::open(&store.url).map_err(err)?.with_author("bench");
        let mut raw = Raw::new(&store)?;
        catalog
            .publish_snippet(SNIPPET, &snippet_text(), "bench")
            .map_err(err)?;
        catalog.create(LATENCY_ID, None, None).map_err(err)?;
        let body = prompt_body(&mut Rng(0x2545_f491_4f6c_dd1d));
        let draft = |revision: usize| Draft {
            system: revision_text(LATENCY_ID, revision, &body),
            user: None,
            message: format!("revision {revision}"),
            ..Draft::default()
        };
        let mut last = catalog.publish(LATENCY_ID, &draft(1), None).map_err(err)?;
        let mut raw_rows = 0i64;
        for revision in 2..2 + WARMUP {
            last = catalog
                .publish(LATENCY_ID, &draft(revision), None)
                .map_err(err)?;
            raw_rows += 1;
            raw.insert(LATENCY_ID, raw_rows, &last)?;
        }
        let (mut publish, mut insert) = (Vec::with_capacity(ops), Vec::with_capacity(ops));
        for i in 0..ops {
            let next = draft(2 + WARMUP + i);
            // The raw row is the catalog's previous version, so that both write the same bytes.
            let row = last.clone();
            let mut catalog_turn = |publish: &mut Vec<f64>| -> Result<(), String> {
                let (version, took) =
                    timed(|| catalog.publish(LATENCY_ID, &next, None).map_err(err))?;
                publish.push(took);
                last = version;
                Ok(())
            };
            if i % 2 == 0 {
                catalog_turn(&mut publish)?;
            }
            raw_rows += 1;
            insert.push(timed(|| raw.insert(LATENCY_ID, raw_rows, &row))?.1);
            if i % 2 == 1 {
                catalog_turn(&mut publish)?;
            }
        }

        // Reads: the label on a version in the middle; the raw row of the same number.
        let target = u32::try_from(raw_rows / 2).unwrap_or(1).max(1);
        catalog.set_label(LATENCY_ID, LABEL, target).map_err(err)?;
        let selector = Selector::Label(LABEL.to_string());
        let expected = catalog.get(LATENCY_ID, &selector).map_err(err)?;
        if expected.version != target {
            return Err(format!(
                "get by label gave version {}, not {target}",
                expected.version
            ));
        }
        let (mut get, mut select) = (Vec::with_capacity(ops), Vec::with_capacity(ops));
        for i in 0..WARMUP + ops {
            let mut catalog_turn = |get: &mut Vec<f64>| -> Result<(), String> {
                let (version, took) = timed(|| catalog.get(LATENCY_ID, &selector).map_err(err))?;
                black_box(&version);
                if i >= WARMUP {
                    get.push(took);
                }
                Ok(())
            };
            if i % 2 == 0 {
                catalog_turn(&mut get)?;
            }
            let (bytes, took) = timed(|| raw.select(LATENCY_ID, i64::from(target)))?;
            black_box(bytes);
            if i >= WARMUP {
                select.push(took);
            }
            if i % 2 == 1 {
                catalog_turn(&mut get)?;
            }
        }
        Ok(Latency {
            publish: summary(&mut publish),
            insert: summary(&mut insert),
            get: summary(&mut get),
            select: summary(&mut select),
            settings: raw.sqlite_settings(),
        })
    })();
    let removed = stores.remove(&store);
    let latency = result?;
    removed?;
    Ok(latency)
}

fn latency_rows(kind: Kind, ops: usize, result: &Result<Latency, String>) -> String {
    let store = kind.name();
    let l = match result {
        Ok(l) => l,
        Err(e) => {
            return format!(
                "| {store} | – | FAILED | – | – | – | {} |\n",
                escape_cell(e)
            );
        }
    };
    let ratio = |a: f64, b: f64| format!("{:.2}", a / b);
    let row = |op: &str, (mid, p95): (f64, f64), base: (f64, f64), note: &str| {
        format!(
            "| {store} | {op} | {} | {} | {} | {} | {note} |\n",
            us(mid),
            us(p95),
            ratio(mid, base.0),
            ratio(p95, base.1)
        )
    };
    let mut out = String::new();
    out.push_str(&row(
        "`publish` (one ~2 KB version)",
        l.publish,
        l.insert,
        &format!(
            "{ops} publishes: lock the prompt, read the snippets, compile, version row + pin row, commit"
        ),
    ));
    out.push_str(&row(
        "raw INSERT of one row",
        l.insert,
        l.insert,
        "prepared, same columns and bytes as the catalog's version row, own transaction",
    ));
    out.push_str(&row(
        "`get(id, Label(\"production\"))`",
        l.get,
        l.select,
        &format!("{ops} reads: one read transaction, prompt + label + version + pins"),
    ));
    out.push_str(&row(
        "raw SELECT by primary key",
        l.select,
        l.select,
        "prepared, one row, every column read into owned values, no explicit transaction",
    ));
    out
}

// ---------------------------------------------------------------------------
// 2. Flatness.

const SCALE_OPS: [&str; 4] = [
    "`list(100)` first page",
    "`list(100)` middle page",
    "`get` by label",
    "`history` (10 versions)",
];

/// Samples of the first page before the bench's `ANALYZE` on PostgreSQL.
const BEFORE_ANALYZE_SAMPLES: usize = 20;

/// A catalog of the growth table, built and open.
struct Built {
    prompts: usize,
    store: Store,
    catalog: Catalog,
    /// The prompts labeled `production`.
    labeled: Vec<String>,
    /// The cursor of the middle page.
    cursor: String,
    /// The imports' time.
    build: Duration,
    /// PostgreSQL: the first page's median µs before the bench's `ANALYZE`, and whether
    /// autovacuum had analyzed `prompts` by then.
    before_analyze: Option<(f64, bool)>,
    /// Writing the tree and importing it, wall clock.
    wall: Duration,
}

/// A row of the growth table.
struct Scale {
    prompts: usize,
    build: Duration,
    bytes: Option<u64>,
    /// Median µs of [`SCALE_OPS`].
    medians: [f64; 4],
    before_analyze: Option<(f64, bool)>,
    wall: Duration,
}

/// Writes the tree of round `round` into `root`, a new folder: the snippet and every prompt's
/// `system.md`.
fn write_tree(root: &Path, bodies: &[String], round: usize) -> Result<(), String> {
    let fail = |path: &Path, e: std::io::Error| format!("{}: {e}", path.display());
    let snippets = root.join("snippets");
    std::fs::create_dir_all(&snippets).map_err(|e| fail(&snippets, e))?;
    let file = snippets.join(format!("{SNIPPET}.md"));
    std::fs::write(&file, snippet_text()).map_err(|e| fail(&file, e))?;
    for (index, body) in bodies.iter().enumerate() {
        let id = prompt_id(index);
        let dir = root.join("templates").join(&id);
        std::fs::create_dir_all(&dir).map_err(|e| fail(&dir, e))?;
        let file = dir.join("system.md");
        std::fs::write(&file, revision_text(&id, round, body)).map_err(|e| fail(&file, e))?;
    }
    Ok(())
}

/// Builds the catalog of `prompts` prompts × [`VERSIONS`] on a new store of `kind`.
fn build(stores: &Stores, kind: Kind, prompts: usize) -> Result<Built, String> {
    let started = Instant::now();
    let store = stores.store(kind, &format!("bench_scale_{prompts}"))?;
    let result = build_in(&store, stores.trees.path(), prompts);
    match result {
        Ok((catalog, labeled, cursor, build, before_analyze)) => Ok(Built {
            prompts,
            store,
            catalog,
            labeled,
            cursor,
            build,
            before_analyze,
            wall: started.elapsed(),
        }),
        Err(e) => {
            let _ = stores.remove(&store);
            Err(e)
        }
    }
}

type BuildResult = (Catalog, Vec<String>, String, Duration, Option<(f64, bool)>);

/// [`build`] with the trees in `dir`: the catalog, the labeled prompts, the middle page's
/// cursor, the imports' time and what [`Built::before_analyze`] holds.
fn build_in(store: &Store, dir: &Path, prompts: usize) -> Result<BuildResult, String> {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ prompts as u64);
    let bodies: Vec<String> = (0..prompts).map(|_| prompt_body(&mut rng)).collect();
    let mut catalog = Catalog::open(&store.url).map_err(err)?.with_author("bench");
    let mut build = Duration::ZERO;
    for round in 1..=VERSIONS {
        let root = dir.join(format!("tree-{prompts}-{round}"));
        let written = write_tree(&root, &bodies, round);
        let start = Instant::now();
        let imported = written.and_then(|()| {
            catalog
                .import(&root, &format!("round {round}"), None)
                .map_err(err)
        });
        build += start.elapsed();
        let _ = std::fs::remove_dir_all(&root);
        let report = imported?;
        let written = report.prompts.iter().filter(|p| p.written).count();
        if written != prompts || report.prompts.iter().any(|p| p.version as usize != round) {
            return Err(format!(
                "import {round} wrote {written} of {prompts} prompts"
            ));
        }
    }
    let mut labeled: Vec<String> = Vec::new();
    while labeled.len() < LABELED.min(prompts) {
        let id = prompt_id(rng.below(prompts));
        if !labeled.contains(&id) {
            let version = 1 + rng.below(VERSIONS) as u32;
            catalog.set_label(&id, LABEL, version).map_err(err)?;
            labeled.push(id);
        }
    }

    // The middle page: the 100 prompts from the middle of the catalog, after the id before
    // them (at 100 prompts, after `p-`: the whole catalog).
    let start = (prompts - PAGE as usize) / 2;
    let cursor = match start {
        0 => "p-".to_string(),
        n => prompt_id(n - 1),
    };
    let first = catalog.list(PAGE, None).map_err(err)?;
    let middle = catalog.list(PAGE, Some(&cursor)).map_err(err)?;
    let middle_first = middle.prompts.first().map(|l| l.prompt.id.clone());
    let current = |l: &promptpack_catalog::Listed| l.current.as_ref().map(|c| c.version);
    if first.prompts.len() != PAGE as usize
        || middle.prompts.len() != PAGE as usize
        || middle_first != Some(prompt_id(start))
        || first
            .prompts
            .iter()
            .any(|l| current(l) != Some(VERSIONS as u32))
    {
        return Err("list gave other pages than expected".to_string());
    }

    // PostgreSQL plans from statistics, which a new catalog has none of until autovacuum
    // analyzes its tables: the first page before and after an ANALYZE.
    let before_analyze = match store.kind {
        Kind::Sqlite => None,
        Kind::Postgres => {
            let mut client = postgres::Client::connect(&store.url, postgres::NoTls).map_err(err)?;
            let analyzed = client
                .query_one(
                    "SELECT last_autoanalyze IS NOT NULL FROM pg_stat_user_tables \
                     WHERE relname = 'prompts'",
                    &[],
                )
                .map_err(err)?
                .get::<_, bool>(0);
            let mut first_page = Vec::with_capacity(BEFORE_ANALYZE_SAMPLES);
            for _ in 0..BEFORE_ANALYZE_SAMPLES {
                first_page.push(timed(|| catalog.list(PAGE, None).map_err(err))?.1);
            }
            client.batch_execute("ANALYZE").map_err(err)?;
            Some((median(&mut first_page), analyzed))
        }
    };
    Ok((catalog, labeled, cursor, build, before_analyze))
}

/// Times the four operations on every catalog, interleaved: each sample runs each operation
/// once on each catalog, the order of sizes and operations rotating. Median µs per catalog.
fn measure(built: &mut [Built], samples: usize) -> Result<Vec<[f64; 4]>, String> {
    let mut rng = Rng(0x0123_4567_89ab_cdef);
    let selector = Selector::Label(LABEL.to_string());
    let mut times: Vec<[Vec<f64>; 4]> = built.iter().map(|_| Default::default()).collect();
    let count = built.len();
    for sample in 0..WARMUP + samples {
        for n in 0..count {
            let which = (sample + n) % count;
            let b = &mut built[which];
            let get_id = b.labeled[rng.below(b.labeled.len())].clone();
            let history_id = prompt_id(rng.below(b.prompts));
            for k in 0..4 {
                let op = (sample + k) % 4;
                let catalog = &mut b.catalog;
                let took = match op {
                    0 => timed(|| catalog.list(PAGE, None).map_err(err))?.1,
                    1 => timed(|| catalog.list(PAGE, Some(&b.cursor)).map_err(err))?.1,
                    2 => timed(|| catalog.get(&get_id, &selector).map_err(err))?.1,
                    _ => {
                        let (history, took) = timed(|| catalog.history(&history_id).map_err(err))?;
                        if history.versions.len() != VERSIONS {
                            return Err(format!(
                                "history of {history_id} has {} versions",
                                history.versions.len()
                            ));
                        }
                        took
                    }
                };
                if sample >= WARMUP {
                    times[which][op].push(took);
                }
            }
        }
    }
    Ok(times
        .into_iter()
        .map(|t| t.map(|mut t| median(&mut t)))
        .collect())
}

/// Builds every size on a store of `kind`, measures them together, and removes them.
fn growth(
    stores: &Stores,
    kind: Kind,
    sizes: &[usize],
    samples: usize,
) -> (Vec<Result<Scale, String>>, Duration) {
    let mut built: Vec<Built> = Vec::new();
    let mut failed: Vec<(usize, String)> = Vec::new();
    for &prompts in sizes {
        match build(stores, kind, prompts) {
            Ok(b) => built.push(b),
            Err(e) => failed.push((prompts, e)),
        }
    }
    let start = Instant::now();
    let measured = measure(&mut built, samples);
    let measuring = start.elapsed();
    let mut rows: Vec<Result<Scale, String>> = Vec::new();
    for (index, b) in built.into_iter().enumerate() {
        let Built {
            prompts,
            store,
            catalog,
            build,
            before_analyze,
            wall,
            ..
        } = b;
        drop(catalog);
        let bytes = size_on_disk(&store).ok();
        let removed = stores.remove(&store);
        rows.push(match (&measured, removed) {
            (Err(e), _) => Err(format!("{prompts} prompts: {e}")),
            (Ok(_), Err(e)) => Err(format!("{prompts} prompts: {e}")),
            (Ok(medians), Ok(())) => Ok(Scale {
                prompts,
                build,
                bytes,
                medians: medians[index],
                before_analyze,
                wall,
            }),
        });
    }
    rows.extend(
        failed
            .into_iter()
            .map(|(prompts, e)| Err(format!("{prompts} prompts: {e}"))),
    );
    (rows, measuring)
}

fn scale_rows(kind: Kind, rows: &[Result<Scale, String>]) -> String {
    let base = rows
        .iter()
        .find_map(|r| r.as_ref().ok().filter(|s| s.prompts == 100))
        .map(|s| s.medians);
    let mut out = String::new();
    for row in rows {
        let s = match row {
            Ok(s) => s,
            Err(e) => {
                out.push_str(&format!(
                    "| {} | – | FAILED | – | – | – | – | {} |\n",
                    kind.name(),
                    escape_cell(e)
                ));
                continue;
            }
        };
        let cells: Vec<String> = (0..4)
            .map(|i| {
                let ratio =
                    base.map_or("–".to_string(), |b| format!("{:.2}", s.medians[i] / b[i]));
                format!("{} ({ratio})", us(s.medians[i]))
            })
            .collect();
        let versions = s.prompts * VERSIONS;
        let bytes = s
            .bytes
            .map_or("–".to_string(), |b| format!("{:.1}", b as f64 / 1e6));
        out.push_str(&format!(
            "| {} | {} × {VERSIONS} | {:.1} s ({:.0} µs/version) | {bytes} | {} |\n",
            kind.name(),
            s.prompts,
            s.build.as_secs_f64(),
            s.build.as_secs_f64() * 1e6 / versions as f64,
            cells.join(" | ")
        ));
    }
    out
}

// ---------------------------------------------------------------------------

/// The section: both tables and the time it took.
pub fn section(quick: bool) -> String {
    let started = Instant::now();
    let ops = if quick { 100 } else { 300 };
    let sizes: &[usize] = if quick {
        &[100, 1_000]
    } else {
        &[100, 1_000, 10_000]
    };
    let samples = 200;
    let folder = |within: Option<&Path>| {
        let mut builder = tempfile::Builder::new();
        builder.prefix("promptpack-bench-catalog-");
        match within {
            Some(within) => builder.tempdir_in(within),
            None => builder.tempdir(),
        }
    };
    // The generated trees go to a tmpfs when there is one: writing them is setup, and on this
    // machine's disk 10,000 new files took a second or more per round.
    let shm = Path::new("/dev/shm");
    let trees = match shm.is_dir() {
        true => folder(Some(shm)).or_else(|_| folder(None)),
        false => folder(None),
    };
    let (dir, trees) = match (folder(None), trees) {
        (Ok(dir), Ok(trees)) => (dir, trees),
        (Err(e), _) | (_, Err(e)) => {
            return format!("## Catalog\n\nFAILED: a temporary folder: {e}\n");
        }
    };
    let cluster_start = Instant::now();
    let stores = Stores {
        dir,
        trees,
        cluster: Cluster::start(),
    };
    let cluster_took = cluster_start.elapsed();
    let kinds = [Kind::Sqlite, Kind::Postgres];

    let mut out = format!(
        "## Catalog: `promptpack-catalog` on SQLite and PostgreSQL\n\n\
         µs per operation, one client, the store on this machine. SQLite: a file in a temporary \
         folder; PostgreSQL: a throwaway promptpack-pgtest cluster (fsync = off, TCP on \
         127.0.0.1), started in {:.1} s. Each raw baseline runs on the same store, interleaved \
         with the catalog operation (the first of each pair alternates); × raw is the catalog's \
         median (p95) over the raw one's. {WARMUP} untimed operations of each kind first.\n\n\
         | store | operation | median µs | p95 µs | median × raw | p95 × raw | notes |\n\
         |---|---|---:|---:|---:|---:|---|\n",
        cluster_took.as_secs_f64()
    );
    let mut settings = None;
    let mut phase_times = Vec::new();
    for kind in kinds {
        let start = Instant::now();
        let result = latency(&stores, kind, ops);
        if let Ok(l) = &result {
            settings = settings.or(l.settings.clone());
        }
        out.push_str(&latency_rows(kind, ops, &result));
        phase_times.push(format!(
            "{} latency {:.1} s",
            kind.name(),
            start.elapsed().as_secs_f64()
        ));
    }
    if let Some(settings) = settings {
        out.push_str(&format!(
            "\nSQLite as the catalog opens it: {settings} (a commit waits for the disk); \
             PostgreSQL's commits do not (fsync = off).\n"
        ));
    }
    out.push_str(
        "\nPostgreSQL round trips: the catalog prepares each statement once per connection; \
         `get` is BEGIN, 4 statements and COMMIT (6 round trips), `publish` BEGIN, 5 statements \
         and COMMIT (7). The raw baselines are prepared once too: the SELECT is 1 round trip, the \
         INSERT 3 (BEGIN, INSERT, COMMIT).\n",
    );

    out.push_str(&format!(
        "\n### Catalog: growth, {} prompts × {VERSIONS} versions\n\n\
         Each catalog is built by {VERSIONS} `import`s of a generated tree (every ~2 KB \
         `system.md` rewritten before each, so each import writes a version of every prompt; \
         one snippet), then `production` is set on {LABELED} sampled prompts. All sizes of a \
         store are then measured together, interleaved: median µs over {samples} samples of each \
         operation on each size (random prompts; `get` among the labeled ones), and in \
         parentheses the ratio to the same operation on the same store at 100 prompts (flat = \
         1.00). The middle page is the 100 prompts from the middle of the catalog, through the \
         cursor before them (at 100 prompts: all of them, cursor `p-`). PostgreSQL's tables are \
         analyzed (`ANALYZE`) after the build, as autovacuum would do. Build: the {VERSIONS} \
         imports' time (the trees are written to `{}` beforehand, not counted). Size: the SQLite file after a WAL \
         checkpoint; `pg_database_size`.\n\n\
         | store | prompts × versions | build | size MB | {} |\n\
         |---|---|---:|---:|---:|---:|---:|---:|\n",
        sizes
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
            .join(" / "),
        stores.trees.path().parent().unwrap_or(Path::new("?")).display(),
        SCALE_OPS.join(" | ")
    ));
    let mut before_analyze = Vec::new();
    for kind in kinds {
        let (rows, measuring) = growth(&stores, kind, sizes, samples);
        out.push_str(&scale_rows(kind, &rows));
        for row in rows.iter().flatten() {
            phase_times.push(format!(
                "{} {} prompts built in {:.1} s",
                kind.name(),
                row.prompts,
                row.wall.as_secs_f64()
            ));
            if let Some((us_before, analyzed)) = row.before_analyze {
                let by = if analyzed {
                    "autovacuum had analyzed it"
                } else {
                    "never analyzed"
                };
                before_analyze.push(format!(
                    "{} prompts {} µs ({by})",
                    row.prompts,
                    us(us_before)
                ));
            }
        }
        phase_times.push(format!(
            "{} measured in {:.1} s",
            kind.name(),
            measuring.as_secs_f64()
        ));
    }
    if !before_analyze.is_empty() {
        out.push_str(&format!(
            "\nPostgreSQL `list(100)` first page right after the build, before the bench's \
             `ANALYZE` (median of {BEFORE_ANALYZE_SAMPLES}): {}.\n",
            before_analyze.join(", ")
        ));
    }
    drop(stores);
    out.push_str(&format!(
        "\nSection time {:.1} s: PostgreSQL start {:.1} s, {}.\n",
        started.elapsed().as_secs_f64(),
        cluster_took.as_secs_f64(),
        phase_times.join(", ")
    ));
    out
}
