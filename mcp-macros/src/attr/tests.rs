//! Unit tests of attribute parsing: assertions on the parsed structs.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Attribute, Path};

use super::*;
use crate::ctxt::Ctxt;

fn messages(cx: Ctxt) -> Vec<String> {
    match cx.check() {
        Ok(()) => Vec::new(),
        Err(errors) => errors.into_iter().map(|e| e.to_string()).collect(),
    }
}

fn tool_attr(args: TokenStream) -> (ToolAttr, Vec<String>) {
    let cx = Ctxt::new();
    let attr = ToolAttr::parse(&cx, args);
    (attr, messages(cx))
}

fn param_attr(attrs: TokenStream) -> (ParamAttr, Vec<Attribute>, Vec<String>) {
    let item: syn::ItemFn = syn::parse2(quote!(fn f(#attrs x: T) {})).unwrap();
    let syn::FnArg::Typed(typed) = &item.sig.inputs[0] else {
        unreachable!()
    };
    let cx = Ctxt::new();
    let (attr, kept) = ParamAttr::parse(&cx, &typed.attrs);
    (attr, kept, messages(cx))
}

#[test]
fn every_tool_option_is_read() {
    let (attr, errors) = tool_attr(quote!(
        name = "n",
        title = "T",
        description = "D",
        annotations(read_only, destructive = false, title = "A"),
        icon(
            src = "https://x/i.png",
            sizes = ["48x48", "any"],
            theme = "dark"
        ),
        icon(src = "data:,"),
        meta = "{}",
        crate = my::runtime
    ));
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(attr.common.name.unwrap().value(), "n");
    assert_eq!(attr.common.title.unwrap().value(), "T");
    assert_eq!(attr.common.description.unwrap().value(), "D");
    assert_eq!(attr.annotations.title.unwrap().value(), "A");
    assert!(attr.annotations.read_only.unwrap().value);
    assert!(!attr.annotations.destructive.unwrap().value);
    assert!(attr.annotations.idempotent.is_none());
    assert_eq!(attr.common.icons.len(), 2);
    assert_eq!(attr.common.icons[0].sizes.len(), 2);
    assert_eq!(attr.common.icons[0].theme.as_ref().unwrap().value(), "dark");
    assert!(attr.common.icons[1].theme.is_none());
    assert_eq!(attr.common.meta.unwrap().value(), "{}");
    let krate: Path = syn::parse_quote!(my::runtime);
    assert!(attr.common.krate.unwrap() == krate);
}

#[test]
fn independent_mistakes_are_all_reported() {
    let (attr, errors) = tool_attr(quote!(nme = "x", name = "a", name = "b", title = "t"));
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(errors[0].starts_with("unknown `#[tool]` option `nme`"));
    assert_eq!(errors[1], "duplicate `name` option; give it once");
    // The first value wins and later keys are still read.
    assert_eq!(attr.common.name.unwrap().value(), "a");
    assert_eq!(attr.common.title.unwrap().value(), "t");
}

#[test]
fn values_of_the_wrong_kind_name_the_key() {
    let (_, errors) = tool_attr(quote!(crate = "mcp_runtime"));
    assert_eq!(
        errors,
        ["`crate` takes a path, not a string: write `crate = mcp_runtime`"]
    );
    let (_, errors) = tool_attr(quote!(title = 5));
    assert_eq!(
        errors,
        ["`title` takes a string literal: `title = \"...\"`"]
    );
    let (_, errors) = tool_attr(quote!(annotations(idempotent = "yes")));
    assert_eq!(
        errors,
        ["`idempotent` is `true` or `false`; `idempotent` alone means `true`"]
    );
}

#[test]
fn parameter_attributes_are_taken_and_others_kept() {
    let (attr, kept, errors) = param_attr(quote!(
        /// Docs.
        #[arg(rename = "wire", description = "D")]
        #[allow(unused)]
    ));
    assert!(errors.is_empty(), "{errors:?}");
    assert!(attr.ctx.is_none());
    assert!(attr.arg.is_some());
    assert_eq!(attr.rename.unwrap().value(), "wire");
    assert_eq!(attr.common.description.unwrap().value(), "D");
    assert_eq!(attr.docs.len(), 1);
    assert_eq!(kept.len(), 1);
    assert!(kept[0].path().is_ident("allow"));
}

#[test]
fn ctx_takes_no_arguments() {
    let (attr, _, errors) = param_attr(quote!(#[ctx]));
    assert!(attr.ctx.is_some());
    assert!(errors.is_empty());
    for tokens in [quote!(#[ctx(foo)]), quote!(#[ctx = "x"])] {
        let (attr, _, errors) = param_attr(tokens);
        // Still a context parameter, so no second error about its type.
        assert!(attr.ctx.is_some());
        assert_eq!(errors.len(), 1);
        assert!(errors[0].starts_with("`#[ctx]` takes no arguments"));
    }
}

#[test]
fn resource_uri_comes_first_then_options() {
    let cx = Ctxt::new();
    let attr = ResourceAttr::parse(
        &cx,
        quote!(
            "memo://notes/{id}",
            mime_type = "text/markdown",
            size = 12,
            ttl_ms = 60000,
            cache = public,
            annotations(
                audience = ["user"],
                priority = 0.5,
                last_modified = "2025-01-12T15:00:58Z"
            ),
            complete(id = complete_ids)
        ),
    );
    assert!(messages(cx).is_empty());
    assert_eq!(attr.uri.unwrap().value(), "memo://notes/{id}");
    assert_eq!(attr.mime_type.unwrap().value(), "text/markdown");
    assert_eq!(attr.size.unwrap().base10_digits(), "12");
    assert_eq!(attr.ttl_ms.unwrap().base10_digits(), "60000");
    assert_eq!(attr.cache.unwrap(), "public");
    assert_eq!(attr.annotations.audience.unwrap().len(), 1);
    assert!(attr.annotations.priority.is_some());
    assert_eq!(attr.completers.len(), 1);
    assert_eq!(attr.completers[0].argument, "id");
}

#[test]
fn resource_without_uri_still_reads_options() {
    let cx = Ctxt::new();
    let attr = ResourceAttr::parse(&cx, quote!(name = "x"));
    assert!(messages(cx).is_empty());
    assert!(attr.uri.is_none());
    assert_eq!(attr.common.name.unwrap().value(), "x");
}

#[test]
fn prompt_completers_are_read_once_each() {
    let cx = Ctxt::new();
    let attr = PromptAttr::parse(&cx, quote!(complete(topic = a::b, topic = c), title = "T"));
    let errors = messages(cx);
    assert_eq!(errors, ["`topic` already has a completer; give it once"]);
    assert_eq!(attr.completers.len(), 1);
    assert_eq!(attr.common.title.unwrap().value(), "T");
}
