//! Synthetic prompt trees, the same on every run (a fixed-seed generator): prompts of about
//! 5 KB with variables, conditional blocks and snippet includes, written into scratch folders
//! for the memory, build-script cost, hot reload and language server sections (the catalog
//! section draws its words from here too).

use std::path::{Path, PathBuf};

/// Snippets in a synthetic tree.
const SYNTHETIC_SNIPPETS: usize = 40;

/// A small deterministic generator (xorshift) so every run writes the same
/// corpus.
pub struct Rng(pub u64);

impl Rng {
    /// The next number of the sequence.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// A number below `n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const WORDS: &[&str] = &[
    "agent",
    "context",
    "review",
    "change",
    "function",
    "module",
    "test",
    "request",
    "user",
    "result",
    "verify",
    "carefully",
    "before",
    "after",
    "the",
    "a",
    "and",
    "with",
    "every",
    "small",
    "step",
    "report",
    "error",
    "value",
    "file",
    "command",
    "output",
    "explain",
    "reason",
    "plan",
];

/// `words` words from [`WORDS`], then a full stop.
pub fn sentence(rng: &mut Rng, words: usize) -> String {
    let mut s = String::new();
    for i in 0..words {
        if i > 0 {
            s.push(' ');
        }
        s.push_str(WORDS[rng.below(WORDS.len())]);
    }
    s.push('.');
    s
}

/// A prompt of about 5 KB: paragraphs with variables, two conditional blocks
/// and two snippet includes.
fn synthetic_prompt(rng: &mut Rng, i: usize) -> String {
    let mut s = format!("# Prompt {i} for {{{{agentName}}}}\n\n");
    let mut paragraph = 0;
    while s.len() < 4_900 {
        paragraph += 1;
        match paragraph % 7 {
            2 => s.push_str(&format!(
                "{{{{snippet:snippet_{:02}}}}}\n\n",
                rng.below(SYNTHETIC_SNIPPETS)
            )),
            4 => s.push_str(&format!(
                "{{{{#if flag_{}}}}}\n{}\n{{{{/if}}}}\n",
                rng.below(4),
                sentence(rng, 30)
            )),
            _ => s.push_str(&format!(
                "{} {{{{var_{}}}}} {} {{{{userName}}}}.\n\n",
                sentence(rng, 40),
                rng.below(6),
                sentence(rng, 25)
            )),
        }
    }
    s
}

/// A front matter block for synthetic prompt `i` whose text is `body`: a
/// description, every variable the body uses declared (flags with their
/// kind, values with a kind, description and example), an example set,
/// model settings and a budget — about 600 bytes of YAML. Only used names
/// are declared, so that the build reports no `unused_var` warnings.
fn synthetic_front_matter(i: usize, body: &str) -> String {
    let mut s =
        format!("---\ndescription: Synthetic prompt {i}, for the build-script bench.\nvars:\n");
    s.push_str("  agentName: {description: The agent's name., example: Ada}\n");
    s.push_str("  userName: {description: Who the agent works with., example: Grace}\n");
    for v in (0..6).filter(|v| body.contains(&format!("{{{{var_{v}}}}}"))) {
        s.push_str(&format!(
            "  var_{v}: {{kind: text, description: Value {v} of the prompt., example: value {v}}}\n"
        ));
    }
    for f in (0..4).filter(|f| body.contains(&format!("{{{{#if flag_{f}}}}}"))) {
        s.push_str(&format!(
            "  flag_{f}: {{kind: flag, description: Whether part {f} is shown.}}\n"
        ));
    }
    s.push_str("examples:\n  basic: {agentName: Ada, userName: Grace}\n");
    s.push_str("model: {name: some-model, temperature: 0.2, stop: [\"\\n\\n\"]}\n");
    s.push_str("max_tokens: 4000\n---\n");
    s
}

/// Writes `prompts` synthetic prompts (and the snippets they include) under
/// `root`; returns the bytes of template text written.
pub fn write_synthetic(root: &Path, prompts: usize) -> std::io::Result<u64> {
    write_synthetic_with(root, prompts, false)
}

/// [`write_synthetic`], each prompt with a front matter block when
/// `front_matter` is set (the same template text after it).
pub fn write_synthetic_with(
    root: &Path,
    prompts: usize,
    front_matter: bool,
) -> std::io::Result<u64> {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut bytes = 0u64;
    std::fs::create_dir_all(root.join("snippets"))?;
    for i in 0..SYNTHETIC_SNIPPETS {
        let text = format!(
            "## Rules {i}\n\n{}\n\n{}",
            sentence(&mut rng, 30),
            sentence(&mut rng, 20)
        );
        bytes += text.len() as u64;
        std::fs::write(
            root.join("snippets").join(format!("snippet_{i:02}.md")),
            text,
        )?;
    }
    for i in 0..prompts {
        let dir = root.join("templates").join(format!("prompt-{i:05}"));
        std::fs::create_dir_all(&dir)?;
        let mut text = synthetic_prompt(&mut rng, i);
        if front_matter {
            let block = synthetic_front_matter(i, &text);
            text.insert_str(0, &block);
        }
        bytes += text.len() as u64;
        std::fs::write(dir.join("system.md"), text)?;
    }
    Ok(bytes)
}

/// A scratch folder under the system's temporary folder, removed on drop.
pub struct Scratch(pub PathBuf);

impl Scratch {
    /// `promptpack-bench-<pid>-<label>`, emptied first.
    pub fn new(label: &str) -> Scratch {
        let dir =
            std::env::temp_dir().join(format!("promptpack-bench-{}-{label}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
