//! Authentication as kube-apiserver does it: the admin token the kubeconfig carries, static
//! token users, anonymous requests, client certificates signed by the cluster's CA (real
//! kubectl over TLS), and ServiceAccount tokens from TokenRequest, checked by TokenReview and
//! revoked with their account or bound Pod.

#[allow(
    dead_code,
    reason = "each test crate uses a part of the shared fixture"
)]
use crate::common;

use common::http::json;
use common::{Kubectl, path};
use krt_sim::api::UserInfo;
use krt_sim::{Credential, Sim, SimConfig, StaticToken};
use serde_json::{Value, json};

const WHOAMI: &str = "/apis/authentication.k8s.io/v1/selfsubjectreviews";
const REVIEW: &str = "/apis/authentication.k8s.io/v1/tokenreviews";
/// `kubectl auth whoami`, printing JSON.
const WHOAMI_JSON: &[&str] = &["auth", "whoami", "-o", "json"];

fn whoami_body() -> Value {
    json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"})
}

/// The `status.userInfo` a SelfSubjectReview answers for `token`.
async fn whoami(sim: &Sim, token: Option<&str>) -> (u16, Value) {
    let (code, body) = json(sim, "POST", WHOAMI, token, Some(&whoami_body())).await;
    (code, body["status"]["userInfo"].clone())
}

async fn start(config: SimConfig) -> Sim {
    Sim::start_with(config).await.expect("sim starts")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_name_their_users_and_a_wrong_one_is_unauthorized() {
    let jane = StaticToken {
        token: "jane-token".into(),
        user: UserInfo::new("jane", &["dev", "qa"]),
    };
    let sim = start(SimConfig {
        users: vec![jane],
        ..SimConfig::default()
    })
    .await;
    assert!(
        sim.kubeconfig_yaml()
            .contains(&format!("token: {}", sim.admin_token())),
        "{}",
        sim.kubeconfig_yaml()
    );
    assert_eq!(sim.admin_token().len(), 32, "128 random bits in hex");

    let (code, admin) = whoami(&sim, Some(sim.admin_token())).await;
    assert_eq!(code, 201);
    assert_eq!(
        admin,
        json!({"username": "krt-sim-admin", "groups": ["system:masters", "system:authenticated"]})
    );
    let (_, jane) = whoami(&sim, Some("jane-token")).await;
    assert_eq!(
        jane,
        json!({"username": "jane", "groups": ["dev", "qa", "system:authenticated"]})
    );
    let (code, anonymous) = json(&sim, "POST", WHOAMI, None, Some(&whoami_body())).await;
    assert_eq!(
        code, 403,
        "system:basic-user lets only authenticated users ask who they are"
    );
    assert_eq!(
        anonymous["message"],
        "selfsubjectreviews.authentication.k8s.io is forbidden: User \"system:anonymous\" cannot create resource \"selfsubjectreviews\" in API group \"authentication.k8s.io\" at the cluster scope"
    );

    let (code, status) = json(&sim, "POST", WHOAMI, Some("nope"), Some(&whoami_body())).await;
    assert_eq!(code, 401);
    assert_eq!(
        (&status["kind"], &status["reason"], &status["message"]),
        (
            &json!("Status"),
            &json!("Unauthorized"),
            &json!("Unauthorized")
        )
    );
    let (code, _) = json(&sim, "GET", "/api/v1/namespaces", Some("nope"), None).await;
    assert_eq!(code, 401, "a wrong token is refused whatever it asks");
    sim.shutdown().await;

    let closed = start(SimConfig {
        anonymous: false,
        token: Some("fixed".into()),
        ..SimConfig::default()
    })
    .await;
    assert_eq!(closed.admin_token(), "fixed");
    let (code, _) = whoami(&closed, None).await;
    assert_eq!(
        code, 401,
        "without anonymous access, no credentials is a 401"
    );
    let (code, _) = whoami(&closed, Some("fixed")).await;
    assert_eq!(code, 201);
    closed.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_authenticates_with_a_client_certificate_of_the_clusters_ca() {
    let sim = start(SimConfig {
        tls: true,
        ..SimConfig::default()
    })
    .await;
    let k = Kubectl::new(&sim);
    let admin = k.json(WHOAMI_JSON);
    assert_eq!(admin["status"]["userInfo"]["username"], "krt-sim-admin");

    let cert = sim
        .client_certificate("jane", Some("dev"))
        .expect("a client certificate");
    // kube's x509 authenticator names the credential: the certificate's SHA-256.
    let der = base64::Engine::decode(
        &base64::engine::general_purpose::STANDARD,
        cert.cert_pem
            .lines()
            .filter(|l| !l.starts_with("-----"))
            .collect::<String>(),
    )
    .expect("a PEM certificate");
    let fingerprint: String = sha2::Digest::finalize(sha2::Digest::chain_update(
        <sha2::Sha256 as sha2::Digest>::new(),
        &der,
    ))
    .iter()
    .map(|b| format!("{b:02x}"))
    .collect();
    let jane = k.as_user(&sim, "jane", &Credential::Certificate(cert));
    let jane = jane.json(WHOAMI_JSON);
    assert_eq!(
        jane["status"]["userInfo"],
        json!({"username": "jane", "groups": ["dev", "system:authenticated"],
            "extra": {"authentication.kubernetes.io/credential-id": [format!("X509SHA256={fingerprint}")]}})
    );

    let other = start(SimConfig {
        tls: true,
        ..SimConfig::default()
    })
    .await;
    let foreign = other
        .client_certificate("mallory", Some("system:masters"))
        .expect("cert");
    let mallory = k.as_user(&sim, "mallory", &Credential::Certificate(foreign));
    let refused = mallory.run(&["auth", "whoami"]);
    assert!(
        !refused.status.success(),
        "a certificate of another CA is refused"
    );
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("certificate") || stderr.contains("tls"),
        "the TLS handshake fails: {stderr}"
    );
    sim.shutdown().await;
    other.shutdown().await;
}

/// Creates what `objects` lists as the admin, each answered 201.
async fn create(sim: &Sim, objects: &[(&str, Value)]) -> Vec<Value> {
    let mut created = Vec::new();
    for (path, object) in objects {
        let (code, body) = json(sim, "POST", path, Some(sim.admin_token()), Some(object)).await;
        assert_eq!(code, 201, "{path}: {body}");
        created.push(body);
    }
    created
}

const SA: &str = "/api/v1/namespaces/default/serviceaccounts";

/// Asks, as the admin of `sim`, for a token of the default namespace's `account` lasting
/// `seconds`, bound to `bound`; answers the code and the answer.
async fn request_token(
    sim: &Sim,
    account: &str,
    seconds: i64,
    bound: Option<Value>,
) -> (u16, Value) {
    let mut spec = json!({"expirationSeconds": seconds});
    if let Some(bound) = bound {
        spec["boundObjectRef"] = bound;
    }
    let body =
        json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": spec});
    let path = format!("{SA}/{account}/token");
    json(sim, "POST", &path, Some(sim.admin_token()), Some(&body)).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn service_account_tokens_live_as_long_as_their_account_and_bound_pod() {
    let sim = start(SimConfig::default()).await;
    let admin = Some(sim.admin_token().to_string());
    let admin = admin.as_deref();
    let created = create(
        &sim,
        &[
            (SA, json!({"metadata": {"name": "deployer"}})),
            (
                "/api/v1/namespaces/default/pods",
                json!({"metadata": {"name": "runner"},
                    "spec": {"containers": [{"name": "c", "image": "busybox"}]}}),
            ),
        ],
    )
    .await;
    let account_uid = created[0]["metadata"]["uid"].as_str().unwrap().to_string();
    let pod_uid = created[1]["metadata"]["uid"].as_str().unwrap().to_string();

    let (code, issued) = request_token(&sim, "deployer", 3600, None).await;
    assert_eq!(code, 201, "{issued}");
    assert_eq!(issued["kind"], "TokenRequest");
    assert_eq!(
        issued["spec"]["audiences"],
        json!(["https://kubernetes.default.svc.cluster.local"])
    );
    let token = issued["status"]["token"].as_str().unwrap().to_string();
    assert_eq!(token.split('.').count(), 3, "a JWT: {token}");
    assert!(
        issued["status"]["expirationTimestamp"]
            .as_str()
            .unwrap()
            .ends_with('Z')
    );

    let (code, user) = whoami(&sim, Some(&token)).await;
    assert_eq!(code, 201);
    assert_eq!(user["username"], "system:serviceaccount:default:deployer");
    assert_eq!(user["uid"], account_uid.as_str());
    assert_eq!(
        user["groups"],
        json!([
            "system:serviceaccounts",
            "system:serviceaccounts:default",
            "system:authenticated"
        ])
    );
    let credential = user["extra"]["authentication.kubernetes.io/credential-id"][0]
        .as_str()
        .unwrap();
    assert!(credential.starts_with("JTI="), "{credential}");

    let review = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
        "spec": {"token": token}});
    let (code, reviewed) = json(&sim, "POST", REVIEW, admin, Some(&review)).await;
    assert_eq!(code, 201);
    assert_eq!(reviewed["status"]["authenticated"], true);
    assert_eq!(reviewed["status"]["user"], user);
    let elsewhere = json!({"spec": {"token": token, "audiences": ["vault"]}});
    let (_, reviewed) = json(&sim, "POST", REVIEW, admin, Some(&elsewhere)).await;
    assert_eq!(reviewed["status"]["authenticated"], Value::Null);
    assert_eq!(
        reviewed["status"]["error"],
        "token audiences is invalid for the target audiences"
    );

    let (code, short) = request_token(&sim, "deployer", 60, None).await;
    assert_eq!(code, 422);
    assert_eq!(
        short["message"],
        "TokenRequest.authentication.k8s.io \"deployer\" is invalid: spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes"
    );
    let (code, missing) = request_token(&sim, "nobody", 3600, None).await;
    assert_eq!(
        (code, missing["message"].as_str()),
        (404, Some("serviceaccounts \"nobody\" not found"))
    );

    let bound = json!({"kind": "Pod", "apiVersion": "v1", "name": "runner", "uid": pod_uid});
    let (_, issued) = request_token(&sim, "deployer", 3600, Some(bound)).await;
    let pod_token = issued["status"]["token"].as_str().unwrap().to_string();
    let (code, user) = whoami(&sim, Some(&pod_token)).await;
    assert_eq!(code, 201);
    assert_eq!(
        user["extra"]["authentication.kubernetes.io/pod-name"],
        json!(["runner"])
    );
    let wrong = json!({"kind": "Pod", "apiVersion": "v1", "name": "runner", "uid": "not-its-uid"});
    let (code, _) = request_token(&sim, "deployer", 3600, Some(wrong)).await;
    assert_eq!(
        code, 409,
        "a bound object reference must name the live object's UID"
    );

    let pod = "/api/v1/namespaces/default/pods/runner?gracePeriodSeconds=0";
    let (code, _) = json(&sim, "DELETE", pod, admin, None).await;
    assert_eq!(code, 200);
    assert_eq!(
        whoami(&sim, Some(&pod_token)).await.0,
        401,
        "the bound Pod is gone"
    );
    assert_eq!(
        whoami(&sim, Some(&token)).await.0,
        201,
        "the unbound token still works"
    );

    let (code, _) = json(&sim, "DELETE", &format!("{SA}/deployer"), admin, None).await;
    assert_eq!(code, 200);
    assert_eq!(
        whoami(&sim, Some(&token)).await.0,
        401,
        "its account is gone"
    );
    let (_, reviewed) = json(&sim, "POST", REVIEW, admin, Some(&review)).await;
    assert_eq!(
        reviewed["status"]["error"],
        "serviceaccounts \"deployer\" not found"
    );

    create(&sim, &[(SA, json!({"metadata": {"name": "deployer"}}))]).await;
    assert_eq!(
        whoami(&sim, Some(&token)).await.0,
        401,
        "an account of the same name made again is another account"
    );
    sim.shutdown().await;
}

/// The userInfo a SelfSubjectReview answers for `token` sending `headers`.
async fn whoami_as(sim: &Sim, token: &str, headers: &[(&str, &str)]) -> (u16, Value) {
    let mut all = vec![("content-type", "application/json")];
    all.extend_from_slice(headers);
    let body = whoami_body().to_string().into_bytes();
    let response = common::http::request(sim, "POST", WHOAMI, Some(token), &all, body).await;
    let (code, _, bytes) = common::http::read(response).await;
    let answer = common::http::parse(&bytes);
    match code {
        201 => (code, answer["status"]["userInfo"].clone()),
        _ => (code, answer),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn impersonation_needs_the_impersonate_verb_on_every_part() {
    let jane = StaticToken {
        token: "jane-token".into(),
        user: UserInfo::new("jane", &["dev"]),
    };
    let sim = start(SimConfig {
        users: vec![jane],
        ..SimConfig::default()
    })
    .await;
    let admin = sim.admin_token().to_string();

    let (code, user) = whoami_as(
        &sim,
        &admin,
        &[("impersonate-user", "system:serviceaccount:team-a:deployer")],
    )
    .await;
    assert_eq!(code, 201, "{user}");
    assert_eq!(
        user,
        json!({"username": "system:serviceaccount:team-a:deployer",
            "groups": ["system:serviceaccounts", "system:serviceaccounts:team-a", "system:authenticated"]})
    );
    let (code, user) = whoami_as(
        &sim,
        &admin,
        &[
            ("impersonate-user", "bob"),
            ("impersonate-group", "qa"),
            ("impersonate-group", "ops"),
            ("impersonate-uid", "1234"),
            ("impersonate-extra-acme.com%2fproject", "rocket"),
        ],
    )
    .await;
    assert_eq!(code, 201, "{user}");
    assert_eq!(
        user,
        json!({"username": "bob", "uid": "1234", "groups": ["qa", "ops", "system:authenticated"],
            "extra": {"acme.com/project": ["rocket"]}})
    );
    let (code, status) = whoami_as(&sim, &admin, &[("impersonate-group", "qa")]).await;
    assert_eq!(code, 400);
    assert_eq!(
        status["message"],
        "requested [{Group  qa}] without impersonating a user"
    );

    let (code, status) = whoami_as(&sim, "jane-token", &[("impersonate-user", "bob")]).await;
    assert_eq!(code, 403);
    assert_eq!(
        status["message"],
        "users \"bob\" is forbidden: User \"jane\" cannot impersonate resource \"users\" in API group \"\" at the cluster scope"
    );

    let grant = [
        (
            "/apis/rbac.authorization.k8s.io/v1/clusterroles",
            json!({"metadata": {"name": "impersonate-bob"},
                "rules": [{"apiGroups": [""], "resources": ["users"], "verbs": ["impersonate"],
                    "resourceNames": ["bob"]}]}),
        ),
        (
            "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
            json!({"metadata": {"name": "jane-impersonates-bob"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "impersonate-bob"},
                "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "jane"}]}),
        ),
    ];
    create(&sim, &grant).await;
    let (code, user) = whoami_as(&sim, "jane-token", &[("impersonate-user", "bob")]).await;
    assert_eq!((code, &user["username"]), (201, &json!("bob")));
    let (code, status) = whoami_as(
        &sim,
        "jane-token",
        &[
            ("impersonate-user", "bob"),
            ("impersonate-group", "system:masters"),
        ],
    )
    .await;
    assert_eq!(code, 403, "the group needs its own grant");
    assert_eq!(
        status["message"],
        "groups \"system:masters\" is forbidden: User \"jane\" cannot impersonate resource \"groups\" in API group \"\" at the cluster scope"
    );
    let (code, _) = whoami_as(&sim, "jane-token", &[("impersonate-user", "alice")]).await;
    assert_eq!(code, 403, "resourceNames limit whom");

    let secure = start(SimConfig {
        tls: true,
        users: vec![StaticToken {
            token: "jane-token".into(),
            user: UserInfo::new("jane", &["dev"]),
        }],
        ..SimConfig::default()
    })
    .await;
    let k = Kubectl::new(&secure);
    let manifests: Vec<String> = grant.iter().map(|(_, o)| o.to_string()).collect();
    let kinds = ["ClusterRole", "ClusterRoleBinding"];
    let stream: Vec<String> = manifests
        .iter()
        .zip(kinds)
        .map(|(m, kind)| {
            let mut object: Value = serde_json::from_str(m).unwrap();
            object["apiVersion"] = json!("rbac.authorization.k8s.io/v1");
            object["kind"] = json!(kind);
            object.to_string()
        })
        .collect();
    // A YAML stream of JSON documents: one that starts with `{` is read as JSON by kubectl
    // before v1.33.
    let grant_file = k.file("grant.yaml", &format!("---\n{}", stream.join("\n---\n")));
    k.ok(&["apply", "-f", path(&grant_file)]);
    let jane = k.as_user(&secure, "jane", &Credential::Token("jane-token".into()));
    let who = jane.json(&[["--as", "bob"].as_slice(), WHOAMI_JSON].concat());
    assert_eq!(who["status"]["userInfo"]["username"], "bob");
    let refused = jane.run(&["--as", "carol", "get", "pods"]);
    assert!(!refused.status.success());
    assert_eq!(
        String::from_utf8_lossy(&refused.stderr).trim(),
        "Error from server (Forbidden): users \"carol\" is forbidden: User \"jane\" cannot impersonate resource \"users\" in API group \"\" at the cluster scope"
    );
    sim.shutdown().await;
    secure.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_create_token_issues_a_token_kubectl_can_use() {
    let sim = common::tls_sim().await;
    let k = Kubectl::new(&sim);
    let token = k.ok(&["create", "token", "default", "--duration=15m"]);
    let token = token.trim();
    assert_eq!(token.split('.').count(), 3, "a JWT: {token}");
    let sa = k.as_user(&sim, "sa", &Credential::Token(token.to_string()));
    let who = sa.json(WHOAMI_JSON);
    assert_eq!(
        who["status"]["userInfo"]["username"],
        "system:serviceaccount:default:default"
    );
    let refused = sa.run(&["get", "secrets"]);
    assert_eq!(
        String::from_utf8_lossy(&refused.stderr).trim(),
        "Error from server (Forbidden): secrets is forbidden: User \"system:serviceaccount:default:default\" cannot list resource \"secrets\" in API group \"\" in the namespace \"default\""
    );
    let short = k.run(&["create", "token", "default", "--duration=1m"]);
    assert!(!short.status.success());
    assert!(
        String::from_utf8_lossy(&short.stderr)
            .contains("may not specify a duration less than 10 minutes"),
        "{}",
        String::from_utf8_lossy(&short.stderr)
    );
    sim.shutdown().await;
}
