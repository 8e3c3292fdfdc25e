//! Where a render takes its values from: anything that can answer "what is
//! the value of `name`?".

use crate::program::VarInfo;
use crate::value::ValueRef;
use std::collections::{BTreeMap, HashMap};
use std::hash::BuildHasher;

/// The stand-in value of variable `name` where no value is given: `‹name›`,
/// as snapshot tests and the CLI's token counts render a prompt with.
pub fn placeholder(name: &str) -> String {
    format!("‹{name}›")
}

/// A set of named values for a render.
///
/// Implemented for JSON objects, maps of strings and maps of JSON values, and
/// by the vars structs promptpack generates. `promptpack::Library::build_prompt`
/// takes any `serde::Serialize` value instead and converts it; implement this
/// trait to skip that conversion.
pub trait Vars {
    /// The value of `name`, or `None` when there is none.
    fn get(&self, name: &str) -> Option<ValueRef<'_>>;

    /// Sets `values[i]` to the value of `names[i]` for every variable that
    /// has one, leaving the others as they are; a render asks for all of its
    /// variables at once through this.
    ///
    /// Provided: one [`Vars::get`] per name. Override it only when one walk
    /// over your values is cheaper than a lookup per name, as it is for
    /// small hash maps, whose every lookup hashes the name; the values must
    /// be the ones `get` gives.
    fn get_many<'a>(&'a self, names: VarNames<'_>, values: &mut [Option<ValueRef<'a>>]) {
        for (value, name) in values.iter_mut().zip(names.iter()) {
            if let Some(v) = self.get(name) {
                *value = Some(v);
            }
        }
    }
}

impl<V: Vars + ?Sized> Vars for &V {
    fn get(&self, name: &str) -> Option<ValueRef<'_>> {
        (**self).get(name)
    }

    fn get_many<'a>(&'a self, names: VarNames<'_>, values: &mut [Option<ValueRef<'a>>]) {
        (**self).get_many(names, values);
    }
}

/// Maps with at most this many entries are walked rather than asked once
/// per name: comparing a few names costs less than hashing one.
const WALK_MAX: usize = 32;

/// Sets the values of the variables that `entries`' keys name. Keys must be
/// unique, as in a map, for this to give what one lookup per name gives.
fn walk<'a>(
    names: VarNames<'_>,
    values: &mut [Option<ValueRef<'a>>],
    entries: impl Iterator<Item = (&'a str, ValueRef<'a>)>,
) {
    let mut next = 0;
    for (key, value) in entries {
        if let Some(i) = index_from(names.0, next, key) {
            if let Some(slot) = values.get_mut(i) {
                *slot = Some(value);
            }
            next = i + 1;
        }
    }
}

#[cfg(feature = "json")]
impl Vars for serde_json::Map<String, serde_json::Value> {
    fn get(&self, name: &str) -> Option<ValueRef<'_>> {
        self.get(name).map(ValueRef::Json)
    }

    fn get_many<'a>(&'a self, names: VarNames<'_>, values: &mut [Option<ValueRef<'a>>]) {
        if self.len() > WALK_MAX {
            for (value, name) in values.iter_mut().zip(names.iter()) {
                if let Some(v) = self.get(name) {
                    *value = Some(ValueRef::Json(v));
                }
            }
        } else {
            walk(
                names,
                values,
                self.iter().map(|(k, v)| (k.as_str(), ValueRef::Json(v))),
            );
        }
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

    fn get_many<'a>(&'a self, names: VarNames<'_>, values: &mut [Option<ValueRef<'a>>]) {
        if self.len() > WALK_MAX {
            for (value, name) in values.iter_mut().zip(names.iter()) {
                if let Some(v) = HashMap::get(self, name) {
                    *value = Some(v.as_value_ref());
                }
            }
        } else {
            walk(
                names,
                values,
                self.iter().map(|(k, v)| (k.borrow(), v.as_value_ref())),
            );
        }
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

/// The names of the variables a render asks [`Vars::get_many`] for, in the
/// order of its `values`.
#[derive(Debug, Clone, Copy)]
pub struct VarNames<'a>(&'a [VarInfo]);

impl<'a> VarNames<'a> {
    /// The names of `vars`, in their order. Hidden: `VarInfo` is the
    /// compiler's type; a render makes these, users only read them.
    #[doc(hidden)]
    pub fn new(vars: &'a [VarInfo]) -> VarNames<'a> {
        VarNames(vars)
    }

    /// How many names there are.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The `i`th name.
    pub fn get(&self, i: usize) -> Option<&'a str> {
        self.0.get(i).map(|v| v.name.as_str())
    }

    /// The names in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &'a str> + 'a {
        self.0.iter().map(|v| v.name.as_str())
    }

    /// The index of `name`, searching from `from` on and then from the
    /// start: cheap when names come in about the order of the render's.
    pub fn position_from(&self, from: usize, name: &str) -> Option<usize> {
        index_from(self.0, from, name)
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

#[cfg(feature = "json")]
impl AsValueRef for serde_json::Value {
    fn as_value_ref(&self) -> ValueRef<'_> {
        ValueRef::Json(self)
    }
}

/// The index of the variable named `key`, searching from `from` on and then
/// from the start.
pub fn index_from(names: &[VarInfo], from: usize, key: &str) -> Option<usize> {
    scan_from(names, from, key).0
}

/// [`index_from`], and how many names it compared.
pub fn scan_from(names: &[VarInfo], from: usize, key: &str) -> (Option<usize>, usize) {
    let from = from.min(names.len());
    let (before, after) = names.split_at(from);
    match after.iter().position(|v| v.name == key) {
        Some(i) => (Some(from + i), i + 1),
        None => match before.iter().position(|v| v.name == key) {
            Some(i) => (Some(i), after.len() + i + 1),
            None => (None, names.len()),
        },
    }
}
