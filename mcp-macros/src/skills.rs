//! `skills!("folder")`: a folder of Agent Skills embedded at compile time.
//! The folder (relative to the crate's `CARGO_MANIFEST_DIR`) is read and
//! checked with the runtime's own rules (`mcp-runtime-grammar`'s
//! `skills::read_skills`): a bad skill is an error at the macro's argument
//! naming the file and the rule. Every file becomes an `include_bytes!` of
//! its absolute path (so the build reruns when one changes), with its
//! digest, MIME type and the frontmatter's JSON computed here.

use crate::ctxt::Ctxt;
use mcp_grammar::skills::{read_skills, SkillDir};
use proc_macro2::TokenStream;
use quote::quote;
use std::path::{Path, PathBuf};

/// The folder read, with what the expansion needs.
pub struct Embedded {
    skills: Vec<SkillDir>,
}

/// Reads the literal and the folder it names.
pub fn read(cx: &Ctxt, input: proc_macro::TokenStream) -> Option<Embedded> {
    let lit: syn::LitStr = match syn::parse(input) {
        Ok(lit) => lit,
        Err(e) => {
            cx.error(
                e.span(),
                "skills!: expected a string literal, the skills folder relative to the crate (CARGO_MANIFEST_DIR)",
            );
            return None;
        }
    };
    let base = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let root = base.join(lit.value());
    if !root.is_dir() {
        cx.error_spanned_by(
            &lit,
            format!(
                "skills!: `{}` is not a folder (paths are relative to CARGO_MANIFEST_DIR)",
                lit.value()
            ),
        );
        return None;
    }
    match read_skills(&root) {
        Ok(skills) => Some(Embedded { skills }),
        Err(e) => {
            let shown = shown(&base, &e.file);
            cx.error_spanned_by(&lit, format!("skills!: {shown}: {}", e.rule));
            None
        }
    }
}

/// A path as the user wrote it: relative to the crate when it is inside it.
fn shown(base: &Path, file: &Path) -> String {
    file.strip_prefix(base).unwrap_or(file).display().to_string()
}

/// `{ static SKILLS: &[EmbeddedSkill] = ...; embedded_skills(SKILLS) }`.
pub fn expand(embedded: &Embedded) -> TokenStream {
    let skills = embedded.skills.iter().map(|skill| {
        let path = &skill.path;
        let frontmatter = serde_json::Value::Object(skill.frontmatter.clone()).to_string();
        let files = skill.files.iter().map(|f| {
            let rel = &f.path;
            let source = f.source.canonicalize().unwrap_or_else(|_| f.source.clone());
            let source = source.to_string_lossy().into_owned();
            let (digest, mime) = (&f.digest, f.mime);
            quote! {
                ::mcp_runtime::__private::EmbeddedFile {
                    path: #rel,
                    bytes: ::core::include_bytes!(#source),
                    digest: #digest,
                    mime: #mime,
                }
            }
        });
        quote! {
            ::mcp_runtime::__private::EmbeddedSkill {
                path: #path,
                frontmatter: #frontmatter,
                files: &[#(#files),*],
            }
        }
    });
    quote! {
        {
            static SKILLS: &[::mcp_runtime::__private::EmbeddedSkill] = &[#(#skills),*];
            ::mcp_runtime::__private::embedded_skills(SKILLS)
        }
    }
}
