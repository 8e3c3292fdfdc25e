//! Token counts with OpenAI's BPE encodings (tiktoken-rs), for `list` and
//! `check` only: the `promptpack` library an application links never counts
//! tokens, so it never carries the encodings' megabytes.

use crate::usage_error;
use promptpack::{Error, ErrorCode};
use std::sync::OnceLock;
use tiktoken_rs::CoreBPE;

/// The encodings `--tokenizer` offers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Encoding {
    /// GPT-4o, GPT-4.1, o-series and later models.
    #[default]
    #[value(name = "o200k_base")]
    O200kBase,
    /// GPT-4 and GPT-3.5.
    #[value(name = "cl100k_base")]
    Cl100kBase,
}

impl Encoding {
    /// The name shown in `list` and in messages, as `--tokenizer` takes it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Encoding::O200kBase => "o200k_base",
            Encoding::Cl100kBase => "cl100k_base",
        }
    }
}

/// Counts tokens of one encoding, loading it at the first count: reading a
/// BPE takes hundreds of milliseconds, which a command that counts nothing
/// (a `check` without budgets, an empty folder) must not pay.
pub(crate) struct Counter {
    encoding: Encoding,
    bpe: OnceLock<Result<CoreBPE, String>>,
}

impl Counter {
    /// A counter for `encoding`, not loaded yet.
    pub(crate) fn new(encoding: Encoding) -> Counter {
        Counter {
            encoding,
            bpe: OnceLock::new(),
        }
    }

    /// The encoding counted with.
    pub(crate) fn encoding(&self) -> Encoding {
        self.encoding
    }

    /// The tokens `text` encodes to, special tokens' text counted as
    /// ordinary text: a prompt's `<|endoftext|>` is text a user wrote.
    pub(crate) fn count(&self, text: &str) -> Result<usize, Error> {
        let bpe = self.bpe.get_or_init(|| {
            let loaded = match self.encoding {
                Encoding::O200kBase => tiktoken_rs::o200k_base(),
                Encoding::Cl100kBase => tiktoken_rs::cl100k_base(),
            };
            loaded.map_err(|e| e.to_string())
        });
        match bpe {
            Ok(bpe) => Ok(bpe.encode_ordinary(text).len()),
            // The encoding ships inside the binary, so this is a damaged
            // binary: reading it is the nearest thing to an I/O failure.
            Err(e) => Err(usage_error(
                ErrorCode::Io,
                format!("cannot load the {} tokenizer: {e}", self.encoding.name()),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_with_each_encoding() {
        for encoding in [Encoding::O200kBase, Encoding::Cl100kBase] {
            let counter = Counter::new(encoding);
            assert_eq!(counter.count("").ok(), Some(0));
            assert_eq!(counter.count("hello world").ok(), Some(2));
            // Special tokens' text is text: more than the one special token.
            assert!(counter.count("<|endoftext|>").ok() > Some(1));
        }
    }
}
