//! Every `kubectl create <kind>` subcommand of kubectl v1.33 (but `create token`), `kubectl run`
//! and `kubectl expose` against the simulator. kubectl sends these bodies in protobuf (its
//! typed clients prefer it for built-in kinds), so each case checks, through `kubectl get -o
//! json`, the fields the command set.

#[allow(
    dead_code,
    reason = "each test crate uses a part of the shared fixture"
)]
use crate::common;

use std::process::Command;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use common::{Kubectl, path};
use serde_json::Value;

fn decoded(secret: &Value, key: &str) -> String {
    let text = secret["data"][key].as_str().unwrap_or_default();
    String::from_utf8(STANDARD.decode(text).expect("base64")).expect("utf-8")
}

#[tokio::test(flavor = "multi_thread")]
async fn kubectl_create_makes_every_kind_it_knows() {
    let sim = common::tls_sim().await;
    let k = Kubectl::new(&sim);
    let get = |args: &[&str]| -> Value {
        let mut all = vec!["get"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["-o", "json"]);
        k.json(&all)
    };

    k.ok(&["create", "namespace", "team"]);
    let ns = get(&["namespace", "team"]);
    assert_eq!(ns["status"]["phase"], "Active");
    assert!(
        ns["metadata"]["uid"]
            .as_str()
            .is_some_and(|u| !u.is_empty())
    );

    k.ok(&[
        "create",
        "configmap",
        "settings",
        "-n",
        "team",
        "--from-literal=mode=fast",
        "--from-literal=empty=",
    ]);
    let cm = get(&["configmap", "settings", "-n", "team"]);
    assert_eq!(cm["data"]["mode"], "fast");
    assert_eq!(cm["data"]["empty"], "");

    k.ok(&[
        "create",
        "secret",
        "generic",
        "login",
        "-n",
        "team",
        "--from-literal=password=hunter2",
    ]);
    let secret = get(&["secret", "login", "-n", "team"]);
    assert_eq!(decoded(&secret, "password"), "hunter2");
    assert_eq!(secret["type"], "Opaque");

    k.ok(&[
        "create",
        "secret",
        "docker-registry",
        "registry",
        "-n",
        "team",
        "--docker-server=registry.example",
        "--docker-username=u",
        "--docker-password=p",
    ]);
    let registry = get(&["secret", "registry", "-n", "team"]);
    assert_eq!(registry["type"], "kubernetes.io/dockerconfigjson");
    let config: Value = serde_json::from_str(&decoded(&registry, ".dockerconfigjson")).unwrap();
    assert_eq!(config["auths"]["registry.example"]["username"], "u");

    let cert = k.dir.join("tls.crt");
    let key = k.dir.join("tls.key");
    let made = Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=web",
        ])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output()
        .expect("openssl runs");
    common::assert_success(&made, "openssl");
    let cert_arg = format!("--cert={}", path(&cert));
    let key_arg = format!("--key={}", path(&key));
    k.ok(&[
        "create", "secret", "tls", "web-tls", "-n", "team", &cert_arg, &key_arg,
    ]);
    let tls = get(&["secret", "web-tls", "-n", "team"]);
    assert_eq!(tls["type"], "kubernetes.io/tls");
    assert_eq!(
        decoded(&tls, "tls.crt"),
        std::fs::read_to_string(&cert).unwrap()
    );

    k.ok(&["create", "serviceaccount", "robot", "-n", "team"]);
    assert_eq!(
        get(&["serviceaccount", "robot", "-n", "team"])["metadata"]["name"],
        "robot"
    );

    k.ok(&[
        "create",
        "role",
        "reader",
        "-n",
        "team",
        "--verb=get,list",
        "--resource=pods",
    ]);
    let role = get(&["role", "reader", "-n", "team"]);
    assert_eq!(
        role["rules"][0]["verbs"],
        serde_json::json!(["get", "list"])
    );
    assert_eq!(role["rules"][0]["resources"], serde_json::json!(["pods"]));

    k.ok(&[
        "create",
        "rolebinding",
        "readers",
        "-n",
        "team",
        "--role=reader",
        "--user=alice",
    ]);
    let binding = get(&["rolebinding", "readers", "-n", "team"]);
    assert_eq!(binding["roleRef"]["name"], "reader");
    assert_eq!(binding["subjects"][0]["name"], "alice");

    k.ok(&[
        "create",
        "clusterrole",
        "node-reader",
        "--verb=get",
        "--resource=nodes",
    ]);
    assert_eq!(
        get(&["clusterrole", "node-reader"])["rules"][0]["resources"][0],
        "nodes"
    );
    k.ok(&[
        "create",
        "clusterrolebinding",
        "node-readers",
        "--clusterrole=node-reader",
        "--group=ops",
    ]);
    let crb = get(&["clusterrolebinding", "node-readers"]);
    assert_eq!(
        (
            crb["roleRef"]["kind"].as_str(),
            crb["subjects"][0]["kind"].as_str()
        ),
        (Some("ClusterRole"), Some("Group"))
    );

    k.ok(&[
        "create",
        "deployment",
        "web",
        "-n",
        "team",
        "--image=nginx:1.27",
        "--replicas=3",
        "--port=8080",
    ]);
    let deployment = get(&["deployment", "web", "-n", "team"]);
    assert_eq!(deployment["spec"]["replicas"], 3);
    let container = &deployment["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(container["image"], "nginx:1.27");
    assert_eq!(container["ports"][0]["containerPort"], 8080);
    // Defaulted as for a JSON body: the empty strings protobuf carries read as unset.
    assert_eq!(container["imagePullPolicy"], "IfNotPresent");
    assert_eq!(
        deployment["spec"]["template"]["spec"]["restartPolicy"],
        "Always"
    );
    assert_eq!(deployment["spec"]["strategy"]["type"], "RollingUpdate");

    k.ok(&[
        "create",
        "deployment",
        "idle",
        "-n",
        "team",
        "--image=nginx",
        "--replicas=0",
    ]);
    assert_eq!(
        get(&["deployment", "idle", "-n", "team"])["spec"]["replicas"],
        0
    );

    k.ok(&[
        "create",
        "job",
        "once",
        "-n",
        "team",
        "--image=busybox",
        "--",
        "echo",
        "hi",
    ]);
    let job = get(&["job", "once", "-n", "team"]);
    let container = &job["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(container["command"], serde_json::json!(["echo", "hi"]));
    assert_eq!(job["spec"]["template"]["spec"]["restartPolicy"], "Never");

    k.ok(&[
        "create",
        "cronjob",
        "tick",
        "-n",
        "team",
        "--image=busybox",
        "--schedule=*/5 * * * *",
    ]);
    let cronjob = get(&["cronjob", "tick", "-n", "team"]);
    assert_eq!(cronjob["spec"]["schedule"], "*/5 * * * *");
    assert_eq!(
        cronjob["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["image"],
        "busybox"
    );

    k.ok(&[
        "create",
        "ingress",
        "site",
        "-n",
        "team",
        "--rule=example.com/app*=web:80",
    ]);
    let ingress = get(&["ingress", "site", "-n", "team"]);
    let rule = &ingress["spec"]["rules"][0];
    assert_eq!(rule["host"], "example.com");
    assert_eq!(rule["http"]["paths"][0]["pathType"], "Prefix");
    assert_eq!(
        rule["http"]["paths"][0]["backend"]["service"]["port"]["number"],
        80
    );

    k.ok(&[
        "create",
        "poddisruptionbudget",
        "web-pdb",
        "-n",
        "team",
        "--selector=app=web",
        "--min-available=0",
    ]);
    let pdb = get(&["poddisruptionbudget", "web-pdb", "-n", "team"]);
    assert_eq!(pdb["spec"]["minAvailable"], 0);
    assert_eq!(pdb["spec"]["selector"]["matchLabels"]["app"], "web");

    k.ok(&[
        "create",
        "priorityclass",
        "high",
        "--value=1000",
        "--description=important",
    ]);
    let pc = get(&["priorityclass", "high"]);
    assert_eq!(
        (pc["value"].as_i64(), pc["description"].as_str()),
        (Some(1000), Some("important"))
    );

    k.ok(&[
        "create",
        "quota",
        "limits",
        "-n",
        "team",
        "--hard=pods=10,requests.cpu=2",
    ]);
    let quota = get(&["resourcequota", "limits", "-n", "team"]);
    assert_eq!(quota["spec"]["hard"]["pods"], "10");
    assert_eq!(quota["spec"]["hard"]["requests.cpu"], "2");

    for (kind, name) in [
        ("clusterip", "front"),
        ("loadbalancer", "edge"),
        ("nodeport", "door"),
    ] {
        k.ok(&[
            "create",
            "service",
            kind,
            name,
            "-n",
            "team",
            "--tcp=80:8080",
        ]);
        let service = get(&["service", name, "-n", "team"]);
        let port = &service["spec"]["ports"][0];
        assert_eq!(
            (port["port"].as_i64(), port["targetPort"].as_i64()),
            (Some(80), Some(8080))
        );
        assert_eq!(service["spec"]["selector"]["app"], name);
        let expected = match kind {
            "clusterip" => "ClusterIP",
            "loadbalancer" => "LoadBalancer",
            _ => "NodePort",
        };
        assert_eq!(service["spec"]["type"], expected);
    }
    k.ok(&[
        "create",
        "service",
        "externalname",
        "away",
        "-n",
        "team",
        "--external-name=example.com",
    ]);
    let away = get(&["service", "away", "-n", "team"]);
    assert_eq!(
        (
            away["spec"]["type"].as_str(),
            away["spec"]["externalName"].as_str()
        ),
        (Some("ExternalName"), Some("example.com"))
    );

    k.ok(&[
        "run",
        "shell",
        "-n",
        "team",
        "--image=busybox",
        "--restart=Never",
        "--labels=app=shell",
        "--",
        "sleep",
        "60",
    ]);
    let pod = get(&["pod", "shell", "-n", "team"]);
    assert_eq!(pod["spec"]["containers"][0]["image"], "busybox");
    assert_eq!(
        pod["spec"]["containers"][0]["args"],
        serde_json::json!(["sleep", "60"])
    );
    assert_eq!(pod["spec"]["restartPolicy"], "Never");
    assert_eq!(pod["metadata"]["labels"]["app"], "shell");

    k.ok(&[
        "expose",
        "deployment",
        "web",
        "-n",
        "team",
        "--port=80",
        "--target-port=8080",
        "--name=web-svc",
    ]);
    let exposed = get(&["service", "web-svc", "-n", "team"]);
    assert_eq!(exposed["spec"]["selector"]["app"], "web");
    let port = &exposed["spec"]["ports"][0];
    assert_eq!(
        (port["port"].as_i64(), port["targetPort"].as_i64()),
        (Some(80), Some(8080))
    );

    sim.shutdown().await;
}
