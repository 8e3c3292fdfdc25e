//! The `fleet` section: what a relay (`promptpack relay`, docs/relay.md) costs and how fast
//! it carries a change to a fleet, against the direct PostgreSQL live handles of today, in
//! one run on one throwaway PostgreSQL cluster (and a pgbouncer in front of it).
//!
//! - **(a) 10,000 followers of one relay**, held by the load generator in this process
//!   (`generator.rs`: raw HTTP/1.1 event streams on tokio), the relay a child process on the
//!   catalog: publish → visible at every follower, the relay's RSS per follower (VmRSS before
//!   and after the followers connect) and its CPU at rest (utime + stime over 10 s with every
//!   follower connected: the pings).
//! - **(b) The relay restarted** (SIGKILL, then started again on the same address) with the
//!   10,000 followers: the time until every follower has the new epoch's snapshot, each
//!   reconnecting with the protocol's jittered backoff and its last event id.
//! - **(c) 100 live-handle processes** (this binary, `--fleet-follower URL`:
//!   `promptpack::live::Prompts` on the relay's URL) → visible at all of them.
//! - **(d) Through a chain of two relays**, and **through pgbouncer** (transaction mode, a
//!   `--poll-only` relay): publish → visible at 100 generator followers.
//! - **(e) The direct PostgreSQL live handles of today** in 8 and 50 processes.
//!
//! And the database connections each setup holds (`pg_stat_activity` of the catalog's
//! database, the bench's own writer left out).
//!
//! A round publishes a new version of `bench-system` (the workload's prompt, ~6 KB) and moves
//! `production` to it from the bench's own catalog connection; every follower stamps the event
//! naming the version when it arrives. ms from the start of the publish.

mod generator;
mod procs;

use crate::harness::{err, escape_cell, median};
use crate::translate::{PROMPT_ID, Workload};
use generator::{Generator, Seen};
use procs::{Followers, PgBouncer, Relay};
use promptpack_catalog::{Catalog, Draft, Role, Selector, Version};
use promptpack_pgtest::Cluster;
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

const LABEL: &str = "production";
const DATABASE: &str = "fleet";
/// How long a round may take before it fails: a hang guard, not a measure.
const GIVE_UP: Duration = Duration::from_secs(120);

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// p50, p99 and max of `samples` (sorted in place).
fn spread(samples: &mut [f64]) -> (f64, f64, f64) {
    let p50 = median(samples);
    let rank = ((samples.len() as f64 * 0.99).ceil() as usize).clamp(1, samples.len().max(1));
    let p99 = samples.get(rank - 1).copied().unwrap_or(f64::NAN);
    let max = samples.last().copied().unwrap_or(f64::NAN);
    (p50, p99, max)
}

/// The bench's side of the catalog: the writer, the version rounds start from, the token.
struct Writer {
    catalog: Catalog,
    base: Version,
    round: usize,
}

impl Writer {
    fn open(url: &str, workload: &Workload) -> Result<(Writer, String), String> {
        let mut catalog = Catalog::open(url).map_err(err)?.with_author("bench");
        let report = catalog.import(&workload.dir, "bench", None).map_err(err)?;
        let version = report
            .prompts
            .iter()
            .find(|p| p.name == PROMPT_ID)
            .map(|p| p.version)
            .ok_or("the import has no `bench-system`")?;
        catalog.set_label(PROMPT_ID, LABEL, version).map_err(err)?;
        let base = catalog
            .get(PROMPT_ID, &Selector::Version(version))
            .map_err(err)?;
        let token = promptpack_console::new_token();
        catalog
            .add_user(
                "fleet-bench",
                Role::Viewer,
                &promptpack_catalog::token_hash(&token),
            )
            .map_err(err)?;
        Ok((
            Writer {
                catalog,
                base,
                round: 0,
            },
            token,
        ))
    }

    /// Publishes a new version and moves the label to it: the version and when the publish
    /// started.
    fn publish(&mut self) -> Result<(u32, Instant), String> {
        self.round += 1;
        let draft = Draft {
            system: format!(
                "{}\nFleet revision {}.\n",
                self.base.system.trim_end(),
                self.round
            ),
            user: self.base.user.clone(),
            message: format!("fleet round {}", self.round),
            ..Draft::default()
        };
        let start = Instant::now();
        let version = self
            .catalog
            .publish(PROMPT_ID, &draft, None)
            .map_err(err)?
            .version;
        self.catalog
            .set_label(PROMPT_ID, LABEL, version)
            .map_err(err)?;
        Ok((version, start))
    }

    fn current(&self) -> u32 {
        // The label's version: the base until the first round.
        self.base.version + self.round as u32
    }
}

/// Waits until each of `followers` generator followers reported a [`Seen`] that `wanted`
/// accepts; when each did.
fn wait_all(
    seen: &Receiver<Seen>,
    followers: usize,
    generator: &Generator,
    what: &str,
    wanted: impl Fn(&Seen) -> bool,
) -> Result<Vec<Instant>, String> {
    let deadline = Instant::now() + GIVE_UP;
    let mut at: Vec<Option<Instant>> = vec![None; followers];
    let mut missing = followers;
    while missing > 0 {
        let left = deadline.saturating_duration_since(Instant::now());
        match seen.recv_timeout(left) {
            Ok(s) if wanted(&s) => {
                if at[s.follower].is_none() {
                    at[s.follower] = Some(s.at);
                    missing -= 1;
                }
            }
            Ok(_) => {}
            Err(_) => {
                return Err(format!(
                    "{what}: {missing} of {followers} followers still waiting after {} s \
                     ({} reconnects; last: {})",
                    GIVE_UP.as_secs(),
                    generator.reconnects(),
                    generator.last_error().unwrap_or_else(|| "none".into())
                ));
            }
        }
    }
    Ok(at.into_iter().flatten().collect())
}

/// `rounds` rounds of publish → visible at every generator follower: every sample (ms from
/// the publish's start) and each round's last.
fn generator_rounds(
    writer: &mut Writer,
    seen: &Receiver<Seen>,
    followers: usize,
    generator: &Generator,
    rounds: usize,
) -> Result<(Vec<f64>, Vec<f64>), String> {
    let mut all = Vec::with_capacity(rounds * followers);
    let mut last = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let (version, start) = writer.publish()?;
        let at = wait_all(seen, followers, generator, &format!("v{version}"), |s| {
            s.versions.contains(&version)
        })?;
        all.extend(at.iter().map(|t| ms(t.saturating_duration_since(start))));
        last.push(ms(at
            .iter()
            .max()
            .map_or(Duration::ZERO, |t| t.saturating_duration_since(start))));
        // Apart, so that rounds do not overlap in the relay's queues.
        std::thread::sleep(Duration::from_millis(200));
    }
    Ok((all, last))
}

/// The same with follower processes.
fn process_rounds(
    writer: &mut Writer,
    followers: &Followers,
    rounds: usize,
) -> Result<(Vec<f64>, Vec<f64>), String> {
    let mut all = Vec::new();
    let mut last = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let (version, start) = writer.publish()?;
        let at = followers.visible(version)?;
        all.extend(at.iter().map(|t| ms(t.saturating_duration_since(start))));
        last.push(ms(at
            .iter()
            .max()
            .map_or(Duration::ZERO, |t| t.saturating_duration_since(start))));
        std::thread::sleep(Duration::from_millis(200));
    }
    Ok((all, last))
}

/// Connections to the catalog's database other than the bench's own.
struct Connections {
    admin: String,
    own: i64,
}

impl Connections {
    fn count_all(&self) -> Result<i64, String> {
        let mut client = postgres::Client::connect(&self.admin, postgres::NoTls).map_err(err)?;
        client
            .query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
                &[&DATABASE],
            )
            .map(|row| row.get::<_, i64>(0))
            .map_err(err)
    }

    /// Held now by the setup under test.
    fn held(&self) -> String {
        match self.count_all() {
            Ok(n) => (n - self.own).to_string(),
            Err(e) => format!("? ({})", escape_cell(&e)),
        }
    }
}

/// The rows of the publish → visible table.
struct Table {
    rows: String,
}

impl Table {
    fn row(&mut self, setup: &str, followers: &str, result: Result<(Vec<f64>, Vec<f64>), String>) {
        match result {
            Ok((mut all, mut last)) => {
                let rounds = last.len();
                let (p50, p99, max) = spread(&mut all);
                let last_p50 = median(&mut last);
                self.rows.push_str(&format!(
                    "| {setup} | {followers} | {rounds} | {p50:.0} | {p99:.0} | {max:.0} | {last_p50:.0} | |\n"
                ));
            }
            Err(e) => self.rows.push_str(&format!(
                "| {setup} | {followers} | – | – | – | – | – | FAILED: {} |\n",
                escape_cell(&e)
            )),
        }
    }

    fn skipped(&mut self, setup: &str, followers: &str, why: &str) {
        self.rows.push_str(&format!(
            "| {setup} | {followers} | – | – | – | – | – | skipped: {} |\n",
            escape_cell(why)
        ));
    }
}

/// Everything the setups share.
struct Run {
    cluster: Cluster,
    url: String,
    writer: Writer,
    token: String,
    bin: std::path::PathBuf,
    connections: Connections,
    rounds: usize,
    many: usize,
}

pub fn section(quick: bool, workload: &Workload) -> String {
    let started = Instant::now();
    let mut out = String::from("## Fleet: a relay in front of the catalog\n\n");
    let run = (|| -> Result<Run, String> {
        let bin = procs::promptpack_bin()?;
        let cluster = Cluster::start()?;
        let url = cluster.create_database(DATABASE)?;
        let (writer, token) = Writer::open(&url, workload)?;
        let mut connections = Connections {
            admin: cluster.url(),
            own: 0,
        };
        connections.own = connections.count_all()?;
        Ok(Run {
            cluster,
            url,
            writer,
            token,
            bin,
            connections,
            rounds: if quick { 3 } else { 10 },
            many: if quick { 1_000 } else { 10_000 },
        })
    })();
    let mut run = match run {
        Ok(run) => run,
        Err(e) => {
            out.push_str(&format!("FAILED before any row: {e}\n"));
            return out;
        }
    };
    out.push_str(&format!(
        "`{}`; PostgreSQL {} (throwaway); {} rounds per row; a round publishes a new \
         version of `bench-system` (~6 KB) and moves `{LABEL}` to it; ms from the publish's \
         start until the follower has the event naming it (generator followers: stamped as \
         the event is parsed; processes: as their `visible N` line arrives).\n\n",
        run.bin.display(),
        run.cluster.port(),
        run.rounds
    ));
    if run.bin.components().any(|c| c.as_os_str() == "debug") {
        out.push_str(
            "The relay is a debug build: its RSS and CPU are not what a release build's              are (cargo build --release -p promptpack-cli --features full).\n\n",
        );
    }

    let mut table = Table {
        rows: String::from(
            "| setup | followers | rounds | p50 ms | p99 ms | max ms | last follower p50 ms | note |\n\
             |---|---:|---:|---:|---:|---:|---:|---|\n",
        ),
    };
    let mut costs = String::from(
        "| setup | followers | relay RSS before | after | per follower | relay CPU at rest | \
         database connections held |\n|---|---:|---:|---:|---:|---:|---:|\n",
    );
    let mut restart = String::new();
    let mut times = Vec::new();

    // (a) and (b): many followers of one relay, then the relay restarted under them.
    let phase = Instant::now();
    many_followers(&mut run, &mut table, &mut costs, &mut restart);
    times.push(format!(
        "{} followers {:.0} s",
        run.many,
        phase.elapsed().as_secs_f64()
    ));

    // (c) and (d): live-handle processes on a relay, a chain of two relays, pgbouncer.
    let phase = Instant::now();
    relay_processes(&mut run, &mut table, &mut costs);
    times.push(format!(
        "relay processes {:.0} s",
        phase.elapsed().as_secs_f64()
    ));
    let phase = Instant::now();
    chain(&mut run, &mut table, &mut costs);
    times.push(format!("chain {:.0} s", phase.elapsed().as_secs_f64()));
    let phase = Instant::now();
    through_pgbouncer(&mut run, &mut table, &mut costs);
    times.push(format!("pgbouncer {:.0} s", phase.elapsed().as_secs_f64()));

    // (e) the direct PostgreSQL handles of today.
    for processes in [8, 50] {
        let phase = Instant::now();
        direct(&mut run, &mut table, &mut costs, processes);
        times.push(format!(
            "{processes} direct processes {:.0} s",
            phase.elapsed().as_secs_f64()
        ));
    }

    out.push_str("### Publish → visible\n\n");
    out.push_str(&table.rows);
    out.push_str("\n### What each setup holds\n\n");
    out.push_str(&costs);
    out.push_str(&restart);
    out.push_str(&format!(
        "\nSection time {:.0} s: {}.\n",
        started.elapsed().as_secs_f64(),
        times.join(", ")
    ));
    out
}

/// (a) and (b).
fn many_followers(run: &mut Run, table: &mut Table, costs: &mut String, restart: &mut String) {
    let n = run.many;
    let setup = "relay on PostgreSQL, generator followers";
    let relay = match Relay::start(&run.bin, &run.url, "127.0.0.1:0", &[], &[]) {
        Ok(relay) => relay,
        Err(e) => {
            table.row(setup, &n.to_string(), Err(e));
            return;
        }
    };
    let result = (|| -> Result<(), String> {
        let addr = relay.addr;
        let before = procs::rss(relay.pid())?;
        let (sender, seen) = channel();
        let generator = Generator::start(addr, LABEL, PROMPT_ID, &run.token, n, &sender)?;
        let connecting = Instant::now();
        let base = run.writer.current();
        // The relay's epoch, from the snapshots: the restart below waits for another one.
        let epoch = std::cell::RefCell::new(String::new());
        let at = wait_all(&seen, n, &generator, "the first snapshot", |s| {
            let wanted = s.snapshot && s.versions.contains(&base);
            if wanted {
                epoch.replace(s.epoch.clone());
            }
            wanted
        })?;
        let connected = at
            .iter()
            .max()
            .map_or(Duration::ZERO, |t| t.saturating_duration_since(connecting));
        let epoch = epoch.into_inner();
        let after = procs::rss(relay.pid())?;
        // At rest: every follower connected, nothing published, only the pings.
        let cpu_start = procs::cpu_time(relay.pid())?;
        let rest = Duration::from_secs(10);
        std::thread::sleep(rest);
        let cpu = procs::cpu_time(relay.pid())?.saturating_sub(cpu_start);
        let held = run.connections.held();
        costs.push_str(&format!(
            "| {setup} (all connected and snapshotted {:.1} s after the start) | {n} | {:.1} MB | {:.1} MB | {:.1} KB | {:.2} % of a core ({:.0} ms in {} s) | {held} |\n",
            connected.as_secs_f64(),
            before as f64 / 1e6,
            after as f64 / 1e6,
            after.saturating_sub(before) as f64 / n as f64 / 1e3,
            cpu.as_secs_f64() / rest.as_secs_f64() * 100.0,
            ms(cpu),
            rest.as_secs()
        ));
        drain(&seen);
        table.row(
            setup,
            &n.to_string(),
            generator_rounds(&mut run.writer, &seen, n, &generator, run.rounds),
        );

        // (b) The relay killed and started again on the same address.
        let reconnects = generator.reconnects();
        let killed = Instant::now();
        relay.kill();
        let relay = start_on(&run.bin, &run.url, &addr.to_string())?;
        let up = Instant::now();
        let current = run.writer.current();
        let at = wait_all(&seen, n, &generator, "the new epoch's snapshot", |s| {
            s.snapshot && s.epoch != epoch && s.versions.contains(&current)
        })?;
        let mut from_kill: Vec<f64> = at
            .iter()
            .map(|t| ms(t.saturating_duration_since(killed)))
            .collect();
        let mut from_up: Vec<f64> = at
            .iter()
            .map(|t| ms(t.saturating_duration_since(up)))
            .collect();
        let (k50, k99, kmax) = spread(&mut from_kill);
        let (u50, u99, umax) = spread(&mut from_up);
        restart.push_str(&format!(
            "\n### Relay restart under {n} followers\n\n\
             The relay killed (SIGKILL) and started again on the same address ({:.0} ms until \
             it listened again); each follower reconnects after the protocol's jittered \
             backoff (up to 1 s, then doubling to 5 s, each wait between half and all of it) \
             with its last event id, and is resynced when it has the new epoch's snapshot. \
             {} streams ended or failed during the restart.\n\n\
             | ms until resynced | p50 | p99 | max (all resynced) |\n|---|---:|---:|---:|\n\
             | from the kill | {k50:.0} | {k99:.0} | {kmax:.0} |\n\
             | from the new relay listening | {u50:.0} | {u99:.0} | {umax:.0} |\n",
            ms(up - killed),
            generator.reconnects() - reconnects
        ));
        drain(&seen);
        table.row(
            "the same, after the restart",
            &n.to_string(),
            generator_rounds(&mut run.writer, &seen, n, &generator, run.rounds.min(3)),
        );
        drop(generator);
        drop(relay);
        Ok(())
    })();
    if let Err(e) = result {
        table.row(setup, &n.to_string(), Err(e));
    }
}

/// A relay on `listen`, the address a killed one had: retried while the port is still
/// being released.
fn start_on(bin: &std::path::Path, url: &str, listen: &str) -> Result<Relay, String> {
    let mut last = String::new();
    for _ in 0..20 {
        match Relay::start(bin, url, listen, &[], &[]) {
            Ok(relay) => return Ok(relay),
            Err(e) => last = e,
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Err(format!("the relay did not start again on {listen}: {last}"))
}

fn drain(seen: &Receiver<Seen>) {
    while seen.try_recv().is_ok() {}
}

/// (c) 100 live-handle processes following the relay.
fn relay_processes(run: &mut Run, table: &mut Table, costs: &mut String) {
    let setup = "relay, live-handle processes";
    let count = 100;
    let result = (|| -> Result<(Vec<f64>, Vec<f64>), String> {
        let relay = Relay::start(&run.bin, &run.url, "127.0.0.1:0", &[], &[])?;
        let followers =
            Followers::start(count, &format!("http://{}", relay.addr), Some(&run.token))?;
        followers.visible(run.writer.current())?;
        let held = run.connections.held();
        let rounds = process_rounds(&mut run.writer, &followers, run.rounds)?;
        costs.push_str(&format!(
            "| {setup} | {count} processes | {:.1} MB | | | | {held} |\n",
            procs::rss(relay.pid()).unwrap_or(0) as f64 / 1e6
        ));
        Ok(rounds)
    })();
    table.row(setup, &format!("{count} processes"), result);
}

/// (d) A relay following a relay.
fn chain(run: &mut Run, table: &mut Table, costs: &mut String) {
    let setup = "two relays chained, generator followers";
    let n = 100;
    let first = match Relay::start(&run.bin, &run.url, "127.0.0.1:0", &[], &[]) {
        Ok(relay) => relay,
        Err(e) => return table.row(setup, &n.to_string(), Err(e)),
    };
    let upstream = format!("http://{}", first.addr);
    // The second relay's token for the first: the same viewer's.
    let second = match Relay::start(
        &run.bin,
        &upstream,
        "127.0.0.1:0",
        &[],
        &[("PROMPTPACK_RELAY_TOKEN", run.token.as_str())],
    ) {
        Ok(relay) => relay,
        Err(e) => {
            return table.skipped(
                setup,
                &n.to_string(),
                &format!("a relay following a relay did not start: {e}"),
            );
        }
    };
    let result = (|| -> Result<(Vec<f64>, Vec<f64>), String> {
        let (sender, seen) = channel();
        let generator = Generator::start(second.addr, LABEL, PROMPT_ID, &run.token, n, &sender)?;
        let base = run.writer.current();
        wait_all(&seen, n, &generator, "the first snapshot", |s| {
            s.snapshot && s.versions.contains(&base)
        })?;
        costs.push_str(&format!(
            "| {setup} | {n} | | | | | {} |\n",
            run.connections.held()
        ));
        generator_rounds(&mut run.writer, &seen, n, &generator, run.rounds)
    })();
    table.row(setup, &n.to_string(), result);
}

/// (d) A poll-only relay through pgbouncer in transaction mode.
fn through_pgbouncer(run: &mut Run, table: &mut Table, costs: &mut String) {
    let setup = "relay through pgbouncer (transaction mode, --poll-only), generator followers";
    let n = 100;
    let result = (|| -> Result<(Vec<f64>, Vec<f64>), String> {
        let bouncer = PgBouncer::start(run.cluster.port())?;
        let url = format!("postgres://postgres@127.0.0.1:{}/{DATABASE}", bouncer.port);
        let relay = Relay::start(&run.bin, &url, "127.0.0.1:0", &["--poll-only"], &[])?;
        let (sender, seen) = channel();
        let generator = Generator::start(relay.addr, LABEL, PROMPT_ID, &run.token, n, &sender)?;
        let base = run.writer.current();
        wait_all(&seen, n, &generator, "the first snapshot", |s| {
            s.snapshot && s.versions.contains(&base)
        })?;
        costs.push_str(&format!(
            "| {setup} | {n} | | | | | {} (pgbouncer's server connections) |\n",
            run.connections.held()
        ));
        let rounds = generator_rounds(&mut run.writer, &seen, n, &generator, run.rounds);
        drop(generator);
        drop(relay);
        drop(bouncer);
        rounds
    })();
    table.row(setup, &n.to_string(), result);
}

/// (e) Live-handle processes on PostgreSQL directly, as today.
fn direct(run: &mut Run, table: &mut Table, costs: &mut String, count: usize) {
    let setup = "PostgreSQL directly (LISTEN), live-handle processes";
    let result = (|| -> Result<(Vec<f64>, Vec<f64>), String> {
        let followers = Followers::start(count, &run.url, None)?;
        followers.visible(run.writer.current())?;
        costs.push_str(&format!(
            "| {setup} | {count} processes | – | – | – | – | {} |\n",
            run.connections.held()
        ));
        process_rounds(&mut run.writer, &followers, run.rounds)
    })();
    table.row(setup, &format!("{count} processes"), result);
}

/// `--fleet-follower URL`: one live handle following `production` of `URL` (a catalog, or
/// a relay with `$PROMPTPACK_RELAY_TOKEN`), printing `visible N` each time it serves a new version
/// of `bench-system`. Runs until killed.
pub fn follower_main(url: &str) -> ! {
    #[cfg(promptpack_typed)]
    {
        use crate::render::typed::{self, PromptId};
        use promptpack::Provenance;
        use promptpack::live::LiveEvent;
        let mut builder = typed::Prompts::connect(url).label(LABEL);
        let events = builder.subscribe();
        let prompts = match builder.start() {
            Ok(prompts) => prompts,
            Err(e) => {
                eprintln!("start: {e}");
                std::process::exit(1);
            }
        };
        if let Provenance::Catalog(served) = prompts.serving(PromptId::BenchSystem) {
            println!("visible {}", served.version);
        }
        for event in events {
            match event {
                LiveEvent::Updated { prompt, versions } if prompt == PROMPT_ID => {
                    for version in versions {
                        println!("visible {}", version.version);
                    }
                }
                LiveEvent::Updated { .. } => {}
                other => eprintln!("{other}"),
            }
        }
        std::process::exit(0);
    }
    #[cfg(not(promptpack_typed))]
    {
        eprintln!(
            "--fleet-follower {url}: build.rs could not compile the workload (see its warning)"
        );
        std::process::exit(1);
    }
}
