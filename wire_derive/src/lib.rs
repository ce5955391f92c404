//! `#[derive(FromWire)]`: the browser's decoder of one of the console's answer types
//! (`app::decode::FromWire`), read from the type's own `#[serde(...)]` attributes so that the
//! JSON the server writes with serde is read back exactly as serde's derive would read it.
//!
//! Why not serde's derive in the browser: its `Deserialize` is a visitor per type, generic
//! over the deserializer, with every field's decoding inlined into a loop over the keys; in
//! the wasm that was 2–6 KB per answer type and up to a third of a page group's code. Here a
//! type's decoder is a list of calls, one per field, to helpers shared by every type
//! (`app::decode::field` and friends, one instance per field *type*).
//!
//! Followed: `rename`, `rename_all` (`lowercase`, `UPPERCASE`, `snake_case`, `kebab-case`),
//! `default` (on a field or the whole struct), `tag` (internally tagged enums), `with`
//! (the module's `from_wire(Option<Value>)`), and serde's default external tagging.
//! `skip_serializing_if` and `deny_unknown_fields` change nothing when reading the server's
//! own answers. Any other serde attribute is a compile error, so a new one cannot be
//! silently read differently.

use proc_macro::TokenStream;
use proc_macro2::TokenStream as Tokens;
use quote::quote;
use syn::{parse_macro_input, Attribute, Data, DeriveInput, Fields, Ident, LitStr};

#[proc_macro_derive(FromWire, attributes(serde))]
pub fn derive_from_wire(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand(input).unwrap_or_else(syn::Error::into_compile_error).into()
}

/// The serde attributes of a container, a variant or a field that change how JSON is read.
#[derive(Default)]
struct Serde {
    rename: Option<String>,
    rename_all: Option<String>,
    tag: Option<String>,
    default: bool,
    with: Option<syn::Path>,
}

fn serde_of(attrs: &[Attribute]) -> syn::Result<Serde> {
    let mut out = Serde::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        attr.parse_nested_meta(|meta| {
            let string = |meta: &syn::meta::ParseNestedMeta| -> syn::Result<String> {
                Ok(meta.value()?.parse::<LitStr>()?.value())
            };
            if meta.path.is_ident("rename") {
                out.rename = Some(string(&meta)?);
            } else if meta.path.is_ident("rename_all") {
                let rule = string(&meta)?;
                if !["lowercase", "UPPERCASE", "snake_case", "kebab-case"].contains(&rule.as_str()) {
                    return Err(meta.error(format!("FromWire: rename_all = \"{rule}\" is not followed")));
                }
                out.rename_all = Some(rule);
            } else if meta.path.is_ident("tag") {
                out.tag = Some(string(&meta)?);
            } else if meta.path.is_ident("default") {
                if meta.input.peek(syn::Token![=]) {
                    return Err(meta.error("FromWire: `default = \"…\"` is not followed"));
                }
                out.default = true;
            } else if meta.path.is_ident("with") {
                out.with = Some(meta.value()?.parse::<LitStr>()?.parse()?);
            } else if meta.path.is_ident("skip_serializing_if") {
                string(&meta)?;
            } else if meta.path.is_ident("deny_unknown_fields") {
            } else {
                return Err(meta.error("FromWire: this serde attribute is not followed"));
            }
            Ok(())
        })?;
    }
    Ok(out)
}

/// A field's key in JSON: its `rename`, else its name under the container's `rename_all`.
fn field_key(ident: &Ident, serde: &Serde, rule: Option<&str>) -> String {
    if let Some(r) = &serde.rename {
        return r.clone();
    }
    let name = ident.to_string();
    let name = name.strip_prefix("r#").unwrap_or(&name);
    match rule {
        Some("lowercase") => name.to_ascii_lowercase(),
        Some("UPPERCASE") => name.to_ascii_uppercase(),
        Some("kebab-case") => name.replace('_', "-"),
        _ => name.to_string(),
    }
}

/// A variant's name in JSON, as serde writes a `PascalCase` variant under `rename_all`.
fn variant_key(ident: &Ident, serde: &Serde, rule: Option<&str>) -> String {
    if let Some(r) = &serde.rename {
        return r.clone();
    }
    let name = ident.to_string();
    let words = |sep: char| {
        let mut out = String::new();
        for (i, c) in name.char_indices() {
            if i > 0 && c.is_uppercase() {
                out.push(sep);
            }
            out.push(c.to_ascii_lowercase());
        }
        out
    };
    match rule {
        Some("lowercase") => name.to_ascii_lowercase(),
        Some("UPPERCASE") => name.to_ascii_uppercase(),
        Some("snake_case") => words('_'),
        Some("kebab-case") => words('-'),
        _ => name,
    }
}

/// `Path { field: …, … }` read from the map `m` (a `serde_json::Map` in scope).
fn named_fields(
    path: Tokens,
    fields: &syn::FieldsNamed,
    rule: Option<&str>,
    whole_default: bool,
) -> syn::Result<Tokens> {
    let mut inits = Vec::new();
    for f in &fields.named {
        let Some(ident) = &f.ident else { continue };
        let serde = serde_of(&f.attrs)?;
        let key = field_key(ident, &serde, rule);
        let value = if let Some(with) = &serde.with {
            quote! { #with::from_wire(m.remove(#key)).map_err(|e| e.at(#key))? }
        } else if serde.default {
            quote! { crate::decode::field_or_default(&mut m, #key)? }
        } else if whole_default {
            quote! { crate::decode::field_or(&mut m, #key, __default.#ident)? }
        } else {
            quote! { crate::decode::field(&mut m, #key)? }
        };
        inits.push(quote! { #ident: #value });
    }
    Ok(quote! { #path { #(#inits),* } })
}

/// `Path(…)` from the value `v` (a newtype: the value itself; more: an array).
fn tuple_fields(path: Tokens, fields: &syn::FieldsUnnamed, what: &str) -> Tokens {
    let n = fields.unnamed.len();
    if n == 1 {
        return quote! { #path(crate::decode::FromWire::from_wire(v)?) };
    }
    let items = (0..n).map(|_| quote! { crate::decode::next(&mut items)? });
    quote! {{
        let mut items = crate::decode::array(v, #n, #what)?.into_iter();
        #path(#(#items),*)
    }}
}

fn expand(input: DeriveInput) -> syn::Result<Tokens> {
    let name = &input.ident;
    let what = name.to_string();
    let serde = serde_of(&input.attrs)?;
    let rule = serde.rename_all.as_deref();
    let body = match &input.data {
        Data::Struct(s) => match &s.fields {
            Fields::Named(fields) => {
                let build = named_fields(quote! { Self }, fields, rule, serde.default)?;
                let default = serde
                    .default
                    .then(|| quote! { let __default = <Self as ::core::default::Default>::default(); });
                quote! {
                    let mut m = crate::decode::object(v, #what)?;
                    #default
                    Ok(#build)
                }
            }
            Fields::Unnamed(fields) => {
                let build = tuple_fields(quote! { Self }, fields, &what);
                quote! { Ok(#build) }
            }
            Fields::Unit => quote! { crate::decode::unit(v, #what).map(|()| Self) },
        },
        Data::Enum(e) => match &serde.tag {
            Some(tag) => internally_tagged(e, tag, rule, &what)?,
            None => externally_tagged(e, rule, &what)?,
        },
        Data::Union(_) => return Err(syn::Error::new_spanned(name, "FromWire: unions are not decoded")),
    };
    let mut generics = input.generics.clone();
    let params: Vec<Ident> = generics.type_params().map(|p| p.ident.clone()).collect();
    let clause = generics.make_where_clause();
    for p in params {
        clause
            .predicates
            .push(syn::parse_quote! { #p: crate::decode::FromWire });
    }
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();
    Ok(quote! {
        impl #impl_generics crate::decode::FromWire for #name #ty_generics #where_clause {
            fn from_wire(v: ::serde_json::Value) -> ::core::result::Result<Self, crate::decode::WireError> {
                #body
            }
        }
    })
}

/// A variant, its serde attributes and its name on the wire.
type WireVariant<'a> = (&'a syn::Variant, Serde, String);

/// Each variant with its serde attributes and its name on the wire, and those names listed for
/// the error that names an unknown one.
fn wire_variants<'a>(e: &'a syn::DataEnum, rule: Option<&str>) -> syn::Result<(Vec<WireVariant<'a>>, String)> {
    let variants = e
        .variants
        .iter()
        .map(|variant| {
            let vs = serde_of(&variant.attrs)?;
            let key = variant_key(&variant.ident, &vs, rule);
            Ok((variant, vs, key))
        })
        .collect::<syn::Result<Vec<_>>>()?;
    let expected = variants
        .iter()
        .map(|(_, _, key)| key.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    Ok((variants, expected))
}

/// `{"tag": "variant", …fields}`: serde's `#[serde(tag = "…")]`.
fn internally_tagged(e: &syn::DataEnum, tag: &str, rule: Option<&str>, what: &str) -> syn::Result<Tokens> {
    let mut arms = Vec::new();
    let (variants, expected) = wire_variants(e, rule)?;
    for (variant, vs, key) in variants {
        let ident = &variant.ident;
        let build = match &variant.fields {
            Fields::Unit => quote! { Self::#ident },
            Fields::Named(fields) => named_fields(quote! { Self::#ident }, fields, vs.rename_all.as_deref(), false)?,
            Fields::Unnamed(fields) if fields.unnamed.len() == 1 => {
                quote! { Self::#ident(crate::decode::FromWire::from_wire(::serde_json::Value::Object(m))?) }
            }
            Fields::Unnamed(_) => {
                return Err(syn::Error::new_spanned(
                    variant,
                    "FromWire: a tuple variant cannot be internally tagged",
                ))
            }
        };
        arms.push(quote! { #key => Ok(#build), });
    }
    Ok(quote! {
        let mut m = crate::decode::object(v, #what)?;
        let tag: ::std::string::String = crate::decode::field(&mut m, #tag)?;
        match tag.as_str() {
            #(#arms)*
            other => Err(crate::decode::WireError::unknown(other, #expected).at(#tag)),
        }
    })
}

/// `"variant"` for a unit variant, `{"variant": value}` for the others: serde's default.
fn externally_tagged(e: &syn::DataEnum, rule: Option<&str>, what: &str) -> syn::Result<Tokens> {
    let mut units = Vec::new();
    let mut data = Vec::new();
    let (variants, expected) = wire_variants(e, rule)?;
    for (variant, vs, key) in variants {
        let ident = &variant.ident;
        match &variant.fields {
            Fields::Unit => {
                units.push(quote! { #key => Ok(Self::#ident), });
                data.push(quote! { #key => crate::decode::unit(v, #what).map(|()| Self::#ident), });
            }
            Fields::Named(fields) => {
                let build = named_fields(quote! { Self::#ident }, fields, vs.rename_all.as_deref(), false)?;
                data.push(quote! { #key => {
                    let mut m = crate::decode::object(v, #what)?;
                    Ok(#build)
                } });
            }
            Fields::Unnamed(fields) => {
                let build = tuple_fields(quote! { Self::#ident }, fields, what);
                data.push(quote! { #key => Ok(#build), });
            }
        }
    }
    Ok(quote! {
        match v {
            ::serde_json::Value::String(s) => match s.as_str() {
                #(#units)*
                other => Err(crate::decode::WireError::unknown(other, #expected)),
            },
            ::serde_json::Value::Object(m) if m.len() == 1 => {
                let Some((key, v)) = m.into_iter().next() else {
                    return Err(crate::decode::WireError::expected("one key", #what));
                };
                // A closure, so that a field's `?` inside comes back here to get the key.
                let read = || -> ::core::result::Result<Self, crate::decode::WireError> {
                    match key.as_str() {
                        #(#data)*
                        other => Err(crate::decode::WireError::unknown(other, #expected)),
                    }
                };
                read().map_err(|e| e.at(&key))
            }
            _ => Err(crate::decode::WireError::expected("a variant's name or an object with one key", #what)),
        }
    })
}
