//! Expansion pieces every kind of handler shares: calling the function with
//! its context parameters, and the metadata fields of registry entries.

use proc_macro2::{Group, Span, TokenStream, TokenTree};
use quote::{format_ident, quote, quote_spanned};
use syn::Ident;
use syn::spanned::Spanned as _;

use crate::attr::{CommonAttr, CompleterAttr, IconAttr};
use crate::model::{HandlerFn, Param};

/// An identifier for generated locals that user code can never name.
pub(super) fn mixed(name: &str) -> Ident {
    format_ident!("{}", name, span = Span::mixed_site())
}

/// The local holding the value of parameter `index`.
pub(super) fn param_local(index: usize) -> Ident {
    mixed(&format!("__mcp_param{index}"))
}

/// The local holding the request context inside generated futures.
pub(super) fn context_local() -> Ident {
    mixed("__mcp_context")
}

/// `let __mcp_paramN: T = (&Probe::<T>::new()).bind(&ctx);` for each
/// `#[ctx]` parameter.
///
/// A type that is not a context type is reported once, by the `CAN_LOG`
/// check in [`can_log`]: the probe binds through `FromContext` when `T`
/// implements it and otherwise falls back (by autoref) to an impl that
/// never runs, so the binding adds no second error (two bodies naming the
/// same failed bound would each report it).
fn context_bindings(handler: &HandlerFn<'_>, private: &TokenStream) -> Vec<TokenStream> {
    let ctx = context_local();
    handler
        .params
        .iter()
        .enumerate()
        .filter_map(|(index, param)| match param {
            Param::Context(context) => {
                let ty = context.ty;
                let local = param_local(index);
                Some(quote_spanned! {ty.span()=>
                    let #local: #ty = {
                        #[allow(unused_imports)]
                        use #private::{BindContext as _, BindNothing as _};
                        (&#private::Probe::<#ty>::new()).bind(&#ctx)
                    };
                })
            }
            Param::Argument(_) | Param::Ask(_) => None,
        })
        .collect()
}

/// The generated future's steps up to the call, whose value ends up in
/// `returned`: the `#[ctx]` bindings, the declared `asks`, the call.
///
/// A synchronous body without `blocking` is called through
/// `on_request_thread`, which warns in debug builds when it held the
/// request's thread for long. With `blocking`, the asks are awaited first,
/// then the bindings and the call run on the blocking pool
/// (`run_blocking`): the context moves there, so that `&Context` and the
/// like borrow it there. The call of `run_blocking` is spanned at the
/// `blocking` keyword, so that a value that cannot move between threads
/// (the context, an argument, the returned value) is reported there.
pub(super) fn bind_and_call(
    handler: &HandlerFn<'_>,
    common: &CommonAttr,
    asks: TokenStream,
    returned: &Ident,
    private: &TokenStream,
) -> TokenStream {
    let bindings = context_bindings(handler, private);
    let call = call(handler);
    let Some(blocking) = &common.blocking else {
        let call = match handler.is_async {
            true => call,
            false => {
                let (attribute, name) = (handler.kind.attribute(), &handler.name);
                quote!(#private::on_request_thread(#attribute, #name, || #call))
            }
        };
        return quote! {
            #(#bindings)*
            #asks
            let #returned = #call;
        };
    };
    let span = blocking.span();
    let run_blocking = respan(quote!(#private::run_blocking), span);
    let run = quote_spanned!(span=> #run_blocking(move || { #(#bindings)* #call }).await);
    quote! {
        #asks
        let #returned = #run;
    }
}

/// `function(__mcp_param0, __mcp_param1, ...)` followed by `.await` for
/// async functions.
fn call(handler: &HandlerFn<'_>) -> TokenStream {
    let function = &handler.original.sig.ident;
    let args = (0..handler.params.len()).map(param_local);
    let await_call = handler.is_async.then(|| quote!(.await));
    quote!(#function(#(#args),*) #await_call)
}

/// `false || <T as FromContext>::CAN_LOG || ...`: whether the handler can
/// send log messages (decides the `logging` capability).
pub(super) fn can_log(handler: &HandlerFn<'_>, private: &TokenStream) -> TokenStream {
    let terms = handler.params.iter().filter_map(|p| match p {
        Param::Context(context) => {
            let ty = context.ty;
            Some(quote_spanned!(ty.span()=> || <#ty as #private::FromContext<'_>>::CAN_LOG))
        }
        Param::Argument(_) | Param::Ask(_) => None,
    });
    quote!(false #(#terms)*)
}

/// `&[<T0 as FromContext>::REQUIRES, ...]` over the `#[ctx]` parameters:
/// the application states the handler reads (checked when the server is
/// built) and the request extensions (checked before each call).
fn requires(handler: &HandlerFn<'_>, private: &TokenStream) -> TokenStream {
    let terms = handler.params.iter().filter_map(|p| match p {
        Param::Context(context) => {
            let ty = context.ty;
            Some(quote_spanned!(ty.span()=> <#ty as #private::FromContext<'_>>::REQUIRES))
        }
        Param::Argument(_) | Param::Ask(_) => None,
    });
    quote!(&[#(#terms),*])
}

/// The declared return type, or `()` spanned at the function's name.
pub(super) fn output_type(handler: &HandlerFn<'_>) -> (TokenStream, Span) {
    match handler.output {
        Some(ty) => (quote!(#ty), ty.span()),
        None => {
            let span = handler.original.sig.ident.span();
            (quote_spanned!(span=> ()), span)
        }
    }
}

pub(super) fn option(value: Option<TokenStream>) -> TokenStream {
    match value {
        Some(value) => quote!(::core::option::Option::Some(#value)),
        None => quote!(::core::option::Option::None),
    }
}

/// `title`, `description`, `icons`, `meta`, `layer`, `timeout_ms` and
/// `location` entry fields.
pub(super) fn metadata_fields(
    handler: &HandlerFn<'_>,
    common: &CommonAttr,
    private: &TokenStream,
) -> TokenStream {
    let title = option(common.title.as_ref().map(|t| quote!(#t)));
    let description = option(handler.description.clone());
    let icons = common.icons.iter().map(|icon| icon_tokens(icon, private));
    let meta = option(common.meta.as_ref().map(|m| quote!(#m)));
    let line = quote_spanned!(handler.original.sig.ident.span()=> ::core::line!());
    let scopes = common.scopes.iter().flat_map(|s| &s.scopes);
    let group = option(common.group.as_ref().map(|g| quote!(#g)));
    let requires = requires(handler, private);
    let layer = option(common.layer.as_ref().map(|layer| layer_fn(layer, private)));
    let timeout_ms = option(common.timeout_ms.map(|millis| quote!(#millis)));
    quote! {
        scopes: &[#(#scopes),*],
        group: #group,
        requires: #requires,
        title: #title,
        description: #description,
        icons: &[#(#icons),*],
        meta: #meta,
        layer: #layer,
        timeout_ms: #timeout_ms,
        location: #private::Location {
            file: ::core::file!(),
            line: #line,
            module: ::core::module_path!(),
        },
    }
}

/// `layer = expr` as a function the server calls when it is built: a
/// nested item, so `expr` sees the items in scope at the attribute but no
/// locals. The call that boxes the layer is spanned at `expr`, so that a
/// value that is not a layer is reported there, with `IntoItemLayer`'s
/// message.
fn layer_fn(layer: &syn::Expr, private: &TokenStream) -> TokenStream {
    let span = layer.span();
    let item_layer = respan(quote!(#private::item_layer), span);
    let call = quote_spanned!(span=> #item_layer(#layer));
    quote! {
        {
            fn __mcp_layer() -> #private::ItemLayer {
                #call
            }
            __mcp_layer as fn() -> #private::ItemLayer
        }
    }
}

fn icon_tokens(icon: &IconAttr, private: &TokenStream) -> TokenStream {
    let src = &icon.src;
    let mime_type = option(icon.mime_type.as_ref().map(|m| quote!(#m)));
    let sizes = &icon.sizes;
    let theme = match icon.theme.as_ref().map(syn::LitStr::value).as_deref() {
        Some("light") => quote!(::core::option::Option::Some(#private::IconTheme::Light)),
        Some("dark") => quote!(::core::option::Option::Some(#private::IconTheme::Dark)),
        _ => quote!(::core::option::Option::None),
    };
    quote! {
        #private::StaticIcon {
            src: #src,
            mime_type: #mime_type,
            sizes: &[#(#sizes),*],
            theme: #theme,
        }
    }
}

/// One function per `complete(argument = completer)` pair, and the
/// `&[ArgumentCompleter]` that registers them.
pub(super) fn completers(
    completers: &[CompleterAttr],
    private: &TokenStream,
) -> (TokenStream, TokenStream) {
    let mut functions = Vec::new();
    let mut entries = Vec::new();
    for (index, completer) in completers.iter().enumerate() {
        let function = format_ident!("__mcp_complete{}", index);
        let path = &completer.completer;
        let argument = completer.argument.to_string();
        // The call is spanned at the path alone, so that a function that is
        // not a completer is reported there and not across the attribute.
        let span = path.span();
        let run_completer = respan(quote!(#private::run_completer), span);
        let request = mixed("__mcp_request");
        functions.push(quote_spanned! {span=>
            fn #function(
                #request: #private::CompletionRequest,
            ) -> #private::CompletionFuture {
                #run_completer(#path, #request)
            }
        });
        entries.push(quote! {
            #private::ArgumentCompleter { argument: #argument, complete: #function }
        });
    }
    (quote!(#(#functions)*), quote!(&[#(#entries),*]))
}

/// A hidden constant named after `value`, placed in the user's module: a
/// second handler with the same name (or URI) in that module then fails to
/// compile, pointing at both. Across modules and crates the registry
/// reports duplicates at startup instead.
///
/// The whole item is spanned at `span` (the name or URI as written, or the
/// function's identifier), because rustc reports a redefinition at the
/// item, not at its identifier.
pub(super) fn unique_in_module(what: &str, value: &str, span: Span) -> TokenStream {
    let ident = format_ident!("__mcp_{}_{}", what, encode(value), span = span);
    quote_spanned! {span=>
        #[doc(hidden)]
        #[allow(dead_code, non_upper_case_globals)]
        const #ident: () = ();
    }
}

/// An injective spelling of `value` as identifier characters, readable as
/// percent-encoding with `_` for `%`: ASCII letters and digits stay, `_`
/// doubles, and every other UTF-8 byte becomes `_XX` (`a.b` is `a_2Eb`).
fn encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for byte in value.bytes() {
        match byte {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' => out.push(char::from(byte)),
            b'_' => out.push_str("__"),
            other => out.push_str(&format!("_{other:02X}")),
        }
    }
    out
}

/// `tokens` with every span replaced by `span`, so that an expression built
/// from generated paths and the user's tokens is reported at the user's
/// tokens alone rather than across the whole attribute.
pub(super) fn respan(tokens: TokenStream, span: Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut token| {
            if let TokenTree::Group(group) = &token {
                let mut respanned = Group::new(group.delimiter(), respan(group.stream(), span));
                respanned.set_span(span);
                token = TokenTree::Group(respanned);
            } else {
                token.set_span(span);
            }
            token
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoding_keeps_names_apart() {
        assert_eq!(encode("add"), "add");
        assert_eq!(encode("a.b"), "a_2Eb");
        assert_eq!(encode("a_b"), "a__b");
        assert_eq!(encode("memo://x"), "memo_3A_2F_2Fx");
        assert_eq!(encode("é"), "_C3_A9");
        // An escape and the text it looks like stay apart.
        assert_ne!(encode("a.b"), encode("a_2Eb"));
        assert_ne!(encode("a_b"), encode("a__b"));
        assert_ne!(encode("a b"), encode("a_20b"));
    }

    #[test]
    fn respan_keeps_the_tokens() {
        // Spans are not observable outside a compiler; the UI suite checks
        // where errors land. Here: nothing is lost or reordered.
        let tokens = quote!(::a::b(c, [d], { e }));
        assert_eq!(
            respan(tokens.clone(), Span::mixed_site()).to_string(),
            tokens.to_string()
        );
    }
}
