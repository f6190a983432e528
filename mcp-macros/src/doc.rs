//! Descriptions from doc comments, joined at compile time.
//!
//! `#[doc = include_str!("...")]` must keep working, so non-literal pieces
//! are kept as expressions and joined with `concat!` rather than read here.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Attribute, Expr, ExprLit, Lit, Meta};

enum Piece {
    Text(String),
    Expr(Expr),
}

/// The doc comments among `attrs`, as a `&'static str` expression, or
/// `None` when there are none.
pub(crate) fn description(attrs: &[Attribute]) -> Option<TokenStream> {
    let pieces = pieces(attrs);
    if pieces.is_empty() {
        return None;
    }
    let pieces = unindent(pieces);
    match pieces.as_slice() {
        [] => return None,
        [Piece::Text(text)] => return Some(quote!(#text)),
        _ => {}
    }
    let parts = pieces.iter().map(|piece| match piece {
        Piece::Text(text) => quote!(#text),
        Piece::Expr(expr) => quote!(#expr),
    });
    Some(quote!(::core::concat!(#(#parts),*)))
}

fn pieces(attrs: &[Attribute]) -> Vec<Piece> {
    attrs
        .iter()
        .filter(|attr| attr.path().is_ident("doc"))
        .filter_map(|attr| match &attr.meta {
            Meta::NameValue(nv) => Some(match &nv.value {
                Expr::Lit(ExprLit {
                    lit: Lit::Str(s), ..
                }) => Piece::Text(s.value()),
                other => Piece::Expr(other.clone()),
            }),
            _ => None,
        })
        .collect()
}

/// Removes the indentation common to all literal lines (`/// text` gives
/// `" text"`), trims blank lines at both ends, and puts a newline between
/// pieces, as rustdoc does.
fn unindent(pieces: Vec<Piece>) -> Vec<Piece> {
    let indent = pieces
        .iter()
        .filter_map(|p| match p {
            Piece::Text(t) => Some(t),
            Piece::Expr(_) => None,
        })
        .flat_map(|t| t.lines())
        .filter(|line| !line.trim().is_empty())
        .map(|line| line.len() - line.trim_start().len())
        .min()
        .unwrap_or(0);
    let mut merged: Vec<Piece> = Vec::new();
    for piece in pieces {
        match piece {
            Piece::Text(text) => {
                let text = text
                    .lines()
                    .map(|line| line.get(indent..).unwrap_or("").trim_end())
                    .collect::<Vec<_>>()
                    .join("\n");
                match merged.last_mut() {
                    Some(Piece::Text(previous)) => {
                        previous.push('\n');
                        previous.push_str(&text);
                    }
                    Some(Piece::Expr(_)) => merged.push(Piece::Text(format!("\n{text}"))),
                    None => merged.push(Piece::Text(text)),
                }
            }
            Piece::Expr(expr) => {
                if let Some(Piece::Text(previous)) = merged.last_mut() {
                    previous.push('\n');
                }
                merged.push(Piece::Expr(expr));
            }
        }
    }
    if let Some(Piece::Text(first)) = merged.first_mut() {
        *first = first.trim_start_matches('\n').to_owned();
    }
    if let Some(Piece::Text(last)) = merged.last_mut() {
        *last = last.trim_end_matches('\n').to_owned();
    }
    merged.retain(|p| !matches!(p, Piece::Text(t) if t.is_empty()));
    merged
}

#[cfg(test)]
mod tests {
    use super::*;

    fn describe(tokens: TokenStream) -> Option<String> {
        let item: syn::ItemFn = syn::parse2(quote!(#tokens fn f() {})).unwrap();
        description(&item.attrs).map(|t| t.to_string())
    }

    #[test]
    fn doc_lines_are_unindented_and_joined() {
        assert_eq!(
            describe(quote!(
                /// Adds two numbers.
                ///
                ///   Indented.
            )),
            Some(quote!("Adds two numbers.\n\n  Indented.").to_string())
        );
        assert_eq!(describe(quote!(#[inline])), None);
        assert_eq!(describe(quote!(#[doc = ""])), None);
    }

    #[test]
    fn include_str_is_kept_as_an_expression() {
        assert_eq!(
            describe(quote!(
                /// Intro.
                #[doc = include_str!("x.md")]
            )),
            Some(quote!(::core::concat!("Intro.\n", include_str!("x.md"))).to_string())
        );
    }
}
