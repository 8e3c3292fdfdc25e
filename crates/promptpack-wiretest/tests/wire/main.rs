//! The adapters of `promptpack::adapters` on the wire: the JSON each LLM
//! crate sends for the fixture prompts, held to committed goldens
//! (`goldens`), real clients against the local server (`clients`), and
//! responses read back into the generated types, or refused (`read_back`).

mod clients;
mod goldens;
mod read_back;
mod support;
