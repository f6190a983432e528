//! `complete(argument = path::to::completer, ...)`, shared by `#[prompt]`
//! and `#[resource]`.

use syn::meta::ParseNestedMeta;
use syn::{Ident, Path};

use crate::ctxt::Ctxt;

/// One `argument = completer` pair.
pub(crate) struct CompleterAttr {
    pub(crate) argument: Ident,
    pub(crate) completer: Path,
}

/// Reads the pairs inside `complete(...)`.
pub(crate) fn parse(
    cx: &Ctxt,
    meta: &ParseNestedMeta<'_>,
    completers: &mut Vec<CompleterAttr>,
) -> syn::Result<()> {
    meta.parse_nested_meta(|inner| {
        let Some(argument) = inner.path.get_ident().cloned() else {
            cx.error_spanned_by(
                &inner.path,
                "`complete(...)` takes `argument = completer_function` pairs",
            );
            return Ok(());
        };
        let completer: Path = inner.value()?.parse().map_err(|error| {
            syn::Error::new(
                error.span(),
                format!(
                    "`{argument}` needs a completer function: `complete({argument} = my_completer)`"
                ),
            )
        })?;
        if completers.iter().any(|c| c.argument == argument) {
            cx.error_spanned_by(
                &argument,
                format!("`{argument}` already has a completer; give it once"),
            );
        } else {
            completers.push(CompleterAttr {
                argument,
                completer,
            });
        }
        Ok(())
    })
}
