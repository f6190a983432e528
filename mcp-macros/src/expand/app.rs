//! The MCP Apps options' expansion: `_meta.ui` merged into the entry's
//! `meta` at compile time (what the official helpers emit), the view's
//! MIME type, and the extension linked in with them.
//!
//! ```text
//! #[tool(ui = "ui://sales/view.html")]
//!   meta: Some(r#"{"ui":{"resourceUri":"ui://sales/view.html"},"ui/resourceUri":"ui://sales/view.html"}"#)
//! #[resource("ui://sales/view.html", app(prefers_border))]
//!   mime_type: Some("text/html;profile=mcp-app"), meta: Some(r#"{"ui":{"prefersBorder":true}}"#)
//!   and each read's contents carry the same `_meta.ui`
//! #[distributed_slice(LINKED_EXTENSIONS)]
//! static __MCP_APPS: fn() -> Extension = apps_extension;
//! ```

use proc_macro2::TokenStream;
use quote::quote;
use serde_json::{Map, Value, json};
use syn::LitStr;

use crate::attr::{AppToolAttr, AppViewAttr};
use crate::check::app::APP_MIME_TYPE;

/// The tool's `_meta.ui` (`resourceUri`, `visibility`) and the older
/// hosts' `_meta["ui/resourceUri"]`, merged into `meta`.
pub(crate) fn tool_meta(app: &AppToolAttr, meta: &mut Option<LitStr>) {
    if !app.is_used() {
        return;
    }
    let mut ui = Map::new();
    let mut extra = Map::new();
    if let Some(uri) = &app.ui {
        ui.insert("resourceUri".into(), Value::String(uri.value()));
        extra.insert("ui/resourceUri".into(), Value::String(uri.value()));
    }
    if let Some((_, values)) = &app.visibility {
        let values = values.iter().map(|v| Value::String(v.value())).collect();
        ui.insert("visibility".into(), Value::Array(values));
    }
    merge(meta, ui, extra);
}

/// The view's `_meta.ui` (CSP, permissions, domain, border), merged into
/// `meta`; `None` when `app` says nothing more than that it is a view.
pub(crate) fn view_meta(view: &AppViewAttr, meta: &mut Option<LitStr>) -> Option<String> {
    let ui = view_ui(view);
    if ui.is_empty() {
        return None;
    }
    let json = Value::Object(ui.clone()).to_string();
    merge(meta, ui, Map::new());
    Some(json)
}

/// `mime_type` defaults to the app MIME type (another one was refused by
/// `check::app`).
pub(crate) fn view_mime_type(view: &AppViewAttr, mime_type: &mut Option<LitStr>) {
    mime_type.get_or_insert_with(|| LitStr::new(APP_MIME_TYPE, view.span));
}

fn view_ui(view: &AppViewAttr) -> Map<String, Value> {
    let mut ui = Map::new();
    if !view.csp.is_empty() {
        let csp = view.csp.iter().map(|(wire, domains)| {
            let domains = domains.iter().map(|d| Value::String(d.value())).collect();
            ((*wire).to_owned(), Value::Array(domains))
        });
        ui.insert("csp".into(), Value::Object(csp.collect()));
    }
    if !view.permissions.is_empty() {
        let permissions = view
            .permissions
            .iter()
            .map(|(_, wire)| ((*wire).to_owned(), json!({})));
        ui.insert("permissions".into(), Value::Object(permissions.collect()));
    }
    if let Some(domain) = &view.domain {
        ui.insert("domain".into(), Value::String(domain.value()));
    }
    if let Some(flag) = view.prefers_border {
        ui.insert("prefersBorder".into(), Value::Bool(flag.value));
    }
    ui
}

/// `meta` (a JSON object `check` validated, or none) with `ui` and the
/// `extra` keys added, as a new literal at the same place.
fn merge(meta: &mut Option<LitStr>, ui: Map<String, Value>, extra: Map<String, Value>) {
    let (mut object, span) = match meta {
        Some(written) => (
            serde_json::from_str::<Map<String, Value>>(&written.value()).unwrap_or_default(),
            written.span(),
        ),
        None => (Map::new(), proc_macro2::Span::call_site()),
    };
    object.insert("ui".into(), Value::Object(ui));
    object.extend(extra);
    *meta = Some(LitStr::new(&Value::Object(object).to_string(), span));
}

/// The Apps extension, linked in by the handler that uses it.
pub(crate) fn linked_extension(private: &TokenStream) -> TokenStream {
    quote! {
        #[#private::linkme::distributed_slice(#private::LINKED_EXTENSIONS)]
        #[linkme(crate = #private::linkme)]
        static __MCP_APPS: fn() -> #private::Extension = #private::apps_extension;
    }
}

/// A read's contents with the view's `_meta.ui` on each item of the URI.
pub(crate) fn with_view_meta(
    convert: TokenStream,
    uri: &syn::Ident,
    ui: Option<&str>,
    private: &TokenStream,
) -> TokenStream {
    match ui {
        Some(ui) => quote!(#private::apps_view_meta(#convert, &#uri, #ui)),
        None => convert,
    }
}
