//! The browser's messages: the `.ftl` text of one language, served beside the wasm bundle
//! (`locale-en.ftl`, `locale-ru.ftl` in the bundle's directory, cached for good in a release)
//! and fetched from the address the server wrote on `<html data-locales>`. The page's own
//! language is fetched before hydration (and preloaded by the page's head, beside the wasm);
//! the other only when the operator switches to it.

use crate::i18n::Lang;

#[cfg(feature = "hydrate")]
mod glue {
    use wasm_bindgen::prelude::*;

    #[wasm_bindgen(inline_js = r#"
export function rl_fetch_text(url) {
  return fetch(url, { credentials: 'same-origin' }).then((r) => {
    if (!r.ok) throw new Error(url + ': HTTP ' + r.status);
    return r.text();
  });
}
"#)]
    extern "C" {
        pub fn rl_fetch_text(url: &str) -> js_sys::Promise;
    }
}

/// Where a language's messages are served: `{base}/locale-{code}.ftl`, `base` being the
/// bundle's directory as the server wrote it.
pub fn url(base: &str, lang: Lang) -> String {
    format!("{}/locale-{}.ftl", base.trim_end_matches('/'), lang.code())
}

/// Loads `lang`'s messages once; `Err` names the address and what went wrong (the page then
/// shows message keys instead of text, and says why in the console).
#[cfg(feature = "hydrate")]
pub async fn load(lang: Lang) -> Result<(), String> {
    if crate::i18n::installed(lang) {
        return Ok(());
    }
    let base = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.document_element())
        .and_then(|e| e.get_attribute("data-locales"))
        .ok_or("the page names no data-locales")?;
    let address = url(&base, lang);
    let text = wasm_bindgen_futures::JsFuture::from(glue::rl_fetch_text(&address))
        .await
        .map_err(|e| format!("{address}: {e:?}"))?
        .as_string()
        .ok_or_else(|| format!("{address}: not text"))?;
    crate::i18n::install(lang, &text);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_language_has_its_address_in_the_bundle_directory() {
        assert_eq!(url("/pkg/3f9c", Lang::Ru), "/pkg/3f9c/locale-ru.ftl");
        assert_eq!(url("/pkg/", Lang::En), "/pkg/locale-en.ftl");
    }
}
