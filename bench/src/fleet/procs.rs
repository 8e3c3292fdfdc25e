//! The processes the `fleet` section runs beside itself: relays (`promptpack relay`), the
//! follower processes (this binary again, `--fleet-follower`), pgbouncer; and what it reads of
//! them from `/proc`.

use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Sender, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a process may take to say it is ready before the row fails: a hang guard.
const READY_WITHIN: Duration = Duration::from_secs(60);

/// The `promptpack` binary: `$PROMPTPACK_BIN`, else the workspace's build
/// (`$CARGO_TARGET_DIR` or `target/`, release before debug) of
/// `cargo build -p promptpack-cli --features full`.
pub fn promptpack_bin() -> Result<PathBuf, String> {
    if let Some(bin) = std::env::var_os("PROMPTPACK_BIN") {
        return Ok(PathBuf::from(bin));
    }
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut targets = vec![repo.join("target")];
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR") {
        targets.insert(0, PathBuf::from(dir));
    }
    for target in &targets {
        for profile in ["release", "debug"] {
            let bin = target.join(profile).join("promptpack");
            if bin.exists() {
                return Ok(bin);
            }
        }
    }
    Err(
        "no `promptpack` binary: build it (cargo build --release -p promptpack-cli --features \
         full) or set PROMPTPACK_BIN"
            .into(),
    )
}

/// Every line of `from`, stamped, to `lines` (and kept in `log`); a thread of its own.
fn forward(
    from: impl Read + Send + 'static,
    lines: Sender<(Instant, String)>,
    log: Arc<Mutex<Vec<String>>>,
) {
    std::thread::spawn(move || {
        for line in BufReader::new(from).lines() {
            let Ok(line) = line else { break };
            let at = Instant::now();
            {
                let mut log = log.lock().unwrap();
                if log.len() < 200 && !line.trim().is_empty() {
                    log.push(line.clone());
                }
            }
            let _ = lines.send((at, line));
        }
    });
}

/// A relay run as a child process; killed on drop.
pub struct Relay {
    child: Child,
    pub addr: SocketAddr,
}

impl Relay {
    /// `promptpack relay --db UPSTREAM --listen LISTEN ARGS…` (`--upstream` for an
    /// `http://` upstream: another relay), once it has printed `relay listening on
    /// http://ADDR`.
    pub fn start(
        bin: &Path,
        upstream: &str,
        listen: &str,
        args: &[&str],
        envs: &[(&str, &str)],
    ) -> Result<Relay, String> {
        let mut command = Command::new(bin);
        command
            .args([
                "relay",
                if upstream.starts_with("http://") {
                    "--upstream"
                } else {
                    "--db"
                },
                upstream,
                "--listen",
                listen,
                "--log",
                "warn",
            ])
            .args(args)
            .envs(envs.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command
            .spawn()
            .map_err(|e| format!("cannot run {}: {e}", bin.display()))?;
        let log = Arc::new(Mutex::new(Vec::new()));
        let (sender, lines) = channel();
        forward(child.stdout.take().unwrap(), sender.clone(), log.clone());
        forward(child.stderr.take().unwrap(), sender, log.clone());
        let deadline = Instant::now() + READY_WITHIN;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match lines.recv_timeout(left.min(Duration::from_millis(200))) {
                Ok((_, line)) => {
                    if let Some(at) = line.split("relay listening on http://").nth(1) {
                        let addr = at
                            .split_whitespace()
                            .next()
                            .unwrap_or("")
                            .parse()
                            .map_err(|e| format!("the relay's address in {line:?}: {e}"))?;
                        return Ok(Relay { child, addr });
                    }
                }
                Err(_) => {
                    if let Ok(Some(status)) = child.try_wait() {
                        return Err(format!(
                            "the relay exited ({status}): {}",
                            log.lock().unwrap().join(" / ")
                        ));
                    }
                    if left.is_zero() {
                        let _ = child.kill();
                        let _ = child.wait();
                        return Err(format!(
                            "the relay did not say it listens within {} s: {}",
                            READY_WITHIN.as_secs(),
                            log.lock().unwrap().join(" / ")
                        ));
                    }
                }
            }
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Kills it (SIGKILL: a relay that dies, not one that drains) and waits for it.
    pub fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Follower processes (this binary with `--fleet-follower URL`), each printing `visible N`
/// when its live handle serves version N; their lines stamped on arrival. Killed on drop.
pub struct Followers {
    children: Vec<Child>,
    pub lines: std::sync::mpsc::Receiver<(usize, Instant, String)>,
    logs: Vec<Arc<Mutex<Vec<String>>>>,
}

impl Followers {
    pub fn start(count: usize, url: &str, token: Option<&str>) -> Result<Followers, String> {
        let exe = std::env::current_exe().map_err(|e| format!("this binary's path: {e}"))?;
        let (sender, lines) = channel();
        let mut followers = Followers {
            children: Vec::with_capacity(count),
            lines,
            logs: Vec::with_capacity(count),
        };
        for i in 0..count {
            let mut command = Command::new(&exe);
            command
                .args(["--fleet-follower", url])
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            if let Some(token) = token {
                command.env("PROMPTPACK_RELAY_TOKEN", token);
            }
            let mut child = command
                .spawn()
                .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
            let log = Arc::new(Mutex::new(Vec::new()));
            let (each, from_child) = channel::<(Instant, String)>();
            forward(child.stdout.take().unwrap(), each.clone(), log.clone());
            forward(child.stderr.take().unwrap(), each, log.clone());
            let sender = sender.clone();
            std::thread::spawn(move || {
                for (at, line) in from_child {
                    if sender.send((i, at, line)).is_err() {
                        break;
                    }
                }
            });
            followers.children.push(child);
            followers.logs.push(log);
        }
        Ok(followers)
    }

    /// Waits until every process printed `visible VERSION`; when each did.
    pub fn visible(&self, version: u32) -> Result<Vec<Instant>, String> {
        let wanted = format!("visible {version}");
        let deadline = Instant::now() + READY_WITHIN;
        let mut seen: Vec<Option<Instant>> = vec![None; self.children.len()];
        while seen.iter().any(Option::is_none) {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok((i, at, line)) if line == wanted => {
                    seen[i].get_or_insert(at);
                }
                Ok(_) => {}
                Err(_) => {
                    let missing = seen.iter().position(Option::is_none).unwrap_or(0);
                    let missing_count = seen.iter().filter(|s| s.is_none()).count();
                    return Err(format!(
                        "v{version} not visible in {missing_count} of {} processes within {} s; \
                         process {missing} said: {}",
                        seen.len(),
                        READY_WITHIN.as_secs(),
                        self.logs[missing].lock().unwrap().join(" / ")
                    ));
                }
            }
        }
        Ok(seen.into_iter().flatten().collect())
    }
}

impl Drop for Followers {
    fn drop(&mut self) {
        for child in &mut self.children {
            let _ = child.kill();
        }
        for child in &mut self.children {
            let _ = child.wait();
        }
    }
}

/// `VmRSS` of a process, in bytes.
pub fn rss(pid: u32) -> Result<u64, String> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .map_err(|e| format!("/proc/{pid}/status: {e}"))?;
    let kb: u64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|kb| kb.parse().ok())
        .ok_or_else(|| format!("no VmRSS in /proc/{pid}/status"))?;
    Ok(kb * 1024)
}

/// CPU time a process has used (user + system), from `/proc/PID/stat`.
pub fn cpu_time(pid: u32) -> Result<Duration, String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map_err(|e| format!("/proc/{pid}/stat: {e}"))?;
    // After the command's name (in parentheses, which may hold spaces): field 3 on; utime
    // and stime are fields 14 and 15.
    let rest = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest)
        .ok_or("an odd /proc/PID/stat")?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| -> Result<u64, String> {
        fields
            .get(i)
            .and_then(|f| f.parse().ok())
            .ok_or_else(|| format!("no field {} in /proc/{pid}/stat", i + 3))
    };
    let total = ticks(11)? + ticks(12)?;
    Ok(Duration::from_secs_f64(total as f64 / clock_ticks() as f64))
}

/// The kernel's clock ticks per second (`getconf CLK_TCK`; 100 on Linux everywhere).
fn clock_ticks() -> u64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|out| String::from_utf8(out.stdout).ok())
        .and_then(|text| text.trim().parse().ok())
        .unwrap_or(100)
}

/// A throwaway pgbouncer in transaction mode in front of the cluster at `pg_port` (trust
/// authentication for `postgres`, as promptpack-pgtest's clusters have), as
/// scripts/pgbouncer.sh starts one for CI. As root it runs as the `postgres` user: pgbouncer
/// refuses to run as root. Stopped on drop.
pub struct PgBouncer {
    dir: tempfile::TempDir,
    pub port: u16,
}

impl PgBouncer {
    pub fn start(pg_port: u16) -> Result<PgBouncer, String> {
        let bin = ["/usr/sbin/pgbouncer", "/usr/bin/pgbouncer"]
            .into_iter()
            .map(PathBuf::from)
            .find(|p| p.exists())
            .ok_or("pgbouncer is not installed (Debian: apt-get install pgbouncer)")?;
        let dir = tempfile::Builder::new()
            .prefix("promptpack-pgbouncer-")
            .tempdir()
            .map_err(|e| format!("a temp folder: {e}"))?;
        let root = std::fs::read_to_string("/proc/self/status")
            .map(|s| s.lines().any(|l| l.starts_with("Uid:\t0\t")))
            .unwrap_or(false);
        let mut errors = Vec::new();
        for _ in 0..3 {
            let port = std::net::TcpListener::bind(("127.0.0.1", 0))
                .and_then(|l| l.local_addr())
                .map_err(|e| format!("a free port: {e}"))?
                .port();
            let d = dir.path().display();
            let ini = format!(
                "[databases]\n* = host=127.0.0.1 port={pg_port} user=postgres\n\n\
                 [pgbouncer]\nlisten_addr = 127.0.0.1\nlisten_port = {port}\n\
                 unix_socket_dir =\nauth_type = trust\nauth_file = {d}/users.txt\n\
                 pool_mode = transaction\nmax_client_conn = 2000\ndefault_pool_size = 20\n\
                 logfile = {d}/pgbouncer.log\npidfile = {d}/pgbouncer.pid\n"
            );
            let write = |name: &str, text: &str| {
                std::fs::write(dir.path().join(name), text).map_err(|e| format!("{name}: {e}"))
            };
            write("pgbouncer.ini", &ini)?;
            write("users.txt", "\"postgres\" \"\"\n")?;
            let mut command = if root {
                let _ = Command::new("chown")
                    .args(["-R", "postgres:postgres"])
                    .arg(dir.path())
                    .status();
                let mut c = Command::new("runuser");
                c.args(["-u", "postgres", "--"]).arg(&bin);
                c
            } else {
                Command::new(&bin)
            };
            let output = command
                .arg("-d")
                .arg(dir.path().join("pgbouncer.ini"))
                .output()
                .map_err(|e| format!("cannot run pgbouncer: {e}"))?;
            let started = Instant::now();
            while started.elapsed() < Duration::from_secs(10) {
                if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                    return Ok(PgBouncer { dir, port });
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            errors.push(format!(
                "port {port}: {} {}",
                String::from_utf8_lossy(&output.stderr).trim(),
                std::fs::read_to_string(dir.path().join("pgbouncer.log")).unwrap_or_default()
            ));
        }
        Err(format!("pgbouncer did not start: {}", errors.join("; ")))
    }
}

impl Drop for PgBouncer {
    fn drop(&mut self) {
        if let Ok(pid) = std::fs::read_to_string(self.dir.path().join("pgbouncer.pid")) {
            let _ = Command::new("kill").args(["-TERM", pid.trim()]).status();
        }
    }
}
