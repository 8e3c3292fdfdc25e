//! The `codegen` section, the build-script cost: what `promptpack_build` does for a crate with
//! 10, 100 and 1,000 synthetic prompts, whole (`generate_code`) and the code generator alone.

use crate::harness::{Mode, err, escape_cell, time_ms};
use crate::synthetic::{Scratch, write_synthetic, write_synthetic_with};
use std::hint::black_box;

/// The section: three sizes, with and without front matter.
pub fn section(mode: &Mode) -> String {
    let mut out = String::from(
        "## Build-script cost: synthetic prompts of about 5 KB\n\n\
         `build::generate_code(&Config)` is everything `build::compile_config` does but the \
         writes to `OUT_DIR`: read + check + resolve + lint + codegen. `codegen::generate` is \
         the code generator alone, on prompts already resolved. The output is the generated \
         code ÷ the template and snippet bytes on disk. \"with front matter\": the same prompts, \
         each with a ~600-byte front matter block (description, every variable it uses declared \
         with kinds, descriptions and examples, an example set, model settings, a budget) through \
         `generate_code`. Median of several runs; ms (ms per prompt).\n\n\
         | prompts | `generate_code` | with front matter | `codegen::generate` | output | ÷ templates |\n\
         |---:|---:|---:|---:|---:|---:|\n",
    );
    let mut per_prompt: Vec<(usize, f64)> = Vec::new();
    let mut front_matter_per_prompt: Vec<(usize, f64)> = Vec::new();
    let mut build_1000 = f64::NAN;
    let mut front_matter_1000 = f64::NAN;
    for (prompts, samples) in [(10, 21), (100, 7), (1_000, 3)] {
        let samples = if mode.quick {
            (samples / 4).max(1)
        } else {
            samples
        };
        let scratch = Scratch::new(&format!("codegen-{prompts}"));
        let result = (|| -> Result<String, String> {
            let template_bytes = write_synthetic(&scratch.0, prompts)
                .map_err(|e| format!("writing {}: {e}", scratch.0.display()))?;
            let config = promptpack::Config::new(&scratch.0);
            let code = promptpack_build::generate_code(&config).map_err(err)?;
            let full = time_ms(samples, || {
                black_box(promptpack_build::generate_code(black_box(&config)).expect("ran once"));
            });
            let (sources, errors) = promptpack_load::read_sources(&config);
            if let Some(e) = errors.first() {
                return Err(e.to_string());
            }
            let (resolved, errors) = promptpack_core::resolve::resolve(
                &sources.templates,
                &sources.snippets,
                config.delimiters(),
            );
            if let Some(e) = errors.first() {
                return Err(e.to_string());
            }
            let dev = promptpack_build::codegen::DevPaths {
                root: scratch.0.display().to_string(),
                templates: config.templates().display().to_string(),
                snippets: config.snippets().display().to_string(),
                open: "{{".into(),
                close: "}}".into(),
                standalone_tags: false,
                max_render_bytes: promptpack::DEFAULT_MAX_RENDER_BYTES,
            };
            let generate =
                || promptpack_build::codegen::generate(&resolved, &sources.templates, &dev);
            generate().map_err(err)?;
            let codegen = time_ms(samples, || {
                black_box(generate().expect("generated once"));
            });
            let with_front_matter = Scratch::new(&format!("codegen-fm-{prompts}"));
            write_synthetic_with(&with_front_matter.0, prompts, true)
                .map_err(|e| format!("writing {}: {e}", with_front_matter.0.display()))?;
            let fm_config = promptpack::Config::new(&with_front_matter.0);
            promptpack_build::generate_code(&fm_config).map_err(err)?;
            let front_matter = time_ms(samples, || {
                black_box(
                    promptpack_build::generate_code(black_box(&fm_config)).expect("ran once"),
                );
            });
            let cell = |ms: f64| format!("{ms:.1} ({:.2})", ms / prompts as f64);
            per_prompt.push((prompts, codegen / prompts as f64));
            front_matter_per_prompt.push((prompts, front_matter / prompts as f64));
            if prompts == 1_000 {
                build_1000 = full;
                front_matter_1000 = front_matter;
            }
            Ok(format!(
                "| {prompts} | {} | {} | {} | {:.1} MB | {:.2} |\n",
                cell(full),
                cell(front_matter),
                cell(codegen),
                code.len() as f64 / 1e6,
                code.len() as f64 / template_bytes as f64
            ))
        })();
        match result {
            Ok(row) => out.push_str(&row),
            Err(e) => out.push_str(&format!(
                "| {prompts} | FAILED: {} | | | | |\n",
                escape_cell(&e)
            )),
        }
    }
    if let (Some(&(_, first)), Some(&(n, last))) = (per_prompt.first(), per_prompt.last()) {
        out.push_str(&format!(
            "\nPer-prompt `codegen::generate` cost at {n} prompts is {:.2}× that at 10 \
             (1.00 = linear growth). 1,000 prompts through the build script's path \
             (`generate_code`): {build_1000:.0} ms (target ≤ 1,000 ms).\n",
            last / first,
        ));
    }
    if let (Some(&(_, first)), Some(&(n, last))) = (
        front_matter_per_prompt.first(),
        front_matter_per_prompt.last(),
    ) {
        out.push_str(&format!(
            "With front matter: per-prompt `generate_code` cost at {n} prompts is {:.2}× that \
             at 10 (1.00 = linear); 1,000 prompts: {front_matter_1000:.0} ms, {:.2}× without \
             (target ≤ 1,000 ms).\n",
            last / first,
            front_matter_1000 / build_1000,
        ));
    }
    out
}
