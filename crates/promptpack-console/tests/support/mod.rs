//! What the console's tests share: a catalog with three users and a few
//! prompts, a console serving it on a loopback port of its own, and an
//! HTTP client that does not follow redirects (a test reads them).
#![allow(dead_code)]

use promptpack_catalog::{Access, Catalog, Draft, Role, token_hash};
use promptpack_console::{Server, Settings, new_token};
use serde_json::Value;

/// A console over a fresh catalog, serving on `base`.
pub struct Console {
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    /// The catalog's URL.
    pub db: String,
    /// Tokens of the three users, `ada` (admin), `ed` (editor), `vi` (viewer).
    pub admin: String,
    pub editor: String,
    pub viewer: String,
    _dir: Option<tempfile::TempDir>,
}

/// Which store a console runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Store {
    Sqlite,
    Postgres,
}

/// The prompts every console starts with. `greet` has two versions, the
/// second with a declared example; `xss` holds markup that must stay text.
pub const GREET_V1: &str = "Hello {{name}}.\n";
pub const GREET_V2: &str = "---\ndescription: Greets a user\nvars:\n  name:\n    kind: text\n    example: Ada\n  formal:\n    kind: flag\n    example: true\nexamples:\n  casual:\n    name: Bo\n    formal: false\n---\n{{#if formal}}Good day, {{name}}.{{else}}Hi {{name}}!{{/if}}\n";
pub const XSS: &str = "---\ndescription: <script>window.__pwned = 1</script>\n---\n<script>window.__pwned = 2</script> <b>bold</b> {{x}}\n";

/// A prompt that declares what the model may call and what it must answer:
/// a tool and a response, markup in their descriptions that must stay text.
/// Tests publish it (`Console::publish_triage`); the consoles do not start
/// with it.
pub const TRIAGE_V1: &str = "---\ndescription: Triages a support ticket\nresponse:\n  category: [bug, billing]\n  summary: string, the ticket in one line\n  order?: string, the order <script>window.__pwned = 5</script> named\ntools:\n  lookup:\n    description: Finds an order <img src=x onerror=window.__pwned=6>\n    parameters:\n      order: string, the order number\n  escalate: Hands the ticket to a person\n---\nTriage the ticket: {{ticket}}\n";

/// The contract of a program whose `triage` reads a category (`bug` or
/// `billing`) and a summary, and calls `lookup(order)` and `escalate()`:
/// [`TRIAGE_V1`] fits it.
pub const TRIAGE_CONTRACT: &str = r#"{"format": 1, "prompts": {"triage": {"variables": [{"name": "ticket", "kind": "text"}],
    "response": {"type": "object", "properties": {
        "category": {"type": "string", "enum": ["bug", "billing"]},
        "summary": {"type": "string"}},
        "required": ["category", "summary"], "additionalProperties": false},
    "tools": [{"type": "function", "function": {"name": "lookup", "parameters": {
        "type": "object", "properties": {"order": {"type": "string"}},
        "required": ["order"], "additionalProperties": false}, "strict": true}},
        {"type": "function", "function": {"name": "escalate", "parameters": {
        "type": "object", "properties": {}, "required": [], "additionalProperties": false}, "strict": true}}]}}}"#;

impl Console {
    /// A console on a SQLite file or a new PostgreSQL database.
    pub fn start(store: Store, name: &str) -> Console {
        Console::start_with(store, name, |settings| settings)
    }

    /// [`Console::start`] with its settings changed by `configure`.
    pub fn start_with(
        store: Store,
        name: &str,
        configure: impl FnOnce(Settings) -> Settings,
    ) -> Console {
        let (db, dir) = new_store(store, name);
        Console::start_on(db, dir, configure)
    }

    /// The catalog a console starts with ([`Console::start`]) and no
    /// console serving it (`base` is empty): for a server of another kind
    /// over it (the relay), whose connections to the catalog are then the
    /// only ones.
    pub fn catalog_only(store: Store, name: &str) -> Console {
        let (db, dir) = new_store(store, name);
        Console::fill(db, dir)
    }
}

/// A new SQLite file (in the folder returned) or PostgreSQL database.
fn new_store(store: Store, name: &str) -> (String, Option<tempfile::TempDir>) {
    match store {
        Store::Sqlite => {
            let dir = tempfile::tempdir().expect("a temporary folder");
            let db = format!("sqlite:{}", dir.path().join("catalog.db").display());
            (db, Some(dir))
        }
        Store::Postgres => {
            let shared = promptpack_pgtest::shared().unwrap_or_else(|e| panic!("PostgreSQL: {e}"));
            let db = shared
                .unique_database(&name[..name.len().min(24)])
                .unwrap_or_else(|e| panic!("PostgreSQL database: {e}"));
            (db, None)
        }
    }
}

impl Console {
    /// A console over a new catalog at `db` (a database that exists and is
    /// empty), kept with `dir` (the folder of a SQLite file).
    pub fn start_on(
        db: String,
        dir: Option<tempfile::TempDir>,
        configure: impl FnOnce(Settings) -> Settings,
    ) -> Console {
        let mut console = Console::fill(db, dir);
        let settings =
            configure(Settings::new(console.db.clone()).listen("127.0.0.1:0".parse().unwrap()));
        let server = Server::bind(settings).expect("the console binds");
        console.base = format!("http://{}", server.local_addr());
        std::thread::spawn(move || server.run());
        console
    }

    /// A new catalog at `db` with the users and prompts every test starts
    /// with, and no server.
    fn fill(db: String, dir: Option<tempfile::TempDir>) -> Console {
        let mut catalog = Catalog::open(&db)
            .expect("a new catalog")
            .with_author("setup");
        let mut token = |name: &str, role: Role| {
            let token = new_token();
            catalog
                .add_user(name, role, &token_hash(&token))
                .expect("a user");
            token
        };
        let (admin, editor, viewer) = (
            token("ada", Role::Admin),
            token("ed", Role::Editor),
            token("vi", Role::Viewer),
        );
        for (id, system, message) in [
            ("greet", GREET_V1, "first"),
            ("greet", GREET_V2, "declare the variables"),
            ("xss", XSS, "<i>markup</i> in a message"),
        ] {
            let draft = Draft {
                system: system.to_string(),
                message: message.to_string(),
                ..Draft::default()
            };
            catalog
                .publish_or_create(id, &draft, None)
                .expect("a version");
        }
        catalog
            .set_label("greet", "production", 1)
            .expect("a label");
        // `letter` pins revision 1 of `sign-off`, which has a second one
        // since: its snippets are behind.
        catalog
            .publish_snippet("sign-off", "Regards.\n", "first")
            .expect("a snippet");
        let letter = Draft {
            system: "Dear {{name}},\n{{snippet:sign-off}}\n".to_string(),
            message: "a letter".to_string(),
            ..Draft::default()
        };
        catalog
            .publish_or_create("letter", &letter, None)
            .expect("a version");
        catalog
            .publish_snippet("sign-off", "Kind regards.\n", "warmer")
            .expect("a revision");
        Console {
            base: String::new(),
            db,
            admin,
            editor,
            viewer,
            _dir: dir,
        }
    }
}

impl Console {
    /// Registers a build of `process` following `label`, as its live handle
    /// would: a binary that knows `greet` with the variable `name` only, so
    /// that v1 fits it and v2 (which adds the flag `formal`) does not.
    pub fn register_name_only_build(&self, process: &str, label: &str) {
        let contract = promptpack_catalog::Contract::from_json(
            "contract.json",
            r#"{"format": 1, "prompts": {"greet": {"variables": [{"name": "name", "kind": "text"}]}}}"#,
        )
        .expect("a contract");
        promptpack_catalog::Catalog::connect_with(
            &self.db,
            Access::Write,
            &promptpack_catalog::Timeouts::DEFAULT,
        )
        .and_then(|mut catalog| {
            catalog.register_build(&promptpack_catalog::BuildRegistration {
                process: process.to_string(),
                label: label.to_string(),
                contract,
            })
        })
        .expect("a registration");
    }

    /// Publishes `system` as the next version of `triage` (creating it),
    /// as `setup`: its number.
    pub fn publish_triage(&self, system: &str, message: &str) -> u32 {
        let draft = Draft {
            system: system.to_string(),
            message: message.to_string(),
            ..Draft::default()
        };
        let (version, _) = self
            .catalog()
            .publish_or_create("triage", &draft, None)
            .expect("a version of triage");
        version.version
    }

    /// Registers a build of `process` following `label` whose binary reads
    /// `triage`'s answers and calls as [`TRIAGE_CONTRACT`] says.
    pub fn register_triage_build(&self, process: &str, label: &str) {
        let contract = promptpack_catalog::Contract::from_json("contract.json", TRIAGE_CONTRACT)
            .expect("a contract");
        self.catalog()
            .register_build(&promptpack_catalog::BuildRegistration {
                process: process.to_string(),
                label: label.to_string(),
                contract,
            })
            .expect("a registration");
    }

    /// Another console over this one's catalog, with its settings changed
    /// by `configure`: a second console behind a load balancer, or this one
    /// restarted (a new server keeps nothing of the old one's memory). It
    /// holds no folder of its own: `self` must outlive it.
    pub fn another(&self, configure: impl FnOnce(Settings) -> Settings) -> Console {
        let settings =
            configure(Settings::new(self.db.clone()).listen("127.0.0.1:0".parse().unwrap()));
        let server = Server::bind(settings).expect("another console binds");
        let base = format!("http://{}", server.local_addr());
        std::thread::spawn(move || server.run());
        Console {
            base,
            db: self.db.clone(),
            admin: self.admin.clone(),
            editor: self.editor.clone(),
            viewer: self.viewer.clone(),
            _dir: None,
        }
    }

    /// A client of another server over this catalog at `base` (a relay),
    /// with the same users' tokens. `self` must outlive it.
    pub fn client_at(&self, base: String) -> Console {
        Console {
            base,
            db: self.db.clone(),
            admin: self.admin.clone(),
            editor: self.editor.clone(),
            viewer: self.viewer.clone(),
            _dir: None,
        }
    }

    /// A writable connection to the console's catalog, as `promptpack
    /// console user` opens it.
    pub fn catalog(&self) -> Catalog {
        Catalog::connect_with(
            &self.db,
            Access::Write,
            &promptpack_catalog::Timeouts::DEFAULT,
        )
        .expect("the catalog")
        .with_author("setup")
    }
}

/// An answer: its status, `Location` and `Set-Cookie` headers and body.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub location: Option<String>,
    pub set_cookie: Option<String>,
    pub content_type: String,
    pub body: String,
    /// Every header, names in lower case, in the order sent.
    pub headers: Vec<(String, String)>,
}

impl Answer {
    /// The body as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }

    /// The first value of header `name` (lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }

    /// The `error.code` of a JSON error.
    pub fn code(&self) -> String {
        self.json()["error"]["code"]
            .as_str()
            .unwrap_or("")
            .to_string()
    }
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .max_redirects_will_error(false)
        .build()
        .into()
}

fn answer(result: Result<ureq::http::Response<ureq::Body>, ureq::Error>) -> Answer {
    let mut response = result.expect("the server answers");
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    let (location, set_cookie) = (header("location"), header("set-cookie"));
    let content_type = header("content-type").unwrap_or_default();
    let headers = response
        .headers()
        .iter()
        .map(|(name, value)| {
            let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
            (name.as_str().to_string(), value)
        })
        .collect();
    let body = response
        .body_mut()
        .with_config()
        .limit(64 << 20)
        .read_to_string()
        .unwrap_or_default();
    Answer {
        status: response.status().as_u16(),
        location,
        set_cookie,
        content_type,
        body,
        headers,
    }
}

/// Headers of a request: a bearer token, a cookie, or none.
pub enum Auth<'a> {
    None,
    Bearer(&'a str),
    Cookie(&'a str),
}

impl Auth<'_> {
    fn header(&self) -> Option<(&'static str, String)> {
        match self {
            Auth::None => None,
            Auth::Bearer(token) => Some(("authorization", format!("Bearer {token}"))),
            Auth::Cookie(cookie) => Some(("cookie", cookie.to_string())),
        }
    }
}

impl Console {
    /// `GET path`.
    pub fn get(&self, path: &str, auth: Auth<'_>) -> Answer {
        let mut request = agent().get(format!("{}{path}", self.base));
        if let Some((name, value)) = auth.header() {
            request = request.header(name, value);
        }
        answer(request.call())
    }

    /// `METHOD path` with a JSON body (`DELETE` without one).
    pub fn send(&self, method: &str, path: &str, auth: Auth<'_>, body: &Value) -> Answer {
        let url = format!("{}{path}", self.base);
        let agent = agent();
        let header = auth.header();
        macro_rules! with_auth {
            ($request:expr) => {{
                let mut request = $request;
                if let Some((name, value)) = &header {
                    request = request.header(*name, value);
                }
                request
            }};
        }
        let result = match method {
            "POST" => with_auth!(agent.post(&url))
                .content_type("application/json")
                .send(body.to_string()),
            "PUT" => with_auth!(agent.put(&url))
                .content_type("application/json")
                .send(body.to_string()),
            "DELETE" => with_auth!(agent.delete(&url)).call(),
            other => panic!("no method {other} in the tests"),
        };
        answer(result)
    }

    /// A form `POST` of `fields`, url-encoded.
    pub fn post_form(&self, path: &str, auth: Auth<'_>, fields: &[(&str, &str)]) -> Answer {
        self.post_form_with(path, auth, fields, &[])
    }

    /// [`Console::post_form`] with more request `headers` (`Origin`, …).
    pub fn post_form_with(
        &self,
        path: &str,
        auth: Auth<'_>,
        fields: &[(&str, &str)],
        headers: &[(&str, &str)],
    ) -> Answer {
        let mut request = agent().post(format!("{}{path}", self.base));
        if let Some((name, value)) = auth.header() {
            request = request.header(name, value);
        }
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let body: Vec<String> = fields
            .iter()
            .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
            .collect();
        answer(
            request
                .content_type("application/x-www-form-urlencoded")
                .send(body.join("&")),
        )
    }

    /// Signs in with `token`: the session cookie (`name=value`).
    pub fn sign_in(&self, token: &str) -> String {
        let answer = self.post_form("/login", Auth::None, &[("token", token), ("next", "/")]);
        assert_eq!(answer.status, 303, "{}", answer.body);
        let cookie = answer.set_cookie.expect("a session cookie");
        cookie.split(';').next().unwrap_or("").to_string()
    }
}

/// `text` form-encoded.
pub fn encode(text: &str) -> String {
    let mut out = String::new();
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// The value of hidden input `name` in a page.
pub fn hidden(page: &str, name: &str) -> String {
    let marker = format!("name=\"{name}\" value=\"");
    let start = page
        .find(&marker)
        .unwrap_or_else(|| panic!("no hidden `{name}` in the page"))
        + marker.len();
    page[start..].split('"').next().unwrap_or("").to_string()
}
