//! The catalog's edges to files and its content rules: `export` stays
//! inside its folder, reads only regular files and writes all or nothing;
//! publish, snippet and import refuse alike, on every store, what the
//! catalog does not keep (text past `check`'s size limit, a NUL byte); a
//! stored version carries its whole front matter.
#![cfg(unix)]

use crate::support;

use promptpack_catalog::{Draft, ErrorCode, MAX_FILE_BYTES, Selector};
use std::os::unix::fs::symlink;
use std::path::Path;
use std::time::Duration;
use support::{TestStore, code, draft, write_tree};

/// A catalog with snippet `s` and prompt `p` (a user part, pinning `s`).
fn published(store: &TestStore) -> promptpack_catalog::Catalog {
    let mut catalog = store.open();
    catalog.init().expect("init");
    catalog
        .publish_snippet("s", "snippet text", "add s")
        .expect("snippet");
    let draft = Draft {
        user: Some("user text".into()),
        ..draft("Hi {{snippet:s}}")
    };
    catalog
        .publish_or_create("p", &draft, None)
        .expect("publish");
    catalog
}

/// Every path under `dir`, relative, sorted: what a failed export must
/// leave as it was.
fn listing(dir: &Path) -> Vec<String> {
    fn walk(dir: &Path, root: &Path, out: &mut Vec<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let shown = path
                .strip_prefix(root)
                .expect("inside")
                .display()
                .to_string();
            out.push(shown);
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                walk(&path, root, out);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn a_link_planted_at_a_temporary_name_is_not_written_through() {
    let store = TestStore::sqlite();
    let mut catalog = published(&store);
    let dir = tempfile::tempdir().expect("a folder");
    let (out, secret) = (dir.path().join("out"), dir.path().join("secret.md"));
    std::fs::write(&secret, "secret").expect("secret");
    std::fs::create_dir_all(out.join("templates/p")).expect("folders");
    std::fs::create_dir_all(out.join("snippets")).expect("folders");
    // The names the temporary files had: each a link to the secret.
    for planted in [
        "templates/p/system.md.promptpack-tmp",
        "templates/p/user.md.promptpack-tmp",
        "snippets/s.md.promptpack-tmp",
    ] {
        symlink(&secret, out.join(planted)).expect("a link");
    }
    catalog
        .export("p", &Selector::Latest, &out)
        .expect("export beside the links");
    assert_eq!(read(&secret), "secret");
    let system = out.join("templates/p/system.md");
    let meta = std::fs::symlink_metadata(&system).expect("system.md");
    assert!(meta.is_file(), "system.md is a regular file, not a link");
    assert_eq!(read(&system), "Hi {{snippet:s}}");
    assert_eq!(read(&out.join("snippets/s.md")), "snippet text");
    // No temporary file of the export's is left behind.
    let left: Vec<String> = listing(&out)
        .into_iter()
        .filter(|p| p.contains("promptpack-tmp"))
        .collect();
    assert_eq!(left.len(), 3, "only the planted links: {left:?}");
}

#[test]
fn a_link_where_a_folder_goes_is_refused_and_nothing_is_written() {
    for link in ["snippets", "templates", "templates/p"] {
        let store = TestStore::sqlite();
        let mut catalog = published(&store);
        let dir = tempfile::tempdir().expect("a folder");
        let (out, elsewhere) = (dir.path().join("out"), dir.path().join("elsewhere"));
        std::fs::create_dir_all(&elsewhere).expect("elsewhere");
        let at = out.join(link);
        std::fs::create_dir_all(at.parent().expect("a parent")).expect("folders");
        symlink(&elsewhere, &at).expect("a link");
        let before = listing(&out);
        let error = catalog
            .export("p", &Selector::Latest, &out)
            .expect_err("a link in the way");
        assert_eq!(error.code(), ErrorCode::OutsideRoot, "{link}: {error}");
        assert!(error.to_string().contains(link), "{link}: {error}");
        assert_eq!(listing(&elsewhere), Vec::<String>::new(), "{link}");
        assert_eq!(listing(&out), before, "{link}");
    }
}

#[test]
fn a_fifo_in_the_target_is_refused_without_waiting_on_it() {
    let store = TestStore::sqlite();
    let mut catalog = published(&store);
    let dir = tempfile::tempdir().expect("a folder");
    let out = dir.path().join("out");
    std::fs::create_dir_all(out.join("templates/p")).expect("folders");
    let fifo = out.join("templates/p/system.md");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo");
    assert!(made.success());
    let (sender, receiver) = std::sync::mpsc::channel();
    let target = out.clone();
    std::thread::spawn(move || {
        let result = catalog.export("p", &Selector::Latest, &target);
        let _ = sender.send(result.map_err(|e| (e.code(), e.to_string())));
    });
    // A guard against the hang this test is about, not a timing: export
    // returns at once, or never.
    let result = receiver
        .recv_timeout(Duration::from_secs(120))
        .expect("export returns rather than waiting on the FIFO");
    let (code, message) = result.expect_err("a FIFO where a file goes");
    assert_eq!(code, ErrorCode::Io, "{message}");
    assert!(message.contains("a FIFO"), "{message}");
    assert_eq!(
        listing(&out),
        ["templates", "templates/p", "templates/p/system.md"]
    );
}

#[test]
fn a_failed_export_leaves_the_folder_as_it_was() {
    // Each failure is met by the last file the export writes: (case, the
    // files in the folder before, the error).
    type Case<'a> = (&'a str, &'a [(&'a str, &'a str)], ErrorCode);
    let cases: &[Case] = &[
        (
            "the last file holds other text",
            &[("snippets/s.md", "other text")],
            ErrorCode::AlreadyExists,
        ),
        (
            "a file where the snippets folder goes",
            &[("snippets", "a file")],
            ErrorCode::AlreadyExists,
        ),
    ];
    for (case, files, expected) in cases {
        let store = TestStore::sqlite();
        let mut catalog = published(&store);
        let dir = tempfile::tempdir().expect("a folder");
        let out = dir.path().join("out");
        std::fs::create_dir_all(&out).expect("out");
        write_tree(&out, files);
        let before = listing(&out);
        let found = code(catalog.export("p", &Selector::Latest, &out));
        assert_eq!(found, *expected, "{case}");
        assert_eq!(listing(&out), before, "{case}: no file and no folder left");
    }
}

#[test]
fn an_export_over_the_same_text_succeeds_and_leaves_no_temporary() {
    let store = TestStore::sqlite();
    let mut catalog = published(&store);
    let dir = tempfile::tempdir().expect("a folder");
    let out = dir.path().join("out");
    let first = catalog
        .export("p", &Selector::Latest, &out)
        .expect("export");
    let second = catalog.export("p", &Selector::Latest, &out).expect("again");
    assert_eq!(first, second);
    assert_eq!(
        listing(&out),
        [
            "snippets",
            "snippets/s.md",
            "templates",
            "templates/p",
            "templates/p/system.md",
            "templates/p/user.md"
        ]
    );
}

/// A pin whose snippet name leads out of the folder, written by hand:
/// export refuses the version as damaged and writes nothing anywhere.
fn a_pin_named_out_of_the_folder_is_damaged(store: &TestStore) {
    let mut catalog = store.open();
    catalog.init().expect("init");
    catalog
        .publish_or_create("p", &draft("Hi"), None)
        .expect("publish");
    let name = "../../../escaped";
    let hash = promptpack_catalog::content_hash("escaped", None);
    store
        .raw(&format!(
            "INSERT INTO snippets (name, latest_revision, created_at) VALUES ('{name}', 1, 0);
             INSERT INTO snippet_revisions (name, revision, text, content_hash, author, message, created_at)
                 VALUES ('{name}', 1, 'escaped', '{hash}', 'x', 'x', 0);
             INSERT INTO version_pins (prompt_id, version, snippet, revision) VALUES ('p', 1, '{name}', 1);"
        ))
        .expect("hand-written rows");
    let dir = tempfile::tempdir().expect("a folder");
    let out = dir.path().join("a/b/out");
    let error = catalog
        .export("p", &Selector::Latest, &out)
        .expect_err("a pin that is not a name");
    assert_eq!(error.code(), ErrorCode::Damaged, "{error}");
    assert!(
        error.to_string().contains("version 1 of prompt `p`"),
        "{error}"
    );
    assert_eq!(listing(dir.path()), Vec::<String>::new());
}

/// A NUL byte is refused before the store sees it, with one code and a
/// location, by publish, snippet and import alike; in a message or an
/// author too. Nothing is written.
fn a_nul_byte_is_refused_alike(store: &TestStore) {
    let mut catalog = store.open();
    catalog.init().expect("init");
    let before = store.footprint();
    let located = |result: Result<_, promptpack_catalog::Error>| {
        let error = result.map(|_: ()| ()).expect_err("a NUL byte");
        let diagnostic = &error.diagnostics()[0];
        let at = diagnostic
            .location
            .as_ref()
            .map(|l| (l.path().to_string(), l.line(), l.column()));
        (error.code(), at)
    };
    let published = catalog
        .publish_or_create("p", &draft("Hi\nthere\0"), None)
        .map(|_| ());
    assert_eq!(
        located(published),
        (
            ErrorCode::InvalidRequest,
            Some(("templates/p/system.md".to_string(), 2, 6))
        )
    );
    let user = Draft {
        user: Some("\0".into()),
        ..draft("Hi")
    };
    let published = catalog.publish_or_create("p", &user, None).map(|_| ());
    assert_eq!(
        located(published),
        (
            ErrorCode::InvalidRequest,
            Some(("templates/p/user.md".to_string(), 1, 1))
        )
    );
    let snippet = catalog.publish_snippet("s", "a\0", "add").map(|_| ());
    assert_eq!(
        located(snippet),
        (
            ErrorCode::InvalidRequest,
            Some(("snippets/s.md".to_string(), 1, 2))
        )
    );
    let dir = tempfile::tempdir().expect("a folder");
    write_tree(
        dir.path(),
        &[("templates/q/system.md", "Hi"), ("snippets/n.md", "x\0")],
    );
    let imported = catalog.import(dir.path(), "import", None).map(|_| ());
    assert_eq!(
        located(imported),
        (
            ErrorCode::InvalidRequest,
            Some(("snippets/n.md".to_string(), 1, 2))
        )
    );
    let message = Draft {
        message: "a\0b".into(),
        ..draft("Hi")
    };
    assert_eq!(
        code(catalog.publish_or_create("p", &message, None)),
        ErrorCode::InvalidRequest
    );
    assert_eq!(
        code(catalog.publish_snippet("s", "fine", "a\0b")),
        ErrorCode::InvalidRequest
    );
    let mut nul_author = store.open().with_author("a\0b");
    assert_eq!(
        code(nul_author.publish_or_create("p", &draft("Hi"), None)),
        ErrorCode::InvalidRequest
    );
    assert_eq!(store.footprint(), before);
}

/// A file just past the limit: `check` refuses it as `too_large`, and so
/// do import, publish and snippet, with nothing written.
fn text_past_the_limit_is_refused_as_check_refuses_it(store: &TestStore) {
    assert_eq!(
        MAX_FILE_BYTES,
        promptpack_build::codegen::MAX_PROMPT_CODE as u64,
        "the catalog's limit is the build's"
    );
    let mut catalog = store.open();
    catalog.init().expect("init");
    let before = store.footprint();
    let big = "a".repeat(usize::try_from(MAX_FILE_BYTES).expect("a size") + 1);
    let dir = tempfile::tempdir().expect("a folder");
    write_tree(dir.path(), &[("templates/big/system.md", &big)]);
    let checked = promptpack_build::check(&promptpack_load::Config::new(dir.path()));
    let codes: Vec<ErrorCode> = checked.errors.iter().map(|d| d.code).collect();
    assert_eq!(codes, [ErrorCode::TooLarge], "check refuses it");
    assert_eq!(
        code(catalog.import(dir.path(), "import", None)),
        ErrorCode::TooLarge
    );
    assert_eq!(
        code(catalog.publish_or_create("big", &draft(&big), None)),
        ErrorCode::TooLarge
    );
    assert_eq!(
        code(catalog.publish_snippet("big", &big, "add")),
        ErrorCode::TooLarge
    );
    // Small files that expand past it, a snippet spliced in many times.
    let half = "b".repeat(usize::try_from(MAX_FILE_BYTES / 2).expect("a size"));
    catalog
        .publish_snippet("half", &half, "add")
        .expect("half the limit");
    let after_snippet = store.footprint();
    assert_eq!(
        code(catalog.publish_or_create("twice", &draft("{{snippet:half}}{{snippet:half}}!"), None)),
        ErrorCode::TooLarge
    );
    assert_eq!(store.footprint(), after_snippet);
    assert_ne!(before, after_snippet);
}

/// A file far past the limit is refused from its size: a sparse file of
/// 1 GiB is never read (reading it would take a gigabyte of memory).
#[test]
fn a_huge_file_is_refused_unread() {
    let store = TestStore::sqlite();
    let mut catalog = store.open();
    catalog.init().expect("init");
    let dir = tempfile::tempdir().expect("a folder");
    write_tree(dir.path(), &[("templates/huge/system.md", "")]);
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(dir.path().join("templates/huge/system.md"))
        .expect("the file");
    file.set_len(1 << 30).expect("a sparse gigabyte");
    let error = catalog
        .import(dir.path(), "import", None)
        .expect_err("too large");
    assert_eq!(error.code(), ErrorCode::TooLarge, "{error}");
    assert!(
        error.to_string().contains("templates/huge/system.md"),
        "{error}"
    );
}

/// The front matter a version stores is the whole front matter, with the
/// keys it always had and its declarations and examples.
fn front_matter_round_trips_with_vars_and_examples(store: &TestStore) {
    let mut catalog = store.open();
    catalog.init().expect("init");
    let system = concat!(
        "---\n",
        "description: Greets a user\n",
        "vars:\n",
        "  name: Who is greeted\n",
        "  formal: {kind: flag, description: Use the formal form, example: true}\n",
        "examples:\n",
        "  basic: {name: Ada, formal: false}\n",
        "model: {name: gpt-4o, temperature: 0.2}\n",
        "max_tokens: 800\n",
        "---\n",
        "Hi {{name}}{{#if formal}}, sir{{/if}}",
    );
    let published = catalog
        .publish_or_create("p", &draft(system), None)
        .expect("publish")
        .0;
    let expected = serde_json::json!({
        "model": {"name": "gpt-4o", "temperature": 0.2},
        "description": "Greets a user",
        "max_tokens": 800,
        "vars": [
            {"name": "name", "description": "Who is greeted"},
            {"name": "formal", "description": "Use the formal form", "kind": "flag", "example": true},
        ],
        "examples": [{"name": "basic", "values": {"name": "Ada", "formal": false}}],
    });
    assert_eq!(published.front_matter, expected);
    let stored = catalog.get("p", &Selector::Latest).expect("get");
    assert_eq!(stored.front_matter, expected);
}

every_store!(
    a_pin_named_out_of_the_folder_is_damaged,
    a_nul_byte_is_refused_alike,
    text_past_the_limit_is_refused_as_check_refuses_it,
    front_matter_round_trips_with_vars_and_examples,
);
