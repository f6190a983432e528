//! Unit tests of attribute parsing: assertions on the parsed structs.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Attribute, LitStr, Path};

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
fn replayable_state_is_a_flag_given_once() {
    let (attr, errors) = tool_attr(quote!());
    assert!(errors.is_empty() && !attr.replayable_state());
    let (attr, errors) = tool_attr(quote!(replayable_state));
    assert!(errors.is_empty(), "{errors:?}");
    assert!(attr.replayable_state());
    let (attr, errors) = tool_attr(quote!(replayable_state = false));
    assert!(errors.is_empty(), "{errors:?}");
    assert!(!attr.replayable_state());
    let (_, errors) = tool_attr(quote!(replayable_state = "yes"));
    assert_eq!(
        errors,
        ["`replayable_state` is `true` or `false`; `replayable_state` alone means `true`"]
    );
    let (_, errors) = tool_attr(quote!(replayable_state, replayable_state));
    assert_eq!(
        errors,
        ["duplicate `replayable_state` option; give it once"]
    );
}

#[test]
fn requires_extension_is_repeatable_and_takes_a_string() {
    let (attr, errors) = tool_attr(quote!(
        requires_extension = "com.example/a",
        name = "n",
        requires_extension = "com.example/b"
    ));
    assert!(errors.is_empty(), "{errors:?}");
    let ids: Vec<String> = attr.extensions.iter().map(LitStr::value).collect();
    assert_eq!(ids, ["com.example/a", "com.example/b"]);
    assert_eq!(attr.common.name.unwrap().value(), "n");

    let (attr, errors) = tool_attr(quote!(requires_extension = com::example));
    assert_eq!(
        errors,
        [
            "`requires_extension` takes a string literal: `requires_extension = \"com.example/my-extension\"`"
        ]
    );
    assert!(attr.extensions.is_empty());

    // Resources and prompts do not take it.
    let cx = Ctxt::new();
    PromptAttr::parse(&cx, quote!(requires_extension = "com.example/a"));
    let errors = messages(cx);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].starts_with("unknown `#[prompt]` option `requires_extension`"));
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
    assert_eq!(attr.description.unwrap().value(), "D");
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

fn resource_attr(args: TokenStream) -> (ResourceAttr, Vec<String>) {
    let cx = Ctxt::new();
    let attr = ResourceAttr::parse(&cx, args);
    (attr, messages(cx))
}

#[test]
fn negative_numbers_are_reported_and_dropped() {
    let (attr, errors) = resource_attr(quote!(
        "memo://x",
        size = -8,
        ttl_ms = -1,
        annotations(priority = -0.5),
        title = "t"
    ));
    assert_eq!(
        errors,
        [
            "`size` is a non-negative integer",
            "`ttl_ms` is a non-negative integer",
            "`priority` is a number from 0.0 to 1.0",
        ]
    );
    assert!(attr.size.is_none());
    assert!(attr.ttl_ms.is_none());
    assert!(attr.annotations.priority.is_none());
    // The keys after them are still read.
    assert_eq!(attr.common.title.unwrap().value(), "t");
}

#[test]
fn integers_must_be_integer_literals() {
    let (attr, errors) = resource_attr(quote!("memo://x", size = "12"));
    assert_eq!(errors, ["`size` takes an integer literal: `size = 1024`"]);
    assert!(attr.size.is_none());
    let (attr, errors) = resource_attr(quote!("memo://x", size = 12, ttl_ms = 0));
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(attr.size.unwrap().base10_parse::<u64>().unwrap(), 12);
    assert_eq!(attr.ttl_ms.unwrap().base10_parse::<u64>().unwrap(), 0);
}

#[test]
fn a_uri_after_the_options_is_taken_with_one_error() {
    let (attr, errors) = resource_attr(quote!(name = "readme", "memo://readme", title = "T"));
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].starts_with("the URI goes first"));
    assert_eq!(attr.uri.unwrap().value(), "memo://readme");
    assert!(!attr.uri_reported);
    assert_eq!(attr.common.name.unwrap().value(), "readme");
    assert_eq!(attr.common.title.unwrap().value(), "T");
}

#[test]
fn a_second_uri_is_reported_and_the_first_kept() {
    let (attr, errors) = resource_attr(quote!("memo://a", "memo://b"));
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].starts_with("`#[resource]` takes one URI"));
    assert_eq!(attr.uri.unwrap().value(), "memo://a");
}

#[test]
fn a_uri_that_is_not_a_string_literal_is_reported_once() {
    for uri in [
        quote!(README_URI),
        quote!(uris::README),
        quote!(concat!("memo://", "readme")),
        quote!(42),
    ] {
        let (attr, errors) = resource_attr(quote!(#uri, mime_type = "text/plain"));
        assert_eq!(errors.len(), 1, "{uri}: {errors:?}");
        assert!(errors[0].contains("as a string literal"), "{errors:?}");
        assert!(attr.uri.is_none());
        assert!(attr.uri_reported);
        // The options after it are still read.
        assert_eq!(attr.mime_type.unwrap().value(), "text/plain");
    }
}

#[test]
fn options_without_a_uri_are_options() {
    let (attr, errors) = resource_attr(quote!(crate = ::mcp_runtime, icon(src = "data:,")));
    assert!(errors.is_empty(), "{errors:?}");
    assert!(attr.uri.is_none());
    assert!(!attr.uri_reported);
    assert!(attr.common.krate.is_some());
    assert_eq!(attr.common.icons.len(), 1);
    // An unknown key in the URI's place is an unknown key, not a URI.
    let (attr, errors) = resource_attr(quote!(nme = "x"));
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].starts_with("unknown `#[resource]` option `nme`"));
    assert!(!attr.uri_reported);
}

#[test]
fn commas_inside_groups_do_not_split_arguments() {
    let (attr, errors) = resource_attr(quote!(
        "memo://x",
        annotations(audience = ["user", "assistant"], priority = 1),
        complete(a = f, b = g),
    ));
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(attr.annotations.audience.unwrap().len(), 2);
    assert_eq!(attr.completers.len(), 2);
}

#[test]
fn a_missing_comma_after_the_uri_is_one_error() {
    let (attr, errors) = resource_attr(quote!("memo://readme" name = "readme"));
    assert_eq!(errors, ["expected `,` after the URI"]);
    assert_eq!(attr.uri.unwrap().value(), "memo://readme");
    assert!(attr.common.name.is_none());
}

#[test]
fn layer_takes_any_expression_once() {
    let (attr, errors) = tool_attr(quote!(
        layer = (
            tower::timeout::TimeoutLayer::new(Duration::from_secs(5)),
            middleware::from_fn(guard)
        ),
        title = "T"
    ));
    assert!(errors.is_empty(), "{errors:?}");
    assert!(matches!(attr.common.layer, Some(syn::Expr::Tuple(_))));
    assert_eq!(attr.common.title.unwrap().value(), "T");

    let (attr, errors) = tool_attr(quote!(layer = a(), layer = b()));
    assert_eq!(errors, ["duplicate `layer` option; give it once"]);
    assert!(matches!(attr.common.layer, Some(syn::Expr::Call(_))));

    // Commas between generic arguments do not split a resource's options.
    let (attr, errors) = resource_attr(quote!(
        "memo://x",
        layer = Both::<A, B>::new(),
        timeout_ms = 250
    ));
    assert!(errors.is_empty(), "{errors:?}");
    assert!(attr.common.layer.is_some());
    assert_eq!(attr.common.timeout_ms, Some(250));
}

#[test]
fn timeout_ms_is_a_positive_integer_literal_given_once() {
    let (attr, errors) = tool_attr(quote!(timeout_ms = 5000));
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(attr.common.timeout_ms, Some(5000));
    let (attr, errors) = tool_attr(quote!(timeout_ms = 5_000u64));
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(attr.common.timeout_ms, Some(5000));

    let help = "`timeout_ms` is a positive number of milliseconds, e.g. `timeout_ms = 5000`";
    for value in [
        quote!(0),
        quote!(-5),
        quote!(2.5),
        quote!("5s"),
        quote!(5s),
        quote!(FIVE_SECONDS),
        quote!(5 * 1000),
    ] {
        let (attr, errors) = tool_attr(quote!(timeout_ms = #value, title = "T"));
        assert_eq!(errors, [help], "{value}");
        assert!(attr.common.timeout_ms.is_none());
        // The keys after it are still read.
        assert_eq!(attr.common.title.unwrap().value(), "T");
    }

    let (_, errors) = tool_attr(quote!(timeout_ms = 18446744073709551616));
    assert_eq!(
        errors,
        ["`timeout_ms` is at most 18446744073709551615 milliseconds"]
    );

    let cx = Ctxt::new();
    let attr = PromptAttr::parse(&cx, quote!(timeout_ms = 100, timeout_ms = 200));
    assert_eq!(
        messages(cx),
        ["duplicate `timeout_ms` option; give it once"]
    );
    assert_eq!(attr.common.timeout_ms, Some(100));
}

#[test]
fn blocking_is_a_flag_given_once() {
    let (attr, errors) = tool_attr(quote!(blocking, title = "T"));
    assert!(errors.is_empty(), "{errors:?}");
    assert!(attr.common.blocking.is_some());
    let (attr, errors) = tool_attr(quote!(title = "T"));
    assert!(errors.is_empty(), "{errors:?}");
    assert!(attr.common.blocking.is_none());

    let help = "`blocking` is a flag and takes no value: write `blocking` alone, or leave it out";
    for value in [quote!(blocking = true), quote!(blocking(pool = "io"))] {
        let (attr, errors) = tool_attr(quote!(#value, title = "T"));
        assert_eq!(errors, [help], "{value}");
        assert!(attr.common.blocking.is_none());
        // The keys after it are still read.
        assert_eq!(attr.common.title.unwrap().value(), "T");
    }

    let cx = Ctxt::new();
    let attr = ResourceAttr::parse(&cx, quote!("memo://x", blocking, blocking));
    assert_eq!(messages(cx), ["duplicate `blocking` option; give it once"]);
    assert!(attr.common.blocking.is_some());
    let cx = Ctxt::new();
    let attr = PromptAttr::parse(&cx, quote!(blocking));
    assert!(messages(cx).is_empty());
    assert!(attr.common.blocking.is_some());
}
