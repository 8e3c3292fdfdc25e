//! What holds for every input: any draft text is either published whole
//! or refused with a code and nothing written; a published version reads
//! back exactly and its resolved text renders as its files do; and any
//! sequence of operations leaves the catalog agreeing with a plain model of
//! it. Run on SQLite (a file per case): the store suite shows PostgreSQL
//! behaves the same on every operation these use.

use crate::support;

use promptpack_catalog::{Catalog, Draft, ErrorCode, Selector};
use proptest::prelude::*;
use std::collections::BTreeMap;
use support::TestStore;

/// Template-ish text: tokens, block tags, snippet includes (some missing),
/// front matter fences and plain text, in any order, balanced or not.
fn template_text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("{{name}}".to_string()),
        Just("{{#if flag}}".to_string()),
        Just("{{else}}".to_string()),
        Just("{{/if}}".to_string()),
        Just("{{#if role == \"teacher\"}}".to_string()),
        Just("{{snippet:tone}}".to_string()),
        Just("{{snippet:missing}}".to_string()),
        Just("{{ spaced }}".to_string()),
        Just("---\n".to_string()),
        Just("description: x\n".to_string()),
        Just("\n".to_string()),
        "[a-z é{}#/:-]{0,12}",
    ];
    proptest::collection::vec(piece, 0..12).prop_map(|pieces| pieces.concat())
}

fn draft(system: String, user: Option<String>) -> Draft {
    Draft {
        system,
        user,
        message: "property".into(),
        ..Draft::default()
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn a_draft_is_published_whole_or_refused_with_nothing_written(
        system in template_text(),
        user in proptest::option::of(template_text()),
    ) {
        let store = TestStore::sqlite();
        let mut catalog = store.open();
        catalog.publish_snippet("tone", "Be {{#if warm}}warm{{else}}brief{{/if}}.", "tone")
            .expect("snippet");
        catalog.create("p", None, None).expect("create");
        let before = store.footprint();
        match catalog.publish("p", &draft(system.clone(), user.clone()), None) {
            Ok(version) => {
                let read = catalog.get("p", &Selector::Latest).expect("get");
                prop_assert_eq!(&read, &version);
                prop_assert_eq!(&read.system, &system);
                prop_assert_eq!(&read.user, &user);
                // `verify` compiles its files and pins to the same text.
                let report = catalog.verify().expect("verify");
                prop_assert!(report.is_ok(), "{:?}", report.findings);
                // The resolved text alone renders what the files and pins do.
                let from_files = library(catalog.sources(&read).expect("sources"));
                let from_text = library(read.resolved_sources());
                let values = serde_json::json!({"name": "Ada", "flag": true, "role": "teacher", "warm": ""});
                let a = from_files.build_prompt("p", &values);
                let b = from_text.build_prompt("p", &values);
                prop_assert_eq!(
                    a.map(|p| (p.system, p.user)).map_err(|e| e.code()),
                    b.map(|p| (p.system, p.user)).map_err(|e| e.code())
                );
            }
            Err(error) => {
                prop_assert!(!error.diagnostics().is_empty());
                prop_assert_eq!(store.footprint(), before);
            }
        }
    }

    #[test]
    fn any_sequence_of_operations_agrees_with_a_model(
        operations in proptest::collection::vec((0u8..6, 0usize..3, 0u32..4), 1..24),
    ) {
        let store = TestStore::sqlite();
        let mut catalog = store.open();
        let ids = ["a", "b", "c"];
        let mut model: Model<'_> = BTreeMap::new();
        for (step, (operation, which, number)) in operations.into_iter().enumerate() {
            let id = ids[which];
            match operation {
                0 => {
                    let created = catalog.create(id, None, None);
                    prop_assert_eq!(created.is_ok(), !model.contains_key(id));
                    model.entry(id).or_default();
                }
                1 => {
                    let text = format!("{id} step {step} {{{{x}}}}");
                    let published = catalog.publish(id, &draft(text.clone(), None), None);
                    match model.get_mut(id) {
                        Some((versions, _, false)) => {
                            versions.push(text);
                            prop_assert_eq!(published.map(|v| v.version).ok(), Some(versions.len() as u32));
                        }
                        _ => prop_assert_eq!(published.err().map(|e| e.code()), Some(ErrorCode::NotFound)),
                    }
                }
                2 => {
                    let moved = catalog.set_label(id, "production", number);
                    match model.get_mut(id) {
                        Some((versions, labels, false)) if number >= 1 && number as usize <= versions.len() => {
                            prop_assert!(moved.is_ok());
                            labels.insert("production".into(), number);
                        }
                        _ => prop_assert_eq!(moved.err().map(|e| e.code()), Some(ErrorCode::NotFound)),
                    }
                }
                3 => {
                    let deleted = catalog.delete(id);
                    match model.get_mut(id) {
                        Some((_, _, gone @ false)) => {
                            prop_assert!(deleted.is_ok());
                            *gone = true;
                        }
                        _ => prop_assert_eq!(deleted.err().map(|e| e.code()), Some(ErrorCode::NotFound)),
                    }
                }
                4 => {
                    let restored = catalog.restore(id);
                    match model.get_mut(id) {
                        Some((_, _, gone @ true)) => {
                            prop_assert!(restored.is_ok());
                            *gone = false;
                        }
                        Some(_) => prop_assert_eq!(restored.err().map(|e| e.code()), Some(ErrorCode::InvalidRequest)),
                        None => prop_assert_eq!(restored.err().map(|e| e.code()), Some(ErrorCode::NotFound)),
                    }
                }
                _ => {}
            }
            check_against_model(&mut catalog, &model)?;
        }
    }
}

/// Each prompt of the model: its versions' texts, its labels, and whether
/// it is deleted.
type Model<'a> = BTreeMap<&'a str, (Vec<String>, BTreeMap<String, u32>, bool)>;

fn check_against_model(catalog: &mut Catalog, model: &Model<'_>) -> Result<(), TestCaseError> {
    let listed: Vec<(String, u32)> = catalog
        .list(10, None)
        .expect("list")
        .prompts
        .into_iter()
        .map(|l| (l.prompt.id, l.current.map_or(0, |v| v.version)))
        .collect();
    let live: Vec<(String, u32)> = model
        .iter()
        .filter(|(_, (_, _, deleted))| !deleted)
        .map(|(id, (versions, _, _))| (id.to_string(), versions.len() as u32))
        .collect();
    prop_assert_eq!(listed, live);
    for (id, (versions, labels, deleted)) in model {
        let latest = catalog.get(id, &Selector::Latest);
        match (deleted, versions.last()) {
            (false, Some(text)) => prop_assert_eq!(&latest.expect("latest").system, text),
            _ => prop_assert_eq!(latest.err().map(|e| e.code()), Some(ErrorCode::NotFound)),
        }
        let history = catalog.history(id).expect("history");
        prop_assert_eq!(history.versions.len(), versions.len());
        prop_assert_eq!(history.prompt.deleted, *deleted);
        for (label, version) in labels {
            let listed = history
                .labels
                .iter()
                .find(|(name, _)| name == label)
                .map(|(_, v)| *v);
            prop_assert_eq!(listed, Some(*version));
        }
    }
    Ok(())
}

fn library(sources: promptpack::machinery::core::Sources) -> promptpack::Library {
    promptpack::Library::from_sources(
        sources.templates,
        sources.snippets,
        &promptpack::Config::default(),
    )
    .unwrap_or_else(|e| panic!("a published version does not compile:\n{e}"))
}
