//! ServiceAccount tokens: JWTs the cluster signs (ES256, as kube-apiserver does with an ECDSA
//! `--service-account-signing-key-file`) for `TokenRequest`, and their check on every request
//! that carries one, as kube's service account token authenticator does it: the signature, the
//! time window, the audience, and that the ServiceAccount (and the object the token is bound to)
//! still exists with the UID the token names.

use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::auth::UserInfo;
use crate::store::{Key, State};

/// The issuer, and the audience a token gets when its request names none (kube-apiserver's
/// `--service-account-issuer` and `--api-audiences` default on kind, kubeadm and most clusters).
pub const ISSUER: &str = "https://kubernetes.default.svc.cluster.local";

/// A name and UID in the `kubernetes.io` claim.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Ref {
    /// The object's name.
    pub name: String,
    /// The object's UID.
    pub uid: String,
}

/// The private `kubernetes.io` claim: whose token it is and what it is bound to.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct KubernetesClaim {
    namespace: String,
    serviceaccount: Ref,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pod: Option<Ref>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    secret: Option<Ref>,
}

#[derive(Debug, Serialize, Deserialize)]
struct Claims {
    aud: Vec<String>,
    exp: i64,
    iat: i64,
    nbf: i64,
    iss: String,
    jti: String,
    sub: String,
    #[serde(rename = "kubernetes.io")]
    kubernetes: KubernetesClaim,
}

/// What a token is bound to besides its ServiceAccount (`spec.boundObjectRef`).
#[derive(Debug, Clone)]
pub enum Binding {
    /// Valid while this Pod exists.
    Pod(Ref),
    /// Valid while this Secret exists.
    Secret(Ref),
}

/// What to issue a token for.
pub struct Grant<'a> {
    /// The ServiceAccount's namespace.
    pub namespace: &'a str,
    /// The ServiceAccount.
    pub account: Ref,
    /// The audiences (`spec.audiences`, the issuer when empty).
    pub audiences: Vec<String>,
    /// How long it is valid.
    pub seconds: i64,
    /// The object it is bound to.
    pub binding: Option<Binding>,
}

/// Signs and checks ServiceAccount tokens with the cluster's key.
pub struct TokenIssuer {
    encoding: EncodingKey,
    decoding: DecodingKey,
}

impl TokenIssuer {
    /// An issuer with a fresh P-256 key.
    ///
    /// # Errors
    /// When the key cannot be made.
    pub fn generate() -> Result<Self, String> {
        let key = rcgen::KeyPair::generate().map_err(|e| e.to_string())?;
        Ok(Self {
            encoding: EncodingKey::from_ec_der(&key.serialize_der()),
            decoding: DecodingKey::from_ec_der(key.public_key_raw()),
        })
    }

    /// A signed token for `grant`, issued now, and when it expires (Unix seconds).
    ///
    /// # Errors
    /// When signing fails.
    pub fn issue(&self, grant: Grant<'_>) -> Result<(String, i64), String> {
        let now = crate::meta::now_secs();
        let (pod, secret) = match grant.binding {
            Some(Binding::Pod(pod)) => (Some(pod), None),
            Some(Binding::Secret(secret)) => (None, Some(secret)),
            None => (None, None),
        };
        let claims = Claims {
            aud: if grant.audiences.is_empty() {
                vec![ISSUER.to_string()]
            } else {
                grant.audiences
            },
            exp: now + grant.seconds,
            iat: now,
            nbf: now,
            iss: ISSUER.to_string(),
            jti: crate::meta::uid(),
            sub: service_account_user(grant.namespace, &grant.account.name),
            kubernetes: KubernetesClaim {
                namespace: grant.namespace.to_string(),
                serviceaccount: grant.account,
                pod,
                secret,
            },
        };
        let token = jsonwebtoken::encode(&Header::new(Algorithm::ES256), &claims, &self.encoding)
            .map_err(|e| e.to_string())?;
        Ok((token, claims.exp))
    }

    /// The user `token` authenticates for one of `audiences` (the issuer when empty), checked
    /// against the objects in `state`. `Ok(None)` when it is not a token of this issuer (other
    /// authenticators may know it); `Err` with kube's reason when it is one, but no longer valid.
    ///
    /// # Errors
    /// An expired token, one for other audiences, or one whose ServiceAccount or bound object
    /// is gone or was recreated.
    pub fn verify(
        &self,
        token: &str,
        audiences: &[String],
        state: &State,
    ) -> Result<Option<(UserInfo, Vec<String>)>, String> {
        let mut validation = Validation::new(Algorithm::ES256);
        validation.set_issuer(&[ISSUER]);
        validation.leeway = 0;
        validation.validate_nbf = true;
        validation.validate_aud = false;
        let claims = match jsonwebtoken::decode::<Claims>(token, &self.decoding, &validation) {
            Ok(data) => data.claims,
            Err(e) => {
                return match e.kind() {
                    jsonwebtoken::errors::ErrorKind::ExpiredSignature => {
                        Err("service account token has expired".to_string())
                    }
                    _ => Ok(None),
                };
            }
        };
        let wanted: Vec<String> = if audiences.is_empty() {
            vec![ISSUER.to_string()]
        } else {
            audiences.to_vec()
        };
        let matched: Vec<String> = claims
            .aud
            .iter()
            .filter(|a| wanted.contains(a))
            .cloned()
            .collect();
        if matched.is_empty() {
            return Err("token audiences is invalid for the target audiences".to_string());
        }
        let kube = &claims.kubernetes;
        check_exists(
            state,
            "serviceaccounts",
            &kube.namespace,
            &kube.serviceaccount,
        )?;
        let mut user = UserInfo::new(
            &claims.sub,
            &[
                "system:serviceaccounts",
                &format!("system:serviceaccounts:{}", kube.namespace),
            ],
        );
        user.uid = kube.serviceaccount.uid.clone();
        user.extra.insert(
            crate::auth::CREDENTIAL_ID.into(),
            vec![format!("JTI={}", claims.jti)],
        );
        if let Some(pod) = &kube.pod {
            check_exists(state, "pods", &kube.namespace, pod)?;
            user.extra.insert(
                "authentication.kubernetes.io/pod-name".into(),
                vec![pod.name.clone()],
            );
            user.extra.insert(
                "authentication.kubernetes.io/pod-uid".into(),
                vec![pod.uid.clone()],
            );
        }
        if let Some(secret) = &kube.secret {
            check_exists(state, "secrets", &kube.namespace, secret)?;
        }
        Ok(Some((user, matched)))
    }
}

/// The user name of a ServiceAccount.
pub fn service_account_user(namespace: &str, name: &str) -> String {
    format!("system:serviceaccount:{namespace}:{name}")
}

/// The object `resource` `reference` in `namespace`, if it exists with the UID given.
fn check_exists(
    state: &State,
    resource: &str,
    namespace: &str,
    reference: &Ref,
) -> Result<(), String> {
    let live = lookup(state, resource, namespace, &reference.name);
    match live.and_then(|o| o["metadata"]["uid"].as_str()) {
        Some(uid) if uid == reference.uid => Ok(()),
        Some(uid) => Err(format!(
            "{resource} {}/{} has been deleted and recreated: the token's UID {} is not {uid}",
            namespace, reference.name, reference.uid
        )),
        None => Err(format!("{resource} \"{}\" not found", reference.name)),
    }
}

/// The core-group object `resource` `name` in `namespace`.
pub fn lookup<'a>(
    state: &'a State,
    resource: &str,
    namespace: &str,
    name: &str,
) -> Option<&'a Value> {
    state.get(&Key::of("", resource, namespace, name))
}
