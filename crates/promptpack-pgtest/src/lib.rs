//! Throwaway PostgreSQL clusters for the tests of this workspace, and for CI.
//!
//! Manages server processes only (`initdb`, `pg_ctl`, and `psql` to create
//! databases): there is no client library here, so the crates under test
//! pick their own. Not published; no API promise beyond this repository.
//!
//! - [`Cluster::start`]: a cluster of its own in a temp folder, gone on drop;
//! - [`shared`]: the one server the tests of a process share, which CI can
//!   provide for the whole run through `PROMPTPACK_TEST_POSTGRES_URL`;
//! - [`Cluster::start_in`] and [`Cluster::stop_dir`]: a cluster that outlives
//!   the process, for the `promptpack-pgtest` binary CI runs.
//!
//! The binaries are found through `$PROMPTPACK_PG_BIN`, then
//! `pg_config --bindir`, then the highest `/usr/lib/postgresql/<version>/bin`
//! (Debian's layout), then `PATH`. `initdb` and `postgres` refuse to run as
//! root, so as root the server tools run as the `postgres` user through
//! `runuser`, and the cluster's folder is handed to that user.
#![warn(missing_docs)]

use std::ffi::OsStr;
use std::fmt::Write as _;
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Output, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// The variable naming the folder of the PostgreSQL binaries, ahead of any
/// other way of finding them.
pub const BIN_ENV: &str = "PROMPTPACK_PG_BIN";

/// The variable through which CI hands every test process one running server
/// (`postgres://…` URL of a superuser), so that they do not each start one.
pub const URL_ENV: &str = "PROMPTPACK_TEST_POSTGRES_URL";

/// The user the server tools run as when we are root.
const SERVER_USER: &str = "postgres";

/// Start attempts, each on a newly chosen port: a free port picked by binding
/// to port 0 can be taken by another test before the server binds it.
const START_ATTEMPTS: usize = 3;

/// Seconds `pg_ctl` waits for the server to start or stop.
const PG_CTL_TIMEOUT: &str = "60";

/// Lines of the server log quoted when the server fails to start.
const LOG_TAIL_LINES: usize = 30;

/// A PostgreSQL cluster of its own in a temp folder, listening on 127.0.0.1 on
/// a free port, with trust authentication for the `postgres` superuser.
///
/// A cluster from [`Cluster::start`] is stopped (`pg_ctl stop -m immediate`)
/// and its folder deleted on drop. Should the process die without dropping
/// it (killed, aborted, or the cluster kept in a `static`), a watchdog
/// process does the same once the process is gone. A cluster from
/// [`Cluster::start_in`] outlives its handle: stop it with
/// [`Cluster::stop_dir`].
///
/// The folder holds `data/` (the data directory), `server.log` and the
/// server's Unix socket.
#[derive(Debug)]
pub struct Cluster {
    dir: PathBuf,
    port: u16,
    tools: Tools,
    /// `None` for a cluster that outlives its handle.
    owned: Option<Owned>,
}

/// What a throwaway cluster owns. Fields drop in order: the folder goes
/// before the watchdog is released, so the watchdog finds nothing to do.
#[derive(Debug)]
struct Owned {
    _folder: tempfile::TempDir,
    _watchdog: Watchdog,
}

impl Cluster {
    /// Runs `initdb` in a new temp folder and starts the server on a free
    /// port of 127.0.0.1, waiting until it accepts connections.
    ///
    /// The cluster has trust authentication for the `postgres` superuser,
    /// `fsync = off`, `max_connections = 200`, the C locale and UTF-8, and no
    /// listening address but 127.0.0.1. A start that fails is retried on a
    /// new port up to 3 times in all; the error quotes the end of the
    /// server's log.
    pub fn start() -> Result<Cluster, String> {
        let tools = Tools::find_server()?;
        let folder = tempfile::Builder::new()
            .prefix("promptpack-pg-")
            .tempdir()
            .map_err(|e| format!("cannot create a temp folder for PostgreSQL: {e}"))?;
        let dir = folder.path().to_path_buf();
        // Before initdb, so that a half-made cluster is cleaned up as well.
        let watchdog = Watchdog::spawn(&tools, &dir)?;
        let owned = Owned {
            _folder: folder,
            _watchdog: watchdog,
        };
        let port = tools.init_and_start(&dir)?;
        Ok(Cluster {
            dir,
            port,
            tools,
            owned: Some(owned),
        })
    }

    /// Like [`Cluster::start`], in `dir` (created if missing; must not hold
    /// a cluster already), and the cluster outlives the handle: dropping it
    /// neither stops the server nor deletes `dir`. For a server that must
    /// outlast this process, such as the one CI starts for a whole run; stop
    /// it with [`Cluster::stop_dir`].
    pub fn start_in(dir: &Path) -> Result<Cluster, String> {
        let tools = Tools::find_server()?;
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        // Relative paths would be read from the tools' working folder, which
        // is `dir` itself.
        let dir = std::path::absolute(dir)
            .map_err(|e| format!("cannot make {} absolute: {e}", dir.display()))?;
        if data_dir(&dir).exists() {
            return Err(format!(
                "{} already holds a cluster; stop it with `promptpack-pgtest stop` and \
                 delete the folder, or pick another one",
                dir.display()
            ));
        }
        let port = tools.init_and_start(&dir)?;
        Ok(Cluster {
            dir,
            port,
            tools,
            owned: None,
        })
    }

    /// Stops the server of the cluster in `dir` (made by
    /// [`Cluster::start_in`]) with `pg_ctl stop -m fast`, waiting until it is
    /// down. Leaves `dir` in place.
    pub fn stop_dir(dir: &Path) -> Result<(), String> {
        let tools = Tools::find_server()?;
        let dir = std::path::absolute(dir)
            .map_err(|e| format!("cannot make {} absolute: {e}", dir.display()))?;
        // Else the error would be the working folder's, which misleads.
        if !data_dir(&dir).is_dir() {
            return Err(format!(
                "{} holds no cluster (no data/ folder in it)",
                dir.display()
            ));
        }
        tools.stop(&dir, "fast")
    }

    /// `postgres://postgres@127.0.0.1:PORT/postgres`
    pub fn url(&self) -> String {
        format!("postgres://{SERVER_USER}@127.0.0.1:{}/postgres", self.port)
    }

    /// The TCP port the server listens on, on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The cluster's folder: `data/`, `server.log` and the Unix socket.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The folder of the PostgreSQL binaries in use (`psql` is there).
    pub fn bin_dir(&self) -> &Path {
        &self.tools.bin
    }

    /// Creates the database `name` in this cluster and returns its URL, so
    /// that tests sharing one cluster do not see each other's tables.
    ///
    /// `name` must be a plain lowercase identifier (`[a-z_][a-z0-9_]*`, at
    /// most 63 bytes), such as `suite_sqlite_x`; a name already in use is an
    /// error.
    pub fn create_database(&self, name: &str) -> Result<String, String> {
        create_database(&self.tools.bin.join("psql"), &self.url(), name)
    }

    /// Stops the server with `pg_ctl stop -m fast`, waiting until it is down.
    /// The folder stays; [`Cluster::restart`] starts the server again.
    pub fn stop(&self) -> Result<(), String> {
        self.tools.stop(&self.dir, "fast")
    }

    /// Starts the server again (`pg_ctl start -w`) on the same port and data
    /// folder, after [`Cluster::stop`].
    pub fn restart(&self) -> Result<(), String> {
        self.tools.start(&self.dir)
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if self.owned.is_some() {
            // Errors are moot: the server may be stopped already, and the
            // folder goes next whatever happened.
            let _ = self.tools.stop(&self.dir, "immediate");
        }
        // Then `owned` drops: the folder, then the watchdog.
    }
}

/// The server the tests of this workspace share, from [`shared`]: either
/// CI's (`$PROMPTPACK_TEST_POSTGRES_URL`) or a [`Cluster`] of this process.
///
/// Tests get a database of their own with [`Shared::unique_database`] (or
/// [`Shared::create_database`]), never tables in the `postgres` database,
/// since other tests, and with CI's server other test processes, use the same
/// server at the same time.
#[derive(Debug)]
pub struct Shared {
    url: String,
    /// The cluster of this process; `None` with CI's server.
    cluster: Option<Cluster>,
}

impl Shared {
    /// The URL of the server's `postgres` database, as a superuser.
    pub fn url(&self) -> String {
        self.url.clone()
    }

    /// The cluster of this process, or `None` when the server is CI's. Tests
    /// must not stop it: other tests use it.
    pub fn cluster(&self) -> Option<&Cluster> {
        self.cluster.as_ref()
    }

    /// Creates the database `name` and returns its URL; as
    /// [`Cluster::create_database`]. With CI's server, the name must not be
    /// used by any other test process of the run, nor by an earlier run of
    /// the same tests: prefer [`Shared::unique_database`].
    pub fn create_database(&self, name: &str) -> Result<String, String> {
        match &self.cluster {
            Some(cluster) => cluster.create_database(name),
            None => {
                let tools = Tools::find("psql")?;
                create_database(&tools.bin.join("psql"), &self.url, name)
            }
        }
    }

    /// Creates a database named `prefix`, `_` and a suffix no other call
    /// makes, in this process or another, and returns its URL. `prefix` must
    /// be a plain lowercase identifier of at most 40 bytes.
    pub fn unique_database(&self, prefix: &str) -> Result<String, String> {
        // The clock tells processes apart (a pid can be reused within one CI
        // run); the counter tells calls of this process apart.
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        static EPOCH: OnceLock<u128> = OnceLock::new();
        let epoch = *EPOCH.get_or_init(|| {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos())
        });
        if prefix.len() > 40 {
            return Err(format!(
                "database name prefix {prefix:?} is longer than 40 bytes"
            ));
        }
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let name = format!("{prefix}_{epoch:x}_{}_{n}", std::process::id());
        self.create_database(&name)
    }
}

/// The server the tests of this workspace share, set up on first use and
/// the same for every later call in the process.
///
/// When `$PROMPTPACK_TEST_POSTGRES_URL` is set (CI starts one cluster for
/// the whole run), that server; otherwise a [`Cluster`] started on the first
/// call. Being in a `static`, that cluster is never dropped: its watchdog
/// stops it and deletes its folder once the process has exited. A failure to
/// start is returned by this call and every later one.
pub fn shared() -> Result<&'static Shared, String> {
    static SHARED: OnceLock<Result<Shared, String>> = OnceLock::new();
    SHARED
        .get_or_init(|| match std::env::var(URL_ENV) {
            Ok(url) if !url.is_empty() => Ok(Shared { url, cluster: None }),
            _ => Cluster::start().map(|cluster| Shared {
                url: cluster.url(),
                cluster: Some(cluster),
            }),
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// `CREATE DATABASE name` through `psql` at `url`; returns the new
/// database's URL.
fn create_database(psql: &Path, url: &str, name: &str) -> Result<String, String> {
    check_database_name(name)?;
    let mut command = Command::new(psql);
    command
        .args(["-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", url, "-c"])
        .arg(format!("CREATE DATABASE {name}"))
        // An unreachable server should fail the test, not hang it.
        .env("PGCONNECT_TIMEOUT", "10");
    run(command).map_err(|e| format!("cannot create database {name}: {e}"))?;
    Ok(with_database(url, name))
}

/// Spares callers quoting: a name that needs none is also one that reads the
/// same in a URL and in SQL.
fn check_database_name(name: &str) -> Result<(), String> {
    let mut chars = name.chars();
    let valid = name.len() <= 63
        && chars
            .next()
            .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if valid {
        Ok(())
    } else {
        Err(format!(
            "invalid database name {name:?}: use lowercase ASCII letters, digits and `_`, \
             not starting with a digit, at most 63 bytes"
        ))
    }
}

/// `url` with its database (the path) replaced by `database`; the query
/// string, if any, is kept.
fn with_database(url: &str, database: &str) -> String {
    let (base, query) = match url.find('?') {
        Some(i) => url.split_at(i),
        None => (url, ""),
    };
    let authority = base.find("://").map_or(0, |i| i + 3);
    let end = base[authority..]
        .find('/')
        .map_or(base.len(), |i| authority + i);
    format!("{}/{database}{query}", &base[..end])
}

/// The data directory inside a cluster's folder.
fn data_dir(dir: &Path) -> PathBuf {
    dir.join("data")
}

/// The server log inside a cluster's folder.
fn log_file(dir: &Path) -> PathBuf {
    dir.join("server.log")
}

/// Where the PostgreSQL binaries are and how to run the server tools.
#[derive(Debug, Clone)]
struct Tools {
    bin: PathBuf,
    /// `runuser`, when we are root and the server tools must run as
    /// `postgres`.
    runuser: Option<PathBuf>,
}

impl Tools {
    /// The tools to make and run clusters: `initdb` and `pg_ctl`.
    fn find_server() -> Result<Tools, String> {
        let tools = Tools::find("initdb")?;
        if !tools.bin.join("pg_ctl").is_file() {
            return Err(format!("{} has initdb but no pg_ctl", tools.bin.display()));
        }
        Ok(tools)
    }

    /// The first folder, in the documented order, that holds `tool`.
    fn find(tool: &str) -> Result<Tools, String> {
        let bin = find_bin_dir(tool)?;
        let runuser = if is_root()? {
            Some(find_runuser()?)
        } else {
            None
        };
        Ok(Tools { bin, runuser })
    }

    /// A command running the server tool `tool` with the folder `dir` as
    /// working folder, since the server user may not be allowed into ours.
    fn command(&self, tool: &str, dir: &Path) -> Command {
        let program = self.bin.join(tool);
        let mut command = match &self.runuser {
            Some(runuser) => {
                let mut c = Command::new(runuser);
                c.args(["-u", SERVER_USER, "--"]).arg(program);
                c
            }
            None => Command::new(program),
        };
        command.current_dir(dir);
        command
    }

    /// initdb in `dir/data`, then a start on a free port, retried on new
    /// ports. Returns the port.
    fn init_and_start(&self, dir: &Path) -> Result<u16, String> {
        let socket = dir.join(".s.PGSQL.65535");
        // The kernel's limit for a Unix socket path (sun_path).
        if socket.as_os_str().len() > 107 {
            return Err(format!(
                "{} is too long a path for the server's Unix socket (at most 107 bytes); \
                 use a shorter temp folder (TMPDIR)",
                socket.display()
            ));
        }
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755))
            .map_err(|e| format!("cannot chmod 0755 {}: {e}", dir.display()))?;
        self.give_to_server_user(dir)?;

        let data = data_dir(dir);
        let mut initdb = self.command("initdb", dir);
        initdb
            .arg("-D")
            .arg(&data)
            .args(["-A", "trust", "-U", SERVER_USER, "--no-sync"])
            // The machine's locale may be missing or odd; tests want the
            // same collation everywhere.
            .args(["--no-locale", "-E", "UTF8"]);
        run(initdb).map_err(|e| format!("initdb failed: {e}"))?;

        // The settings go in a file of their own rather than on the command
        // line, so that a restart, or `stop` from another process, needs to
        // remember nothing, and so that pg_ctl's shell never sees a path.
        let main_conf = data.join("postgresql.conf");
        let mut conf = std::fs::read_to_string(&main_conf)
            .map_err(|e| format!("cannot read {}: {e}", main_conf.display()))?;
        conf.push_str("\n# Written by promptpack-pgtest.\ninclude 'promptpack.conf'\n");
        std::fs::write(&main_conf, conf)
            .map_err(|e| format!("cannot write {}: {e}", main_conf.display()))?;

        let mut errors = Vec::new();
        for attempt in 1..=START_ATTEMPTS {
            let port = free_port()?;
            write_settings(dir, port)?;
            self.give_to_server_user(dir)?;
            match self.start(dir) {
                Ok(()) => return Ok(port),
                Err(e) => {
                    errors.push(format!("attempt {attempt}, port {port}: {e}"));
                    // A start that timed out may have left a server behind.
                    let _ = self.stop(dir, "immediate");
                }
            }
        }
        Err(format!(
            "PostgreSQL did not start in {} ({START_ATTEMPTS} attempts):\n{}",
            dir.display(),
            errors.join("\n")
        ))
    }

    /// `pg_ctl start -w`; on failure, the error quotes the end of the log.
    fn start(&self, dir: &Path) -> Result<(), String> {
        let log = log_file(dir);
        let mut pg_ctl = self.command("pg_ctl", dir);
        pg_ctl
            .arg("start")
            .arg("-D")
            .arg(data_dir(dir))
            .arg("-l")
            .arg(&log)
            .args(["-w", "-t", PG_CTL_TIMEOUT]);
        run(pg_ctl).map_err(|e| {
            format!(
                "{e}\nlast lines of {}:\n{}",
                log.display(),
                log_tail(&log, LOG_TAIL_LINES)
            )
        })?;
        Ok(())
    }

    /// `pg_ctl stop -w -m mode`.
    fn stop(&self, dir: &Path, mode: &str) -> Result<(), String> {
        let mut pg_ctl = self.command("pg_ctl", dir);
        pg_ctl.arg("stop").arg("-D").arg(data_dir(dir)).args([
            "-m",
            mode,
            "-w",
            "-t",
            PG_CTL_TIMEOUT,
        ]);
        run(pg_ctl).map(drop)
    }

    /// As root, hands `dir` to the server user: initdb and the server write
    /// there, and the data folder must be the server user's.
    fn give_to_server_user(&self, dir: &Path) -> Result<(), String> {
        if self.runuser.is_none() {
            return Ok(());
        }
        let mut chown = Command::new("chown");
        chown
            .arg("-R")
            .arg(format!("{SERVER_USER}:{SERVER_USER}"))
            .arg(dir);
        run(chown).map(drop)
    }
}

/// Writes the cluster's settings, read through the `include` initdb's
/// `postgresql.conf` was given.
fn write_settings(dir: &Path, port: u16) -> Result<(), String> {
    let socket_dir = dir
        .to_str()
        .ok_or_else(|| format!("{} is not UTF-8", dir.display()))?
        .replace('\'', "''");
    let settings = format!(
        "# Written by promptpack-pgtest: a throwaway cluster for tests.\n\
         listen_addresses = '127.0.0.1'\n\
         port = {port}\n\
         unix_socket_directories = '{socket_dir}'\n\
         max_connections = 200\n\
         fsync = off\n"
    );
    let path = data_dir(dir).join("promptpack.conf");
    std::fs::write(&path, settings).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// A port that was free a moment ago; see [`START_ATTEMPTS`].
fn free_port() -> Result<u16, String> {
    let listener = TcpListener::bind(("127.0.0.1", 0))
        .map_err(|e| format!("cannot bind 127.0.0.1:0 to pick a port: {e}"))?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(|e| format!("cannot read the port picked: {e}"))
}

/// Runs `command` to completion with its output captured; an error when it
/// cannot start or exits unsuccessfully, quoting its output.
fn run(mut command: Command) -> Result<Output, String> {
    // Captured output also keeps the server, which pg_ctl starts with its
    // own redirections, off our stdout: a `$(promptpack-pgtest start)` would
    // otherwise wait for the server to exit.
    command.stdin(Stdio::null());
    let shown = show(&command);
    let output = command
        .output()
        .map_err(|e| format!("cannot run `{shown}`: {e}"))?;
    if output.status.success() {
        return Ok(output);
    }
    let mut message = format!("`{shown}` failed ({})", output.status);
    for stream in [&output.stdout, &output.stderr] {
        let text = String::from_utf8_lossy(stream);
        let text = text.trim_end();
        if !text.is_empty() {
            let _ = write!(message, "\n{text}");
        }
    }
    Err(message)
}

/// A command line for messages.
fn show(command: &Command) -> String {
    std::iter::once(command.get_program())
        .chain(command.get_args())
        .map(OsStr::to_string_lossy)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The last `lines` lines of the file at `path`, or why there are none.
fn log_tail(path: &Path, lines: usize) -> String {
    match std::fs::read(path) {
        Ok(bytes) => {
            let text = String::from_utf8_lossy(&bytes);
            let all: Vec<&str> = text.lines().collect();
            all[all.len().saturating_sub(lines)..].join("\n")
        }
        Err(e) => format!("(cannot read the log: {e})"),
    }
}

/// The folder holding `tool`: `$PROMPTPACK_PG_BIN`, `pg_config --bindir`,
/// the highest `/usr/lib/postgresql/<version>/bin`, then `PATH`.
fn find_bin_dir(tool: &str) -> Result<PathBuf, String> {
    if let Some(bin) = std::env::var_os(BIN_ENV).filter(|v| !v.is_empty()) {
        let bin = PathBuf::from(bin);
        // Set on purpose: falling back elsewhere would hide a mistake.
        return if bin.join(tool).is_file() {
            Ok(bin)
        } else {
            Err(format!(
                "${BIN_ENV} is {}, which has no {tool}",
                bin.display()
            ))
        };
    }
    let mut candidates = Vec::new();
    // On Debian, pg_config can come from libpq-dev alone and name a folder
    // without the server: hence the check for `tool` below.
    if let Ok(output) = Command::new("pg_config")
        .arg("--bindir")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        && output.status.success()
    {
        let dir = String::from_utf8_lossy(&output.stdout).trim().to_owned();
        if !dir.is_empty() {
            candidates.push(PathBuf::from(dir));
        }
    }
    candidates.extend(debian_bin_dirs());
    candidates.extend(
        std::env::var_os("PATH")
            .iter()
            .flat_map(std::env::split_paths),
    );
    candidates
        .into_iter()
        .find(|dir| dir.join(tool).is_file())
        .ok_or_else(|| {
            format!(
                "PostgreSQL's {tool} not found (looked at ${BIN_ENV}, `pg_config --bindir`, \
                 /usr/lib/postgresql/*/bin and PATH): install PostgreSQL (Debian: \
                 `apt-get install postgresql`) or set ${BIN_ENV} to its bin folder"
            )
        })
}

/// `/usr/lib/postgresql/<version>/bin`, highest version first.
fn debian_bin_dirs() -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir("/usr/lib/postgresql") else {
        return Vec::new();
    };
    let mut versions: Vec<(Vec<u32>, PathBuf)> = entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            // "15", or "9.6" before PostgreSQL 10.
            let version = name
                .split('.')
                .map(str::parse)
                .collect::<Result<Vec<u32>, _>>()
                .ok()?;
            Some((version, entry.path().join("bin")))
        })
        .collect();
    versions.sort_by(|a, b| b.0.cmp(&a.0));
    versions.into_iter().map(|(_, dir)| dir).collect()
}

/// Whether the effective user is root: from `/proc/self/status`, else
/// `id -u`.
fn is_root() -> Result<bool, String> {
    if let Ok(status) = std::fs::read_to_string("/proc/self/status") {
        // "Uid:\treal\teffective\tsaved\tfs"
        let effective = status
            .lines()
            .find_map(|line| line.strip_prefix("Uid:"))
            .and_then(|ids| ids.split_whitespace().nth(1));
        if let Some(effective) = effective {
            return Ok(effective == "0");
        }
    }
    let mut id = Command::new("id");
    id.arg("-u");
    let output = run(id).map_err(|e| format!("cannot tell whether we are root: {e}"))?;
    Ok(String::from_utf8_lossy(&output.stdout).trim() == "0")
}

/// `runuser`, which is in `/usr/sbin` and so may be missing from `PATH`.
fn find_runuser() -> Result<PathBuf, String> {
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .chain(["/usr/sbin".into(), "/sbin".into()])
        .map(|dir| dir.join("runuser"))
        .find(|path| path.is_file())
        .ok_or_else(|| {
            "we are root, and initdb and postgres refuse to run as root, but `runuser` \
             (util-linux) was not found to run them as the postgres user"
                .to_owned()
        })
}

/// A `sh` process that waits for its stdin to close, then stops the cluster
/// in a folder and deletes the folder.
///
/// We hold the only write end of that stdin, and the kernel closes it when
/// this process ends however it ends (a panic that aborts, a kill by a test
/// harness's timeout), where no destructor or atexit hook would run: so no
/// server and no folder outlive a test process. The watchdog sits in a
/// process group of its own, so that a Ctrl-C aimed at the tests does not
/// kill it before it has done its work.
#[derive(Debug)]
struct Watchdog {
    child: Child,
    stdin: Option<ChildStdin>,
}

impl Watchdog {
    fn spawn(tools: &Tools, dir: &Path) -> Result<Watchdog, String> {
        let stop = tools.command("pg_ctl", dir);
        let mut command = Command::new("/bin/sh");
        command
            .arg("-c")
            // $1 is the folder, the rest the pg_ctl command line.
            .arg(
                "dir=$1; shift; while read -r _; do :; done; \
                 \"$@\" >/dev/null 2>&1; rm -rf \"$dir\"",
            )
            .arg("promptpack-pgtest-watchdog")
            .arg(dir)
            .arg(stop.get_program())
            .args(stop.get_args())
            .args([OsStr::new("stop"), OsStr::new("-D")])
            .arg(data_dir(dir))
            .args(["-m", "immediate", "-w", "-t", PG_CTL_TIMEOUT])
            .current_dir(dir)
            .stdin(Stdio::piped())
            // Holding our stdout or stderr open would keep whoever reads
            // them (cargo, `tee`) waiting after we exit.
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0);
        let mut child = command
            .spawn()
            .map_err(|e| format!("cannot start the cluster's watchdog (/bin/sh): {e}"))?;
        let stdin = child.stdin.take();
        Ok(Watchdog { child, stdin })
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        // Closing stdin sets it off; with the cluster gone already, it only
        // checks. Waiting reaps it.
        drop(self.stdin.take());
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    #[test]
    fn with_database_replaces_the_path_only() {
        assert_eq!(
            with_database("postgres://postgres@127.0.0.1:5432/postgres", "x"),
            "postgres://postgres@127.0.0.1:5432/x"
        );
        assert_eq!(
            with_database("postgres://u@h:1/db?sslmode=disable", "x"),
            "postgres://u@h:1/x?sslmode=disable"
        );
        assert_eq!(with_database("postgres://u@h:1", "x"), "postgres://u@h:1/x");
        assert_eq!(
            with_database("postgresql://u@h?host=/tmp", "x"),
            "postgresql://u@h/x?host=/tmp"
        );
    }

    #[test]
    fn database_names_are_plain_identifiers() {
        for ok in ["suite_sqlite_x", "_a", "a1", &"a".repeat(63)] {
            assert!(check_database_name(ok).is_ok(), "{ok}");
        }
        for bad in ["", "1a", "A", "a-b", "a b", "a;drop", &"a".repeat(64)] {
            assert!(check_database_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn show_joins_program_and_arguments() {
        let mut command = Command::new("pg_ctl");
        command.args([OsString::from("stop"), OsString::from("-D")]);
        assert_eq!(show(&command), "pg_ctl stop -D");
    }
}
