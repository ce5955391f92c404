//! The signed-in account's role, for offering only what the account may do. The server puts it
//! on `<html data-role>` from the request (the guard found the session); the browser reads it
//! back at hydration, so both render the same controls. The server still checks every call.

use crate::domain::auth::Role;
use leptos::prelude::*;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RoleCtx(pub Option<Role>);

/// The role the page was rendered for (`None`: not signed in).
pub fn initial_role() -> Option<Role> {
    #[cfg(feature = "ssr")]
    {
        crate::api::service::caller_opt().map(|c| c.role)
    }
    #[cfg(all(feature = "hydrate", not(feature = "ssr")))]
    {
        web_sys::window()
            .and_then(|w| w.document())
            .and_then(|d| d.document_element())
            .and_then(|e| e.get_attribute("data-role"))
            .and_then(|r| r.parse().ok())
    }
    #[cfg(not(any(feature = "ssr", feature = "hydrate")))]
    {
        None
    }
}

/// Called once by the root component.
pub fn provide_role() {
    provide_context(RoleCtx(initial_role()));
}

/// Whether the signed-in account has at least `needed`.
pub fn can(needed: Role) -> bool {
    use_context::<RoleCtx>()
        .and_then(|r| r.0)
        .is_some_and(|r| r.allows(needed))
}
