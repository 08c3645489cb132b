//! HTTPS: a CA and a server certificate (for `localhost`, 127.0.0.1 and the listen address)
//! generated at start, and a listener that hands axum TLS streams.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose, SanType,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;

/// How long a client may take for its TLS handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// The CA (PEM, for kubeconfigs) and the server's certificate and key.
pub struct Certificates {
    /// The CA certificate, PEM.
    pub ca_pem: String,
    server_der: CertificateDer<'static>,
    server_key: Vec<u8>,
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
            server_der: cert.der().clone(),
            server_key: key.serialize_der(),
        })
    }

    fn acceptor(&self) -> Result<TlsAcceptor, String> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(tls_error)?
            .with_no_client_auth()
            .with_single_cert(
                vec![self.server_der.clone()],
                PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(self.server_key.clone())),
            )
            .map_err(tls_error)?;
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(TlsAcceptor::from(Arc::new(config)))
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
