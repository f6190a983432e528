//! Per-request extensions: typed values a request layer attaches to a
//! request (the caller's tenant, a resolved account, a database
//! transaction's id), which handlers read with `#[ctx] Extension<T>`
//! (`context`). A leaf: the request's context holds them, and the
//! middleware fills them.

use std::any::{Any, TypeId};
use std::fmt;

/// The typed values attached to one request, one per type, as
/// [`http::Extensions`](https://docs.rs/http/latest/http/struct.Extensions.html)
/// holds them for an HTTP request (and, like them, `Clone`: a task's
/// worker carries a copy of the request's into the handler it runs).
///
/// A request layer fills them
/// ([`Request::extensions_mut`](crate::middleware::Request::extensions_mut)); the
/// handler reads them ([`Extension<T>`](crate::middleware::Extension) as a `#[ctx]` parameter, or
/// [`Context::extension`](crate::Context::extension)).
#[derive(Clone, Default)]
pub struct Extensions {
    /// Boxed, and absent until the first insert: most requests carry none,
    /// and this moves with every request's future.
    #[expect(
        clippy::box_collection,
        reason = "one pointer, not three, in every request's scope"
    )]
    values: Option<Box<Vec<Entry>>>,
}

/// One value, with its type's id and name.
type Entry = (TypeId, &'static str, Box<dyn AnyClone>);

/// A value that can be cloned behind `dyn`.
trait AnyClone: Any + Send + Sync {
    fn clone_box(&self) -> Box<dyn AnyClone>;
    fn as_any(&self) -> &dyn Any;
    fn as_any_mut(&mut self) -> &mut dyn Any;
    fn into_any(self: Box<Self>) -> Box<dyn Any>;
}

impl<T: Clone + Send + Sync + 'static> AnyClone for T {
    fn clone_box(&self) -> Box<dyn AnyClone> {
        Box::new(self.clone())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}

impl Clone for Box<dyn AnyClone> {
    fn clone(&self) -> Self {
        (**self).clone_box()
    }
}

impl Extensions {
    /// No extensions.
    pub fn new() -> Extensions {
        Extensions::default()
    }

    /// Attaches `value`, returning the value of its type it replaces.
    pub fn insert<T: Clone + Send + Sync + 'static>(&mut self, value: T) -> Option<T> {
        let values = self.values.get_or_insert_default();
        let id = TypeId::of::<T>();
        let entry = (id, std::any::type_name::<T>(), Box::new(value) as Box<_>);
        match values.iter_mut().find(|(other, ..)| *other == id) {
            Some(slot) => {
                let old = std::mem::replace(slot, entry);
                old.2.into_any().downcast().ok().map(|old| *old)
            }
            None => {
                values.push(entry);
                None
            }
        }
    }

    /// The value of type `T`, if one is attached.
    pub fn get<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.find(TypeId::of::<T>())?.as_any().downcast_ref()
    }

    /// The value of type `T`, to change in place.
    pub fn get_mut<T: Send + Sync + 'static>(&mut self) -> Option<&mut T> {
        let id = TypeId::of::<T>();
        let values = self.values.as_mut()?;
        let (.., value) = values.iter_mut().find(|(other, ..)| *other == id)?;
        // `**`: a `Box<dyn AnyClone>` is itself an `AnyClone`.
        (**value).as_any_mut().downcast_mut()
    }

    /// Removes the value of type `T`, returning it.
    pub fn remove<T: Send + Sync + 'static>(&mut self) -> Option<T> {
        let id = TypeId::of::<T>();
        let values = self.values.as_mut()?;
        let index = values.iter().position(|(other, ..)| *other == id)?;
        let (.., value) = values.swap_remove(index);
        value.into_any().downcast().ok().map(|value| *value)
    }

    /// Whether no value is attached.
    pub fn is_empty(&self) -> bool {
        self.values.as_ref().is_none_or(|values| values.is_empty())
    }

    pub(crate) fn has(&self, id: TypeId) -> bool {
        self.find(id).is_some()
    }

    fn find(&self, id: TypeId) -> Option<&dyn AnyClone> {
        let values = self.values.as_ref()?;
        let (.., value) = values.iter().find(|(other, ..)| *other == id)?;
        Some(&**value)
    }
}

impl fmt::Debug for Extensions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names = self.values.iter().flat_map(|values| values.iter());
        f.debug_set()
            .entries(names.map(|(_, name, _)| name))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::Extensions;

    #[test]
    fn one_value_per_type() {
        let mut extensions = Extensions::new();
        assert!(extensions.is_empty());
        assert_eq!(extensions.insert(1_u32), None);
        assert_eq!(extensions.insert(String::from("a")), None);
        assert_eq!(extensions.insert(2_u32), Some(1));
        assert_eq!(extensions.get::<u32>(), Some(&2));
        *extensions.get_mut::<u32>().unwrap() += 1;
        assert_eq!(extensions.remove::<u32>(), Some(3));
        assert_eq!(extensions.get::<u32>(), None);
        assert_eq!(extensions.get::<String>().map(String::as_str), Some("a"));
        assert_eq!(format!("{extensions:?}"), r#"{"alloc::string::String"}"#);
    }
}
