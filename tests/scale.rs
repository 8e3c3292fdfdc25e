use promptpack::codegen::{DevPaths, generate};
use promptpack::{Delimiters, SourceFile, TemplateSource, resolve};

fn nested(depth: usize) -> String {
    let mut s = String::new();
    for i in 0..depth {
        s.push_str(&format!("{{{{#if c{}}}}}a", i % 7));
    }
    s.push_str("{{x}}");
    for _ in 0..depth {
        s.push_str("{{/if}}b");
    }
    s
}

#[test]
fn probe() {
    for (depth, stack_mb) in [
        (64usize, 2usize),
        (65, 2),
        (1000, 2),
        (10000, 2),
        (10000, 512),
    ] {
        let text = nested(depth);
        let r = std::thread::Builder::new()
            .stack_size(stack_mb << 20)
            .spawn(move || {
                let id = "deep";
                let t = vec![TemplateSource {
                    id: id.into(),
                    system: SourceFile::new(format!("templates/{id}/system.md"), text),
                    user: None,
                }];
                let (p, e) = resolve(&t, &[], &Delimiters::default());
                assert!(e.is_empty(), "{e:?}");
                let dev = DevPaths {
                    root: "/r".into(),
                    templates: "/r/t".into(),
                    snippets: "/r/s".into(),
                    open: "{{".into(),
                    close: "}}".into(),
                };
                let start = std::time::Instant::now();
                let code = generate(&p, &t, &dev).unwrap();
                let t1 = start.elapsed();
                let ok = if stack_mb > 100 || depth < 100 {
                    syn::parse_file(&code)
                        .map(|_| ())
                        .map_err(|e| e.to_string())
                } else {
                    Ok(())
                };
                if depth == 65 {
                    std::fs::write("/tmp/probe/flat.rs", &code).unwrap();
                }
                (code.len(), t1, ok)
            })
            .unwrap()
            .join();
        eprintln!(
            "depth {depth} stack {stack_mb}MB: {:?}",
            r.map_err(|_| "panic")
        );
    }
}
