//! `promptpack contract`: the contract of the program a prompt root
//! compiles to, as the JSON file the build writes.

use crate::Folders;
use clap::Args;
use promptpack::Style;
use std::process::ExitCode;

/// Options of `promptpack contract`.
#[derive(Debug, Args)]
pub(crate) struct ContractArgs {
    #[command(flatten)]
    folders: Folders,
}

/// Prints the contract JSON, or every error that keeps the root from
/// compiling (such a root has no program, so no contract).
pub(crate) fn run(args: &ContractArgs, style: Style) -> ExitCode {
    // The build API's own function, so that this prints what the build
    // writes to `OUT_DIR`, byte for byte.
    match args
        .folders
        .config()
        .and_then(|c| promptpack_build::contract(&c))
    {
        Ok(contract) => crate::print_out(&contract.to_json(), style),
        Err(e) => crate::fail(&e, style),
    }
}
