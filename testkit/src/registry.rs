//! A real OCI registry for tests: Debian's `docker-registry` (the CNCF
//! distribution registry 2.8) on loopback, with its storage in a temporary
//! directory, optionally behind htpasswd basic auth or token auth (a Bearer
//! challenge answered by a token server run here, which signs ES256 JWTs the
//! registry checks against the certificate it is given), and TLS under a CA
//! made here.

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose, SanType,
};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The registry's binary, as Debian installs it.
const BINARY: &str = "docker-registry";

/// How a test registry is set up.
#[derive(Debug, Clone, Default)]
pub struct RegistrySetup {
    /// Serve TLS (on 127.0.0.2, which is not plain-HTTP loopback to krt)
    /// with a certificate of a CA made for it; plain HTTP on 127.0.0.1
    /// otherwise.
    pub tls: bool,
    /// Require this user and password (htpasswd, bcrypt).
    pub basic_auth: Option<(String, String)>,
    /// Serve plain HTTP on 127.0.0.2 (not plain-HTTP loopback to krt, so it
    /// must be named `--insecure-registry`) instead of 127.0.0.1; ignored
    /// with `tls`.
    pub elsewhere: bool,
    /// Check `basic_auth`'s user and password at a token server instead:
    /// the registry answers with a Bearer challenge, and accepts only the
    /// tokens that server signs.
    pub token: bool,
}

/// A running registry; dropping it stops it and removes its storage.
pub struct TestRegistry {
    child: Child,
    dir: tempfile::TempDir,
    /// `host:port`.
    pub host: String,
    /// The CA certificate (PEM file) when it serves TLS.
    pub ca: Option<PathBuf>,
    setup: RegistrySetup,
    token_server: Option<TokenServer>,
}

impl TestRegistry {
    /// Starts a registry, or returns `None` after printing why when
    /// `docker-registry` is not installed (in CI, where `.ci/run` installs
    /// it, that fails the test instead).
    pub fn start(setup: RegistrySetup) -> Option<TestRegistry> {
        if Command::new(BINARY).arg("--version").output().is_err() {
            let why = format!(
                "`{BINARY}` is not installed (apt-get install docker-registry; .ci/run does)"
            );
            assert!(
                std::env::var("CI").map_or(true, |ci| ci != "true"),
                "CI=true but {why}"
            );
            eprintln!("skipped: {why}");
            return None;
        }
        let dir = tempfile::Builder::new()
            .prefix("krt-registry-")
            .tempdir()
            .expect("a temporary directory");
        let ip = match setup.tls || setup.elsewhere {
            true => IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2)),
            false => IpAddr::V4(Ipv4Addr::LOCALHOST),
        };
        let port = free_port(ip);
        let mut config = format!(
            "version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: {}\n  delete:\n    enabled: true\nhttp:\n  addr: {ip}:{port}\n",
            dir.path().join("storage").display()
        );
        let mut ca = None;
        if setup.tls {
            let (ca_pem, cert_pem, key_pem) = certificates(ip);
            for (name, text) in [
                ("ca.crt", &ca_pem),
                ("server.crt", &cert_pem),
                ("server.key", &key_pem),
            ] {
                std::fs::write(dir.path().join(name), text).expect("certificate written");
            }
            config += &format!(
                "  tls:\n    certificate: {}\n    key: {}\n",
                dir.path().join("server.crt").display(),
                dir.path().join("server.key").display()
            );
            ca = Some(dir.path().join("ca.crt"));
        }
        let mut token_server = None;
        if let (true, Some((user, password))) = (setup.token, &setup.basic_auth) {
            let server = TokenServer::start(user.clone(), password.clone());
            std::fs::write(dir.path().join("token.crt"), &server.certificate_pem)
                .expect("token cert written");
            config += &format!(
                "auth:\n  token:\n    realm: http://{}/token\n    service: {TOKEN_SERVICE}\n    issuer: {TOKEN_ISSUER}\n    rootcertbundle: {}\n",
                server.address,
                dir.path().join("token.crt").display()
            );
            token_server = Some(server);
        } else if let Some((user, password)) = &setup.basic_auth {
            let hash = bcrypt::hash(password, 4).expect("bcrypt");
            std::fs::write(dir.path().join("htpasswd"), format!("{user}:{hash}\n"))
                .expect("htpasswd written");
            config += &format!(
                "auth:\n  htpasswd:\n    realm: krt-test\n    path: {}\n",
                dir.path().join("htpasswd").display()
            );
        }
        let config_path = dir.path().join("config.yml");
        std::fs::write(&config_path, config).expect("config written");
        // Its log (TLS handshakes refused on purpose, failed logins) stays beside its storage.
        let log = std::fs::File::create(dir.path().join("registry.log")).expect("log file");
        let child = Command::new(BINARY)
            .arg("serve")
            .arg(&config_path)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("docker-registry starts");
        let registry = TestRegistry {
            child,
            dir,
            host: format!("{ip}:{port}"),
            ca,
            setup,
            token_server,
        };
        registry.wait_listening(SocketAddr::new(ip, port));
        Some(registry)
    }

    fn wait_listening(&self, address: SocketAddr) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect_timeout(&address, Duration::from_millis(200)).is_err() {
            assert!(
                Instant::now() < deadline,
                "docker-registry did not listen on {address} within 20 s"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// `oci://HOST:PORT/REPOSITORY_AND_TAG`.
    pub fn reference(&self, repository_and_tag: &str) -> String {
        format!("oci://{}/{repository_and_tag}", self.host)
    }

    /// Writes `DIR/.docker/config.json` with the registry's user and
    /// `password` (the right one or not), as `docker login` would: krt run
    /// with `HOME=DIR` reads it.
    pub fn login(&self, dir: &Path, password: &str) {
        let user = self
            .setup
            .basic_auth
            .as_ref()
            .map(|(u, _)| u.as_str())
            .unwrap_or("nobody");
        let docker = dir.join(".docker");
        std::fs::create_dir_all(&docker).expect(".docker");
        let auth = base64_encode(format!("{user}:{password}").as_bytes());
        std::fs::write(
            docker.join("config.json"),
            format!(
                "{{\"auths\":{{\"{}\":{{\"auth\":\"{auth}\"}}}}}}",
                self.host
            ),
        )
        .expect("config.json written");
    }

    /// The file in the registry's storage that holds the blob `digest`
    /// (`sha256:…`), to change it behind the registry's back.
    pub fn blob_file(&self, digest: &str) -> PathBuf {
        let hex = digest.strip_prefix("sha256:").expect("a sha256 digest");
        self.dir
            .path()
            .join("storage/docker/registry/v2/blobs/sha256")
            .join(&hex[..2])
            .join(hex)
            .join("data")
    }

    /// Stops the registry (its storage stays until the value is dropped).
    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(mut server) = self.token_server.take() {
            server.stop();
        }
    }

    /// How many tokens the token server issued (0 without one).
    pub fn tokens_issued(&self) -> usize {
        self.token_server
            .as_ref()
            .map_or(0, |s| s.issued.load(std::sync::atomic::Ordering::SeqCst))
    }
}

impl Drop for TestRegistry {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The `service` and `issuer` the registry expects in tokens.
const TOKEN_SERVICE: &str = "krt-test-registry";
const TOKEN_ISSUER: &str = "krt-test-token-server";

/// A token server for the registry's `auth: token`: `GET /token` with the
/// right Basic credentials gets an ES256 JWT granting the scopes asked for,
/// its certificate in the `x5c` header; anything else gets 401.
struct TokenServer {
    address: SocketAddr,
    certificate_pem: String,
    issued: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl TokenServer {
    fn start(user: String, password: String) -> TokenServer {
        use base64::Engine;
        let key = KeyPair::generate().expect("token key");
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("token cert params");
        params
            .distinguished_name
            .push(DnType::CommonName, TOKEN_ISSUER);
        let cert = params.self_signed(&key).expect("token certificate");
        let x5c = base64::engine::general_purpose::STANDARD.encode(cert.der());
        let encoding = jsonwebtoken::EncodingKey::from_ec_der(&key.serialize_der());
        let expected = format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"))
        );
        let listener = TcpListener::bind("127.0.0.1:0").expect("token server port");
        listener.set_nonblocking(true).expect("nonblocking");
        let address = listener.local_addr().expect("token server address");
        let issued = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let (shutdown, stop) = tokio::sync::oneshot::channel::<()>();
        let counter = issued.clone();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).expect("tokio listener");
                let app = axum::Router::new().route(
                    "/token",
                    axum::routing::get(move |headers: http::HeaderMap, uri: http::Uri| {
                        let (encoding, expected, x5c, counter) = (
                            encoding.clone(),
                            expected.clone(),
                            x5c.clone(),
                            counter.clone(),
                        );
                        async move { issue(&headers, &uri, &expected, &encoding, &x5c, &counter) }
                    }),
                );
                let _ = axum::serve(listener, app)
                    .with_graceful_shutdown(async move {
                        let _ = stop.await;
                    })
                    .await;
            });
        });
        TokenServer {
            address,
            certificate_pem: cert.pem(),
            issued,
            shutdown: Some(shutdown),
            thread: Some(thread),
        }
    }

    fn stop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The token server's answer: a token for the request's `scope`s when its
/// Basic credentials are `expected`, else 401.
fn issue(
    headers: &http::HeaderMap,
    uri: &http::Uri,
    expected: &str,
    encoding: &jsonwebtoken::EncodingKey,
    x5c: &str,
    counter: &std::sync::atomic::AtomicUsize,
) -> (http::StatusCode, String) {
    let authorized = headers
        .get(http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v == expected);
    if !authorized {
        return (
            http::StatusCode::UNAUTHORIZED,
            r#"{"details":"bad credentials"}"#.to_owned(),
        );
    }
    let access: Vec<serde_json::Value> = uri
        .query()
        .unwrap_or("")
        .split('&')
        .filter_map(|pair| pair.strip_prefix("scope="))
        .map(|scope| percent_encoding::percent_decode_str(scope).decode_utf8_lossy().into_owned())
        .filter_map(|scope| {
            let (kind, rest) = scope.split_once(':')?;
            let (name, actions) = rest.rsplit_once(':')?;
            Some(serde_json::json!({"type": kind, "name": name, "actions": actions.split(',').collect::<Vec<_>>()}))
        })
        .collect();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_secs();
    let claims = serde_json::json!({
        "iss": TOKEN_ISSUER, "sub": "krt", "aud": TOKEN_SERVICE,
        "exp": now + 300, "nbf": now - 10, "iat": now,
        "jti": format!("{now}-{}", counter.load(std::sync::atomic::Ordering::SeqCst)),
        "access": access,
    });
    let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::ES256);
    header.x5c = Some(vec![x5c.to_owned()]);
    let token = jsonwebtoken::encode(&header, &claims, encoding).expect("token signed");
    counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    (
        http::StatusCode::OK,
        serde_json::json!({"token": token, "access_token": token, "expires_in": 300}).to_string(),
    )
}

/// A port free on `ip` now.
fn free_port(ip: IpAddr) -> u16 {
    TcpListener::bind(SocketAddr::new(ip, 0))
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// A CA (PEM), and a server certificate it signed for `ip` with its key (PEM).
fn certificates(ip: IpAddr) -> (String, String, String) {
    let mut ca = CertificateParams::new(Vec::<String>::new()).expect("CA params");
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(DnType::CommonName, "krt test registry CA");
    ca.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca = CertifiedIssuer::self_signed(ca, KeyPair::generate().expect("CA key")).expect("CA");
    let mut server = CertificateParams::new(Vec::<String>::new()).expect("server params");
    server.subject_alt_names.push(SanType::IpAddress(ip));
    server
        .distinguished_name
        .push(DnType::CommonName, "krt test registry");
    server.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    server.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    let key = KeyPair::generate().expect("server key");
    let cert = server.signed_by(&key, &ca).expect("server certificate");
    (ca.pem(), cert.pem(), key.serialize_pem())
}

fn base64_encode(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}
