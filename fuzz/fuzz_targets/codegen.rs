//! A prompt folder in the case format: whatever resolves, the code generator
//! either reports located naming errors or writes Rust that parses, holding
//! nothing rustc refuses in a doc comment or literal.
#![no_main]

use libfuzzer_sys::fuzz_target;
use promptpack::codegen::{DevPaths, generate};
use promptpack::{ErrorCode, resolve};
use promptpack_fuzz::{check_location, expanded_size, is_bidi_control, parse_case};

const MAX_EXPANDED: usize = 1 << 20;

fuzz_target!(|data: &[u8]| {
    let Ok(input) = std::str::from_utf8(data) else {
        return;
    };
    let case = parse_case(input);
    if expanded_size(&case) > MAX_EXPANDED {
        return;
    }
    let (mut prompts, errors) = resolve(&case.templates, &case.snippets, &case.delimiters);
    if !errors.is_empty() {
        return;
    }
    prompts.sort_by(|a, b| a.id.cmp(&b.id));
    let dev = DevPaths {
        root: "/crate".into(),
        templates: "/crate/templates".into(),
        snippets: "/crate/snippets".into(),
        open: case.delimiters.open().into(),
        close: case.delimiters.close().into(),
    };
    match generate(&prompts, &case.templates, &dev) {
        Ok(code) => {
            if let Err(e) = syn::parse_file(&code) {
                panic!("generated code does not parse: {e}\n{code}");
            }
            let mut chars = code.chars().peekable();
            while let Some(c) = chars.next() {
                assert!(!is_bidi_control(c), "bidi control {c:?} in generated code");
                assert!(
                    c != '\r' || chars.peek() == Some(&'\n'),
                    "bare CR in generated code"
                );
            }
        }
        Err(e) => {
            let files = case.files();
            for d in e.diagnostics() {
                assert!(
                    matches!(
                        d.code,
                        ErrorCode::InvalidId
                            | ErrorCode::IdCollision
                            | ErrorCode::InvalidVarName
                            | ErrorCode::VarCollision
                    ),
                    "unexpected {d}"
                );
                assert!(d.location.is_some(), "{d} has no location");
                // Id errors name the folder, not a file.
                if !matches!(d.code, ErrorCode::InvalidId | ErrorCode::IdCollision) {
                    check_location(d, &files);
                }
            }
        }
    }
});
