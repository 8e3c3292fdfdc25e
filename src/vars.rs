//! Where a render takes its values from: anything that can answer "what is
//! the value of `name`?".

use crate::value::ValueRef;
use std::collections::{BTreeMap, HashMap};
use std::hash::BuildHasher;

/// A set of named values for a render.
///
/// Implemented for JSON objects, maps of strings and maps of JSON values, and
/// by the vars structs promptpack generates. [`Library::build_prompt`](crate::library::Library::build_prompt)
/// takes any `serde::Serialize` value instead and converts it; implement this
/// trait to skip that conversion.
pub trait Vars {
    /// The value of `name`, or `None` when there is none.
    fn get(&self, name: &str) -> Option<ValueRef<'_>>;
}

impl<V: Vars + ?Sized> Vars for &V {
    fn get(&self, name: &str) -> Option<ValueRef<'_>> {
        (**self).get(name)
    }
}

impl Vars for serde_json::Map<String, serde_json::Value> {
    fn get(&self, name: &str) -> Option<ValueRef<'_>> {
        self.get(name).map(ValueRef::Json)
    }
}

impl<K, V, S> Vars for HashMap<K, V, S>
where
    K: std::borrow::Borrow<str> + Eq + std::hash::Hash,
    V: AsValueRef,
    S: BuildHasher,
{
    fn get(&self, name: &str) -> Option<ValueRef<'_>> {
        HashMap::get(self, name).map(AsValueRef::as_value_ref)
    }
}

impl<K, V> Vars for BTreeMap<K, V>
where
    K: std::borrow::Borrow<str> + Ord,
    V: AsValueRef,
{
    fn get(&self, name: &str) -> Option<ValueRef<'_>> {
        BTreeMap::get(self, name).map(AsValueRef::as_value_ref)
    }
}

impl<V: AsValueRef> Vars for [(&str, V)] {
    fn get(&self, name: &str) -> Option<ValueRef<'_>> {
        self.iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_value_ref())
    }
}

impl<V: AsValueRef, const N: usize> Vars for [(&str, V); N] {
    fn get(&self, name: &str) -> Option<ValueRef<'_>> {
        Vars::get(self.as_slice(), name)
    }
}

/// A map value that can be rendered: text, a flag or a JSON value.
pub trait AsValueRef {
    /// The value, borrowed.
    fn as_value_ref(&self) -> ValueRef<'_>;
}

impl AsValueRef for str {
    fn as_value_ref(&self) -> ValueRef<'_> {
        ValueRef::Str(self)
    }
}

impl AsValueRef for String {
    fn as_value_ref(&self) -> ValueRef<'_> {
        ValueRef::Str(self)
    }
}

impl<T: AsValueRef + ?Sized> AsValueRef for &T {
    fn as_value_ref(&self) -> ValueRef<'_> {
        (**self).as_value_ref()
    }
}

impl AsValueRef for bool {
    fn as_value_ref(&self) -> ValueRef<'_> {
        ValueRef::Bool(*self)
    }
}

impl AsValueRef for ValueRef<'_> {
    fn as_value_ref(&self) -> ValueRef<'_> {
        *self
    }
}

impl AsValueRef for serde_json::Value {
    fn as_value_ref(&self) -> ValueRef<'_> {
        ValueRef::Json(self)
    }
}
