//! Token counts with OpenAI's BPE encodings (tiktoken-rs), for `list` and
//! `check` only: the `promptpack` library an application links never counts
//! tokens, so it never carries the encodings' megabytes. Counting is the
//! `tokens` feature: a build without it has a [`Counter`] that counts
//! nothing, and its callers ask [`Counter::BUILT`] first.

use promptpack::Error;
#[cfg(feature = "tokens")]
use std::sync::OnceLock;
#[cfg(feature = "tokens")]
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
    #[cfg(feature = "tokens")]
    bpe: OnceLock<Result<CoreBPE, String>>,
}

impl Counter {
    /// Whether this build counts tokens (the `tokens` feature).
    pub(crate) const BUILT: bool = cfg!(feature = "tokens");

    /// A counter for `encoding`, not loaded yet.
    pub(crate) fn new(encoding: Encoding) -> Counter {
        Counter {
            encoding,
            #[cfg(feature = "tokens")]
            bpe: OnceLock::new(),
        }
    }

    /// The encoding counted with.
    pub(crate) fn encoding(&self) -> Encoding {
        self.encoding
    }

    /// The tokens `text` encodes to, special tokens' text counted as
    /// ordinary text: a prompt's `<|endoftext|>` is text a user wrote.
    #[cfg(feature = "tokens")]
    pub(crate) fn count(&self, text: &str) -> Result<usize, Error> {
        use crate::usage_error;
        use promptpack::ErrorCode;
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

    /// Without the `tokens` feature there is nothing to count with: an
    /// error, which callers that look at [`Counter::BUILT`] never see.
    #[cfg(not(feature = "tokens"))]
    pub(crate) fn count(&self, _text: &str) -> Result<usize, Error> {
        Err(crate::usage_error(
            promptpack::ErrorCode::InvalidConfig,
            format!(
                "counting {} tokens needs the `tokens` feature, which this build of \
                 promptpack leaves out",
                self.encoding.name()
            ),
        ))
    }
}

#[cfg(all(test, feature = "tokens"))]
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
