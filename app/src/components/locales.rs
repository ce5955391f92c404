//! The browser's messages: the `.ftl` text of one language, served beside the wasm bundle
//! (`locale-en.ftl`, `locale-ru.ftl` in the bundle's directory, cached for good in a release)
//! and fetched from the address the server wrote on `<html data-locales>`. The page's own
//! language is fetched before hydration (and preloaded by the page's head, beside the wasm);
//! the other only when the operator switches to it.

use crate::i18n::Lang;

/// Where a language's messages are served: `{base}/locale-{code}.ftl`, `base` being the
/// bundle's directory as the server wrote it.
pub fn url(base: &str, lang: Lang) -> String {
    format!("{}/locale-{}.ftl", base.trim_end_matches('/'), lang.code())
}

/// Loads `lang`'s messages once; `Err` names the address and what went wrong (the page then
/// shows message keys instead of text, and says why in the console).
#[cfg(feature = "hydrate")]
pub async fn load(lang: Lang) -> Result<(), String> {
    use wasm_bindgen::JsCast;
    if crate::i18n::installed(lang) {
        return Ok(());
    }
    let base = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.document_element())
        .and_then(|e| e.get_attribute("data-locales"))
        .ok_or("the page names no data-locales")?;
    let address = url(&base, lang);
    // The browser's own fetch (same-origin credentials, matching the head's preload), through
    // web-sys rather than a JS snippet: a snippet is one more file every page requests.
    let failed = |e: wasm_bindgen::JsValue| format!("{address}: {e:?}");
    let window = web_sys::window().ok_or("no window")?;
    let response: web_sys::Response = wasm_bindgen_futures::JsFuture::from(window.fetch_with_str(&address))
        .await
        .map_err(failed)?
        .dyn_into()
        .map_err(failed)?;
    if !response.ok() {
        return Err(format!("{address}: HTTP {}", response.status()));
    }
    let text = wasm_bindgen_futures::JsFuture::from(response.text().map_err(failed)?)
        .await
        .map_err(failed)?
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
