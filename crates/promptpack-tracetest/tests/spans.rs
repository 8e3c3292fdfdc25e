//! Every path that renders a prompt or reads an answer makes its span, with
//! the attribute names of `promptpack::trace` and the values of what it
//! rendered or read: one table of cases, one harness, read through a
//! recording layer over the registry. Its own binary: the subscriber is the
//! process's global one, since the console and the live handle render on
//! threads of their own.

mod support;

use promptpack::trace::{
    CATALOG_ARM, CATALOG_LABEL, CATALOG_PINS, CATALOG_SHA256, CATALOG_VERSION, ERROR_TYPE,
    LANGFUSE_PROMPT_NAME, LANGFUSE_PROMPT_VERSION, PARSE_SPAN, PROMPT_HASH, PROMPT_NAME, READ,
    RENDER_SPAN, SOURCE, TARGET, TOOL_NAME,
};
use promptpack::{Library, MissingVars, Provenance, Response, ToolCall};
use promptpack_tracetest::{dev, straight_line, tables};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};
use support::{Store, pins_text, seeded};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::subscriber::Subscriber;
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

/// One closed span of promptpack's: its name, the names it declares, and
/// the values recorded.
#[derive(Debug, Clone)]
struct Recorded {
    name: &'static str,
    declared: Vec<&'static str>,
    values: BTreeMap<String, Value>,
}

/// Keeps every closed span of target `promptpack`.
#[derive(Clone, Default)]
struct Recorder {
    closed: Arc<Mutex<Vec<Recorded>>>,
}

impl Recorder {
    /// The spans closed since the last call.
    fn take(&self) -> Vec<Recorded> {
        std::mem::take(&mut *self.closed.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

/// A visitor writing each value as JSON: text, integer or boolean, as an
/// exporter sees them (a `display` value arrives as its text).
struct Values<'a>(&'a mut BTreeMap<String, Value>);

impl Visit for Values<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_string(), json!(value));
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.0.insert(field.name().to_string(), json!(value));
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.insert(field.name().to_string(), json!(value));
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.0.insert(field.name().to_string(), json!(value));
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0
            .insert(field.name().to_string(), json!(format!("{value:?}")));
    }
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Recorder {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let metadata = attrs.metadata();
        if metadata.target() != TARGET {
            return;
        }
        let mut values = BTreeMap::new();
        attrs.record(&mut Values(&mut values));
        let recorded = Recorded {
            name: metadata.name(),
            declared: metadata.fields().iter().map(|f| f.name()).collect(),
            values,
        };
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(recorded);
        }
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id)
            && let Some(recorded) = span.extensions_mut().get_mut::<Recorded>()
        {
            values.record(&mut Values(&mut recorded.values));
        }
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(&id)
            && let Some(recorded) = span.extensions_mut().remove::<Recorded>()
        {
            self.closed
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(recorded);
        }
    }
}

/// What a case expects of a value.
#[derive(Debug)]
enum Want {
    Is(Value),
    /// Sixteen lowercase hex digits: a content hash whose value the case
    /// cannot name (a catalog version's, rendered by the console).
    Hash16,
}

fn is(value: impl Into<Value>) -> Want {
    Want::Is(value.into())
}

/// One path: what it does, and the one span it must make.
struct Case {
    name: &'static str,
    run: Box<dyn Fn() -> BTreeMap<&'static str, Want>>,
    span: &'static str,
}

/// Every field a span of either kind declares, in the order declared.
const RENDER_FIELDS: [&str; 11] = [
    PROMPT_NAME,
    PROMPT_HASH,
    SOURCE,
    CATALOG_VERSION,
    CATALOG_SHA256,
    CATALOG_LABEL,
    CATALOG_ARM,
    CATALOG_PINS,
    LANGFUSE_PROMPT_NAME,
    LANGFUSE_PROMPT_VERSION,
    ERROR_TYPE,
];

const PARSE_FIELDS: [&str; 13] = [
    PROMPT_NAME,
    READ,
    TOOL_NAME,
    PROMPT_HASH,
    SOURCE,
    CATALOG_VERSION,
    CATALOG_SHA256,
    CATALOG_LABEL,
    CATALOG_ARM,
    CATALOG_PINS,
    LANGFUSE_PROMPT_NAME,
    LANGFUSE_PROMPT_VERSION,
    ERROR_TYPE,
];

fn fields<const N: usize>(pairs: [(&'static str, Want); N]) -> BTreeMap<&'static str, Want> {
    pairs.into_iter().collect()
}

/// A catalog provenance's fields, as the spans record them.
fn catalog_fields(provenance: &Provenance) -> Vec<(&'static str, Want)> {
    let Provenance::Catalog(version) = provenance else {
        panic!("a catalog version, not {provenance}");
    };
    let mut fields = vec![
        (SOURCE, is("catalog")),
        (CATALOG_VERSION, is(version.version)),
        (CATALOG_SHA256, is(&*version.content_hash)),
    ];
    if let Some(label) = &version.label {
        fields.push((CATALOG_LABEL, is(&**label)));
    }
    if let Some((weight, total)) = version.arm {
        fields.push((CATALOG_ARM, is(format!("{weight}/{total}"))));
    }
    if !version.pins.is_empty() {
        fields.push((CATALOG_PINS, is(version.pins_text())));
    }
    fields
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into()
}

/// POSTs `body` to the console's API as the viewer; the answer's JSON.
fn api(base: &str, token: &str, path: &str, body: &Value) -> (u16, Value) {
    let mut answer = agent()
        .post(format!("{base}/api/v1{path}"))
        .header("authorization", format!("Bearer {token}"))
        .send_json(body)
        .expect("the console answers");
    let status = answer.status().as_u16();
    let json = answer.body_mut().read_json().expect("JSON");
    (status, json)
}

#[test]
fn every_path_makes_its_span() {
    let recorder = Recorder::default();
    let subscriber = tracing_subscriber::registry().with(recorder.clone());
    tracing::subscriber::set_global_default(subscriber).expect("the only subscriber");

    let store = Store::sqlite();
    let mut catalog = store.open();
    catalog.init().expect("creates the schema");
    let (greeters, triage) = seeded(&mut catalog);
    let library = Library::load(promptpack_tracetest::PROMPTS).expect("loads the prompts");
    let live = straight_line::Prompts::connect(&store.url)
        .label("production")
        .start()
        .expect("follows production");
    let live = Arc::new(live);
    // Started with both versions read: the first read is `start`'s own.
    assert!(matches!(
        live.serving(straight_line::PromptId::Greeter),
        Provenance::Catalog(_)
    ));

    let token = promptpack_console::new_token();
    catalog
        .add_user(
            "vi",
            promptpack_catalog::Role::Viewer,
            &promptpack_catalog::token_hash(&token),
        )
        .expect("a viewer");
    let settings =
        promptpack_console::Settings::new(store.url.clone()).listen(([127, 0, 0, 1], 0).into());
    let server = promptpack_console::Server::bind(settings).expect("the console binds");
    let base = format!("http://{}", server.local_addr());
    std::thread::spawn(move || server.run());

    let hash = |id: straight_line::PromptId| id.hash().to_string();
    let answer = r#"{"category": "bug", "urgent": true}"#;
    let (greeters, triage) = (Arc::new(greeters), Arc::new(triage));

    let cases: Vec<Case> = vec![
        Case {
            name: "generated tables",
            span: RENDER_SPAN,
            run: Box::new(move || {
                let prompt = tables::build_prompt(
                    tables::PromptId::Greeter,
                    tables::GreeterVars { name: "Ada" },
                )
                .expect("renders");
                assert_eq!(prompt.provenance, Provenance::Embedded);
                fields([
                    (PROMPT_NAME, is("greeter")),
                    (
                        PROMPT_HASH,
                        is(tables::PromptId::Greeter.hash().to_string()),
                    ),
                    (SOURCE, is("embedded")),
                ])
            }),
        },
        Case {
            name: "generated straight-line code",
            span: RENDER_SPAN,
            run: Box::new(move || {
                straight_line::GreeterVars { name: "Ada" }
                    .build()
                    .expect("renders");
                fields([
                    (PROMPT_NAME, is("greeter")),
                    (PROMPT_HASH, is(hash(straight_line::PromptId::Greeter))),
                    (SOURCE, is("embedded")),
                ])
            }),
        },
        Case {
            name: "dev hot reload",
            span: RENDER_SPAN,
            run: Box::new(move || {
                let prompt = dev::GreeterVars { name: "Ada" }.build().expect("renders");
                assert_eq!(prompt.provenance, Provenance::Loaded, "rendered from disk");
                fields([
                    (PROMPT_NAME, is("greeter")),
                    (PROMPT_HASH, is(dev::PromptId::Greeter.hash().to_string())),
                    (SOURCE, is("loaded")),
                ])
            }),
        },
        {
            let library = library.clone();
            Case {
                name: "Library::build_prompt",
                span: RENDER_SPAN,
                run: Box::new(move || {
                    library
                        .build_prompt("greeter", &json!({"name": "Ada"}))
                        .expect("renders");
                    fields([
                        (PROMPT_NAME, is("greeter")),
                        (
                            PROMPT_HASH,
                            is(library.hash("greeter").expect("has it").to_string()),
                        ),
                        (SOURCE, is("loaded")),
                    ])
                }),
            }
        },
        {
            let library = library.clone();
            Case {
                name: "Library::render",
                span: RENDER_SPAN,
                run: Box::new(move || {
                    let values: &[(&str, &str)] = &[("name", "Ada")];
                    library
                        .render("greeter", values, MissingVars::Error)
                        .expect("renders");
                    fields([
                        (PROMPT_NAME, is("greeter")),
                        (
                            PROMPT_HASH,
                            is(library.hash("greeter").expect("has it").to_string()),
                        ),
                        (SOURCE, is("loaded")),
                    ])
                }),
            }
        },
        {
            let library = library.clone();
            Case {
                name: "Library::build_prompt failing",
                span: RENDER_SPAN,
                run: Box::new(move || {
                    let error = library
                        .build_prompt("greeter", &json!({}))
                        .expect_err("no name");
                    assert_eq!(error.code().as_str(), "missing_var");
                    fields([
                        (PROMPT_NAME, is("greeter")),
                        (ERROR_TYPE, is("missing_var")),
                    ])
                }),
            }
        },
        {
            let live = Arc::clone(&live);
            Case {
                name: "live handle, an arm of a split label",
                span: RENDER_SPAN,
                run: Box::new(move || {
                    let prompt = live
                        .build_prompt_for(
                            "user-7",
                            straight_line::PromptId::Greeter,
                            straight_line::GreeterVars { name: "Ada" },
                        )
                        .expect("renders");
                    let Provenance::Catalog(version) = &prompt.provenance else {
                        panic!("served by the catalog: {}", prompt.provenance);
                    };
                    assert_eq!(version.arm.map(|(_, total)| total), Some(4), "split 1:3");
                    assert!(!version.pins.is_empty(), "pins tone");
                    let mut want = fields([
                        (PROMPT_NAME, is("greeter")),
                        (PROMPT_HASH, is(prompt.hash.to_string())),
                    ]);
                    want.extend(catalog_fields(&prompt.provenance));
                    want
                }),
            }
        },
        {
            let (live, greeters) = (Arc::clone(&live), Arc::clone(&greeters));
            Case {
                name: "live handle with Langfuse's attributes",
                span: RENDER_SPAN,
                run: Box::new(move || {
                    promptpack::trace::set_langfuse_attributes(true);
                    let rendered = live.build_prompt(
                        straight_line::PromptId::Greeter,
                        straight_line::GreeterVars { name: "Ada" },
                    );
                    promptpack::trace::set_langfuse_attributes(false);
                    let prompt = rendered.expect("renders");
                    // Without a key: the heaviest arm, v2, pinning tone@2.
                    let v2 = &greeters[1];
                    let want = fields([
                        (PROMPT_NAME, is("greeter")),
                        (PROMPT_HASH, is(prompt.hash.to_string())),
                        (SOURCE, is("catalog")),
                        (CATALOG_VERSION, is(v2.version)),
                        (CATALOG_SHA256, is(v2.content_hash.as_str())),
                        (CATALOG_LABEL, is("production")),
                        (CATALOG_ARM, is("3/4")),
                        (CATALOG_PINS, is(pins_text(v2))),
                        (LANGFUSE_PROMPT_NAME, is("greeter")),
                        (LANGFUSE_PROMPT_VERSION, is(v2.version)),
                    ]);
                    assert_eq!(pins_text(v2), "tone@2");
                    // The prompt's own provenance says the same.
                    for (name, value) in catalog_fields(&prompt.provenance) {
                        assert!(
                            matches!((&want[name], &value), (Want::Is(a), Want::Is(b)) if a == b),
                            "{name}"
                        );
                    }
                    want
                }),
            }
        },
        Case {
            name: "live handle on a catalog that serves nothing",
            span: RENDER_SPAN,
            run: Box::new(move || {
                // The embedded text: the generated `build`'s span, not one
                // of the handle's around it.
                let store = Store::sqlite();
                store.open().init().expect("creates the schema");
                let empty = straight_line::Prompts::connect(&store.url)
                    .label("production")
                    .start()
                    .expect("follows an empty catalog");
                let prompt = empty
                    .build_prompt(
                        straight_line::PromptId::Greeter,
                        straight_line::GreeterVars { name: "Ada" },
                    )
                    .expect("renders the embedded text");
                assert_eq!(prompt.provenance, Provenance::Embedded);
                fields([
                    (PROMPT_NAME, is("greeter")),
                    (PROMPT_HASH, is(hash(straight_line::PromptId::Greeter))),
                    (SOURCE, is("embedded")),
                ])
            }),
        },
        Case {
            name: "generated Response::parse",
            span: PARSE_SPAN,
            run: Box::new(move || {
                let read =
                    <straight_line::TriageResponse as Response>::parse(answer).expect("reads");
                let _ = read;
                fields([
                    (PROMPT_NAME, is("triage")),
                    (READ, is("response")),
                    (PROMPT_HASH, is(hash(straight_line::PromptId::Triage))),
                ])
            }),
        },
        Case {
            name: "generated Response::parse failing",
            span: PARSE_SPAN,
            run: Box::new(move || {
                tables::TriageResponse::parse(r#"{"category": "sales", "urgent": true}"#)
                    .expect_err("not a category");
                fields([
                    (PROMPT_NAME, is("triage")),
                    (READ, is("response")),
                    (PROMPT_HASH, is(tables::PromptId::Triage.hash().to_string())),
                    (ERROR_TYPE, is("answer_mismatch")),
                ])
            }),
        },
        Case {
            name: "generated ToolCall::parse",
            span: PARSE_SPAN,
            run: Box::new(move || {
                <straight_line::TriageTool as ToolCall>::parse("lookup", r#"{"order": "A-1"}"#)
                    .expect("reads");
                fields([
                    (PROMPT_NAME, is("triage")),
                    (READ, is("tool_call")),
                    (TOOL_NAME, is("lookup")),
                    (PROMPT_HASH, is(hash(straight_line::PromptId::Triage))),
                ])
            }),
        },
        Case {
            name: "generated ToolCall::parse of an unknown tool",
            span: PARSE_SPAN,
            run: Box::new(move || {
                straight_line::TriageTool::parse("lookups", "{}").expect_err("no such tool");
                fields([
                    (PROMPT_NAME, is("triage")),
                    (READ, is("tool_call")),
                    (TOOL_NAME, is("lookups")),
                    (PROMPT_HASH, is(hash(straight_line::PromptId::Triage))),
                    (ERROR_TYPE, is("answer_mismatch")),
                ])
            }),
        },
        {
            let library = library.clone();
            Case {
                name: "Library::parse_response",
                span: PARSE_SPAN,
                run: Box::new(move || {
                    library.parse_response("triage", answer).expect("reads");
                    fields([
                        (PROMPT_NAME, is("triage")),
                        (READ, is("response")),
                        (
                            PROMPT_HASH,
                            is(library.hash("triage").expect("has it").to_string()),
                        ),
                        (SOURCE, is("loaded")),
                    ])
                }),
            }
        },
        {
            let library = library.clone();
            Case {
                name: "Library::parse_tool_call failing",
                span: PARSE_SPAN,
                run: Box::new(move || {
                    library
                        .parse_tool_call("triage", "lookup", "not json")
                        .expect_err("no JSON");
                    fields([
                        (PROMPT_NAME, is("triage")),
                        (READ, is("tool_call")),
                        (TOOL_NAME, is("lookup")),
                        (
                            PROMPT_HASH,
                            is(library.hash("triage").expect("has it").to_string()),
                        ),
                        (SOURCE, is("loaded")),
                        (ERROR_TYPE, is("answer_not_json")),
                    ])
                }),
            }
        },
        {
            let (base, token, greeters) = (base.clone(), token.clone(), Arc::clone(&greeters));
            Case {
                name: "the console API's render",
                span: RENDER_SPAN,
                run: Box::new(move || {
                    let v1 = &greeters[0];
                    let (status, rendered) = api(
                        &base,
                        &token,
                        "/prompts/greeter/render",
                        &json!({"version": v1.version, "vars": {"name": "Ada"}}),
                    );
                    assert_eq!(status, 200, "{rendered}");
                    assert_eq!(pins_text(v1), "tone@1");
                    fields([
                        (PROMPT_NAME, is("greeter")),
                        (PROMPT_HASH, Want::Hash16),
                        (SOURCE, is("catalog")),
                        (CATALOG_VERSION, is(v1.version)),
                        (CATALOG_SHA256, is(v1.content_hash.as_str())),
                        (CATALOG_PINS, is("tone@1")),
                    ])
                }),
            }
        },
        {
            let (base, token, triage) = (base.clone(), token.clone(), Arc::clone(&triage));
            Case {
                name: "the console API's parse, failing",
                span: PARSE_SPAN,
                run: Box::new(move || {
                    let (status, refused) = api(
                        &base,
                        &token,
                        "/prompts/triage/parse",
                        &json!({"label": "production", "answer": "{\"category\": \"bug\"}"}),
                    );
                    assert_ne!(status, 200, "{refused}");
                    fields([
                        (PROMPT_NAME, is("triage")),
                        (READ, is("response")),
                        (PROMPT_HASH, Want::Hash16),
                        (SOURCE, is("catalog")),
                        (CATALOG_VERSION, is(triage.version)),
                        (CATALOG_SHA256, is(triage.content_hash.as_str())),
                        // Asked for by label: the label is named.
                        (CATALOG_LABEL, is("production")),
                        (ERROR_TYPE, is("answer_mismatch")),
                    ])
                }),
            }
        },
    ];

    recorder.take();
    let mut failures = Vec::new();
    for case in &cases {
        let want = (case.run)();
        let spans = recorder.take();
        let [span] = spans.as_slice() else {
            failures.push(format!(
                "{}: {} spans, not one: {spans:#?}",
                case.name,
                spans.len()
            ));
            continue;
        };
        let declared: &[&str] = if case.span == RENDER_SPAN {
            &RENDER_FIELDS
        } else {
            &PARSE_FIELDS
        };
        if span.name != case.span || span.declared != declared {
            failures.push(format!(
                "{}: span {} declaring {:?}, not {} declaring {declared:?}",
                case.name, span.name, span.declared, case.span
            ));
        }
        let got: Vec<&str> = span.values.keys().map(String::as_str).collect();
        let wanted: Vec<&str> = want.keys().copied().collect();
        if got != wanted {
            failures.push(format!(
                "{}: recorded {got:?}, not {wanted:?}: {:?}",
                case.name, span.values
            ));
            continue;
        }
        for (name, want) in &want {
            let value = &span.values[*name];
            let fits = match want {
                Want::Is(wanted) => value == wanted,
                Want::Hash16 => value.as_str().is_some_and(|s| {
                    s.len() == 16
                        && s.bytes()
                            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
                }),
            };
            if !fits {
                failures.push(format!("{}: {name} = {value}, not {want:?}", case.name));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
