//! Tool argument types, peeled: the innermost user types of the standard
//! containers (`Option<Point>`, `Vec<Point>`, `HashMap<String, Point>`,
//! `[Point; 3]`) become the arguments struct's generic parameters, and the
//! containers stay written out in its fields.
//!
//! The bounds that make an argument usable (`Deserialize`, `JsonSchema`)
//! are then checked on `Point` itself. rustc words a failed bound with the
//! bound trait's own message only when the type that lacks the trait is
//! the type the bound was put on; on `Option<Point>` it would fall back to
//! the generic "the trait bound `Point: JsonSchema` is not satisfied".

use proc_macro2::Span;
use quote::format_ident;
use syn::{GenericArgument, Ident, PathArguments, Type};

/// Containers whose every type argument is peeled.
const ELEMENT_CONTAINERS: [&str; 3] = ["Option", "Vec", "VecDeque"];
/// Maps: only the value is peeled (a generic key would lose the `Ord` or
/// `Hash + Eq` the map's `Deserialize` needs).
const MAPS: [&str; 2] = ["BTreeMap", "HashMap"];

/// A field type with its innermost user types replaced by generic
/// parameters, and those types in order.
pub(super) struct Peeled<'a> {
    pub(super) field: Type,
    pub(super) inner: Vec<(Ident, &'a Type)>,
}

/// Peels `ty`, numbering new generic parameters from `next`.
pub(super) fn peel<'a>(ty: &'a Type, next: &mut usize) -> Peeled<'a> {
    let mut inner = Vec::new();
    let field = replace(ty, next, &mut inner);
    Peeled { field, inner }
}

fn replace<'a>(ty: &'a Type, next: &mut usize, inner: &mut Vec<(Ident, &'a Type)>) -> Type {
    match ty {
        Type::Paren(paren) => replace(&paren.elem, next, inner),
        Type::Group(group) => replace(&group.elem, next, inner),
        Type::Array(array) => {
            let mut peeled = array.clone();
            *peeled.elem = replace(&array.elem, next, inner);
            Type::Array(peeled)
        }
        Type::Path(path) if path.qself.is_none() => match container(ty) {
            Some(peeled_from) => {
                let mut path = path.clone();
                let last = path
                    .path
                    .segments
                    .last_mut()
                    .expect("a container has a name");
                if let PathArguments::AngleBracketed(arguments) = &mut last.arguments {
                    let originals = type_arguments(ty);
                    let typed = arguments.args.iter_mut().filter_map(|a| match a {
                        GenericArgument::Type(t) => Some(t),
                        _ => None,
                    });
                    for (index, (slot, original)) in typed.zip(originals).enumerate() {
                        if index >= peeled_from {
                            *slot = replace(original, next, inner);
                        }
                    }
                }
                Type::Path(path)
            }
            None => parameter(ty, next, inner),
        },
        _ => parameter(ty, next, inner),
    }
}

/// A new generic parameter standing for `ty`.
fn parameter<'a>(ty: &'a Type, next: &mut usize, inner: &mut Vec<(Ident, &'a Type)>) -> Type {
    let ident = format_ident!("__McpArg{}", *next, span = Span::call_site());
    *next += 1;
    inner.push((ident.clone(), ty));
    syn::parse_quote!(#ident)
}

/// For a peelable container: the index of its first peeled type argument.
fn container(ty: &Type) -> Option<usize> {
    let Type::Path(path) = ty else { return None };
    let last = path.path.segments.last()?;
    let name = last.ident.to_string();
    let count = type_arguments(ty).len();
    if ELEMENT_CONTAINERS.contains(&name.as_str()) && count == 1 {
        Some(0)
    } else if MAPS.contains(&name.as_str()) && count == 2 {
        Some(1)
    } else {
        None
    }
}

/// The type arguments of a path type's last segment, in order.
fn type_arguments(ty: &Type) -> Vec<&Type> {
    let Type::Path(path) = ty else {
        return Vec::new();
    };
    let Some(last) = path.path.segments.last() else {
        return Vec::new();
    };
    let PathArguments::AngleBracketed(arguments) = &last.arguments else {
        return Vec::new();
    };
    arguments
        .args
        .iter()
        .filter_map(|a| match a {
            GenericArgument::Type(t) => Some(t),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use quote::ToTokens as _;

    use super::*;

    fn peeled(ty: &str) -> (String, Vec<String>) {
        let ty: Type = syn::parse_str(ty).unwrap();
        let mut next = 0;
        let peeled = peel(&ty, &mut next);
        let field = peeled.field.to_token_stream().to_string();
        let inner = peeled
            .inner
            .iter()
            .map(|(ident, ty)| format!("{ident}={}", ty.to_token_stream()))
            .collect();
        (field, inner)
    }

    #[test]
    fn containers_are_peeled_to_their_user_types() {
        assert_eq!(
            peeled("Point"),
            ("__McpArg0".into(), vec!["__McpArg0=Point".into()])
        );
        assert_eq!(
            peeled("Option<Vec<Point>>"),
            (
                "Option < Vec < __McpArg0 > >".into(),
                vec!["__McpArg0=Point".into()]
            )
        );
        assert_eq!(
            peeled("std::collections::HashMap<String, Option<Point>>"),
            (
                "std :: collections :: HashMap < String , Option < __McpArg0 > >".into(),
                vec!["__McpArg0=Point".into()]
            )
        );
        assert_eq!(
            peeled("[Point; 3]"),
            ("[__McpArg0 ; 3]".into(), vec!["__McpArg0=Point".into()])
        );
    }

    #[test]
    fn other_types_stay_whole() {
        // Sets need `Ord`/`Hash` of their element, `Box<str>` is unsized,
        // and a user's generic type is not ours to open.
        for ty in [
            "BTreeSet<Point>",
            "Box<str>",
            "Wrapper<Point>",
            "Option<Point, X>",
        ] {
            let (field, inner) = peeled(ty);
            assert_eq!(field, "__McpArg0");
            assert_eq!(inner.len(), 1);
        }
    }
}
