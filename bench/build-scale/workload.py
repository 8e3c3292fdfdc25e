#!/usr/bin/env python3
"""Writes a typed crate with N synthetic prompts, for bench/build-scale/run.sh.

usage: workload.py PROMPTS DIR PROMPTPACK_REPO

Each prompt is about 2.9 KB of Markdown with 8 text variables, 3 flags (one
`{{#if}}` block each, two with an `{{else}}`) and one snippet include; 20
shared snippets of about 300 bytes. The same PROMPTS always gives the same
files. The crate's build script calls `promptpack_build::compile()` and its
`main` renders one prompt through the generated `build_prompt`.
"""
import os
import random
import sys

WORDS = ("agent context review change function module test request user result "
         "verify carefully before after the a and with every small step report "
         "error value file command output explain reason plan").split()
VARIABLES = ["agentName", "userName", "topic", "language", "tone", "audience",
             "deadline", "outputFormat"]
FLAGS = ["hasTools", "isExpert", "verbose"]
SNIPPETS = 20


def sentence(rng, words):
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def prompt(rng, i):
    parts = [f"# Prompt {i} for {{{{agentName}}}}\n\n"]
    variables = iter(VARIABLES[1:] * 2)
    flags = iter(FLAGS)
    paragraph = 0
    while sum(map(len, parts)) < 2_450:
        paragraph += 1
        kind = paragraph % 5
        if kind == 2 and paragraph == 2:
            parts.append(f"{{{{snippet:rules_{rng.randrange(SNIPPETS):02}}}}}\n\n")
        elif kind == 4 and (flag := next(flags, None)):
            other = (f"{{{{else}}}}\n{sentence(rng, 18)}\n" if flag != "verbose" else "")
            parts.append(f"{{{{#if {flag}}}}}\n{sentence(rng, 25)}\n{other}{{{{/if}}}}\n\n")
        else:
            var = next(variables, "agentName")
            parts.append(f"{sentence(rng, 30)} {{{{{var}}}}} {sentence(rng, 20)}\n\n")
    # Every prompt uses all eleven names, however the paragraphs fell.
    parts.append("Reply in {{language}} for {{audience}} by {{deadline}} as "
                 "{{outputFormat}}, in a {{tone}} tone, about {{topic}} for {{userName}}.\n")
    for flag in flags:
        parts.append(f"{{{{#if {flag}}}}}\n{sentence(rng, 12)}\n{{{{/if}}}}\n")
    return "".join(parts)


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def main():
    count, root, repo = int(sys.argv[1]), sys.argv[2], os.path.abspath(sys.argv[3])
    rng = random.Random(0x5EED)
    name = f"scale-{count}"
    write(f"{root}/Cargo.toml", f"""[package]
name = "{name}"
version = "0.0.0"
edition = "2024"
publish = false

[workspace]

[dependencies]
promptpack = {{ path = "{repo}" }}

[build-dependencies]
promptpack-build = {{ path = "{repo}/crates/promptpack-build" }}
""")
    write(f"{root}/build.rs", """fn main() {
    if let Err(e) = promptpack_build::compile() {
        panic!("{e}");
    }
}
""")
    write(f"{root}/src/main.rs", """promptpack::include_prompts!();

fn main() {
    let vars = Prompt00000Vars {
        agent_name: "Ada",
        user_name: "Grace",
        topic: "parsers",
        language: "English",
        tone: "plain",
        audience: "engineers",
        deadline: "Friday",
        output_format: "Markdown",
        has_tools: true,
        is_expert: false,
        verbose: true,
    };
    let prompt = build_prompt(PromptId::Prompt00000, vars).expect("renders");
    println!("{} prompts; prompt-00000 renders {} bytes", PromptId::ALL.len(), prompt.system.len());
}
""")
    template_bytes = 0
    for s in range(SNIPPETS):
        text = f"## House rules {s}\n\n{sentence(rng, 25)}\n\n{sentence(rng, 20)}\n"
        template_bytes += len(text.encode())
        write(f"{root}/snippets/rules_{s:02}.md", text)
    for i in range(count):
        text = prompt(rng, i)
        template_bytes += len(text.encode())
        write(f"{root}/templates/prompt-{i:05}/system.md", text)
    print(template_bytes)


if __name__ == "__main__":
    main()
