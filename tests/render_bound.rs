//! The render bound: no values make a render allocate past
//! `max_render_bytes`. A template may use a variable many times, directly,
//! through snippets and through snippet sections, so a value of a few
//! kilobytes can ask for megabytes; every render measures its output first
//! and refuses one past the bound (`too_large`) before it allocates.
//!
//! A global allocator records the largest single allocation made while a
//! render runs, on the render's own thread.

use promptpack::{
    ErrorCode, Library, MissingVars, SnippetSource, SourceFile, TemplateSource, ValueRef,
};
use proptest::prelude::*;
use serde_json::{Value, json};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

promptpack::include_prompts!();

struct LargestAllocation;

thread_local! {
    /// Whether allocations on this thread are being watched.
    static WATCHING: Cell<bool> = const { Cell::new(false) };
    /// The largest allocation seen while watching, in bytes.
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}

fn note(size: usize) {
    let _ = WATCHING.try_with(|on| {
        if on.get() {
            let _ = LARGEST.try_with(|largest| largest.set(largest.get().max(size)));
        }
    });
}

// SAFETY: every call is forwarded to the system allocator unchanged; the
// bookkeeping is thread-local, so parallel tests do not disturb each other.
unsafe impl GlobalAlloc for LargestAllocation {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: LargestAllocation = LargestAllocation;

/// Runs `f`, returning what it returned and the largest allocation it made.
fn largest_allocation_during<T>(f: impl FnOnce() -> T) -> (usize, T) {
    LARGEST.with(|largest| largest.set(0));
    WATCHING.with(|on| on.set(true));
    let out = f();
    WATCHING.with(|on| on.set(false));
    (LARGEST.with(Cell::get), out)
}

/// What a refused render may allocate besides its output: the error's
/// message and location, a few hundred bytes.
const ERROR_SLACK: usize = 4096;

/// A snippet that uses `a` three times, its section `twice` that uses `b`
/// twice, and includes the section: amplification through snippets and
/// sections.
fn snippets() -> Vec<SnippetSource> {
    vec![SnippetSource {
        name: "echo".into(),
        file: SourceFile::new(
            "snippets/echo.md",
            "{{a}}{{a}}{{a}}\n\n## Twice\n\n{{b}}-{{b}}\n\n## Nested\n\n{{snippet:echo#twice}}{{snippet:echo#twice}}",
        ),
    }]
}

/// The pieces a generated template is made of.
const PIECES: &[&str] = &[
    "text ",
    "{{a}}",
    "{{b}}",
    "{{snippet:echo}}",
    "{{snippet:echo#twice}}",
    "{{snippet:echo#nested}}",
    "{{#if flag}}{{a}}{{a}}{{else}}{{b}}{{/if}}",
    "{{#if a}}[{{b}}]{{/if}}",
];

fn template(system: &str, user: Option<&str>) -> TemplateSource {
    TemplateSource {
        id: "amplified".into(),
        system: SourceFile::new("templates/amplified/system.md", system),
        user: user.map(|user| SourceFile::new("templates/amplified/user.md", user)),
        messages: None,
    }
}

fn library(system: &str, user: Option<&str>, bound: usize) -> Library {
    match Library::from_sources(
        vec![template(system, user)],
        snippets(),
        &promptpack::Config::default(),
    ) {
        Ok(library) => library.with_max_render_bytes(bound),
        Err(error) => panic!("the generated template compiles: {error}"),
    }
}

/// Values of every kind a dynamic render takes, as JSON: text, a number,
/// an array and an object (rendered as `JSON.stringify(v, null, 2)`).
fn value() -> impl Strategy<Value = Value> {
    prop_oneof![
        (0usize..3000).prop_map(|n| Value::String("v".repeat(n))),
        (0usize..400).prop_map(|n| json!(vec![1.5; n])),
        (0usize..200).prop_map(|n| {
            let map: serde_json::Map<String, Value> =
                (0..n).map(|i| (format!("k{i}"), json!([i, "x"]))).collect();
            Value::Object(map)
        }),
        any::<f64>().prop_map(|f| json!(f)),
    ]
}

fn pieces(max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(0..PIECES.len(), 0..max).prop_map(|picked| {
        picked
            .iter()
            .map(|&i| PIECES[i])
            .collect::<Vec<_>>()
            .join("\n")
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// Whatever the values, a dynamic render allocates no more than its
    /// bound for either part, and it fails (`too_large`, naming the prompt
    /// and the bound) exactly when a part of the unbounded render is longer
    /// than the bound.
    #[test]
    fn no_values_make_a_render_allocate_past_the_bound(
        system in pieces(40),
        user in prop::option::of(pieces(20)),
        a in value(),
        b in value(),
        flag in any::<bool>(),
        bound in 1usize..200_000,
        lenient in any::<bool>(),
    ) {
        let values = json!({ "a": a, "b": b, "flag": flag });
        let Value::Object(values) = values else { unreachable!("json! of an object") };
        let missing = if lenient { MissingVars::KeepToken } else { MissingVars::Error };
        let whole = library(&system, user.as_deref(), usize::MAX)
            .render("amplified", &values, missing)
            .map_err(|e| e.to_string());
        let bounded = library(&system, user.as_deref(), bound);
        let (largest, rendered) =
            largest_allocation_during(|| bounded.render("amplified", &values, missing));
        prop_assert!(
            largest <= bound.max(ERROR_SLACK),
            "allocated {largest} bytes at once with a bound of {bound}"
        );
        let whole = match whole {
            Ok(whole) => whole,
            Err(message) => {
                // Missing nothing here: every variable has a value.
                return Err(TestCaseError::fail(format!("the unbounded render failed: {message}")));
            }
        };
        let longest = whole.system.len().max(whole.user.as_ref().map_or(0, String::len));
        match rendered {
            Ok(prompt) => {
                prop_assert!(longest <= bound);
                prop_assert_eq!(prompt.system, whole.system);
                prop_assert_eq!(prompt.user, whole.user);
            }
            Err(error) => {
                prop_assert!(longest > bound, "refused {longest} bytes with a bound of {bound}");
                prop_assert_eq!(error.code(), ErrorCode::TooLarge);
                let message = error.to_string();
                prop_assert!(message.contains("`amplified`"), "{message}");
                prop_assert!(message.contains(&bound.to_string()), "{message}");
            }
        }
    }
}

/// The error says which prompt and part, what the output would have been
/// and the bound, and points at the part's file.
#[test]
fn too_large_names_the_prompt_the_bound_and_what_it_would_have_been() {
    let library = library("{{a}}{{a}}{{a}}{{a}}", Some("short {{a}}"), 100);
    let value = "x".repeat(30);
    let error = match library.build_prompt("amplified", &json!({ "a": value })) {
        Ok(prompt) => panic!("rendered {} bytes past the bound", prompt.system.len()),
        Err(error) => error,
    };
    assert_eq!(error.code(), ErrorCode::TooLarge);
    let diagnostic = &error.diagnostics()[0];
    assert!(diagnostic.message.contains("`amplified`"), "{error}");
    assert!(
        diagnostic.message.contains("120 bytes of system text"),
        "{error}"
    );
    assert!(diagnostic.message.contains("bound of 100 bytes"), "{error}");
    let location = diagnostic.location.as_ref().map(|l| l.path().to_string());
    assert_eq!(location.as_deref(), Some("amplified/system.md"));
    // The user part is checked too.
    let library = self::library("{{a}}", Some("{{a}}{{a}}{{a}}{{a}}"), 100);
    let error = library
        .build_prompt("amplified", &json!({ "a": value }))
        .expect_err("the user part is past the bound");
    assert!(
        error.to_string().contains("120 bytes of user text"),
        "{error}"
    );
}

/// A value that appears in a branch not taken does not count: the bound is
/// on what would be written, measured along the branches taken.
#[test]
fn blocks_left_out_do_not_count() {
    let template = format!(
        "{}{{{{#if flag}}}}done{{{{/if}}}}",
        "{{#if flag}}{{a}}{{/if}}".repeat(5000)
    );
    let library = library(&template, None, 64);
    let big = "y".repeat(1_000_000);
    let values = [("a", ValueRef::Str(&big)), ("flag", ValueRef::Bool(false))];
    let (largest, prompt) =
        largest_allocation_during(|| library.render("amplified", &values[..], MissingVars::Error));
    assert_eq!(prompt.map(|p| p.system), Ok(String::new()));
    assert!(largest <= 64 * 1024, "allocated {largest} bytes at once");
}

/// The bound comes from `promptpack.toml` (`[render] max_bytes`) for a
/// library loaded from a folder.
#[test]
fn a_loaded_library_takes_the_bound_of_its_config() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let prompt = dir.path().join("templates/echo");
    std::fs::create_dir_all(&prompt).expect("the template folder");
    std::fs::write(prompt.join("system.md"), "{{a}}{{a}}").expect("system.md");
    std::fs::write(
        dir.path().join("promptpack.toml"),
        "[render]\nmax_bytes = 10\n",
    )
    .expect("promptpack.toml");
    let library = Library::load(dir.path()).expect("the folder loads");
    assert_eq!(library.max_render_bytes(), 10);
    assert!(
        library
            .build_prompt("echo", &json!({ "a": "12345" }))
            .is_ok()
    );
    let error = library
        .build_prompt("echo", &json!({ "a": "123456" }))
        .expect_err("12 bytes past a bound of 10");
    assert_eq!(error.code(), ErrorCode::TooLarge);
}

/// The typed API: the generated code (straight-line or tables, whichever
/// this build made) and `build_prompt` (the dev path in a debug build with
/// hot reload) refuse an output past the default bound before allocating
/// it. The value itself is made before the watch starts.
#[test]
fn the_typed_render_refuses_past_the_default_bound() {
    let huge = "z".repeat(promptpack::DEFAULT_MAX_RENDER_BYTES + 1);
    let vars = AgentSystemVars {
        agent_name: &huge,
        user_name: "Grace",
        has_tools: false,
        tool_list: "",
        memory: None,
        state_context: "idle",
    };
    let (largest, generated) = largest_allocation_during(|| vars.render_system());
    let error = generated.expect_err("the generated code refuses it");
    assert_eq!(error.code(), ErrorCode::TooLarge);
    assert!(error.to_string().contains("`agent-system`"), "{error}");
    assert!(largest <= ERROR_SLACK, "allocated {largest} bytes at once");
    // The first `build_prompt` of a debug build with hot reload starts the
    // dev path's watcher and loads the folder: done first, with small
    // values, so that what is watched is the render alone.
    let small = AgentSystemVars {
        agent_name: "Ada",
        ..vars
    };
    assert!(build_prompt(PromptId::AgentSystem, small).is_ok());
    let (largest, built) = largest_allocation_during(|| build_prompt(PromptId::AgentSystem, vars));
    let error = built.expect_err("build_prompt refuses it");
    assert_eq!(error.code(), ErrorCode::TooLarge);
    assert!(largest <= ERROR_SLACK, "allocated {largest} bytes at once");
}
