//! TLS both ways, with rustls (ring): the roots outbound HTTPS trusts (remote consoles and
//! engines in the fleet: the system's store plus `[tls] ca_file` for a private CA), and the
//! console's own HTTPS listener (`[tls] cert`, `key`). Errors name the file and what is wrong
//! with it, because the operator who reads them is fixing a path in `roofline.toml`.

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("{path}: {detail}")]
    File { path: PathBuf, detail: String },
    #[error("TLS setup: {0}")]
    Rustls(#[from] rustls::Error),
    #[error("the outbound TLS roots were already set up with another ca_file")]
    AlreadySet,
}

fn file_error(path: &Path, detail: impl std::fmt::Display) -> TlsError {
    TlsError::File {
        path: path.to_path_buf(),
        detail: detail.to_string(),
    }
}

/// The PEM files here are small; anything larger is not what the key names.
const PEM_CAP: u64 = 1 << 20;

fn read_pem(path: &Path) -> Result<Vec<u8>, TlsError> {
    use std::io::Read;
    // Read through a cap rather than trusting a size read beforehand: the file may grow
    // between the two.
    let file = std::fs::File::open(path).map_err(|e| file_error(path, e))?;
    let mut pem = Vec::new();
    file.take(PEM_CAP + 1)
        .read_to_end(&mut pem)
        .map_err(|e| file_error(path, e))?;
    if pem.len() as u64 > PEM_CAP {
        return Err(file_error(
            path,
            format!("more than {PEM_CAP} bytes is too large for a PEM file"),
        ));
    }
    Ok(pem)
}

/// Every certificate in a PEM file; none is an error.
pub fn certificates(path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let pem = read_pem(path)?;
    let certs = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| file_error(path, format!("not a PEM certificate file: {e}")))?;
    if certs.is_empty() {
        return Err(file_error(
            path,
            "holds no certificate (expected -----BEGIN CERTIFICATE-----)",
        ));
    }
    Ok(certs)
}

fn private_key(path: &Path) -> Result<PrivateKeyDer<'static>, TlsError> {
    let pem = read_pem(path)?;
    PrivateKeyDer::from_pem_slice(&pem)
        .map_err(|e| file_error(path, format!("holds no private key (PKCS#8, PKCS#1 or SEC1 PEM): {e}")))
}

/// reqwest is built with `rustls-no-provider` (ring here, not aws-lc: no cmake, a smaller
/// build), and a client built without a process-wide provider panics. Every client this crate
/// builds goes through `crate::engine::client_builder`, which calls this; so do `main` and the
/// tests' own clients.
pub fn install_default_provider() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The client configuration: the system's roots (`/etc/ssl/certs` and the like) and, when
/// given, every certificate in `ca_file`. A host with neither trusts nothing, and says so on
/// the first https fetch.
pub fn client_config(ca_file: Option<&Path>) -> Result<rustls::ClientConfig, TlsError> {
    let mut roots = rustls::RootCertStore::empty();
    let native = rustls_native_certs::load_native_certs();
    for e in &native.errors {
        tracing::debug!(error = %e, "reading a system CA certificate");
    }
    let (added, ignored) = roots.add_parsable_certificates(native.certs);
    tracing::debug!(added, ignored, "system CA certificates");
    if let Some(path) = ca_file {
        for cert in certificates(path)? {
            roots
                .add(cert)
                .map_err(|e| file_error(path, format!("a certificate is not a usable CA: {e}")))?;
        }
    }
    Ok(rustls::ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()?
        .with_root_certificates(roots)
        .with_no_client_auth())
}

static CLIENT: OnceLock<(Option<PathBuf>, Option<rustls::ClientConfig>)> = OnceLock::new();

/// Sets the outbound roots from host configuration, once per process, before the first
/// outbound client is built (`crate::engine::client_builder`).
pub fn init_client(ca_file: Option<&Path>) -> Result<(), TlsError> {
    if let Some((set, _)) = CLIENT.get() {
        return if set.as_deref() == ca_file {
            Ok(())
        } else {
            Err(TlsError::AlreadySet)
        };
    }
    let config = client_config(ca_file)?;
    let _ = CLIENT.set((ca_file.map(Path::to_path_buf), Some(config)));
    Ok(())
}

/// The outbound TLS configuration every client uses: the one [`init_client`] set, else the
/// system's roots alone (none when even that cannot be built: https then fails per request,
/// with the reason).
pub fn client() -> Option<rustls::ClientConfig> {
    CLIENT
        .get_or_init(|| {
            let config = client_config(None)
                .map_err(|e| tracing::warn!(error = %e, "outbound TLS is not available"))
                .ok();
            (None, config)
        })
        .1
        .clone()
}

/// The listener's configuration from a certificate chain and its key (both PEM).
pub fn server_config(cert: &Path, key: &Path) -> Result<rustls::ServerConfig, TlsError> {
    let chain = certificates(cert)?;
    let key_der = private_key(key)?;
    let mut config = rustls::ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(chain, key_der)
        .map_err(|e| file_error(key, format!("does not go with {}: {e}", cert.display())))?;
    // HTTP/2 first: a cold engine page fetches over a hundred small wasm parts, which over
    // HTTP/1.1's six connections per host cost a round trip each batch on a long link.
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unusable_files_are_named_with_what_is_wrong() {
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "").unwrap();
        let junk = dir.path().join("junk.pem");
        std::fs::write(&junk, "-----BEGIN CERTIFICATE-----\n%%%\n-----END CERTIFICATE-----\n").unwrap();
        let missing = dir.path().join("missing.pem");
        let e = client_config(Some(&empty)).unwrap_err().to_string();
        assert!(e.contains("empty.pem") && e.contains("no certificate"), "{e}");
        let e = client_config(Some(&junk)).unwrap_err().to_string();
        assert!(e.contains("junk.pem"), "{e}");
        let e = client_config(Some(&missing)).unwrap_err().to_string();
        assert!(e.contains("missing.pem"), "{e}");
        let e = server_config(&empty, &empty).unwrap_err().to_string();
        assert!(e.contains("empty.pem"), "{e}");
        let big = dir.path().join("big.pem");
        std::fs::write(&big, vec![b'a'; (PEM_CAP + 1) as usize]).unwrap();
        let e = client_config(Some(&big)).unwrap_err().to_string();
        assert!(e.contains("too large"), "{e}");
    }
}
