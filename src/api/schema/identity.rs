//! Identity: the `Permission` and `Role` enums, teams, and `Me` (the caller's own rights).

use async_graphql::{Enum, InputObject, SimpleObject};

use crate::domain::Id;

// `remote` (here and on `Role`): async-graphql writes the `From` conversions to and from the
// `auth` enum, variant by variant.
#[derive(Enum, Copy, Clone, Eq, PartialEq, Debug)]
#[graphql(name = "Permission", remote = "crate::auth::Permission")]
pub enum PermissionLevel {
    Reporter,
    Viewer,
    Editor,
}

#[derive(Enum, Copy, Clone, Eq, PartialEq, Debug)]
#[graphql(remote = "crate::auth::Role")]
pub enum Role {
    Admin,
    Manager,
    Member,
}

#[derive(SimpleObject, InputObject, Clone)]
#[graphql(input_name = "DatastorePermissionInput")]
pub struct DatastorePermission {
    pub datastore_id: Id,
    pub permission: PermissionLevel,
}

#[derive(SimpleObject)]
pub struct Team {
    pub name: String,
    pub members: Vec<String>,
    pub permissions: Vec<DatastorePermission>,
}

impl From<crate::auth::Team> for Team {
    fn from(t: crate::auth::Team) -> Self {
        Team {
            name: t.name,
            members: t.members,
            permissions: t
                .permissions
                .into_iter()
                .map(|p| DatastorePermission { datastore_id: p.datastore_id, permission: p.permission.into() })
                .collect(),
        }
    }
}

/// The caller's own identity and rights.
#[derive(SimpleObject)]
pub struct Me {
    pub user: String,
    pub role: Role,
    pub unrestricted_admin: bool,
    /// The caller's permission per datastore (empty for an unrestricted admin, who has all).
    pub permissions: Vec<DatastorePermission>,
}
