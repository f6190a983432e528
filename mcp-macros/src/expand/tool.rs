//! `#[tool]` expansion.
//!
//! ```text
//! async fn add(a: i64, b: i64) -> String { .. }         // unchanged
//! const _: () = {
//!     #[derive(Deserialize, JsonSchema)] #[serde(deny_unknown_fields)]
//!     struct __McpToolArgs<__McpArg0, __McpArg1> { a: __McpArg0, b: __McpArg1 }
//!     const __MCP_ARGS: __McpArgFns<__McpToolArgs<i64, i64>> = __mcp_tool_arguments::<i64, i64>();
//!     fn __mcp_call(invocation: ToolInvocation<'_>) -> Result<ToolFuture, ArgumentError> {
//!         let __McpToolArgs { a: __mcp_param0, b: __mcp_param1 } = (__MCP_ARGS.parse)(invocation.arguments)?;
//!         Ok(box_tool_future(async move { into_tool_result(add(__mcp_param0, __mcp_param1).await) }))
//!     }
//!     #[distributed_slice(TOOLS)]
//!     static __MCP_TOOL: ToolEntry = ToolEntry { name: "add", input_schema: __MCP_ARGS.schema, .. };
//! };
//! ```
//!
//! Each user type is named in exactly one place that checks a trait bound
//! on it, spanned at the user's tokens, so a wrong type gives one error
//! there rather than one per use in generated code.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::Ident;
use syn::ext::IdentExt as _;
use syn::parse::{ParseStream, Parser as _};
use syn::spanned::Spanned as _;

use crate::attr::{Flag, IconAttr};
use crate::check;
use crate::ctxt::Ctxt;
use crate::model::{Param, ToolFn};
use crate::paths::Paths;

pub(crate) fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    let original: syn::ItemFn = match syn::parse2(item.clone()) {
        Ok(function) => function,
        Err(_) => {
            let error = NotAFunction::from_tokens(item.clone())
                .error()
                .to_compile_error();
            return quote!(#error #item);
        }
    };
    let cx = Ctxt::new();
    let attr = crate::attr::ToolAttr::parse(&cx, args);
    let tool = ToolFn::from_syn(&cx, &original, attr);
    check::tool(&cx, &tool);
    match cx.check() {
        Ok(()) => {
            let emitted = &tool.emitted;
            let glue = glue(&tool);
            quote!(#emitted #glue)
        }
        Err(errors) => super::fallback(&tool.emitted, &errors),
    }
}

/// What `#[tool]` was put on instead of a function: the first token after
/// the attributes and visibility, which names the kind of item.
#[derive(Debug)]
struct NotAFunction {
    span: Span,
    keyword: Option<String>,
}

impl NotAFunction {
    fn from_tokens(item: TokenStream) -> NotAFunction {
        let parser = |input: ParseStream<'_>| {
            input.call(syn::Attribute::parse_outer)?;
            input.parse::<syn::Visibility>()?;
            let span = input.span();
            let keyword = input.fork().call(Ident::parse_any).ok();
            input.parse::<TokenStream>()?;
            Ok(NotAFunction {
                span,
                keyword: keyword.map(|k| k.to_string()),
            })
        };
        parser.parse2(item).unwrap_or(NotAFunction {
            span: Span::call_site(),
            keyword: None,
        })
    }

    fn error(&self) -> syn::Error {
        let message = match self.keyword.as_deref() {
            // A function without a body, as in a trait or `extern` block.
            Some("fn" | "async" | "unsafe" | "const" | "extern") => {
                "`#[tool]` goes on a function with a body, defined outside traits and `extern` blocks"
                    .to_owned()
            }
            Some(keyword) => format!(
                "`#[tool]` cannot go on `{keyword}` items; annotate the `fn` that implements the tool"
            ),
            None => "`#[tool]` goes on a function; annotate the `fn` that implements the tool"
                .to_owned(),
        };
        syn::Error::new(self.span, message)
    }
}

fn glue(tool: &ToolFn<'_>) -> TokenStream {
    let paths = Paths::new(tool.attr.krate.as_ref());
    let private = paths.private();
    let args_struct = args_struct(tool, &paths);
    let call_fn = call_fn(tool, &private);
    let entry = entry(tool, &private);
    quote! {
        #[doc(hidden)]
        const _: () = {
            #args_struct
            #call_fn
            #entry
        };
    }
}

/// The arguments struct: the published schema and the deserializer that runs
/// both derive from it, and `deny_unknown_fields` closes the schema.
///
/// The struct is generic over its field types and meets the user's types in
/// one place, the turbofish of `__mcp_tool_arguments`. A type without
/// `Deserialize` or `JsonSchema` is then reported once per missing trait, at
/// the parameter's type, instead of once per use inside the derived impls
/// (and once at the attribute, for serde's `missing_field`).
///
/// ```text
/// struct __McpToolArgs<__McpArg0, __McpArg1> { a: __McpArg0, b: __McpArg1 }
/// struct __McpArgFns<A> { parse: fn(&str) -> Result<A, ArgumentError>, schema: fn() -> Schema }
/// const fn __mcp_tool_arguments<__McpArg0: for<'de> Deserialize<'de> + JsonSchema, ..>() -> __McpArgFns<__McpToolArgs<..>>
/// const __MCP_ARGS: __McpArgFns<__McpToolArgs<i64, i64>> = __mcp_tool_arguments::<i64, i64>();
/// ```
fn args_struct(tool: &ToolFn<'_>, paths: &Paths) -> TokenStream {
    let private = paths.private();
    let serde_crate = paths.private_crate_str("serde");
    let schemars_crate = paths.private_crate_str("schemars");
    let generics: Vec<_> = (0..tool.arguments().count())
        .map(|index| format_ident!("__McpArg{}", index))
        .collect();
    let types: Vec<_> = tool.arguments().map(|argument| argument.ty).collect();
    let fields = tool.arguments().zip(&generics).map(|(argument, generic)| {
        let ident = &argument.ident;
        let docs = &argument.docs;
        let rename = argument
            .rename
            .as_ref()
            .map(|r| quote!(#[serde(rename = #r)]));
        let description = argument
            .description
            .as_ref()
            .map(|d| quote!(#[schemars(description = #d)]));
        quote!(#(#docs)* #rename #description #ident: #generic)
    });
    let turbofish = (!types.is_empty()).then(|| quote!(::<#(#types),*>));
    quote! {
        #[derive(#private::serde::Deserialize, #private::schemars::JsonSchema)]
        #[serde(crate = #serde_crate, deny_unknown_fields)]
        #[schemars(crate = #schemars_crate)]
        #[allow(non_camel_case_types, non_snake_case)]
        struct __McpToolArgs<#(#generics),*> {
            #(#fields,)*
        }

        struct __McpArgFns<A> {
            parse: fn(&str) -> ::core::result::Result<A, #private::ArgumentError>,
            schema: fn() -> #private::schemars::Schema,
        }

        fn __mcp_parse<A: #private::serde::de::DeserializeOwned>(
            json: &str,
        ) -> ::core::result::Result<A, #private::ArgumentError> {
            #private::parse_arguments(json)
        }

        const fn __mcp_tool_arguments<#(#generics: for<'de> #private::serde::Deserialize<'de> + #private::schemars::JsonSchema),*>(
        ) -> __McpArgFns<__McpToolArgs<#(#generics),*>> {
            __McpArgFns {
                parse: __mcp_parse::<__McpToolArgs<#(#generics),*>>,
                schema: #private::input_schema::<__McpToolArgs<#(#generics),*>>,
            }
        }

        const __MCP_ARGS: __McpArgFns<__McpToolArgs<#(#types),*>> = __mcp_tool_arguments #turbofish ();
    }
}

/// Parses the arguments, then returns the future that calls the function.
fn call_fn(tool: &ToolFn<'_>, private: &TokenStream) -> TokenStream {
    let fn_name = &tool.original.sig.ident;
    let mixed = |name: String| format_ident!("{}", name, span = Span::mixed_site());
    let args_local = mixed("__mcp_args_ok".into());
    let ctx_local = mixed("__mcp_context".into());
    let mut destructure = Vec::new();
    let mut extract = Vec::new();
    let mut call_args = Vec::new();
    for (index, param) in tool.params.iter().enumerate() {
        let local = mixed(format!("__mcp_param{index}"));
        match param {
            Param::Argument(argument) => {
                let field = &argument.ident;
                destructure.push(quote!(#field: #local));
            }
            Param::Context(context) => {
                let ty = context.ty;
                // Spelled like the `CAN_LOG` check in `entry`, so that a type
                // that is not a context type gives one error, not two.
                extract.push(quote_spanned! {ty.span()=>
                    let #local: #ty = <#ty as #private::FromContext<'_>>::from_context(&#ctx_local);
                });
            }
        }
        call_args.push(local);
    }
    let await_call = tool.is_async.then(|| quote!(.await));
    let (ret_ty, ret_span) = output_type(tool);
    let ret_local = mixed("__mcp_returned".into());
    let convert = quote_spanned! {ret_span=>
        <#ret_ty as #private::IntoToolResult>::into_tool_result(#ret_local)
    };
    quote! {
        fn __mcp_call(
            invocation: #private::ToolInvocation<'_>,
        ) -> ::core::result::Result<#private::ToolFuture, #private::ArgumentError> {
            let #args_local = (__MCP_ARGS.parse)(invocation.arguments)?;
            let __McpToolArgs { #(#destructure),* } = #args_local;
            let #ctx_local = invocation.context;
            ::core::result::Result::Ok(#private::box_tool_future(async move {
                #(#extract)*
                let #ret_local = #fn_name(#(#call_args),*) #await_call;
                #convert
            }))
        }
    }
}

fn output_type(tool: &ToolFn<'_>) -> (TokenStream, Span) {
    match tool.output {
        Some(ty) => (quote!(#ty), ty.span()),
        // `()` is not a tool result; say so at the function's name.
        None => {
            let span = tool.original.sig.ident.span();
            (quote_spanned!(span=> ()), span)
        }
    }
}

fn entry(tool: &ToolFn<'_>, private: &TokenStream) -> TokenStream {
    let name = &tool.name;
    let title = option_str(tool.attr.title.as_ref().map(|t| quote!(#t)));
    let description = option_str(tool.description.clone());
    let annotations = annotations(tool, private);
    let icons = tool
        .attr
        .icons
        .iter()
        .map(|icon| icon_tokens(icon, private));
    let meta = option_str(tool.attr.meta.as_ref().map(|m| quote!(#m)));
    let (ret_ty, ret_span) = output_type(tool);
    let output_schema =
        quote_spanned!(ret_span=> <#ret_ty as #private::IntoToolResult>::output_schema);
    let can_log = tool.params.iter().filter_map(|p| match p {
        Param::Context(context) => {
            let ty = context.ty;
            Some(quote_spanned!(ty.span()=> || <#ty as #private::FromContext<'_>>::CAN_LOG))
        }
        Param::Argument(_) => None,
    });
    let line = quote_spanned!(tool.original.sig.ident.span()=> ::core::line!());
    quote! {
        #[#private::linkme::distributed_slice(#private::TOOLS)]
        #[linkme(crate = #private::linkme)]
        static __MCP_TOOL: #private::ToolEntry = #private::ToolEntry {
            name: #name,
            title: #title,
            description: #description,
            annotations: #annotations,
            icons: &[#(#icons),*],
            meta: #meta,
            input_schema: __MCP_ARGS.schema,
            output_schema: #output_schema,
            call: __mcp_call,
            can_log: false #(#can_log)*,
            location: #private::Location { file: ::core::file!(), line: #line },
        };
    }
}

fn option_str(value: Option<TokenStream>) -> TokenStream {
    match value {
        Some(value) => quote!(::core::option::Option::Some(#value)),
        None => quote!(::core::option::Option::None),
    }
}

fn option_flag(flag: Option<Flag>) -> TokenStream {
    match flag {
        Some(Flag { value }) => quote!(::core::option::Option::Some(#value)),
        None => quote!(::core::option::Option::None),
    }
}

fn annotations(tool: &ToolFn<'_>, private: &TokenStream) -> TokenStream {
    let a = &tool.attr.annotations;
    let title = option_str(a.title.as_ref().map(|t| quote!(#t)));
    let read_only = option_flag(a.read_only);
    let destructive = option_flag(a.destructive);
    let idempotent = option_flag(a.idempotent);
    let open_world = option_flag(a.open_world);
    quote! {
        #private::StaticToolAnnotations {
            title: #title,
            read_only: #read_only,
            destructive: #destructive,
            idempotent: #idempotent,
            open_world: #open_world,
        }
    }
}

fn icon_tokens(icon: &IconAttr, private: &TokenStream) -> TokenStream {
    let src = &icon.src;
    let mime_type = option_str(icon.mime_type.as_ref().map(|m| quote!(#m)));
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

#[cfg(test)]
mod tests {
    use super::*;

    fn keyword(tokens: TokenStream) -> Option<String> {
        NotAFunction::from_tokens(tokens).keyword
    }

    #[test]
    fn the_item_kind_is_read_past_attributes_and_visibility() {
        assert_eq!(
            keyword(quote!(
                #[derive(Debug)]
                pub(crate) struct S;
            ))
            .as_deref(),
            Some("struct")
        );
        assert_eq!(
            keyword(quote!(
                #[doc = "Docs."]
                impl S {}
            ))
            .as_deref(),
            Some("impl")
        );
        assert_eq!(
            keyword(quote!(
                fn f(&self);
            ))
            .as_deref(),
            Some("fn")
        );
        assert_eq!(keyword(quote!()), None);
    }
}
