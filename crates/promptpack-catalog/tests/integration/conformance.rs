//! The OpenMAIC corpus (the original loader's real prompts, read in place
//! from `../shared/conformance/openmaic`: AGPL data, never copied here)
//! imported into each store, and every golden render reproduced byte for
//! byte from the catalog: once from the version's files and pinned snippet
//! revisions, once from its resolved text alone. Export gives every file
//! back byte for byte.
//!
//! `#[ignore]`d as the root crate's conformance test is, so that a clone
//! without the corpus shows it did not run; CI runs it with
//! `--include-ignored`, and then a missing corpus fails it.

use crate::support;

use promptpack::Library;
use promptpack::machinery::core::Sources;
use promptpack_catalog::{Catalog, Selector};
use promptpack_testkit::{corpus_dir, goldens};
use support::{Kind, TestStore};

fn library(sources: Sources) -> Library {
    Library::from_sources(
        sources.templates,
        sources.snippets,
        &promptpack::Config::default(),
    )
    .unwrap_or_else(|e| panic!("a catalog version does not compile:\n{e}"))
}

fn goldens_render_from_the_catalog(kind: Kind) {
    let dir = corpus_dir();
    let store = TestStore::of(kind, "conformance");
    let mut catalog: Catalog = store.open();
    let report = catalog
        .import(&dir, "import OpenMAIC", None)
        .expect("import");
    assert!(report.prompts.iter().all(|p| p.written && p.version == 1));
    // `verify` compiles every version's files and pins to the text it holds.
    let verified = catalog.verify().expect("verify");
    assert!(verified.is_ok(), "{:?}", verified.findings);

    let goldens = goldens(&dir);
    let mut failures = Vec::new();
    for golden in &goldens {
        let id = golden.prompt_id.as_str();
        let version = catalog
            .get(id, &Selector::Latest)
            .expect("the imported version");
        let from_files = library(catalog.sources(&version).expect("pinned sources"));
        // The resolved text alone, no snippets: it is what the version renders.
        let from_resolved = library(version.resolved_sources());
        for (how, library) in [("files", &from_files), ("resolved text", &from_resolved)] {
            failures.extend(golden.compare(golden.render(library), how));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));

    // Every prompt exported gives back its files and snippets byte for byte.
    let out = tempfile::tempdir().expect("out");
    let mut exported = 0;
    for imported in &report.prompts {
        for file in catalog
            .export(&imported.name, &Selector::Latest, out.path())
            .expect("export")
        {
            let relative = file.strip_prefix(out.path()).expect("inside");
            let source = std::fs::read(dir.join(relative)).expect("the corpus file");
            assert_eq!(
                std::fs::read(&file).expect("exported"),
                source,
                "{}",
                relative.display()
            );
            exported += 1;
        }
    }
    println!(
        "catalog conformance ({kind:?}): {} prompts imported, {} goldens rendered twice, {exported} files exported, 0 failed",
        report.prompts.len(),
        goldens.len()
    );
}

#[test]
#[ignore = "needs the OpenMAIC corpus (../shared/conformance/openmaic or PROMPTPACK_CONFORMANCE_DIR): run with --include-ignored"]
fn sqlite_catalog_renders_every_golden() {
    goldens_render_from_the_catalog(Kind::Sqlite);
}

#[test]
#[ignore = "needs the OpenMAIC corpus (../shared/conformance/openmaic or PROMPTPACK_CONFORMANCE_DIR): run with --include-ignored"]
fn postgres_catalog_renders_every_golden() {
    goldens_render_from_the_catalog(Kind::Postgres);
}
