//! The cluster's CA, generated at start: it signs the server certificate (for `localhost`,
//! 127.0.0.1 and the listen address) and the client certificates users authenticate with, as
//! kube-apiserver's `--client-ca-file`; and a listener that hands axum TLS streams with the
//! client certificate the handshake verified, if any.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose, SanType,
};
use rustls::RootCertStore;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::server::WebPkiClientVerifier;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;

/// How long a client may take for its TLS handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// The CA (PEM, for kubeconfigs) with its key, and the server's certificate and key.
pub struct Certificates {
    /// The CA certificate, PEM.
    pub ca_pem: String,
    ca: CertifiedIssuer<'static, KeyPair>,
    server_der: CertificateDer<'static>,
    server_key: Vec<u8>,
}

/// A client certificate the CA signed, and its key, both PEM.
#[derive(Debug, Clone)]
pub struct ClientCertificate {
    /// The certificate: the user name as its common name, each group an organization.
    pub cert_pem: String,
    /// The private key (PKCS #8).
    pub key_pem: String,
}

fn tls_error(e: impl std::fmt::Display) -> String {
    e.to_string()
}

impl Certificates {
    /// A fresh CA and a server certificate it signed, valid for `localhost`, 127.0.0.1 and `ip`.
    pub fn generate(ip: IpAddr) -> Result<Self, String> {
        let mut ca = CertificateParams::new(Vec::<String>::new()).map_err(tls_error)?;
        ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca.distinguished_name.push(DnType::CommonName, "krt-sim CA");
        ca.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let ca = CertifiedIssuer::self_signed(ca, KeyPair::generate().map_err(tls_error)?)
            .map_err(tls_error)?;

        let mut server =
            CertificateParams::new(vec!["localhost".to_string()]).map_err(tls_error)?;
        server
            .subject_alt_names
            .push(SanType::IpAddress(IpAddr::V4(Ipv4Addr::LOCALHOST)));
        if ip != IpAddr::V4(Ipv4Addr::LOCALHOST) {
            server.subject_alt_names.push(SanType::IpAddress(ip));
        }
        server
            .distinguished_name
            .push(DnType::CommonName, "krt-sim");
        server.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
        ];
        server.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        let key = KeyPair::generate().map_err(tls_error)?;
        let cert = server.signed_by(&key, &ca).map_err(tls_error)?;
        Ok(Self {
            ca_pem: ca.pem(),
            ca,
            server_der: cert.der().clone(),
            server_key: key.serialize_der(),
        })
    }

    /// A client certificate for `username`, valid for a year. rcgen's names hold one value per
    /// attribute, so it carries at most one group (`O`); certificates with several are read with
    /// all of them.
    pub fn client(&self, username: &str, group: Option<&str>) -> Result<ClientCertificate, String> {
        let mut params = CertificateParams::new(Vec::<String>::new()).map_err(tls_error)?;
        params.distinguished_name.push(DnType::CommonName, username);
        if let Some(group) = group {
            params
                .distinguished_name
                .push(DnType::OrganizationName, group);
        }
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        let key = KeyPair::generate().map_err(tls_error)?;
        let cert = params.signed_by(&key, &self.ca).map_err(tls_error)?;
        Ok(ClientCertificate {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
        })
    }

    fn acceptor(&self) -> Result<TlsAcceptor, String> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(tls_error)?
            .with_client_cert_verifier(self.client_verifier()?)
            .with_single_cert(
                vec![self.server_der.clone()],
                PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(self.server_key.clone())),
            )
            .map_err(tls_error)?;
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(TlsAcceptor::from(Arc::new(config)))
    }

    /// Client certificates are optional (tokens authenticate too); one that is sent must chain
    /// to the CA, or the handshake fails.
    fn client_verifier(
        &self,
    ) -> Result<Arc<dyn rustls::server::danger::ClientCertVerifier>, String> {
        let mut roots = RootCertStore::empty();
        roots.add(self.ca.der().clone()).map_err(tls_error)?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
            .allow_unauthenticated()
            .build()
            .map_err(tls_error)
    }
}

/// The user a verified client certificate names: its common name, its organizations as
/// groups, and the certificate's SHA-256 as its credential id (kube's x509 authenticator:
/// `authentication.kubernetes.io/credential-id: X509SHA256=<hex>`). `None` for a certificate
/// without a common name.
pub fn certificate_user(der: &CertificateDer<'_>) -> Option<crate::auth::UserInfo> {
    use sha2::Digest;
    let (_, cert) = x509_parser::parse_x509_certificate(der.as_ref()).ok()?;
    let subject = cert.subject();
    let username = subject.iter_common_name().next()?.as_str().ok()?;
    let groups: Vec<&str> = subject
        .iter_organization()
        .filter_map(|o| o.as_str().ok())
        .collect();
    let mut user = crate::auth::UserInfo::new(username, &groups);
    let fingerprint: String = sha2::Sha256::digest(der.as_ref())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    user.extra.insert(
        crate::auth::CREDENTIAL_ID.into(),
        vec![format!("X509SHA256={fingerprint}")],
    );
    Some(user)
}

/// The client certificate a connection's handshake verified, handed to every request on it.
#[derive(Clone, Default)]
pub struct PeerCertificate(pub Option<CertificateDer<'static>>);

impl axum::extract::connect_info::Connected<axum::serve::IncomingStream<'_, TlsListener>>
    for PeerCertificate
{
    fn connect_info(stream: axum::serve::IncomingStream<'_, TlsListener>) -> Self {
        let (_, connection) = stream.io().get_ref();
        Self(
            connection
                .peer_certificates()
                .and_then(|chain| chain.first())
                .map(|cert| cert.clone().into_owned()),
        )
    }
}

impl axum::extract::connect_info::Connected<axum::serve::IncomingStream<'_, TcpListener>>
    for PeerCertificate
{
    fn connect_info(_: axum::serve::IncomingStream<'_, TcpListener>) -> Self {
        Self(None)
    }
}

/// Accepts TCP connections and completes their TLS handshakes in the background, so one slow
/// client does not hold up the others.
pub struct TlsListener {
    local: SocketAddr,
    ready: mpsc::Receiver<(TlsStream<TcpStream>, SocketAddr)>,
}

impl TlsListener {
    /// Serves TLS with `certs` on `listener`.
    pub fn new(listener: TcpListener, certs: &Certificates) -> Result<Self, String> {
        let acceptor = certs.acceptor()?;
        let local = listener.local_addr().map_err(tls_error)?;
        let (tx, ready) = mpsc::channel(64);
        tokio::spawn(async move {
            loop {
                let accepted = tokio::select! {
                    accepted = listener.accept() => accepted,
                    () = tx.closed() => return,
                };
                let Ok((tcp, peer)) = accepted else {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                };
                let (acceptor, tx) = (acceptor.clone(), tx.clone());
                tokio::spawn(async move {
                    if let Ok(Ok(stream)) =
                        tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(tcp)).await
                    {
                        let _ = tx.send((stream, peer)).await;
                    }
                });
            }
        });
        Ok(Self { local, ready })
    }
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.ready.recv().await {
            Some(connection) => connection,
            // The acceptor task only ends when this listener is gone.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        Ok(self.local)
    }
}
