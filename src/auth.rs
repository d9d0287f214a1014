//! Identity and permissions: users, API tokens, teams, and the `Caller` every service call
//! receives.
//!
//! Tokens are random (two v4 UUIDs, 244 random bits), shown once and stored only as their
//! SHA-256, so a copy of the store gives no usable token. Users, tokens and teams are small
//! documents (`Store::put_doc`), the same on both stores. A request resolves its token, the
//! user and the user's teams once, into a `Caller` holding the permission per datastore.
//!
//! # How it fits
//!
//! Identity. `Auth` turns a `Bearer`/`Token` header into a `Caller`: the token's SHA-256 finds its `Token` document,
//! then the `User` and the `Team`s it belongs to. `Caller` holds the user, the `Role` (`ADMIN`, `MANAGER`, `MEMBER`),
//! whether it is an unrestricted admin, and the best `Permission` (`REPORTER` < `VIEWER` < `EDITOR`) per datastore;
//! `require`, `require_admin` and `require_unrestricted_admin` return `Forbidden` with the reason. `Caller::system()`
//! is the unrestricted admin of auth off and of replay. Users, tokens and teams are small JSON documents
//! (`Store::put_doc`, kinds `user`, `token`, `team`), the same on both stores and exported with the rest.
//! `ensure_first_admin` makes `admin` on a store with no users.

use std::collections::HashMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::domain::{Id, Timestamp};
use crate::error::{Error, Result};
use crate::store::Store;

const USER: &str = "user";
const TOKEN: &str = "token";
const TEAM: &str = "team";
/// `last_used` is written at most this often per token, so reads do not each cost a write.
const TOUCH_EVERY_SECS: i64 = 60;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Role {
    Member,
    Manager,
    Admin,
}

impl Role {
    pub fn parse(s: &str) -> Option<Role> {
        match s.to_ascii_uppercase().as_str() {
            "ADMIN" => Some(Role::Admin),
            "MANAGER" => Some(Role::Manager),
            "MEMBER" => Some(Role::Member),
            _ => None,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Admin => "ADMIN",
            Role::Manager => "MANAGER",
            Role::Member => "MEMBER",
        }
    }
}

/// A team's permission on a datastore; a higher one includes the lower.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Permission {
    Reporter,
    Viewer,
    Editor,
}

impl Permission {
    pub fn as_str(self) -> &'static str {
        match self {
            Permission::Reporter => "REPORTER",
            Permission::Viewer => "VIEWER",
            Permission::Editor => "EDITOR",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct User {
    pub name: String,
    pub role: Role,
    /// An admin restricted to this team follows its permissions.
    pub team: Option<String>,
    pub created: Timestamp,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Token {
    pub user: String,
    /// The first characters, to tell tokens apart in `token list`.
    pub prefix: String,
    pub created: Timestamp,
    pub last_used: Option<Timestamp>,
    pub revoked_at: Option<Timestamp>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TeamPermission {
    pub datastore_id: Id,
    pub permission: Permission,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Team {
    pub name: String,
    pub members: Vec<String>,
    pub permissions: Vec<TeamPermission>,
}

/// Who is asking, with what they may do. Resolved once per request.
#[derive(Debug, Clone, PartialEq)]
pub struct Caller {
    pub user: String,
    pub role: Role,
    /// An admin not restricted to a team: may do everything, always sees evidence details.
    pub unrestricted_admin: bool,
    /// The best permission of the caller's teams, per datastore.
    pub permissions: HashMap<Id, Permission>,
}

impl Caller {
    /// Acts as an unrestricted admin (auth off, replay, internal work).
    pub fn system() -> Self {
        Caller { user: "system".into(), role: Role::Admin, unrestricted_admin: true, permissions: HashMap::new() }
    }

    pub fn is_admin(&self) -> bool {
        self.role == Role::Admin
    }

    pub fn has(&self, datastore: Id, needed: Permission) -> bool {
        self.unrestricted_admin || self.permissions.get(&datastore).is_some_and(|p| *p >= needed)
    }

    /// `Forbidden` unless the caller has `needed` on every listed datastore.
    pub fn require(&self, datastores: impl IntoIterator<Item = Id>, needed: Permission, action: &str) -> Result<()> {
        let mut missing: Vec<Id> = datastores.into_iter().filter(|d| !self.has(*d, needed)).collect();
        if missing.is_empty() {
            return Ok(());
        }
        missing.sort_unstable();
        missing.dedup();
        let list = missing.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(", ");
        Err(Error::Forbidden(format!("{action} needs the {} permission on datastore {list}", needed.as_str())))
    }

    pub fn require_admin(&self, action: &str) -> Result<()> {
        if self.is_admin() {
            Ok(())
        } else {
            Err(Error::Forbidden(format!("{action} needs the ADMIN role")))
        }
    }

    pub fn require_unrestricted_admin(&self, action: &str) -> Result<()> {
        if self.unrestricted_admin {
            Ok(())
        } else {
            Err(Error::Forbidden(format!("{action} needs an ADMIN not restricted to a team")))
        }
    }
}

pub fn hash_token(token: &str) -> String {
    Sha256::digest(token.trim().as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

fn new_token() -> String {
    format!("trb_{}{}", uuid::Uuid::new_v4().simple(), uuid::Uuid::new_v4().simple())
}

fn decode<T: for<'de> Deserialize<'de>>(v: serde_json::Value) -> Result<T> {
    serde_json::from_value(v).map_err(|e| Error::Internal(format!("stored identity document is malformed: {e}")))
}

fn encode<T: Serialize>(v: &T) -> Result<serde_json::Value> {
    serde_json::to_value(v).map_err(|e| Error::Internal(e.to_string()))
}

/// The credentials in an `Authorization` header: `Bearer <token>` or `Token <token>`.
pub fn token_from_header(header: Option<&str>) -> Option<&str> {
    let h = header?.trim();
    let (scheme, rest) = h.split_once(' ')?;
    (scheme.eq_ignore_ascii_case("bearer") || scheme.eq_ignore_ascii_case("token"))
        .then(|| rest.trim())
        .filter(|t| !t.is_empty())
}

/// Why a header gave no token: none sent, or a token sent without its scheme (`trb_...` alone,
/// the commonest slip), or an unknown scheme.
fn missing_token_message(header: Option<&str>) -> String {
    const HOW: &str = "send `Authorization: Bearer <token>` (or `Token <token>`)";
    match header.map(str::trim).filter(|h| !h.is_empty()) {
        None => format!("missing API token: {HOW}"),
        Some(h) if !h.contains(' ') => {
            format!("the Authorization header has a token but no scheme: {HOW}, with `Bearer ` before the token")
        }
        Some(h) => {
            let scheme = h.split_whitespace().next().unwrap_or("");
            format!("missing API token: the Authorization scheme {scheme:?} is not one Tributary takes; {HOW}")
        }
    }
}

#[derive(Clone)]
pub struct Auth {
    store: Arc<dyn Store>,
    /// Off only for a local trial (`TRIBUTARY_AUTH=off`): everyone is an unrestricted admin.
    pub enabled: bool,
}

impl Auth {
    pub fn new(store: Arc<dyn Store>, enabled: bool) -> Self {
        Auth { store, enabled }
    }

    /// Resolves the `Authorization` header to a caller; `Unauthenticated` when missing or unknown.
    pub async fn authenticate(&self, header: Option<&str>) -> Result<Caller> {
        if !self.enabled {
            return Ok(Caller::system());
        }
        let Some(token) = token_from_header(header) else {
            return Err(Error::Unauthenticated(missing_token_message(header)));
        };
        let hash = hash_token(token);
        let invalid = || Error::Unauthenticated("invalid or revoked API token".into());
        let Some(doc) = self.store.get_doc(TOKEN, &hash).await? else { return Err(invalid()) };
        let mut t: Token = decode(doc)?;
        if t.revoked_at.is_some() {
            return Err(invalid());
        }
        let Some(user) = self.store.get_doc(USER, &t.user).await? else { return Err(invalid()) };
        let user: User = decode(user)?;
        let now = crate::domain::now();
        if t.last_used.is_none_or(|u| (now - u).num_seconds() >= TOUCH_EVERY_SECS) {
            t.last_used = Some(now);
            if let Err(e) = self.store.put_doc(TOKEN, &hash, encode(&t)?).await {
                tracing::warn!(error = %e, user = %t.user, "could not record a token's last use");
            }
        }
        self.caller_for(user).await
    }

    async fn caller_for(&self, user: User) -> Result<Caller> {
        let unrestricted_admin = user.role == Role::Admin && user.team.is_none();
        let mut permissions: HashMap<Id, Permission> = HashMap::new();
        if !unrestricted_admin {
            for team in self.teams().await? {
                let member = team.members.iter().any(|m| m == &user.name) || user.team.as_deref() == Some(&team.name);
                if !member {
                    continue;
                }
                for p in team.permissions {
                    let e = permissions.entry(p.datastore_id).or_insert(p.permission);
                    *e = (*e).max(p.permission);
                }
            }
        }
        Ok(Caller { user: user.name, role: user.role, unrestricted_admin, permissions })
    }

    /// Creates or updates the user and returns a new token for it (shown once).
    pub async fn create_token(&self, user: &str, role: Role, team: Option<String>) -> Result<String> {
        let user = user.trim();
        if user.is_empty() || user.len() > 200 {
            return Err(Error::BadInput("the user name must be 1 to 200 characters".into()));
        }
        if team.is_some() && role != Role::Admin {
            return Err(Error::BadInput(
                "--team restricts an ADMIN; other roles get permissions as team members".into(),
            ));
        }
        let now = crate::domain::now();
        let created = match self.store.get_doc(USER, user).await? {
            Some(existing) => decode::<User>(existing)?.created,
            None => now,
        };
        let u = User { name: user.to_string(), role, team, created };
        self.store.put_doc(USER, user, encode(&u)?).await?;
        let token = new_token();
        let t = Token {
            user: user.to_string(),
            prefix: token[..8].to_string(),
            created: now,
            last_used: None,
            revoked_at: None,
        };
        self.store.put_doc(TOKEN, &hash_token(&token), encode(&t)?).await?;
        tracing::info!(user, role = role.as_str(), "API token created");
        Ok(token)
    }

    /// Revokes every token of the user at once; returns how many.
    pub async fn revoke(&self, user: &str) -> Result<usize> {
        let now = crate::domain::now();
        let mut n = 0;
        for (hash, doc) in self.store.list_docs(TOKEN).await? {
            let mut t: Token = decode(doc)?;
            if t.user == user && t.revoked_at.is_none() {
                t.revoked_at = Some(now);
                self.store.put_doc(TOKEN, &hash, encode(&t)?).await?;
                n += 1;
            }
        }
        Ok(n)
    }

    pub async fn tokens(&self) -> Result<Vec<Token>> {
        let mut out: Vec<Token> =
            self.store.list_docs(TOKEN).await?.into_iter().map(|(_, d)| decode(d)).collect::<Result<_>>()?;
        out.sort_by(|a, b| (&a.user, a.created).cmp(&(&b.user, b.created)));
        Ok(out)
    }

    pub async fn users(&self) -> Result<Vec<User>> {
        self.store.list_docs(USER).await?.into_iter().map(|(_, d)| decode(d)).collect()
    }

    pub async fn teams(&self) -> Result<Vec<Team>> {
        self.store.list_docs(TEAM).await?.into_iter().map(|(_, d)| decode(d)).collect()
    }

    pub async fn upsert_team(&self, caller: &Caller, team: Team) -> Result<Team> {
        caller.require_admin("upsertTeam")?;
        let name = team.name.trim();
        if name.is_empty() || name.len() > 200 {
            return Err(Error::BadInput("the team name must be 1 to 200 characters".into()));
        }
        let existing =
            self.store.datastores_by_ids(&team.permissions.iter().map(|p| p.datastore_id).collect::<Vec<_>>()).await?;
        for p in &team.permissions {
            if !existing.iter().any(|d| d.id == p.datastore_id) {
                return Err(Error::NotFound(format!("Datastore {} not found", p.datastore_id)));
            }
        }
        // An admin restricted to a team cannot grant more than it holds itself.
        for p in &team.permissions {
            caller.require([p.datastore_id], p.permission, "granting a permission")?;
        }
        let team = Team { name: name.to_string(), ..team };
        self.store.put_doc(TEAM, &team.name, encode(&team)?).await?;
        Ok(team)
    }

    /// On a store with no users: creates the admin `admin` and returns its token (shown once).
    pub async fn ensure_first_admin(&self) -> Result<Option<String>> {
        if !self.store.list_docs(USER).await?.is_empty() {
            return Ok(None);
        }
        Ok(Some(self.create_token("admin", Role::Admin, None).await?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_forms() {
        assert_eq!(token_from_header(Some("Bearer abc")), Some("abc"));
        assert_eq!(token_from_header(Some("token  abc ")), Some("abc"));
        assert_eq!(token_from_header(Some("Basic abc")), None);
        assert_eq!(token_from_header(Some("Bearer ")), None);
        assert_eq!(token_from_header(None), None);
    }

    #[test]
    fn a_token_without_its_scheme_is_named_as_such() {
        assert!(missing_token_message(None).starts_with("missing API token"));
        assert!(missing_token_message(Some("  ")).starts_with("missing API token"));
        let m = missing_token_message(Some("trb_0123abcd"));
        assert!(m.contains("no scheme") && m.contains("Bearer"), "{m}");
        let m = missing_token_message(Some("Basic abc"));
        assert!(m.contains("\"Basic\"") && m.contains("Bearer"), "{m}");
    }

    #[test]
    fn permissions_order_and_admins() {
        assert!(Permission::Editor > Permission::Viewer && Permission::Viewer > Permission::Reporter);
        let c = Caller {
            user: "u".into(),
            role: Role::Member,
            unrestricted_admin: false,
            permissions: HashMap::from([(1, Permission::Viewer)]),
        };
        assert!(c.has(1, Permission::Reporter) && c.has(1, Permission::Viewer) && !c.has(1, Permission::Editor));
        assert!(!c.has(2, Permission::Reporter));
        assert!(c.require([1], Permission::Editor, "x").is_err());
        assert!(Caller::system().has(99, Permission::Editor));
    }

    #[test]
    fn tokens_are_random_and_hashed() {
        let (a, b) = (new_token(), new_token());
        assert_ne!(a, b);
        assert_eq!(hash_token(&a).len(), 64);
        assert_ne!(hash_token(&a), a);
    }
}
