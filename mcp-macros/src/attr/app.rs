//! The MCP Apps options: `ui = "ui://..."` and `visibility = [...]` on a
//! `#[tool]`, `app(...)` on a `#[resource]`. Their rules are in
//! `check::app`, their expansion in `expand::app`.

use proc_macro2::Span;
use syn::meta::ParseNestedMeta;
use syn::{Ident, LitStr};

use super::common::{Flag, lit_str, parse_flag, set_once, unknown_key};
use crate::ctxt::Ctxt;
use crate::symbol::{CSP, DOMAIN, PERMISSIONS, PREFERS_BORDER, UI, VISIBILITY};

/// `ui = "ui://..."` and `visibility = [...]` on a tool.
#[derive(Default)]
pub(crate) struct AppToolAttr {
    pub(crate) ui: Option<LitStr>,
    /// The list as written (for its span) and its string literals.
    pub(crate) visibility: Option<(syn::ExprArray, Vec<LitStr>)>,
}

impl AppToolAttr {
    /// Reads `meta` if it is an Apps option; `Ok(false)` if it is not.
    pub(crate) fn parse_key(&mut self, cx: &Ctxt, meta: &ParseNestedMeta<'_>) -> syn::Result<bool> {
        if meta.path == UI {
            set_once(cx, meta, UI, &mut self.ui, lit_str(meta, UI)?);
        } else if meta.path == VISIBILITY {
            let list = string_list(cx, meta, VISIBILITY, "visibility = [\"app\"]")?;
            set_once(cx, meta, VISIBILITY, &mut self.visibility, list);
        } else {
            return Ok(false);
        }
        Ok(true)
    }

    /// Whether the tool declares anything of MCP Apps.
    pub(crate) fn is_used(&self) -> bool {
        self.ui.is_some() || self.visibility.is_some()
    }
}

/// `app`, or `app(csp(...), permissions(...), prefers_border, domain = "...")`
/// on a resource.
pub(crate) struct AppViewAttr {
    /// The `app` key, where rules about the resource as a whole report.
    pub(crate) span: Span,
    /// `csp(connect_domains = [...], ...)`: the wire name of each list and
    /// its domains, in the order written.
    pub(crate) csp: Vec<(&'static str, Vec<LitStr>)>,
    /// `permissions(camera, ...)`: each as written and its wire name.
    pub(crate) permissions: Vec<(Ident, &'static str)>,
    pub(crate) prefers_border: Option<Flag>,
    pub(crate) domain: Option<LitStr>,
}

/// `csp(...)` keys and their `McpUiResourceCsp` names.
const CSP_KEYS: [(&str, &str); 4] = [
    ("connect_domains", "connectDomains"),
    ("resource_domains", "resourceDomains"),
    ("frame_domains", "frameDomains"),
    ("base_uri_domains", "baseUriDomains"),
];

/// `permissions(...)` flags and their `McpUiResourcePermissions` names.
const PERMISSION_KEYS: [(&str, &str); 4] = [
    ("camera", "camera"),
    ("microphone", "microphone"),
    ("geolocation", "geolocation"),
    ("clipboard_write", "clipboardWrite"),
];

impl AppViewAttr {
    pub(crate) fn parse(cx: &Ctxt, meta: &ParseNestedMeta<'_>) -> syn::Result<AppViewAttr> {
        let mut view = AppViewAttr {
            span: syn::spanned::Spanned::span(&meta.path),
            csp: Vec::new(),
            permissions: Vec::new(),
            prefers_border: None,
            domain: None,
        };
        if !meta.input.peek(syn::token::Paren) {
            return Ok(view);
        }
        meta.parse_nested_meta(|inner| view.parse_key(cx, &inner))?;
        Ok(view)
    }

    fn parse_key(&mut self, cx: &Ctxt, meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
        if meta.path == CSP {
            meta.parse_nested_meta(|inner| self.parse_csp(cx, &inner))?;
        } else if meta.path == PERMISSIONS {
            meta.parse_nested_meta(|inner| self.parse_permission(cx, &inner))?;
        } else if meta.path == PREFERS_BORDER {
            let flag = parse_flag(meta, PREFERS_BORDER)?;
            set_once(cx, meta, PREFERS_BORDER, &mut self.prefers_border, flag);
        } else if meta.path == DOMAIN {
            set_once(cx, meta, DOMAIN, &mut self.domain, lit_str(meta, DOMAIN)?);
        } else {
            unknown_key(
                cx,
                meta,
                "app",
                "`csp(...)`, `permissions(...)`, `prefers_border` or `domain`",
            )?;
        }
        Ok(())
    }

    fn parse_csp(&mut self, cx: &Ctxt, meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
        let Some((_, wire)) = CSP_KEYS.iter().find(|(key, _)| meta.path.is_ident(key)) else {
            return unknown_key(
                cx,
                meta,
                "csp",
                "`connect_domains`, `resource_domains`, `frame_domains` or `base_uri_domains`",
            );
        };
        if self.csp.iter().any(|(seen, _)| seen == wire) {
            cx.error_spanned_by(&meta.path, "this CSP list is given twice; give it once");
        }
        let example = "connect_domains = [\"https://api.example.com\"]";
        let (_, domains) = string_list(cx, meta, crate::symbol::Symbol(wire), example)?;
        self.csp.push((wire, domains));
        Ok(())
    }

    fn parse_permission(&mut self, cx: &Ctxt, meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
        let found = PERMISSION_KEYS
            .iter()
            .find(|(key, _)| meta.path.is_ident(key));
        let (Some((_, wire)), Some(ident)) = (found, meta.path.get_ident()) else {
            return unknown_key(
                cx,
                meta,
                "permissions",
                "`camera`, `microphone`, `geolocation` or `clipboard_write`",
            );
        };
        let flag = parse_flag(meta, crate::symbol::Symbol(wire))?;
        if self.permissions.iter().any(|(_, seen)| seen == wire) {
            cx.error_spanned_by(
                &meta.path,
                format!("`{ident}` is given twice; give it once"),
            );
        }
        if !flag.value {
            return Ok(());
        }
        self.permissions.push((ident.clone(), wire));
        Ok(())
    }
}

/// `key = ["a", "b"]`: an array of string literals.
fn string_list(
    cx: &Ctxt,
    meta: &ParseNestedMeta<'_>,
    key: crate::symbol::Symbol,
    example: &str,
) -> syn::Result<(syn::ExprArray, Vec<LitStr>)> {
    let list: syn::ExprArray = meta.value()?.parse().map_err(|error| {
        syn::Error::new(
            error.span(),
            format!("`{key}` takes an array of string literals: `{example}`"),
        )
    })?;
    let mut values = Vec::new();
    for element in &list.elems {
        match element {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(value),
                ..
            }) => values.push(value.clone()),
            other => {
                cx.error_spanned_by(other, format!("`{key}` holds string literals: `{example}`"))
            }
        }
    }
    Ok((list, values))
}
