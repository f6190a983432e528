//! `#[elicit_form(crate = path)]`, the derive's only option.

use syn::{Attribute, Path};

use super::common::{crate_path, set_once, unknown_key};
use crate::ctxt::Ctxt;
use crate::symbol::{CRATE, ELICIT_FORM};

/// The `crate = ...` override of `#[derive(ElicitForm)]`, if given.
pub(crate) fn parse_form_crate(cx: &Ctxt, attrs: &[Attribute]) -> Option<Path> {
    let mut krate = None;
    for attr in attrs.iter().filter(|attr| attr.path() == ELICIT_FORM) {
        let result = attr.parse_nested_meta(|meta| {
            if meta.path == CRATE {
                set_once(cx, &meta, CRATE, &mut krate, crate_path(&meta)?);
            } else {
                unknown_key(cx, &meta, "#[elicit_form]", "`crate`")?;
            }
            Ok(())
        });
        if let Err(error) = result {
            cx.push(error);
        }
    }
    krate
}
