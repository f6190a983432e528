//! How generated code uses a user's type in a handler's body without
//! naming the bound it needs there a second time: through a [`Probe`].
//!
//! The macros check each bound once, in a constant (so the check cannot be
//! skipped): `FromContext::CAN_LOG` for `#[ctx]` types, the output schema
//! for return types. In the handler's body, method resolution on
//! `(&Probe::<T>::new())` picks the real impl ([`BindContext`],
//! `ConvertResult`) when `T` has the bound and falls back, one autoref
//! further, to one that never runs ([`BindNothing`], `ConvertNothing`)
//! when it does not. The fallbacks exist only so that a wrong type is
//! reported once instead of once per body (rustc reports a failed bound in
//! each item that names it); a crate with such a type does not compile.

use std::marker::PhantomData;

use crate::context::{Context, FromContext};

/// A stand-in for a user's type in generated code.
#[derive(Debug)]
pub struct Probe<T>(PhantomData<fn() -> T>);

impl<T> Probe<T> {
    /// The probe for `T`.
    pub const fn new() -> Self {
        Probe(PhantomData)
    }
}

impl<T> Default for Probe<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// Binds a context type from the request context.
pub trait BindContext<'a, T> {
    /// `T::from_context(ctx)`.
    fn bind(&self, ctx: &'a Context) -> T;
}

impl<'a, T: FromContext<'a>> BindContext<'a, T> for Probe<T> {
    fn bind(&self, ctx: &'a Context) -> T {
        T::from_context(ctx)
    }
}

/// The fallback for types that are not context types (already an error).
pub trait BindNothing<'a, T> {
    /// Never called: the crate that would call it does not compile.
    fn bind(&self, ctx: &'a Context) -> T;
}

impl<'a, T> BindNothing<'a, T> for &Probe<T> {
    fn bind(&self, _: &'a Context) -> T {
        unreachable!("a `#[ctx]` type without `FromContext` does not compile")
    }
}
