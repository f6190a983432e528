//! Rules for `#[resource]`: the URI or template parses, its variables and
//! the function's parameters agree, and the declared metadata is valid.

use syn::LitStr;

use super::handler;
use crate::attr::{PRIORITY_RANGE, ResourceAttr};
use crate::ctxt::Ctxt;
use crate::model::HandlerFn;
use crate::uri::{self, ResourceUri};

/// Checks a resource and returns its parsed URI (when it parses).
pub(crate) fn resource(
    cx: &Ctxt,
    resource: &HandlerFn<'_>,
    attr: &ResourceAttr,
) -> Option<ResourceUri> {
    handler(cx, resource, &attr.common);
    check_name(cx, resource);
    check_metadata(cx, attr);
    if let Some(view) = &attr.app {
        let (uri, mime) = (attr.uri.as_ref(), attr.mime_type.as_ref());
        super::app::view(cx, view, uri, mime, &attr.common);
    }
    let Some(literal) = &attr.uri else {
        if attr.uri_reported {
            return None;
        }
        cx.push(syn::Error::new(
            attr.span,
            "`#[resource]` needs its URI first: `#[resource(\"scheme://path\")]` or a template such as `#[resource(\"notes://{id}\")]`",
        ));
        return None;
    };
    let parsed = match uri::parse(&literal.value()) {
        Ok(parsed) => parsed,
        Err(problem) => {
            cx.error_spanned_by(literal, format!("invalid resource URI: {problem}"));
            return None;
        }
    };
    check_variables_match_parameters(cx, resource, literal, &parsed);
    check_completers(cx, attr, literal, &parsed);
    Some(parsed)
}

/// Resource names are shown to users; they must say something.
fn check_name(cx: &Ctxt, resource: &HandlerFn<'_>) {
    if resource.name.trim().is_empty() || resource.name.chars().any(char::is_control) {
        cx.push(syn::Error::new(
            resource.name_span,
            "resource names cannot be blank or contain control characters; write a name users can read, or remove `name` to use the function's name",
        ));
    }
}

/// Each variable binds the parameter of the same name; a parameter that is
/// no variable (and not `#[ctx]`) could never be filled.
fn check_variables_match_parameters(
    cx: &Ctxt,
    resource: &HandlerFn<'_>,
    literal: &LitStr,
    parsed: &ResourceUri,
) {
    let uri = literal.value();
    for argument in resource.arguments() {
        if !parsed.variables().any(|v| v == argument.wire_name) {
            let name = &argument.wire_name;
            let message = match parsed {
                ResourceUri::Static => format!(
                    "parameter `{name}` has no URI template variable to bind: `{uri}` is a static URI; add `{{{name}}}` to the URI, mark the parameter `#[ctx]`, or remove it"
                ),
                ResourceUri::Template(_) => format!(
                    "parameter `{name}` is not a variable of `{uri}`; add `{{{name}}}` to the URI template, or mark the parameter `#[ctx]`"
                ),
            };
            cx.push(syn::Error::new(argument.wire_name_span, message));
        }
    }
    for variable in parsed.variables() {
        if resource.arguments().any(|a| a.wire_name == variable) {
            continue;
        }
        let message = if parsed.is_query_variable(variable) {
            format!(
                "URI template query variable `{variable}` has no parameter; add `{variable}: Option<String>` (or an `Option` of another `FromStr` type) to the function"
            )
        } else {
            format!(
                "URI template variable `{{{variable}}}` has no parameter; add `{variable}: String` (or another `FromStr` type) to the function"
            )
        };
        cx.error_spanned_by(literal, message);
    }
}

/// A completer must complete a variable of this template.
fn check_completers(cx: &Ctxt, attr: &ResourceAttr, literal: &LitStr, parsed: &ResourceUri) {
    for completer in &attr.completers {
        if !parsed.variables().any(|v| completer.argument == v) {
            cx.error_spanned_by(
                &completer.argument,
                format!(
                    "`{}` is not a variable of `{}`; completers complete URI template variables",
                    completer.argument,
                    literal.value()
                ),
            );
        }
    }
}

/// MIME type, size, caching and annotations are checked here so that a
/// client never receives metadata that lies or cannot be parsed.
fn check_metadata(cx: &Ctxt, attr: &ResourceAttr) {
    if let Some(mime) = &attr.mime_type
        && let Err(error) = mime.value().parse::<mime::Mime>()
    {
        // The mime crate prefixes every message with its own name.
        let error = error.to_string();
        let problem = error.strip_prefix("mime parse error: ").unwrap_or(&error);
        cx.error_spanned_by(
            mime,
            format!("`mime_type` is not a valid MIME type ({problem}); write it as `type/subtype`, such as \"text/plain\""),
        );
    }
    for (key, value) in [("size", &attr.size), ("ttl_ms", &attr.ttl_ms)] {
        if let Some(value) = value
            && value.base10_parse::<u64>().is_err()
        {
            cx.error_spanned_by(value, format!("`{key}` is a non-negative integer"));
        }
    }
    if let Some(cache) = &attr.cache
        && cache != "public"
        && cache != "private"
    {
        cx.error_spanned_by(cache, "`cache` is `public` or `private`");
    }
    let annotations = &attr.annotations;
    for role in annotations.audience.iter().flatten() {
        if !matches!(role.value().as_str(), "user" | "assistant") {
            cx.error_spanned_by(role, "an audience is \"user\" or \"assistant\"");
        }
    }
    if let Some(priority) = &annotations.priority
        && priority_value(priority).is_none()
    {
        cx.error_spanned_by(priority, PRIORITY_RANGE);
    }
    if let Some(modified) = &annotations.last_modified
        && !looks_like_iso_8601(&modified.value())
    {
        cx.error_spanned_by(
            modified,
            "`last_modified` is an ISO 8601 time such as \"2025-01-12T15:00:58Z\"",
        );
    }
}

/// The priority as a number in `0.0..=1.0`, if it is one.
pub(crate) fn priority_value(lit: &syn::Lit) -> Option<f64> {
    let value = match lit {
        syn::Lit::Float(f) => f.base10_parse::<f64>().ok()?,
        syn::Lit::Int(i) => i.base10_parse::<f64>().ok()?,
        _ => return None,
    };
    (0.0..=1.0).contains(&value).then_some(value)
}

/// `YYYY-MM-DD`, optionally followed by `T` and a time.
fn looks_like_iso_8601(value: &str) -> bool {
    let bytes = value.as_bytes();
    let digits = |range: std::ops::Range<usize>| {
        bytes
            .get(range)
            .is_some_and(|d| d.iter().all(u8::is_ascii_digit))
    };
    digits(0..4)
        && bytes.get(4) == Some(&b'-')
        && digits(5..7)
        && bytes.get(7) == Some(&b'-')
        && digits(8..10)
        && (bytes.len() == 10 || bytes.get(10) == Some(&b'T'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn priorities_are_between_zero_and_one() {
        let lit = |s: &str| syn::parse_str::<syn::Lit>(s).unwrap();
        assert_eq!(priority_value(&lit("0.5")), Some(0.5));
        assert_eq!(priority_value(&lit("1")), Some(1.0));
        assert_eq!(priority_value(&lit("1.5")), None);
        assert_eq!(priority_value(&lit("\"x\"")), None);
    }

    #[test]
    fn last_modified_looks_like_a_date() {
        assert!(looks_like_iso_8601("2025-01-12T15:00:58Z"));
        assert!(looks_like_iso_8601("2025-01-12"));
        assert!(!looks_like_iso_8601("yesterday"));
        assert!(!looks_like_iso_8601("2025-1-12"));
    }
}
