//! Authentication and TLS as kubectl does them, through the `krt` binary
//! against a simulator serving HTTPS with its own CA and requiring a token:
//! CA data verified, insecure-skip-tls-verify honoured, bearer tokens, exec
//! credential plugins, and clear errors when any of them is wrong.

use crate::support::{assert_contains, krt_env, show, temp_dir};
use std::os::unix::fs::PermissionsExt;

const CM: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: auth-test, namespace: default}\ndata: {k: v}\n";
const TOKEN: &str = "s3cret-token";

async fn secure_sim() -> krt_sim::Sim {
    krt_sim::Sim::start_with(krt_sim::SimConfig {
        tls: true,
        token: Some(TOKEN.into()),
        ..krt_sim::SimConfig::default()
    })
    .await
    .expect("TLS simulator starts")
}

/// A kubeconfig for `sim` with the given cluster and user sections.
fn kubeconfig(sim: &krt_sim::Sim, cluster_extra: &str, user: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: {}\n{cluster_extra}contexts:\n- name: x\n  context: {{cluster: c, user: u}}\ncurrent-context: x\nusers:\n- name: u\n  user:\n{user}",
        sim.url()
    )
}

fn ca_data(sim: &krt_sim::Sim) -> String {
    use base64::Engine;
    let pem = sim.ca_pem().expect("a CA");
    format!(
        "    certificate-authority-data: {}\n",
        base64::engine::general_purpose::STANDARD.encode(pem)
    )
}

async fn apply_with(dir: &std::path::Path, config: &str) -> crate::support::Run {
    let file = dir.join("kubeconfig");
    std::fs::write(&file, config).unwrap();
    krt_env(
        dir,
        &["--kubeconfig", file.to_str().unwrap(), "apply", "-f", "-"],
        &[],
        Some(CM),
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_with_the_clusters_ca_and_a_token_works() {
    let sim = secure_sim().await;
    assert!(sim.url().starts_with("https://"), "{}", sim.url());
    let dir = temp_dir("tls-ok");
    let run = apply_with(
        dir.path(),
        &kubeconfig(&sim, &ca_data(&sim), &format!("    token: {TOKEN}\n")),
    )
    .await;
    assert_eq!(run.code, 0, "{}", show(&run));
    assert_contains(&run.stdout, "created");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_ca_is_refused_unless_the_kubeconfig_skips_verification() {
    let sim = secure_sim().await;
    let user = format!("    token: {TOKEN}\n");
    let dir = temp_dir("tls-unknown");
    let refused = apply_with(dir.path(), &kubeconfig(&sim, "", &user)).await;
    assert_eq!(refused.code, 1, "{}", refused.stdout);
    // The preview lists each resource's failure on stdout; the summary goes to stderr.
    let output = format!("{}{}", refused.stdout, refused.stderr).to_lowercase();
    assert!(
        output.contains("certificate"),
        "the TLS failure is named:\n{}\n{}",
        refused.stdout,
        refused.stderr
    );
    let skipped = apply_with(
        dir.path(),
        &kubeconfig(&sim, "    insecure-skip-tls-verify: true\n", &user),
    )
    .await;
    assert_eq!(skipped.code, 0, "{}", show(&skipped));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_token_is_reported_as_unauthenticated() {
    let sim = secure_sim().await;
    let dir = temp_dir("tls-token");
    let run = apply_with(
        dir.path(),
        &kubeconfig(&sim, &ca_data(&sim), "    token: wrong\n"),
    )
    .await;
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(
        run.stdout.contains("Unauthorized") || run.stderr.contains("Unauthorized"),
        "{}",
        show(&run)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_exec_credential_plugin_supplies_the_token() {
    let sim = secure_sim().await;
    let dir = temp_dir("exec");
    let plugin = dir.path().join("credential-plugin.sh");
    std::fs::write(
        &plugin,
        format!(
            "#!/bin/sh\necho plugin-ran >> \"$(dirname \"$0\")/calls\"\ncat <<JSON\n{{\"apiVersion\": \"client.authentication.k8s.io/v1\", \"kind\": \"ExecCredential\", \"status\": {{\"token\": \"{TOKEN}\"}}}}\nJSON\n"
        ),
    )
    .unwrap();
    std::fs::set_permissions(&plugin, std::fs::Permissions::from_mode(0o755)).unwrap();
    let user = format!(
        "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: {}\n      interactiveMode: Never\n",
        plugin.display()
    );
    let run = apply_with(dir.path(), &kubeconfig(&sim, &ca_data(&sim), &user)).await;
    assert_eq!(run.code, 0, "{}", show(&run));
    let calls = std::fs::read_to_string(dir.path().join("calls")).expect("the plugin ran");
    assert!(calls.contains("plugin-ran"));
}
