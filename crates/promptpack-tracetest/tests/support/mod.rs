//! What both span tests share: a SQLite catalog holding the service's
//! prompts, published with a snippet revision pinned and a split label.

#![allow(dead_code)]

use promptpack_catalog::{Arm, Catalog, Draft, Version};
use std::path::Path;

/// A fresh SQLite catalog in a temporary folder, and its URL.
pub struct Store {
    pub url: String,
    _dir: tempfile::TempDir,
}

impl Store {
    pub fn sqlite() -> Store {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let url = format!("sqlite:{}", dir.path().join("catalog.db").display());
        Store { url, _dir: dir }
    }

    /// The catalog, created on first use.
    pub fn open(&self) -> Catalog {
        Catalog::open(&self.url)
            .unwrap_or_else(|e| panic!("open {}: {e}", self.url))
            .with_author("trace-test")
    }
}

/// The text of `prompts/<path>`.
pub fn prompt_file(path: &str) -> String {
    let path = Path::new(promptpack_tracetest::PROMPTS).join(path);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Publishes `system` as the next version of `id`, creating it on first
/// use.
pub fn publish(catalog: &mut Catalog, id: &str, system: &str) -> Version {
    let draft = Draft {
        system: system.to_string(),
        message: format!("test: {id}"),
        ..Draft::default()
    };
    let (version, _) = catalog
        .publish_or_create(id, &draft, None)
        .unwrap_or_else(|e| panic!("publish {id}: {e}"));
    version
}

/// The catalog as the cases read it: snippet `tone` at revisions 1 and 2;
/// `greeter` v1 (pinning `tone@1`) and v2 (pinning `tone@2`), label
/// `production` split 1:3 between them; `triage` v1 under `production`.
/// The versions of `greeter`, then `triage`'s.
pub fn seeded(catalog: &mut Catalog) -> (Vec<Version>, Version) {
    catalog
        .publish_snippet("tone", &prompt_file("snippets/tone.md"), "first tone")
        .expect("publishes tone r1");
    let greeter = prompt_file("templates/greeter/system.md");
    let v1 = publish(catalog, "greeter", &greeter);
    catalog
        .publish_snippet("tone", "Be warm, brief and exact.\n", "second tone")
        .expect("publishes tone r2");
    let v2 = publish(catalog, "greeter", &format!("{greeter}Sign off.\n"));
    let arms = [
        Arm {
            version: v1.version,
            weight: 1,
        },
        Arm {
            version: v2.version,
            weight: 3,
        },
    ];
    catalog
        .split_label("greeter", "production", &arms)
        .expect("splits production");
    let triage = publish(
        catalog,
        "triage",
        &prompt_file("templates/triage/system.md"),
    );
    catalog
        .set_label("triage", "production", triage.version)
        .expect("labels triage");
    (vec![v1, v2], triage)
}

/// A version's pins as the spans write them: `name@revision`, by name.
pub fn pins_text(version: &Version) -> String {
    let mut pins: Vec<String> = version
        .pins
        .iter()
        .map(|pin| format!("{}@{}", pin.snippet, pin.revision))
        .collect();
    pins.sort();
    pins.join(",")
}
