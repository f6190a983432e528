//! `#[prompt]` expansion.
//!
//! ```text
//! fn review(topic: String, style: Option<String>) -> String { .. }   // unchanged
//! const _: () = {
//!     fn __mcp_get(invocation: PromptInvocation<'_>) -> Result<PromptFuture, PromptError> {
//!         let __mcp_param0: String = <String as FromPromptArgument>::from_argument(invocation.arguments.get("topic"))
//!             .map_err(|message| PromptError::InvalidArgument { name: "topic", message })?;
//!         Ok(box_prompt_future(async move { into_prompt_result(review(__mcp_param0, ..)) }))
//!     }
//!     #[distributed_slice(PROMPTS)]
//!     static __MCP_PROMPT: PromptEntry = PromptEntry { name: "review", arguments: &[..], .. };
//! };
//! ```

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned as _;

use super::common::{
    bind_and_call, can_log, completers, context_local, metadata_fields, mixed, option, output_type,
    param_local, unique_in_module,
};
use crate::attr::PromptAttr;
use crate::check;
use crate::ctxt::Ctxt;
use crate::doc;
use crate::kind::Kind;
use crate::model::{HandlerFn, Param};
use crate::paths::Paths;

pub(crate) fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    let original = match super::parse_function(Kind::Prompt, &item) {
        Ok(function) => function,
        Err(error) => return error,
    };
    let cx = Ctxt::new();
    let attr = PromptAttr::parse(&cx, args);
    let prompt = HandlerFn::from_syn(&cx, Kind::Prompt, &original, &attr.common);
    check::prompt(&cx, &prompt, &attr);
    match cx.check() {
        Ok(()) => {
            let emitted = &prompt.emitted;
            let unique = unique_in_module("prompt", &prompt.name, prompt.name_span);
            let glue = glue(&prompt, &attr);
            quote!(#emitted #unique #glue)
        }
        Err(errors) => super::fallback(&prompt.emitted, &errors),
    }
}

fn glue(prompt: &HandlerFn<'_>, attr: &PromptAttr) -> TokenStream {
    let private = Paths::new(attr.common.krate.as_ref()).private();
    let get_fn = get_fn(prompt, attr, &private);
    let (completer_fns, completer_entries) = completers(&attr.completers, &private);
    let entry = entry(prompt, attr, completer_entries, &private);
    let ask_consts = super::ask::consts(prompt, &private);
    quote! {
        #[doc(hidden)]
        const _: () = {
            #get_fn
            #completer_fns
            #ask_consts
            #entry
        };
    }
}

/// Parses each argument into its parameter type, then returns the future
/// that renders the prompt.
fn get_fn(prompt: &HandlerFn<'_>, attr: &PromptAttr, private: &TokenStream) -> TokenStream {
    let invocation = mixed("__mcp_invocation");
    let arguments = prompt
        .params
        .iter()
        .enumerate()
        .filter_map(|(index, param)| match param {
            Param::Argument(argument) => {
                let ty = argument.ty;
                let local = param_local(index);
                let name = &argument.wire_name;
                // Spelled like `REQUIRED` in `entry`, so that a type that is
                // not a prompt argument gives one error, not two.
                Some(quote_spanned! {ty.span()=>
                    let #local: #ty = <#ty as #private::FromPromptArgument>::from_argument(
                        #invocation.arguments.get(#name).map(::std::string::String::as_str),
                    )
                    .map_err(|message| #private::PromptError::InvalidArgument { name: #name, message })?;
                })
            }
            Param::Context(_) | Param::Ask(_) => None,
        });
    let ctx = context_local();
    let asks = super::ask::bindings(prompt, private);
    let (ret_ty, ret_span) = output_type(prompt);
    let ret_local = mixed("__mcp_returned");
    let body = bind_and_call(prompt, &attr.common, asks, &ret_local, private);
    let convert = quote_spanned! {ret_span=>
        <#ret_ty as #private::IntoPromptResult>::into_prompt_result(#ret_local)
    };
    quote! {
        fn __mcp_get(
            #invocation: #private::PromptInvocation<'_>,
        ) -> ::core::result::Result<#private::PromptFuture, #private::PromptError> {
            #(#arguments)*
            let #ctx = #invocation.context;
            ::core::result::Result::Ok(#private::box_prompt_future(async move {
                #body
                #convert
            }))
        }
    }
}

fn entry(
    prompt: &HandlerFn<'_>,
    attr: &PromptAttr,
    completers: TokenStream,
    private: &TokenStream,
) -> TokenStream {
    let name = &prompt.name;
    let metadata = metadata_fields(prompt, &attr.common, private);
    let arguments = prompt.arguments().map(|argument| {
        let name = &argument.wire_name;
        let ty = argument.ty;
        let description = option(match &argument.description {
            Some(lit) => Some(quote!(#lit)),
            None => doc::description(&argument.docs),
        });
        let required = quote_spanned!(ty.span()=> <#ty as #private::FromPromptArgument>::REQUIRED);
        quote! {
            #private::StaticPromptArgument {
                name: #name,
                description: #description,
                required: #required,
            }
        }
    });
    let can_log = can_log(prompt, private);
    let asks = super::ask::declared(prompt);
    quote! {
        #[#private::linkme::distributed_slice(#private::PROMPTS)]
        #[linkme(crate = #private::linkme)]
        static __MCP_PROMPT: #private::PromptEntry = #private::PromptEntry {
            name: #name,
            #metadata
            arguments: &[#(#arguments),*],
            get: __mcp_get,
            completers: #completers,
            can_log: #can_log,
            asks: #asks,
        };
    }
}
