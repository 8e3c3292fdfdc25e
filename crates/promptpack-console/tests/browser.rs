//! The console in a real headless Chromium (Debian's `chromium`, driven
//! through `chromedriver` with fantoccini), used as a person would: sign in,
//! the list, a prompt, a diff, a preview, an edit with an error, fixed and
//! published, `production` moved behind its confirmation and rolled back;
//! a snippet edited, refused for the prompt it would break, published and
//! its including prompt's pins upgraded; a prompt's response and tools
//! listed, a bad schema shown at its line, a changed response published
//! and its change in the diff, at a desk's width and a phone's;
//! the API answers the same; the builds panel says which version a
//! registered build serves and which it refuses, and why; a stored
//! `<script>` never runs; another site
//! on another port can neither frame a signed-in page nor sign the browser
//! in as its own user. Each page is
//! written as a PNG under `target/tmp/console-screenshots/` to look at.
//!
//! Chromium and chromedriver must be installed (`.ci/run` and
//! `scripts/test.sh` install them): without them this test fails.

#[path = "browser/snippet.rs"]
mod snippet;
mod support;
#[path = "browser/tools.rs"]
mod tools;

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::json;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;
use support::{Auth, Console, Store};

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// chromedriver on a port of its own, killed when dropped.
struct Driver {
    child: Child,
    url: String,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

fn start_driver() -> Driver {
    for tool in [CHROMIUM, CHROMEDRIVER] {
        assert!(
            std::path::Path::new(tool).exists(),
            "{tool} is missing: install Debian's chromium and chromium-driver (scripts/test.sh does)"
        );
    }
    let port = free_port();
    let mut child = Command::new(CHROMEDRIVER)
        .arg(format!("--port={port}"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromedriver starts");
    // Ready when it says so ("…started successfully on port N"): its output
    // is read, not a port polled against a clock. The rest of its output is
    // drained on a thread, so that it never blocks on a full pipe.
    let mut lines = BufReader::new(child.stdout.take().expect("its stdout")).lines();
    loop {
        match lines.next() {
            Some(Ok(line)) if line.contains("started successfully") => break,
            Some(Ok(_)) => {}
            Some(Err(e)) => panic!("chromedriver's output: {e}"),
            None => panic!("chromedriver ended before it listened"),
        }
    }
    std::thread::spawn(move || lines.for_each(drop));
    let url = format!("http://127.0.0.1:{port}");
    Driver { child, url }
}

async fn browser(driver: &Driver, profile: &std::path::Path) -> Client {
    let mut capabilities = serde_json::Map::new();
    capabilities.insert(
        "goog:chromeOptions".to_string(),
        json!({
            "binary": CHROMIUM,
            "args": [
                "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-quic", "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--window-size=1280,1000",
                format!("--user-data-dir={}", profile.display()),
            ],
        }),
    );
    let connector = hyper_util::client::legacy::connect::HttpConnector::new();
    ClientBuilder::new(connector)
        .capabilities(capabilities)
        .connect(&driver.url)
        .await
        .expect("a Chromium session")
}

/// Where the screenshots go: `target/tmp/console-screenshots/`.
fn screenshots() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("console-screenshots");
    std::fs::create_dir_all(&dir).expect("the screenshot folder");
    dir
}

async fn shot(client: &Client, name: &str) {
    let png = client.screenshot().await.expect("a screenshot");
    std::fs::write(screenshots().join(format!("{name}.png")), png)
        .expect("the screenshot is written");
}

async fn text_of(client: &Client, css: &str) -> String {
    match client.find(Locator::Css(css)).await {
        Ok(element) => element.text().await.expect("its text"),
        Err(e) => {
            let page = client.source().await.unwrap_or_default();
            panic!("no `{css}` on {}: {e}\n{page}", path(client).await)
        }
    }
}

async fn click(client: &Client, css: &str) {
    client
        .find(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("no `{css}` to click: {e}"))
        .click()
        .await
        .expect("a click");
}

/// Clicks `css`, then waits until `ready` is on the page: an element only
/// the page the click leads to has, with no deadline.
async fn click_to(client: &Client, css: &str, ready: &str) {
    click(client, css).await;
    // No deadline: how fast a page comes is not the test's to judge; a
    // page that never comes is a hang, the test runner's to report.
    while client.find(Locator::Css(ready)).await.is_err() {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn path(client: &Client) -> String {
    let url = client.current_url().await.expect("the URL");
    match url.query() {
        Some(query) => format!("{}?{query}", url.path()),
        None => url.path().to_string(),
    }
}

/// Sets a textarea's text as typing would end up (`send_keys` of a whole
/// prompt is slow and turns braces into key events).
async fn set_text(client: &Client, id: &str, text: &str) {
    client
        .execute(
            "document.getElementById(arguments[0]).value = arguments[1];",
            vec![json!(id), json!(text)],
        )
        .await
        .expect("the text is set");
}

async fn walk(console: &Console, client: &Client) {
    // Sign in.
    client
        .goto(&format!("{}/", console.base))
        .await
        .expect("the console");
    assert!(
        path(client).await.starts_with("/login"),
        "not sent to sign in"
    );
    shot(client, "00-login").await;
    client
        .find(Locator::Css("input[name=token]"))
        .await
        .expect("the token field")
        .send_keys(&console.admin)
        .await
        .expect("the token is typed");
    click_to(client, "form button[type=submit]", "#prompts").await;

    // The list → a prompt.
    assert_eq!(path(client).await, "/");
    let list = text_of(client, "#prompts").await;
    assert!(
        list.contains("greet")
            && list.contains("Greets a user")
            && list.contains("production → v1"),
        "{list}"
    );
    shot(client, "01-list").await;
    click_to(client, "#prompts a[href='/prompts/greet']", "#versions").await;
    assert_eq!(path(client).await, "/prompts/greet");
    let versions = text_of(client, "#versions").await;
    assert!(versions.contains("declare the variables"), "{versions}");
    shot(client, "02-prompt").await;

    // The diff of two versions, with the example rendered on both sides.
    click_to(client, "#diff-latest", "form[action='/prompts/greet/diff']").await;
    assert_eq!(path(client).await, "/prompts/greet/diff?from=1&to=2");
    let body = text_of(client, "main").await;
    assert!(body.contains("casual") && body.contains("Hi Bo!"), "{body}");
    shot(client, "03-diff").await;

    // A preview with an example.
    client
        .goto(&format!(
            "{}/prompts/greet/preview?version=2&from=example&example=casual",
            console.base
        ))
        .await
        .expect("the preview");
    assert_eq!(text_of(client, "#system-casual").await, "Hi Bo!");
    shot(client, "04-preview").await;

    // An edit with an error, shown at its line and column.
    client
        .goto(&format!("{}/prompts/greet", console.base))
        .await
        .expect("the prompt");
    click_to(client, "#edit", "#edit-form").await;
    let broken = support::GREET_V2.replace("{{/if}}", "");
    set_text(client, "system", &broken).await;
    click_to(client, "#check", "#diagnostics li.error").await;
    let diagnostics = text_of(client, "#diagnostics").await;
    assert!(
        diagnostics.contains("templates/greet/system.md:15:1")
            && diagnostics.contains("unclosed_block"),
        "{diagnostics}"
    );
    shot(client, "05-edit-error").await;

    // Fixed, and published.
    let fixed = support::GREET_V2.replace("Hi {{name}}!", "Hey there, {{name}}!");
    set_text(client, "system", &fixed).await;
    click_to(client, "#check", "#check-ok").await;
    assert!(text_of(client, "#diagnostics").await.contains("No errors"));
    client
        .find(Locator::Id("message"))
        .await
        .expect("the message field")
        .send_keys("friendlier")
        .await
        .expect("typed");
    click_to(client, "#publish", "#versions").await;
    assert!(
        path(client).await.starts_with("/prompts/greet"),
        "{}",
        path(client).await
    );
    assert!(text_of(client, "#versions").await.contains("friendlier"));
    assert_eq!(text_of(client, "#flash").await, "Published greet v3.");
    shot(client, "06-published").await;

    // `production` moved to v3 behind its confirmation.
    move_production(console, client, "3", "07-confirm").await;
    assert_eq!(
        text_of(client, "#label-production td:nth-child(2)").await,
        "v3"
    );
    shot(client, "08-moved").await;
    let served = console.send(
        "POST",
        "/api/v1/prompts/greet/render",
        Auth::Bearer(&console.viewer),
        &json!({"label": "production", "vars": {"name": "Ada", "formal": false}}),
    );
    assert_eq!(
        served.json()["system"],
        "Hey there, Ada!",
        "{}",
        served.body
    );

    // Rolled back: moved back to v1.
    move_production(console, client, "1", "09-rollback-confirm").await;
    assert_eq!(
        text_of(client, "#label-production td:nth-child(2)").await,
        "v1"
    );
    assert!(
        text_of(client, "#audit")
            .await
            .contains("production: v3 → v1")
    );
    shot(client, "10-rolled-back").await;
    let served = console.send(
        "POST",
        "/api/v1/prompts/greet/render",
        Auth::Bearer(&console.viewer),
        &json!({"label": "production", "vars": {"name": "Ada"}}),
    );
    assert_eq!(served.json()["system"], "Hello Ada.");
    let history = console
        .get(
            "/api/v1/prompts/greet/history",
            Auth::Bearer(&console.viewer),
        )
        .json();
    assert_eq!(
        history["audit"]
            .as_array()
            .and_then(|a| a.last())
            .map(|e| e["author"].clone()),
        Some(json!("ada"))
    );
}

async fn move_production(console: &Console, client: &Client, version: &str, name: &str) {
    client
        .goto(&format!("{}/prompts/greet", console.base))
        .await
        .expect("the prompt");
    client
        .find(Locator::Css("#label-production select[name=version]"))
        .await
        .expect("the version list")
        .select_by_value(version)
        .await
        .expect("a version chosen");
    click_to(client, "#label-production button", "#confirm-move").await;
    assert!(
        path(client)
            .await
            .starts_with("/prompts/greet/move?label=production")
    );
    let page = text_of(client, "main").await;
    assert!(page.contains("What changes"), "{page}");
    shot(client, name).await;
    click_to(client, "#confirm", "#labels").await;
    assert_eq!(path(client).await, "/prompts/greet");
}

/// Two builds of a service whose binary knows `greet` with `name` only
/// register: the one following `production` (v1, which fits) serves it; the
/// one following `latest` (a version that adds `formal`) refuses it, as its
/// live handle would, naming the code and the variable.
async fn builds_panel_says_what_each_build_serves(console: &Console, client: &Client) {
    for label in ["production", "latest"] {
        console.register_name_only_build(&format!("agent-service ({label})"), label);
    }
    client
        .goto(&format!("{}/prompts/greet", console.base))
        .await
        .expect("the prompt");
    let builds = text_of(client, "#builds").await;
    let row = |label: &str| {
        builds
            .lines()
            .find(|line| line.contains(&format!("agent-service ({label})")))
            .unwrap_or_else(|| panic!("no build of {label}: {builds}"))
            .to_string()
    };
    assert!(
        row("production").contains("v1") && !row("production").contains("refuses"),
        "{builds}"
    );
    assert!(
        row("latest").contains("refuses v") && row("latest").contains("contract_violation"),
        "{builds}"
    );
    client
        .execute("document.getElementById('builds').scrollIntoView()", vec![])
        .await
        .expect("scrolled to the builds panel");
    shot(client, "12-builds").await;
}

async fn stored_script_never_runs(console: &Console, client: &Client) {
    // The last page renders the stored script with a value that is markup
    // too: both must show as text.
    let value = "%3Cimg%20src%3Dx%20onerror%3Dwindow.__pwned%3D3%3E";
    let preview = format!("/prompts/xss/preview?from=form&var.x={value}");
    for page in ["/", "/prompts/xss", "/prompts/xss/edit", preview.as_str()] {
        client
            .goto(&format!("{}{page}", console.base))
            .await
            .expect("the page");
        let pwned = client
            .execute(
                "return window.__pwned === undefined ? null : window.__pwned;",
                vec![],
            )
            .await
            .expect("a script of the test runs");
        assert_eq!(
            pwned,
            serde_json::Value::Null,
            "the stored script ran on {page}"
        );
    }
    let shown = text_of(client, "main").await;
    assert!(
        shown.contains(
            "<script>window.__pwned = 2</script> <b>bold</b> <img src=x onerror=window.__pwned=3>"
        ),
        "{shown}"
    );
    shot(client, "11-escaped-script").await;
}

/// A conversation published through the API: its preview lists each
/// message under its role (an example call and a tool result with their
/// tool's name, a history's call with its id), the history given among
/// them, markup in a message shown as text; its diff compares
/// `messages.md`.
async fn conversation_previews_as_messages(console: &Console, client: &Client) {
    let messages = "---\nvars:\n  history: { kind: messages, description: The chat so far }\n---\n\
        {{#if examples}}\n{{#user}}\nWhat is 2 + 2?\n{{/user}}\n{{#assistant}}\nLet me compute it.\n{{/assistant}}\n\
        {{#call calculator}}\n{\"expression\": \"2 + 2\"}\n{{/call}}\n\
        {{#tool calculator}}\n4\n{{/tool}}\n{{/if}}\n{{history}}\n{{#user}}\n{{question}}\n{{/user}}";
    const SYSTEM: &str = "---\ntools:\n  calculator:\n    description: Works a sum out\n    \
        parameters:\n      expression: string, the sum to work out\n---\nYou are {{name}}, a careful tutor.";
    for (text, why) in [
        (messages.to_string(), "a conversation"),
        (
            messages.replace("{{question}}", "Question: {{question}}"),
            "reworded",
        ),
    ] {
        let published = console.send(
            "POST",
            "/api/v1/prompts/chat/versions",
            Auth::Bearer(&console.editor),
            &json!({"system": SYSTEM, "messages": text, "message": why}),
        );
        assert!(
            published.status == 200 || published.status == 201,
            "{}",
            published.body
        );
    }
    let values = json!({
        "name": "Ada",
        "examples": true,
        "history": [
            {"role": "user", "content": "Hi, I am <b>Bo</b> <img src=x onerror=window.__pwned=4>"},
            {"role": "assistant", "content": "Hello Bo. What shall we count?"},
            {"role": "call", "name": "calculator", "content": "{\"expression\": \"1 + 1\"}", "id": "call_9"},
            {"role": "tool", "name": "calculator", "content": "2", "id": "call_9"},
        ],
        "question": "And 3 + 3?",
    });
    let query = format!(
        "/prompts/chat/preview?version=1&from=json&json={}",
        support::encode(&values.to_string())
    );
    client
        .goto(&format!("{}{query}", console.base))
        .await
        .expect("the preview");
    let listed = client
        .find_all(Locator::Css("#conversation-values li.message"))
        .await
        .expect("the messages");
    let mut roles = Vec::new();
    for message in listed {
        let class = message.attr("class").await.expect("its class");
        roles.push(class.unwrap_or_default().replace("message role-", ""));
    }
    assert_eq!(
        roles,
        [
            "user",
            "assistant",
            "call",
            "tool",
            "user",
            "assistant",
            "call",
            "tool",
            "user"
        ],
        "each message under its role, in order"
    );
    assert_eq!(
        text_of(client, "#conversation-values li.role-call .tool-name").await,
        "calculator"
    );
    let ids = client
        .find_all(Locator::Css("#conversation-values li.role-tool .call-id"))
        .await
        .expect("the ids");
    assert_eq!(ids.len(), 1, "the history's result shows its call's id");
    assert_eq!(ids[0].text().await.expect("its text"), "id call_9");
    assert_eq!(
        text_of(client, "#system-values").await,
        "You are Ada, a careful tutor."
    );
    let shown = text_of(client, "#conversation-values").await;
    assert!(
        shown.contains("Hi, I am <b>Bo</b> <img src=x onerror=window.__pwned=4>"),
        "markup in a message is text: {shown}"
    );
    let pwned = client
        .execute(
            "return window.__pwned === undefined ? null : window.__pwned;",
            vec![],
        )
        .await
        .expect("a script of the test runs");
    assert_eq!(pwned, serde_json::Value::Null, "the history's markup ran");
    // The screenshot shows the conversation, not the values form above it.
    client
        .execute(
            "document.getElementById('render-values').scrollIntoView();",
            vec![],
        )
        .await
        .expect("scrolled to the render");
    shot(client, "19-conversation-preview").await;

    client
        .goto(&format!("{}/prompts/chat/diff?from=1&to=2", console.base))
        .await
        .expect("the diff");
    let body = text_of(client, "main").await;
    assert!(
        body.contains("messages.md") && body.contains("Question: {{question}}"),
        "{body}"
    );
    shot(client, "20-conversation-diff").await;
}

/// A site of another origin on loopback (another port: the same site for
/// `SameSite` cookies, so only the console's headers keep it out): `path`
/// → page, each answered whole.
fn other_site(pages: Vec<(&'static str, String)>) -> String {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let base = format!("http://{}", listener.local_addr().expect("its address"));
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).is_ok_and(|n| n == 1) {
                head.push(byte[0]);
            }
            let head = String::from_utf8_lossy(&head);
            let asked = head.split_whitespace().nth(1).unwrap_or("/");
            let (status, body) = match pages.iter().find(|(path, _)| *path == asked) {
                Some((_, page)) => ("200 OK", page.clone()),
                None => ("404 Not Found", String::new()),
            };
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\ncontent-type: text/html\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    base
}

/// A signed-in page framed by another port of the same host does not
/// render in the frame (`frame-ancestors 'none'`, `X-Frame-Options`); and a
/// sign-in form of that site does not sign the browser in as its user.
async fn another_site_neither_frames_nor_signs_in(console: &Console, client: &Client) {
    let confirm = format!(
        "{}/prompts/greet/move?label=production&version=2",
        console.base
    );
    let framing = format!(
        "<!doctype html><title>other</title><h1 id=other>another site</h1>\
         <iframe id=victim src=\"{confirm}\" width=900 height=500 \
         onload=\"document.title='loaded'\"></iframe>"
    );
    let login = format!(
        "<!doctype html><title>other</title><form id=csrf method=post action=\"{}/login\">\
         <input type=hidden name=token value=\"{}\"><input type=hidden name=next value=\"/\">\
         <button id=go type=submit>win a prize</button></form>",
        console.base, console.viewer
    );
    let site = other_site(vec![("/frame", framing), ("/login", login)]);

    // The confirmation renders at home, signed in.
    client.goto(&confirm).await.expect("the confirmation");
    assert!(text_of(client, "main").await.contains("What changes"));
    client
        .goto(&format!("{site}/frame"))
        .await
        .expect("the framing page");
    text_of(client, "#other").await;
    // The frame's load ends in the console's page or the browser's refusal;
    // bounded by a count, not a clock, should no load event come.
    for _ in 0..400 {
        if client.title().await.is_ok_and(|t| t == "loaded") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    shot(client, "16-framed-by-another-site").await;
    client.enter_frame(0).await.expect("into the frame");
    let framed = client.source().await.unwrap_or_default();
    let confirm_button = client.find(Locator::Css("#confirm")).await;
    client.enter_parent_frame().await.expect("out of the frame");
    assert!(
        confirm_button.is_err()
            && !framed.contains("What changes")
            && !framed.contains("promptpack console"),
        "the console rendered inside another site's frame: {framed}"
    );

    // A sign-in posted from that site is refused; the browser stays ada.
    client
        .goto(&format!("{site}/login"))
        .await
        .expect("the other site's form");
    click_to(client, "#go", "main").await;
    let refused = text_of(client, "main").await;
    assert!(refused.contains("another site"), "{refused}");
    shot(client, "17-cross-site-sign-in-refused").await;
    client
        .goto(&format!("{}/", console.base))
        .await
        .expect("the console");
    let who = text_of(client, "header .who").await;
    assert!(
        who.starts_with("ada"),
        "signed in as the other site's user: {who}"
    );

    // A page that is none: the console's own page, saying so once.
    client
        .goto(&format!("{}/prompts/nothing", console.base))
        .await
        .expect("a missing prompt");
    let missing = text_of(client, "main").await;
    assert_eq!(missing.matches("nothing").count(), 1, "{missing}");
    shot(client, "18-not-found").await;
}

fn main() {
    let driver = start_driver();
    let console = Console::start(Store::Sqlite, "browser");
    let profile = tempfile::tempdir().expect("a profile folder");
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    runtime.block_on(async {
        let client = browser(&driver, profile.path()).await;
        walk(&console, &client).await;
        snippet::snippet_edit(&console, &client).await;
        builds_panel_says_what_each_build_serves(&console, &client).await;
        stored_script_never_runs(&console, &client).await;
        conversation_previews_as_messages(&console, &client).await;
        tools::tools_and_response(&console, &client).await;
        another_site_neither_frames_nor_signs_in(&console, &client).await;
        client.close().await.expect("the browser closes");
    });
    println!("browser: ok (screenshots in {})", screenshots().display());
}
