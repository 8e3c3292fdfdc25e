//! Placeholder until the watcher lands: the dev path renders from embedded code.

use crate::__private::DevSource;

pub(crate) fn dev_render(
    _source: &DevSource,
    _id: &str,
    _vars: &dyn crate::Vars,
) -> Option<crate::Result<crate::Prompt>> {
    None
}
