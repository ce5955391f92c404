//! The profiles feature behind `ProfileService`; the editor of a change reads the change's
//! candidate text from review first.

use crate::api_error::internal;
use crate::changes::Changes;
use crate::profiles::{ProfileError, Profiles};
use app::api::service::BoxFut;
use app::api::{ApiError, EditorData, EditorHelp, FlagCheck, ProfileService, ProfileSummary, ProfileView};

pub struct Adapter {
    pub profiles: Profiles,
    pub changes: Changes,
}

/// Profile errors as the UI explains them.
pub fn error(e: ProfileError) -> ApiError {
    match e {
        ProfileError::NoSuchProfile(p) => ApiError::NoSuchProfile(p),
        ProfileError::Invalid(why) => ApiError::Invalid(why),
        ProfileError::Internal(e) => internal(e),
    }
}

impl ProfileService for Adapter {
    fn list(&self) -> BoxFut<'_, Result<Vec<ProfileSummary>, ApiError>> {
        Box::pin(async move { self.profiles.list().await.map_err(error) })
    }

    fn get(&self, name: String) -> BoxFut<'_, Result<ProfileView, ApiError>> {
        Box::pin(async move { self.profiles.view(&name).await.map_err(error) })
    }

    fn editor(&self, name: String, change: Option<i64>) -> BoxFut<'_, Result<EditorData, ApiError>> {
        Box::pin(async move {
            let candidate = match change {
                Some(id) => Some((
                    id,
                    self.changes
                        .candidate_env(id, &name)
                        .await
                        .map_err(super::changes::error)?,
                )),
                None => None,
            };
            self.profiles.editor(&name, candidate).await.map_err(error)
        })
    }

    fn editor_help(&self, install: String) -> BoxFut<'_, Result<EditorHelp, ApiError>> {
        Box::pin(async move { self.profiles.editor_help(&install).await.map_err(error) })
    }

    fn check_flags(&self, name: String, env_text: String) -> BoxFut<'_, Result<FlagCheck, ApiError>> {
        Box::pin(async move { self.profiles.check_flags(&name, &env_text).await.map_err(error) })
    }

    fn upgrade_check(
        &self,
        name: String,
        env_text: String,
    ) -> BoxFut<'_, Result<app::domain::upgrade::UpgradeCheck, ApiError>> {
        Box::pin(async move { self.profiles.upgrade_check(&name, &env_text).await.map_err(error) })
    }
}
