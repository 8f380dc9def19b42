//! The one error collector every step writes to (as in serde_derive): a
//! macro reports every error of an item at once, each at the span of the
//! user's code that caused it, instead of stopping at the first.

use proc_macro2::Span;
use quote::ToTokens;
use std::cell::RefCell;
use std::fmt::Display;

/// Errors found so far while reading, modelling and checking one item.
#[derive(Default)]
pub struct Ctxt {
    errors: RefCell<Vec<syn::Error>>,
}

impl Ctxt {
    /// A collector with no errors.
    pub fn new() -> Self {
        Ctxt::default()
    }

    /// Records an error at `span`.
    pub fn error(&self, span: Span, message: impl Display) {
        self.errors.borrow_mut().push(syn::Error::new(span, message));
    }

    /// Records an error spanning the tokens of `node`.
    pub fn error_spanned_by(&self, node: impl ToTokens, message: impl Display) {
        self.errors.borrow_mut().push(syn::Error::new_spanned(node, message));
    }

    /// Records an error syn produced.
    pub fn syn_error(&self, error: syn::Error) {
        self.errors.borrow_mut().push(error);
    }

    /// All the errors as one (each keeps its span), or `Ok` when there are none.
    pub fn check(self) -> syn::Result<()> {
        let mut errors = self.errors.into_inner().into_iter();
        let Some(mut all) = errors.next() else {
            return Ok(());
        };
        for e in errors {
            all.combine(e);
        }
        Err(all)
    }
}
