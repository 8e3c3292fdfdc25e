//! A prompt folder in the case format of `tests/inputs/*.txt`: loading never
//! panics and reports located errors; a loaded library renders exactly as
//! the reference evaluator does, leniently and strictly; lints never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use promptpack::{
    Config, ErrorCode, Library, Severity, Sources, Style, lint_sources, render_diagnostic,
};
use promptpack_fuzz::{Reference, check_location, expanded_size, parse_case, reference_render};

/// Beyond this, splicing snippets is the input's point, not a bug's.
const MAX_EXPANDED: usize = 1 << 22;

fuzz_target!(|data: &[u8]| {
    let Ok(input) = std::str::from_utf8(data) else {
        return;
    };
    let case = parse_case(input);
    if expanded_size(&case) > MAX_EXPANDED {
        return;
    }
    let files = case.files();
    let sources = Sources {
        templates: case.templates.clone(),
        snippets: case.snippets.clone(),
        stray_files: Vec::new(),
    };
    for lint in lint_sources(&sources, &Config::new("/nonexistent-root")) {
        // Lints may also name a folder, such as a template folder.
        if lint
            .location
            .as_ref()
            .is_some_and(|l| files.contains_key(&l.path))
        {
            check_location(&lint, &files);
        }
        let _ = render_diagnostic(&lint, Severity::Warning, Style::Plain);
    }
    let library = match Library::from_sources(
        case.templates.clone(),
        case.snippets.clone(),
        case.delimiters.clone(),
    ) {
        Ok(library) => library,
        Err(e) => {
            for d in e.diagnostics() {
                check_location(d, &files);
                let _ = render_diagnostic(d, Severity::Error, Style::Plain);
            }
            return;
        }
    };
    for t in &case.templates {
        let mut want_missing = Vec::new();
        let mut render_part = |file| {
            let mut r = Reference::default();
            reference_render(file, &case.snippets, &case.vars, &case.delimiters, &mut r);
            for m in r.missing {
                if !want_missing.contains(&m) {
                    want_missing.push(m);
                }
            }
            r.text
        };
        let want_system = render_part(&t.system);
        let want_user = t.user.as_ref().map(render_part);

        let lenient = library
            .build_prompt_lenient(&t.id, &case.vars)
            .expect("a lenient render never fails");
        assert_eq!(lenient.system, want_system, "system part of {}", t.id);
        assert_eq!(lenient.user, want_user, "user part of {}", t.id);
        match library.build_prompt(&t.id, &case.vars) {
            Ok(strict) => {
                assert!(
                    want_missing.is_empty(),
                    "strict render ignored {want_missing:?}"
                );
                assert_eq!(strict, lenient);
            }
            Err(e) => {
                let missing: Vec<String> = e
                    .diagnostics()
                    .iter()
                    .map(|d| {
                        assert_eq!(d.code, ErrorCode::MissingVar);
                        check_location(d, &files);
                        let prefix = format!("prompt `{}` needs `", t.id);
                        let name = d.message.strip_prefix(&prefix);
                        let name = name.and_then(|n| n.strip_suffix("`, which was not given"));
                        name.unwrap_or_else(|| panic!("unexpected message: {}", d.message))
                            .to_string()
                    })
                    .collect();
                assert_eq!(missing, want_missing, "missing variables of {}", t.id);
            }
        }
    }
});
