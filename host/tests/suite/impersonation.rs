//! `KubeCluster::acting_as`: every request goes as the impersonated user,
//! who the API server sees (a SelfSubjectReview) and authorizes, while the
//! cluster it came from stays its own user; discovery is shared.

use krt_host::model::{ApiResource, CreateOptions};
use krt_host::{Error, Impersonation, KubeCluster};
use krt_testkit::TestCluster;
use serde_json::Value;

/// Who the server says the requests of `cluster` come from: user name and groups.
async fn whoami(cluster: &KubeCluster) -> (String, Vec<String>) {
    let reviews = ApiResource {
        group: "authentication.k8s.io".into(),
        version: "v1".into(),
        kind: "SelfSubjectReview".into(),
        plural: "selfsubjectreviews".into(),
        namespaced: false,
    };
    let body = r#"{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}"#;
    let answer = cluster
        .create(&reviews, None, body, &CreateOptions::default())
        .await
        .expect("a SelfSubjectReview");
    let review: Value = serde_json::from_str(&answer).unwrap();
    let user = &review["status"]["userInfo"];
    let groups = user["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g.as_str().unwrap().to_owned())
        .collect();
    (user["username"].as_str().unwrap().to_owned(), groups)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_go_as_the_impersonated_user_and_the_server_authorizes_them_as_it() {
    let sim = TestCluster::start().await;
    let admin = KubeCluster::new(sim.client.clone(), "default");
    let account = admin
        .acting_as(&Impersonation::service_account("team-a", "deployer"))
        .unwrap();
    assert_eq!(
        whoami(&account).await,
        (
            "system:serviceaccount:team-a:deployer".to_owned(),
            vec![
                "system:serviceaccounts".to_owned(),
                "system:serviceaccounts:team-a".to_owned(),
                "system:authenticated".to_owned(),
            ]
        )
    );
    let alice = admin
        .acting_as(&Impersonation::user("alice", vec!["devs".into()]))
        .unwrap();
    assert_eq!(
        whoami(&alice).await,
        (
            "alice".to_owned(),
            vec!["devs".to_owned(), "system:authenticated".to_owned()]
        )
    );
    // The cluster it came from is still the admin.
    assert_eq!(whoami(&admin).await.0, krt_sim::ADMIN);

    // The server authorizes as the account, which may do nothing here.
    let configmaps = admin.resolve("v1", "ConfigMap").await.unwrap();
    let fetched = admin.discovery_fetches();
    let refused = account
        .get(&configmaps, Some("default"), "anything")
        .await
        .unwrap_err();
    assert_eq!(refused.code, 403);
    assert_eq!(
        refused.message,
        "configmaps \"anything\" is forbidden: User \"system:serviceaccount:team-a:deployer\" \
         cannot get resource \"configmaps\" in API group \"\" in the namespace \"default\""
    );
    // Discovery is shared: the account resolves the kind without a request.
    account.resolve("v1", "ConfigMap").await.unwrap();
    assert_eq!(account.discovery_fetches(), fetched);
    assert_eq!(
        account.impersonation().map(|who| who.to_string()),
        Some("system:serviceaccount:team-a:deployer".to_owned())
    );

    // A name no header can carry is refused before any request.
    let bad = admin.acting_as(&Impersonation::user("line\nbreak", Vec::new()));
    assert!(
        matches!(&bad, Err(Error::Impersonation { what, .. }) if what == "line\nbreak"),
        "{:?}",
        bad.err()
    );
}
