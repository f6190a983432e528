//! Rules for the MCP Apps options (`attr::app`): a tool's view is a `ui://`
//! URI, its visibility says who may call it, and a view's metadata is what
//! hosts can enforce.

use syn::LitStr;

use crate::attr::{AppToolAttr, AppViewAttr, CommonAttr};
use crate::ctxt::Ctxt;

/// The MIME type of an app's view (`RESOURCE_MIME_TYPE` in the runtime).
pub(crate) const APP_MIME_TYPE: &str = "text/html;profile=mcp-app";

pub(crate) fn tool(cx: &Ctxt, app: &AppToolAttr, common: &CommonAttr) {
    if let Some(ui) = &app.ui {
        check_view_uri(cx, ui, "`ui` names the tool's view");
    }
    if let Some((list, values)) = &app.visibility {
        check_visibility(cx, list, values);
    }
    if app.is_used() {
        check_meta_leaves_ui(cx, common, "`ui = ...` and `visibility = [...]`");
    }
}

/// A resource with `app(...)`: its URI, MIME type and metadata.
pub(crate) fn view(
    cx: &Ctxt,
    view: &AppViewAttr,
    uri: Option<&LitStr>,
    mime_type: Option<&LitStr>,
    common: &CommonAttr,
) {
    if let Some(uri) = uri {
        check_view_uri(cx, uri, "an app view is a `ui://` resource");
        if uri.value().contains('{') {
            cx.error_spanned_by(
                uri,
                "an app view has one fixed URI that tools link to with `ui = \"...\"`; it cannot be a template",
            );
        }
    }
    let is_app = |m: &&LitStr| {
        m.value()
            .replace(' ', "")
            .eq_ignore_ascii_case(APP_MIME_TYPE)
    };
    if let Some(mime) = mime_type.filter(|m| !is_app(m)) {
        cx.error_spanned_by(
            mime,
            format!(
                "an app view is served as `{APP_MIME_TYPE}`; remove `mime_type`, `app` sets it"
            ),
        );
    }
    for (_, domains) in &view.csp {
        for domain in domains {
            if let Err(problem) = check_origin(&domain.value()) {
                cx.error_spanned_by(domain, format!("invalid CSP domain: {problem}"));
            }
        }
    }
    if let Some(domain) = &view.domain {
        check_domain(cx, domain);
    }
    check_meta_leaves_ui(cx, common, "`app(...)`");
}

/// `ui://` and something after it, without spaces or control characters.
fn check_view_uri(cx: &Ctxt, uri: &LitStr, what: &str) {
    let value = uri.value();
    let rest = value.strip_prefix("ui://").unwrap_or_default();
    if rest.is_empty() || value.chars().any(|c| c.is_whitespace() || c.is_control()) {
        cx.error_spanned_by(
            uri,
            format!("{what}: a `ui://` URI such as \"ui://dashboard/view.html\""),
        );
    }
}

/// `"model"` (the model sees and calls it) and `"app"` (views call it),
/// each once; an empty list would hide the tool from everyone.
fn check_visibility(cx: &Ctxt, list: &syn::ExprArray, values: &[LitStr]) {
    if list.elems.is_empty() {
        cx.error_spanned_by(
            list,
            "an empty `visibility` hides the tool from both the model and views; write `[\"app\"]` for a tool only views call, or remove it (both)",
        );
    }
    for (index, value) in values.iter().enumerate() {
        if !matches!(value.value().as_str(), "model" | "app") {
            cx.error_spanned_by(
                value,
                "`visibility` holds \"model\" (the model may call the tool) and \"app\" (views may call it)",
            );
        } else if values[..index].iter().any(|v| v.value() == value.value()) {
            cx.error_spanned_by(value, "this visibility is given twice; give it once");
        }
    }
}

/// `_meta.ui` is the Apps options' to write: the same key in `meta` would
/// be overwritten or contradict them.
fn check_meta_leaves_ui(cx: &Ctxt, common: &CommonAttr, options: &str) {
    let Some(meta) = &common.meta else {
        return;
    };
    let Ok(serde_json::Value::Object(object)) = serde_json::from_str(&meta.value()) else {
        return; // Reported by the `meta` rule.
    };
    if let Some(key) = ["ui", "ui/resourceUri"]
        .into_iter()
        .find(|key| object.contains_key(*key))
    {
        cx.error_spanned_by(
            meta,
            format!("`_meta[\"{key}\"]` is written by {options}; remove it from `meta`"),
        );
    }
}

/// A CSP source hosts put in a policy: `scheme://host[:port]`, the host
/// possibly `*.`-prefixed, and nothing that could end the directive.
pub(crate) fn check_origin(origin: &str) -> Result<(), String> {
    let Some((scheme, authority)) = origin.split_once("://") else {
        return Err(format!(
            "`{origin}` is not an origin such as \"https://api.example.com\""
        ));
    };
    if !matches!(scheme, "https" | "http" | "wss" | "ws") {
        return Err(format!("`{origin}`: the scheme is https, http, wss or ws"));
    }
    let host = authority.strip_prefix("*.").unwrap_or(authority);
    let (host, port) = host.rsplit_once(':').unwrap_or((host, ""));
    let host_ok = !host.is_empty()
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.');
    let port_ok = port.bytes().all(|b| b.is_ascii_digit()) && port.len() <= 5;
    if !host_ok || !port_ok {
        return Err(format!(
            "`{origin}` is not `scheme://host[:port]` (a host of letters, digits, `-` and `.`, possibly after `*.`; no path)"
        ));
    }
    Ok(())
}

/// The view's dedicated origin: a host name (its format is the host's).
fn check_domain(cx: &Ctxt, domain: &LitStr) {
    let value = domain.value();
    let valid = !value.is_empty()
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.');
    if !valid {
        cx.error_spanned_by(
            domain,
            "`domain` is a host name such as \"a904794854a047f6.claudemcpcontent.com\" (its format is the host's)",
        );
    }
}

#[cfg(test)]
mod tests {
    use super::check_origin;

    #[test]
    fn csp_domains_are_origins() {
        for good in [
            "https://api.example.com",
            "https://*.example.com",
            "wss://live.example.com:8443",
            "http://localhost:3000",
        ] {
            assert_eq!(check_origin(good), Ok(()), "{good}");
        }
        for bad in [
            "api.example.com",
            "ftp://example.com",
            "https://",
            "https://example.com/path",
            "https://example.com; script-src *",
            "https://exa mple.com",
            "https://example.com:port",
            "https://example.com'",
        ] {
            assert!(check_origin(bad).is_err(), "{bad}");
        }
    }
}
