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

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned as _;

use super::common::{
    bind_and_call, can_log, context_local, metadata_fields, mixed, option, output_type,
    param_local, unique_in_module,
};
use crate::attr::{Flag, ToolAttr};
use crate::check;
use crate::ctxt::Ctxt;
use crate::kind::Kind;
use crate::model::{HandlerFn, Param};
use crate::paths::Paths;

pub(crate) fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    let original = match super::parse_function(Kind::Tool, &item) {
        Ok(function) => function,
        Err(error) => return error,
    };
    let cx = Ctxt::new();
    let mut attr = ToolAttr::parse(&cx, args);
    let tool = HandlerFn::from_syn(&cx, Kind::Tool, &original, &attr.common);
    check::tool(&cx, &tool, &attr);
    match cx.check() {
        Ok(()) => {
            super::app::tool_meta(&attr.app, &mut attr.common.meta);
            let emitted = &tool.emitted;
            let unique = unique_in_module("tool", &tool.name, tool.name_span);
            let glue = glue(&tool, &attr);
            quote!(#emitted #unique #glue)
        }
        Err(errors) => super::fallback(&tool.emitted, &errors),
    }
}

fn glue(tool: &HandlerFn<'_>, attr: &ToolAttr) -> TokenStream {
    let paths = Paths::new(attr.common.krate.as_ref());
    let private = paths.private();
    let args_struct = args_struct(tool, &paths, attr.input_schema.is_none());
    let call_fn = call_fn(tool, attr, &private);
    let entry = entry(tool, attr, &private);
    let ask_consts = super::ask::consts(tool, &private);
    let apps = attr
        .app
        .is_used()
        .then(|| super::app::linked_extension(&private));
    let (ret_ty, ret_span) = output_type(tool);
    let output_schema = super::output::schema_const(&ret_ty, ret_span, tool.output, &private);
    quote! {
        #[doc(hidden)]
        const _: () = {
            #args_struct
            #call_fn
            #ask_consts
            #output_schema
            #entry
            #apps
        };
    }
}

/// The arguments struct: the published schema and the deserializer that runs
/// both derive from it, and `deny_unknown_fields` closes the schema.
///
/// The struct is generic over the user's types in its fields (the innermost
/// ones, inside standard containers: see [`super::peel`]) and meets them in
/// one place, the turbofish of `__mcp_tool_arguments`. A type without
/// `Deserialize` or `JsonSchema` is then reported once per missing trait, at
/// the type, with the bound traits' messages (`ArgumentDeserialize`,
/// `ArgumentSchema`: "derive ..."), instead of once per use inside the
/// derived impls (and once at the attribute, for serde's `missing_field`).
///
/// ```text
/// struct __McpToolArgs<__McpArg0, __McpArg1> { a: __McpArg0, b: Option<__McpArg1> }
/// struct __McpArgFns<A> { parse: fn(&str) -> Result<A, ArgumentError>, schema: fn() -> Schema }
/// const fn __mcp_tool_arguments<__McpArg0: ArgumentDeserialize + ArgumentSchema, ..>() -> __McpArgFns<__McpToolArgs<..>>
/// const __MCP_ARGS: __McpArgFns<__McpToolArgs<i64, Point>> = __mcp_tool_arguments::<i64, Point>();
/// ```
fn args_struct(tool: &HandlerFn<'_>, paths: &Paths, generate_schema: bool) -> TokenStream {
    let private = paths.private();
    let serde_crate = paths.private_crate_str("serde");
    let schemars_crate = paths.private_crate_str("schemars");
    let mut next = 0;
    let peeled: Vec<_> = tool
        .arguments()
        .map(|argument| super::peel::peel(argument.ty, &mut next))
        .collect();
    let (generics, types): (Vec<_>, Vec<_>) = peeled.iter().flat_map(|p| p.inner.clone()).unzip();
    let fields = arg_fields(tool, &peeled, generate_schema);
    let turbofish = (!types.is_empty()).then(|| quote!(::<#(#types),*>));
    let header_checks = header_checks(tool, &private);
    // With a hand-written schema (`input_schema = f`), the parameters only
    // need to deserialize.
    let (schema_derive, schema_attr, schema_bound, schema_field, schema_value) = if generate_schema
    {
        (
            quote!(, #private::schemars::JsonSchema),
            quote!(#[schemars(crate = #schemars_crate)]),
            quote!(+ #private::ArgumentSchema),
            quote!(schema: fn() -> #private::schemars::Schema,),
            quote!(schema: #private::input_schema::<__McpToolArgs<#(#generics),*>>,),
        )
    } else {
        Default::default()
    };
    quote! {
        #[derive(#private::serde::Deserialize #schema_derive)]
        #[serde(crate = #serde_crate, deny_unknown_fields)]
        #schema_attr
        #[allow(non_camel_case_types, non_snake_case)]
        struct __McpToolArgs<#(#generics),*> {
            #(#fields,)*
        }

        struct __McpArgFns<A> {
            parse: fn(&str) -> ::core::result::Result<A, #private::ArgumentError>,
            #schema_field
        }

        fn __mcp_parse<A: #private::serde::de::DeserializeOwned>(
            json: &str,
        ) -> ::core::result::Result<A, #private::ArgumentError> {
            #private::parse_arguments(json)
        }

        const fn __mcp_tool_arguments<#(#generics: #private::ArgumentDeserialize #schema_bound),*>(
        ) -> __McpArgFns<__McpToolArgs<#(#generics),*>> {
            __McpArgFns {
                parse: __mcp_parse::<__McpToolArgs<#(#generics),*>>,
                #schema_value
            }
        }

        const __MCP_ARGS: __McpArgFns<__McpToolArgs<#(#types),*>> = __mcp_tool_arguments #turbofish ();

        #(#header_checks)*
    }
}

/// The fields of `__McpToolArgs`: each argument under its name (or
/// rename), with its docs, description and header mark for the schema.
fn arg_fields(
    tool: &HandlerFn<'_>,
    peeled: &[super::peel::Peeled<'_>],
    generate_schema: bool,
) -> Vec<TokenStream> {
    let fields = tool.arguments().zip(peeled).map(|(argument, peeled)| {
        let field_ty = &peeled.field;
        let ident = &argument.ident;
        let docs = &argument.docs;
        let rename = argument
            .rename
            .as_ref()
            .map(|r| quote!(#[serde(rename = #r)]));
        let description = argument
            .description
            .as_ref()
            .filter(|_| generate_schema)
            .map(|d| quote!(#[schemars(description = #d)]));
        let header = argument
            .header
            .as_ref()
            .filter(|_| generate_schema)
            .map(|h| quote!(#[schemars(extend("x-mcp-header" = #h))]));
        quote!(#(#docs)* #rename #description #header #ident: #field_ty)
    });
    fields.collect()
}

/// Only strings, integers and booleans may be mirrored into headers: a
/// check per `#[header]` argument, spanned at its type.
fn header_checks(tool: &HandlerFn<'_>, private: &TokenStream) -> Vec<TokenStream> {
    tool.arguments()
        .filter(|a| a.header.is_some())
        .map(|argument| {
            let ty = argument.ty;
            quote_spanned! {ty.span()=>
                const _: fn() = #private::assert_header_value::<#ty>;
            }
        })
        .collect()
}

/// Parses the arguments, then returns the future that calls the function.
fn call_fn(tool: &HandlerFn<'_>, attr: &ToolAttr, private: &TokenStream) -> TokenStream {
    let args_local = mixed("__mcp_args_ok");
    let destructure = tool
        .params
        .iter()
        .enumerate()
        .filter_map(|(index, param)| match param {
            Param::Argument(argument) => {
                let field = &argument.ident;
                let local = param_local(index);
                Some(quote!(#field: #local))
            }
            Param::Context(_) | Param::Ask(_) => None,
        });
    let ctx = context_local();
    let asks = super::ask::bindings(tool, private);
    let (ret_ty, ret_span) = output_type(tool);
    let ret_local = mixed("__mcp_returned");
    let body = bind_and_call(tool, &attr.common, asks, &ret_local, private);
    // Through the probe: `IntoToolResult` is checked once, in the output
    // schema's constant (see `super::output`).
    let convert = quote_spanned! {ret_span=>
        {
            #[allow(unused_imports)]
            use #private::{ConvertNothing as _, ConvertResult as _};
            (&#private::Probe::<#ret_ty>::new()).convert(#ret_local)
        }
    };
    quote! {
        fn __mcp_call(
            invocation: #private::ToolInvocation<'_>,
        ) -> ::core::result::Result<#private::ToolFuture, #private::ArgumentError> {
            let #args_local = (__MCP_ARGS.parse)(invocation.arguments)?;
            let __McpToolArgs { #(#destructure),* } = #args_local;
            let #ctx = invocation.context;
            ::core::result::Result::Ok(#private::box_tool_future(async move {
                #body
                #convert
            }))
        }
    }
}

fn entry(tool: &HandlerFn<'_>, attr: &ToolAttr, private: &TokenStream) -> TokenStream {
    let name = &tool.name;
    let metadata = metadata_fields(tool, &attr.common, private);
    let annotations = annotations(attr, private);
    let output_schema = match &attr.output_schema {
        Some(path) => quote_spanned!(path.span()=> #private::OutputSchema::Raw(#path)),
        None => quote!(#private::OutputSchema::Generated(__MCP_OUTPUT_SCHEMA)),
    };
    let can_log = can_log(tool, private);
    let asks = super::ask::declared(tool);
    let extensions = &attr.extensions;
    let replayable_state = attr.replayable_state();
    let task = task(attr, private);
    // A task tool links the Tasks engine; nothing else names it.
    let engine = attr.task.as_ref().map(|_| {
        quote! {
            #[#private::linkme::distributed_slice(#private::TASK_ENGINES)]
            #[linkme(crate = #private::linkme)]
            static __MCP_TASK_ENGINE: &'static #private::TaskEngine = #private::TASK_ENGINE;
        }
    });
    let input_schema = match &attr.input_schema {
        // Spanned at the path, so a function of the wrong type is reported
        // there, as not coercing to `fn() -> Value`.
        Some(path) => quote_spanned!(path.span()=> #private::InputSchema::Raw(#path)),
        None => quote!(#private::InputSchema::Generated(__MCP_ARGS.schema)),
    };
    // A hand-written input schema is enforced by a validator compiled in
    // with a feature: without it, an error at the path says to add it.
    let validation = attr.input_schema.as_ref().map(|path| {
        let check = quote!(#private::assert_schema_validation::<#private::SchemaValidation>);
        let check = super::common::respan(check, path.span());
        quote!(const _: fn() = #check;)
    });
    quote! {
        #validation
        #[#private::linkme::distributed_slice(#private::TOOLS)]
        #[linkme(crate = #private::linkme)]
        static __MCP_TOOL: #private::ToolEntry = #private::ToolEntry {
            name: #name,
            #metadata
            annotations: #annotations,
            input_schema: #input_schema,
            output_schema: #output_schema,
            call: __mcp_call,
            can_log: #can_log,
            asks: #asks,
            extensions: &[#(#extensions),*],
            replayable_state: #replayable_state,
            task: #task,
        };
        #engine
    }
}

/// `Some(StaticTaskSupport { .. })` for `task(...)`, else `None`.
fn task(attr: &ToolAttr, private: &TokenStream) -> TokenStream {
    let Some(task) = &attr.task else {
        return quote!(::core::option::Option::None);
    };
    let required = task.required.is_some_and(|flag| flag.value);
    let millis = |lit: &Option<syn::LitInt>| {
        option(lit.as_ref().map(|lit| {
            let value = lit.base10_parse::<u64>().unwrap_or(1);
            quote!(#value)
        }))
    };
    let answer_within = task
        .answer_within_ms
        .as_ref()
        .and_then(|lit| lit.base10_parse::<u64>().ok())
        .unwrap_or(0);
    let ttl = millis(&task.ttl_ms);
    let poll = millis(&task.poll_interval_ms);
    quote! {
        ::core::option::Option::Some(#private::StaticTaskSupport {
            required: #required,
            answer_within_ms: #answer_within,
            ttl_ms: #ttl,
            poll_interval_ms: #poll,
        })
    }
}

fn option_flag(flag: Option<Flag>) -> TokenStream {
    option(flag.map(|Flag { value }| quote!(#value)))
}

fn annotations(attr: &ToolAttr, private: &TokenStream) -> TokenStream {
    let a = &attr.annotations;
    let title = option(a.title.as_ref().map(|t| quote!(#t)));
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
