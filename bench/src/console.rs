//! The `console` section: `promptpack console` serving a SQLite catalog of 10,000 prompts on
//! loopback, each page and the API's `render` timed from a client over real HTTP (median and p95
//! of the whole request, so loopback and HTTP are in it), beside the same catalog read made
//! directly in this process, measured in the same run: the ratio is what the web layer (HTTP,
//! the session lookup, HTML) adds. Page weight is the body's size.

use crate::harness::{err, summary};
use promptpack_catalog::{Catalog, Draft, ListQuery, Role, Selector, token_hash};
use promptpack_console::{Server, Settings, new_token};
use std::path::Path;
use std::time::Instant;

/// The prompts of the catalog.
const PROMPTS: usize = 10_000;
/// The prompt the single-prompt rows read: two versions, a declared example.
const ID: &str = "p05000";

fn ms(value: f64) -> String {
    format!("{:.2}", value * 1e3)
}

/// A tree of `PROMPTS` prompts under `root`, imported as one version each.
fn build_catalog(root: &Path, url: &str) -> Result<(), String> {
    for n in 0..PROMPTS {
        let dir = root.join(format!("templates/p{n:05}"));
        std::fs::create_dir_all(&dir).map_err(err)?;
        let text = format!(
            "---\ndescription: prompt number {n} of the console bench\nvars:\n  name:\n    kind: text\n    example: Ada\n  formal:\n    kind: flag\n    example: false\nexamples:\n  casual:\n    name: Bo\n    formal: false\n---\nYou are assistant {n}.\n{{{{#if formal}}}}Good day, {{{{name}}}}.{{{{else}}}}Hi {{{{name}}}}!{{{{/if}}}}\nAnswer briefly.\n"
        );
        std::fs::write(dir.join("system.md"), text).map_err(err)?;
    }
    let mut catalog = Catalog::open(url).map_err(err)?.with_author("bench");
    catalog.import(root, "import", None).map_err(err)?;
    let newest = catalog.get(ID, &Selector::Latest).map_err(err)?;
    let draft = Draft {
        system: newest
            .system
            .replace("Answer briefly.", "Answer briefly and kindly."),
        message: "kinder".into(),
        syntax: newest.syntax.clone(),
        user: None,
        messages: None,
    };
    catalog.publish(ID, &draft, None).map_err(err)?;
    catalog.set_label(ID, "production", 1).map_err(err)?;
    // Two versions of `DIFF_LINES` lines, no line shared: the diff's worst
    // case (every line changed), which the page bounds by its step budget.
    for side in ["old", "new"] {
        let draft = Draft {
            system: (0..DIFF_LINES)
                .map(|i| format!("line {i} of the {side} text\n"))
                .collect(),
            message: side.into(),
            ..Draft::default()
        };
        catalog.publish_or_create(BIG, &draft, None).map_err(err)?;
    }
    Ok(())
}

/// The prompt of the diff row: two versions of [`DIFF_LINES`] distinct lines.
const BIG: &str = "big-diff";
/// The lines of each version of [`BIG`].
const DIFF_LINES: usize = 10_000;

struct Client {
    agent: ureq::Agent,
    base: String,
}

impl Client {
    fn get(&self, path: &str, cookie: &str) -> Result<(u16, usize), String> {
        let mut answer = self
            .agent
            .get(format!("{}{path}", self.base))
            .header("cookie", cookie)
            .call()
            .map_err(err)?;
        let body = answer
            .body_mut()
            .with_config()
            .limit(64 << 20)
            .read_to_string()
            .map_err(err)?;
        Ok((answer.status().as_u16(), body.len()))
    }

    fn render(&self, token: &str) -> Result<(u16, usize), String> {
        let mut answer = self
            .agent
            .post(format!("{}/api/v1/prompts/{ID}/render", self.base))
            .header("authorization", format!("Bearer {token}"))
            .content_type("application/json")
            .send(r#"{"label":"production","vars":{"name":"Ada","formal":true}}"#)
            .map_err(err)?;
        let body = answer.body_mut().read_to_string().map_err(err)?;
        Ok((answer.status().as_u16(), body.len()))
    }
}

/// Seconds of each of `n` calls of `f` (after a few untimed ones).
fn time<T>(n: usize, mut f: impl FnMut() -> Result<T, String>) -> Result<(Vec<f64>, T), String> {
    let mut last = f()?;
    for _ in 0..5 {
        last = f()?;
    }
    let mut samples = Vec::with_capacity(n);
    for _ in 0..n {
        let start = Instant::now();
        last = f()?;
        samples.push(start.elapsed().as_secs_f64());
    }
    Ok((samples, last))
}

fn run(quick: bool) -> Result<String, String> {
    let n = if quick { 50 } else { 200 };
    let dir = tempfile::tempdir().map_err(err)?;
    let url = format!("sqlite:{}", dir.path().join("catalog.db").display());
    let setup = Instant::now();
    build_catalog(&dir.path().join("tree"), &url)?;
    let token = new_token();
    Catalog::open(&url)
        .map_err(err)?
        .with_author("bench")
        .add_user("bench", Role::Admin, &token_hash(&token))
        .map_err(err)?;
    let setup = setup.elapsed();
    let server =
        Server::bind(Settings::new(url.clone()).listen("127.0.0.1:0".parse().map_err(err)?))
            .map_err(err)?;
    let base = format!("http://{}", server.local_addr());
    std::thread::spawn(move || server.run());
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .max_redirects_will_error(false)
        .build()
        .into();
    let signed_in = agent
        .post(format!("{base}/login"))
        .content_type("application/x-www-form-urlencoded")
        .send(format!("token={token}&next=/"))
        .map_err(err)?;
    let cookie = signed_in
        .headers()
        .get("set-cookie")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .ok_or("no session cookie")?
        .to_string();
    let client = Client { agent, base };
    let mut direct = Catalog::connect(&url).map_err(err)?;

    let mut out = format!(
        "## Console: pages and the API over loopback, a catalog of {PROMPTS} prompts (SQLite)\n\n\
         Each row: {n} requests from one client over HTTP/1.1 on loopback (the whole request: \
         HTTP, the session's user looked up in the catalog, the catalog read, HTML), median and \
         p95, beside the catalog read the page makes done directly in this process (its peer). \
         Setup (import of {PROMPTS} prompts): {:.1} s.\n\n\
         | request | status | page weight | median ms | p95 ms | direct read median ms | ratio |\n\
         |---|--:|--:|--:|--:|--:|--:|\n",
        setup.as_secs_f64()
    );
    let mut row =
        |name: &str, (mut web, (status, bytes)): (Vec<f64>, (u16, usize)), mut direct: Vec<f64>| {
            let (mid, p95) = summary(&mut web);
            let (direct_mid, _) = summary(&mut direct);
            out.push_str(&format!(
                "| {name} | {status} | {:.1} KB | {} | {} | {} | {:.1}× |\n",
                bytes as f64 / 1024.0,
                ms(mid),
                ms(p95),
                ms(direct_mid),
                mid / direct_mid
            ));
        };
    fn list(text: Option<&str>) -> ListQuery<'_> {
        ListQuery {
            limit: 50,
            cursor: None,
            text,
        }
    }
    row(
        "`/` (first page of 50)",
        time(n, || client.get("/", &cookie))?,
        time(n, || direct.search(&list(None)).map_err(err))?.0,
    );
    row(
        "`/?q=number 9999` (filtered)",
        time(n, || client.get("/?q=number%209999", &cookie))?,
        time(n, || direct.search(&list(Some("number 9999"))).map_err(err))?.0,
    );
    row(
        "`/prompts/{id}`",
        time(n, || client.get(&format!("/prompts/{ID}"), &cookie))?,
        time(n, || direct.history(ID).map_err(err))?.0,
    );
    row(
        "`/prompts/{id}/diff?from=1&to=2`",
        time(n, || {
            client.get(&format!("/prompts/{ID}/diff?from=1&to=2"), &cookie)
        })?,
        time(n, || {
            direct
                .diff(ID, &Selector::Version(1), &Selector::Version(2))
                .map_err(err)
        })?
        .0,
    );
    // A slower row: fewer samples.
    let few = (n / 10).max(5);
    row(
        "`/prompts/big-diff/diff?from=1&to=2` (a 10,000-line diff, every line changed)",
        time(few, || {
            client.get(&format!("/prompts/{BIG}/diff?from=1&to=2"), &cookie)
        })?,
        time(few, || {
            direct.get(BIG, &Selector::Version(1)).map_err(err)?;
            direct.get(BIG, &Selector::Version(2)).map_err(err)
        })?
        .0,
    );
    row(
        "`/prompts/{id}/preview` (example)",
        time(n, || client.get(&format!("/prompts/{ID}/preview"), &cookie))?,
        time(n, || direct.get(ID, &Selector::Latest).map_err(err))?.0,
    );
    row(
        "`POST /api/v1/prompts/{id}/render` (label)",
        time(n, || client.render(&token))?,
        time(n, || {
            direct
                .get(ID, &Selector::Label("production".into()))
                .map_err(err)
        })?
        .0,
    );
    out.push_str(
        "\nThe direct read is what the page's data costs without the web: `search` for the \
         list, `history` for a prompt, `diff` for the diff (`get` of both versions for the 10,000-line one: the catalog's own unified `diff` is not bounded), `get` for the preview and render \
         (which then compile and render the version, part of the web column).\n",
    );
    Ok(out)
}

/// The clients of the flood, each on its own connection.
const FLOOD_CLIENTS: usize = 50;

/// Prompts of the flood's catalog (any prompt's render reads one).
const FLOOD_PROMPTS: usize = 100;

/// A catalog of `FLOOD_PROMPTS` prompts at `url` with an admin: its token.
fn flood_catalog(url: &str) -> Result<String, String> {
    let mut catalog = Catalog::open(url).map_err(err)?.with_author("bench");
    for n in 0..FLOOD_PROMPTS {
        let draft = Draft {
            system: format!("You are assistant {n}. Hi {{{{name}}}}!\n"),
            message: "first".into(),
            ..Draft::default()
        };
        catalog
            .publish_or_create(&format!("f{n:03}"), &draft, None)
            .map_err(err)?;
    }
    let token = new_token();
    catalog
        .add_user("bench", Role::Admin, &token_hash(&token))
        .map_err(err)?;
    Ok(token)
}

/// `FLOOD_CLIENTS` clients at once, each sending `each` renders of a prompt
/// of its own through the API: requests per second over the whole flood,
/// p50 and p99 of a request, and how many answers were not 200.
fn flood(url: &str, each: usize) -> Result<(f64, f64, f64, usize), String> {
    let token = flood_catalog(url)?;
    let server = Server::bind(Settings::new(url).listen("127.0.0.1:0".parse().map_err(err)?))
        .map_err(err)?;
    let base = format!("http://{}", server.local_addr());
    std::thread::spawn(move || server.run());
    let started = Instant::now();
    let clients: Vec<_> = (0..FLOOD_CLIENTS)
        .map(|c| {
            let (base, token) = (base.clone(), token.clone());
            std::thread::spawn(move || -> Result<(Vec<f64>, usize), String> {
                let agent: ureq::Agent = ureq::Agent::config_builder()
                    .http_status_as_error(false)
                    .build()
                    .into();
                let url = format!("{base}/api/v1/prompts/f{:03}/render", c % FLOOD_PROMPTS);
                let mut samples = Vec::with_capacity(each);
                let mut failed = 0;
                for _ in 0..each {
                    let start = Instant::now();
                    let mut answer = agent
                        .post(&url)
                        .header("authorization", format!("Bearer {token}"))
                        .content_type("application/json")
                        .send(r#"{"vars":{"name":"Ada"}}"#)
                        .map_err(err)?;
                    let _ = answer.body_mut().read_to_string().map_err(err)?;
                    samples.push(start.elapsed().as_secs_f64());
                    failed += usize::from(answer.status() != 200);
                }
                Ok((samples, failed))
            })
        })
        .collect();
    let mut all = Vec::with_capacity(FLOOD_CLIENTS * each);
    let mut failed = 0;
    for client in clients {
        let (samples, client_failed) = client.join().map_err(|_| "a client panicked")??;
        all.extend(samples);
        failed += client_failed;
    }
    let took = started.elapsed().as_secs_f64();
    all.sort_by(f64::total_cmp);
    let at = |q: f64| all[((all.len() as f64 * q).ceil() as usize).clamp(1, all.len()) - 1];
    Ok((all.len() as f64 / took, at(0.50), at(0.99), failed))
}

/// The flood rows, SQLite and PostgreSQL.
fn flood_rows(quick: bool) -> String {
    let each = if quick { 40 } else { 200 };
    let mut out = format!(
        "\n### The flood: {FLOOD_CLIENTS} clients at once on both stores\n\n\
         Each client sends {each} `POST /api/v1/prompts/{{id}}/render` (a bearer token looked up, \
         the version read, rendered) one after another over its own kept-alive connection, all \
         {FLOOD_CLIENTS} at once, against a catalog of {FLOOD_PROMPTS} prompts; the console's \
         defaults (a pool of {} catalog connections that requests wait for, {} connections \
         served at once).\n\n\
         | store | requests | requests/s | p50 ms | p99 ms | not 200 |\n\
         |---|--:|--:|--:|--:|--:|\n",
        promptpack_console::DEFAULT_POOL_SIZE,
        promptpack_console::DEFAULT_MAX_CONNECTIONS,
    );
    let sqlite = tempfile::tempdir().map_err(err).and_then(|dir| {
        flood(
            &format!("sqlite:{}", dir.path().join("flood.db").display()),
            each,
        )
    });
    let cluster = promptpack_pgtest::Cluster::start();
    let postgres = cluster
        .as_ref()
        .map_err(|e| e.to_string())
        .and_then(|cluster| cluster.create_database("flood"))
        .and_then(|url| flood(&url, each));
    for (store, result) in [("SQLite", sqlite), ("PostgreSQL", postgres)] {
        match result {
            Ok((rate, p50, p99, failed)) => out.push_str(&format!(
                "| {store} | {} | {rate:.0} | {} | {} | {failed} |\n",
                FLOOD_CLIENTS * each,
                ms(p50),
                ms(p99)
            )),
            Err(e) => out.push_str(&format!("| {store} | FAILED: {e} | | | | |\n")),
        }
    }
    out
}

/// The section's Markdown.
pub fn section(quick: bool) -> String {
    let mut out = match run(quick) {
        Ok(text) => text,
        Err(e) => format!("## Console\n\nFAILED: {e}\n"),
    };
    out.push_str(&flood_rows(quick));
    out
}
