//! `#[resource]` expansion.
//!
//! ```text
//! async fn note(id: u64) -> Option<String> { .. }        // unchanged
//! const _: () = {
//!     fn __mcp_read(invocation: ResourceInvocation<'_>) -> Option<ResourceFuture> {
//!         let __mcp_param0: u64 = <u64 as TemplateVariable>::parse_variable(invocation.variable("id")?)?;
//!         // a `{?state}` variable, which may be absent:
//!         // let __mcp_param1: Option<String> = <Option<String> as QueryVariable>::parse_query(invocation.variable("state"))?;
//!         Some(box_resource_future(async move { into_result(note(__mcp_param0).await, &uri) }))
//!     }
//!     #[distributed_slice(RESOURCES)]
//!     static __MCP_RESOURCE: ResourceEntry = ResourceEntry { uri: "memo://notes/{id}", .. };
//! };
//! ```

use proc_macro2::{Literal, TokenStream};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned as _;

use super::common::{
    bind_and_call, can_log, completers, context_local, metadata_fields, mixed, option, output_type,
    param_local, unique_in_module,
};
use crate::attr::ResourceAttr;
use crate::check;
use crate::ctxt::Ctxt;
use crate::kind::Kind;
use crate::model::{HandlerFn, Param};
use crate::paths::Paths;
use crate::uri::{Part, ResourceUri};

pub(crate) fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    let original = match super::parse_function(Kind::Resource, &item) {
        Ok(function) => function,
        Err(error) => return error,
    };
    let cx = Ctxt::new();
    let mut attr = ResourceAttr::parse(&cx, args);
    let resource = HandlerFn::from_syn(&cx, Kind::Resource, &original, &attr.common);
    let parsed = check::resource(&cx, &resource, &attr);
    match (cx.check(), parsed, &attr.uri.clone()) {
        (Ok(()), Some(parsed), Some(uri)) => {
            let view_meta = attr.app.as_ref().map(|view| {
                super::app::view_mime_type(view, &mut attr.mime_type);
                super::app::view_meta(view, &mut attr.common.meta)
            });
            let emitted = &resource.emitted;
            let unique_name = unique_in_module("resource_name", &resource.name, resource.name_span);
            let unique_uri = unique_in_module("resource_uri", &uri.value(), uri.span());
            let glue = glue(&resource, &attr, &parsed, view_meta);
            quote!(#emitted #unique_name #unique_uri #glue)
        }
        (Err(errors), _, _) => super::fallback(&resource.emitted, &errors),
        // Checks report a missing or invalid URI, so this is unreachable in
        // practice; emitting the function alone is still correct.
        _ => {
            let emitted = &resource.emitted;
            quote!(#emitted)
        }
    }
}

/// `view_meta`: `Some` for an app view (`app`), with its `_meta.ui` if it
/// has one.
fn glue(
    resource: &HandlerFn<'_>,
    attr: &ResourceAttr,
    parsed: &ResourceUri,
    view_meta: Option<Option<String>>,
) -> TokenStream {
    let private = Paths::new(attr.common.krate.as_ref()).private();
    let read_fn = read_fn(
        resource,
        attr,
        parsed,
        &private,
        view_meta.as_ref().and_then(Option::as_deref),
    );
    let apps = view_meta.map(|_| super::app::linked_extension(&private));
    let (completer_fns, completer_entries) = completers(&attr.completers, &private);
    let entry = entry(resource, attr, parsed, completer_entries, &private);
    let ask_consts = super::ask::consts(resource, &private);
    quote! {
        #[doc(hidden)]
        const _: () = {
            #read_fn
            #completer_fns
            #ask_consts
            #entry
            #apps
        };
    }
}

/// Parses each template variable into its parameter type (a value that does
/// not parse means the URI does not match; a query variable may be absent,
/// so its type is an `Option`), then returns the read future.
fn read_fn(
    resource: &HandlerFn<'_>,
    attr: &ResourceAttr,
    parsed: &ResourceUri,
    private: &TokenStream,
    view_ui: Option<&str>,
) -> TokenStream {
    let invocation = mixed("__mcp_invocation");
    let variables = resource
        .params
        .iter()
        .enumerate()
        .filter_map(|(index, param)| match param {
            Param::Argument(argument) => {
                let ty = argument.ty;
                let local = param_local(index);
                let name = &argument.wire_name;
                if parsed.is_query_variable(name) {
                    return Some(quote_spanned! {ty.span()=>
                        let #local: #ty = <#ty as #private::QueryVariable>::parse_query(
                            #invocation.variable(#name),
                        )?;
                    });
                }
                Some(quote_spanned! {ty.span()=>
                    let #local: #ty = <#ty as #private::TemplateVariable>::parse_variable(
                        #invocation.variable(#name)?,
                    )?;
                })
            }
            Param::Context(_) | Param::Ask(_) => None,
        });
    let ctx = context_local();
    let asks = super::ask::bindings(resource, private);
    let uri = mixed("__mcp_uri");
    let (ret_ty, ret_span) = output_type(resource);
    let ret_local = mixed("__mcp_returned");
    let body = bind_and_call(resource, &attr.common, asks, &ret_local, private);
    let convert = quote_spanned! {ret_span=>
        <#ret_ty as #private::IntoResourceContents>::into_result(#ret_local, &#uri)
    };
    let convert = super::app::with_view_meta(convert, &uri, view_ui, private);
    quote! {
        fn __mcp_read(
            #invocation: #private::ResourceInvocation<'_>,
        ) -> ::core::option::Option<#private::ResourceFuture> {
            #(#variables)*
            let #uri: ::std::string::String = ::std::borrow::ToOwned::to_owned(#invocation.uri);
            let #ctx = #invocation.context;
            ::core::option::Option::Some(#private::box_resource_future(async move {
                #body
                #convert
            }))
        }
    }
}

fn entry(
    resource: &HandlerFn<'_>,
    attr: &ResourceAttr,
    parsed: &ResourceUri,
    completers: TokenStream,
    private: &TokenStream,
) -> TokenStream {
    let uri = &attr.uri;
    let name = &resource.name;
    let metadata = metadata_fields(resource, &attr.common, private);
    let template = match parsed {
        ResourceUri::Static => quote!(::core::option::Option::None),
        ResourceUri::Template(parts) => {
            let parts = parts.iter().map(|part| match part {
                Part::Literal(text) => quote!(#private::TemplatePart::Literal(#text)),
                Part::Variable { name, reserved } => {
                    quote!(#private::TemplatePart::Variable { name: #name, reserved: #reserved })
                }
                Part::Query {
                    names,
                    continuation,
                } => quote! {
                    #private::TemplatePart::Query { names: &[#(#names),*], continuation: #continuation }
                },
            });
            quote!(::core::option::Option::Some(&[#(#parts),*]))
        }
    };
    let mime_type = option(attr.mime_type.as_ref().map(|m| quote!(#m)));
    let size = option(attr.size.as_ref().map(|s| {
        let value = Literal::u64_suffixed(s.base10_parse().unwrap_or_default());
        quote!(#value)
    }));
    let annotations = annotations(attr, private);
    let cache = cache(attr, private);
    let can_log = can_log(resource, private);
    let asks = super::ask::declared(resource);
    quote! {
        #[#private::linkme::distributed_slice(#private::RESOURCES)]
        #[linkme(crate = #private::linkme)]
        static __MCP_RESOURCE: #private::ResourceEntry = #private::ResourceEntry {
            uri: #uri,
            template: #template,
            name: #name,
            #metadata
            mime_type: #mime_type,
            size: #size,
            annotations: #annotations,
            cache: #cache,
            read: __mcp_read,
            completers: #completers,
            can_log: #can_log,
            asks: #asks,
        };
    }
}

fn annotations(attr: &ResourceAttr, private: &TokenStream) -> TokenStream {
    let a = &attr.annotations;
    let audience = a
        .audience
        .iter()
        .flatten()
        .map(|role| match role.value().as_str() {
            "assistant" => quote!(#private::Role::Assistant),
            _ => quote!(#private::Role::User),
        });
    let priority = option(
        a.priority
            .as_ref()
            .and_then(check::priority_value)
            .map(|value| {
                let value = Literal::f64_suffixed(value);
                quote!(#value)
            }),
    );
    let last_modified = option(a.last_modified.as_ref().map(|m| quote!(#m)));
    quote! {
        #private::StaticAnnotations {
            audience: &[#(#audience),*],
            priority: #priority,
            last_modified: #last_modified,
        }
    }
}

/// `ttl_ms` and `cache` override the server's defaults for reads of this
/// resource; either alone keeps the other at its default (0, private).
fn cache(attr: &ResourceAttr, private: &TokenStream) -> TokenStream {
    if attr.ttl_ms.is_none() && attr.cache.is_none() {
        return quote!(::core::option::Option::None);
    }
    let ttl = Literal::u64_suffixed(
        attr.ttl_ms
            .as_ref()
            .and_then(|t| t.base10_parse().ok())
            .unwrap_or(0),
    );
    let scope = match attr.cache.as_ref().map(ToString::to_string).as_deref() {
        Some("public") => quote!(#private::CacheScope::Public),
        _ => quote!(#private::CacheScope::Private),
    };
    quote!(::core::option::Option::Some(#private::CacheHint::new(#ttl, #scope)))
}
