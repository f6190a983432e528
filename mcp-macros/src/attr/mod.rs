//! Parsing attribute arguments into plain structs. Semantic rules live in
//! `check/`; here only the grammar is enforced, with unknown keys reported
//! at the key.

mod app;
mod ask;
mod common;
mod completers;
mod form;
mod param;
mod prompt;
mod resource;
#[cfg(test)]
mod tests;
mod tool;

pub(crate) use self::app::{AppToolAttr, AppViewAttr};
pub(crate) use self::ask::{AskAttrKind, placeholders};
pub(crate) use self::common::{CommonAttr, Flag, IconAttr, ScopesAttr};
pub(crate) use self::completers::CompleterAttr;
pub(crate) use self::form::parse_form_crate;
pub(crate) use self::param::ParamAttr;
pub(crate) use self::prompt::PromptAttr;
pub(crate) use self::resource::{PRIORITY_RANGE, ResourceAttr};
pub(crate) use self::tool::ToolAttr;
