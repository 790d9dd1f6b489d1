//! Class-hierarchy look-ups: subclass tests, field and method resolution,
//! virtual dispatch (cached per receiver class and name-and-descriptor).

use super::ops::Selector;
use super::{ClassId, Field, MethodId, Vm};

impl Vm {
    pub(super) fn is_subclass(&self, mut c: ClassId, target: ClassId) -> bool {
        loop {
            if c == target {
                return true;
            }
            if self.classes[c as usize]
                .interfaces
                .iter()
                .any(|i| self.is_subclass(*i, target))
            {
                return true;
            }
            match self.classes[c as usize].super_id {
                Some(s) => c = s,
                None => return false,
            }
        }
    }

    /// Finds a field in `class`, its supers and interfaces.
    pub(super) fn find_field(&self, class: ClassId, name: &str, desc: &str) -> Option<(ClassId, Field)> {
        let c = &self.classes[class as usize];
        if let Some(&f) = c.fields.get(&(name.to_string(), desc.to_string())) {
            return Some((class, f));
        }
        for i in &c.interfaces {
            if let Some(f) = self.find_field(*i, name, desc) {
                return Some(f);
            }
        }
        c.super_id.and_then(|s| self.find_field(s, name, desc))
    }

    /// Finds a method by name and descriptor in `class` and its supers (then interfaces).
    pub(super) fn find_method(&self, class: ClassId, name: &str, desc: &str) -> Option<MethodId> {
        let mut c = Some(class);
        while let Some(id) = c {
            let cl = &self.classes[id as usize];
            if let Some(&m) = cl.methods.get(&(name.to_string(), desc.to_string())) {
                if !self.methods[m as usize].is_abstract {
                    return Some(m);
                }
            }
            c = cl.super_id;
        }
        // Interface methods (abstract ones too, for invokeinterface resolution).
        let mut todo = vec![class];
        while let Some(id) = todo.pop() {
            let cl = &self.classes[id as usize];
            if let Some(&m) = cl.methods.get(&(name.to_string(), desc.to_string())) {
                return Some(m);
            }
            todo.extend(cl.interfaces.iter().copied());
            if let Some(s) = cl.super_id {
                todo.push(s);
            }
        }
        None
    }

    pub(super) fn virtual_target(&mut self, class: ClassId, nd: Selector) -> Option<MethodId> {
        if let Some(&t) = self.vcache.get(&(class, nd)) {
            return t;
        }
        let (n, d) = self.nd_list[nd as usize].clone();
        let t = self
            .find_method(class, &n, &d)
            .filter(|m| !self.methods[*m as usize].is_abstract);
        self.vcache.insert((class, nd), t);
        t
    }
}
