//! Declared asks on parameters: `#[elicit("...")]`, `#[elicit_url(message
//! = "...", url = "...")]`, `#[sample(prompt = "...", max_tokens = N,
//! system = "...")]` and `#[roots]`. Messages, URLs and prompts are format
//! strings over the handler's arguments: `"Delete {path}?"`.

use syn::{Attribute, LitInt, LitStr, Meta};

use super::common::{lit_str, set_once, unknown_key};
use crate::ctxt::Ctxt;
use crate::symbol::{ELICIT, ELICIT_URL, MAX_TOKENS, MESSAGE, PROMPT, ROOTS, SAMPLE, SYSTEM, URL};

/// What a declared ask asks.
pub(crate) enum AskAttrKind {
    Form {
        message: LitStr,
    },
    Url {
        message: LitStr,
        url: LitStr,
    },
    Sample {
        prompt: LitStr,
        max_tokens: Option<LitInt>,
        system: Option<LitStr>,
    },
    Roots,
}

impl AskAttrKind {
    /// The format strings: message, URL, prompt, system prompt.
    pub(crate) fn templates(&self) -> Vec<&LitStr> {
        match self {
            AskAttrKind::Form { message } => vec![message],
            AskAttrKind::Url { message, url } => vec![message, url],
            AskAttrKind::Sample { prompt, system, .. } => {
                std::iter::once(prompt).chain(system).collect()
            }
            AskAttrKind::Roots => Vec::new(),
        }
    }
}

/// The names inside `{...}` (before any `:` format spec), skipping `{{`.
pub(crate) fn placeholders(template: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut chars = template.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
            }
            '{' => {
                let inside: String = chars.by_ref().take_while(|&c| c != '}').collect();
                let name = inside.split(':').next().unwrap_or_default().trim();
                names.push(name.to_owned());
            }
            _ => {}
        }
    }
    names
}

pub(crate) struct AskAttr {
    /// The attribute, for errors about the parameter as a whole.
    pub(crate) attr: Attribute,
    pub(crate) kind: AskAttrKind,
}

impl AskAttr {
    /// Whether `attr` is one of the ask attributes.
    pub(crate) fn is_ask(attr: &Attribute) -> bool {
        let path = attr.path();
        path == ELICIT || path == ELICIT_URL || path == SAMPLE || path == ROOTS
    }

    /// Parses an ask attribute; `None` (with errors recorded) if it is
    /// malformed.
    pub(crate) fn parse(cx: &Ctxt, attr: &Attribute) -> Option<AskAttr> {
        let path = attr.path();
        let kind = if path == ELICIT {
            parse_elicit(cx, attr)
        } else if path == ELICIT_URL {
            parse_elicit_url(cx, attr)
        } else if path == SAMPLE {
            parse_sample(cx, attr)
        } else {
            if !matches!(attr.meta, Meta::Path(_)) {
                cx.error_spanned_by(
                    &attr.meta,
                    "`#[roots]` takes no arguments: the client's roots are the answer",
                );
            }
            Some(AskAttrKind::Roots)
        }?;
        Some(AskAttr {
            attr: attr.clone(),
            kind,
        })
    }
}

/// `#[elicit("message")]` or `#[elicit(message = "...")]`.
fn parse_elicit(cx: &Ctxt, attr: &Attribute) -> Option<AskAttrKind> {
    const USAGE: &str =
        "`#[elicit]` needs the message the user sees: `#[elicit(\"Delete {path}?\")]`";
    let Meta::List(list) = &attr.meta else {
        cx.error_spanned_by(attr, USAGE);
        return None;
    };
    if let Ok(message) = syn::parse2::<LitStr>(list.tokens.clone()) {
        return Some(AskAttrKind::Form { message });
    }
    let mut message = None;
    let mut unknown = false;
    let result = attr.parse_nested_meta(|meta| {
        if meta.path == MESSAGE {
            set_once(cx, &meta, MESSAGE, &mut message, lit_str(&meta, MESSAGE)?);
        } else {
            unknown = true;
            unknown_key(cx, &meta, "#[elicit]", "a message string or `message`")?;
        }
        Ok(())
    });
    if let Err(error) = result {
        cx.push(error);
        return None;
    }
    match message {
        Some(message) => Some(AskAttrKind::Form { message }),
        // An unknown key was reported already; one error per mistake.
        None if unknown => None,
        None => {
            cx.error_spanned_by(attr, USAGE);
            None
        }
    }
}

/// `#[elicit_url(message = "...", url = "...")]`.
fn parse_elicit_url(cx: &Ctxt, attr: &Attribute) -> Option<AskAttrKind> {
    const USAGE: &str = "`#[elicit_url]` needs a message and a URL: `#[elicit_url(message = \"Sign in to {service}\", url = \"https://example.com/connect\")]`";
    let mut message = None;
    let mut url = None;
    let mut unknown = false;
    if !matches!(attr.meta, Meta::List(_)) {
        cx.error_spanned_by(attr, USAGE);
        return None;
    }
    let result = attr.parse_nested_meta(|meta| {
        if meta.path == MESSAGE {
            set_once(cx, &meta, MESSAGE, &mut message, lit_str(&meta, MESSAGE)?);
        } else if meta.path == URL {
            set_once(cx, &meta, URL, &mut url, lit_str(&meta, URL)?);
        } else {
            unknown = true;
            unknown_key(cx, &meta, "#[elicit_url]", "`message` or `url`")?;
        }
        Ok(())
    });
    if let Err(error) = result {
        cx.push(error);
        return None;
    }
    match (message, url) {
        (Some(message), Some(url)) => Some(AskAttrKind::Url { message, url }),
        _ if unknown => None,
        _ => {
            cx.error_spanned_by(attr, USAGE);
            None
        }
    }
}

/// `#[sample(prompt = "...", max_tokens = N, system = "...")]`.
fn parse_sample(cx: &Ctxt, attr: &Attribute) -> Option<AskAttrKind> {
    const USAGE: &str = "`#[sample]` needs the prompt for the client's model: `#[sample(prompt = \"Summarize {text}\", max_tokens = 200)]`";
    let mut prompt = None;
    let mut max_tokens = None;
    let mut system = None;
    let mut unknown = false;
    if !matches!(attr.meta, Meta::List(_)) {
        cx.error_spanned_by(attr, USAGE);
        return None;
    }
    let result = attr.parse_nested_meta(|meta| {
        if meta.path == PROMPT {
            set_once(cx, &meta, PROMPT, &mut prompt, lit_str(&meta, PROMPT)?);
        } else if meta.path == SYSTEM {
            set_once(cx, &meta, SYSTEM, &mut system, lit_str(&meta, SYSTEM)?);
        } else if meta.path == MAX_TOKENS {
            let value: LitInt = meta.value()?.parse().map_err(|error| {
                syn::Error::new(
                    error.span(),
                    "`max_tokens` takes a positive integer: `max_tokens = 200`",
                )
            })?;
            match value.base10_parse::<u32>() {
                Ok(n) if n > 0 => set_once(cx, &meta, MAX_TOKENS, &mut max_tokens, value),
                _ => cx.error_spanned_by(
                    &value,
                    "`max_tokens` is a positive integer that fits in 32 bits",
                ),
            }
        } else {
            unknown = true;
            unknown_key(cx, &meta, "#[sample]", "`prompt`, `max_tokens` or `system`")?;
        }
        Ok(())
    });
    if let Err(error) = result {
        cx.push(error);
        return None;
    }
    match prompt {
        Some(prompt) => Some(AskAttrKind::Sample {
            prompt,
            max_tokens,
            system,
        }),
        None => {
            cx.error_spanned_by(attr, USAGE);
            None
        }
    }
}
